/* The executor on a GPU: compile what is new (PTX, in parallel), lay out the batch's task
 * parameters, and launch the batch as one CUDA graph (cached by shape) or on the stream. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"
#include "engine/cuda_internal.h"
#include "engine/codegen/ptx.h"
#include "engine/codegen/task.h"
#include "engine/launcher.h"
#include "engine/passes/passes.h"
#include "sparse/bitcode.h"

#include <sched.h>
#include <stdint.h>
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

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* ---- compiling ---------------------------------------------------------------------------- */

typedef struct compile_job {
    eng_cuda *cu;
    ir_task *low;
    uint64_t key; /* the code entry's: names its machine code in the disk cache */
    const char *name;
    CUmodule module;
    CUfunction fn;
    uint64_t instructions;
    double seconds, emit_s;
    int failed;
    int skipped; /* not started: the host cancelled */
    int from_disk;
    int by_ptxas;
    char err[1024];
} compile_job;

typedef struct compile_set {
    compile_job *jobs;
    struct eng_context *ctx;
    int may_cancel; /* worker 0 is the context's thread: it polls the host's cancel callback */
    int cancelled;  /* atomic: jobs not yet started are skipped */
} compile_set;

/* The task's machine code from the disk cache, loaded: 1 when that worked (j->module, j->fn
 * set), 0 otherwise (nothing kept). */
static int from_disk(compile_job *j, uint64_t dname)
{
    eng_cuda *cu = j->cu;
    void *image = NULL;
    size_t size = 0;
    uint64_t instructions = 0;
    if (!jit_disk_load(&cu->disk, dname, &image, &size, &instructions))
        return 0;
    char why[512];
    int ok = cuda_check(cu->drv, cu->drv->cuCtxSetCurrent(cu->cc.ctx), "cuCtxSetCurrent", why,
                        sizeof why) == 0 &&
             cuda_module_load_image(cu->drv, image, &j->module, why, sizeof why) == 0 &&
             cuda_check(cu->drv, cu->drv->cuModuleGetFunction(&j->fn, j->module, CG_TASK_SYMBOL),
                        "cuModuleGetFunction", why, sizeof why) == 0;
    free(image);
    if (!ok) {
        /* a file that checked out but that this driver refuses: compiled (and stored) again */
        if (j->module)
            cu->drv->cuModuleUnload(j->module);
        j->module = NULL;
        j->fn = NULL;
        if (cu->verbose)
            fprintf(stderr, "plume: cuda: task '%s' from the kernel cache: %s\n",
                    j->name ? j->name : "?", why);
        return 0;
    }
    j->instructions = instructions;
    return 1;
}

/* The task's machine code from the toolkit's ptxas, loaded (and stored when dname): 1 when that
 * worked. A cubin the driver refuses (a toolkit newer than the driver) turns ptxas off for the
 * context: every task would be compiled twice otherwise. */
static int by_ptxas(compile_job *j, const char *ptx, uint64_t dname)
{
    eng_cuda *cu = j->cu;
    if (!cu->ptxas[0] || __atomic_load_n(&cu->ptxas_refused, __ATOMIC_RELAXED))
        return 0;
    void *image = NULL;
    size_t size = 0;
    char why[1024];
    if (cuda_ptxas_compile(cu->ptxas, cu->dev_sm, ptx, &image, &size, why, sizeof why) != 0) {
        if (cu->verbose)
            fprintf(stderr, "plume: cuda: task '%s' by ptxas: %s\n", j->name ? j->name : "?",
                    why);
        return 0;
    }
    int ok = cuda_module_load_image(cu->drv, image, &j->module, why, sizeof why) == 0;
    if (ok && dname)
        jit_disk_store(&cu->disk, dname, image, size, j->instructions);
    free(image);
    if (!ok) {
        j->module = NULL;
        if (!__atomic_exchange_n(&cu->ptxas_refused, 1, __ATOMIC_RELAXED))
            fprintf(stderr, "plume: cuda: the driver refuses what %s makes (%s); compiling with "
                            "the driver from here on\n", cu->ptxas, why);
    }
    return ok;
}

/* Loads the task's PTX into the device's context (current on this thread): by the toolkit's
 * ptxas where there is one (processes side by side, where the driver compiles one task at a
 * time); else, with the disk cache on, through the driver's linker, whose machine code is then
 * stored; where those fail, as PTX directly (the code is the same, only not kept). */
