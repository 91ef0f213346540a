/* Programs: kernel-language source compiled by the front end, and the parameter lists the
 * plugin turns into node parameters and ports. */
#include "engine/engine_internal.h"
#include "engine/kernel_internal.h"
#include "engine/launcher.h"
#include "engine/sfg/sfg.h"

#include <stdlib.h>
#include <string.h>

static int param_type(pk_type t)
{
    if (t.kind == PK_T_FIELD) {
        if (t.elem == PK_T_F32)
            return ENG_P_FIELD_F32;
        if (t.elem == PK_T_VEC3)
            return ENG_P_FIELD_VEC3;
        return ENG_P_OTHER;
    }
    switch (t.kind) {
    case PK_T_BOOL: return ENG_P_BOOL;
    case PK_T_I32: return ENG_P_I32;
    case PK_T_U32: return ENG_P_U32;
    case PK_T_I64: return ENG_P_I64;
    case PK_T_F32: return ENG_P_F32;
    case PK_T_F64: return ENG_P_F64;
    case PK_T_VEC3: return ENG_P_VEC3;
    case PK_T_IVEC3: return ENG_P_IVEC3;
    default: return ENG_P_OTHER;
    }
}

static void program_free(eng_program *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->nkernels; i++)
        eng_kernel_release(&p->kernels[i]);
    free(p->kernels);
    pk_result_free(p->result);
    free(p->origin);
    free(p);
}

void eng_programs_free_retired(eng_context *ctx)
{
    for (uint32_t i = 0; i < ctx->nretired; i++)
        program_free(ctx->retired[i]);
    free(ctx->retired);
    ctx->retired = NULL;
    ctx->nretired = 0;
}

void eng_programs_free(eng_context *ctx)
{
    for (uint32_t i = 0; i < ctx->nprograms; i++)
        program_free(ctx->programs[i]);
    free(ctx->programs);
    ctx->programs = NULL;
    ctx->nprograms = 0;
    eng_programs_free_retired(ctx);
}

void eng_program_release(eng_context *ctx, eng_program *p)
{
    uint32_t i = 0;
    while (p && i < ctx->nprograms && ctx->programs[i] != p)
        i++;
    if (!p || i == ctx->nprograms)
        return; /* not this context's, or released already */
    ctx->programs[i] = ctx->programs[--ctx->nprograms];
    /* Queued launches carry the addresses of its kernels' buffers; batches flushed earlier may
     * still run (a launch thread, a GPU stream). With nothing queued, waiting for those is
     * enough; their errors stay for the next sync to report. */
    if (!ctx->runtime_ready || !sfg_pending(ctx->queue)) {
        if (ctx->runtime_ready)
            eng_launcher_wait(ctx);
        program_free(p);
        return;
    }
    eng_program **grown = realloc(ctx->retired, (ctx->nretired + 1) * sizeof *grown);
    if (!grown) {
        ctx->programs[ctx->nprograms++] = p; /* kept until the context goes, as before */
        return;
    }
    ctx->retired = grown;
    ctx->retired[ctx->nretired++] = p;
}

int eng_field_param_check(const pk_var *v, char *err, size_t n)
{
    if (v->type.kind != PK_T_FIELD || v->type.elem == PK_T_F32 || v->type.elem == PK_T_VEC3)
        return 0;
    char t[64];
    snprintf(err, n, "%s:%u:%u: error: field parameter '%s' of type %s: a node's fields hold f32 or vec3",
             v->loc.file ? v->loc.file : "<input>", v->loc.line, v->loc.col, v->name,
             pk_type_name(v->type, t, sizeof t));
    return -1;
}

int eng_kernel_check_bindable(eng_context *ctx, const eng_kernel *k)
{
    char err[512];
    for (uint32_t j = 0; j < k->fn->nparams; j++)
        if (eng_field_param_check(k->fn->params[j], err, sizeof err) != 0)
            return eng_fail(ctx, ENG_ECOMPILE, "%s", err);
    return ENG_OK;
}

