/* The semantics of IR operators in generated code, against C computing ir.h's definitions:
 * floored integer div/mod with x/0 = 0 and INT_MIN/-1, shift counts modulo the width, NaN in
 * float min/max and comparisons, saturating casts, libm math, CAS-loop atomics.
 * Operands are loaded from the global-temporaries buffer at run time (no constant folding);
 * results are stored back there. Also: errors for input the code generator must refuse. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/codegen/task_util.h"

#define SLOTS 512
static uint64_t buf[SLOTS]; /* the gtmp buffer: 8 bytes per slot */
static int next_slot;

/* gtmp_ptr built by hand: `index` is the argument holding the buffer address (ir.h). */
static ir_stmt *gtmp(ir_builder *b, ir_type elem, int slot)
{
    ir_stmt *s = ir_stmt_new(b->task, IR_GTMP_PTR, IR_PTR(elem));
    if (!s)
        return NULL;
    s->index = 0;
    s->ival = (int64_t)slot * 8;
    return ir_emit(b, s);
}

static ir_stmt *in_i(ir_builder *b, ir_type ty, int64_t v)
{
    int k = next_slot++;
    if (ty == IR_I32 || ty == IR_U32) {
        uint32_t w = (uint32_t)v;
        memcpy(&buf[k], &w, 4);
    } else {
        memcpy(&buf[k], &v, 8);
    }
    return ir_global_load(b, gtmp(b, ty, k));
}

static ir_stmt *in_f(ir_builder *b, ir_type ty, double v)
{
    int k = next_slot++;
    if (ty == IR_F32) {
        float f = (float)v;
        memcpy(&buf[k], &f, 4);
    } else {
        memcpy(&buf[k], &v, 8);
    }
    return ir_global_load(b, gtmp(b, ty, k));
}

/* Stores v to a fresh slot and returns the slot. */
static int out(ir_builder *b, ir_stmt *v)
{
    int k = next_slot++;
    ir_global_store(b, gtmp(b, v->ty, k), v);
    return k;
}

static int64_t get_i64(int k) { int64_t v; memcpy(&v, &buf[k], 8); return v; }
static int32_t get_i32(int k) { int32_t v; memcpy(&v, &buf[k], 4); return v; }
static uint32_t get_u32(int k) { uint32_t v; memcpy(&v, &buf[k], 4); return v; }
static float get_f32(int k) { float v; memcpy(&v, &buf[k], 4); return v; }
static uint8_t get_u8(int k) { return (uint8_t)buf[k]; }

/* ir.h's definitions, computed independently of the generated code. */
static int64_t floor_div(int64_t x, int64_t y)
{
    if (y == 0)
        return 0;
    if (y == -1)
        return (int64_t)(0 - (uint64_t)x); /* wraps for the minimum */
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0)))
        q--;
    return q;
}

static int64_t floor_mod(int64_t x, int64_t y)
{
    if (y == 0 || y == -1)
        return 0;
    int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
    return r;
}

typedef struct icase {
    int64_t x, y;
    int div, mod;
} icase;

