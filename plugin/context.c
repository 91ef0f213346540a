/* Contexts: creation, errors, host callbacks, fields, cooking and statistics. */
#define _GNU_SOURCE
#include "plugin/handles.h"
#include "plugin/plugin.h"
#include "plugin/write_queue.h"
#include "engine/kernel.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Message of the last context-less failure, per thread (last_error(NULL)). */
static _Thread_local char tls_err[1024];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

pl_context *pl_context_get(const plume_context *ctx)
{
    return handle_get((uintptr_t)ctx, HK_CONTEXT);
}

/* Host callbacks under way: per context (a context is used by one thread at a time, and its
 * callbacks run on that thread), and on this thread for any context (deinit). Counted, so a
 * callback of one context that cooks another, whose callback runs inside, keeps both marked. */
static __thread int tls_callback_depth;

int pl_in_callback(const pl_context *ctx) { return ctx && ctx->callback_depth > 0; }
int pl_in_any_callback(void) { return tls_callback_depth > 0; }

/* Inside a callback the context's message is the outer call's: the first change to it there
 * keeps a copy, put back when the last callback returns. */
static void keep_outer_error(pl_context *ctx)
{
    if (ctx->callback_depth > 0 && !ctx->err_saved) {
        ctx->err_saved = strdup(ctx->err);
        ctx->err_saved_names_node = ctx->err_names_node;
    }
}

plume_status pl_refuse_in_callback(pl_context *ctx, const char *fn)
{
    keep_outer_error(ctx);
    snprintf(ctx->err, sizeof ctx->err,
             "%s: called from a host callback (log, progress or is_cancelled) of the same context, "
             "which is in the middle of a call; there only last_error, context_info, get_stats "
             "and discovery may be called", fn);
    return PLUME_ERR_INVALID_ARGUMENT;
}

static void callback_enter(pl_context *ctx)
{
    ctx->callback_depth++;
    tls_callback_depth++;
}

static void callback_leave(pl_context *ctx)
{
    tls_callback_depth--;
    if (--ctx->callback_depth == 0 && ctx->err_saved) {
        snprintf(ctx->err, sizeof ctx->err, "%s", ctx->err_saved);
        ctx->err_names_node = ctx->err_saved_names_node;
        free(ctx->err_saved);
        ctx->err_saved = NULL;
    }
}

plume_status pl_fail(pl_context *ctx, plume_status status, const char *fmt, ...)
{
    if (ctx)
        keep_outer_error(ctx);
    char *dst = ctx ? ctx->err : tls_err;
    size_t n = ctx ? sizeof ctx->err : sizeof tls_err;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(dst, n, fmt, ap);
    va_end(ap);
    /* a message cut to the buffer says so (a compile error with many diagnostics) */
    static const char cut[] = "\n[... message cut]";
    if (len >= (int)n)
        memcpy(dst + n - sizeof cut, cut, sizeof cut);
    if (ctx)
        ctx->err_names_node = 0;
    if (ctx && ctx->hold_error_log)
        ctx->error_log_held = 1;
    else if (ctx)
        pl_log_error(ctx, status);
    return status;
}

void pl_log_error(pl_context *ctx, plume_status status)
{
    /* A stop the host asked for is news, not an error. The log gets a copy: what a call inside
     * the callback writes must not change the text the host is reading. A failure inside a
     * callback (of a call allowed there) is not logged: that would call the host again. */
    if (!ctx->host.log || ctx->callback_depth > 0)
        return;
    char text[sizeof ctx->err];
    memcpy(text, ctx->err, sizeof text);
    callback_enter(ctx);
    ctx->host.log(ctx->host.user, status == PLUME_ERR_CANCELLED ? PLUME_LOG_INFO : PLUME_LOG_ERROR, text);
    callback_leave(ctx);
}

