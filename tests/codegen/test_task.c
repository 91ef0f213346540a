/* Lowered IR tasks through cg_emit_task and the JIT, run through the task_abi.h entry points on
 * real sparse trees and compared with plain C: saxpy over a range, a struct_for over every
 * active voxel, atomic reductions into 0-D fields, activation on write, background reads. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/codegen/task_util.h"

static cpu_pool *pool;
static jit *J;

#define N_LINE 16384 /* a 1-D dense field: dense(i,64).dense(i,256) */

/* y[i] = a * x[i] + y[i] for i in [lo, n): lo and n are arguments, computed in a prologue. */
static void test_saxpy(void)
{
    char err[512];
    plm_tree *tx = NULL, *ty = NULL;
    CHECK_MSG(plm_tree_create("dense(i,64).dense(i,256).place(x)", 16u << 20, &tx, err,
                              sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create("dense(i,64).dense(i,256).place(y)", 16u << 20, &ty, err,
                              sizeof err) == 0, err);
    if (!tx || !ty)
        return;
    ir_field_info fields[2];
    CHECK(field_info_from_tree(tx, "x", 1, &fields[0]) == 0);
    CHECK(field_info_from_tree(ty, "y", 1, &fields[1]) == 0);
    ir_type args[3] = {IR_F32, IR_I32, IR_I32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "saxpy", fields, 2, args, 3);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_binary(&b, IR_ADD, ir_arg(&b, IR_I32, 1), ir_const_i32(&b, 0));
    ir_stmt *loop = ir_range_for(&b, lo, ir_arg(&b, IR_I32, 2), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *px = lowered_ptr(&b, 0, 0, &i, 0);
    ir_stmt *py = lowered_ptr(&b, 1, 0, &i, 1);
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_binary(&b, IR_MUL, ir_arg(&b, IR_F32, 0),
                                                 ir_global_load(&b, px)),
                           ir_global_load(&b, py));
    ir_global_store(&b, py, v);

    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"saxpy compiles");
    } else {
        float *xs = malloc(N_LINE * sizeof *xs), *ys = malloc(N_LINE * sizeof *ys);
        for (int k = 0; k < N_LINE; k++) {
            xs[k] = (float)(k % 97) * 0.25f - 3.0f;
            ys[k] = (float)(k % 13) - 6.5f;
            plm_tree_write(tx, 0, k, 0, 0, &xs[k]);
            plm_tree_write(ty, 0, k, 0, 0, &ys[k]);
        }
        float a = 1.75f;
        int32_t first = 5, n = N_LINE - 3;
        plm_runtime *rts[2] = {plm_tree_runtime(tx), plm_tree_runtime(ty)};
        int32_t fids[2] = {0, 0};
        uint32_t abits;
        memcpy(&abits, &a, 4);
        uint64_t av[3] = {abits, (uint64_t)(int64_t)first, (uint64_t)(int64_t)n};
        plm_task_ctx ctx = {rts, fids, av};
        CHECK_EQ(run_range(pool, addrs, &ctx, 1000), n - first);
        int bad = 0;
        for (int k = 0; k < N_LINE; k++) {
            float want = k >= first && k < n ? a * xs[k] + ys[k] : ys[k];
            float got = -1;
            plm_tree_read(ty, 0, k, 0, 0, &got);
            if (fabsf(got - want) > 1e-5f * (1 + fabsf(want)))
                bad++;
        }
        CHECK_EQ(bad, 0);
        free(xs);
        free(ys);
    }
    ir_task_free(t);
    plm_tree_destroy(tx);
    plm_tree_destroy(ty);
}

/* The voxels a test writes into the default layout: spread over several blocks, some negative. */
static void voxel(int k, int32_t c[3])
{
    c[0] = (k * 37) % 300 - 150;
    c[1] = (k * 11) % 90 - 45;
    c[2] = (k * 5) % 64 - 2048;
}

typedef struct block_list {
    int32_t origin[512][3];
    int n;
} block_list;

static int note_block(void *user, const int32_t origin[3], float *data)
{
    (void)data;
    block_list *l = user;
    if (l->n < 512)
        memcpy(l->origin[l->n++], origin, sizeof l->origin[0]);
    return 0;
}

/* d[I] = d[I] * s + (I.x + 2 I.y + 3 I.z) for every active voxel I: the loop indices must be
 * the voxels' coordinates, and every voxel of every active block is visited once. */