static void test_semantics(jit *J)
{
    ir_type args[1] = {IR_I64};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "ops", NULL, 0, args, 1);
    t->gtmp_bytes = SLOTS * 8;
    ir_builder b;
    ir_builder_init(&b, t);
    memset(buf, 0, sizeof buf);
    next_slot = 0;

    static const int64_t i32_pairs[][2] = {
        {7, 2}, {-7, 2}, {7, -2}, {-7, -2}, {7, 0}, {-7, 0}, {INT32_MIN, -1}, {INT32_MIN, 1},
        {0, -3}, {-6, 3}, {6, -3}, {INT32_MAX, -1}, {-1, INT32_MIN}, {INT32_MIN, INT32_MIN},
        {5, 7}, {-5, 7}};
    enum { NI = sizeof i32_pairs / sizeof i32_pairs[0] };
    icase c32[NI], c64[NI];
    for (int k = 0; k < NI; k++) {
        int64_t x = i32_pairs[k][0], y = i32_pairs[k][1];
        ir_stmt *a = in_i(&b, IR_I32, x), *d = in_i(&b, IR_I32, y);
        c32[k] = (icase){x, y, out(&b, ir_binary(&b, IR_DIV, a, d)),
                         out(&b, ir_binary(&b, IR_MOD, a, d))};
        /* the same in 64 bits, with the i32 minimum scaled to the i64 one */
        int64_t X = x == INT32_MIN ? INT64_MIN : x, Y = y == INT32_MIN ? INT64_MIN : y;
        a = in_i(&b, IR_I64, X);
        d = in_i(&b, IR_I64, Y);
        c64[k] = (icase){X, Y, out(&b, ir_binary(&b, IR_DIV, a, d)),
                         out(&b, ir_binary(&b, IR_MOD, a, d))};
    }
    static const uint32_t u_pairs[][2] = {{7, 2}, {0xFFFFFFFFu, 0}, {0xFFFFFFFFu, 2}, {3, 0xFFFFFFFFu}};
    int udiv[4], umod[4];
    for (int k = 0; k < 4; k++) {
        ir_stmt *a = in_i(&b, IR_U32, u_pairs[k][0]), *d = in_i(&b, IR_U32, u_pairs[k][1]);
        udiv[k] = out(&b, ir_binary(&b, IR_DIV, a, d));
        umod[k] = out(&b, ir_binary(&b, IR_MOD, a, d));
    }
    /* shifts: count modulo the width */
    int sh1 = out(&b, ir_binary(&b, IR_SHL, in_i(&b, IR_I32, 1), in_i(&b, IR_I32, 33)));
    int sh2 = out(&b, ir_binary(&b, IR_SHR, in_i(&b, IR_I32, -8), in_i(&b, IR_I32, 33)));
    int sh3 = out(&b, ir_binary(&b, IR_SHR, in_i(&b, IR_U32, 0x80000000u), in_i(&b, IR_U32, 63)));
    int sh4 = out(&b, ir_binary(&b, IR_SHL, in_i(&b, IR_I64, 1), in_i(&b, IR_I64, 65)));
    int sh5 = out(&b, ir_binary(&b, IR_SHL, in_i(&b, IR_I32, 3), in_i(&b, IR_I32, -1)));
    /* floats: NaN in min/max and comparisons, float mod */
    ir_stmt *nan = in_f(&b, IR_F32, NAN);
    int fmin1 = out(&b, ir_binary(&b, IR_MIN, nan, in_f(&b, IR_F32, 2)));
    int fmax1 = out(&b, ir_binary(&b, IR_MAX, in_f(&b, IR_F32, 3), nan));
    int fmin2 = out(&b, ir_binary(&b, IR_MIN, in_f(&b, IR_F32, -0.5), in_f(&b, IR_F32, 4)));
    int ne = out(&b, ir_binary(&b, IR_NE, nan, nan));
    int eq = out(&b, ir_binary(&b, IR_EQ, nan, nan));
    int lt = out(&b, ir_binary(&b, IR_LT, nan, in_f(&b, IR_F32, 1)));
    int fmod1 = out(&b, ir_binary(&b, IR_MOD, in_f(&b, IR_F32, -7.5), in_f(&b, IR_F32, 2)));
    /* casts saturate; NaN -> 0 */
    int c1 = out(&b, ir_cast(&b, IR_I32, nan));
    int c2 = out(&b, ir_cast(&b, IR_I32, in_f(&b, IR_F32, 1e20)));
    int c3 = out(&b, ir_cast(&b, IR_I32, in_f(&b, IR_F32, -1e20)));
    int c4 = out(&b, ir_cast(&b, IR_U32, in_f(&b, IR_F32, -1.5)));
    int c5 = out(&b, ir_cast(&b, IR_I32, in_f(&b, IR_F32, -2.75)));
    int c6 = out(&b, ir_cast(&b, IR_BOOL, nan));
    int c7 = out(&b, ir_cast(&b, IR_BOOL, in_f(&b, IR_F32, 0.0)));
    int c8 = out(&b, ir_cast(&b, IR_I64, in_i(&b, IR_I32, -5)));
    int c9 = out(&b, ir_cast(&b, IR_I64, in_i(&b, IR_U32, 0xFFFFFFFFu)));
    int c10 = out(&b, ir_cast(&b, IR_F32, in_i(&b, IR_BOOL, 1)));
    /* unary */
    int u1 = out(&b, ir_unary(&b, IR_ABS, in_i(&b, IR_I32, INT32_MIN)));
    int u2 = out(&b, ir_unary(&b, IR_ABS, in_i(&b, IR_I32, -9)));
    int u3 = out(&b, ir_unary(&b, IR_BITNOT, in_i(&b, IR_I32, 5)));
    int u4 = out(&b, ir_unary(&b, IR_NOT, in_i(&b, IR_BOOL, 1)));
    int u5 = out(&b, ir_unary(&b, IR_FLOOR, in_f(&b, IR_F32, -2.5)));
    int u6 = out(&b, ir_unary(&b, IR_ROUND, in_f(&b, IR_F32, 2.5)));
    int u7 = out(&b, ir_unary(&b, IR_ABS, in_f(&b, IR_F32, -3.25)));
    /* math: libm through the JIT */
    ir_stmt *h = in_f(&b, IR_F32, 0.5);
    int m_sin = out(&b, ir_unary(&b, IR_SIN, h)), m_cos = out(&b, ir_unary(&b, IR_COS, h));
    int m_tan = out(&b, ir_unary(&b, IR_TAN, h)), m_exp = out(&b, ir_unary(&b, IR_EXP, h));
    int m_log = out(&b, ir_unary(&b, IR_LOG, h)), m_sqrt = out(&b, ir_unary(&b, IR_SQRT, h));
    int m_pow = out(&b, ir_binary(&b, IR_POW, in_f(&b, IR_F32, 2), h));
    int m_atan2 = out(&b, ir_binary(&b, IR_ATAN2, in_f(&b, IR_F32, 1), in_f(&b, IR_F32, -1)));
    ir_stmt *hd = in_f(&b, IR_F64, 0.5);
    int m_sind = out(&b, ir_unary(&b, IR_SIN, hd));
    /* CAS-loop atomics on temporaries (the old value comes back) */
    int am = next_slot++, ad = next_slot++, afm = next_slot++, amin = next_slot++;
    int32_t six = 6;
    memcpy(&buf[am], &six, 4);
    int old_mul = out(&b, ir_atomic(&b, IR_ATOMIC_MUL, gtmp(&b, IR_I32, am), in_i(&b, IR_I32, -7)));
    int32_t m42 = -42;
    memcpy(&buf[ad], &m42, 4);
    ir_atomic(&b, IR_ATOMIC_DIV, gtmp(&b, IR_I32, ad), in_i(&b, IR_I32, 4));
    float fv = 2.0f;
    memcpy(&buf[afm], &fv, 4);
    ir_atomic(&b, IR_ATOMIC_MAX, gtmp(&b, IR_F32, afm), in_f(&b, IR_F32, 3.5));
    ir_atomic(&b, IR_ATOMIC_MAX, gtmp(&b, IR_F32, afm), in_f(&b, IR_F32, -1));
    int32_t ten = 10;
    memcpy(&buf[amin], &ten, 4);
    ir_atomic(&b, IR_ATOMIC_MIN, gtmp(&b, IR_I32, amin), in_i(&b, IR_I32, -3));
    /* select and a while loop with break: sum 1..10 */
    ir_stmt *acc = ir_alloca(&b, IR_I32), *k = ir_alloca(&b, IR_I32);
    ir_stmt *w = ir_while(&b);
    ir_builder_at_end(&b, w->body);
    ir_stmt *kv = ir_binary(&b, IR_ADD, ir_load(&b, k), ir_const_i32(&b, 1));
    ir_store(&b, k, kv);
    ir_store(&b, acc, ir_binary(&b, IR_ADD, ir_load(&b, acc), kv));
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_GE, kv, ir_const_i32(&b, 10)));
    ir_builder_at_end(&b, iff->body);
    ir_break(&b, w);
    ir_builder_init(&b, t);
    int wsum = out(&b, ir_select(&b, ir_binary(&b, IR_GT, ir_load(&b, acc), ir_const_i32(&b, 0)),
                                 ir_load(&b, acc), ir_const_i32(&b, -1)));

    CHECK(next_slot <= SLOTS);
    void *addrs[2] = {NULL, NULL};
    if (compile_task(J, t, addrs) != 0) {
        CHECK(!"ops task compiles");
        ir_task_free(t);
        return;
    }
    uint64_t av[1] = {(uint64_t)(uintptr_t)buf};
    plm_task_ctx ctx = {NULL, NULL, av};
    ((plm_task_serial_fn)addrs[0])(&ctx);

    int bad = 0;
    for (int q = 0; q < NI; q++) {
        int32_t wd = (int32_t)(uint32_t)floor_div(c32[q].x, c32[q].y);
        int32_t wm = (int32_t)(uint32_t)floor_mod(c32[q].x, c32[q].y);
        if (get_i32(c32[q].div) != wd || get_i32(c32[q].mod) != wm) {
            fprintf(stderr, "i32 %lld / %lld: got %d %d, want %d %d\n", (long long)c32[q].x,
                    (long long)c32[q].y, get_i32(c32[q].div), get_i32(c32[q].mod), wd, wm);
            bad++;
        }
        if (get_i64(c64[q].div) != floor_div(c64[q].x, c64[q].y) ||
            get_i64(c64[q].mod) != floor_mod(c64[q].x, c64[q].y)) {
            fprintf(stderr, "i64 %lld / %lld wrong\n", (long long)c64[q].x, (long long)c64[q].y);
            bad++;
        }
    }
    CHECK_EQ(bad, 0);
    for (int q = 0; q < 4; q++) {
        uint32_t x = u_pairs[q][0], y = u_pairs[q][1];
        CHECK_EQ(get_u32(udiv[q]), y ? x / y : 0);
        CHECK_EQ(get_u32(umod[q]), y ? x % y : 0);
    }
    CHECK_EQ(get_i32(sh1), 2);
    CHECK_EQ(get_i32(sh2), -4);
    CHECK_EQ(get_u32(sh3), 1);
    CHECK_EQ(get_i64(sh4), 2);
    CHECK_EQ(get_u32(sh5), 0x80000000u); /* -1 & 31 = 31 */
    CHECK(get_f32(fmin1) == 2.0f);
    CHECK(get_f32(fmax1) == 3.0f);
    CHECK(get_f32(fmin2) == -0.5f);
    CHECK_EQ(get_u8(ne), 1);
    CHECK_EQ(get_u8(eq), 0);
    CHECK_EQ(get_u8(lt), 0);
    CHECK(get_f32(fmod1) == 0.5f);
    CHECK_EQ(get_i32(c1), 0);
    CHECK_EQ(get_i32(c2), INT32_MAX);
    CHECK_EQ(get_i32(c3), INT32_MIN);
    CHECK_EQ(get_u32(c4), 0);
    CHECK_EQ(get_i32(c5), -2);
    CHECK_EQ(get_u8(c6), 1);
    CHECK_EQ(get_u8(c7), 0);
    CHECK_EQ(get_i64(c8), -5);
    CHECK_EQ(get_i64(c9), 0xFFFFFFFFll);
    CHECK(get_f32(c10) == 1.0f);
    CHECK_EQ(get_i32(u1), INT32_MIN);
    CHECK_EQ(get_i32(u2), 9);
    CHECK_EQ(get_i32(u3), ~5);
    CHECK_EQ(get_u8(u4), 0);
    CHECK(get_f32(u5) == -3.0f);
    CHECK(get_f32(u6) == roundf(2.5f));
    CHECK(get_f32(u7) == 3.25f);
    volatile float half = 0.5f;
    CHECK(fabsf(get_f32(m_sin) - sinf(half)) <= 1e-7f);
    CHECK(fabsf(get_f32(m_cos) - cosf(half)) <= 1e-7f);
    CHECK(fabsf(get_f32(m_tan) - tanf(half)) <= 1e-7f);
    CHECK(fabsf(get_f32(m_exp) - expf(half)) <= 1e-6f);
    CHECK(fabsf(get_f32(m_log) - logf(half)) <= 1e-7f);
    CHECK(get_f32(m_sqrt) == sqrtf(half));
    CHECK(fabsf(get_f32(m_pow) - powf(2.0f, half)) <= 1e-6f);
    CHECK(fabsf(get_f32(m_atan2) - atan2f(1.0f, -1.0f)) <= 1e-6f);
    double sd;
    memcpy(&sd, &buf[m_sind], 8);
    CHECK(fabs(sd - sin((double)half)) <= 1e-15);
    CHECK_EQ(get_i32(old_mul), 6);
    CHECK_EQ(get_i32(am), -42);
    CHECK_EQ(get_i32(ad), -11); /* floor(-42 / 4) */
    CHECK(get_f32(afm) == 3.5f);
    CHECK_EQ(get_i32(amin), -3);
    CHECK_EQ(get_i32(wsum), 55);
    ir_task_free(t);
}

