/* Access lowering: field accesses by index become walks down the field's SNode chain,
 *   sn_root -> (sn_child l, sn_index l, sn_lookup l)  for l = 1 .. L-1
 *           -> sn_child L, sn_index L -> sn_field_ptr / sn_is_active / sn_activate / ...
 * which the code generator turns into runtime calls and recognizes as whole chains for its
 * fast loop copies (engine/codegen/access_chain.c), so every access keeps the full chain from
 * the root; its CSE and the fast copies share the common prefix.
 *
 * Activation flags: a chain whose pointer feeds a store or an atomic activates each level on
 * its way, except levels the SFG proved active (`demoted`), whose lookups are plain reads. A
 * read-only chain never activates: a NULL container propagates down and the load gives the
 * background (ir.h). */
#include "engine/passes/passes_internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct lower_ctx {
    ir_task *t;
    ir_stmt **todo;
    uint32_t n, cap;
    int oom;
} lower_ctx;

static int is_target(const ir_stmt *s)
{
    return s->op == IR_GLOBAL_PTR || s->op == IR_IS_ACTIVE || s->op == IR_ACTIVATE ||
           s->op == IR_DEACTIVATE;
}

static int clear_marks(ir_stmt *s, void *ud)
{
    (void)ud;
    s->mark = 0;
    return 0;
}

/* mark = 1 on global_ptrs through which something is written */
static int find_writes(ir_stmt *s, void *ud)
{
    lower_ctx *c = ud;
    if ((s->op == IR_GLOBAL_STORE || s->op == IR_ATOMIC) && s->arg[0]->op == IR_GLOBAL_PTR)
        s->arg[0]->mark = 1;
    if (is_target(s)) {
        if (c->n == c->cap) {
            uint32_t cap = c->cap ? 2 * c->cap : 32;
            ir_stmt **g = realloc(c->todo, cap * sizeof *g);
            if (!g)
                return c->oom = 1;
            c->todo = g;
            c->cap = cap;
        }
        c->todo[c->n++] = s;
    }
    return 0;
}

/* The slot that names the walk down a tree: the lowest slot placed in the same tree as `slot`.
 * Fields placed together differ only in their sn_field_ptr (place offset), so their walks are
 * one walk, which CSE then shares between them (a sample of three fields at one point looks
 * each corner's block up once). */
static uint32_t walk_slot(const ir_task *t, uint32_t slot) { return ir_tree_slot(t, slot); }

/* The container of `level` holding the element, activating above it per `act`. */
static ir_stmt *container_at(ir_builder *b, const ir_stmt *s, int level, uint32_t act)
{
    ir_stmt *idx[IR_MAX_DIM] = {0};
    for (int i = 0; i < s->nargs && i < IR_MAX_DIM; i++)
        idx[i] = s->arg[i];
    uint32_t w = walk_slot(b->task, s->field);
    ir_stmt *cell = ir_sn_root(b, w);
    for (int l = 1; l < level; l++) {
        ir_stmt *c = ir_sn_child(b, w, (uint32_t)l, cell);
        ir_stmt *i = ir_sn_index(b, w, (uint32_t)l, idx);
        cell = ir_sn_lookup(b, w, (uint32_t)l, (act >> l) & 1, c, i);
    }
    return ir_sn_child(b, w, (uint32_t)level, cell);
}

static ir_stmt *index_at(ir_builder *b, const ir_stmt *s, int level)
{
    ir_stmt *idx[IR_MAX_DIM] = {0};
    for (int i = 0; i < s->nargs && i < IR_MAX_DIM; i++)
        idx[i] = s->arg[i];
    return ir_sn_index(b, walk_slot(b->task, s->field), (uint32_t)level, idx);
}