int eng_program_compile(eng_context *ctx, const char *file, const char *src, size_t len,
                        eng_program **out)
{
    *out = NULL;
    pk_result *r = pk_compile(file, src, len, NULL);
    if (!r)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory compiling %s", file ? file : "<input>");
    if (!pk_result_ok(r)) {
        /* Keep the whole rendered text: file:line:col, the line and a caret per error. */
        eng_fail(ctx, ENG_ECOMPILE, "%s", pk_result_error_text(r));
        size_t n = strlen(ctx->err);
        while (n && ctx->err[n - 1] == '\n')
            ctx->err[--n] = 0;
        pk_result_free(r);
        return ENG_ECOMPILE;
    }
    const pk_program *prog = pk_result_program(r);
    eng_program *p = calloc(1, sizeof *p);
    eng_program **grown = realloc(ctx->programs, (ctx->nprograms + 1) * sizeof *grown);
    if (grown)
        ctx->programs = grown;
    if (!p || !grown || (prog->nkernels && !(p->kernels = calloc(prog->nkernels, sizeof *p->kernels)))) {
        free(p);
        pk_result_free(r);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory compiling %s", file ? file : "<input>");
    }
    p->result = r;
    p->prog = prog;
    p->nkernels = prog->nkernels;
    for (uint32_t i = 0; i < prog->nkernels; i++) {
        eng_kernel *k = &p->kernels[i];
        const pk_func *fn = prog->kernels[i];
        k->ctx = ctx;
        k->program = p;
        k->fn = fn;
        k->nparams = fn->nparams < ENG_MAX_PARAMS ? fn->nparams : ENG_MAX_PARAMS;
        for (uint32_t j = 0; j < k->nparams; j++) {
            const pk_var *v = fn->params[j];
            eng_param *q = &k->params[j];
            q->name = v->name;
            q->type = param_type(v->type);
            q->dim = v->type.kind == PK_T_FIELD ? v->type.dim : 0;
            q->access = 0;
            if (v->field_access & (PK_ACCESS_READ | PK_ACCESS_ITERATE))
                q->access |= ENG_ACCESS_READ;
            if (v->field_access & (PK_ACCESS_WRITE | PK_ACCESS_ATOMIC | PK_ACCESS_ACTIVATE |
                                   PK_ACCESS_DEACTIVATE))
                q->access |= ENG_ACCESS_WRITE;
            /* Atomic updates read the old value too. */
            if (v->field_access & PK_ACCESS_ATOMIC)
                q->access |= ENG_ACCESS_READ;
        }
    }
    ctx->programs[ctx->nprograms++] = p;
    *out = p;
    return ENG_OK;
}

int eng_program_set_origin(eng_context *ctx, eng_program *p, const char *origin)
{
    /* queued tasks carry the string's address: it may not change under them */
    if (!p || !origin || p->origin)
        return eng_fail(ctx, ENG_EINVAL, "eng_program_set_origin: %s",
                        p && p->origin ? "the origin is set already" : "no program or origin");
    if (!(p->origin = strdup(origin)))
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    return ENG_OK;
}

/* The origin of one of the context's programs (live or retired) that text starts with, or NULL. */
static const char *origin_at(const eng_context *ctx, const char *text)
{
    for (uint32_t pass = 0; pass < 2; pass++) {
        eng_program *const *list = pass ? ctx->retired : ctx->programs;
        uint32_t n = pass ? ctx->nretired : ctx->nprograms;
        for (uint32_t i = 0; i < n; i++) {
            const char *o = list[i]->origin;
            if (o && !strncmp(text, o, strlen(o)))
                return o;
        }
    }
    return NULL;
}

/* culprit_origin (runtime.c) writes "A: ", "A or B: " or "A, B, ...: " */
size_t eng_error_origin(const eng_context *ctx)
{
    if (!ctx)
        return 0;
    const char *at = ctx->err;
    for (;;) {
        const char *o = origin_at(ctx, at);
        if (!o)
            return 0;
        at += strlen(o);
        if (!strncmp(at, ", ...: ", 7))
            return (size_t)(at + 7 - ctx->err);
        if (!strncmp(at, ": ", 2))
            return (size_t)(at + 2 - ctx->err);
        if (!strncmp(at, " or ", 4))
            at += 4;
        else if (!strncmp(at, ", ", 2))
            at += 2;
        else
            return 0;
    }
}

uint32_t eng_program_kernel_count(const eng_program *p) { return p ? p->nkernels : 0; }

const char *eng_program_warnings(const eng_program *p)
{
    return p && pk_result_diag_count(p->result) ? pk_result_text(p->result) : NULL;
}
eng_kernel *eng_program_kernel(eng_program *p, uint32_t i)
{
    return p && i < p->nkernels ? &p->kernels[i] : NULL;
}
eng_kernel *eng_program_find(eng_program *p, const char *name)
{
    for (uint32_t i = 0; p && name && i < p->nkernels; i++)
        if (!strcmp(p->kernels[i].fn->name, name))
            return &p->kernels[i];
    return NULL;
}
const char *eng_kernel_name(const eng_kernel *k) { return k->fn->name; }
uint32_t eng_kernel_param_count(const eng_kernel *k) { return k->nparams; }
const eng_param *eng_kernel_param(const eng_kernel *k, uint32_t i)
{
    return i < k->nparams ? &k->params[i] : NULL;
}