static int load_ptx(compile_job *j, const char *ptx, uint64_t dname)
{
    eng_cuda *cu = j->cu;
    if (by_ptxas(j, ptx, dname)) {
        j->by_ptxas = 1;
        return 0;
    }
    if (dname && cu->drv->has_linker) {
        void *image = NULL;
        size_t size = 0;
        char why[1024];
        if (cuda_link_ptx(cu->drv, ptx, &image, &size, why, sizeof why) == 0 &&
            cuda_module_load_image(cu->drv, image, &j->module, why, sizeof why) == 0) {
            jit_disk_store(&cu->disk, dname, image, size, j->instructions);
            free(image);
            return 0;
        }
        free(image);
        j->module = NULL;
        if (cu->verbose)
            fprintf(stderr, "plume: cuda: task '%s' not kept in the kernel cache: %s\n",
                    j->name ? j->name : "?", why);
    }
    return cuda_module_load_ptx(cu->drv, ptx, &j->module, j->err, sizeof j->err);
}

static void compile_items(void *ud, int64_t lo, int64_t hi, int worker)
{
    compile_set *set = ud;
    for (int64_t i = lo; i < hi; i++) {
        compile_job *j = &set->jobs[i];
        eng_cuda *cu = j->cu;
        if (worker == 0 && set->may_cancel && set->ctx->cancel(set->ctx->cancel_user))
            __atomic_store_n(&set->cancelled, 1, __ATOMIC_RELAXED);
        if (__atomic_load_n(&set->cancelled, __ATOMIC_RELAXED)) {
            j->skipped = 1;
            continue;
        }
        double t0 = now_s();
        uint64_t dname = 0;
        if (cu->disk.dir) {
            char *syms[1] = {(char *)CG_TASK_SYMBOL};
            dname = jit_disk_name(&cu->disk, j->key, syms, 1);
            if (from_disk(j, dname)) {
                j->from_disk = 1;
                j->seconds = now_s() - t0;
                continue;
            }
        }
        ptx_options po = ptx_options_default();
        po.sm = cu->sm;
        po.runtime_bc = plm_runtime_bc_nvptx64;
        po.runtime_bc_size = plm_runtime_bc_nvptx64_size;
        char *ptx = NULL;
        if (ptx_emit(&po, cg_task_build_nvptx, j->low, JIT_EMIT_ASM, &ptx, &j->instructions, j->err,
                     sizeof j->err) != 0) {
            j->failed = 1;
            continue;
        }
        j->emit_s = now_s() - t0;
        /* The driver's JIT (PTX to machine code) runs here too: the context must be current on
         * this worker. */
        if (cuda_check(cu->drv, cu->drv->cuCtxSetCurrent(cu->cc.ctx), "cuCtxSetCurrent", j->err,
                       sizeof j->err) ||
            load_ptx(j, ptx, dname) != 0 ||
            cuda_check(cu->drv, cu->drv->cuModuleGetFunction(&j->fn, j->module, CG_TASK_SYMBOL),
                       "cuModuleGetFunction", j->err, sizeof j->err))
            j->failed = 1;
        free(ptx);
        j->seconds = now_s() - t0;
    }
}

