/* The executor: the SFG hands it batches of tasks in an order that honours their
 * dependencies; it compiles what it has not seen (all of a batch at once, on the JIT's compile
 * threads), then runs the tasks one after the other, each spread over the CPU pool. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"
#include "engine/exec_cuda.h"
#include "engine/exec_runtime.h"
#include "engine/launcher.h"
#include "engine/codegen/task.h"
#include "engine/listing.h"
#include "engine/passes/passes.h"
#include "sparse/tree.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* PLUME_IR_DUMP=dir: each task's IR as code generation gets it, in dir/<hash>.ir, for a kernel
 * author asking what the optimizer made of a fused or demoted task; PLUME_IR_DUMP_ASM=1 adds
 * the host assembly of its optimized module in dir/<hash>.s (a second compile),
 * PLUME_IR_DUMP_LLVM=1 that module's LLVM IR in dir/<hash>.ll, and PLUME_IR_DUMP_PTX=1 its PTX
 * in dir/<hash>.ptx (sm_80, the runtime linked in: what a GPU would compile, for timing ptxas
 * on a machine without one). Best effort. */
static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}

static void dump_listing(const sfg_exec_task *t, ir_task *low, const char *dir, int kind,
                         const char *ext)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%016llx.%s", dir, (unsigned long long)t->ir.hash, ext);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    char err[256];
    if (eng_task_listing(f, low, kind, err, sizeof err) != 0)
        fprintf(f, "%s no listing: %s\n", kind == ENG_LIST_PTX ? "//" : "#", err);
    fclose(f);
}

static void dump_ir(const sfg_exec_task *t, ir_task *low)
{
    const char *dir = getenv("PLUME_IR_DUMP");
    if (!dir || !dir[0])
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%016llx.ir", dir, (unsigned long long)t->ir.hash);
    char *text = ir_print_task(low);
    FILE *f = text ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "# task %s\n%s", t->name ? t->name : "?", text);
        fclose(f);
    }
    free(text);
    if (env_on("PLUME_IR_DUMP_ASM"))
        dump_listing(t, low, dir, ENG_LIST_ASM, "s");
    if (env_on("PLUME_IR_DUMP_LLVM"))
        dump_listing(t, low, dir, ENG_LIST_LLVM, "ll");
    if (env_on("PLUME_IR_DUMP_PTX"))
        dump_listing(t, low, dir, ENG_LIST_PTX, "ptx");
}

