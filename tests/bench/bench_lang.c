/* plume-bench lang: the speed of code generated from IR tasks, against plain C in the same run.
 *   saxpy      y[i] = a*x[i] + y[i] over 64M f32 (layout dense(i,4096).dense(i,16384)) as a
 *              range_for task, 1 and 2 threads, vs a plain C triad over malloc'd arrays on the
 *              same pool: GB/s (12 bytes per element) and the ratio C time / task time
 *              (issue 4: >= 0.7 on 2 threads)
 *   laplacian  out[I] = sum of the 6 neighbours of u[I] - 6 u[I], a struct_for over the active
 *              voxels of u in the default layout, 256^3 domain, 30% of the 8^3 blocks active,
 *              vs a hand-written C loop over the same blocks (a table of block pointers for
 *              the neighbours): voxels/s and the ratio (goal: >= 1/1.5)
 *   compile    20 distinct small tasks compiled cold (a fresh JIT, one compile thread):
 *              median and total ms per task (goal: median <= 40 ms)
 * Every timing is the best of N runs (N = 5, 2 with --quick), task and C runs alternating, so
 * that colleagues sharing the machine disturb both alike. Results are checked against C.
 *
 * The tasks are built by hand with the IR builder (engine/ir/ir.h) in lowered form (root ->
 * child/index/lookup per level -> field_ptr), the way access lowering emits them.
 * TODO: once eng_program_compile / eng_launch (engine/kernel.h) run kernels end to end, build
 * these from kernel source through engine/kernel.h instead, so the bench also covers the front
 * end and the executor.
 *
 * Needs plume_codegen, plume_ir, plume_backend and plume_sparse_bitcode: they come with
 * plume_engine when it is built with kernels (PLUME_HAVE_KERNELS), or the test-only driver in
 * tests/codegen defines PLUME_BENCH_LANG_STANDALONE. Otherwise the suite says it is missing. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if defined(PLUME_HAVE_KERNELS) || defined(PLUME_BENCH_LANG_STANDALONE)

#include "engine/backend/cpu_pool.h"
#include "engine/codegen/jit.h"
#include "engine/codegen/task.h"
#include "engine/codegen/task_abi.h"
#include "engine/ir/ir.h"
#include "sparse/bitcode.h"
#include "sparse/tree.h"

/* ---- IR helpers ---- */

/* The descriptor of field `name` of a tree: its SNode chain from the root to the leaf. */
static int field_info(plm_tree *tree, const char *name, int dim, ir_field_info *fi)
{
    const plm_layout *L = plm_tree_layout(tree);
    int f = plm_layout_field(L, name);
    if (f < 0)
        return -1;
    memset(fi, 0, sizeof *fi);
    snprintf(fi->name, sizeof fi->name, "%s", name);
    fi->elem = IR_F32;
    fi->components = (uint8_t)L->cfg.fields[f].components;
    fi->dim = (uint8_t)dim;
    int chain[IR_MAX_LEVELS], n = 0;
    for (int s = L->cfg.fields[f].snode; s > 0 && n < IR_MAX_LEVELS - 1;
         s = L->cfg.snodes[s].parent)
        chain[n++] = s;
    fi->nlevels = (uint8_t)(n + 1);
    fi->levels[0].kind = IR_KIND_ROOT;
    for (int l = 1; l <= n; l++) {
        const plm_rt_snode *s = &L->cfg.snodes[chain[n - l]];
        fi->levels[l].kind = (uint8_t)s->kind;
        for (int a = 0; a < IR_MAX_DIM; a++)
            fi->levels[l].log2_size[a] = (uint8_t)s->axis_bits[a];
        fi->levels[l].rt_snode = s->id;
    }
    return 0;
}