void pl_log_text(pl_context *ctx, plume_log_level level, const char *text)
{
    if (!ctx || !ctx->host.log || !text)
        return;
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    char *copy = strndup(text, n);
    if (copy) {
        callback_enter(ctx);
        ctx->host.log(ctx->host.user, level, copy);
        callback_leave(ctx);
    }
    free(copy);
}

void pl_log(pl_context *ctx, plume_log_level level, const char *fmt, ...)
{
    if (!ctx || !ctx->host.log)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    callback_enter(ctx);
    ctx->host.log(ctx->host.user, level, buf);
    callback_leave(ctx);
}

void pl_progress(pl_context *ctx, double fraction, const char *stage)
{
    if (!ctx || !ctx->host.progress)
        return;
    double now = now_s();
    if (now - ctx->progress_last < 0.1)
        return;
    ctx->progress_last = now;
    char text[256];
    if (ctx->progress_at[0])
        snprintf(text, sizeof text, "%s: %s", ctx->progress_at, stage);
    else
        snprintf(text, sizeof text, "%s", stage);
    callback_enter(ctx);
    ctx->host.progress(ctx->host.user, fraction < 0 ? 0 : fraction > 1 ? 1 : fraction, text);
    callback_leave(ctx);
}

/* The engine's long work (compiling), on the context's thread. */
static void engine_progress(void *user, const char *stage, uint32_t done, uint32_t total)
{
    char text[128];
    snprintf(text, sizeof text, "%s %u/%u", stage, done, total);
    pl_progress(user, total ? (double)done / total : 1.0, text);
}

int pl_cancelled(pl_context *ctx)
{
    if (!ctx || !ctx->host.is_cancelled)
        return 0;
    callback_enter(ctx);
    int c = ctx->host.is_cancelled(ctx->host.user) != 0;
    callback_leave(ctx);
    return c;
}

/* The engine polls this while a batch's kernels compile (the first frame's long wait). */
static int engine_cancel(void *user) { return pl_cancelled(user); }

plume_status pl_status_of_engine(int rc)
{
    plume_status st;
    switch (rc) {
    case ENG_OK: return PLUME_OK;
    case ENG_EINVAL: st = PLUME_ERR_INVALID_ARGUMENT; break;
    case ENG_ENOTFOUND: st = PLUME_ERR_NOT_FOUND; break;
    case ENG_EEXIST: st = PLUME_ERR_INVALID_ARGUMENT; break;
    case ENG_ETYPE: st = PLUME_ERR_TYPE_MISMATCH; break;
    case ENG_ENOMEM: st = PLUME_ERR_MEMORY_BUDGET; break;
    case ENG_ECOMPILE: st = PLUME_ERR_COMPILE; break;
    case ENG_ECANCELLED: st = PLUME_ERR_CANCELLED; break;
    default: st = PLUME_ERR_INTERNAL; break;
    }
    return st;
}

plume_status pl_from_engine(pl_context *ctx, int rc)
{
    plume_status st = pl_status_of_engine(rc);
    if (st == PLUME_OK)
        return PLUME_OK;
    if (eng_error_origin(ctx->eng))
        return pl_fail_naming_node(ctx, st, eng_error(ctx->eng));
    return pl_fail(ctx, st, "%s", eng_error(ctx->eng));
}

plume_status pl_fail_naming_node(pl_context *ctx, plume_status status, const char *text)
{
    plume_status st = pl_fail(ctx, status, "%s", text);
    ctx->err_names_node = 1;
    return st;
}

const char *pl_last_error(const plume_context *handle)
{
    if (!handle)
        return tls_err;
    pl_context *ctx = pl_context_get(handle);
    return ctx ? ctx->err : "invalid context handle (NULL, destroyed, or not a context)";
}

#define GET_CTX_ANYWHERE(var, handle)                                                           \
    pl_context *var = pl_context_get(handle);                                                   \
    if (!var)                                                                                   \
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE,                                         \
                       "%s: invalid context handle (NULL, destroyed, or not a context)", __func__ + 3)
