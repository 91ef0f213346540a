/* Builtins and matrix products, written out component by component on the IR's scalar ops.
 * The formulas (fract, sign, clamp, lerp, length, normalize, cross, determinant) are the ones
 * docs/language.md gives; tests compare them against the same formulas in C. */
#include "engine/lower/lower_internal.h"

#include <string.h>

static ir_stmt *bin(lw *L, int op, ir_stmt *a, ir_stmt *b) { return ir_binary(&L->b, op, a, b); }

static ir_stmt *dot(lw *L, const lw_val *a, const lw_val *b)
{
    ir_stmt *s = bin(L, IR_MUL, a->c[0], b->c[0]);
    for (int i = 1; i < a->n; i++)
        s = bin(L, IR_ADD, s, bin(L, IR_MUL, a->c[i], b->c[i]));
    return s;
}

/* x > 0 ? 1 : x < 0 ? -1 : 0 (NaN gives 0) */
static ir_stmt *sign(lw *L, ir_stmt *x)
{
    ir_stmt *zero = lw_const(L, x->ty, 0, 0.0);
    ir_stmt *one = lw_const(L, x->ty, 1, 1.0), *minus = lw_const(L, x->ty, -1, -1.0);
    ir_stmt *neg = ir_select(&L->b, bin(L, IR_LT, x, zero), minus, zero);
    return ir_select(&L->b, bin(L, IR_GT, x, zero), one, neg);
}

static int unary_op(int b)
{
    switch (b) {
    case PK_B_SQRT: return IR_SQRT;
    case PK_B_EXP: return IR_EXP;
    case PK_B_LOG: return IR_LOG;
    case PK_B_SIN: return IR_SIN;
    case PK_B_COS: return IR_COS;
    case PK_B_TAN: return IR_TAN;
    case PK_B_FLOOR: return IR_FLOOR;
    case PK_B_CEIL: return IR_CEIL;
    case PK_B_ROUND: return IR_ROUND;
    case PK_B_TRUNC: return IR_TRUNC;
    case PK_B_ABS: return IR_ABS;
    default: return -1;
    }
}

/* element (column c, row r) of a column-major mat3 */
#define M(v, col, row) ((v)->c[(col) * 3 + (row)])

/* a*b - c*d, the products emitted in that order (C leaves argument order open) */
static ir_stmt *cross2(lw *L, ir_stmt *a, ir_stmt *b, ir_stmt *c, ir_stmt *d)
{
    ir_stmt *x = bin(L, IR_MUL, a, b);
    ir_stmt *y = bin(L, IR_MUL, c, d);
    return bin(L, IR_SUB, x, y);
}

/* expansion along the first row */
static ir_stmt *determinant(lw *L, const lw_val *m)
{
    ir_stmt *a = cross2(L, M(m, 1, 1), M(m, 2, 2), M(m, 2, 1), M(m, 1, 2));
    ir_stmt *b = cross2(L, M(m, 0, 1), M(m, 2, 2), M(m, 2, 1), M(m, 0, 2));
    ir_stmt *c = cross2(L, M(m, 0, 1), M(m, 1, 2), M(m, 1, 1), M(m, 0, 2));
    ir_stmt *s = cross2(L, M(m, 0, 0), a, M(m, 1, 0), b);
    ir_stmt *t = bin(L, IR_MUL, M(m, 2, 0), c);
    return bin(L, IR_ADD, s, t);
}

static int field_builtin(lw *L, const pk_expr *e, lw_val *out)
{
    const pk_expr *f = e->args[0];
    uint32_t slot;
    if (f->kind != PK_E_FIELD_REF || lw_field_slot(L, f->var, f->loc, &slot) != 0)
        return lw_fail(L, e->loc, "%s needs a field", pk_builtin_name(e->builtin));
    if (e->builtin == PK_B_VOXEL_SIZE) {
        out->n = 1;
        out->c[0] = ir_arg(&L->b, IR_F32, L->nscalar + slot);
        return 0;
    }
    ir_stmt *idx[IR_MAX_DIM] = {0};
    const pk_expr *index = e->nargs > 1 ? e->args[1] : NULL;
    if (lw_field_index(L, index, L->t->fields[slot].dim, idx, e->loc) != 0)
        return -1;
    int op = e->builtin == PK_B_IS_ACTIVE ? IR_IS_ACTIVE
           : e->builtin == PK_B_ACTIVATE ? IR_ACTIVATE : IR_DEACTIVATE;
    ir_stmt *s = ir_field_op(&L->b, op, slot, idx);
    if (!s)
        return lw_oom(L, e->loc);
    out->n = op == IR_IS_ACTIVE;
    out->c[0] = op == IR_IS_ACTIVE ? s : NULL;
    return 0;
}

