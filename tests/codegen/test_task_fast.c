/* The fast copies of parallel loops (engine/codegen/fast_*.c) against plain C, including the
 * cases where the per-call check must pick the generic copy: indices leaving the field's range
 * (background reads, range errors on writes), one field bound to two slots (no noalias may be
 * assumed), layouts where the address is not linear (AoS placement), and stencils that cross
 * block boundaries into active and inactive neighbours. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/codegen/task_util.h"

static cpu_pool *pool;
static jit *J;

#define N_LINE 16384

/* y[i] = x[i+1] + 2 x[i-1] over [lo, hi) (arguments); x is slot 0, y slot 1. */
static ir_task *shift_task(const ir_field_info fi[2])
{
    ir_type args[2] = {IR_I32, IR_I32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "shift", fi, 2, args, 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_arg(&b, IR_I32, 0), ir_arg(&b, IR_I32, 1), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *ip = ir_binary(&b, IR_ADD, i, ir_const_i32(&b, 1));
    ir_stmt *im = ir_binary(&b, IR_SUB, i, ir_const_i32(&b, 1));
    ir_stmt *v = ir_binary(&b, IR_ADD, ir_global_load(&b, lowered_ptr(&b, 0, 0, &ip, 0)),
                           ir_binary(&b, IR_MUL, ir_const_float(&b, IR_F32, 2.0),
                                     ir_global_load(&b, lowered_ptr(&b, 0, 0, &im, 0))));
    ir_global_store(&b, lowered_ptr(&b, 1, 0, &i, 1), v);
    return t;
}

static void run_shift(const char *lx, const char *ly, int32_t lo, int32_t hi, int expect_error)
{
    char err[512];
    plm_tree *tx = NULL, *ty = NULL;
    CHECK_MSG(plm_tree_create(lx, 16u << 20, &tx, err, sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create(ly, 16u << 20, &ty, err, sizeof err) == 0, err);
    if (!tx || !ty)
        return;
    ir_field_info fi[2];
    CHECK(field_info_from_tree(tx, "x", 1, &fi[0]) == 0);
    CHECK(field_info_from_tree(ty, "y", 1, &fi[1]) == 0);
    float bg = 7.0f;
    plm_tree_set_background(tx, 0, &bg);
    ir_task *t = shift_task(fi);
    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"shift compiles");
    } else {
        static float xs[N_LINE];
        for (int k = 0; k < N_LINE; k++) {
            xs[k] = (float)(k % 101) * 0.5f - 9.0f;
            plm_tree_write(tx, 0, k, 0, 0, &xs[k]);
        }
        plm_runtime *rts[2] = {plm_tree_runtime(tx), plm_tree_runtime(ty)};
        int32_t fids[2] = {0, 0};
        uint64_t av[2] = {(uint64_t)(int64_t)lo, (uint64_t)(int64_t)hi};
        plm_task_ctx ctx = {rts, fids, av};
        CHECK_EQ(run_range(pool, addrs, &ctx, 1000), hi - lo);
        int bad = 0;
        for (int k = 0; k < N_LINE; k++) {
            float xp = k + 1 < N_LINE ? xs[k + 1] : bg, xm = k >= 1 ? xs[k - 1] : bg;
            float want = k >= lo && k < hi ? xp + 2.0f * xm : 0.0f, got = -1;
            plm_tree_read(ty, 0, k, 0, 0, &got);
            if (got != want && bad++ < 3)
                fprintf(stderr, "%s [%d,%d) y[%d] = %g, want %g\n", lx, lo, hi, k, got, want);
        }
        CHECK_EQ(bad, 0);
        char msg[256];
        CHECK_EQ(plm_tree_check_error(ty, msg, sizeof msg) != 0, expect_error);
    }
    ir_task_free(t);
    plm_tree_destroy(tx);
    plm_tree_destroy(ty);
}

/* In range (the fast copy), reading past both ends (background), writing past the end (range
 * error), and AoS placement (stride of two floats: the generic copy). */
static void test_range_shift(void)
{
    const char *lx = "dense(i,64).dense(i,256).place(x)";
    const char *ly = "dense(i,64).dense(i,256).place(y)";
    run_shift(lx, ly, 1, N_LINE - 1, 0);
    run_shift(lx, ly, 1, 2, 0);
    run_shift(lx, ly, 0, N_LINE, 0);
    run_shift(lx, ly, 5, N_LINE + 3, 1);
    run_shift("dense(i,64).dense(i,256).place_aos(x, w)", "dense(i,16384).place_aos(q, y)", 1,
              N_LINE - 1, 0);
    run_shift("dense(i,16384).place(x)", "dense(i,2).dense(i,8192).place(y)", 0, N_LINE, 0);
}