/* Returns 0, or -1 when out of memory. Sets s->repl for value-producing statements. */
static int lower_one(ir_task *t, ir_stmt *s)
{
    const ir_field_info *f = &t->fields[s->field];
    int leaf = f->nlevels - 1;
    uint32_t all = leaf >= 31 ? 0xffffffffu : (2u << leaf) - 1u;
    ir_builder b;
    ir_builder_init(&b, t);
    ir_builder_before(&b, s);
    switch (s->op) {
    case IR_GLOBAL_PTR: {
        uint32_t act = s->mark ? all & ~s->demoted : 0;
        ir_stmt *c = container_at(&b, s, leaf, act);
        ir_stmt *i = index_at(&b, s, leaf);
        ir_stmt *p = ir_sn_field_ptr(&b, s->field, s->comp, (act >> leaf) & 1, c, i);
        if (!p)
            return -1;
        s->repl = p;
        return 0;
    }
    case IR_IS_ACTIVE: {
        ir_stmt *c = container_at(&b, s, leaf, 0);
        ir_stmt *i = index_at(&b, s, leaf);
        ir_stmt *q = ir_sn_op(&b, IR_SN_IS_ACTIVE, s->field, (uint32_t)leaf, c, i);
        if (!q)
            return -1;
        s->repl = q;
        return 0;
    }
    case IR_ACTIVATE: {
        /* only the deepest level still to activate needs an explicit activation; the lookups
         * above it activate their own levels */
        int deepest = 0;
        for (int l = 1; l <= leaf; l++)
            if (ir_level_is_sparse(&f->levels[l]) && !(s->demoted & (1u << l)))
                deepest = l;
        if (!deepest) {
            int sparse = 0;
            for (int l = 1; l <= leaf; l++)
                sparse |= ir_level_is_sparse(&f->levels[l]);
            if (sparse)
                return 0; /* every sparse level's activation is demoted: known active */
            /* an all-dense field: nothing to activate, but an index outside it is a range error,
             * as a write there is (the dense activation records it) */
            deepest = leaf;
        }
        ir_stmt *c = container_at(&b, s, deepest, all & ~s->demoted);
        ir_stmt *i = index_at(&b, s, deepest);
        return ir_sn_op(&b, IR_SN_ACTIVATE, s->field, (uint32_t)deepest, c, i) ? 0 : -1;
    }
    case IR_DEACTIVATE: {
        int deepest = 0;
        for (int l = 1; l <= leaf; l++)
            if (ir_level_is_sparse(&f->levels[l]))
                deepest = l;
        if (!deepest)
            return 0; /* nothing sparse: deactivation has no effect (ir.h) */
        ir_stmt *c = container_at(&b, s, deepest, 0);
        ir_stmt *i = index_at(&b, s, deepest);
        return ir_sn_op(&b, IR_SN_DEACTIVATE, s->field, (uint32_t)deepest, c, i) ? 0 : -1;
    }
    default:
        return 0;
    }
}

/* A loop task's prologue is re-run by every chunk and must stay free of effects
 * (task_abi.h), but offload may recompute a pointer there that the loop writes through: give
 * each such use its own copy inside the loop, so the activating chain lands in the body. */
typedef struct sink_ctx {
    ir_task *t;
    int oom;
} sink_ctx;

static int sink_use(ir_stmt *u, void *ud)
{
    sink_ctx *c = ud;
    if ((u->op != IR_GLOBAL_STORE && u->op != IR_ATOMIC) || u->arg[0]->op != IR_GLOBAL_PTR ||
        u->arg[0]->parent != c->t->body)
        return 0;
    ir_stmt *p = u->arg[0];
    ir_stmt *q = ir_stmt_new(c->t, IR_GLOBAL_PTR, p->ty);
    if (!q)
        return c->oom = 1;
    q->field = p->field;
    q->comp = p->comp;
    q->demoted = p->demoted;
    q->nargs = p->nargs;
    for (int i = 0; i < p->nargs; i++)
        q->arg[i] = p->arg[i];
    ir_insert_before(u, q);
    u->arg[0] = q;
    return 0;
}

static int sink_prologue_writes(ir_task *t)
{
    if ((t->kind != IR_TASK_RANGE_FOR && t->kind != IR_TASK_STRUCT_FOR) || !t->body->last ||
        !t->body->last->body)
        return 0;
    sink_ctx c = {t, 0};
    ir_walk(t->body->last->body, sink_use, &c);
    return c.oom ? -1 : 0;
}

int passes_lower_access(ir_task *t, char *err, size_t n)
{
    char dummy[8];
    if (!err || !n) {
        err = dummy;
        n = sizeof dummy;
    }
    if (!t) {
        snprintf(err, n, "lower_access: no task");
        return -1;
    }
    if (sink_prologue_writes(t) != 0) {
        snprintf(err, n, "lower_access '%s': out of memory", t->name);
        return -1;
    }
    lower_ctx c = {t, NULL, 0, 0, 0};
    ir_walk(t->body, clear_marks, NULL);
    ir_walk(t->body, find_writes, &c);
    int rc = 0;
    if (c.oom) {
        snprintf(err, n, "lower_access '%s': out of memory", t->name);
        rc = -1;
    }
    for (uint32_t i = 0; i < c.n && !rc; i++) {
        ir_stmt *s = c.todo[i];
        if (s->field >= t->nfields) {
            ir_task_number(t);
            snprintf(err, n, "lower_access '%s' $%u (%s): field slot %u of %u", t->name, s->id,
                     ir_op_name(s->op), s->field, t->nfields);
            rc = -1;
        } else if (lower_one(t, s) != 0) {
            snprintf(err, n, "lower_access '%s': out of memory", t->name);
            rc = -1;
        }
    }
    if (!rc) {
        ir_task_replace_uses(t);
        for (uint32_t i = 0; i < c.n; i++)
            ir_unlink(c.todo[i]);
    }
    free(c.todo);
    return rc;
}