/* field[idx] as access lowering writes it. */
static ir_stmt *lowered_ptr(ir_builder *b, uint32_t slot, ir_stmt *const *idx, int activate)
{
    const ir_field_info *fi = &b->task->fields[slot];
    ir_stmt *cell = ir_sn_root(b, slot);
    int leaf = fi->nlevels - 1;
    for (int l = 1; l < leaf; l++) {
        ir_stmt *c = ir_sn_child(b, slot, (uint32_t)l, cell);
        ir_stmt *i = ir_sn_index(b, slot, (uint32_t)l, idx);
        cell = ir_sn_lookup(b, slot, (uint32_t)l, activate, c, i);
    }
    ir_stmt *c = ir_sn_child(b, slot, (uint32_t)leaf, cell);
    ir_stmt *i = ir_sn_index(b, slot, (uint32_t)leaf, idx);
    return ir_sn_field_ptr(b, slot, 0, activate, c, i);
}

static jit *make_jit(void)
{
    jit_config cfg = jit_config_default();
    cfg.compile_threads = 1;
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    jit *j = NULL;
    char err[1024];
    if (jit_create(&cfg, &j, err, sizeof err) != 0)
        fprintf(stderr, "bench lang: jit_create: %s\n", err);
    return j;
}

static int compile(jit *j, ir_task *t, void *addrs[2], jit_result *res)
{
    char err[1024];
    jit_request req;
    if (ir_verify(t, err, sizeof err) != 0 ||
        cg_task_request(t, addrs, res, &req, err, sizeof err) != 0 ||
        jit_compile(j, &req, err, sizeof err) != 0) {
        fprintf(stderr, "bench lang: task '%s': %s\n", t->name, err);
        return -1;
    }
    return 0;
}

static plm_tree *make_tree(const char *layout, uint64_t budget)
{
    plm_tree *t = NULL;
    char err[256];
    if (plm_tree_create(layout, budget, &t, err, sizeof err) != 0)
        fprintf(stderr, "bench lang: %s: %s\n", layout, err);
    return t;
}

static uint32_t f32_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

/* ---- running on the pool ---- */

typedef struct job {
    plm_task_range_fn rfn;
    plm_task_struct_fn sfn;
    const plm_task_ctx *ctx;
    int64_t begin;
    /* plain C triad */
    const float *cx;
    float *cy;
    float a;
} job;

static void range_chunk(void *p, int64_t lo, int64_t hi, int worker)
{
    (void)worker;
    job *j = p;
    if (j->rfn)
        j->rfn(j->ctx, j->begin + lo, j->begin + hi);
    else
        j->sfn(j->ctx, (int32_t)lo, (int32_t)hi);
}

/* The plain C triad: what a user would write, restrict-qualified like Fortran arrays. */
static void triad(float *restrict y, const float *restrict x, float a, int64_t lo, int64_t hi)
{
    for (int64_t i = lo; i < hi; i++)
        y[i] = a * x[i] + y[i];
}

static void triad_chunk(void *p, int64_t lo, int64_t hi, int worker)
{
    (void)worker;
    job *j = p;
    triad(j->cy, j->cx, j->a, lo, hi);
}

