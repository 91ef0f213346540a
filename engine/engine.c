/* The engine context: options, the error buffer and the list of fields. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"
#include "engine/launcher.h"
#if PLUME_HAVE_KERNELS
#include "engine/exec_cuda.h"
#endif

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

static _Thread_local char create_err[512];

const char *eng_create_error(void) { return create_err; }

eng_context *eng_create(const eng_options *opt)
{
    create_err[0] = 0;
    eng_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(create_err, sizeof create_err, "out of host memory");
        return NULL;
    }
    ctx->threads = opt && opt->threads > 0 ? opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (ctx->threads <= 0)
        ctx->threads = 1;
    ctx->budget = opt && opt->memory_budget ? opt->memory_budget : default_budget();
    /* The test suites' switch to the GPU (README: running the tests on a GPU). A context that
     * cannot get the GPU it was told to use is no context: eng_create_error() says why. */
    const char *dev = getenv("PLUME_DEVICE");
    static int said_dev;
    if (dev && dev[0] && strcmp(dev, "cuda") && strcmp(dev, "cpu") && !said_dev++)
        fprintf(stderr, "plume: warning: PLUME_DEVICE=%.64s is neither cpu nor cuda; ignored\n", dev);
    if (dev && !strcmp(dev, "cuda") && eng_use_cuda(ctx) != ENG_OK) {
        snprintf(create_err, sizeof create_err, "PLUME_DEVICE=cuda: %.400s", ctx->err);
        free(ctx);
        return NULL;
    }
#if PLUME_HAVE_KERNELS
    static int said;
    if (ctx->cuda && !said++)
        fprintf(stderr, "plume: PLUME_DEVICE=cuda: %s\n", eng_device_name(ctx));
#endif
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
#if PLUME_HAVE_KERNELS
    eng_cuda_close(ctx->cuda);
#endif
    free(ctx);
}

_Thread_local char *eng_thread_err;

int eng_fail(eng_context *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *dst = eng_thread_err ? eng_thread_err : ctx->err;
    int len = vsnprintf(dst, ENG_ERR_SIZE, fmt, ap);
    va_end(ap);
    /* a message cut to the buffer says so (a compile error with many diagnostics) */
    static const char cut[] = "\n[... message cut]";
    if (len >= ENG_ERR_SIZE)
        memcpy(dst + ENG_ERR_SIZE - sizeof cut, cut, sizeof cut);
    if (!eng_thread_err)
        ctx->err_code = code;
    return code;
}

const char *eng_error(const eng_context *ctx) { return ctx ? ctx->err : "no engine context"; }
int eng_error_code(const eng_context *ctx) { return ctx && ctx->err_code ? ctx->err_code : ENG_EINTERNAL; }

void eng_set_progress(eng_context *ctx, eng_progress_fn fn, void *user)
{
    ctx->progress = fn;
    ctx->progress_user = user;
}

void eng_set_cancel(eng_context *ctx, eng_cancel_fn fn, void *user)
{
    ctx->cancel = fn;
    ctx->cancel_user = user;
}

uint64_t eng_memory_bytes(const eng_context *ctx)
{
#if PLUME_HAVE_KERNELS
    /* the launch thread may be allocating: count what the queued work left */
    eng_launcher_wait((eng_context *)ctx);
#endif
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

static int check_desc(eng_context *ctx, const eng_field_desc *descs, int i)
{
    const eng_field_desc *desc = &descs[i];
    if (!desc->name || !desc->name[0])
        return eng_fail(ctx, ENG_EINVAL, "a field needs a name");
    if (eng_field_find(ctx, desc->name))
        return eng_fail(ctx, ENG_EEXIST, "field '%s' is declared twice", desc->name);
    for (int j = 0; j < i; j++)
        if (!strcmp(descs[j].name, desc->name))
            return eng_fail(ctx, ENG_EEXIST, "field '%s' is declared twice", desc->name);
    if (desc->type != ENG_F32 && desc->type != ENG_VEC3)
        return eng_fail(ctx, ENG_ETYPE, "field '%s': unknown value type", desc->name);
    if (!(desc->voxel_size > 0))
        return eng_fail(ctx, ENG_EINVAL, "field '%s': voxel size must be > 0", desc->name);
    return ENG_OK;
}

static int declare_group(eng_context *ctx, const eng_field_desc *descs, int n, int aos,
                         eng_field **out)
{
    if (!descs || n < 1)
        return eng_fail(ctx, ENG_EINVAL, "a group needs at least one field");
#if PLUME_HAVE_KERNELS
    /* the launch thread reads ctx->fields, which grows here */
    eng_launcher_wait(ctx);
#endif
    for (int i = 0; i < n; i++) {
        int rc = check_desc(ctx, descs, i);
        if (rc)
            return rc;
    }
    eng_field **grown = realloc(ctx->fields, (size_t)(ctx->nfields + n) * sizeof *grown);
    if (!grown)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory declaring field '%s'", descs[0].name);
    ctx->fields = grown;
    /* made straight into the context's array: the fields' ids are their places there */
    int rc = eng_field_new_group(ctx, descs, n, aos, ctx->fields + ctx->nfields);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (out)
            out[i] = ctx->fields[ctx->nfields + i];
    ctx->nfields += n;
    return ENG_OK;
}

int eng_field_declare_group(eng_context *ctx, const eng_field_desc *descs, int n, eng_field **out)
{
    return declare_group(ctx, descs, n, 0, out);
}

int eng_field_declare_interleaved(eng_context *ctx, const eng_field_desc *descs, int n,
                                  eng_field **out)
{
    return declare_group(ctx, descs, n, 1, out);
}

int eng_field_declare(eng_context *ctx, const eng_field_desc *desc, eng_field **out)
{
    if (!desc)
        return eng_fail(ctx, ENG_EINVAL, "a field needs a name");
    return declare_group(ctx, desc, 1, 0, out);
}

int eng_field_count(const eng_context *ctx) { return ctx ? ctx->nfields : 0; }

eng_field *eng_field_at(eng_context *ctx, int i)
{
    return ctx && i >= 0 && i < ctx->nfields ? ctx->fields[i] : NULL;
}

typedef struct origin_list {
    int32_t *o;
    int64_t n, cap;
} origin_list;

static int add_origin(void *user, const int32_t origin[3], float *data)
{
    (void)data;
    origin_list *l = user;
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 64;
        int32_t *g = realloc(l->o, (size_t)cap * 3 * sizeof *g);
        if (!g)
            return 1;
        l->o = g;
        l->cap = cap;
    }
    memcpy(l->o + 3 * l->n++, origin, 3 * sizeof *origin);
    return 0;
}