static void test_struct_for(void)
{
    char err[512];
    plm_tree *tree = NULL;
    CHECK_MSG(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(d)", 64u << 20, &tree, err,
                              sizeof err) == 0, err);
    if (!tree)
        return;
    ir_field_info fi;
    CHECK(field_info_from_tree(tree, "d", 3, &fi) == 0);
    ir_type args[1] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "scale", &fi, 1, args, 1);
    t->field = 0;
    t->level = (uint8_t)(fi.nlevels - 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *s = ir_arg(&b, IR_F32, 0);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *p = lowered_ptr(&b, 0, 0, I, 1);
    ir_stmt *w = ir_binary(&b, IR_ADD, I[0],
                           ir_binary(&b, IR_ADD, ir_binary(&b, IR_MUL, ir_const_i32(&b, 2), I[1]),
                                     ir_binary(&b, IR_MUL, ir_const_i32(&b, 3), I[2])));
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_binary(&b, IR_MUL, ir_global_load(&b, p), s),
                           ir_cast(&b, IR_F32, w));
    ir_global_store(&b, p, v);

    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"struct_for compiles");
    } else {
        for (int k = 0; k < 200; k++) {
            int32_t c[3];
            voxel(k, c);
            float val = (float)k;
            plm_tree_write(tree, 0, c[0], c[1], c[2], &val);
        }
        static block_list blocks;
        blocks.n = 0;
        plm_tree_foreach_block(tree, 0, note_block, &blocks);
        CHECK(blocks.n > 4);
        /* expected values, in C, from what the tree holds now */
        float *want = malloc((size_t)blocks.n * 512 * sizeof *want);
        float sc = 0.5f;
        for (int bl = 0; bl < blocks.n; bl++)
            for (int q = 0; q < 512; q++) {
                int32_t x = blocks.origin[bl][0] + q / 64, y = blocks.origin[bl][1] + q / 8 % 8,
                        z = blocks.origin[bl][2] + q % 8;
                float old;
                plm_tree_read(tree, 0, x, y, z, &old);
                want[bl * 512 + q] = old * sc + (float)(x + 2 * y + 3 * z);
            }
        plm_runtime *rt = plm_tree_runtime(tree);
        int32_t fid = 0;
        uint32_t sbits;
        memcpy(&sbits, &sc, 4);
        uint64_t av[1] = {sbits};
        plm_task_ctx ctx = {&rt, &fid, av};
        CHECK_EQ(run_struct(pool, tree, fi.levels[t->level].rt_snode, addrs, &ctx), blocks.n);
        int bad = 0;
        for (int bl = 0; bl < blocks.n; bl++)
            for (int q = 0; q < 512; q++) {
                int32_t x = blocks.origin[bl][0] + q / 64, y = blocks.origin[bl][1] + q / 8 % 8,
                        z = blocks.origin[bl][2] + q % 8;
                float got;
                plm_tree_read(tree, 0, x, y, z, &got);
                if (got != want[bl * 512 + q] && bad++ < 5)
                    fprintf(stderr, "voxel %d %d %d: %g, want %g\n", x, y, z, got,
                            want[bl * 512 + q]);
            }
        CHECK_EQ(bad, 0);
        free(want);
        /* nothing was activated on the way */
        CHECK_EQ(plm_tree_list_blocks(tree, 0, 1), blocks.n);
    }
    ir_task_free(t);
    plm_tree_destroy(tree);
}

/* sum += x[i], mx = max(mx, x[i]) (float CAS loop), mn = min(mn, x[i]) over a range, with 2
 * threads: 0-D fields reached by root -> child -> index (no axes) -> field_ptr. */
