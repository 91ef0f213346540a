/* The kernels' runtime of a context: CPU pool, JIT, SFG bank and queue; sync, flush, modes,
 * counters, and the hooks that keep host access to fields ordered with queued tasks. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"
#include "engine/kernel_internal.h"
#include "engine/passes/passes.h"
#include "engine/sfg/sfg_ir_meta.h"
#include "engine/codegen/jit_disk.h"
#include "engine/exec_cuda.h"
#include "engine/launcher.h"
#include "sparse/bitcode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sfg_options queue_options(const eng_mode *m)
{
    sfg_options o;
    memset(&o, 0, sizeof o);
    o.eager = m->eager;
    o.flush_every = m->flush_every;
    o.disabled_passes = m->disabled_passes;
    return o;
}

sfg_executor_fn eng_executor(const eng_context *ctx)
{
    (void)ctx;
    return eng_exec_batch;
}

int eng_runtime_ready(eng_context *ctx)
{
    if (ctx->runtime_ready)
        return ENG_OK;
    char err[512];
    if (cpu_pool_create(ctx->threads, &ctx->pool, err, sizeof err) != 0)
        return eng_fail(ctx, ENG_EINTERNAL, "cannot start the CPU threads: %s", err);
    jit_config jc = jit_config_default();
    jc.runtime_bc = plm_runtime_bc_x86_64;
    jc.runtime_bc_size = plm_runtime_bc_x86_64_size;
    /* Compiles overlap with nothing else on the context thread: one compile thread per core. */
    jc.compile_threads = ctx->threads;
    /* compiled tasks kept between processes (PLUME_KERNEL_CACHE, jit_disk.h): IR hashes
     * stand for their modules, so a later cook of the scene loads instead of compiling */
    char *cache_dir = jit_disk_default_dir();
    jc.cache_dir = cache_dir;
    int jrc = jit_create(&jc, &ctx->jit, err, sizeof err);
    free(cache_dir);
    if (jrc != 0) {
        eng_runtime_free(ctx);
        return eng_fail(ctx, ENG_EINTERNAL, "cannot start the JIT: %s", err);
    }
    sfg_ir_ops ops = passes_sfg_ops();
    ctx->bank = sfg_bank_create(&ops);
    sfg_options o = queue_options(&ctx->mode);
    ctx->queue = ctx->bank ? sfg_queue_create(ctx->bank, eng_executor(ctx), ctx, &o) : NULL;
    if (!ctx->queue) {
        eng_runtime_free(ctx);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    task_profile_init(&ctx->profile);
    ctx->runtime_ready = 1;
    return ENG_OK;
}

void eng_runtime_free(eng_context *ctx)
{
    eng_launcher_stop(ctx);
    /* batches left running on a GPU still write the trees about to go */
    eng_cuda_drain(ctx, 0);
    task_profile_print(&ctx->profile, stderr);
    task_profile_free(&ctx->profile);
    sfg_queue_destroy(ctx->queue);
    sfg_bank_destroy(ctx->bank);
    code_cache_free(&ctx->codes);
    jit_destroy(ctx->jit);
    cpu_pool_destroy(ctx->pool);
    ctx->queue = NULL;
    ctx->bank = NULL;
    ctx->jit = NULL;
    ctx->pool = NULL;
    ctx->runtime_ready = 0;
}

int eng_queue_error(eng_context *ctx, int code)
{
    /* The executor already wrote the engine's message; keep it. */
    if (code == SFG_EEXEC)
        return ctx->exec_rc ? ctx->exec_rc : ENG_EINTERNAL;
    return eng_fail(ctx, code == SFG_ENOMEM ? ENG_ENOMEM : ENG_EINTERNAL, "task queue: %s",
                    sfg_error(ctx->queue));
}

int eng_task_faulted(eng_context *ctx, const sfg_exec_task *t)
{
    uint32_t type = t->meta->type;
    if (type == SFG_CLEAR_LIST || type == SFG_LISTGEN || type == SFG_GC) {
        uint32_t fid = t->meta->snode / 16; /* the field a runtime task works on (exec.c) */
        return fid < (uint32_t)ctx->nfields &&
               plm_rt_error(plm_tree_runtime(eng_field_tree(ctx->fields[fid]))) != PLM_RT_OK;
    }
    const passes_bound *b = t->ir.ir;
    for (uint32_t s = 0; b && s < b->nfields; s++)
        if (b->field_id[s] < (uint32_t)ctx->nfields &&
            plm_rt_error(plm_tree_runtime(eng_field_tree(ctx->fields[b->field_id[s]]))) != PLM_RT_OK)
            return 1;
    return 0;
}

