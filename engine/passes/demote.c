/* Activation demotion for the SFG: it proved the cells of one SNode active, so every
 * activation of that level (through any field placed in its tree) becomes a plain lookup. Recorded as the level's `demoted` bit on
 * the unlowered accesses; access lowering then emits activate = 0 for that level. */
#include "engine/passes/passes_internal.h"

typedef struct demote_ctx {
    const passes_bound *b;
    uint32_t tree_id, level;
    int changed;
} demote_ctx;

static int visit(ir_stmt *s, void *ud)
{
    demote_ctx *c = ud;
    if (s->op != IR_GLOBAL_PTR && s->op != IR_ACTIVATE)
        return 0;
    if (s->field >= c->b->nfields || pass_tree_id(c->b, s->field) != c->tree_id)
        return 0;
    const ir_field_info *f = &c->b->task->fields[s->field];
    if (c->level >= f->nlevels || !ir_level_is_sparse(&f->levels[c->level]))
        return 0;
    if (!(s->demoted & (1u << c->level))) {
        s->demoted |= 1u << c->level;
        c->changed = 1;
    }
    return 0;
}

passes_bound *passes_demote(const passes_bound *b, uint32_t snode)
{
    if (!b)
        return NULL;
    demote_ctx c = {b, snode / 16u, snode % 16u, 0};
    ir_task *t = pass_clone(b->task);
    if (!t)
        return NULL;
    /* the statements are the clone's, the descriptors the same: visit with b's binding */
    ir_walk(t->body, visit, &c);
    if (!c.changed || pass_compute_meta(t) != 0) {
        ir_task_free(t);
        return NULL;
    }
    return passes_bound_adopt(t, b->field_id, b->nfields, b->gtmp_state);
}
