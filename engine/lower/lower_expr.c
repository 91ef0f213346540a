/* Expressions: each yields one SSA statement per component. Vectors and matrices are
 * scalarized here; builtins, matrix products and calls have files of their own. */
#include "engine/lower/lower_internal.h"

#include <string.h>

ir_stmt *lw_const(lw *L, ir_type ty, int64_t i, double f)
{
    if (ir_type_is_float(ty))
        return ir_const_float(&L->b, ty, f);
    return ir_const_int(&L->b, ty, i);
}

int lw_pure(const pk_expr *e)
{
    if (!e)
        return 1;
    if (e->kind == PK_E_CALL)
        return 0;
    if (!lw_pure(e->lhs) || !lw_pure(e->rhs) || !lw_pure(e->cond) || !lw_pure(e->index))
        return 0;
    for (uint32_t i = 0; i < e->nargs; i++)
        if (!lw_pure(e->args[i]))
            return 0;
    return 1;
}

/* Static loop variables arrive as constants: folding keeps their index arithmetic constant,
 * so components picked with it are chosen at compile time. Wrapping as the language says. */
ir_stmt *lw_bin(lw *L, int op, ir_stmt *a, ir_stmt *b)
{
    if (a && b && a->op == IR_CONST && b->op == IR_CONST && a->ty == b->ty &&
        (a->ty == IR_I32 || a->ty == IR_I64) && (op == IR_ADD || op == IR_SUB || op == IR_MUL)) {
        uint64_t x = (uint64_t)a->ival, y = (uint64_t)b->ival;
        uint64_t r = op == IR_ADD ? x + y : op == IR_SUB ? x - y : x * y;
        return ir_const_int(&L->b, a->ty, (int64_t)r);
    }
    return ir_binary(&L->b, op, a, b);
}

static ir_stmt *convert(lw *L, ir_type to, ir_stmt *a)
{
    if (!a || a->ty == to)
        return a;
    return ir_cast(&L->b, to, a);
}

static int value_const(lw *L, const pk_value *v, pk_type t, lw_val *out)
{
    ir_type ty = lw_ir_type(t);
    out->n = pk_type_components(t);
    for (int i = 0; i < out->n; i++)
        out->c[i] = lw_const(L, ty, v->i[i], v->f[i]);
    return 0;
}

static int var_value(lw *L, const pk_expr *e, lw_val *out)
{
    const pk_var *v = e->var;
    if (v->kind == PK_VAR_GLOBAL_CONST) {
        if (!v->value)
            return lw_fail(L, e->loc, "constant '%s' has no value", v->name);
        return value_const(L, v->value, v->type, out);
    }
    lw_bind *b = lw_var(L, v);
    if (!b || b->kind == LB_NONE || b->kind == LB_FIELD)
        return lw_fail(L, e->loc, "'%s' has no value here", v->name);
    out->n = b->n;
    for (int i = 0; i < b->n; i++)
        out->c[i] = b->kind == LB_SSA ? b->c[i] : ir_load(&L->b, b->c[i]);
    return 0;
}

int lw_field_index(lw *L, const pk_expr *index, int dim, ir_stmt **idx, pk_loc loc)
{
    if (dim == 0)
        return 0;
    lw_val iv;
    if (!index || lw_expr(L, index, &iv) != 0)
        return index ? -1 : lw_fail(L, loc, "a %d-D field needs an index", dim);
    if (iv.n != dim)
        return lw_fail(L, index->loc, "index of %d components for a %d-D field", iv.n, dim);
    for (int i = 0; i < dim; i++)
        idx[i] = convert(L, IR_I32, iv.c[i]);
    return 0;
}

