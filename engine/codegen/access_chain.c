/* Recognizes the field accesses of a parallel loop's body that the fast copies can serve:
 * whole lowered chains (access lowering's root -> child/index/lookup per level -> leaf child,
 * leaf index -> field_ptr) whose index is the loop index plus a constant on every axis; and
 * finds the chain statements nothing else uses, which the fast copy need not emit (a lookup of
 * a pointer level holds atomic loads that LLVM would keep even when unused).
 * The task is only read: use counts live in our own map, never in the statements. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"

/* ---- recognition ---- */

/* e = loop index `axis` of `loop` [+ or - constant], perhaps through a cast to i32 of a wider
 * loop index (range_for over i64). Writes the constant. */
static int index_plus_const(const ir_stmt *e, const ir_stmt *loop, int axis, int32_t *c)
{
    int64_t k = 0;
    /* (I + 1) + 1 as well: fused kernels' index arithmetic is not always folded */
    for (int depth = 0; depth < 4 && e->op == IR_BINARY && (e->sub == IR_ADD || e->sub == IR_SUB) &&
                        e->ty == IR_I32;
         depth++) {
        const ir_stmt *x = e->arg[0], *y = e->arg[1];
        if (e->sub == IR_ADD && x->op == IR_CONST) {
            const ir_stmt *t = x;
            x = y;
            y = t;
        }
        if (y->op != IR_CONST || y->ty != IR_I32)
            return 0;
        k += e->sub == IR_ADD ? y->ival : -y->ival;
        e = x;
    }
    if (e->op == IR_CAST && e->ty == IR_I32 && (e->arg[0]->ty == IR_I64 || e->arg[0]->ty == IR_U32))
        e = e->arg[0];
    if (e->op != IR_LOOP_INDEX || e->loop != loop || (int)e->index != axis)
        return 0;
    if (k < -(1 << 20) || k > (1 << 20))
        return 0;
    *c = (int32_t)k;
    return 1;
}

/* e = loop index `axis` / 2 (scale -1, c 0) or 2 * loop index `axis` [+ 0 or 1] (scale +1):
 * a multigrid transfer's read of the other grid. */
static int index_scaled(const ir_stmt *e, const ir_stmt *loop, int axis, int *scale, int32_t *c)
{
    if (e->ty != IR_I32 || e->op != IR_BINARY)
        return 0;
    const ir_stmt *x = e->arg[0], *y = e->arg[1];
    if (e->sub == IR_DIV) {
        *scale = -1;
        *c = 0;
        return x->op == IR_LOOP_INDEX && x->loop == loop && (int)x->index == axis &&
               y->op == IR_CONST && y->ival == 2;
    }
    int32_t k = 0;
    if (e->sub == IR_ADD) {
        if (x->op == IR_CONST) {
            const ir_stmt *t = x;
            x = y;
            y = t;
        }
        if (y->op != IR_CONST || (y->ival != 0 && y->ival != 1))
            return 0;
        k = (int32_t)y->ival;
        e = x;
        if (e->op != IR_BINARY)
            return 0;
        x = e->arg[0];
        y = e->arg[1];
    }
    if (e->sub != IR_MUL || e->ty != IR_I32)
        return 0;
    if (x->op == IR_CONST) {
        const ir_stmt *t = x;
        x = y;
        y = t;
    }
    *scale = 1;
    *c = k;
    return x->op == IR_LOOP_INDEX && x->loop == loop && (int)x->index == axis &&
           y->op == IR_CONST && y->ival == 2;
}

int cg_chain_up(const ir_stmt *child, int field, int leaf, int dim, const ir_stmt **index,
                const ir_stmt **rev, int *activates)
{
    int n = 0;
    const ir_stmt *c = child;
    for (int l = leaf; l >= 1; l--) {
        if (c->op != IR_SN_CHILD || c->field != field || c->level != l)
            return 0;
        rev[n++] = c;
        const ir_stmt *up = c->arg[0];
        if (l == 1) {
            if (up->op != IR_SN_ROOT || up->field != field)
                return 0;
            rev[n++] = up;
            break;
        }
        if (up->op != IR_SN_LOOKUP || up->field != field || up->level != l - 1)
            return 0;
        const ir_stmt *ui = up->arg[1];
        if (ui->op != IR_SN_INDEX || ui->field != field || ui->level != l - 1 || ui->nargs != dim)
            return 0;
        if (!*index)
            *index = ui;
        for (int x = 0; x < dim; x++)
            if (ui->arg[x] != (*index)->arg[x])
                return 0;
        *activates |= up->activate;
        rev[n++] = up;
        rev[n++] = ui;
        c = up->arg[0];
    }
    return n;
}

