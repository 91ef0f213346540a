/* Assignments. A place is a root (a local's allocas, or a field element's global_ptrs, one
 * per component) narrowed by swizzles and components, innermost first. A component with a
 * constant index narrows at compile time; a dynamic one becomes an if-chain with one branch
 * per candidate, each assigning to a fixed component (so atomics and field writes touch only
 * the chosen component, and an index out of range assigns nothing). */
#include "engine/lower/lower_internal.h"

#include <string.h>

#define LW_MAX_CHAIN 16

typedef struct place {
    const pk_stmt *s;
    const pk_expr *chain[LW_MAX_CHAIN]; /* outermost first */
    ir_stmt *idx[LW_MAX_CHAIN];         /* component indices */
    int nchain;
    lw_val v;
} place;

static int atomic_op(int op)
{
    switch (op) {
    case PK_OP_ADD: return IR_ATOMIC_ADD;
    case PK_OP_SUB: return IR_ATOMIC_SUB;
    case PK_OP_MUL: return IR_ATOMIC_MUL;
    case PK_OP_DIV: return IR_ATOMIC_DIV;
    case PK_OP_MIN: return IR_ATOMIC_MIN;
    case PK_OP_MAX: return IR_ATOMIC_MAX;
    default: return -1;
    }
}

static int binop(int op)
{
    switch (op) {
    case PK_OP_ADD: return IR_ADD;
    case PK_OP_SUB: return IR_SUB;
    case PK_OP_MUL: return IR_MUL;
    case PK_OP_DIV: return IR_DIV;
    case PK_OP_MIN: return IR_MIN;
    case PK_OP_MAX: return IR_MAX;
    default: return -1;
    }
}

/* Serial code needs no atomics: one thread runs it (lower.h). */
static int store_one(lw *L, const pk_stmt *s, ir_stmt *cell, ir_stmt *v)
{
    int field = cell->op == IR_GLOBAL_PTR;
    ir_stmt *r;
    if (s->op == PK_OP_NONE) {
        r = field ? ir_global_store(&L->b, cell, v) : ir_store(&L->b, cell, v);
    } else if (field && s->atomic && L->parallel) {
        int op = atomic_op(s->op);
        if (op < 0)
            return lw_fail(L, s->loc, "no atomic %s", pk_op_name(s->op));
        r = ir_atomic(&L->b, op, cell, v);
    } else {
        int op = binop(s->op);
        if (op < 0)
            return lw_fail(L, s->loc, "compound assignment %s", pk_op_name(s->op));
        ir_stmt *cur = field ? ir_global_load(&L->b, cell) : ir_load(&L->b, cell);
        ir_stmt *nv = ir_binary(&L->b, op, cur, v);
        r = field ? ir_global_store(&L->b, cell, nv) : ir_store(&L->b, cell, nv);
    }
    return r ? 0 : lw_oom(L, s->loc);
}

static int apply(lw *L, place *p, ir_stmt **cells, int n, int level)
{
    if (level < 0) {
        if (n != p->v.n)
            return lw_fail(L, p->s->loc, "assigning %d components to %d", p->v.n, n);
        for (int i = 0; i < n; i++)
            if (store_one(L, p->s, cells[i], p->v.c[i]) != 0)
                return -1;
        return 0;
    }
    const pk_expr *e = p->chain[level];
    ir_stmt *sub[LW_MAX_COMP];
    if (e->kind == PK_E_SWIZZLE) {
        for (int i = 0; i < e->nswz; i++) {
            if (e->swz[i] >= n)
                return lw_fail(L, e->loc, "swizzle component %u of %d", e->swz[i], n);
            sub[i] = cells[e->swz[i]];
        }
        return apply(L, p, sub, e->nswz, level - 1);
    }
    int w = e->lhs->type.kind == PK_T_MAT3 ? 3 : 1;
    int count = n / w;
    ir_stmt *ix = p->idx[level];
    if (ix->op == IR_CONST) {
        if (ix->ival < 0 || ix->ival >= count)
            return lw_component_range(L, e, ix->ival);
        return apply(L, p, cells + ix->ival * w, w, level - 1);
    }
    ir_block *after = L->b.block;
    for (int j = 0; j < count; j++) {
        ir_stmt *br = ir_if(&L->b, ir_binary(&L->b, IR_EQ, ix, lw_const(L, ix->ty, j, 0.0)));
        if (!br)
            return lw_oom(L, e->loc);
        ir_builder_at_end(&L->b, br->body);
        if (apply(L, p, cells + j * w, w, level - 1) != 0)
            return -1;
        ir_builder_at_end(&L->b, br->els);
    }
    ir_builder_at_end(&L->b, after);
    return 0;
}

int lw_assign(lw *L, const pk_stmt *s)
{
    place p;
    memset(&p, 0, sizeof p);
    p.s = s;
    const pk_expr *e = s->lhs;
    while (e->kind == PK_E_SWIZZLE || e->kind == PK_E_COMPONENT) {
        if (p.nchain == LW_MAX_CHAIN)
            return lw_fail(L, s->loc, "place nested more than %d deep", LW_MAX_CHAIN);
        p.chain[p.nchain++] = e;
        e = e->lhs;
    }
    ir_stmt *cells[LW_MAX_COMP];
    int n = 0;
    if (e->kind == PK_E_VAR) {
        lw_bind *b = lw_var(L, e->var);
        if (!b || b->kind != LB_ALLOCA)
            return lw_fail(L, e->loc, "'%s' cannot be assigned", e->var->name);
        n = b->n;
        memcpy(cells, b->c, sizeof cells);
    } else if (e->kind == PK_E_FIELD_ACCESS) {
        if (lw_field_ptrs(L, e, cells, &n) != 0)
            return -1;
    } else {
        return lw_fail(L, e->loc, "not an assignable place");
    }
    for (int k = p.nchain - 1; k >= 0; k--)
        if (p.chain[k]->kind == PK_E_COMPONENT) {
            lw_val i;
            if (lw_expr(L, p.chain[k]->rhs, &i) != 0)
                return -1;
            p.idx[k] = i.c[0];
        }
    if (lw_expr(L, s->value, &p.v) != 0)
        return -1;
    return apply(L, &p, cells, n, p.nchain - 1);
}
