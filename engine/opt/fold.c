/* Constant folding: unary and binary operators, selects and casts whose operands are all
 * constants become constants, evaluated with exactly the semantics the code generator emits
 * (engine/codegen/emit_arith.c): wrap-around integers, floored division and modulo with
 * x/0 = x%0 = 0 and x/-1 = -x, shift counts modulo the width, f32 arithmetic rounded to f32
 * at every step, saturating float->int casts (NaN -> 0). */
#include "engine/opt/opt_internal.h"

#include <math.h>

int64_t opt_norm_int(ir_type ty, int64_t v)
{
    switch (ty) {
    case IR_BOOL: return v != 0;
    case IR_I32: return (int32_t)(uint32_t)(uint64_t)v;
    case IR_U32: return (uint32_t)(uint64_t)v;
    default: return v;
    }
}

static int bits_of(ir_type ty) { return ty == IR_I64 ? 64 : 32; }

static int64_t shift_right(ir_type ty, int64_t x, unsigned n)
{
    if (ty == IR_U32)
        return (int64_t)((uint32_t)x >> n);
    /* arithmetic: spelled without >> on a negative value */
    return x >= 0 ? x >> n : ~(~x >> n);
}

static int int_binary(int op, ir_type ty, int64_t x, int64_t y, int64_t *r)
{
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    int sg = ir_type_is_signed(ty);
    switch (op) {
    case IR_ADD: *r = (int64_t)(ux + uy); break;
    case IR_SUB: *r = (int64_t)(ux - uy); break;
    case IR_MUL: *r = (int64_t)(ux * uy); break;
    case IR_DIV:
    case IR_MOD:
        if (y == 0) {
            *r = 0;
        } else if (!sg) {
            *r = (int64_t)(op == IR_DIV ? (uint32_t)x / (uint32_t)y : (uint32_t)x % (uint32_t)y);
        } else if (y == -1) {
            *r = op == IR_DIV ? (int64_t)(0 - ux) : 0;
        } else {
            int64_t q = x / y, m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) {
                q -= 1;
                m += y;
            }
            *r = op == IR_DIV ? q : m;
        }
        break;
    case IR_MIN: *r = x < y ? x : y; break; /* u32 values are zero-extended: order holds */
    case IR_MAX: *r = x > y ? x : y; break;
    case IR_AND: *r = (int64_t)(ux & uy); break;
    case IR_OR: *r = (int64_t)(ux | uy); break;
    case IR_XOR: *r = (int64_t)(ux ^ uy); break;
    case IR_SHL: *r = (int64_t)(ux << (uy & (unsigned)(bits_of(ty) - 1))); break;
    case IR_SHR: *r = shift_right(ty, x, (unsigned)(uy & (unsigned)(bits_of(ty) - 1))); break;
    default: return -1;
    }
    *r = opt_norm_int(ty, *r);
    return 0;
}

static int cmp(int op, int lt, int eq, int gt)
{
    switch (op) {
    case IR_LT: return lt;
    case IR_LE: return lt || eq;
    case IR_GT: return gt;
    case IR_GE: return gt || eq;
    case IR_EQ: return eq;
    default: return !eq; /* ne: true for NaN too, as fcmp une */
    }
}

static int zeros_of_other_sign(double x, double y)
{
    return x == 0 && y == 0 && signbit(x) != signbit(y);
}

/* f32: every operation rounds to float; separate statements keep the compiler from fusing
 * a multiply and a subtraction, which the generated code never does. */
static int f32_binary(int op, float x, float y, double *r)
{
    float v;
    switch (op) {
    case IR_ADD: v = x + y; break;
    case IR_SUB: v = x - y; break;
    case IR_MUL: v = x * y; break;
    case IR_DIV: v = x / y; break;
    case IR_MOD: {
        float q = x / y;
        q = floorf(q);
        float p = y * q;
        v = x - p;
        break;
    }
    case IR_MIN:
    case IR_MAX:
        if (zeros_of_other_sign(x, y))
            return -1;
        v = op == IR_MIN ? fminf(x, y) : fmaxf(x, y);
        break;
    default: return -1;
    }
    *r = v;
    return 0;
}