static void test_reduction(void)
{
    char err[512];
    plm_tree *tx = NULL, *ts = NULL;
    CHECK_MSG(plm_tree_create("dense(i,64).dense(i,256).place(x)", 16u << 20, &tx, err,
                              sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create("dense(i,1).place(sum, mx, mn)", 1u << 20, &ts, err,
                              sizeof err) == 0, err);
    if (!tx || !ts)
        return;
    ir_field_info fields[4];
    CHECK(field_info_from_tree(tx, "x", 1, &fields[0]) == 0);
    CHECK(field_info_from_tree(ts, "sum", 0, &fields[1]) == 0);
    CHECK(field_info_from_tree(ts, "mx", 0, &fields[2]) == 0);
    CHECK(field_info_from_tree(ts, "mn", 0, &fields[3]) == 0);
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "reduce", fields, 4, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, N_LINE), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *xv = ir_global_load(&b, lowered_ptr(&b, 0, 0, &i, 0));
    static const int ops[3] = {IR_ATOMIC_ADD, IR_ATOMIC_MAX, IR_ATOMIC_MIN};
    for (int k = 0; k < 3; k++)
        ir_atomic(&b, ops[k], lowered_ptr(&b, (uint32_t)k + 1, 0, NULL, 1), xv);

    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"reduction compiles");
    } else {
        double sum = 0;
        float mx = -1e30f, mn = 1e30f;
        for (int k = 0; k < N_LINE; k++) {
            float v = (float)((k * 7919) % 1001) - 500.0f; /* whole numbers: the sum is exact */
            plm_tree_write(tx, 0, k, 0, 0, &v);
            sum += v;
            mx = v > mx ? v : mx;
            mn = v < mn ? v : mn;
        }
        float init[3] = {10.0f, -1e30f, 1e30f};
        for (int f = 0; f < 3; f++)
            plm_tree_write(ts, f, 0, 0, 0, &init[f]);
        plm_runtime *rts[4] = {plm_tree_runtime(tx), plm_tree_runtime(ts), plm_tree_runtime(ts),
                               plm_tree_runtime(ts)};
        int32_t fids[4] = {0, 0, 1, 2};
        plm_task_ctx ctx = {rts, fids, NULL};
        CHECK_EQ(run_range(pool, addrs, &ctx, 64), N_LINE); /* many small chunks: contention */
        float got[3];
        for (int f = 0; f < 3; f++)
            plm_tree_read(ts, f, 0, 0, 0, &got[f]);
        CHECK(got[0] == (float)(sum + 10.0));
        CHECK(got[1] == mx);
        CHECK(got[2] == mn);
    }
    ir_task_free(t);
    plm_tree_destroy(tx);
    plm_tree_destroy(ts);
}

/* f[c(i)] = i with activating lookups: the blocks appear; one write far outside the range is
 * dropped with PLM_RT_ERR_RANGE; a serial task this time. */
static void test_activation(void)
{
    char err[512];
    plm_tree *tree = NULL;
    CHECK_MSG(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(f)", 64u << 20, &tree, err,
                              sizeof err) == 0, err);
    if (!tree)
        return;
    ir_field_info fi;
    CHECK(field_info_from_tree(tree, "f", 3, &fi) == 0);
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "activate", &fi, 1, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 100), 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    /* c(i) = (37 i mod 200 - 100, 3 i, -20 i) */
    ir_stmt *c[3] = {
        ir_binary(&b, IR_SUB, ir_binary(&b, IR_MOD, ir_binary(&b, IR_MUL, i, ir_const_i32(&b, 37)),
                                        ir_const_i32(&b, 200)),
                  ir_const_i32(&b, 100)),
        ir_binary(&b, IR_MUL, i, ir_const_i32(&b, 3)),
        ir_binary(&b, IR_MUL, i, ir_const_i32(&b, -20)),
    };
    ir_global_store(&b, lowered_ptr(&b, 0, 0, c, 1), ir_cast(&b, IR_F32, i));
    ir_builder_init(&b, t);
    ir_stmt *far[3] = {ir_const_i32(&b, 5000), ir_const_i32(&b, 0), ir_const_i32(&b, 0)};
    ir_global_store(&b, lowered_ptr(&b, 0, 0, far, 1), ir_const_float(&b, IR_F32, 9.0));

    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"activation task compiles");
    } else {
        int32_t probe[3] = {-100 + 37, 3, -20}; /* written by i = 1 */
        CHECK_EQ(plm_tree_is_active(tree, 3, probe[0], probe[1], probe[2]), 0);
        plm_runtime *rt = plm_tree_runtime(tree);
        int32_t fid = 0;
        plm_task_ctx ctx = {&rt, &fid, NULL};
        ((plm_task_serial_fn)addrs[0])(&ctx);
        int bad = 0;
        for (int k = 0; k < 100; k++) {
            float v = -1;
            int active = plm_tree_read(tree, 0, (37 * k) % 200 - 100, 3 * k, -20 * k, &v);
            bad += active != 1 || v != (float)k;
        }
        CHECK_EQ(bad, 0);
        /* a block nobody wrote stays inactive */
        float v;
        CHECK_EQ(plm_tree_read(tree, 0, 1000, 1000, 1000, &v), 0);
        char msg[256];
        CHECK_EQ(plm_tree_check_error(tree, msg, sizeof msg), PLM_RT_ERR_RANGE);
    }
    ir_task_free(t);
    plm_tree_destroy(tree);
}