/* Fills a from the sn_field_ptr s when its whole chain has the recognized shape. */
static int recognize(const ir_task *t, const ir_stmt *loop, int dim, const ir_stmt *s,
                     cg_access *a)
{
    if (s->field >= t->nfields || s->nargs < 2)
        return 0;
    const ir_field_info *fi = &t->fields[s->field];
    int leaf = fi->nlevels - 1;
    if (fi->dim != dim || leaf < 1 || s->comp >= fi->components)
        return 0;
    if (s->op == IR_SN_IS_ACTIVE && s->level != leaf)
        return 0;
    memset(a, 0, sizeof *a);
    a->fptr = s;
    a->slot = s->field;
    a->activates = s->activate;
    /* the walk may be named by another field placed in the same tree (lower_access.c) */
    const ir_stmt *idx = s->arg[1];
    int walk = idx->field;
    if (idx->op != IR_SN_INDEX || !ir_same_tree(t, (uint32_t)walk, s->field) ||
        idx->level != leaf || idx->nargs != dim)
        return 0;
    for (int x = 0; x < dim; x++) {
        if (a->scale == 0 && index_plus_const(idx->arg[x], loop, x, &a->c[x]))
            continue;
        int sc = 0;
        if (loop->op != IR_STRUCT_FOR || (x > 0 && a->scale == 0) ||
            !index_scaled(idx->arg[x], loop, x, &sc, &a->c[x]) || (x > 0 && sc != a->scale))
            return 0;
        a->scale = sc;
    }
    a->leaf_index = idx;
    a->leaf_child = s->arg[0];
    const ir_stmt *rev[3 * IR_MAX_LEVELS + 2];
    rev[0] = idx;
    int act = 0, n = cg_chain_up(s->arg[0], walk, leaf, dim, &idx, rev + 1, &act);
    if (n == 0)
        return 0;
    n++;
    a->activates |= act;
    for (int i = 0; i < n; i++)
        a->chain[i] = rev[n - 1 - i];
    a->nchain = n;
    return 1;
}

typedef struct walk {
    const ir_task *t;
    const ir_stmt *loop;
    int dim;
    cg_fast *fast;
    int cap;
    cg_smap uses; /* statement -> number of operand uses */
    int oom;
} walk;

static int visit(ir_stmt *s, void *ud)
{
    walk *w = ud;
    for (int i = 0; i < s->nargs && i < IR_MAX_ARGS; i++)
        if (s->arg[i] && cg_smap_put(&w->uses, s->arg[i], cg_smap_get(&w->uses, s->arg[i]) + 1))
            return w->oom = 1;
    /* is_active of the leaf asks about the same cell an access there would reach */
    if (s->op != IR_SN_FIELD_PTR && (s->op != IR_SN_IS_ACTIVE || w->loop->op != IR_STRUCT_FOR))
        return 0;
    cg_fast *fast = w->fast;
    if (fast->nacc == w->cap) {
        int cap = w->cap ? 2 * w->cap : 8;
        cg_access *g = realloc(fast->acc, (size_t)cap * sizeof *g);
        if (!g)
            return w->oom = 1;
        fast->acc = g;
        w->cap = cap;
    }
    if (recognize(w->t, w->loop, w->dim, s, &fast->acc[fast->nacc]))
        fast->nacc++;
    return 0;
}