/* ... and not from one of its own callbacks */
#define GET_CTX(var, handle)                                                                    \
    GET_CTX_ANYWHERE(var, handle);                                                              \
    if (pl_in_callback(var))                                                                    \
        return pl_refuse_in_callback(var, __func__ + 3)

plume_status pl_context_create(const plume_context_options *o, const plume_host *h,
                               plume_context **out)
{
    if (!out)
        return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT, "context_create: out is NULL");
    *out = NULL;
    plume_context_options opts = {sizeof opts, PLUME_DEVICE_CPU, 0, 0, PLUME_MODE_OPTIMIZED, 0, 0};
    if (o) {
        if (o->struct_size < sizeof(uint32_t) * 2)
            return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT,
                           "context_create: options.struct_size %u is too small (set it to sizeof)",
                           o->struct_size);
        /* Copy only what the host's struct has; the rest keeps its default. */
        size_t n = o->struct_size < sizeof opts ? o->struct_size : sizeof opts;
        memcpy(&opts, o, n);
        opts.struct_size = sizeof opts;
    }
    if (opts.device != PLUME_DEVICE_CPU && opts.device != PLUME_DEVICE_CUDA &&
        opts.device != PLUME_DEVICE_AUTO)
        return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT, "context_create: unknown device %d", opts.device);
    if (opts.mode != PLUME_MODE_OPTIMIZED && opts.mode != PLUME_MODE_EAGER)
        return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT, "context_create: unknown mode %d", opts.mode);
    if (opts.threads > 1024)
        return pl_fail(NULL, PLUME_ERR_OUT_OF_RANGE, "context_create: %u threads is more than 1024",
                       opts.threads);
    uint32_t passes = PLUME_PASS_LISTGEN | PLUME_PASS_DEMOTE | PLUME_PASS_FUSION | PLUME_PASS_DSE;
    if (opts.disabled_passes & ~passes)
        return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT,
                       "context_create: disabled_passes 0x%x has bits of no pass (PLUME_PASS_* only)",
                       opts.disabled_passes);

    /* A host struct of size 0 would silently drop every callback: refuse it instead. */
    if (h && h->struct_size < offsetof(plume_host, user) + sizeof h->user)
        return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT,
                       "context_create: host.struct_size %u is too small (set it to sizeof(plume_host))",
                       h->struct_size);

    pl_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INTERNAL, "context_create: out of host memory");
    ctx->opts = opts;
    if (h) {
        size_t n = h->struct_size < sizeof ctx->host ? h->struct_size : sizeof ctx->host;
        memcpy(&ctx->host, h, n);
    }
    ctx->host.struct_size = sizeof ctx->host;
    eng_options eo = {(int)opts.threads, opts.memory_budget_bytes};
    ctx->eng = eng_create(&eo);
    if (!ctx->eng && strncmp(eng_create_error(), "PLUME_DEVICE", 12) == 0) {
        free(ctx);
        return pl_fail(NULL, PLUME_ERR_UNSUPPORTED, "context_create: %s", eng_create_error());
    }
    ctx->handle = ctx->eng ? handle_new(HK_CONTEXT, ctx) : 0;
    if (!ctx->handle) {
        eng_destroy(ctx->eng);
        free(ctx);
        return pl_fail(NULL, PLUME_ERR_INTERNAL, "context_create: out of host memory");
    }
    /* The queue's mode: the engine's passes use the ABI's bit order (PLUME_PASS_* = SFG_PASS_*). */
    eng_mode em = {opts.mode == PLUME_MODE_EAGER, opts.disabled_passes & 0xfu,
                   opts.flush_every ? opts.flush_every : PL_DEFAULT_FLUSH_EVERY, 0};
    eng_set_mode(ctx->eng, &em);
    eng_set_progress(ctx->eng, engine_progress, ctx);
    if (ctx->host.is_cancelled)
        eng_set_cancel(ctx->eng, engine_cancel, ctx);
    /* cuda: the GPU or a clear failure; auto: the GPU when one answers, else the CPU, saying
     * why in one line. (PLUME_DEVICE=cuda in the environment already put the engine there.) */
    if (opts.device != PLUME_DEVICE_CPU && !eng_on_cuda(ctx->eng) &&
        eng_use_cuda(ctx->eng) != 0) {
        if (opts.device == PLUME_DEVICE_CUDA) {
            char why[sizeof ctx->device_note];
            snprintf(why, sizeof why, "%s", eng_error(ctx->eng));
            handle_drop(ctx->handle);
            eng_destroy(ctx->eng);
            free(ctx);
            return pl_fail(NULL, PLUME_ERR_UNSUPPORTED, "context_create: device cuda: %s", why);
        }
        snprintf(ctx->device_note, sizeof ctx->device_note, "auto: no usable GPU (%.200s), using the CPU",
                 eng_error(ctx->eng));
    }
    ctx->device = eng_on_cuda(ctx->eng) ? PLUME_DEVICE_CUDA : PLUME_DEVICE_CPU;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%s", eng_device_name(ctx->eng));
    if (opts.device == PLUME_DEVICE_AUTO && ctx->device == PLUME_DEVICE_CUDA)
        snprintf(ctx->device_note, sizeof ctx->device_note, "auto: using the GPU, %.200s",
                 ctx->device_name);
    if (ctx->device_note[0])
        pl_log(ctx, PLUME_LOG_INFO, "%s", ctx->device_note);
    ctx->stats.struct_size = sizeof ctx->stats;
    *out = (plume_context *)ctx->handle;
    return PLUME_OK;
}