/* One field bound to both slots: y[i] = 5; v = x[i]; y[i] = v + 1 must read the 5 (a noalias
 * assumption would let the load move above the store). */
static void test_range_same_field(void)
{
    char err[512];
    plm_tree *tx = NULL;
    CHECK_MSG(plm_tree_create("dense(i,64).dense(i,256).place(x)", 16u << 20, &tx, err,
                              sizeof err) == 0, err);
    if (!tx)
        return;
    ir_field_info fi[2];
    CHECK(field_info_from_tree(tx, "x", 1, &fi[0]) == 0);
    fi[1] = fi[0];
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "same", fi, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, N_LINE), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *py = lowered_ptr(&b, 1, 0, &i, 1);
    ir_global_store(&b, py, ir_const_float(&b, IR_F32, 5.0));
    ir_stmt *v = ir_global_load(&b, lowered_ptr(&b, 0, 0, &i, 0));
    ir_global_store(&b, py, ir_binary(&b, IR_ADD, v, ir_const_float(&b, IR_F32, 1.0)));
    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"same compiles");
    } else {
        plm_runtime *rts[2] = {plm_tree_runtime(tx), plm_tree_runtime(tx)};
        int32_t fids[2] = {0, 0};
        plm_task_ctx ctx = {rts, fids, NULL};
        run_range(pool, addrs, &ctx, 1000);
        int bad = 0;
        for (int k = 0; k < N_LINE; k++) {
            float got = 0;
            plm_tree_read(tx, 0, k, 0, 0, &got);
            bad += got != 6.0f;
        }
        CHECK_EQ(bad, 0);
    }
    ir_task_free(t);
    plm_tree_destroy(tx);
}