int cg_fast_analyze(cg_fn *f, const ir_stmt *loop, cg_fast *fast)
{
    memset(fast, 0, sizeof *fast);
    fast->loop = loop;
    const ir_task *t = f->task;
    if (t->nfields > 64)
        return 0; /* per-slot tables are 64 long; such tasks keep the generic code */
    walk w = {t, loop, loop->op == IR_RANGE_FOR ? 1 : t->fields[loop->field].dim, fast, 0,
              {0}, 0};
    /* uses count over the whole task: a chain statement of the prologue may be used after */
    ir_walk(t->body, visit, &w);
    if (w.oom)
        goto oom;
    /* only accesses inside the loop's body count (the walk saw the prologue too) */
    int n = 0;
    for (int i = 0; i < fast->nacc; i++) {
        const ir_stmt *s = fast->acc[i].fptr;
        const ir_block *b = s->parent;
        while (b && b->owner && b->owner != loop)
            b = b->owner->parent;
        if (b && b->owner == loop)
            fast->acc[n++] = fast->acc[i];
    }
    fast->nacc = n;
    fast->uses = w.uses;
    return 0;
oom:
    cg_smap_free(&w.uses);
    cg_fast_free(fast);
    return cg_fail(f, "out of memory");
}

int cg_fast_index(cg_fn *f, cg_fast *fast)
{
    int n = fast->nacc;
    cg_smap_free(&fast->which);
    cg_smap_free(&fast->skip);
    for (int i = 0; i < n; i++)
        if (cg_smap_put(&fast->which, fast->acc[i].fptr, i + 1))
            goto oom;
    /* skip set: chain statements all of whose uses come from skipped statements or recognized
     * field pointers; shrink until stable */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < fast->acc[i].nchain; k++)
            if (cg_smap_put(&fast->skip, fast->acc[i].chain[k], 1))
                goto oom;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t j = 0; j < fast->skip.cap; j++) {
            const ir_stmt *s = fast->skip.keys[j];
            if (!s || !fast->skip.vals[j])
                continue;
            int internal = 0;
            for (size_t k = 0; k < fast->skip.cap; k++) {
                const ir_stmt *u = fast->skip.keys[k];
                if (!u || !fast->skip.vals[k])
                    continue;
                for (int x = 0; x < u->nargs && x < IR_MAX_ARGS; x++)
                    internal += u->arg[x] == s;
            }
            for (int i = 0; i < n; i++)
                for (int x = 0; x < 2; x++)
                    internal += fast->acc[i].fptr->arg[x] == s;
            if (cg_smap_get(&fast->uses, s) > internal) {
                fast->skip.vals[j] = 0;
                changed = 1;
            }
        }
    }
    return 0;
oom:
    return cg_fail(f, "out of memory");
}

void cg_fast_free(cg_fast *fast)
{
    free(fast->acc);
    free(fast->addr0);
    free(fast->container);
    free(fast->blocks);
    free(fast->lazy);
    free(fast->share);
    fast->share = NULL;
    free(fast->isnull);
    fast->blocks = NULL;
    fast->lazy = NULL;
    fast->isnull = NULL;
    cg_smap_free(&fast->which);
    cg_smap_free(&fast->skip);
    cg_smap_free(&fast->uses);
    fast->acc = NULL;
    fast->addr0 = fast->container = NULL;
    fast->nacc = 0;
}

const cg_access *cg_fast_access(const cg_fast *fast, const ir_stmt *s)
{
    int k = cg_smap_get(&fast->which, s);
    return k > 0 ? &fast->acc[k - 1] : NULL;
}

int cg_fast_skips(const cg_fast *fast, const ir_stmt *s)
{
    return cg_smap_get(&fast->skip, s) != 0;
}

LLVMValueRef cg_fast_field_ptr(cg_fn *f, const ir_stmt *s, int *handled)
{
    const cg_access *a = f->fast ? cg_fast_access(f->fast, s) : NULL;
    *handled = a != NULL;
    if (!a)
        return NULL;
    if (f->fast->loop->op == IR_RANGE_FOR)
        return cg_fast_range_ptr(f, a, f->fast->counter);
    return cg_fast_struct_ptr(f, a);
}

LLVMValueRef cg_fast_isnull(cg_fn *f, const ir_stmt *ptr)
{
    const cg_access *a = f->fast ? cg_fast_access(f->fast, ptr) : NULL;
    if (!a || !f->fast->isnull)
        return NULL;
    return f->fast->isnull[a - f->fast->acc];
}