/* Chunks like the executor: about 8 per worker (grain 0). */
static int pool_run(cpu_pool *pool, int64_t n, cpu_range_fn fn, job *j)
{
    char err[256];
    if (cpu_pool_parallel_for(pool, n, 0, fn, j, err, sizeof err) != 0) {
        fprintf(stderr, "bench lang: pool: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- (a) saxpy ---- */

/* A range_for over [0, n) of slot 0 (1-D): x[i] = (i & 1023) * 0.001 - 0.5 when which = 0,
 * else x[i] = 1 - (i & 511) * 0.002: the inputs, written by tasks (64M tree writes from the
 * host would take longer than the benchmark). */
static ir_task *fill_task(const ir_field_info *fi, int which, int64_t n)
{
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, which ? "fill1" : "fill0", fi, 1, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, (int32_t)n), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *m = ir_cast(&b, IR_F32, ir_binary(&b, IR_AND, i, ir_const_i32(&b, which ? 511 : 1023)));
    ir_stmt *v = which ? ir_binary(&b, IR_SUB, ir_const_float(&b, IR_F32, 1.0),
                                   ir_binary(&b, IR_MUL, m, ir_const_float(&b, IR_F32, 0.002)))
                       : ir_binary(&b, IR_SUB,
                                   ir_binary(&b, IR_MUL, m, ir_const_float(&b, IR_F32, 0.001)),
                                   ir_const_float(&b, IR_F32, 0.5));
    ir_global_store(&b, lowered_ptr(&b, 0, &i, 1), v);
    return t;
}

static float fill_value(int which, int64_t i)
{
    /* the same float operations as fill_task, in the same order */
    return which ? 1.0f - (float)(i & 511) * 0.002f : (float)(i & 1023) * 0.001f - 0.5f;
}

/* y[i] = a * x[i] + y[i] for i in [0, n): slot 0 = x, slot 1 = y, argument 0 = a. */
static ir_task *saxpy_task(const ir_field_info fi[2], int64_t n)
{
    ir_type args[1] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "saxpy", fi, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *a = ir_arg(&b, IR_F32, 0);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, (int32_t)n), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *px = lowered_ptr(&b, 0, &i, 0);
    ir_stmt *py = lowered_ptr(&b, 1, &i, 1);
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_binary(&b, IR_MUL, a, ir_global_load(&b, px)),
                           ir_global_load(&b, py));
    ir_global_store(&b, py, v);
    return t;
}