/* The fast copy of a dense range_for is a plain strided loop: the optimizer vectorizes it. */
static void test_range_vectorizes(void)
{
    char err[512];
    plm_tree *tx = NULL, *ty = NULL;
    CHECK_MSG(plm_tree_create("dense(i,64).dense(i,256).place(x)", 16u << 20, &tx, err,
                              sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create("dense(i,64).dense(i,256).place(y)", 16u << 20, &ty, err,
                              sizeof err) == 0, err);
    if (!tx || !ty)
        return;
    ir_field_info fi[2];
    CHECK(field_info_from_tree(tx, "x", 1, &fi[0]) == 0);
    CHECK(field_info_from_tree(ty, "y", 1, &fi[1]) == 0);
    ir_task *t = shift_task(fi);
    jit_config cfg = jit_config_default();
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    static const char *const syms[1] = {CG_TASK_SYMBOL};
    char *text = NULL;
    CHECK_MSG(jit_emit_text(&cfg, cg_task_build, t, syms, 1, JIT_EMIT_LLVM, &text, err,
                            sizeof err) == 0, err);
    CHECK(text && strstr(text, " x float>"));
    free(text);
    ir_task_free(t);
    plm_tree_destroy(tx);
    plm_tree_destroy(ty);
}

/* out[I] = u[I+(1,0,0)] + 2 u[I+(1,-1,0)] + 3 u[I+(0,0,-2)] + u[I] over the active voxels of
 * u, optionally only where u[I] > 0: neighbours in the same block, in active and inactive
 * neighbour blocks (background 0.5), two axes crossed at once, conditional writes (u > 7.5,
 * rare: they must not activate blocks nothing is written to). */
static void run_stencil(const char *lu, const char *lo, int conditional)
{
    char err[512];
    plm_tree *tu = NULL, *to = NULL;
    CHECK_MSG(plm_tree_create(lu, 64u << 20, &tu, err, sizeof err) == 0, err);
    CHECK_MSG(plm_tree_create(lo, 64u << 20, &to, err, sizeof err) == 0, err);
    if (!tu || !to)
        return;
    ir_field_info fi[2];
    CHECK(field_info_from_tree(tu, "u", 3, &fi[0]) == 0);
    CHECK(field_info_from_tree(to, "out", 3, &fi[1]) == 0);
    float bg = 0.5f;
    plm_tree_set_background(tu, 0, &bg);
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "stencil", fi, 2, NULL, 0);
    t->field = 0;
    t->level = (uint8_t)(fi[0].nlevels - 2);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    static const int off[3][3] = {{1, 0, 0}, {1, -1, 0}, {0, 0, -2}};
    ir_stmt *sum = ir_global_load(&b, lowered_ptr(&b, 0, 0, I, 0));
    ir_stmt *center = sum;
    for (int k = 0; k < 3; k++) {
        ir_stmt *J[3];
        for (int a = 0; a < 3; a++)
            J[a] = off[k][a] ? ir_binary(&b, IR_ADD, I[a], ir_const_i32(&b, off[k][a])) : I[a];
        ir_stmt *v = ir_global_load(&b, lowered_ptr(&b, 0, 0, J, 0));
        sum = ir_binary(&b, IR_ADD, sum,
                        ir_binary(&b, IR_MUL, ir_const_float(&b, IR_F32, k + 1), v));
    }
    if (conditional) {
        ir_stmt *cond = ir_if(&b, ir_binary(&b, IR_GT, center, ir_const_float(&b, IR_F32, 7.5)));
        ir_builder_at_end(&b, cond->body);
    }
    ir_global_store(&b, lowered_ptr(&b, 1, 0, I, 1), sum);
    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"stencil compiles");
    } else {
        uint64_t seed = 12345;
        for (int k = 0; k < 3000; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int32_t x = (int32_t)((seed >> 33) % 40) - 20, y = (int32_t)((seed >> 40) % 40) - 20,
                    z = (int32_t)((seed >> 20) % 40) - 20;
            float v = (float)((seed >> 50) % 17) - 8.0f;
            plm_tree_write(tu, 0, x, y, z, &v);
        }
        plm_runtime *rts[2] = {plm_tree_runtime(tu), plm_tree_runtime(to)};
        int32_t fids[2] = {0, 0};
        plm_task_ctx ctx = {rts, fids, NULL};
        run_struct(pool, tu, fi[0].levels[t->level].rt_snode, addrs, &ctx);
        int bad = 0, written_blocks = 0;
        static uint8_t written[8][8][8];
        memset(written, 0, sizeof written);
        for (int x = -32; x < 32; x++)
            for (int y = -32; y < 32; y++)
                for (int z = -32; z < 32; z++) {
                    float c, got = 0, want = 0;
                    int act = plm_tree_read(tu, 0, x, y, z, &c) == 1;
                    if (act && (!conditional || c > 7.5f)) {
                        want = c;
                        for (int k = 0; k < 3; k++) {
                            float v;
                            plm_tree_read(tu, 0, x + off[k][0], y + off[k][1], z + off[k][2], &v);
                            want = want + (float)(k + 1) * v;
                        }
                        written[(x + 32) / 8][(y + 32) / 8][(z + 32) / 8] = 1;
                    }
                    plm_tree_read(to, 0, x, y, z, &got);
                    if (got != want && bad++ < 3)
                        fprintf(stderr, "%s%s: out[%d %d %d] = %g, want %g\n", lu,
                                conditional ? " (if)" : "", x, y, z, got, want);
                }
        CHECK_EQ(bad, 0);
        for (int i = 0; i < 512; i++)
            written_blocks += ((uint8_t *)written)[i];
        if (!strstr(lo, "-2044")) /* blocks line up with the check's */
            CHECK_EQ(plm_tree_list_blocks(to, 0, 1), written_blocks);
    }
    ir_task_free(t);
    plm_tree_destroy(tu);
    plm_tree_destroy(to);
}

static void test_struct_stencil(void)
{
    const char *d = PLM_LAYOUT_DEFAULT;
    char lu[160], lo[160], lm[160], lb[160];
    snprintf(lu, sizeof lu, "%s.place(u)", d);
    snprintf(lo, sizeof lo, "%s.place(out)", d);
    /* blocks that do not line up with u's: the generic copy */
    snprintf(lm, sizeof lm, "offset(-2044).pointer(ijk,32).pointer(ijk,16).dense(ijk,8).place(out)");
    /* a bitmasked leaf: only written voxels are active */
    snprintf(lb, sizeof lb, "offset(-2048).pointer(ijk,32).pointer(ijk,16).bitmasked(ijk,8).place(u)");
    run_stencil(lu, lo, 0);
    run_stencil(lu, lo, 1);
    run_stencil(lu, lm, 0);
    run_stencil(lb, lo, 0);
    run_stencil(lb, lo, 1);
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
    test_range_shift();
    test_range_same_field();
    test_range_vectorizes();
    test_struct_stencil();
    jit_destroy(J);
    cpu_pool_destroy(pool);
    CHECK_DONE();
}