int lw_field_ptrs(lw *L, const pk_expr *e, ir_stmt **ptrs, int *n)
{
    uint32_t slot;
    if (lw_field_slot(L, e->var, e->loc, &slot) != 0)
        return -1;
    const ir_field_info *f = &L->t->fields[slot];
    ir_stmt *idx[IR_MAX_DIM] = {0};
    if (lw_field_index(L, e->index, f->dim, idx, e->loc) != 0)
        return -1;
    *n = f->components;
    for (int c = 0; c < f->components; c++)
        if (!(ptrs[c] = ir_global_ptr(&L->b, slot, (uint32_t)c, idx)))
            return lw_oom(L, e->loc);
    return 0;
}

static int field_read(lw *L, const pk_expr *e, lw_val *out)
{
    ir_stmt *p[LW_MAX_COMP];
    int n = 0;
    if (lw_field_ptrs(L, e, p, &n) != 0)
        return -1;
    out->n = n;
    for (int c = 0; c < n; c++)
        out->c[c] = ir_global_load(&L->b, p[c]);
    return 0;
}

static int unop(lw *L, const pk_expr *e, lw_val *out)
{
    lw_val a;
    if (lw_expr(L, e->lhs, &a) != 0)
        return -1;
    int op = e->op == PK_OP_NEG ? IR_NEG : e->op == PK_OP_NOT ? IR_NOT
           : e->op == PK_OP_BITNOT ? IR_BITNOT : -1;
    if (op < 0)
        return lw_fail(L, e->loc, "unary operator %s", pk_op_name(e->op));
    out->n = a.n;
    for (int i = 0; i < a.n; i++)
        out->c[i] = ir_unary(&L->b, op, a.c[i]);
    return 0;
}

static int ir_binop_of(int op)
{
    switch (op) {
    case PK_OP_ADD: return IR_ADD;
    case PK_OP_SUB: return IR_SUB;
    case PK_OP_MUL: return IR_MUL;
    case PK_OP_DIV: return IR_DIV;
    case PK_OP_MOD: return IR_MOD;
    case PK_OP_LT: return IR_LT;
    case PK_OP_LE: return IR_LE;
    case PK_OP_GT: return IR_GT;
    case PK_OP_GE: return IR_GE;
    case PK_OP_EQ: return IR_EQ;
    case PK_OP_NE: return IR_NE;
    case PK_OP_BITAND: return IR_AND;
    case PK_OP_BITOR: return IR_OR;
    case PK_OP_BITXOR: return IR_XOR;
    case PK_OP_SHL: return IR_SHL;
    case PK_OP_SHR: return IR_SHR;
    case PK_OP_MIN: return IR_MIN;
    case PK_OP_MAX: return IR_MAX;
    default: return -1;
    }
}

/* Evaluates `on_true` or `on_false` into fresh allocas under a condition and loads them: the
 * way to evaluate only one side when a side has effects. `neg` runs on_false when c holds. */
static int branch_value(lw *L, ir_stmt *c, const pk_expr *on_true, const pk_expr *on_false,
                        const lw_val *preset, pk_loc loc, lw_val *out)
{
    const pk_expr *side = on_true ? on_true : on_false;
    int n = preset ? preset->n : pk_type_components(side->type);
    ir_type ty = lw_ir_type(side->type);
    ir_stmt *slot[LW_MAX_COMP];
    for (int i = 0; i < n; i++) {
        slot[i] = ir_alloca(&L->b, ty);
        if (preset && !ir_store(&L->b, slot[i], preset->c[i]))
            return lw_oom(L, loc);
    }
    ir_stmt *br = ir_if(&L->b, c);
    if (!br)
        return lw_oom(L, loc);
    ir_block *after = L->b.block;
    for (int side_no = 0; side_no < 2; side_no++) {
        const pk_expr *x = side_no == 0 ? on_true : on_false;
        if (!x)
            continue;
        ir_builder_at_end(&L->b, side_no == 0 ? br->body : br->els);
        lw_val v;
        if (lw_expr(L, x, &v) != 0)
            return -1;
        for (int i = 0; i < n; i++)
            if (!ir_store(&L->b, slot[i], v.c[i]))
                return lw_oom(L, loc);
    }
    ir_builder_at_end(&L->b, after);
    out->n = n;
    for (int i = 0; i < n; i++)
        out->c[i] = ir_load(&L->b, slot[i]);
    return 0;
}