static int bench_saxpy(bench_ctx *ctx, jit *J, int reps)
{
    int64_t n = ctx->quick ? (int64_t)1 << 20 : (int64_t)1 << 26;
    const char *lx = ctx->quick ? "dense(i,64).dense(i,16384).place(x)"
                                : "dense(i,4096).dense(i,16384).place(x)";
    const char *ly = ctx->quick ? "dense(i,64).dense(i,16384).place(y)"
                                : "dense(i,4096).dense(i,16384).place(y)";
    uint64_t budget = (uint64_t)n * 4 + (64u << 20);
    plm_tree *tx = make_tree(lx, budget), *ty = make_tree(ly, budget);
    float *cx = malloc((size_t)n * sizeof *cx), *cy = malloc((size_t)n * sizeof *cy);
    int rc = 1;
    ir_task *fx = NULL, *fy = NULL, *ts = NULL;
    cpu_pool *pool = NULL;
    if (!tx || !ty || !cx || !cy)
        goto out;
    ir_field_info fi[2];
    if (field_info(tx, "x", 1, &fi[0]) != 0 || field_info(ty, "y", 1, &fi[1]) != 0)
        goto out;
    fx = fill_task(&fi[0], 0, n);
    fy = fill_task(&fi[1], 1, n);
    ts = saxpy_task(fi, n);
    void *afx[2], *afy[2], *as[2];
    jit_result res;
    if (compile(J, fx, afx, NULL) != 0 || compile(J, fy, afy, NULL) != 0 ||
        compile(J, ts, as, &res) != 0)
        goto out;
    char err[256];
    if (cpu_pool_create(2, &pool, err, sizeof err) != 0) {
        fprintf(stderr, "bench lang: %s\n", err);
        goto out;
    }
    plm_runtime *rts[2] = {plm_tree_runtime(tx), plm_tree_runtime(ty)};
    int32_t fids[2] = {0, 0};
    float a = 1.5f;
    uint64_t av[1] = {f32_bits(a)};
    plm_task_ctx c0 = {&rts[0], fids, NULL}, c1 = {&rts[1], fids, NULL}, cs = {rts, fids, av};
    job j0 = {.rfn = (plm_task_range_fn)afx[0], .ctx = &c0};
    job j1 = {.rfn = (plm_task_range_fn)afy[0], .ctx = &c1};
    if (pool_run(pool, n, range_chunk, &j0) || pool_run(pool, n, range_chunk, &j1))
        goto out;
    for (int64_t i = 0; i < n; i++) {
        cx[i] = fill_value(0, i);
        cy[i] = fill_value(1, i);
    }
    printf("%-22s %8s %10s %10s %10s %10s %7s\n", "case", "threads", "task ms", "task GB/s",
           "C ms", "C GB/s", "ratio");
    int runs = 0;
    for (int threads = 1; threads <= 2; threads++) {
        cpu_pool *p = NULL;
        if (cpu_pool_create(threads, &p, err, sizeof err) != 0) {
            fprintf(stderr, "bench lang: %s\n", err);
            goto out;
        }
        double best_t = 1e30, best_c = 1e30;
        for (int r = 0; r < reps; r++) {
            job js = {.rfn = (plm_task_range_fn)as[0], .ctx = &cs};
            job jc = {.cx = cx, .cy = cy, .a = a};
            double t0 = bench_now();
            int e = pool_run(p, n, range_chunk, &js);
            double t1 = bench_now();
            e |= pool_run(p, n, triad_chunk, &jc);
            double t2 = bench_now();
            if (e) {
                cpu_pool_destroy(p);
                goto out;
            }
            runs++;
            best_t = fmin(best_t, t1 - t0);
            best_c = fmin(best_c, t2 - t1);
        }
        cpu_pool_destroy(p);
        double bytes = 12.0 * (double)n;
        double ratio = best_c / best_t;
        char name[32];
        snprintf(name, sizeof name, "saxpy_%dt", threads);
        printf("%-22s %8d %10.2f %10.2f %10.2f %10.2f %7.3f%s", name, threads, best_t * 1e3,
               bytes / best_t * 1e-9, best_c * 1e3, bytes / best_c * 1e-9, ratio,
               threads == 2 ? "\n\n" : "\n");
        json_array_append_new(
            ctx->cases,
            json_pack("{s:s, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:i, s:I, s:f, s:i}",
                      "name", name, "threads", threads, "elements", (json_int_t)n, "wall_s",
                      best_t, "backend_s", best_t, "c_s", best_c, "gb_per_s",
                      bytes / best_t * 1e-9, "c_gb_per_s", bytes / best_c * 1e-9, "ratio", ratio,
                      "tasks_launched", (json_int_t)reps, "tasks_compiled", 3, "instructions",
                      (json_int_t)res.instructions, "compile_s", res.compile_s, "best_of",
                      reps));
    }
    /* both sides ran runs times from the same inputs: y = x * a * runs + y0 step by step */
    int bad = 0;
    for (int64_t i = 0; i < n; i += n / 4096 + 7) {
        float got = 0;
        plm_tree_read(ty, 0, (int32_t)i, 0, 0, &got);
        if (got != cy[i] && bad++ < 3)
            fprintf(stderr, "bench lang: saxpy y[%lld] = %g, C %g\n", (long long)i, got, cy[i]);
    }
    rc = bad ? 1 : 0;
out:
    cpu_pool_destroy(pool);
    ir_task_free(fx);
    ir_task_free(fy);
    ir_task_free(ts);
    plm_tree_destroy(tx);
    plm_tree_destroy(ty);
    free(cx);
    free(cy);
    return rc;
}

/* ---- (b) laplacian ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* out[I] = u[I+x] + u[I-x] + u[I+y] + u[I-y] + u[I+z] + u[I-z] - 6 u[I] over the active voxels
 * of u (slot 0); out is slot 1. Summed in that order (the C loop uses the same). */
static ir_task *laplacian_task(const ir_field_info fi[2])
{
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "laplacian", fi, 2, NULL, 0);
    t->field = 0;
    t->level = (uint8_t)(fi[0].nlevels - 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *sum = NULL;
    for (int k = 0; k < 6; k++) {
        ir_stmt *J[3] = {I[0], I[1], I[2]};
        J[k / 2] = ir_binary(&b, IR_ADD, I[k / 2], ir_const_i32(&b, k % 2 ? -1 : 1));
        ir_stmt *v = ir_global_load(&b, lowered_ptr(&b, 0, J, 0));
        sum = sum ? ir_binary(&b, IR_ADD, sum, v) : v;
    }
    ir_stmt *c = ir_global_load(&b, lowered_ptr(&b, 0, I, 0));
    sum = ir_binary(&b, IR_SUB, sum, ir_binary(&b, IR_MUL, ir_const_float(&b, IR_F32, 6.0), c));
    ir_global_store(&b, lowered_ptr(&b, 1, I, 1), sum);
    return t;
}