/* The setup both tests of reads at computed voxels share: a source tree of the default layout
 * (field s, slot 0), an output tree "dense(i,512)" placing out_names (slots 1..), and a
 * range_for task over [0, 512) whose body the test builds at g->b (loop index g->i). 0 when it
 * is ready; gather_end frees what it made. */
typedef struct gather_setup {
    plm_tree *src, *out;
    ir_field_info fields[3];
    ir_task *t;
    ir_builder b;
    ir_stmt *i;
} gather_setup;

static int gather_begin(gather_setup *g, const char *name, const char *const *out_names, int nout)
{
    char err[512], layout[128];
    memset(g, 0, sizeof *g);
    snprintf(layout, sizeof layout, "dense(i,512).place(%s%s%s)", out_names[0],
             nout > 1 ? ", " : "", nout > 1 ? out_names[1] : "");
    CHECK_MSG(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(s)", 64u << 20, &g->src, err,
                              sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create(layout, 1u << 20, &g->out, err, sizeof err) == 0, err);
    if (!g->src || !g->out)
        return -1;
    CHECK(field_info_from_tree(g->src, "s", 3, &g->fields[0]) == 0);
    for (int k = 0; k < nout; k++)
        CHECK(field_info_from_tree(g->out, out_names[k], 1, &g->fields[1 + k]) == 0);
    g->t = ir_task_new(IR_TASK_RANGE_FOR, name, g->fields, (uint32_t)(1 + nout), NULL, 0);
    ir_builder_init(&g->b, g->t);
    ir_stmt *loop = ir_range_for(&g->b, ir_const_i32(&g->b, 0), ir_const_i32(&g->b, 512), 1);
    ir_builder_at_end(&g->b, loop->body);
    g->i = ir_loop_index(&g->b, loop, 0);
    return 0;
}

static void gather_end(gather_setup *g)
{
    if (g->t)
        ir_task_free(g->t);
    if (g->src)
        plm_tree_destroy(g->src);
    if (g->out)
        plm_tree_destroy(g->out);
}

/* out[i] = src[c(i)], act[i] = is_active(block of c(i)) without activation: inactive voxels
 * (and one outside the range) read the background, and nothing gets activated. */
static void test_background(void)
{
    static const char *const outs[2] = {"o", "act"};
    gather_setup g;
    if (gather_begin(&g, "gather", outs, 2) != 0) {
        gather_end(&g);
        return;
    }
    plm_tree *src = g.src, *out = g.out;
    ir_field_info *fields = g.fields;
    ir_task *t = g.t;
    ir_builder b = g.b;
    ir_stmt *i = g.i;
    /* c(i) = (7 i - 1800, 3 i, 17), and i = 511 far outside: (1 << 20, 1533, 17) */
    ir_stmt *last = ir_binary(&b, IR_EQ, i, ir_const_i32(&b, 511));
    ir_stmt *c[3] = {
        ir_select(&b, last, ir_const_i32(&b, 1 << 20),
                  ir_binary(&b, IR_SUB, ir_binary(&b, IR_MUL, i, ir_const_i32(&b, 7)),
                            ir_const_i32(&b, 1800))),
        ir_binary(&b, IR_MUL, i, ir_const_i32(&b, 3)),
        ir_const_i32(&b, 17),
    };
    ir_stmt *v = ir_global_load(&b, lowered_ptr(&b, 0, 0, c, 0));
    ir_global_store(&b, lowered_ptr(&b, 1, 0, &i, 1), v);
    /* is the block (level nlevels-2) holding c(i) active? */
    ir_stmt *cell = ir_sn_root(&b, 0);
    int blk = fields[0].nlevels - 2;
    for (int l = 1; l < blk; l++)
        cell = ir_sn_lookup(&b, 0, (uint32_t)l, 0, ir_sn_child(&b, 0, (uint32_t)l, cell),
                            ir_sn_index(&b, 0, (uint32_t)l, c));
    ir_stmt *act = ir_sn_op(&b, IR_SN_IS_ACTIVE, 0, (uint32_t)blk,
                            ir_sn_child(&b, 0, (uint32_t)blk, cell),
                            ir_sn_index(&b, 0, (uint32_t)blk, c));
    ir_global_store(&b, lowered_ptr(&b, 2, 0, &i, 1),
                    ir_select(&b, act, ir_const_float(&b, IR_F32, 1), ir_const_float(&b, IR_F32, 0)));

    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"gather compiles");
    } else {
        float bg = 7.5f;
        plm_tree_set_background(src, 0, &bg);
        for (int k = 0; k < 512; k += 3) { /* every third voxel written: its block is active */
            float val = (float)k * 0.5f;
            plm_tree_write(src, 0, 7 * k - 1800, 3 * k, 17, &val);
        }
        int64_t blocks_before = plm_tree_list_blocks(src, 0, 1);
        plm_runtime *rts[3] = {plm_tree_runtime(src), plm_tree_runtime(out), plm_tree_runtime(out)};
        int32_t fids[3] = {0, 0, 1};
        plm_task_ctx ctx = {rts, fids, NULL};
        run_range(pool, addrs, &ctx, 50);
        int bad_v = 0, bad_a = 0, inactive = 0;
        for (int k = 0; k < 512; k++) {
            int32_t x = k == 511 ? 1 << 20 : 7 * k - 1800, y = 3 * k, z = 17;
            float want = bg;
            if (k != 511)
                plm_tree_read(src, 0, x, y, z, &want);
            int want_act = k != 511 && plm_tree_is_active(src, 2, x, y, z);
            inactive += !want_act;
            float got, got_act;
            plm_tree_read(out, 0, k, 0, 0, &got);
            plm_tree_read(out, 1, k, 0, 0, &got_act);
            bad_v += got != want;
            bad_a += got_act != (float)want_act;
        }
        CHECK_EQ(bad_v, 0);
        CHECK_EQ(bad_a, 0);
        CHECK(inactive > 10); /* the test did read inactive voxels */
        CHECK_EQ(plm_tree_list_blocks(src, 0, 1), blocks_before);
        char msg[256];
        CHECK_EQ(plm_tree_check_error(src, msg, sizeof msg), 0); /* reads record nothing */
    }
    gather_end(&g);
}