void pl_context_destroy(plume_context *handle)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return;
    if (pl_in_callback(ctx)) { /* its call is still running: left alone, and said so */
        pl_refuse_in_callback(ctx, "context_destroy");
        return;
    }
    handle_drop(ctx->handle);
    pl_checkpoint_wait(ctx, 0); /* the last frame's checkpoint lands before the context goes */
    pl_wq_destroy(ctx->writes, ctx); /* and so do its files (the checkpoint waited for them) */
    pl_volumes_close_all(ctx);
    for (uint32_t i = 0; i < ctx->nnodes; i++)
        pl_node_free(ctx->nodes[i]);
    free(ctx->nodes);
    pl_context_forget_retired(ctx);
    eng_destroy(ctx->eng);
    free(ctx->err_saved);
    free(ctx);
}

plume_status pl_context_info(plume_context *handle, plume_context_info *out)
{
    GET_CTX_ANYWHERE(ctx, handle);
    if (!out || out->struct_size < sizeof(uint32_t))
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "context_info: out is NULL or has no struct_size");
    plume_context_info info = {sizeof info, ctx->device, ctx->device_name, ctx->device_note,
                               (uint32_t)eng_threads(ctx->eng), eng_memory_budget(ctx->eng)};
    size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
    memcpy(out, &info, n);
    out->struct_size = (uint32_t)n; /* what was written: PLUME_HAS_FIELD is then true */
    return PLUME_OK;
}

