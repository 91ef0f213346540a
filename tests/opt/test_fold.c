/* Constant folding against the IR's semantics (ir.h; what engine/codegen emits): expected
 * values written from the definitions, and grids of edge values compared with references
 * computed another way in C (floored division through long double floor, shifts through
 * multiplication and division by powers of two, 64-bit arithmetic wrapped to 32 bits). */
#include "../ir/ir_test.h"
#include "engine/opt/opt.h"

#include <float.h>
#include <limits.h>
#include <math.h>

/* Builds `op(x, y)` (or a unary op / cast when y is NULL) on constants, runs the folder alone
 * and returns the statement, or NULL when it was not folded. */
typedef struct folded {
    ir_task *t;
    ir_stmt *s;
} folded;

static ir_stmt *mkconst(ir_builder *b, ir_type ty, int64_t i, double f)
{
    return ir_type_is_float(ty) ? ir_const_float(b, ty, f) : ir_const_int(b, ty, i);
}

enum { BIN, UN, CAST };

static int run_fold(int kind, int op, ir_type ty, ir_type to, int64_t xi, double xf, int64_t yi,
                    double yf, int64_t *ri, double *rf)
{
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "f", NULL, 0, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *x = mkconst(&b, ty, xi, xf);
    ir_stmt *y = kind == BIN ? mkconst(&b, ty, yi, yf) : NULL;
    ir_stmt *s = kind == BIN ? ir_binary(&b, op, x, y)
                 : kind == UN ? ir_unary(&b, op, x) : ir_cast(&b, to, x);
    char err[256];
    int rc = opt_run(t, OPT_ALL & ~OPT_FOLD, NULL, NULL, err, sizeof err);
    CHECK(rc == 0);
    must_verify(t, "fold");
    int ok = s->op == IR_CONST;
    if (ok) {
        *ri = s->ival;
        *rf = s->fval;
    }
    ir_task_free(t);
    return ok;
}

static int64_t ibin(int op, ir_type ty, int64_t x, int64_t y)
{
    int64_t r = 0x5a5a;
    double f;
    if (!run_fold(BIN, op, ty, ty, x, 0, y, 0, &r, &f)) {
        fprintf(stderr, "%s %s %lld %lld: not folded\n", ir_binop_name(op), ir_type_name(ty),
                (long long)x, (long long)y);
        check_failures++;
    }
    return r;
}

static double fbin(int op, ir_type ty, double x, double y, int64_t *cmp)
{
    int64_t r = 0;
    double f = -12345.0;
    if (!run_fold(BIN, op, ty, ty, 0, x, 0, y, &r, &f)) {
        fprintf(stderr, "%s %s %g %g: not folded\n", ir_binop_name(op), ir_type_name(ty), x, y);
        check_failures++;
    }
    if (cmp)
        *cmp = r;
    return f;
}

static int same_double(double a, double b)
{
    return (a != a && b != b) || (a == b && signbit(a) == signbit(b));
}