/* Reads at computed voxels of a block that is not active take the background from the leaf's
 * block of background values (plm_rt_snode.bg_container), but a store through the same pointer
 * that does not activate (as after activation demotion) must skip such a voxel and leave that
 * block alone: its address stays NULL there (engine/codegen/cached_read.c, `stored`). */
static void test_store_at_read(void)
{
    static const char *const outs[1] = {"o"};
    gather_setup g;
    if (gather_begin(&g, "store_at_read", outs, 1) != 0) {
        gather_end(&g);
        return;
    }
    plm_tree *src = g.src, *out = g.out;
    ir_task *t = g.t;
    ir_builder b = g.b;
    ir_stmt *i = g.i;
    /* c(i) = (7 (i - 257), 3 i, 17) and its +x neighbour, one base plus constants (a group):
     * 7 apart from one i to the next, so no iteration reads what another writes */
    ir_stmt *c[3] = {ir_binary(&b, IR_MUL, ir_binary(&b, IR_SUB, i, ir_const_i32(&b, 257)),
                               ir_const_i32(&b, 7)),
                     ir_binary(&b, IR_MUL, i, ir_const_i32(&b, 3)), ir_const_i32(&b, 17)};
    ir_stmt *c1[3] = {ir_binary(&b, IR_ADD, c[0], ir_const_i32(&b, 1)), c[1], c[2]};
    ir_stmt *p = lowered_ptr(&b, 0, 0, c, 0);
    ir_stmt *v = ir_global_load(&b, p);
    ir_stmt *v1 = ir_global_load(&b, lowered_ptr(&b, 0, 0, c1, 0));
    ir_global_store(&b, lowered_ptr(&b, 1, 0, &i, 1), ir_binary(&b, IR_ADD, v, v1));
    ir_global_store(&b, p, ir_binary(&b, IR_ADD, v, ir_const_float(&b, IR_F32, 100)));

    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"store_at_read compiles");
    } else {
        float bg = 7.5f;
        plm_tree_set_background(src, 0, &bg);
        for (int k = 0; k < 512; k += 3) {
            float val = (float)k * 0.5f;
            plm_tree_write(src, 0, 7 * k - 1799, 3 * k, 17, &val);
        }
        float before[512][2];
        for (int k = 0; k < 512; k++) {
            plm_tree_read(src, 0, 7 * k - 1799, 3 * k, 17, &before[k][0]);
            plm_tree_read(src, 0, 7 * k - 1798, 3 * k, 17, &before[k][1]);
        }
        int64_t blocks_before = plm_tree_list_blocks(src, 0, 1);
        plm_runtime *rts[2] = {plm_tree_runtime(src), plm_tree_runtime(out)};
        int32_t fids[2] = {0, 0};
        plm_task_ctx ctx = {rts, fids, NULL};
        run_range(pool, addrs, &ctx, 50);
        int bad_o = 0, bad_s = 0, inactive = 0;
        for (int k = 0; k < 512; k++) {
            int32_t x = 7 * k - 1799, y = 3 * k, z = 17;
            int act = plm_tree_is_active(src, 2, x, y, z);
            inactive += !act;
            float got, s_now;
            plm_tree_read(out, 0, k, 0, 0, &got);
            plm_tree_read(src, 0, x, y, z, &s_now);
            bad_o += got != before[k][0] + before[k][1];
            bad_s += s_now != (act ? before[k][0] + 100.0f : bg);
        }
        CHECK_EQ(bad_o, 0);
        CHECK_EQ(bad_s, 0);
        CHECK(inactive > 10);
        CHECK_EQ(plm_tree_list_blocks(src, 0, 1), blocks_before);
        /* the background block still holds the background in every cell */
        const plm_runtime *rt = plm_tree_runtime(src);
        const plm_rt_snode *leaf = &rt->snodes[rt->fields[0].snode];
        int bad_bg = leaf->bg_container == NULL;
        for (int32_t k = 0; leaf->bg_container && k < leaf->num_cells; k++) {
            const float *e = (const float *)(leaf->bg_container + leaf->header_bytes +
                                             rt->fields[0].offset +
                                             (uint64_t)k * rt->fields[0].stride);
            bad_bg += *e != bg;
        }
        CHECK_EQ(bad_bg, 0);
    }
    gather_end(&g);
}