plume_status pl_field_declare(plume_context *handle, const plume_field_desc *d)
{
    GET_CTX(ctx, handle);
    if (!d || d->struct_size < sizeof(plume_field_desc))
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "field_declare: desc is NULL or older than ABI 1.0's plume_field_desc");
    if (!d->name || !d->name[0])
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "field_declare: a field needs a name");
    /* node:name is how nodes name their scratch fields; a host field there would be taken
     * for one (docs/nodes.md). */
    if (strchr(d->name, ':'))
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "field_declare: field '%s': ':' is reserved for nodes' own fields (node:name)",
                       d->name);
    if (d->value_type != PLUME_VALUE_F32 && d->value_type != PLUME_VALUE_VEC3)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "field_declare: field '%s': unknown value type %d",
                       d->name, d->value_type);
    if (!(d->voxel_size > 0) || !isfinite(d->voxel_size))
        return pl_fail(ctx, PLUME_ERR_OUT_OF_RANGE, "field_declare: field '%s': voxel size must be > 0",
                       d->name);
    for (int a = 0; a < 3; a++)
        if (!isfinite(d->origin[a]) || !isfinite(d->background[a]) || fabs(d->background[a]) > FLT_MAX)
            return pl_fail(ctx, PLUME_ERR_OUT_OF_RANGE,
                           "field_declare: field '%s': origin and background must be finite numbers "
                           "(background within f32's range)", d->name);
    for (const unsigned char *c = (const unsigned char *)d->name; *c; c++)
        if (*c < 0x20 || *c == 0x7f) /* a grid name in a file, a word in messages */
            return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                           "field_declare: a field name may not hold control characters (a newline, "
                           "a tab, ...)");
    eng_field_desc ed = {d->name, d->value_type == PLUME_VALUE_VEC3 ? ENG_VEC3 : ENG_F32,
                         d->layout, d->voxel_size, {d->origin[0], d->origin[1], d->origin[2]},
                         {(float)d->background[0], (float)d->background[1], (float)d->background[2]}};
    if (ed.type == ENG_F32)
        ed.background[1] = ed.background[2] = ed.background[0];
    return pl_from_engine(ctx, eng_field_declare(ctx->eng, &ed, NULL));
}

plume_status pl_field_stat(plume_context *handle, const char *name, plume_field_stat stat,
                           double *out)
{
    GET_CTX(ctx, handle);
    if (!out || !name)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "field_stat: %s is NULL", out ? "field" : "out");
    eng_field *f = eng_field_find(ctx->eng, name);
    if (!f)
        return pl_fail(ctx, PLUME_ERR_NOT_FOUND, "field_stat: no field named '%s'", name);
    /* A statistic is a sync point: queued tasks run now, and their errors are reported here. */
    int rc = eng_sync(ctx->eng);
    if (rc)
        return pl_from_engine(ctx, rc);
    if (stat == PLUME_STAT_ACTIVE_VOXELS) {
        *out = (double)eng_field_active_voxels(f);
        return PLUME_OK;
    }
    if (stat == PLUME_STAT_ACTIVE_BLOCKS) {
        *out = (double)eng_field_block_count(f);
        return PLUME_OK;
    }
    if (stat != PLUME_STAT_MAX_ABS && stat != PLUME_STAT_SUM)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "field_stat: unknown statistic %d", stat);
    *out = eng_field_reduce(f, stat == PLUME_STAT_SUM ? ENG_REDUCE_SUM : ENG_REDUCE_MAX_ABS);
    return PLUME_OK;
}

