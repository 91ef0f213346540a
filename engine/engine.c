/* The engine context: options, the error buffer and the list of fields. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t default_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return (uint64_t)4 << 30;
    return (uint64_t)pages * (uint64_t)page / 2;
}

eng_context *eng_create(const eng_options *opt)
{
    eng_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->threads = opt && opt->threads > 0 ? opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (ctx->threads <= 0)
        ctx->threads = 1;
    ctx->budget = opt && opt->memory_budget ? opt->memory_budget : default_budget();
    return ctx;
}

void eng_destroy(eng_context *ctx)
{
    if (!ctx)
        return;
#if PLUME_HAVE_KERNELS
    /* Queued tasks are dropped, not run: nobody can read their results any more. */
    eng_runtime_free(ctx);
    eng_programs_free(ctx);
#endif
    for (int i = 0; i < ctx->nfields; i++)
        eng_field_free(ctx->fields[i]);
    free(ctx->fields);
    free(ctx);
}

int eng_fail(eng_context *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
    va_end(ap);
    return code;
}

const char *eng_error(const eng_context *ctx) { return ctx ? ctx->err : "no engine context"; }
uint64_t eng_memory_bytes(const eng_context *ctx)
{
    uint64_t total = 0;
    for (int i = 0; i < ctx->nfields; i++)
        total += eng_field_bytes(ctx->fields[i]);
    return total;
}
uint64_t eng_memory_budget(const eng_context *ctx) { return ctx->budget; }
int eng_threads(const eng_context *ctx) { return ctx->threads; }

eng_field *eng_field_find(eng_context *ctx, const char *name)
{
    for (int i = 0; ctx && name && i < ctx->nfields; i++)
        if (!strcmp(eng_field_info(ctx->fields[i])->name, name))
            return ctx->fields[i];
    return NULL;
}

int eng_field_declare(eng_context *ctx, const eng_field_desc *desc, eng_field **out)
{
    if (!desc || !desc->name || !desc->name[0])
        return eng_fail(ctx, ENG_EINVAL, "a field needs a name");
    if (eng_field_find(ctx, desc->name))
        return eng_fail(ctx, ENG_EEXIST, "field '%s' is declared twice", desc->name);
    if (desc->type != ENG_F32 && desc->type != ENG_VEC3)
        return eng_fail(ctx, ENG_ETYPE, "field '%s': unknown value type", desc->name);
    if (!(desc->voxel_size > 0))
        return eng_fail(ctx, ENG_EINVAL, "field '%s': voxel size must be > 0", desc->name);
    eng_field *f = NULL;
    int rc = eng_field_new(ctx, desc, &f);
    if (rc)
        return rc;
    eng_field **grown = realloc(ctx->fields, (size_t)(ctx->nfields + 1) * sizeof *grown);
    if (!grown) {
        eng_field_free(f);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory declaring field '%s'", desc->name);
    }
    ctx->fields = grown;
    ctx->fields[ctx->nfields++] = f;
    if (out)
        *out = f;
    return ENG_OK;
}