typedef struct lap_c {
    int nb;              /* blocks per axis of the domain */
    float **table;       /* (nb+2)^3 block pointers of u, NULL border and inactive */
    int32_t (*blk)[3];   /* active blocks (block coordinates) */
    float **out;         /* per active block: 512 floats */
    int64_t nblocks;
} lap_c;

static float *lap_at(const lap_c *L, int bx, int by, int bz)
{
    int m = L->nb + 2;
    return L->table[((int64_t)(bx + 1) * m + (by + 1)) * m + (bz + 1)];
}

/* The hand-written loop: per block, the 6 neighbour blocks once, then per voxel the
 * neighbour from this block or the one next to it (background 0 when inactive). */
static void lap_chunk(void *p, int64_t lo, int64_t hi, int worker)
{
    (void)worker;
    const lap_c *L = p;
    for (int64_t k = lo; k < hi; k++) {
        int bx = L->blk[k][0], by = L->blk[k][1], bz = L->blk[k][2];
        const float *c = lap_at(L, bx, by, bz);
        const float *xm = lap_at(L, bx - 1, by, bz), *xp = lap_at(L, bx + 1, by, bz);
        const float *ym = lap_at(L, bx, by - 1, bz), *yp = lap_at(L, bx, by + 1, bz);
        const float *zm = lap_at(L, bx, by, bz - 1), *zp = lap_at(L, bx, by, bz + 1);
        float *o = L->out[k];
        for (int x = 0; x < 8; x++)
            for (int y = 0; y < 8; y++)
                for (int z = 0; z < 8; z++) {
                    int q = x * 64 + y * 8 + z;
                    float vxp = x < 7 ? c[q + 64] : xp ? xp[q - 448] : 0.0f;
                    float vxm = x > 0 ? c[q - 64] : xm ? xm[q + 448] : 0.0f;
                    float vyp = y < 7 ? c[q + 8] : yp ? yp[q - 56] : 0.0f;
                    float vym = y > 0 ? c[q - 8] : ym ? ym[q + 56] : 0.0f;
                    float vzp = z < 7 ? c[q + 1] : zp ? zp[q - 7] : 0.0f;
                    float vzm = z > 0 ? c[q - 1] : zm ? zm[q + 7] : 0.0f;
                    o[q] = vxp + vxm + vyp + vym + vzp + vzm - 6.0f * c[q];
                }
    }
}