plume_status pl_cook(plume_context *handle, plume_node *const *nodes, uint32_t count,
                     const plume_cook_info *info)
{
    GET_CTX(ctx, handle);
    if (count && !nodes)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "cook: nodes is NULL");
    plume_cook_info ci = {sizeof ci, 0, 0.0, 1.0 / 24.0, 0, 1};
    if (info && info->struct_size < offsetof(plume_cook_info, frame) + sizeof info->frame)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "cook: info.struct_size %u is too small (set it to sizeof(plume_cook_info))",
                       info->struct_size);
    if (info) {
        size_t n = info->struct_size < sizeof ci ? info->struct_size : sizeof ci;
        memcpy(&ci, info, n);
        ci.struct_size = sizeof ci;
    }
    /* a NaN or infinite step turns every field it touches into NaN or zero, silently */
    if (!isfinite(ci.dt) || ci.dt < 0 || !isfinite(ci.time))
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "cook: info.dt must be finite and >= 0 and info.time finite (dt %g, time %g)",
                       ci.dt, ci.time);
    /* substep == substeps: the frame's own stage, after its substeps (as `plume cook` does) */
    if (ci.substeps < 1 || ci.substep > ci.substeps)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "cook: info.substep %u of info.substeps %u (substeps >= 1, substep <= substeps)",
                       ci.substep, ci.substeps);
    /* Resolve every handle before doing any work, so a bad list cooks nothing. */
    for (uint32_t i = 0; i < count; i++) {
        pl_node *n = pl_node_get(nodes[i]);
        if (!n)
            return pl_fail(ctx, PLUME_ERR_INVALID_HANDLE, "cook: node %u of %u is not a valid node handle",
                           i, count);
        if (n->ctx != ctx)
            return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "cook: node '%s' belongs to another context",
                           n->name);
    }
    /* A file of an earlier frame that failed is news the host gets before more cooking. */
    plume_status wst = ctx->writes ? pl_wq_collect(ctx->writes, ctx) : PLUME_OK;
    if (wst != PLUME_OK)
        return wst;
    double t0 = now_s();
    plume_status st = PLUME_OK;
    if (ci.substeps > 1 && ci.substep < ci.substeps)
        snprintf(ctx->progress_at, sizeof ctx->progress_at, "frame %lld, substep %u/%u",
                 (long long)ci.frame, ci.substep + 1, ci.substeps);
    else
        snprintf(ctx->progress_at, sizeof ctx->progress_at, "frame %lld", (long long)ci.frame);
    for (uint32_t i = 0; i < count && st == PLUME_OK; i++) {
        if (pl_cancelled(ctx)) {
            st = pl_fail(ctx, PLUME_ERR_CANCELLED, "cook: cancelled by the host");
            break;
        }
        pl_node *n = pl_node_get(nodes[i]);
        char stage[160];
        snprintf(stage, sizeof stage, "%s (node %u of %u)", n->name, i + 1, count);
        pl_progress(ctx, (double)i / count, stage);
        st = pl_node_cook(n, &ci);
    }
    ctx->stats.wall_s += now_s() - t0;
    return st;
}

plume_status pl_sync(plume_context *handle)
{
    GET_CTX(ctx, handle);
    plume_status st = pl_from_engine(ctx, eng_sync(ctx->eng));
    if (st == PLUME_OK && ctx->writes)
        st = pl_wq_collect(ctx->writes, ctx);
    return st;
}

plume_status pl_get_stats(plume_context *handle, plume_stats *out)
{
    GET_CTX_ANYWHERE(ctx, handle);
    if (!out || out->struct_size < sizeof(uint32_t))
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "get_stats: out is NULL or has no struct_size");
    plume_stats s = ctx->stats;
    s.memory_bytes = eng_memory_bytes(ctx->eng);
    s.active_voxels = 0;
    for (int i = 0; i < eng_field_count(ctx->eng); i++) {
        eng_field *f = eng_field_at(ctx->eng, i);
        if (f && !eng_field_is_scratch(f))
            s.active_voxels += eng_field_active_voxels(f);
    }
    eng_stats es;
    eng_get_stats(ctx->eng, &es);
    s.tasks_launched = es.tasks_launched;
    s.tasks_launched_serial = es.launched_by_type[0];
    s.tasks_launched_range_for = es.launched_by_type[1];
    s.tasks_launched_struct_for = es.launched_by_type[2];
    s.listgens = es.listgens;
    s.tasks_compiled = es.tasks_compiled;
    s.instructions = es.instructions;
    s.fused_tasks = es.tasks_fused;
    s.eliminated_stores = es.stores_eliminated;
    s.eliminated_tasks = es.tasks_eliminated;
    s.backend_s = es.backend_s;
    s.optimizer_s = es.optimizer_s;
    s.compile_s = es.compile_s;
    s.gpu_kernel_s = es.kernel_s;
    s.gpu_kernels = es.kernels;
    s.gpu_graph_launches = es.graph_launches;
    s.gpu_graphs_built = es.graphs_built;
    s.tasks_from_disk = es.tasks_from_disk;
    s.flushes = es.flushes;
    s.flushes_memoized = es.flushes_memoized;
    size_t n = out->struct_size < sizeof s ? out->struct_size : sizeof s;
    memcpy(out, &s, n);
    out->struct_size = (uint32_t)n; /* a newer host's fields past ours stay "absent" */
    return PLUME_OK;
}