static void test_int_cases(void)
{
    /* floored division and modulo */
    CHECK(ibin(IR_DIV, IR_I32, -7, 2) == -4);
    CHECK(ibin(IR_MOD, IR_I32, -7, 2) == 1);
    CHECK(ibin(IR_DIV, IR_I32, 7, -2) == -4);
    CHECK(ibin(IR_MOD, IR_I32, 7, -2) == -1);
    CHECK(ibin(IR_DIV, IR_I32, -7, -2) == 3);
    CHECK(ibin(IR_MOD, IR_I32, -7, -2) == -1);
    CHECK(ibin(IR_DIV, IR_I32, INT32_MIN, -1) == INT32_MIN); /* 2^31 wraps */
    CHECK(ibin(IR_MOD, IR_I32, INT32_MIN, -1) == 0);
    CHECK(ibin(IR_DIV, IR_I32, 5, 0) == 0);
    CHECK(ibin(IR_MOD, IR_I32, 5, 0) == 0);
    CHECK(ibin(IR_MOD, IR_I32, -5, 0) == 0);
    CHECK(ibin(IR_DIV, IR_I64, INT64_MIN, -1) == INT64_MIN);
    CHECK(ibin(IR_DIV, IR_I64, -9, 4) == -3);
    CHECK(ibin(IR_MOD, IR_I64, -9, 4) == 3);
    CHECK(ibin(IR_DIV, IR_U32, 0xffffffffLL, 2) == 0x7fffffffLL);
    CHECK(ibin(IR_MOD, IR_U32, 7, 0) == 0);
    CHECK(ibin(IR_MOD, IR_U32, 0xffffffffLL, 10) == 5);
    /* wrap-around */
    CHECK(ibin(IR_ADD, IR_I32, INT32_MAX, 1) == INT32_MIN);
    CHECK(ibin(IR_MUL, IR_I32, 65536, 65536) == 0);
    CHECK(ibin(IR_SUB, IR_U32, 0, 1) == 4294967295LL);
    CHECK(ibin(IR_ADD, IR_I64, INT64_MAX, 1) == INT64_MIN);
    /* shifts: count modulo the width, shr arithmetic on signed */
    CHECK(ibin(IR_SHL, IR_I32, 1, 33) == 2);
    CHECK(ibin(IR_SHL, IR_I32, 1, -1) == INT32_MIN); /* -1 & 31 = 31 */
    CHECK(ibin(IR_SHR, IR_I32, -8, 1) == -4);
    CHECK(ibin(IR_SHR, IR_I32, -1, 35) == -1);
    CHECK(ibin(IR_SHR, IR_I32, -7, 1) == -4); /* floor(-3.5) */
    CHECK(ibin(IR_SHR, IR_U32, 0x80000000LL, 31) == 1);
    CHECK(ibin(IR_SHL, IR_I64, 1, 65) == 2);
    CHECK(ibin(IR_SHR, IR_I64, INT64_MIN, 63) == -1);
    /* unsigned order for min/max/compare */
    CHECK(ibin(IR_MIN, IR_U32, 1, 0xffffffffLL) == 1);
    CHECK(ibin(IR_MAX, IR_I32, -1, 1) == 1);
    CHECK(ibin(IR_LT, IR_U32, 1, 0xffffffffLL) == 1);
    CHECK(ibin(IR_LT, IR_I32, 1, -1) == 0);
    CHECK(ibin(IR_XOR, IR_BOOL, 1, 1) == 0);
    CHECK(ibin(IR_OR, IR_BOOL, 0, 1) == 1);
    CHECK(ibin(IR_EQ, IR_BOOL, 0, 0) == 1);
    CHECK(ibin(IR_AND, IR_U32, 0xf0f0f0f0LL, 0xff) == 0xf0);
}

static int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* Grid against references computed differently from the folder's code. */
static void test_int_grid(void)
{
    static const int32_t vals[] = {INT32_MIN, INT32_MIN + 1, -65537, -7, -2, -1, 0, 1, 2, 3,
                                   7, 65536, INT32_MAX - 1, INT32_MAX};
    int n = (int)(sizeof vals / sizeof vals[0]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int64_t x = vals[i], y = vals[j];
            int64_t q = y == 0 ? 0 : (int64_t)floorl((long double)x / (long double)y);
            int64_t m = y == 0 ? 0 : x - y * q;
            CHECK(ibin(IR_DIV, IR_I32, x, y) == wrap32(q));
            CHECK(ibin(IR_MOD, IR_I32, x, y) == wrap32(m));
            CHECK(ibin(IR_ADD, IR_I32, x, y) == wrap32(x + y));
            CHECK(ibin(IR_SUB, IR_I32, x, y) == wrap32(x - y));
            CHECK(ibin(IR_MUL, IR_I32, x, y) == wrap32((int64_t)((uint64_t)x * (uint64_t)y)));
            unsigned c = (unsigned)y & 31u;
            CHECK(ibin(IR_SHL, IR_I32, x, y) == wrap32((int64_t)((uint64_t)x * (1ull << c))));
            CHECK(ibin(IR_SHR, IR_I32, x, y) == (int64_t)floorl((long double)x / (1ull << c)));
            uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
            CHECK(ibin(IR_DIV, IR_U32, ux, uy) == (uy ? ux / uy : 0));
            CHECK(ibin(IR_SHR, IR_U32, ux, uy) == (int64_t)(ux / (1ull << (uy & 31u))));
            CHECK(ibin(IR_LE, IR_I32, x, y) == (x <= y));
            CHECK(ibin(IR_GT, IR_U32, ux, uy) == (ux > uy));
        }
}