static int bench_laplacian(bench_ctx *ctx, jit *J, int reps)
{
    int nb = ctx->quick ? 8 : 32; /* 64^3 or 256^3 voxels */
    uint64_t budget = (uint64_t)1 << 30;
    plm_tree *tu = make_tree(PLM_LAYOUT_DEFAULT ".place(u)", budget);
    plm_tree *to = make_tree(PLM_LAYOUT_DEFAULT ".place(out)", budget);
    int64_t nall = (int64_t)nb * nb * nb;
    lap_c L = {.nb = nb};
    L.table = calloc((size_t)(nb + 2) * (nb + 2) * (nb + 2), sizeof *L.table);
    L.blk = malloc((size_t)nall * sizeof *L.blk);
    L.out = malloc((size_t)nall * sizeof *L.out);
    float *cout = malloc((size_t)nall * 512 * sizeof *cout);
    ir_task *t = NULL;
    int rc = 1;
    cpu_pool *pool = NULL;
    if (!tu || !to || !L.table || !L.blk || !L.out || !cout)
        goto out;
    /* 30% of the blocks, chosen by a fixed seed; values from a hash of the voxel */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int bx = 0; bx < nb; bx++)
        for (int by = 0; by < nb; by++)
            for (int bz = 0; bz < nb; bz++) {
                if (rng_next(&s) % 1000 >= 300)
                    continue;
                int32_t origin[3];
                float *d = plm_tree_block(tu, 0, bx * 8, by * 8, bz * 8, 1, origin);
                if (!d)
                    goto out;
                for (int q = 0; q < 512; q++)
                    d[q] = (float)(rng_next(&s) % 2001) * 0.001f - 1.0f;
                int m = nb + 2;
                L.table[((int64_t)(bx + 1) * m + (by + 1)) * m + (bz + 1)] = d;
                L.out[L.nblocks] = cout + L.nblocks * 512;
                memcpy(L.blk[L.nblocks++], (int32_t[3]){bx, by, bz}, sizeof L.blk[0]);
            }
    ir_field_info fi[2];
    if (field_info(tu, "u", 3, &fi[0]) != 0 || field_info(to, "out", 3, &fi[1]) != 0)
        goto out;
    t = laplacian_task(fi);
    void *addrs[2];
    jit_result res;
    if (compile(J, t, addrs, &res) != 0)
        goto out;
    int list_snode = fi[0].levels[t->level].rt_snode;
    double tl0 = bench_now();
    int64_t nlist = plm_tree_listgen(tu, list_snode, 2);
    double listgen_s = bench_now() - tl0;
    if (nlist != L.nblocks) {
        fprintf(stderr, "bench lang: laplacian: listgen found %lld blocks, %lld written\n",
                (long long)nlist, (long long)L.nblocks);
        goto out;
    }
    plm_runtime *rts[2] = {plm_tree_runtime(tu), plm_tree_runtime(to)};
    int32_t fids[2] = {0, 0};
    plm_task_ctx tc = {rts, fids, NULL};
    char err[256];
    printf("%-22s %8s %10s %12s %10s %12s %7s\n", "case", "threads", "task ms", "task vox/s",
           "C ms", "C vox/s", "ratio");
    double voxels = (double)L.nblocks * 512;
    for (int threads = 1; threads <= 2; threads++) {
        if (cpu_pool_create(threads, &pool, err, sizeof err) != 0) {
            fprintf(stderr, "bench lang: %s\n", err);
            goto out;
        }
        double best_t = 1e30, best_c = 1e30;
        for (int r = 0; r < reps; r++) {
            job js = {.sfn = (plm_task_struct_fn)addrs[0], .ctx = &tc};
            double t0 = bench_now();
            int e = pool_run(pool, L.nblocks, range_chunk, &js);
            double t1 = bench_now();
            char cerr[256];
            e |= cpu_pool_parallel_for(pool, L.nblocks, 0, lap_chunk, &L, cerr, sizeof cerr);
            double t2 = bench_now();
            if (e)
                goto out;
            best_t = fmin(best_t, t1 - t0);
            best_c = fmin(best_c, t2 - t1);
        }
        cpu_pool_destroy(pool);
        pool = NULL;
        double ratio = best_c / best_t;
        char name[32];
        snprintf(name, sizeof name, "laplacian_%dt", threads);
        printf("%-22s %8d %10.2f %12.3g %10.2f %12.3g %7.3f%s", name, threads, best_t * 1e3,
               voxels / best_t, best_c * 1e3, voxels / best_c, ratio,
               threads == 2 ? "\n\n" : "\n");
        json_array_append_new(
            ctx->cases,
            json_pack("{s:s, s:i, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:i, s:I, "
                      "s:i, s:f, s:i}",
                      "name", name, "threads", threads, "blocks", (json_int_t)L.nblocks,
                      "voxels", (json_int_t)voxels, "wall_s", best_t, "backend_s", best_t,
                      "c_s", best_c, "voxels_per_s", voxels / best_t, "c_voxels_per_s",
                      voxels / best_c, "ratio", ratio, "listgen_s", listgen_s, "tasks_launched",
                      (json_int_t)reps, "listgens", 1, "instructions",
                      (json_int_t)res.instructions, "tasks_compiled", 1, "compile_s",
                      res.compile_s, "best_of", reps));
    }
    /* the task's out against the C loop's, voxel by voxel */
    int bad = 0;
    for (int64_t k = 0; k < L.nblocks; k++)
        for (int q = 0; q < 512; q++) {
            int32_t x = L.blk[k][0] * 8 + q / 64, y = L.blk[k][1] * 8 + q / 8 % 8,
                    z = L.blk[k][2] * 8 + q % 8;
            float got = 0, want = L.out[k][q];
            plm_tree_read(to, 0, x, y, z, &got);
            if (!(fabsf(got - want) <= 1e-5f * (1 + fabsf(want))) && bad++ < 3)
                fprintf(stderr, "bench lang: laplacian at %d %d %d: %g, C %g\n", x, y, z, got,
                        want);
        }
    rc = bad ? 1 : 0;
