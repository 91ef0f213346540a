/* consteval.c — evaluation of constant expressions on the checked AST (global constants,
 * static-loop bounds, constant component indices). Arithmetic follows the language's run-time
 * rules: integers wrap to their type, signed division and remainder are floored, f32 results
 * are rounded to f32 after each operation. No C undefined behaviour on any input. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

static int ncomp(pk_type t) { return pk_type_components(t); }
static bool flt(pk_type t) { return pk_is_float_kind(pk_type_scalar(t).kind); }

static double to_f32(double x) {
    if (isfinite(x) && fabs(x) > FLT_MAX)
        return x > 0 ? INFINITY : -INFINITY;
    return (double)(float)x;
}

static int64_t wrap(int64_t x, int kind) {
    switch (kind) {
    case PK_T_I32: return (int32_t)(uint32_t)(uint64_t)x;
    case PK_T_U32: return (int64_t)((uint64_t)x & 0xffffffffu);
    case PK_T_BOOL: return x != 0;
    default: return x;
    }
}

static void normalize(pk_value *v) {
    pk_type s = pk_type_scalar(v->type);
    int n = ncomp(v->type);
    for (int i = 0; i < n; i++) {
        if (pk_is_float_kind(s.kind))
            v->f[i] = s.kind == PK_T_F32 ? to_f32(v->f[i]) : v->f[i];
        else
            v->i[i] = wrap(v->i[i], s.kind);
    }
}

/* float -> integer conversion; false when out of range (C would have undefined behaviour). */
static bool f2i(double x, int kind, int64_t *out) {
    double t = trunc(x);
    double lo = kind == PK_T_I32 ? -2147483648.0 : kind == PK_T_U32 ? 0.0 : -9223372036854775808.0;
    double hi = kind == PK_T_I32 ? 2147483647.0 : kind == PK_T_U32 ? 4294967295.0 : 9223372036854775807.0;
    if (!(t >= lo && t <= hi) || (kind == PK_T_I64 && t >= 9223372036854775807.0))
        return false;
    *out = (int64_t)t;
    return true;
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}
static int64_t floormod(int64_t a, int64_t b) {
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

typedef struct ev {
    pk_ctx *c;
    const char *why;
} ev;

static bool eval(ev *E, const pk_expr *e, pk_value *out);

static bool binary(ev *E, const pk_expr *e, const pk_value *a, const pk_value *b, pk_value *o) {
    int op = e->op;
    pk_type ot = a->type; /* operand type */
    int n = ncomp(ot);
    int kind = pk_type_scalar(ot).kind;
    o->type = e->type;
    if (op == PK_OP_MATMUL) {
        int cols = b->type.kind == PK_T_MAT3 ? 3 : 1;
        for (int c = 0; c < cols; c++)
            for (int r = 0; r < 3; r++) {
                double s = 0;
                for (int j = 0; j < 3; j++)
                    s += a->f[j * 3 + r] * b->f[c * 3 + j];
                o->f[c * 3 + r] = s;
            }
        normalize(o);
        return true;
    }
    if (op >= PK_OP_LT && op <= PK_OP_NE) {
        int r;
        if (pk_is_float_kind(kind)) {
            double x = a->f[0], y = b->f[0];
            r = op == PK_OP_LT ? x < y : op == PK_OP_LE ? x <= y : op == PK_OP_GT ? x > y
              : op == PK_OP_GE ? x >= y : op == PK_OP_EQ ? x == y : x != y;
        } else {
            int64_t x = a->i[0], y = b->i[0];
            r = op == PK_OP_LT ? x < y : op == PK_OP_LE ? x <= y : op == PK_OP_GT ? x > y
              : op == PK_OP_GE ? x >= y : op == PK_OP_EQ ? x == y : x != y;
        }
        o->i[0] = r;
        return true;
    }
    for (int i = 0; i < n; i++) {
        if (pk_is_float_kind(kind)) {
            double x = a->f[i], y = b->f[i];
            switch (op) {
            case PK_OP_ADD: o->f[i] = x + y; break;
            case PK_OP_SUB: o->f[i] = x - y; break;
            case PK_OP_MUL: o->f[i] = x * y; break;
            case PK_OP_DIV: o->f[i] = x / y; break;
            default: return false;
            }
            continue;
        }
        int64_t x = a->i[i], y = b->i[i];
        uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
        switch (op) {
        case PK_OP_ADD: o->i[i] = (int64_t)(ux + uy); break;
        case PK_OP_SUB: o->i[i] = (int64_t)(ux - uy); break;
        case PK_OP_MUL: o->i[i] = (int64_t)(ux * uy); break;
        case PK_OP_DIV:
        case PK_OP_MOD:
            if (y == 0) {
                E->why = "divides by zero";
                return false;
            }
            if (x == INT64_MIN && y == -1) {
                E->why = "overflows";
                return false;
            }
            if (kind == PK_T_U32)
                o->i[i] = op == PK_OP_DIV ? (int64_t)(ux / uy) : (int64_t)(ux % uy);
            else
                o->i[i] = op == PK_OP_DIV ? floordiv(x, y) : floormod(x, y);
            break;
        case PK_OP_AND: o->i[i] = x && y; break;
        case PK_OP_OR: o->i[i] = x || y; break;
        case PK_OP_BITAND: o->i[i] = x & y; break;
        case PK_OP_BITOR: o->i[i] = x | y; break;
        case PK_OP_BITXOR: o->i[i] = x ^ y; break;
        case PK_OP_SHL:
        case PK_OP_SHR: {
            int bits = kind == PK_T_I64 ? 64 : 32;
            if (y < 0 || y >= bits) {
                E->why = "shifts by an amount out of range";
                return false;
            }
            if (op == PK_OP_SHL)
                o->i[i] = (int64_t)(ux << y);
            else if (kind == PK_T_U32)
                o->i[i] = (int64_t)(ux >> y);
            else
                o->i[i] = x >= 0 ? x >> y : ~(~x >> y);
            break;
        }
        default:
            return false;
        }
    }
    normalize(o);
    return true;
}

static bool cast(ev *E, const pk_value *a, pk_type t, pk_value *o) {
    int n = ncomp(t);
    int from = pk_type_scalar(a->type).kind, to = pk_type_scalar(t).kind;
    o->type = t;
    for (int i = 0; i < n; i++) {
        if (pk_is_float_kind(to)) {
            o->f[i] = pk_is_float_kind(from) ? a->f[i] : (double)a->i[i];
        } else if (pk_is_float_kind(from)) {
            if (!f2i(a->f[i], to, &o->i[i])) {
                E->why = "converts a value out of range";
                return false;
            }
        } else {
            o->i[i] = a->i[i];
        }
    }
    normalize(o);
    return true;
}

/* As the generated code computes them (lower_builtin.c, emit_arith.c): sign of NaN and of
 * -0 is 0; min and max are IEEE minNum/maxNum (a NaN operand yields the other one); clamp is
 * min(max(x, lo), hi), so lo > hi gives hi. */
static double fsign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }
static double fmin_num(double x, double y) { return isnan(x) ? y : isnan(y) ? x : x < y ? x : y; }
static double fmax_num(double x, double y) { return isnan(x) ? y : isnan(y) ? x : x > y ? x : y; }