int lw_builtin(lw *L, const pk_expr *e, lw_val *out)
{
    int b = e->builtin;
    if (b == PK_B_IS_ACTIVE || b == PK_B_ACTIVATE || b == PK_B_DEACTIVATE ||
        b == PK_B_VOXEL_SIZE)
        return e->nargs >= 1 ? field_builtin(L, e, out)
                             : lw_fail(L, e->loc, "%s without arguments", pk_builtin_name(b));
    lw_val a[3];
    if (e->nargs < 1 || e->nargs > 3)
        return lw_fail(L, e->loc, "%s with %u arguments", pk_builtin_name(b), e->nargs);
    for (uint32_t i = 0; i < e->nargs; i++)
        if (lw_expr(L, e->args[i], &a[i]) != 0)
            return -1;
    for (uint32_t i = 1; i < e->nargs; i++)
        if (a[i].n != a[0].n)
            return lw_fail(L, e->loc, "%s on %d and %d components", pk_builtin_name(b),
                           a[0].n, a[i].n);
    int n = a[0].n;
    out->n = n;
    int u = unary_op(b);
    for (int i = 0; i < n && u >= 0; i++)
        out->c[i] = ir_unary(&L->b, u, a[0].c[i]);
    if (u >= 0)
        return 0;
    switch (b) {
    case PK_B_FRACT:
        for (int i = 0; i < n; i++)
            out->c[i] = bin(L, IR_SUB, a[0].c[i], ir_unary(&L->b, IR_FLOOR, a[0].c[i]));
        return 0;
    case PK_B_SIGN:
        for (int i = 0; i < n; i++)
            out->c[i] = sign(L, a[0].c[i]);
        return 0;
    case PK_B_POW: case PK_B_ATAN2: case PK_B_MIN: case PK_B_MAX: {
        int op = b == PK_B_POW ? IR_POW : b == PK_B_ATAN2 ? IR_ATAN2
               : b == PK_B_MIN ? IR_MIN : IR_MAX;
        if (e->nargs != 2)
            break;
        for (int i = 0; i < n; i++)
            out->c[i] = bin(L, op, a[0].c[i], a[1].c[i]);
        return 0;
    }
    case PK_B_CLAMP:
        if (e->nargs != 3)
            break;
        for (int i = 0; i < n; i++)
            out->c[i] = bin(L, IR_MIN, bin(L, IR_MAX, a[0].c[i], a[1].c[i]), a[2].c[i]);
        return 0;
    case PK_B_LERP:
        if (e->nargs != 3)
            break;
        /* (b - a) * t + a with one rounding: blends sit on the dependent chain of every
         * sample (a backtrace samples, then samples again where it lands), and a fused
         * multiply-add is one step of latency where the product and the sum were two; the
         * GPU computes the same bits */
        for (int i = 0; i < n; i++)
            out->c[i] = ir_fma(&L->b, bin(L, IR_SUB, a[1].c[i], a[0].c[i]), a[2].c[i], a[0].c[i]);
        return 0;
    case PK_B_DOT:
        if (e->nargs != 2)
            break;
        out->n = 1;
        out->c[0] = dot(L, &a[0], &a[1]);
        return 0;
    case PK_B_LENGTH:
        out->n = 1;
        out->c[0] = ir_unary(&L->b, IR_SQRT, dot(L, &a[0], &a[0]));
        return 0;
    case PK_B_NORMALIZE: {
        ir_stmt *len = ir_unary(&L->b, IR_SQRT, dot(L, &a[0], &a[0]));
        for (int i = 0; i < n; i++)
            out->c[i] = bin(L, IR_DIV, a[0].c[i], len);
        return 0;
    }
    case PK_B_CROSS: {
        if (e->nargs != 2 || n != 3)
            break;
        const lw_val *x = &a[0], *y = &a[1];
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, k = (i + 2) % 3;
            out->c[i] = cross2(L, x->c[j], y->c[k], x->c[k], y->c[j]);
        }
        return 0;
    }
    case PK_B_TRANSPOSE:
        if (n != 9)
            break;
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++)
                out->c[c * 3 + r] = a[0].c[r * 3 + c];
        return 0;
    case PK_B_DETERMINANT:
        if (n != 9)
            break;
        out->n = 1;
        out->c[0] = determinant(L, &a[0]);
        return 0;
    default:
        break;
    }
    return lw_fail(L, e->loc, "unsupported use of builtin %s", pk_builtin_name(b));
}

/* mat3 * vec3 and mat3 * mat3: sums over k in order 0, 1, 2 */
int lw_matmul(lw *L, const pk_expr *e, const lw_val *a, const lw_val *b, lw_val *out)
{
    if (a->n != 9 || (b->n != 3 && b->n != 9))
        return lw_fail(L, e->loc, "matrix product of %d and %d components", a->n, b->n);
    int cols = b->n / 3;
    out->n = b->n;
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < 3; r++) {
            ir_stmt *s = bin(L, IR_MUL, M(a, 0, r), b->c[c * 3]);
            for (int k = 1; k < 3; k++)
                s = bin(L, IR_ADD, s, bin(L, IR_MUL, M(a, k, r), b->c[c * 3 + k]));
            out->c[c * 3 + r] = s;
        }
    return 0;
}