/* Compiles and loads the tasks eng_code_to_compile names; codes[i] is task i's. */
int eng_compile_cuda(struct eng_context *ctx, const sfg_batch *batch, struct eng_code *const *codes,
                     const unsigned char *fresh_in)
{
    eng_cuda *cu = ctx->cuda;
    uint32_t n = batch->n_tasks, njobs = 0;
    compile_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    eng_code **fresh = calloc(n ? n : 1, sizeof *fresh);
    if (!jobs || !fresh) {
        free(jobs);
        free(fresh);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    int rc = ENG_OK;
    char err[512];
    for (uint32_t i = 0; i < n; i++) {
        if (!eng_code_to_compile(codes, fresh_in, i))
            continue;
        jobs[njobs] = (compile_job){.cu = cu, .low = codes[i]->lowered, .key = codes[i]->key,
                                    .name = batch->tasks[i].name};
        fresh[njobs++] = codes[i];
    }
    if (rc == ENG_OK && njobs) {
        compile_set set = {jobs, ctx, ctx->cancel && !eng_on_launch_thread(), 0};
        eng_report_compile(ctx, 0, njobs);
        if (cpu_pool_parallel_for(ctx->pool, njobs, 1, compile_items, &set, err, sizeof err) != 0)
            rc = eng_fail(ctx, ENG_EINTERNAL, "compiling tasks: %s", err);
        /* Back on this thread, the device's context is still current (workers set their own). */
        cu->drv->cuCtxSetCurrent(cu->cc.ctx);
        eng_report_compile(ctx, njobs, njobs);
        for (uint32_t k = 0; k < njobs; k++) {
            compile_job *j = &jobs[k];
            if (j->module && grow((void **)&cu->modules, &cu->cap_modules, cu->nmodules + 1,
                                  sizeof *cu->modules) == 0)
                cu->modules[cu->nmodules++] = j->module;
            cu->stats.compile_s += j->seconds;
            cu->stats.emit_s += j->emit_s;
            cu->stats.load_s += j->from_disk ? 0 : j->seconds - j->emit_s;
            cu->stats.disk_s += j->from_disk ? j->seconds : 0;
            cu->stats.tasks_from_disk += (uint64_t)j->from_disk;
            cu->stats.tasks_ptxas += (uint64_t)j->by_ptxas;
            if (j->skipped)
                continue;
            if (j->failed) {
                if (rc == ENG_OK)
                    rc = eng_fail(ctx, ENG_EINTERNAL, "task '%s' for %s: %s",
                                  j->name ? j->name : "?", cu->info.name, j->err);
                continue;
            }
            fresh[k]->fn[0] = (void *)j->fn;
            cu->stats.tasks_compiled++;
            cu->stats.instructions += j->instructions;
        }
        if (set.cancelled && rc == ENG_OK) {
            uint32_t made = 0;
            for (uint32_t k = 0; k < njobs; k++)
                made += !jobs[k].skipped && !jobs[k].failed;
            rc = eng_fail(ctx, ENG_ECANCELLED,
                          "cancelled while compiling kernels (%u of %u compiled)", made, njobs);
        }
    }
    free(jobs);
    free(fresh);
    return rc;
}

/* ---- the batch's launches ----------------------------------------------------------------- */

static int add_launch(eng_cuda *cu, CUfunction fn, uint32_t grid, uint32_t block, uint32_t np,
                      uint64_t p0, uint64_t p1, uint64_t p2)
{
    if (grow((void **)&cu->launches, &cu->cap_launches, cu->nlaunches + 1, sizeof *cu->launches))
        return -1;
    cuda_launch *l = &cu->launches[cu->nlaunches++];
    *l = (cuda_launch){fn, grid ? grid : 1, block ? block : 1, np, {p0, p1, p2}};
    return 0;
}

static int add_edge(eng_cuda *cu, uint32_t from, uint32_t to)
{
    if (grow((void **)&cu->edges, &cu->cap_edges, cu->nedges * 2 + 2, sizeof *cu->edges))
        return -1;
    cu->edges[2 * cu->nedges] = from;
    cu->edges[2 * cu->nedges + 1] = to;
    cu->nedges++;
    return 0;
}

/* Bytes of a task's parameter block: plm_task_ctx, then rt[], rt_field[] (padded to 8), args. */
static size_t params_bytes(const sfg_exec_task *t)
{
    const passes_bound *b = t->ir.ir;
    size_t n = sizeof(uint64_t) * 3 + 8 * (size_t)b->nfields + ((4 * (size_t)b->nfields + 7) & ~(size_t)7);
    return n + ((t->args_size + 7) & ~(size_t)7);
}

/* Writes the block at `off` of the staging area; returns its device address. */
static uint64_t write_params(eng_context *ctx, const sfg_exec_task *t, size_t off)
{
    eng_cuda *cu = ctx->cuda;
    const passes_bound *b = t->ir.ir;
    uint8_t *h = cu->params_host + off;
    uint64_t d = (uint64_t)cu->params_dev + off;
    uint64_t rts = d + 24, rtf = rts + 8 * (uint64_t)b->nfields;
    uint64_t args = rtf + ((4 * (uint64_t)b->nfields + 7) & ~(uint64_t)7);
    uint64_t head[3] = {rts, rtf, args};
    memcpy(h, head, sizeof head);
    for (uint32_t s = 0; s < b->nfields; s++) {
        eng_field *f = ctx->fields[b->field_id[s]];
        uint64_t rt = (uint64_t)(uintptr_t)plm_tree_runtime(eng_field_tree(f));
        int32_t id = eng_field_tree_id(f);
        memcpy(h + (rts - d) + 8 * s, &rt, 8);
        memcpy(h + (rtf - d) + 4 * s, &id, 4);
    }
    if (t->args_size)
        memcpy(h + (args - d), t->args, t->args_size);
    return d;
}

/* A finished stage: its batch's GPU time counted, the stage free. */
static void harvest_stage(eng_cuda *cu, cuda_stage *st)
{
    float ms = 0;
    if (st->busy && cu->drv->cuEventElapsedTime(&ms, st->start, st->end) == CUDA_SUCCESS)
        cu->stats.kernel_s += 1e-3 * ms;
    st->busy = 0;
}

void eng_cuda_harvest(eng_cuda *cu)
{
    for (int i = 0; i < CUDA_STAGES; i++)
        harvest_stage(cu, &cu->stages[i]);
}

/* The oldest batch the device has not finished, for the watchdog: among the ring's stages
 * (every unfinished batch holds one), the busy one of the lowest number whose end event is not
 * reached. */
static const cuda_stage *oldest_unfinished(eng_cuda *cu)
{
    const cuda_stage *best = NULL;
    for (int i = 0; i < CUDA_STAGES; i++) {
        const cuda_stage *st = &cu->stages[i];
        if (st->busy && (!best || st->seq < best->seq) &&
            cu->drv->cuEventQuery(st->end) == CUDA_ERROR_NOT_READY)
            best = st;
    }
    return best;
}

CUresult eng_cuda_wait(eng_cuda *cu, CUevent ev)
{
    const cuda_driver *drv = cu->drv;
    if (cu->watch_s <= 0.0)
        return ev ? drv->cuEventSynchronize(ev) : drv->cuStreamSynchronize(cu->stream);
    /* A kernel that never ends (a deadlock on the device) held the host in a synchronizing
     * call without a word, until a time limit killed the process: say what it waits for.
     * Polls back off to a millisecond, so a long wait does not keep a core busy. */
    double t0 = now_s(), next = cu->watch_s;
    long nap_ns = 0;
    for (;;) {
        CUresult r = ev ? drv->cuEventQuery(ev) : drv->cuStreamQuery(cu->stream);
        if (r != CUDA_ERROR_NOT_READY)
            return r;
        double t = now_s() - t0;
        if (t >= next) {
            const cuda_stage *st = oldest_unfinished(cu);
            fprintf(stderr, "plume: cuda: waited %.1f s for the GPU; the oldest batch not finished: "
                            "%s\n", t, st && st->names[0] ? st->names : "(unknown)");
            next += cu->watch_s;
        }
        if (t < 1e-3) {
            sched_yield();
        } else {
            nap_ns = nap_ns ? (nap_ns * 2 > 1000000 ? 1000000 : nap_ns * 2) : 20000;
            struct timespec ts = {0, nap_ns};
            nanosleep(&ts, NULL);
        }
    }
}

/* The device buffer for the batch's task parameters, at least `bytes`. */
static int reserve_params(eng_context *ctx, size_t bytes)
{
    eng_cuda *cu = ctx->cuda;
    if (bytes <= cu->params_cap)
        return ENG_OK;
    size_t cap = cu->params_cap ? cu->params_cap : 64 << 10;
    while (cap < bytes)
        cap *= 2;
    char msg[256];
    /* Batches in flight read the old block, and cached graphs hold its addresses: all go. */
    if (cuda_check(cu->drv, eng_cuda_wait(cu, NULL), "running the batches", msg, sizeof msg))
        return eng_fail(ctx, ENG_EINTERNAL, "GPU: %s", msg);
    cu->in_flight = 0;
    eng_cuda_harvest(cu);
    for (uint32_t i = 0; i < cu->ngraphs; i++) {
        cu->drv->cuGraphExecDestroy(cu->graphs[i].exec);
        free(cu->graphs[i].launches);
        free(cu->graphs[i].edges);
    }
    cu->ngraphs = 0;
    if (cu->params_dev)
        cu->drv->cuMemFree(cu->params_dev);
    cu->params_dev = 0;
    cu->params_cap = 0;
    if (cuda_check(cu->drv, cu->drv->cuMemAlloc(&cu->params_dev, cap), "cuMemAlloc", msg,
                   sizeof msg))
        return eng_fail(ctx, ENG_ENOMEM, "task parameters on the GPU: %s", msg);
    cu->params_cap = cap;
    return ENG_OK;
}

/* The next stage of the ring, for a batch with `bytes` of parameters: once the batch that
 * used it last has finished (its copy read the buffer), its time is counted and the buffer is
 * the batch's (params_host). */
static cuda_stage *take_stage(eng_context *ctx, size_t bytes, int *rc)
{
    eng_cuda *cu = ctx->cuda;
    cuda_stage *st = &cu->stages[cu->next_stage++ % CUDA_STAGES];
    char msg[256];
    *rc = ENG_OK;
    if (st->busy) {
        if (cuda_check(cu->drv, eng_cuda_wait(cu, st->end), "waiting for a batch", msg,
                       sizeof msg)) {
            *rc = eng_fail(ctx, ENG_EINTERNAL, "GPU: %s", msg);
            return NULL;
        }
        harvest_stage(cu, st);
    }
    if (st->cap < bytes) {
        size_t cap = st->cap ? st->cap : 64 << 10;
        while (cap < bytes)
            cap *= 2;
        if (st->host)
            cu->drv->cuMemFreeHost(st->host);
        st->host = NULL;
        st->cap = 0;
        void *h = NULL;
        if (cuda_check(cu->drv, cu->drv->cuMemHostAlloc(&h, cap, 0), "cuMemHostAlloc", msg,
                       sizeof msg)) {
            *rc = eng_fail(ctx, ENG_ENOMEM, "task parameters on the host: %s", msg);
            return NULL;
        }
        st->host = h;
        st->cap = cap;
    }
    cu->params_host = st->host;
    return st;
}

int eng_cuda_drain(struct eng_context *ctx, int report)
{
    eng_cuda *cu = ctx->cuda;
    if (!cu)
        return ENG_OK;
    if (cu->in_flight || __atomic_exchange_n(&cu->memset_pending, 0, __ATOMIC_ACQ_REL)) {
        char msg[512];
        cu->in_flight = 0;
        if (cuda_check(cu->drv, cu->drv->cuCtxSetCurrent(cu->cc.ctx), "cuCtxSetCurrent", msg,
                       sizeof msg) ||
            cuda_check(cu->drv, eng_cuda_wait(cu, NULL), "running the batches", msg, sizeof msg))
            return report ? eng_fail(ctx, ENG_EINTERNAL, "GPU: %s", msg) : ENG_OK;
        eng_cuda_harvest(cu);
    }
    /* without report the errors stay raised, and unchecked, for the next drain */
    if (!report || !cu->unchecked)
        return ENG_OK;
    int rc = eng_check_runtime_errors(ctx, NULL);
    /* a check reports one field's error: the others wait for the next */
    cu->unchecked = rc != ENG_OK;
    return rc;
}

/* Cells of one leaf container of the task's iterated field. */
static uint32_t leaf_cells(const ir_task *low)
{
    const ir_field_info *fi = &low->fields[low->field];
    const ir_level *leaf = &fi->levels[fi->nlevels - 1];
    uint32_t n = 1;
    for (int a = 0; a < IR_MAX_DIM; a++)
        n <<= leaf->log2_size[a];
    return n;
}

/* A range_for's trip count when both bounds are constants, else -1. */
static int64_t const_trip(const ir_task *low)
{
    const ir_stmt *loop = low->body ? low->body->last : NULL;
    if (!loop || loop->nargs < 2 || !loop->arg[0] || !loop->arg[1] || loop->arg[0]->op != IR_CONST ||
        loop->arg[1]->op != IR_CONST)
        return -1;
    int64_t n = loop->arg[1]->ival - loop->arg[0]->ival;
    return n > 0 ? n : 0;
}

static int plan_task(eng_context *ctx, const sfg_exec_task *t, eng_code *code, size_t *param_off)
{
    eng_cuda *cu = ctx->cuda;
    uint32_t sms = (uint32_t)(cu->info.multiprocessors > 0 ? cu->info.multiprocessors : 1);
    int rc = ENG_OK;
    switch (t->meta->type) {
    case SFG_CLEAR_LIST:
    case SFG_LISTGEN:
    case SFG_GC: {
        plm_runtime *rt = NULL;
        int32_t sn = 0;
        uint32_t level = 0;
        if ((rc = eng_task_snode(ctx, t->meta->snode, &rt, &sn, &level)) != ENG_OK)
            return rc;
        uint64_t r = (uint64_t)(uintptr_t)rt;
        int bad = 0;
        if (t->meta->type == SFG_CLEAR_LIST) {
            bad = add_launch(cu, cu->k_clear_list, 1, 1, 2, r, (uint64_t)sn, 0);
        } else if (t->meta->type == SFG_LISTGEN) {
            if (level == 1)
                bad = add_launch(cu, cu->k_listgen_root, 1, 1, 1, r, 0, 0);
            /* a thread per cell, except for dynamic SNodes (reached through chunk chains) */
            const ir_field_info *fi = eng_field_ir_info(ctx->fields[t->meta->snode / 16]);
            int dynamic = fi && fi->levels[level].kind == IR_KIND_DYNAMIC;
            bad = bad || add_launch(cu, dynamic ? cu->k_listgen_items : cu->k_listgen_cells,
                                    sms * (dynamic ? 4 : 16), dynamic ? 128 : 256, 2, r,
                                    (uint64_t)sn, 0);
        } else {
            bad = add_launch(cu, cu->k_gc_begin, 1, 1, 2, r, (uint64_t)sn, 0) ||
                  add_launch(cu, cu->k_gc_items, sms * 4, 128, 2, r, (uint64_t)sn, 0) ||
                  add_launch(cu, cu->k_gc_end, 1, 1, 2, r, (uint64_t)sn, 0);
        }
        return bad ? eng_fail(ctx, ENG_ENOMEM, "out of host memory") : ENG_OK;
    }
    default:
        break;
    }
    const ir_task *low = code->lowered;
    uint64_t p = write_params(ctx, t, *param_off);
    *param_off += params_bytes(t);
    CUfunction fn = (CUfunction)code->fn[0];
    int bad = 0;
    if (low->kind == IR_TASK_SERIAL) {
        bad = add_launch(cu, fn, 1, 1, 1, p, 0, 0);
    } else if (low->kind == IR_TASK_RANGE_FOR) {
        int64_t trip = const_trip(low);
        uint32_t grid = sms * 8;
        if (trip >= 0) {
            int64_t g = (trip + CUDA_RANGE_BLOCK - 1) / CUDA_RANGE_BLOCK;
            grid = g < 1 ? 1 : g > (int64_t)sms * 32 ? sms * 32 : (uint32_t)g;
        }
        /* [lo, hi) is cut to the task's own bounds on the device (task_abi.h) */
        bad = add_launch(cu, fn, grid, CUDA_RANGE_BLOCK, 3, p, (uint64_t)INT64_MIN,
                         (uint64_t)INT64_MAX);
    } else if (low->kind == IR_TASK_STRUCT_FOR) {
        uint32_t cells = leaf_cells(low);
        uint32_t block = cells < 32 ? 32 : cells > 128 ? 128 : cells;
        if (low->level == 0) {
            const passes_bound *b = t->ir.ir;
            eng_field *f = ctx->fields[b->field_id[low->field]];
            bad = add_launch(cu, cu->k_listgen_root, 1, 1, 1,
                             (uint64_t)(uintptr_t)plm_tree_runtime(eng_field_tree(f)), 0, 0);
        }
        /* entries [0, INT32_MAX): the kernel stops at the list's size, read on the device */
        bad = bad || add_launch(cu, fn, sms * 8, block, 3, p, 0, (uint64_t)INT32_MAX);
    } else {
        return eng_fail(ctx, ENG_EINTERNAL, "task '%s' of kind %d has no code", t->name, low->kind);
    }
    return bad ? eng_fail(ctx, ENG_ENOMEM, "out of host memory") : ENG_OK;
}

/* ---- launching ------------------------------------------------------------------------------ */

static uint64_t shape_key(const eng_cuda *cu)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(v)                                                                                     \
    do {                                                                                           \
        h ^= (uint64_t)(v);                                                                        \
        h *= 1099511628211ull;                                                                     \
    } while (0)
    for (uint32_t i = 0; i < cu->nlaunches; i++) {
        const cuda_launch *l = &cu->launches[i];
        MIX((uintptr_t)l->fn);
        MIX(l->grid);
        MIX(l->block);
        for (uint32_t k = 0; k < l->nparams; k++)
            MIX(l->param[k]);
    }
    for (uint32_t e = 0; e < 2 * cu->nedges; e++)
        MIX(cu->edges[e]);
#undef MIX
    return h;
}

