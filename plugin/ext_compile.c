/* The "plume.compile/1" extension: a kernel author's compiler driver. Checking and the AST
 * need only the front end; IR, LLVM, assembly and PTX listings need every compiler stage, and
 * say so plainly in a build that lacks them. */
#define _GNU_SOURCE
#include "engine/lang/lang.h"
#include "plugin/plugin.h"
#if PLUME_HAVE_KERNELS
#include "engine/listing.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "kernel name(param: type, ...)" per kernel, one per line. */
static char *kernel_list(const pk_program *prog, const char *only)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    for (uint32_t k = 0; k < prog->nkernels; k++) {
        const pk_func *fn = prog->kernels[k];
        if (only && strcmp(fn->name, only))
            continue;
        fprintf(f, "kernel %s(", fn->name);
        for (uint32_t i = 0; i < fn->nparams; i++) {
            char t[64];
            fprintf(f, "%s%s: %s", i ? ", " : "", fn->params[i]->name,
                    pk_type_name(fn->params[i]->type, t, sizeof t));
        }
        fprintf(f, ")\n");
    }
    fclose(f);
    return buf;
}

/* IR, LLVM, assembly and PTX listings need every compiler stage (engine/listing.h). */
static plume_status listing(pl_context *ctx, const char *file, const char *source,
                            const char *kernel, plume_device target, plume_emit emit, char **text)
{
    const char *what = emit == PLUME_EMIT_IR ? "IR" : emit == PLUME_EMIT_LLVM ? "LLVM"
                       : emit == PLUME_EMIT_ASM ? "assembly" : "PTX";
#if PLUME_HAVE_KERNELS
    (void)what;
    int kind;
    if (emit == PLUME_EMIT_IR)
        kind = ENG_LIST_IR;
    else if (emit == PLUME_EMIT_PTX)
        kind = ENG_LIST_PTX;
    else if (emit == PLUME_EMIT_LLVM)
        kind = target == PLUME_DEVICE_CUDA ? ENG_LIST_PTX_LLVM : ENG_LIST_LLVM;
    else if (target == PLUME_DEVICE_CUDA)
        kind = ENG_LIST_PTX; /* a GPU's assembly is its PTX */
    else
        kind = ENG_LIST_ASM;
    char err[4000];
    int rc = eng_compile_listing(file, source, strlen(source), kernel, kind, text, err, sizeof err);
    if (rc == ENG_LIST_OK)
        return PLUME_OK;
    return pl_fail(ctx, rc == ENG_LIST_ESOURCE ? PLUME_ERR_COMPILE
                        : rc == ENG_LIST_ENOTFOUND ? PLUME_ERR_NOT_FOUND : PLUME_ERR_INTERNAL,
                   "%s", err);
#else
    (void)file, (void)source, (void)kernel, (void)target, (void)text;
    return pl_fail(ctx, PLUME_ERR_UNSUPPORTED,
                   "compile: %s listings need the IR, optimizer and LLVM stages, which this "
                   "build of Plume lacks; --emit check and --emit ast work", what);
#endif
}

static plume_status compile(plume_context *handle, const char *file, const char *source,
                            const char *kernel, plume_device target, plume_emit emit, char **text)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "compile: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "compile");
    if (!source || !text)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "compile: source and text are required");
    *text = NULL;
    if (emit < PLUME_EMIT_IR || emit > PLUME_EMIT_CHECK)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "compile: unknown listing %d", emit);
    if (target != PLUME_DEVICE_CPU && target != PLUME_DEVICE_CUDA && target != PLUME_DEVICE_AUTO)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "compile: unknown target %d", target);
    pk_result *r = pk_compile(file, source, strlen(source), NULL);
    if (!r)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "compile: out of host memory");
    plume_status st = PLUME_OK;
    const pk_program *prog = pk_result_program(r);
    if (!pk_result_ok(r)) {
        char msg[4000];
        snprintf(msg, sizeof msg, "%s", pk_result_error_text(r));
        size_t n = strlen(msg);
        while (n && msg[n - 1] == '\n')
            msg[--n] = 0;
        st = pl_fail(ctx, PLUME_ERR_COMPILE, "%s", msg);
    } else if (kernel && kernel[0]) {
        int found = 0;
        for (uint32_t k = 0; k < prog->nkernels; k++)
            found |= !strcmp(prog->kernels[k]->name, kernel);
        if (!found)
            st = pl_fail(ctx, PLUME_ERR_NOT_FOUND, "%s: no kernel named '%s'", file ? file : "<input>", kernel);
    }
    if (st == PLUME_OK) {
        if (pk_result_diag_count(r)) /* warnings: the code compiled */
            pl_log_text(ctx, PLUME_LOG_WARNING, pk_result_text(r));
        if (prog->nkernels == 0)
            pl_log(ctx, PLUME_LOG_WARNING, "%s: defines no kernel (a node runs a kernel; functions "
                   "alone are checked but never run)", file ? file : "<input>");
        if (emit == PLUME_EMIT_CHECK)
            *text = kernel_list(prog, kernel && kernel[0] ? kernel : NULL);
        else if (emit == PLUME_EMIT_AST)
            *text = pk_print_program(prog, 0);
        else
            st = listing(ctx, file, source, kernel, target, emit, text);
        if (st == PLUME_OK && !*text)
            st = pl_fail(ctx, PLUME_ERR_INTERNAL, "compile: out of host memory");
    }
    pk_result_free(r);
    return st;
}

const plume_ext_compile pl_ext_compile = {sizeof(plume_ext_compile), compile};