/* A struct_for over a bitmasked leaf visits only the active cells. */
static void test_bitmasked(void)
{
    char err[512];
    plm_tree *tree = NULL, *cnt = NULL;
    CHECK_MSG(plm_tree_create("pointer(ijk,16).bitmasked(ijk,8).place(m)", 16u << 20, &tree, err,
                              sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create("dense(i,1).place(n)", 1u << 20, &cnt, err, sizeof err) == 0, err);
    if (!tree || !cnt)
        return;
    ir_field_info fields[2];
    CHECK(field_info_from_tree(tree, "m", 3, &fields[0]) == 0);
    CHECK(field_info_from_tree(cnt, "n", 0, &fields[1]) == 0);
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "count", fields, 2, NULL, 0);
    t->field = 0;
    t->level = (uint8_t)(fields[0].nlevels - 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *p = lowered_ptr(&b, 0, 0, I, 0);
    /* n += m[I] + 1000 * I.x: wrong coordinates or extra cells change the sum */
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_global_load(&b, p),
                           ir_cast(&b, IR_F32, ir_binary(&b, IR_MUL, I[0], ir_const_i32(&b, 1000))));
    ir_atomic(&b, IR_ATOMIC_ADD, lowered_ptr(&b, 1, 0, NULL, 1), v);
    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"bitmasked count compiles");
    } else {
        double want = 0;
        int written = 0;
        for (int k = 0; k < 60; k++) {
            int32_t x = (k * 13) % 128, y = (k * 7) % 128, z = k % 128;
            float val = (float)k;
            float old;
            if (plm_tree_read(tree, 0, x, y, z, &old) == 1)
                continue; /* written already */
            plm_tree_write(tree, 0, x, y, z, &val);
            want += val + 1000.0 * x;
            written++;
        }
        plm_runtime *rts[2] = {plm_tree_runtime(tree), plm_tree_runtime(cnt)};
        int32_t fids[2] = {0, 0};
        plm_task_ctx ctx = {rts, fids, NULL};
        run_struct(pool, tree, fields[0].levels[t->level].rt_snode, addrs, &ctx);
        float got;
        plm_tree_read(cnt, 0, 0, 0, 0, &got);
        CHECK(written > 30);
        CHECK(got == (float)want);
    }
    ir_task_free(t);
    plm_tree_destroy(tree);
    plm_tree_destroy(cnt);
}

int main(void)
{
    char err[256];
    if (cpu_pool_create(2, &pool, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    J = make_jit();
    if (!J)
        return 1;
    test_saxpy();
    test_struct_for();
    test_reduction();
    test_activation();
    test_background();
    test_store_at_read();
    test_bitmasked();
    jit_destroy(J);
    cpu_pool_destroy(pool);
    CHECK_DONE();
}