/* "kernel 'k'" for a task named "k#0", "kernel 'a', 'b' or 'c' (run fused as one task)" for
 * "a#0+b#1+a#2+c#0" (the names eng_launch and fusion give); a kernel appears once. */
static void culprit_kernels(const char *task, char *out, size_t n)
{
    char names[8][96];
    int count = 0, more = 0;
    for (const char *p = task; *p;) {
        size_t len = strcspn(p, "#+");
        /* a kernel's name is followed by its task number; a part without one was cut off */
        if (len && len < sizeof names[0] && p[len] == '#') {
            int seen = 0;
            for (int i = 0; i < count && !seen; i++)
                seen = strlen(names[i]) == len && !strncmp(names[i], p, len);
            if (!seen && count < 8) {
                memcpy(names[count], p, len);
                names[count++][len] = 0;
            } else if (!seen) {
                more = 1;
            }
        }
        p += len;
        p += strcspn(p, "+"); /* past "#N" */
        if (*p == '+')
            p++;
    }
    if (!count) {
        snprintf(out, n, "a kernel");
        return;
    }
    size_t at = (size_t)snprintf(out, n, "kernel '%s'", names[0]);
    for (int i = 1; i < count && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s'%s'", i == count - 1 && !more ? " or " : ", ",
                               names[i]);
    if (count > 1 && at < n)
        snprintf(out + at, n - at, "%s (run fused as one task)", more ? ", ..." : "");
}

/* "node 'a' (t): ", or "node 'a' (t) or node 'b' (t): " for a task fused from two programs'
 * kernels (each program's origin is its tag: eng_launch); "" when none is known. */
static void culprit_origin(const sfg_tags *tags, char *out, size_t n)
{
    size_t at = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < tags->n && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%s", i ? (i + 1 == tags->n && !tags->more ? " or " : ", ") : "",
                               (const char *)tags->tag[i]);
    if (at && at < n)
        snprintf(out + at, n - at, "%s: ", tags->more ? ", ..." : "");
}

int eng_check_runtime_errors(eng_context *ctx, const sfg_exec_task *culprit)
{
    /* The first field with an error is reported; every other's error is cleared too and its
     * name added, so no stale error (with one budget for all trees, an overrun usually fails
     * allocations in several) surfaces at a later sync after the host recovered. The culprit's
     * own fields come first: with one budget, another field's allocation may fail after it. */
    int rc = ENG_OK, others = 0;
    char more[256] = "", who[512] = "a kernel", origin[1024] = "";
    if (culprit) {
        culprit_kernels(culprit->name ? culprit->name : "", who, sizeof who);
        culprit_origin(&culprit->tags, origin, sizeof origin);
    }
    const passes_bound *b = culprit ? culprit->ir.ir : NULL;
    uint32_t first = b ? b->nfields : 0;
    for (uint32_t at = 0; at < first + (uint32_t)ctx->nfields; at++) {
        uint32_t fid = at < first ? b->field_id[at] : at - first;
        if (fid >= (uint32_t)ctx->nfields)
            continue;
        plm_tree *t = eng_field_tree(ctx->fields[fid]);
        char msg[512];
        int code = plm_tree_check_error(t, msg, sizeof msg);
        if (code == PLM_RT_OK)
            continue;
        const char *name = eng_field_info(ctx->fields[fid])->name;
        if (rc != ENG_OK) {
            size_t n = strlen(more);
            if (others++ < 4)
                snprintf(more + n, sizeof more - n, "%s'%s'", n ? ", " : "", name);
            continue;
        }
        if (code == PLM_RT_ERR_RANGE) {
            /* in the user's terms: the voxels the field can hold, not the SNode's number (the
             * runtime's text ends with the count of failed writes, kept) */
            int64_t lo[3], hi[3];
            eng_field_index_range(ctx->fields[fid], lo, hi);
            const char *rest = strstr(msg, " (");
            /* the axes the field has (a 1-D field: one range) */
            const ir_field_info *fi = eng_field_ir_info(ctx->fields[fid]);
            int dim = fi && fi->dim >= 1 && fi->dim <= 3 ? fi->dim : 3;
            char box[200] = "";
            for (int a = 0, at = 0; a < dim; a++)
                at += snprintf(box + at, sizeof box - (size_t)at, "%s%lld..%lld", a ? ", " : "",
                               (long long)lo[a], (long long)hi[a] - 1);
            rc = eng_fail(ctx, ENG_EINVAL,
                          "%sfield '%s': %s wrote outside the voxels the field can hold (%s)%s; those "
                          "writes were dropped",
                          origin, name, who, box, rest ? rest : "");
        } else if (culprit) {
            rc = eng_fail(ctx, code == PLM_RT_ERR_BUDGET ? ENG_ENOMEM : ENG_EINVAL, "%sfield '%s': %s: %s",
                          origin, name, who, msg);
        } else {
            rc = eng_fail(ctx, code == PLM_RT_ERR_BUDGET ? ENG_ENOMEM : ENG_EINVAL, "field '%s': %s",
                          name, msg);
        }
    }
    if (others) {
        size_t n = strlen(ctx->err);
        snprintf(ctx->err + n, sizeof ctx->err - n, " (field%s %s%s failed too)",
                 others > 1 ? "s" : "", more, others > 4 ? ", ..." : "");
    }
    return rc;
}