/* && and ||: a side without effects is evaluated unconditionally (logical and/or on bool,
 * cheaper than a branch and nothing can be observed); otherwise only when it decides. */
static int logical(lw *L, const pk_expr *e, lw_val *out)
{
    lw_val a, b;
    if (lw_expr(L, e->lhs, &a) != 0)
        return -1;
    int is_and = e->op == PK_OP_AND;
    if (lw_pure(e->rhs)) {
        if (lw_expr(L, e->rhs, &b) != 0)
            return -1;
        out->n = 1;
        out->c[0] = ir_binary(&L->b, is_and ? IR_AND : IR_OR, a.c[0], b.c[0]);
        return 0;
    }
    return branch_value(L, a.c[0], is_and ? e->rhs : NULL, is_and ? NULL : e->rhs, &a, e->loc,
                        out);
}

static int select_expr(lw *L, const pk_expr *e, lw_val *out)
{
    lw_val c, a, b;
    if (lw_expr(L, e->cond, &c) != 0)
        return -1;
    if (lw_pure(e->lhs) && lw_pure(e->rhs)) {
        if (lw_expr(L, e->lhs, &a) != 0 || lw_expr(L, e->rhs, &b) != 0)
            return -1;
        out->n = a.n;
        for (int i = 0; i < a.n; i++)
            out->c[i] = ir_select(&L->b, c.c[0], a.c[i], b.c[i]);
        return 0;
    }
    return branch_value(L, c.c[0], e->lhs, e->rhs, NULL, e->loc, out);
}

static int binop(lw *L, const pk_expr *e, lw_val *out)
{
    if (e->op == PK_OP_AND || e->op == PK_OP_OR)
        return logical(L, e, out);
    lw_val a, b;
    if (lw_expr(L, e->lhs, &a) != 0 || lw_expr(L, e->rhs, &b) != 0)
        return -1;
    if (e->op == PK_OP_MATMUL)
        return lw_matmul(L, e, &a, &b, out);
    int op = ir_binop_of(e->op);
    if (op < 0 || a.n != b.n)
        return lw_fail(L, e->loc, "binary operator %s on %d and %d components",
                       pk_op_name(e->op), a.n, b.n);
    out->n = a.n;
    for (int i = 0; i < a.n; i++)
        out->c[i] = lw_bin(L, op, a.c[i], b.c[i]);
    return 0;
}

static int cast_expr(lw *L, const pk_expr *e, lw_val *out)
{
    lw_val a;
    if (lw_expr(L, e->lhs, &a) != 0)
        return -1;
    int n = pk_type_components(e->type);
    if (a.n != n)
        return lw_fail(L, e->loc, "conversion of %d components to %d", a.n, n);
    ir_type to = lw_ir_type(e->type);
    out->n = n;
    for (int i = 0; i < n; i++)
        out->c[i] = convert(L, to, a.c[i]);
    return 0;
}

static int splat(lw *L, const pk_expr *e, lw_val *out)
{
    lw_val a;
    if (lw_expr(L, e->lhs, &a) != 0)
        return -1;
    ir_stmt *s = convert(L, lw_ir_type(e->type), a.c[0]);
    out->n = pk_type_components(e->type);
    for (int i = 0; i < out->n; i++)
        out->c[i] = s;
    return 0;
}