static int same_shape(const eng_cuda *cu, const cuda_graph_entry *g)
{
    return g->nlaunches == cu->nlaunches && g->nedges == cu->nedges &&
           memcmp(g->launches, cu->launches, cu->nlaunches * sizeof *cu->launches) == 0 &&
           (!cu->nedges || memcmp(g->edges, cu->edges, 2 * cu->nedges * sizeof *cu->edges) == 0);
}

static int launch_stream(eng_cuda *cu, char *msg, size_t n)
{
    for (uint32_t i = 0; i < cu->nlaunches; i++) {
        cuda_launch *l = &cu->launches[i];
        void *kp[3] = {&l->param[0], &l->param[1], &l->param[2]};
        if (cuda_check(cu->drv,
                       cu->drv->cuLaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, 0, cu->stream,
                                               kp, NULL),
                       "cuLaunchKernel", msg, n))
            return -1;
    }
    cu->stats.stream_batches++;
    return 0;
}

/* Builds and instantiates the graph of the current launches; the new entry is returned. */
static cuda_graph_entry *build_graph(eng_cuda *cu, uint64_t key, char *msg, size_t n)
{
    const cuda_driver *drv = cu->drv;
    uint32_t nl = cu->nlaunches, ne = cu->nedges;
    CUgraphNode *nodes = calloc(nl, sizeof *nodes);
    uint32_t *start = calloc(nl + 1, sizeof *start);
    CUgraphNode *deps = calloc(ne ? ne : 1, sizeof *deps);
    uint32_t *by_to = calloc(ne ? ne : 1, sizeof *by_to);
    CUgraph graph = NULL;
    cuda_graph_entry *out = NULL;
    if (!nodes || !start || !deps || !by_to) {
        snprintf(msg, n, "out of host memory");
        goto done;
    }
    /* edges grouped by their target (counting sort) */
    for (uint32_t e = 0; e < ne; e++)
        start[cu->edges[2 * e + 1] + 1]++;
    for (uint32_t i = 0; i < nl; i++)
        start[i + 1] += start[i];
    {
        uint32_t *fill = calloc(nl + 1, sizeof *fill);
        if (!fill) {
            snprintf(msg, n, "out of host memory");
            goto done;
        }
        memcpy(fill, start, (nl + 1) * sizeof *fill);
        for (uint32_t e = 0; e < ne; e++)
            by_to[fill[cu->edges[2 * e + 1]]++] = cu->edges[2 * e];
        free(fill);
    }
    if (cuda_check(drv, drv->cuGraphCreate(&graph, 0), "cuGraphCreate", msg, n))
        goto done;
    for (uint32_t i = 0; i < nl; i++) {
        cuda_launch *l = &cu->launches[i];
        uint32_t nd = 0;
        for (uint32_t k = start[i]; k < start[i + 1]; k++)
            deps[nd++] = nodes[by_to[k]];
        void *kp[3] = {&l->param[0], &l->param[1], &l->param[2]};
        CUDA_KERNEL_NODE_PARAMS_v1 p = {l->fn, l->grid, 1, 1, l->block, 1, 1, 0, kp, NULL};
        if (cuda_check(drv, drv->cuGraphAddKernelNode(&nodes[i], graph, nd ? deps : NULL, nd, &p),
                       "cuGraphAddKernelNode", msg, n))
            goto done;
    }
    CUgraphExec exec = NULL;
    if (cuda_check(drv, drv->cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate", msg, n))
        goto done;
    /* a full cache gives up its least recently used graph */
    uint32_t slot = cu->ngraphs;
    if (slot == CUDA_GRAPH_CACHE) {
        slot = 0;
        for (uint32_t i = 1; i < cu->ngraphs; i++)
            if (cu->graphs[i].last_use < cu->graphs[slot].last_use)
                slot = i;
        drv->cuGraphExecDestroy(cu->graphs[slot].exec);
        free(cu->graphs[slot].launches);
        free(cu->graphs[slot].edges);
    } else {
        cu->ngraphs++;
    }
    cuda_graph_entry *g = &cu->graphs[slot];
    memset(g, 0, sizeof *g);
    g->key = key;
    g->exec = exec;
    g->nlaunches = nl;
    g->nedges = ne;
    g->launches = malloc(nl * sizeof *g->launches);
    g->edges = malloc((2 * ne + 1) * sizeof *g->edges);
    if (!g->launches || !g->edges) {
        /* usable now, never found again */
        free(g->launches);
        free(g->edges);
        g->launches = NULL;
        g->edges = NULL;
        g->nlaunches = UINT32_MAX;
    } else {
        memcpy(g->launches, cu->launches, nl * sizeof *g->launches);
        if (ne) /* a batch of independent tasks has no edges (and no edge array) */
            memcpy(g->edges, cu->edges, 2 * ne * sizeof *g->edges);
    }
    cu->stats.graphs_built++;
    out = g;
done:
    if (graph)
        drv->cuGraphDestroy(graph);
    free(nodes);
    free(start);
    free(deps);
    free(by_to);
    return out;
}

static int launch_graph(eng_cuda *cu, char *msg, size_t n)
{
    uint64_t key = shape_key(cu);
    cuda_graph_entry *g = NULL;
    for (uint32_t i = 0; i < cu->ngraphs && !g; i++)
        if (cu->graphs[i].key == key && same_shape(cu, &cu->graphs[i]))
            g = &cu->graphs[i];
    if (!g && !(g = build_graph(cu, key, msg, n)))
        return -1;
    g->last_use = ++cu->use_clock;
    if (cuda_check(cu->drv, cu->drv->cuGraphLaunch(g->exec, cu->stream), "cuGraphLaunch", msg, n))
        return -1;
    cu->stats.graph_launches++;
    return 0;
}

static const char *task_names(const sfg_batch *batch, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < batch->n_tasks && at + 40 < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "",
                               batch->tasks[i].name ? batch->tasks[i].name : "?");
    if (batch->n_tasks && at + 40 >= n)
        snprintf(buf + at, n - at, ", ...");
    return buf;
}

int eng_exec_resolved_cuda(struct eng_context *ctx, const sfg_batch *batch,
                           struct eng_code *const *codes, const unsigned char *fresh)
{
    eng_cuda *cu = ctx->cuda;
    uint32_t n = batch->n_tasks;
    char msg[512], names[256];
    /* the launch thread, too, must have the device's context current */
    if (cuda_check(cu->drv, cu->drv->cuCtxSetCurrent(cu->cc.ctx), "cuCtxSetCurrent", msg,
                   sizeof msg) != 0)
        return eng_fail(ctx, ENG_EINTERNAL, "%s", msg);
    int rc = eng_compile_cuda(ctx, batch, codes, fresh);
    size_t pbytes = 0;
    for (uint32_t i = 0; i < n && rc == ENG_OK; i++)
        if (codes[i])
            pbytes += params_bytes(&batch->tasks[i]);
    if (rc == ENG_OK)
        rc = reserve_params(ctx, pbytes);
    cuda_stage *stage = rc == ENG_OK ? take_stage(ctx, pbytes, &rc) : NULL;
    if (rc == ENG_OK &&
        (grow((void **)&cu->task_first, &cu->cap_tasks, n, sizeof(uint32_t)) ||
         (cu->task_last = realloc(cu->task_last, cu->cap_tasks * sizeof(uint32_t))) == NULL))
        rc = eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    cu->nlaunches = 0;
    cu->nedges = 0;
    size_t off = 0;
    for (uint32_t i = 0; i < n && rc == ENG_OK; i++) {
        if (codes[i] && !codes[i]->fn[0]) {
            rc = eng_fail(ctx, ENG_EINTERNAL, "task '%s' has no compiled code", batch->tasks[i].name);
            break;
        }
        cu->task_first[i] = cu->nlaunches;
        rc = plan_task(ctx, &batch->tasks[i], codes[i], &off);
        cu->task_last[i] = cu->nlaunches - 1;
        /* a task's own launches run one after the other */
        for (uint32_t k = cu->task_first[i]; rc == ENG_OK && k < cu->task_last[i]; k++)
            if (add_edge(cu, k, k + 1))
                rc = eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    for (uint32_t e = 0; e < batch->n_edges && rc == ENG_OK; e++)
        if (add_edge(cu, cu->task_last[batch->edges[e].from], cu->task_first[batch->edges[e].to]))
            rc = eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    if (rc != ENG_OK)
        return rc;

    stage->seq = cu->next_stage;
    if (cu->watch_s > 0.0)
        task_names(batch, stage->names, sizeof stage->names);
    double t0 = now_s();
    const cuda_driver *drv = cu->drv;
    /* from here work may be queued, even if a call below fails: the stage is waited for
     * before reuse and the stream before the host touches the trees */
    stage->busy = 1;
    cu->in_flight = 1;
    cu->unchecked = 1;
    int bad = (off && cuda_check(drv, drv->cuMemcpyHtoDAsync(cu->params_dev, stage->host, off,
                                                              cu->stream),
                                 "cuMemcpyHtoDAsync", msg, sizeof msg)) ||
              cuda_check(drv, drv->cuEventRecord(stage->start, cu->stream), "cuEventRecord", msg,
                         sizeof msg);
    if (!bad)
        bad = cu->graphs_on && cu->nlaunches >= 2 ? launch_graph(cu, msg, sizeof msg)
                                                   : launch_stream(cu, msg, sizeof msg);
    bad = bad || cuda_check(drv, drv->cuEventRecord(stage->end, cu->stream), "cuEventRecord", msg,
                            sizeof msg);
    if (!bad)
        cu->stats.kernels += cu->nlaunches;
    /* Where the host needs the results it waits: a sync, or every batch with async off. The
     * rest (eager launches too) stay queued on the stream, as a GPU program's kernels do, and
     * the host waits where it next touches the device's memory (eng_cuda_drain). */
    int wait = !cu->async || batch->sync;
    if (!bad && wait)
        bad = cuda_check(drv, eng_cuda_wait(cu, NULL), "running the batch", msg, sizeof msg);
    ctx->stats.backend_s += now_s() - t0;
    if (bad)
        return eng_fail(ctx, ENG_EINTERNAL, "GPU batch of %u tasks (%s): %s", n,
                        task_names(batch, names, sizeof names), msg);
    if (!wait)
        return ENG_OK;
    cu->in_flight = 0;
    eng_cuda_harvest(cu);
    return eng_cuda_drain(ctx, 1); /* the errors alone */
}