/* Input the code generator must refuse with a message, without crashing. */
static void test_errors(void)
{
    char err[1024];
    plm_tree *tree = NULL;
    CHECK(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(d)", 16u << 20, &tree, err, sizeof err) == 0);
    if (!tree)
        return;
    ir_field_info fi;
    field_info_from_tree(tree, "d", 3, &fi);
    char *text = NULL;

    /* not lowered: a global_ptr left */
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "unlowered", &fi, 1, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *z = ir_const_i32(&b, 0);
    ir_stmt *idx[3] = {z, z, z};
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, idx), ir_const_float(&b, IR_F32, 1));
    CHECK(jit_emit_text(NULL, cg_task_build, t, NULL, 0, JIT_EMIT_LLVM, &text, err,
                        sizeof err) != 0);
    CHECK_MSG(strstr(err, "not lowered") && strstr(err, "unlowered") && strstr(err, "global_ptr"),
              err);
    ir_task_free(t);

    /* a level without a runtime SNode id */
    ir_field_info bad = fi;
    bad.levels[2].rt_snode = -1;
    t = ir_task_new(IR_TASK_SERIAL, "no_ids", &bad, 1, NULL, 0);
    ir_builder_init(&b, t);
    z = ir_const_i32(&b, 0);
    ir_stmt *idx2[3] = {z, z, z};
    ir_global_store(&b, lowered_ptr(&b, 0, 0, idx2, 1), ir_const_float(&b, IR_F32, 1));
    CHECK(jit_emit_text(NULL, cg_task_build, t, NULL, 0, JIT_EMIT_LLVM, &text, err,
                        sizeof err) != 0);
    CHECK_MSG(strstr(err, "rt_snode") != NULL, err);
    ir_task_free(t);

    /* kinds without code */
    t = ir_task_new(IR_TASK_LISTGEN, "lg", &fi, 1, NULL, 0);
    jit_request req;
    void *addrs[2];
    CHECK(cg_task_request(t, addrs, NULL, &req, err, sizeof err) != 0);
    CHECK(jit_emit_text(NULL, cg_task_build, t, NULL, 0, JIT_EMIT_LLVM, &text, err,
                        sizeof err) != 0);
    CHECK_MSG(strstr(err, "no generated code") != NULL, err);
    ir_task_free(t);
    CHECK(text == NULL);
    plm_tree_destroy(tree);
}