static int f64_binary(int op, double x, double y, double *r)
{
    switch (op) {
    case IR_ADD: *r = x + y; break;
    case IR_SUB: *r = x - y; break;
    case IR_MUL: *r = x * y; break;
    case IR_DIV: *r = x / y; break;
    case IR_MOD: {
        double q = x / y;
        q = floor(q);
        double p = y * q;
        *r = x - p;
        break;
    }
    case IR_MIN:
    case IR_MAX:
        if (zeros_of_other_sign(x, y))
            return -1;
        *r = op == IR_MIN ? fmin(x, y) : fmax(x, y);
        break;
    default: return -1;
    }
    return 0;
}

int opt_eval_binary(int op, ir_type ty, opt_val a, opt_val b, opt_val *out)
{
    out->i = 0;
    out->f = 0;
    if (ir_binop_is_cmp(op)) {
        if (ir_type_is_float(ty)) {
            double x = a.f, y = b.f;
            out->i = cmp(op, x < y, x == y, x > y);
        } else if (ir_type_is_int(ty) || (ty == IR_BOOL && (op == IR_EQ || op == IR_NE))) {
            out->i = cmp(op, a.i < b.i, a.i == b.i, a.i > b.i);
        } else {
            return -1;
        }
        return 0;
    }
    if (ty == IR_BOOL) {
        int x = a.i != 0, y = b.i != 0;
        switch (op) {
        case IR_AND: out->i = x && y; return 0;
        case IR_OR: out->i = x || y; return 0;
        case IR_XOR: out->i = x != y; return 0;
        default: return -1;
        }
    }
    if (ir_type_is_int(ty))
        return int_binary(op, ty, a.i, b.i, &out->i);
    if (ty == IR_F32)
        return f32_binary(op, (float)a.f, (float)b.f, &out->f);
    if (ty == IR_F64)
        return f64_binary(op, a.f, b.f, &out->f);
    return -1;
}

int opt_eval_unary(int op, ir_type ty, opt_val a, opt_val *out)
{
    out->i = 0;
    out->f = 0;
    if (ty == IR_BOOL) {
        if (op != IR_NOT)
            return -1;
        out->i = a.i == 0;
        return 0;
    }
    if (ir_type_is_int(ty)) {
        switch (op) {
        case IR_NEG: out->i = (int64_t)(0 - (uint64_t)a.i); break;
        case IR_BITNOT: out->i = (int64_t)~(uint64_t)a.i; break;
        case IR_FLOOR: case IR_CEIL: case IR_ROUND: case IR_TRUNC: out->i = a.i; break;
        case IR_ABS:
            out->i = ty == IR_U32 || a.i >= 0 ? a.i : (int64_t)(0 - (uint64_t)a.i);
            break;
        default: return -1;
        }
        out->i = opt_norm_int(ty, out->i);
        return 0;
    }
    if (ty == IR_F32) {
        float x = (float)a.f, v;
        switch (op) {
        case IR_NEG: v = -x; break;
        case IR_SQRT: v = sqrtf(x); break; /* correctly rounded everywhere (IEEE) */
        case IR_FLOOR: v = floorf(x); break;
        case IR_CEIL: v = ceilf(x); break;
        case IR_ROUND: v = roundf(x); break; /* halves away from zero, as llvm.round */
        case IR_TRUNC: v = truncf(x); break;
        case IR_ABS: v = fabsf(x); break;
        default: return -1;
        }
        out->f = v;
        return 0;
    }
    if (ty == IR_F64) {
        double x = a.f;
        switch (op) {
        case IR_NEG: out->f = -x; break;
        case IR_SQRT: out->f = sqrt(x); break;
        case IR_FLOOR: out->f = floor(x); break;
        case IR_CEIL: out->f = ceil(x); break;
        case IR_ROUND: out->f = round(x); break;
        case IR_TRUNC: out->f = trunc(x); break;
        case IR_ABS: out->f = fabs(x); break;
        default: return -1;
        }
        return 0;
    }
    return -1;
}