static int construct(lw *L, const pk_expr *e, lw_val *out)
{
    ir_type ty = lw_ir_type(e->type);
    int n = pk_type_components(e->type), k = 0;
    ir_stmt *c[LW_MAX_COMP];
    for (uint32_t i = 0; i < e->nargs; i++) {
        lw_val a;
        if (lw_expr(L, e->args[i], &a) != 0)
            return -1;
        for (int j = 0; j < a.n; j++) {
            if (k >= n)
                return lw_fail(L, e->loc, "constructor with more than %d components", n);
            c[k++] = convert(L, ty, a.c[j]);
        }
    }
    out->n = n;
    if (k == n) {
        memcpy(out->c, c, sizeof c);
    } else if (k == 1 && e->type.kind == PK_T_MAT3) {
        ir_stmt *zero = lw_const(L, ty, 0, 0.0);
        for (int i = 0; i < 9; i++)
            out->c[i] = i % 4 == 0 ? c[0] : zero;
    } else if (k == 1) {
        for (int i = 0; i < n; i++)
            out->c[i] = c[0];
    } else {
        return lw_fail(L, e->loc, "constructor of %d components from %d", n, k);
    }
    return 0;
}

/* v[i]: a constant i picks; otherwise a chain of selects over every candidate (an index out
 * of range gives the last one: the language leaves it undefined). mat3 columns are 3 wide. */
static int component(lw *L, const pk_expr *e, lw_val *out)
{
    lw_val v, i;
    if (lw_expr(L, e->lhs, &v) != 0 || lw_expr(L, e->rhs, &i) != 0)
        return -1;
    int w = e->lhs->type.kind == PK_T_MAT3 ? 3 : 1;
    int count = v.n / w;
    ir_stmt *ix = i.c[0];
    if (!ix)
        return lw_oom(L, e->loc);
    out->n = w;
    if (ix->op == IR_CONST) {
        if (ix->ival < 0 || ix->ival >= count)
            return lw_component_range(L, e, ix->ival);
        for (int j = 0; j < w; j++)
            out->c[j] = v.c[ix->ival * w + j];
        return 0;
    }
    for (int j = 0; j < w; j++)
        out->c[j] = v.c[(count - 1) * w + j];
    for (int k = count - 2; k >= 0; k--) {
        ir_stmt *is = ir_binary(&L->b, IR_EQ, ix, lw_const(L, ix->ty, k, 0.0));
        for (int j = 0; j < w; j++)
            out->c[j] = ir_select(&L->b, is, v.c[k * w + j], out->c[j]);
    }
    return 0;
}

int lw_expr(lw *L, const pk_expr *e, lw_val *out)
{
    memset(out, 0, sizeof *out);
    if (L->failed)
        return -1;
    int rc;
    switch (e->kind) {
    case PK_E_INT:
    case PK_E_BOOL:
    case PK_E_FLOAT:
        out->n = 1;
        out->c[0] = lw_const(L, lw_ir_type(e->type), e->ival, e->fval);
        rc = 0;
        break;
    case PK_E_VAR: rc = var_value(L, e, out); break;
    case PK_E_FIELD_ACCESS: rc = field_read(L, e, out); break;
    case PK_E_UNARY: rc = unop(L, e, out); break;
    case PK_E_BINARY: rc = binop(L, e, out); break;
    case PK_E_SELECT: rc = select_expr(L, e, out); break;
    case PK_E_CALL: rc = lw_call(L, e, out); break;
    case PK_E_BUILTIN: rc = lw_builtin(L, e, out); break;
    case PK_E_CAST: rc = cast_expr(L, e, out); break;
    case PK_E_SPLAT: rc = splat(L, e, out); break;
    case PK_E_CONSTRUCT: rc = construct(L, e, out); break;
    case PK_E_SWIZZLE: {
        lw_val v;
        rc = lw_expr(L, e->lhs, &v);
        out->n = e->nswz;
        for (int i = 0; rc == 0 && i < e->nswz; i++) {
            if (e->swz[i] >= v.n)
                return lw_fail(L, e->loc, "swizzle component %u of %d", e->swz[i], v.n);
            out->c[i] = v.c[e->swz[i]];
        }
        break;
    }
    case PK_E_COMPONENT: rc = component(L, e, out); break;
    default:
        return lw_fail(L, e->loc, "unsupported expression (kind %u)", e->kind);
    }
    if (rc != 0)
        return -1;
    return lw_check(L, out, e->loc);
}