int eng_code_for(eng_context *ctx, const sfg_exec_task *t, eng_code **out, int *fresh)
{
    *fresh = 0;
    eng_code *c = code_cache_find(&ctx->codes, t->ir.hash);
    if (c) {
        *out = c;
        return ENG_OK;
    }
    const passes_bound *b = t->ir.ir;
    double t0 = now_s();
    char err[512];
    ir_task *low = NULL;
    if (passes_prepare_codegen(b->task, &low, err, sizeof err) != 0)
        return eng_fail(ctx, ENG_EINTERNAL, "task '%s': %s", t->name ? t->name : "?", err);
    ctx->stats.frontend_s += now_s() - t0;
    c = code_cache_add(&ctx->codes, t->ir.hash);
    if (!c) {
        ir_task_free(low);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    c->lowered = low;
    *out = c;
    *fresh = 1;
    dump_ir(t, low);
    return ENG_OK;
}

/* Submits a fresh code entry's lowered task to the JIT. */
static int submit_code(eng_context *ctx, const sfg_exec_task *t, eng_code *c, jit_task **pending,
                       int *npending)
{
    char err[512];
    jit_request req;
    if (cg_task_request(c->lowered, c->fn, &c->result, &req, err, sizeof err) != 0)
        return eng_fail(ctx, ENG_EINTERNAL, "task '%s': %s", t->name ? t->name : "?", err);
    jit_task *jt;
    if (jit_submit(ctx->jit, &req, &jt, err, sizeof err) != 0)
        return eng_fail(ctx, ENG_EINTERNAL, "task '%s': %s", t->name ? t->name : "?", err);
    pending[(*npending)++] = jt;
    return ENG_OK;
}

/* The host's cancel callback, asked at most every 20 ms (a batch of short tasks would
 * otherwise call it thousands of times a second). Context's thread only. */
static int poll_cancel(eng_context *ctx)
{
    double t = now_s();
    if (t - ctx->cancel_polled < 0.02)
        return 0;
    ctx->cancel_polled = t;
    return ctx->cancel(ctx->cancel_user) != 0;
}

typedef struct run_job {
    const plm_task_ctx *tc;
    void *fn;
    int64_t base;
    eng_context *ctx;
    int may_cancel;  /* worker 0 is the context's thread, which may call the host back */
    _Atomic int stop; /* the host said stop: chunks not yet begun are skipped */
} run_job;

/* Whether a chunk runs: not once the host has asked to stop, which worker 0 (the context's
 * thread, the only one allowed to call the host) finds out between its chunks. */
static int chunk_runs(run_job *j, int worker)
{
    if (atomic_load_explicit(&j->stop, memory_order_relaxed))
        return 0;
    if (worker == 0 && j->may_cancel && poll_cancel(j->ctx)) {
        atomic_store_explicit(&j->stop, 1, memory_order_relaxed);
        return 0;
    }
    return 1;
}

static void run_range(void *ud, int64_t lo, int64_t hi, int worker)
{
    run_job *j = ud;
    if (chunk_runs(j, worker))
        ((plm_task_range_fn)j->fn)(j->tc, j->base + lo, j->base + hi);
}

static void run_struct(void *ud, int64_t lo, int64_t hi, int worker)
{
    run_job *j = ud;
    if (chunk_runs(j, worker))
        ((plm_task_struct_fn)j->fn)(j->tc, (int32_t)lo, (int32_t)hi);
}

/* Whether the host may be asked from here: a callback set, and this the context's thread. */
static int may_cancel(const eng_context *ctx) { return ctx->cancel && !eng_on_launch_thread(); }

int eng_task_snode(eng_context *ctx, uint32_t snode, plm_runtime **rt, int32_t *rt_snode,
                   uint32_t *level_out)
{
    uint32_t fid = snode / 16, level = snode % 16;
    if (level_out)
        *level_out = level;
    if (fid >= (uint32_t)ctx->nfields)
        return eng_fail(ctx, ENG_EINTERNAL, "runtime task on unknown field %u", fid);
    eng_field *f = ctx->fields[fid];
    const ir_field_info *info = eng_field_ir_info(f);
    if (!info || level >= info->nlevels)
        return eng_fail(ctx, ENG_EINTERNAL, "runtime task on unknown level %u of field %u", level, fid);
    *rt = plm_tree_runtime(eng_field_tree(f));
    *rt_snode = info->levels[level].rt_snode;
    return ENG_OK;
}

static int order_dependent_atomic(ir_stmt *s, void *ud)
{
    (void)ud;
    return s->op == IR_ATOMIC && ir_type_is_float(s->ty) &&
           s->sub != IR_ATOMIC_MIN && s->sub != IR_ATOMIC_MAX;
}

/* Deterministic mode: does the task's result depend on the order its iterations run in? Only
 * float atomics that do not commute exactly (+, -, *, /) into an element several iterations
 * may reach: a written value (or temporaries) state without UNIQUE. Plain racing stores are
 * left alone: kernels that write what other iterations read order that themselves (red-black
 * sweeps), and that order does not depend on the thread count. */
static int needs_order(const sfg_exec_task *t, const ir_task *low)
{
    int shared = 0;
    for (uint32_t i = 0; i < t->meta->n_access; i++) {
        const sfg_access *a = &t->meta->access[i];
        if (SFG_STATE_KIND(a->state) != SFG_VALUE || !(a->flags & SFG_ACC_WRITE) ||
            (a->flags & SFG_ACC_UNIQUE))
            continue;
        if ((a->flags & SFG_ACC_ATOMIC) && (a->op == IR_ATOMIC_MIN || a->op == IR_ATOMIC_MAX))
            continue;
        shared = 1;
    }
    return shared && ir_walk(low->body, order_dependent_atomic, NULL) != 0;
}

static int run_task(eng_context *ctx, const sfg_exec_task *t, eng_code *code)
{
    char err[256];
    int rc = 0;
    switch (t->meta->type) {
    case SFG_CLEAR_LIST:
    case SFG_LISTGEN:
    case SFG_GC: {
        plm_runtime *rt = NULL;
        int32_t sn = 0;
        if ((rc = eng_task_snode(ctx, t->meta->snode, &rt, &sn, NULL)) != ENG_OK)
            return rc;
        if (t->meta->type == SFG_CLEAR_LIST)
            exec_clear_list(rt, sn);
        else if (t->meta->type == SFG_LISTGEN)
            rc = exec_listgen(ctx->pool, rt, sn, ctx->deterministic, err, sizeof err);
        else
            rc = exec_gc(ctx->pool, rt, sn, err, sizeof err);
        break;
    }
    default: {
        const passes_bound *b = t->ir.ir;
        const ir_task *low = code->lowered;
        plm_runtime *rts[PASSES_MAX_SLOTS];
        int32_t rtf[PASSES_MAX_SLOTS];
        for (uint32_t s = 0; s < b->nfields && s < PASSES_MAX_SLOTS; s++) {
            eng_field *f = ctx->fields[b->field_id[s]];
            rts[s] = plm_tree_runtime(eng_field_tree(f));
            rtf[s] = eng_field_tree_id(f);
        }
        plm_task_ctx tc = {rts, rtf, t->args};
        run_job j = {&tc, code->fn[0], 0, ctx, may_cancel(ctx), 0};
        /* grain 0: the pool's own; a grain of the whole loop: one chunk, on this thread */
        int ordered = ctx->deterministic && low->kind != IR_TASK_SERIAL && needs_order(t, low);
        if (low->kind == IR_TASK_SERIAL) {
            ((plm_task_serial_fn)code->fn[0])(&tc);
        } else if (low->kind == IR_TASK_RANGE_FOR) {
            int64_t be[2] = {0, 0};
            ((plm_task_bounds_fn)code->fn[1])(&tc, be);
            j.base = be[0];
            if (be[1] > be[0])
                rc = cpu_pool_parallel_for(ctx->pool, be[1] - be[0], ordered ? be[1] - be[0] : 0, run_range,
                                           &j, err, sizeof err);
        } else if (low->kind == IR_TASK_STRUCT_FOR) {
            int32_t sn = low->fields[low->field].levels[low->level].rt_snode;
            /* A leaf right under the root iterates list(root), which no listgen task makes. */
            if (low->level == 0)
                plm_rt_listgen_root(rts[low->field]);
            int32_t n = plm_rt_list_size(rts[low->field], sn);
            rc = cpu_pool_parallel_for(ctx->pool, n, ordered ? n : 0, run_struct, &j, err, sizeof err);
        } else {
            return eng_fail(ctx, ENG_EINTERNAL, "task '%s' of kind %d has no code", t->name, low->kind);
        }
        if (!rc && atomic_load(&j.stop))
            return eng_fail(ctx, ENG_ECANCELLED, "cancelled while running task '%s'", t->name ? t->name : "?");
    }
    }
    if (rc)
        return eng_fail(ctx, ENG_EINTERNAL, "task '%s': %s", t->name ? t->name : "?", err);
    return ENG_OK;
}

/* Runtime tasks are named by what they do and the field and level they do it to; struct_for
 * tasks by their kernels and the field they iterate. */
static void profile_task(eng_context *ctx, const sfg_exec_task *t, const eng_code *code,
                         double seconds)
{
    static const char *const kinds[] = {[SFG_CLEAR_LIST] = "clear_list", [SFG_LISTGEN] = "listgen",
                                        [SFG_GC] = "gc"};
    uint32_t type = t->meta->type;
    if (type == SFG_CLEAR_LIST || type == SFG_LISTGEN || type == SFG_GC) {
        char name[96];
        uint32_t fid = t->meta->snode / 16;
        snprintf(name, sizeof name, "%s %s.%u", kinds[type],
                 fid < (uint32_t)ctx->nfields ? eng_field_info(ctx->fields[fid])->name : "?",
                 t->meta->snode % 16);
        task_profile_add(&ctx->profile, name, seconds);
    } else if (code && code->lowered && code->lowered->kind == IR_TASK_STRUCT_FOR) {
        /* one kernel runs over fields of very different sizes (multigrid levels) */
        const passes_bound *b = t->ir.ir;
        uint32_t slot = code->lowered->field;
        uint32_t fid = slot < b->nfields ? b->field_id[slot] : (uint32_t)ctx->nfields;
        char name[160];
        snprintf(name, sizeof name, "%s over %s", t->name,
                 fid < (uint32_t)ctx->nfields ? eng_field_info(ctx->fields[fid])->name : "?");
        task_profile_add(&ctx->profile, name, seconds);
    } else {
        task_profile_add(&ctx->profile, t->name, seconds);
    }
}

void eng_report_compile(eng_context *ctx, uint32_t done, uint32_t total)
{
    if (ctx->progress && total && !eng_on_launch_thread())
        ctx->progress(ctx->progress_user, "compiling kernels", done, total);
}

int eng_compile_resolved(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                         const unsigned char *fresh)
{
    if (ctx->cuda)
        return eng_compile_cuda(ctx, batch, codes, fresh);
    uint32_t n = batch->n_tasks;
    jit_task **pending = calloc(n ? n : 1, sizeof *pending);
    int npending = 0, rc = ENG_OK;
    if (!pending)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    /* Everything to compile in the batch compiles at once, on all compile threads. */
    for (uint32_t i = 0; i < n && rc == ENG_OK; i++)
        if (eng_code_to_compile(codes, fresh, i))
            rc = submit_code(ctx, &batch->tasks[i], codes[i], pending, &npending);
    /* waited on one by one, in the order the compile threads take them, for the progress */
    char err[512], msg[512];
    int failed = 0, cancelled = 0, compiled = 0;
    int may_stop = may_cancel(ctx); /* host callbacks: its thread */
    eng_report_compile(ctx, 0, (uint32_t)npending);
    for (int i = 0; i < npending; i++) {
        if (jit_wait(pending[i], msg, sizeof msg) != 0) {
            if (!failed++)
                snprintf(err, sizeof err, "%s", msg);
        } else {
            compiled++;
        }
        eng_report_compile(ctx, (uint32_t)i + 1, (uint32_t)npending);
        if (may_stop && !cancelled && i + 1 < npending && ctx->cancel(ctx->cancel_user)) {
            jit_cancel_queued(ctx->jit); /* the waits below return at once, but for those */
            cancelled = 1;               /* already compiling */
        }
    }
    if (cancelled && rc == ENG_OK)
        rc = eng_fail(ctx, ENG_ECANCELLED, "cancelled while compiling kernels (%d of %d compiled)",
                      compiled, npending);
    if (failed && rc == ENG_OK)
        rc = eng_fail(ctx, ENG_EINTERNAL, "compiling tasks: %s", err);
    free(pending);
    return rc;
}

int eng_exec_resolved(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                      const unsigned char *fresh)
{
    if (ctx->cuda)
        return eng_exec_resolved_cuda(ctx, batch, codes, fresh);
    const sfg_exec_task *tasks = batch->tasks;
    uint32_t n = batch->n_tasks;
    int rc = eng_compile_resolved(ctx, batch, codes, fresh);
    double t0 = now_s();
    int may_stop = may_cancel(ctx);
    /* the kernel task after which a field's error was first raised; none when a runtime task
     * (a listgen out of budget) raised it first */
    const sfg_exec_task *culprit = NULL;
    int faulted = 0;
    for (uint32_t i = 0; i < n && rc == ENG_OK; i++) {
        if (codes[i] && !codes[i]->fn[0]) {
            rc = eng_fail(ctx, ENG_EINTERNAL, "task '%s' has no compiled code", tasks[i].name);
            break;
        }
        if (may_stop && i > 0 && poll_cancel(ctx)) {
            rc = eng_fail(ctx, ENG_ECANCELLED, "cancelled after %u of the %u tasks of a batch", i, n);
            break;
        }
        double t1 = ctx->profile.enabled ? now_s() : 0;
        rc = run_task(ctx, &tasks[i], codes[i]);
        if (!faulted && eng_task_faulted(ctx, &tasks[i])) {
            faulted = 1;
            culprit = codes[i] ? &tasks[i] : NULL;
        }
        if (ctx->profile.enabled)
            profile_task(ctx, &tasks[i], codes[i], now_s() - t1);
    }
    ctx->stats.backend_s += now_s() - t0;
    if (rc == ENG_OK) {
        rc = eng_check_runtime_errors(ctx, culprit);
    } else {
        /* what the chunks that ran recorded in the trees goes with the cancel (or failure),
         * not with the host's next (clean) batch, which would blame its own first task; the
         * cancel stays the message */
        char *saved = eng_thread_err;
        char scratch[ENG_ERR_SIZE];
        eng_thread_err = scratch;
        eng_check_runtime_errors(ctx, culprit);
        eng_thread_err = saved;
    }
    return rc;
}

/* Whether batches flushed without a sync go to the launch thread: the mode's choice, unless
 * PLUME_LAUNCH_THREAD is 0 or 1. Off by default: on a CPU whose cores the pool already uses,
 * work overlapped with a running batch takes its time from that batch (docs/sfg.md). */
static int use_launch_thread(const eng_context *ctx)
{
    const char *e = getenv("PLUME_LAUNCH_THREAD");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1")))
        return e[0] == '1';
    return ctx->mode.launch_thread != 0;
}

int eng_code_to_compile(eng_code *const *codes, const unsigned char *fresh, uint32_t i)
{
    if (fresh[i])
        return 1;
    if (!codes[i] || codes[i]->fn[0])
        return 0;
    for (uint32_t k = 0; k < i; k++)
        if (codes[k] == codes[i])
            return 0;
    return 1;
}

int eng_resolve_codes(eng_context *ctx, const sfg_batch *batch, eng_code **codes,
                      unsigned char *fresh)
{
    int rc = ENG_OK;
    for (uint32_t i = 0; i < batch->n_tasks && rc == ENG_OK; i++) {
        const sfg_exec_task *t = &batch->tasks[i];
        codes[i] = NULL;
        fresh[i] = 0;
        if (t->meta->type != SFG_SERIAL && t->meta->type != SFG_RANGE_FOR &&
            t->meta->type != SFG_STRUCT_FOR)
            continue;
        int is_new = 0;
        rc = eng_code_for(ctx, t, &codes[i], &is_new);
        fresh[i] = (unsigned char)is_new;
    }
    return rc;
}

/* A batch that will not run (an earlier one failed, or finding its code did) still compiles
 * the code entries made for it, which later batches find made and do not compile; what that
 * reports does not replace the error the caller is about to get. */
static void compile_dropped(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                            const unsigned char *fresh)
{
    char *saved = eng_thread_err;
    char scratch[ENG_ERR_SIZE];
    eng_thread_err = scratch;
    eng_compile_resolved(ctx, batch, codes, fresh);
    eng_thread_err = saved;
}

int eng_exec_batch(void *ud, const sfg_batch *batch)
{
    eng_context *ctx = ud;
    uint32_t n = batch->n_tasks;
    eng_code **codes = calloc(n ? n : 1, sizeof *codes);
    unsigned char *fresh = calloc(n ? n : 1, 1);
    if (!codes || !fresh) {
        free(codes);
        free(fresh);
        return ctx->exec_rc = eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    /* Code entries are found or made here, on the context's thread, wherever the batch runs:
     * lowering a new task reads its bound IR the way the optimizer does. */
    int rc = eng_resolve_codes(ctx, batch, codes, fresh);
    if (rc == ENG_OK && !batch->in_order && use_launch_thread(ctx))
        rc = eng_launcher_submit(ctx, batch, codes, fresh);
    else if (rc == ENG_OK && (rc = eng_launcher_drain_thread(ctx)) == ENG_OK)
        rc = eng_exec_resolved(ctx, batch, codes, fresh);
    else
        compile_dropped(ctx, batch, codes, fresh);
    free(codes);
    free(fresh);
    if (rc)
        ctx->exec_rc = rc;
    return rc;
}