int eng_flush(eng_context *ctx)
{
    if (!ctx->runtime_ready || ctx->in_exec || eng_on_launch_thread())
        return ENG_OK;
    ctx->in_exec = 1;
    int rc = sfg_flush(ctx->queue);
    ctx->in_exec = 0;
    return rc == SFG_OK ? ENG_OK : eng_queue_error(ctx, rc);
}

int eng_sync(eng_context *ctx)
{
    if (!ctx->runtime_ready || ctx->in_exec || eng_on_launch_thread())
        return ENG_OK;
    ctx->in_exec = 1;
    int rc = sfg_sync(ctx->queue);
    ctx->in_exec = 0;
    if (rc != SFG_OK) {
        rc = eng_queue_error(ctx, rc);
        /* the host may touch the trees next, whatever this returns: nothing may still run */
        eng_launcher_wait(ctx);
        return rc;
    }
    /* with nothing queued the flush ran no batch: batches flushed earlier may still run */
    rc = eng_launcher_drain(ctx);
    if (rc) {
        /* batches the graph counted as run were dropped: trust nothing it proved */
        sfg_forget(ctx->queue);
        ctx->exec_rc = rc;
    }
    /* nothing queued, nothing running: programs their users let go can go now, but for a
     * failure, whose message may start with one of their origins (eng_error_origin looks it
     * up there); they go at the next sync that succeeds, or with the context */
    if (rc == ENG_OK)
        eng_programs_free_retired(ctx);
    return rc;
}

int eng_set_mode(eng_context *ctx, const eng_mode *mode)
{
    int rc = eng_sync(ctx);
    if (rc)
        return rc;
    ctx->mode = *mode;
    if (!ctx->runtime_ready)
        return ENG_OK;
    /* A queue's options are fixed at creation: a new queue over the same bank (its IR and
     * cached pass results stay), starting from what the host knows. */
    sfg_options o = queue_options(mode);
    sfg_queue *q = sfg_queue_create(ctx->bank, eng_executor(ctx), ctx, &o);
    if (!q)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    /* Keep the counters across modes: they describe the context's work. */
    const sfg_stats *old = sfg_get_stats(ctx->queue);
    ctx->stats_base.tasks_launched += old->tasks_launched;
    for (int t = 0; t < 7 && t < SFG_TASK_TYPE_COUNT; t++)
        ctx->stats_base.launched_by_type[t] += old->launched[t];
    ctx->stats_base.listgens += old->listgens;
    ctx->stats_base.tasks_enqueued += old->tasks_enqueued;
    ctx->stats_base.tasks_fused += old->tasks_fused;
    ctx->stats_base.activations_demoted += old->activations_demoted;
    ctx->stats_base.listgens_removed += old->listgens_removed;
    ctx->stats_base.stores_eliminated += old->stores_eliminated;
    ctx->stats_base.tasks_eliminated += old->tasks_eliminated;
    ctx->stats_base.flushes += old->flushes;
    ctx->stats_base.flushes_memoized += old->flushes_memoized;
    ctx->stats_base.optimizer_s += old->optimizer_s;
    sfg_queue_destroy(ctx->queue);
    ctx->queue = q;
    return ENG_OK;
}