out:
    cpu_pool_destroy(pool);
    ir_task_free(t);
    plm_tree_destroy(tu);
    plm_tree_destroy(to);
    free(L.table);
    free(L.blk);
    free(L.out);
    free(cout);
    return rc;
}

/* ---- (c) cold compile time ---- */

/* Task k of 20: kinds, ops and constants vary so every one has its own IR hash. */
static ir_task *small_task(int k, const ir_field_info *lin, const ir_field_info *vol)
{
    static const int ops[] = {IR_ADD, IR_SUB, IR_MUL, IR_MIN, IR_MAX};
    char name[32];
    snprintf(name, sizeof name, "small%d", k);
    ir_type args[1] = {IR_F32};
    ir_builder b;
    ir_task *t;
    if (k % 4 == 3) { /* struct_for over a sparse volume */
        t = ir_task_new(IR_TASK_STRUCT_FOR, name, vol, 1, args, 1);
        t->field = 0;
        t->level = (uint8_t)(vol->nlevels - 2);
        ir_builder_init(&b, t);
        ir_stmt *s = ir_arg(&b, IR_F32, 0);
        ir_stmt *loop = ir_struct_for(&b, 0);
        ir_builder_at_end(&b, loop->body);
        ir_stmt *I[3];
        for (int a = 0; a < 3; a++)
            I[a] = ir_loop_index(&b, loop, (uint32_t)a);
        ir_stmt *p = lowered_ptr(&b, 0, I, 1);
        ir_stmt *v = ir_binary(&b, ops[k % 5], ir_global_load(&b, p),
                               ir_binary(&b, IR_MUL, s, ir_const_float(&b, IR_F32, k + 1)));
        ir_global_store(&b, p, v);
        return t;
    }
    t = ir_task_new(IR_TASK_RANGE_FOR, name, lin, 2, args, 1);
    ir_builder_init(&b, t);
    ir_stmt *s = ir_arg(&b, IR_F32, 0);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 1000 + k), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *v = ir_global_load(&b, lowered_ptr(&b, 0, &i, 0));
    if (k % 2)
        v = ir_unary(&b, IR_SQRT, ir_unary(&b, IR_ABS, v));
    v = ir_binary(&b, ops[k % 5], v, ir_binary(&b, IR_ADD, s, ir_const_float(&b, IR_F32, k)));
    ir_global_store(&b, lowered_ptr(&b, 1, &i, 1), v);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_compile(bench_ctx *ctx)
{
    enum { NTASKS = 20 };
    plm_tree *tl = make_tree("dense(i,64).dense(i,256).place(x, y)", 16u << 20);
    plm_tree *tv = make_tree(PLM_LAYOUT_DEFAULT ".place(d)", 16u << 20);
    int rc = 1;
    if (!tl || !tv)
        goto out;
    ir_field_info lin[2], vol;
    if (field_info(tl, "x", 1, &lin[0]) != 0 || field_info(tl, "y", 1, &lin[1]) != 0 ||
        field_info(tv, "d", 3, &vol) != 0)
        goto out;
    double t0 = bench_now();
    jit *J = make_jit();
    double create_s = bench_now() - t0;
    if (!J)
        goto out;
    double ms[NTASKS], total = 0;
    uint64_t instr = 0;
    int ok = 1;
    for (int k = 0; k < NTASKS && ok; k++) {
        ir_task *t = small_task(k, lin, &vol);
        void *addrs[2];
        jit_result res = {0};
        double a = bench_now();
        ok = t && compile(J, t, addrs, &res) == 0 && !res.cache_hit;
        ms[k] = (bench_now() - a) * 1e3;
        total += ms[k];
        instr += res.instructions;
        ir_task_free(t);
    }
    jit_destroy(J);
    if (!ok)
        goto out;
    qsort(ms, NTASKS, sizeof ms[0], cmp_double);
    double median = 0.5 * (ms[NTASKS / 2 - 1] + ms[NTASKS / 2]);
    printf("%-22s %8s %10s %10s %10s %12s\n", "case", "tasks", "median ms", "max ms",
           "total ms", "jit create ms");
    printf("%-22s %8d %10.2f %10.2f %10.2f %12.2f\n", "compile_cold", NTASKS, median,
           ms[NTASKS - 1], total, create_s * 1e3);
    json_array_append_new(
        ctx->cases,
        json_pack("{s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:i, s:I}", "name", "compile_cold",
                  "tasks_compiled", NTASKS, "median_ms", median, "max_ms", ms[NTASKS - 1],
                  "total_ms", total, "jit_create_ms", create_s * 1e3, "wall_s", total * 1e-3,
                  "tasks_launched", 0, "instructions", (json_int_t)instr));
    rc = 0;
out:
    plm_tree_destroy(tl);
    plm_tree_destroy(tv);
    return rc;
}