static void test_float_cases(void)
{
    int64_t c;
    /* f32 rounds at every step; f64 keeps the extra bit */
    CHECK(fbin(IR_ADD, IR_F32, 16777216.0, 1.0, NULL) == 16777216.0);
    CHECK(fbin(IR_ADD, IR_F64, 16777216.0, 1.0, NULL) == 16777217.0);
    CHECK(fbin(IR_MUL, IR_F32, 1e20, 1e20, NULL) == INFINITY);
    volatile float a = 0.1f, b = 0.2f;
    float sum = a + b;
    CHECK(fbin(IR_ADD, IR_F32, 0.1f, 0.2f, NULL) == (double)sum);
    volatile float third = 1.0f / 3.0f;
    CHECK(fbin(IR_DIV, IR_F32, 1.0, 3.0, NULL) == (double)third);
    /* float mod: x - y * floor(x / y) */
    CHECK(fbin(IR_MOD, IR_F32, -1.0, 3.0, NULL) == 2.0);
    CHECK(fbin(IR_MOD, IR_F64, 5.5, -2.0, NULL) == -0.5);
    CHECK(same_double(fbin(IR_DIV, IR_F64, 1.0, 0.0, NULL), INFINITY));
    CHECK(same_double(fbin(IR_DIV, IR_F64, 0.0, 0.0, NULL), NAN));
    /* NaN-ignoring min/max, as llvm.minnum */
    CHECK(fbin(IR_MIN, IR_F32, NAN, 1.0, NULL) == 1.0);
    CHECK(fbin(IR_MAX, IR_F64, 2.0, NAN, NULL) == 2.0);
    /* comparisons: ordered, except ne */
    fbin(IR_LT, IR_F32, NAN, 1.0, &c);
    CHECK(c == 0);
    fbin(IR_NE, IR_F32, NAN, NAN, &c);
    CHECK(c == 1);
    fbin(IR_EQ, IR_F64, NAN, NAN, &c);
    CHECK(c == 0);
    fbin(IR_GE, IR_F64, -0.0, 0.0, &c);
    CHECK(c == 1);

    int64_t ri;
    double rf;
    /* not folded: min of zeros of both signs (minnum may return either), pow, transcendental */
    CHECK(!run_fold(BIN, IR_MIN, IR_F32, IR_F32, 0, -0.0, 0, 0.0, &ri, &rf));
    CHECK(!run_fold(BIN, IR_POW, IR_F64, IR_F64, 0, 2.0, 0, 3.0, &ri, &rf));
    CHECK(!run_fold(UN, IR_SIN, IR_F32, IR_F32, 0, 1.0, 0, 0, &ri, &rf));
    CHECK(!run_fold(UN, IR_EXP, IR_F64, IR_F64, 0, 1.0, 0, 0, &ri, &rf));
}

static double fun(int op, ir_type ty, double x)
{
    int64_t ri = 0;
    double rf = -12345.0;
    CHECK(run_fold(UN, op, ty, ty, 0, x, 0, 0, &ri, &rf));
    return rf;
}

static int64_t iun(int op, ir_type ty, int64_t x)
{
    int64_t ri = 0x5a5a;
    double rf;
    CHECK(run_fold(UN, op, ty, ty, x, 0, 0, 0, &ri, &rf));
    return ri;
}

static void test_unary(void)
{
    CHECK(fun(IR_ROUND, IR_F32, 2.5) == 3.0);   /* halves away from zero */
    CHECK(fun(IR_ROUND, IR_F32, -2.5) == -3.0);
    CHECK(same_double(fun(IR_FLOOR, IR_F64, -0.5), -1.0));
    CHECK(same_double(fun(IR_CEIL, IR_F64, -0.5), -0.0));
    CHECK(same_double(fun(IR_TRUNC, IR_F32, -1.75), -1.0));
    CHECK(same_double(fun(IR_NEG, IR_F32, 0.0), -0.0));
    CHECK(fun(IR_ABS, IR_F64, -3.5) == 3.5);
    volatile float two = 2.0f;
    CHECK(fun(IR_SQRT, IR_F32, 2.0) == (double)sqrtf(two));
    CHECK(fun(IR_SQRT, IR_F64, 2.0) == sqrt(2.0));
    CHECK(iun(IR_ABS, IR_I32, INT32_MIN) == INT32_MIN);
    CHECK(iun(IR_NEG, IR_I32, INT32_MIN) == INT32_MIN);
    CHECK(iun(IR_NEG, IR_U32, 1) == 4294967295LL);
    CHECK(iun(IR_BITNOT, IR_U32, 0) == 4294967295LL);
    CHECK(iun(IR_BITNOT, IR_I32, 0) == -1);
    CHECK(iun(IR_NOT, IR_BOOL, 0) == 1);
    CHECK(iun(IR_FLOOR, IR_I32, -7) == -7);
}

