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
    jit_destroy(J);
    cpu_pool_destroy(pool);
    CHECK_DONE();
}