/* The optimized code of a dense access chain: geometry loads marked invariant, the runtime
 * inlined and range errors noted without a branch (no call left in the function). The loop is
 * not vectorized: per-level index arithmetic is not affine in the loop index (see docs). */
static void test_code_shape(void)
{
    char err[1024];
    plm_tree *tree = NULL;
    CHECK(plm_tree_create("dense(i,64).dense(i,256).place(x, y)", 16u << 20, &tree, err,
                          sizeof err) == 0);
    if (!tree)
        return;
    ir_field_info fields[2];
    field_info_from_tree(tree, "x", 1, &fields[0]);
    field_info_from_tree(tree, "y", 1, &fields[1]);
    ir_type args[1] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "axpy", fields, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 16384), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *py = lowered_ptr(&b, 1, 0, &i, 1);
    ir_global_store(&b, py, ir_binary(&b, IR_ADD, ir_global_load(&b, py),
                                      ir_binary(&b, IR_MUL, ir_arg(&b, IR_F32, 0),
                                                ir_global_load(&b, lowered_ptr(&b, 0, 0, &i, 0)))));
    jit_config cfg = jit_config_default();
    cfg.runtime_bc = plm_runtime_bc_x86_64;
    cfg.runtime_bc_size = plm_runtime_bc_x86_64_size;
    char *text = NULL;
    const char *syms[2] = {CG_TASK_SYMBOL, CG_TASK_BOUNDS_SYMBOL};
    CHECK_MSG(jit_emit_text(&cfg, cg_task_build, t, syms, 2, JIT_EMIT_LLVM, &text, err,
                            sizeof err) == 0, err);
    if (text) {
        CHECK(strstr(text, "define void @plm_task(ptr") != NULL);
        CHECK(strstr(text, "define void @plm_task_bounds(ptr") != NULL);
        CHECK(strstr(text, "!invariant.load") != NULL);
        /* LLVM intrinsics (llvm.smax clamping the chunk to the loop's start) are instructions,
         * not calls */
        int calls = 0;
        for (const char *c = strstr(text, "call "); c; c = strstr(c + 5, "call "))
            calls += strncmp(strchr(c, '@') ? strchr(c, '@') : c, "@llvm.", 6) != 0;
        CHECK_MSG(calls == 0, "a call is left in the dense loop");
        CHECK_MSG(strstr(text, "@llvm.smax.i64") != NULL, "the chunk is not clamped to the loop's start");
        free(text);
    }
    ir_task_free(t);
    plm_tree_destroy(tree);
}

int main(void)
{
    jit *J = make_jit();
    if (!J)
        return 1;
    test_semantics(J);
    test_errors();
    test_code_shape();
    jit_destroy(J);
    CHECK_DONE();
}