static int cmp_zyx(const void *pa, const void *pb)
{
    const int32_t *a = pa, *b = pb;
    for (int k = 2; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* Origins of the field's leaf containers (blocks of a dense or bitmasked leaf, the groups of
 * cells of a pointer or dynamic one), sorted (z, y, x) so callers see one order; dims gets the
 * voxels a container spans. */
static int block_origins(eng_context *ctx, eng_field *f, origin_list *l, int32_t dims[3])
{
    plm_tree *t = eng_field_tree(f);
    int fid = eng_field_tree_id(f);
    int rc = plm_tree_foreach_container(t, fid, add_origin, l, dims);
    if (rc) {
        free(l->o);
        l->o = NULL;
        return eng_fail(ctx, rc == 1 ? ENG_ENOMEM : ENG_EINTERNAL, "field '%s': listing its blocks failed",
                        eng_field_info(f)->name);
    }
    if (l->n > 1)
        qsort(l->o, (size_t)l->n, 3 * sizeof *l->o, cmp_zyx);
    return ENG_OK;
}

int eng_field_foreach_cell(eng_context *ctx, eng_field *f, eng_cell_fn fn, void *user)
{
    int rc = eng_host_read(ctx);
    if (rc)
        return rc;
    origin_list l = {NULL, 0, 0};
    int32_t dims[3];
    if ((rc = block_origins(ctx, f, &l, dims)) != ENG_OK)
        return rc;
    plm_tree *t = eng_field_tree(f);
    int fid = eng_field_tree_id(f);
    for (int64_t b = 0; b < l.n && !rc; b++) {
        const int32_t *o = l.o + 3 * b;
        for (int32_t x = 0; x < dims[0] && !rc; x++)
            for (int32_t y = 0; y < dims[1] && !rc; y++)
                for (int32_t z = 0; z < dims[2] && !rc; z++) {
                    int32_t ijk[3] = {o[0] + x, o[1] + y, o[2] + z};
                    float v[3];
                    if (plm_tree_read(t, fid, ijk[0], ijk[1], ijk[2], v) == 1)
                        rc = fn(user, ijk, v);
                }
    }
    free(l.o);
    return rc;
}

void eng_field_clear_cells(eng_context *ctx, eng_field *f) { eng_field_clear(ctx, f); }

int eng_set_deterministic(eng_context *ctx, int on)
{
    if (!ctx)
        return ENG_EINVAL;
#if PLUME_HAVE_KERNELS
    /* GPU threads add floats in an order no one chooses. */
    if (on && ctx->cuda)
        return eng_fail(ctx, ENG_EINVAL, "deterministic mode runs on the CPU only; use --device cpu");
    /* batches on the launch thread keep the setting they were flushed under */
    eng_launcher_wait(ctx);
#endif
    ctx->deterministic = on != 0;
    return ENG_OK;
}

int eng_deterministic(const eng_context *ctx) { return ctx && ctx->deterministic; }

#if PLUME_HAVE_KERNELS
int eng_use_cuda(eng_context *ctx)
{
    if (ctx->cuda)
        return ENG_OK;
    eng_launcher_wait(ctx);
    if (ctx->nfields)
        return eng_fail(ctx, ENG_EINVAL, "the device can change only before the first field");
    char msg[1024];
    if (eng_cuda_open(0, ctx->budget, &ctx->cuda, msg, sizeof msg) != 0)
        return eng_fail(ctx, ENG_EINVAL, "%s", msg);
    return ENG_OK;
}

int eng_on_cuda(const eng_context *ctx) { return ctx->cuda != NULL; }
void eng_set_cuda_graphs(eng_context *ctx, int on)
{
    if (ctx->cuda)
        eng_cuda_set_graphs(ctx->cuda, on);
}

const char *eng_device_name(eng_context *ctx)
{
    static __thread char cpu[64];
    if (ctx->cuda)
        return eng_cuda_describe(ctx->cuda);
    snprintf(cpu, sizeof cpu, "CPU (%d thread%s)", ctx->threads, ctx->threads == 1 ? "" : "s");
    return cpu;
}
#else
int eng_use_cuda(eng_context *ctx)
{
    return eng_fail(ctx, ENG_EINVAL, "this Plume was built without LLVM 16: no GPU backend");
}
int eng_on_cuda(const eng_context *ctx) { (void)ctx; return 0; }
void eng_set_cuda_graphs(eng_context *ctx, int on) { (void)ctx; (void)on; }
const char *eng_device_name(eng_context *ctx)
{
    static __thread char cpu[64];
    snprintf(cpu, sizeof cpu, "CPU (%d thread%s)", ctx->threads, ctx->threads == 1 ? "" : "s");
    return cpu;
}
#endif