/* fptosi.sat / fptoui.sat: NaN -> 0, out-of-range values clamp. */
static int64_t float_to_int(ir_type to, double f)
{
    if (f != f)
        return 0;
    double t = trunc(f);
    if (to == IR_U32)
        return t <= 0 ? 0 : t >= 4294967295.0 ? (int64_t)UINT32_MAX : (int64_t)t;
    if (to == IR_I32)
        return t <= -2147483648.0 ? INT32_MIN : t >= 2147483647.0 ? INT32_MAX : (int64_t)t;
    return t < -9223372036854775808.0 ? INT64_MIN
           : t >= 9223372036854775808.0 ? INT64_MAX : (int64_t)t;
}

int opt_eval_cast(ir_type to, ir_type from, opt_val a, opt_val *out)
{
    out->i = 0;
    out->f = 0;
    int fin = ir_type_is_float(from), iin = ir_type_is_int(from) || from == IR_BOOL;
    if (!fin && !iin)
        return -1;
    if (to == IR_BOOL) {
        out->i = fin ? a.f != 0 : a.i != 0; /* NaN != 0: true, as fcmp une */
    } else if (ir_type_is_int(to)) {
        /* an int source holds its value already extended by its own signedness */
        out->i = opt_norm_int(to, fin ? float_to_int(to, a.f) : a.i);
    } else if (to == IR_F32) {
        if (fin)
            out->f = (float)a.f;
        else if (from == IR_I64)
            out->f = (float)a.i; /* one rounding, as sitofp */
        else
            out->f = (float)a.i; /* i32, u32, bool: exact in int64 */
    } else if (to == IR_F64) {
        out->f = fin ? a.f : (double)a.i;
    } else {
        return -1;
    }
    return 0;
}

static opt_val val_of(const ir_stmt *s)
{
    opt_val v = {s->ival, s->fval};
    return v;
}

static int fold_one(ir_stmt *s)
{
    opt_val r;
    for (int i = 0; i < s->nargs; i++)
        s->arg[i] = ir_resolve(s->arg[i]);
    switch (s->op) {
    case IR_UNARY:
        if (!opt_is_const(s->arg[0]) || opt_eval_unary(s->sub, s->ty, val_of(s->arg[0]), &r))
            return 0;
        break;
    case IR_BINARY:
        if (!opt_is_const(s->arg[0]) || !opt_is_const(s->arg[1]) ||
            opt_eval_binary(s->sub, s->arg[0]->ty, val_of(s->arg[0]), val_of(s->arg[1]), &r))
            return 0;
        break;
    case IR_CAST:
        if (!opt_is_const(s->arg[0]) || opt_eval_cast(s->ty, s->arg[0]->ty, val_of(s->arg[0]), &r))
            return 0;
        break;
    case IR_SELECT:
        if (!opt_is_const(s->arg[0]) || !opt_is_const(s->arg[1]) || !opt_is_const(s->arg[2]))
            return 0;
        r = val_of(s->arg[0]->ival ? s->arg[1] : s->arg[2]);
        break;
    case IR_FMA:
        /* one rounding, as the code's llvm.fma gives it */
        if (!opt_is_const(s->arg[0]) || !opt_is_const(s->arg[1]) || !opt_is_const(s->arg[2]))
            return 0;
        r.i = 0;
        r.f = s->ty == IR_F32 ? (double)fmaf((float)s->arg[0]->fval, (float)s->arg[1]->fval,
                                             (float)s->arg[2]->fval)
                              : fma(s->arg[0]->fval, s->arg[1]->fval, s->arg[2]->fval);
        break;
    default:
        return 0;
    }
    opt_make_const(s, r);
    return 1;
}

static int visit(ir_stmt *s, void *ud)
{
    *(int *)ud += fold_one(s);
    return 0;
}

int opt_fold(ir_task *t)
{
    int n = 0;
    ir_walk(t->body, visit, &n);
    return n;
}