#if defined(PLUME_HAVE_KERNELS)
int bench_lang_source(bench_ctx *ctx, int reps); /* bench_lang_source.c */
#endif

/* Suite options: case names (saxpy, laplacian, compile, source) to run only those. */
static int wants(bench_ctx *ctx, const char *name)
{
    if (ctx->argc == 0)
        return 1;
    for (int i = 0; i < ctx->argc; i++)
        if (!strcmp(ctx->argv[i], name))
            return 1;
    return 0;
}

static int bench_lang(bench_ctx *ctx)
{
    int reps = ctx->quick ? 2 : 5;
    for (int i = 0; i < ctx->argc; i++)
        if (strcmp(ctx->argv[i], "saxpy") && strcmp(ctx->argv[i], "laplacian") &&
            strcmp(ctx->argv[i], "compile") && strcmp(ctx->argv[i], "source")) {
            fprintf(stderr, "plume-bench lang: unknown case '%s' (saxpy, laplacian, compile, source)\n",
                    ctx->argv[i]);
            return 1;
        }
    printf("plume-bench lang: best of %d runs each; task and C runs alternate\n\n", reps);
    jit *J = make_jit();
    if (!J)
        return 1;
    int rc = 0;
    if (wants(ctx, "saxpy"))
        rc |= bench_saxpy(ctx, J, reps);
    if (wants(ctx, "laplacian"))
        rc |= bench_laplacian(ctx, J, reps);
    jit_destroy(J);
    if (wants(ctx, "compile"))
        rc |= bench_compile(ctx);
#if defined(PLUME_HAVE_KERNELS)
    if (wants(ctx, "source"))
        rc |= bench_lang_source(ctx, reps);
#endif
    return rc ? 1 : 0;
}

#else /* no kernel engine in this build */

static int bench_lang(bench_ctx *ctx)
{
    (void)ctx;
    fprintf(stderr, "plume-bench lang: this build has no code generator (needs plume_engine "
                    "with PLUME_HAVE_KERNELS, i.e. LLVM 16 and -DPLUME_ENGINE_KERNELS=ON)\n");
    return 1;
}

#endif

BENCH_SUITE("lang", "generated task code vs plain C: saxpy, sparse Laplacian, compile time",
            bench_lang)