static int64_t icast(ir_type to, ir_type from, int64_t xi, double xf)
{
    int64_t ri = 0x5a5a;
    double rf;
    CHECK(run_fold(CAST, 0, from, to, xi, xf, 0, 0, &ri, &rf));
    return ri;
}

static double fcast(ir_type to, ir_type from, int64_t xi, double xf)
{
    int64_t ri;
    double rf = -12345.0;
    CHECK(run_fold(CAST, 0, from, to, xi, xf, 0, 0, &ri, &rf));
    return rf;
}

static void test_casts(void)
{
    /* float -> int truncates and saturates, NaN gives 0 */
    CHECK(icast(IR_I32, IR_F32, 0, 3.7) == 3);
    CHECK(icast(IR_I32, IR_F32, 0, -3.7) == -3);
    CHECK(icast(IR_I32, IR_F32, 0, NAN) == 0);
    CHECK(icast(IR_I32, IR_F64, 0, 3e9) == INT32_MAX);
    CHECK(icast(IR_I32, IR_F64, 0, -3e9) == INT32_MIN);
    CHECK(icast(IR_U32, IR_F32, 0, -1.5) == 0);
    CHECK(icast(IR_U32, IR_F64, 0, 1e10) == 4294967295LL);
    CHECK(icast(IR_I64, IR_F64, 0, 1e300) == INT64_MAX);
    CHECK(icast(IR_I64, IR_F64, 0, -1e300) == INT64_MIN);
    /* int -> int: the source's signedness extends, the target truncates */
    CHECK(icast(IR_U32, IR_I32, -1, 0) == 4294967295LL);
    CHECK(icast(IR_I64, IR_U32, 4294967295LL, 0) == 4294967295LL);
    CHECK(icast(IR_I64, IR_I32, -1, 0) == -1);
    CHECK(icast(IR_I32, IR_I64, (1LL << 40) + 5, 0) == 5);
    CHECK(icast(IR_I32, IR_U32, 4294967295LL, 0) == -1);
    CHECK(icast(IR_I32, IR_BOOL, 1, 0) == 1);
    /* to bool: != 0, NaN is true */
    CHECK(icast(IR_BOOL, IR_F32, 0, NAN) == 1);
    CHECK(icast(IR_BOOL, IR_F64, 0, -0.0) == 0);
    CHECK(icast(IR_BOOL, IR_I64, 1LL << 40, 0) == 1);
    /* to float: one rounding to the target */
    CHECK(fcast(IR_F32, IR_I32, 16777217, 0) == 16777216.0);
    CHECK(fcast(IR_F64, IR_I32, 16777217, 0) == 16777217.0);
    CHECK(fcast(IR_F32, IR_U32, 4294967295LL, 0) == 4294967296.0);
    CHECK(fcast(IR_F32, IR_I64, (1LL << 60) + 1, 0) == 1152921504606846976.0);
    CHECK(fcast(IR_F32, IR_F64, 0, 0.1) == (double)0.1f);
    CHECK(fcast(IR_F32, IR_BOOL, 1, 0) == 1.0);
    CHECK(fcast(IR_F64, IR_F32, 0, 0.1f) == (double)0.1f);
}

static void test_select(void)
{
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "sel", NULL, 0, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *c = ir_const_int(&b, IR_BOOL, 0);
    ir_stmt *x = ir_const_i32(&b, 10);
    ir_stmt *y = ir_const_i32(&b, 20);
    ir_stmt *s = ir_select(&b, c, x, y);
    char err[128];
    CHECK(opt_run(t, OPT_ALL & ~OPT_FOLD, NULL, NULL, err, sizeof err) == 0);
    CHECK(s->op == IR_CONST && s->ival == 20 && s->nargs == 0);
    ir_task_free(t);
}

int main(void)
{
    test_int_cases();
    test_int_grid();
    test_float_cases();
    test_unary();
    test_casts();
    test_select();
    return ir_test_result("opt_fold");
}