static bool builtin(ev *E, const pk_expr *e, pk_value *o) {
    pk_value a[3];
    if (e->nargs > 3)
        return false;
    for (uint32_t i = 0; i < e->nargs; i++) {
        if (e->args[i]->kind == PK_E_FIELD_REF || !eval(E, e->args[i], &a[i]))
            return false;
    }
    int b = e->builtin;
    o->type = e->type;
    int n = ncomp(e->nargs ? a[0].type : e->type);
    bool isf = e->nargs && flt(a[0].type);
    /* f32 components: each product and sum rounded to f32, as the generated code does */
    bool f32s = isf && pk_type_scalar(a[0].type).kind == PK_T_F32;
    switch (b) {
    case PK_B_DOT: {
        double s = 0;
        int64_t si = 0;
        for (int i = 0; i < n; i++) {
            s = f32s ? to_f32(s + to_f32(a[0].f[i] * a[1].f[i])) : s + a[0].f[i] * a[1].f[i];
            si = (int64_t)((uint64_t)si + (uint64_t)a[0].i[i] * (uint64_t)a[1].i[i]);
        }
        o->f[0] = s;
        o->i[0] = si;
        normalize(o);
        return true;
    }
    case PK_B_CROSS:
        o->f[0] = a[0].f[1] * a[1].f[2] - a[0].f[2] * a[1].f[1];
        o->f[1] = a[0].f[2] * a[1].f[0] - a[0].f[0] * a[1].f[2];
        o->f[2] = a[0].f[0] * a[1].f[1] - a[0].f[1] * a[1].f[0];
        normalize(o);
        return true;
    case PK_B_LENGTH:
    case PK_B_NORMALIZE: {
        /* in the vector's type, as at run time: an f32 length of 1e20 overflows there too */
        double s = 0;
        for (int i = 0; i < n; i++)
            s = f32s ? to_f32(s + to_f32(a[0].f[i] * a[0].f[i])) : s + a[0].f[i] * a[0].f[i];
        s = f32s ? to_f32(sqrt(s)) : sqrt(s);
        if (b == PK_B_LENGTH)
            o->f[0] = s;
        else
            for (int i = 0; i < n; i++)
                o->f[i] = a[0].f[i] / s;
        normalize(o);
        return true;
    }
    case PK_B_TRANSPOSE:
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++)
                o->f[c * 3 + r] = a[0].f[r * 3 + c];
        normalize(o);
        return true;
    case PK_B_DETERMINANT: {
        const double *m = a[0].f;
        o->f[0] = m[0] * (m[4] * m[8] - m[7] * m[5]) - m[3] * (m[1] * m[8] - m[7] * m[2]) +
                  m[6] * (m[1] * m[5] - m[4] * m[2]);
        normalize(o);
        return true;
    }
    default:
        break;
    }
    for (int i = 0; i < n; i++) {
        double x = a[0].f[i], y = e->nargs > 1 ? a[1].f[i] : 0, z = e->nargs > 2 ? a[2].f[i] : 0;
        int64_t p = a[0].i[i], q = e->nargs > 1 ? a[1].i[i] : 0, r = e->nargs > 2 ? a[2].i[i] : 0;
        if (!isf) {
            switch (b) {
            case PK_B_ABS:
                if (p == INT64_MIN)
                    return false;
                o->i[i] = p < 0 ? -p : p;
                break;
            case PK_B_SIGN: o->i[i] = (p > 0) - (p < 0); break;
            case PK_B_MIN: o->i[i] = p < q ? p : q; break;
            case PK_B_MAX: o->i[i] = p > q ? p : q; break;
            case PK_B_CLAMP: {
                int64_t m = p > q ? p : q;
                o->i[i] = m < r ? m : r;
                break;
            }
            default: return false;
            }
            continue;
        }
        double v;
        switch (b) {
        case PK_B_SQRT: v = sqrt(x); break;
        case PK_B_EXP: v = exp(x); break;
        case PK_B_LOG: v = log(x); break;
        case PK_B_SIN: v = sin(x); break;
        case PK_B_COS: v = cos(x); break;
        case PK_B_TAN: v = tan(x); break;
        case PK_B_FLOOR: v = floor(x); break;
        case PK_B_CEIL: v = ceil(x); break;
        case PK_B_FRACT: v = x - floor(x); break;
        case PK_B_ROUND: v = round(x); break;
        case PK_B_TRUNC: v = trunc(x); break;
        case PK_B_POW: v = pow(x, y); break;
        case PK_B_ATAN2: v = atan2(x, y); break;
        case PK_B_ABS: v = fabs(x); break;
        case PK_B_SIGN: v = fsign(x); break;
        case PK_B_MIN: v = fmin_num(x, y); break;
        case PK_B_MAX: v = fmax_num(x, y); break;
        case PK_B_CLAMP: v = fmin_num(fmax_num(x, y), z); break;
        /* one rounding of (y - x) * z + x, after y - x rounded in the type, as the generated
         * code's fused multiply-add */
        case PK_B_LERP: v = f32s ? (double)fmaf((float)(y - x), (float)z, (float)x) : fma(y - x, z, x); break;
        default: return false;
        }
        o->f[i] = v;
    }
    normalize(o);
    return true;
}

