/* Dead-store removal for the SFG: the version of one value state that a task writes is never
 * read. Its stores go; the activations they implied stay (an activate statement: the mask is
 * another state, which later tasks may still observe); an atomic whose old value is used
 * becomes a load (the value before the update is the same). */
#include "engine/passes/passes_internal.h"

#include <stdlib.h>

typedef struct rs_ctx {
    const passes_bound *b;
    uint32_t id;
    ir_stmt **hit;
    uint32_t n, cap;
    int oom;
} rs_ctx;

static int targets(const rs_ctx *c, const ir_stmt *p)
{
    if (p->op == IR_GTMP_PTR)
        return c->id == c->b->gtmp_state;
    return p->op == IR_GLOBAL_PTR && p->field < c->b->nfields &&
           c->b->field_id[p->field] == c->id;
}

static int collect(ir_stmt *s, void *ud)
{
    rs_ctx *c = ud;
    if ((s->op != IR_GLOBAL_STORE && s->op != IR_ATOMIC) || !targets(c, s->arg[0]))
        return 0;
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 16;
        ir_stmt **g = realloc(c->hit, cap * sizeof *g);
        if (!g)
            return c->oom = 1;
        c->hit = g;
        c->cap = cap;
    }
    c->hit[c->n++] = s;
    return 0;
}

/* 1 when writing through p would activate something (a sparse level not proven active). */
static int activates(const ir_task *t, const ir_stmt *p)
{
    if (p->op != IR_GLOBAL_PTR)
        return 0;
    const ir_field_info *f = &t->fields[p->field];
    for (int l = 1; l < f->nlevels; l++)
        if (ir_level_is_sparse(&f->levels[l]) && !(p->demoted & (1u << l)))
            return 1;
    return 0;
}

static int strip(ir_task *t, rs_ctx *c)
{
    ir_task_count_uses(t);
    for (uint32_t i = 0; i < c->n; i++) {
        ir_stmt *s = c->hit[i], *p = s->arg[0];
        ir_builder b;
        ir_builder_init(&b, t);
        ir_builder_before(&b, s);
        if (activates(t, p)) {
            ir_stmt *a = ir_field_op(&b, IR_ACTIVATE, p->field, p->arg);
            if (!a)
                return -1;
            a->demoted = p->demoted;
        }
        if (s->op == IR_ATOMIC && s->mark) {
            ir_stmt *l = ir_global_load(&b, p);
            if (!l)
                return -1;
            s->repl = l;
        }
    }
    ir_task_replace_uses(t);
    for (uint32_t i = 0; i < c->n; i++)
        ir_unlink(c->hit[i]);
    return 0;
}

passes_bound *passes_remove_stores(const passes_bound *b, sfg_state state, int *empty)
{
    if (empty)
        *empty = 0;
    if (!b || SFG_STATE_KIND(state) != SFG_VALUE)
        return NULL;
    ir_task *t = pass_clone(b->task);
    if (!t)
        return NULL;
    rs_ctx c = {b, SFG_STATE_ID(state), NULL, 0, 0, 0};
    ir_walk(t->body, collect, &c);
    int ok = !c.oom && c.n > 0 && strip(t, &c) == 0;
    free(c.hit);
    if (!ok) {
        ir_task_free(t);
        return NULL;
    }
    /* loads that only fed the removed stores would keep reads in the metadata */
    pass_drop_dead(t);
    if (pass_compute_meta(t) != 0) {
        ir_task_free(t);
        return NULL;
    }
    if (empty)
        *empty = !pass_block_has_effect(t->body);
    return passes_bound_adopt(t, b->field_id, b->nfields, b->gtmp_state);
}