void eng_get_stats(eng_context *ctx, eng_stats *out)
{
    eng_launcher_wait(ctx); /* the launch thread counts backend time */
    *out = ctx->stats_base;
    out->batches_async = ctx->stats.batches_async;
    out->compile_s = ctx->stats.compile_s;
    out->backend_s = ctx->stats.backend_s;
    out->frontend_s = ctx->stats.frontend_s;
    if (!ctx->runtime_ready)
        return;
    const sfg_stats *s = sfg_get_stats(ctx->queue);
    out->tasks_launched += s->tasks_launched;
    for (int t = 0; t < 7 && t < SFG_TASK_TYPE_COUNT; t++)
        out->launched_by_type[t] += s->launched[t];
    out->listgens += s->listgens;
    out->tasks_enqueued += s->tasks_enqueued;
    out->tasks_fused += s->tasks_fused;
    out->activations_demoted += s->activations_demoted;
    out->listgens_removed += s->listgens_removed;
    out->stores_eliminated += s->stores_eliminated;
    out->tasks_eliminated += s->tasks_eliminated;
    out->flushes += s->flushes;
    out->flushes_memoized += s->flushes_memoized;
    out->optimizer_s += s->optimizer_s;
    jit_stats js;
    jit_get_stats(ctx->jit, &js);
    out->tasks_compiled = js.tasks_compiled - ctx->jit_base.tasks_compiled;
    out->tasks_from_disk = js.tasks_from_disk - ctx->jit_base.tasks_from_disk;
    out->instructions = js.instructions - ctx->jit_base.instructions;
    out->compile_s = js.compile_s - ctx->jit_base.compile_s;
    if (ctx->cuda) {
        eng_cuda_stats cs;
        eng_cuda_get_stats(ctx->cuda, &cs);
        out->tasks_compiled += cs.tasks_compiled;
        out->tasks_from_disk += cs.tasks_from_disk;
        out->instructions += cs.instructions;
        out->compile_s += cs.compile_s;
        out->kernel_s = cs.kernel_s;
        out->kernels = cs.kernels;
        out->graph_launches = cs.graph_launches;
        out->graphs_built = cs.graphs_built;
    }
}

void eng_reset_stats(eng_context *ctx)
{
    eng_launcher_wait(ctx);
    memset(&ctx->stats, 0, sizeof ctx->stats);
    memset(&ctx->stats_base, 0, sizeof ctx->stats_base);
    if (!ctx->runtime_ready)
        return;
    sfg_reset_stats(ctx->queue);
    jit_get_stats(ctx->jit, &ctx->jit_base);
    if (ctx->cuda)
        eng_cuda_reset_stats(ctx->cuda);
}

int eng_host_read(eng_context *ctx) { return eng_sync(ctx); }

int eng_host_write(eng_context *ctx, eng_field *f)
{
    int rc = eng_sync(ctx);
    if (rc || !ctx->runtime_ready || ctx->in_exec)
        return rc;
    /* Every state of the field may change: its values and each level's mask, list and
     * allocator of its tree (ids as engine/sfg/sfg_ir_meta.h names them). */
    const ir_field_info *info = eng_field_ir_info(f);
    uint32_t id = (uint32_t)eng_field_id(f);
    uint32_t tree = info && info->tree_key ? info->tree_key - 1 : id;
    sfg_state st[1 + 3 * IR_MAX_LEVELS];
    uint32_t n = 0;
    st[n++] = SFG_STATE(SFG_VALUE, id);
    for (uint32_t l = 1; info && l < info->nlevels; l++) {
        uint32_t sn = SFG_SNODE_ID(tree, l);
        st[n++] = SFG_STATE(SFG_MASK, sn);
        st[n++] = SFG_STATE(SFG_LIST, sn);
        st[n++] = SFG_STATE(SFG_ALLOC, sn);
    }
    if (sfg_host_write(ctx->queue, st, n) != SFG_OK)
        return eng_queue_error(ctx, SFG_EINVAL);
    return ENG_OK;
}