static bool eval(ev *E, const pk_expr *e, pk_value *out) {
    memset(out, 0, sizeof *out);
    out->type = e->type;
    if (e->type.kind == PK_T_ERROR || e->untyped)
        return false;
    switch (e->kind) {
    case PK_E_INT:
    case PK_E_BOOL:
        out->i[0] = e->ival;
        return true;
    case PK_E_FLOAT:
        out->f[0] = e->type.kind == PK_T_F32 ? to_f32(e->fval) : e->fval;
        return true;
    case PK_E_VAR:
        if (!e->var->value)
            return false;
        *out = *e->var->value;
        return true;
    case PK_E_UNARY: {
        pk_value a;
        if (!eval(E, e->lhs, &a))
            return false;
        int n = ncomp(e->type);
        for (int i = 0; i < n; i++) {
            if (e->op == PK_OP_NEG) {
                out->f[i] = -a.f[i];
                out->i[i] = (int64_t)(0 - (uint64_t)a.i[i]);
            } else if (e->op == PK_OP_NOT) {
                out->i[i] = !a.i[i];
            } else {
                out->i[i] = ~a.i[i];
            }
        }
        normalize(out);
        return true;
    }
    case PK_E_BINARY: {
        pk_value a, b;
        if (!eval(E, e->lhs, &a))
            return false;
        if (e->op == PK_OP_AND && !a.i[0]) {
            out->i[0] = 0;
            return true;
        }
        if (e->op == PK_OP_OR && a.i[0]) {
            out->i[0] = 1;
            return true;
        }
        if (!eval(E, e->rhs, &b))
            return false;
        return binary(E, e, &a, &b, out);
    }
    case PK_E_SELECT: {
        pk_value c;
        if (!eval(E, e->cond, &c))
            return false;
        return eval(E, c.i[0] ? e->lhs : e->rhs, out);
    }
    case PK_E_CAST: {
        pk_value a;
        if (!eval(E, e->lhs, &a))
            return false;
        return cast(E, &a, e->type, out);
    }
    case PK_E_SPLAT: {
        pk_value a;
        if (!eval(E, e->lhs, &a))
            return false;
        int n = ncomp(e->type);
        for (int i = 0; i < n; i++) {
            out->f[i] = a.f[0];
            out->i[i] = a.i[0];
        }
        return true;
    }
    case PK_E_CONSTRUCT: {
        int k = 0, n = ncomp(e->type);
        if (e->type.kind == PK_T_MAT3 && e->nargs == 1 && ncomp(e->args[0]->type) == 1) {
            pk_value a;
            if (!eval(E, e->args[0], &a))
                return false;
            out->f[0] = out->f[4] = out->f[8] = a.f[0];
            return true;
        }
        for (uint32_t j = 0; j < e->nargs; j++) {
            pk_value a;
            if (!eval(E, e->args[j], &a))
                return false;
            int m = ncomp(a.type);
            for (int i = 0; i < m && k < n; i++, k++) {
                out->f[k] = a.f[i];
                out->i[k] = a.i[i];
            }
        }
        return k == n;
    }
    case PK_E_SWIZZLE: {
        pk_value a;
        if (!eval(E, e->lhs, &a))
            return false;
        for (int i = 0; i < e->nswz; i++) {
            out->f[i] = a.f[e->swz[i]];
            out->i[i] = a.i[e->swz[i]];
        }
        return true;
    }
    case PK_E_COMPONENT: {
        pk_value a, ix;
        if (!eval(E, e->lhs, &a) || !eval(E, e->rhs, &ix))
            return false;
        int per = a.type.kind == PK_T_MAT3 ? 3 : 1;
        int count = a.type.kind == PK_T_MAT3 ? 3 : ncomp(a.type);
        if (ix.i[0] < 0 || ix.i[0] >= count)
            return false;
        for (int i = 0; i < per; i++) {
            out->f[i] = a.f[ix.i[0] * per + i];
            out->i[i] = a.i[ix.i[0] * per + i];
        }
        return true;
    }
    case PK_E_BUILTIN:
        if (e->builtin >= PK_B_IS_ACTIVE)
            return false;
        return builtin(E, e, out);
    default:
        return false;
    }
}

int pk_const_eval(pk_ctx *c, const pk_expr *e, pk_value *out, const char **why) {
    ev E = {c, NULL};
    bool ok = eval(&E, e, out);
    if (why)
        *why = ok ? NULL : E.why;
    return ok;
}
