/* List-generation removal. A listgen is a pure function of the versions it reads (the SNode's
 * mask, the parent's list). When the list it would write was produced by an identical listgen
 * that read the very same versions — no mask write since — and nothing but an (optionally)
 * interposed clear_list touched the list since, the listgen and that clear_list are removed:
 * readers then use the list that is already there. The earlier listgen may be a survivor of a
 * previous flush, which is how a list stays valid across flushes. */
#include "engine/sfg/sfg_internal.h"

#include <stdlib.h>

/* 1 when the listgen at node i can go; *clear is set to the clear_list to remove with it. */
static int redundant(const sfg_graph *g, uint32_t i, uint32_t *clear) {
    const sfg_node *n = &g->node[i];
    const sfg_task_meta *m = n->meta;
    uint32_t snode = m->snode;
    sfg_state list = SFG_STATE(SFG_LIST, snode);
    uint32_t kl = sfg_meta_find(m, list);
    if (kl == SFG_NONE || !(m->access[kl].flags & SFG_ACC_WRITE))
        return 0;
    int appends = (m->access[kl].flags & SFG_ACC_READ) != 0;
    /* everything else must be a plain input: a listgen with other effects is not pure */
    for (uint32_t k = 0; k < m->n_access; k++)
        if (k != kl && (m->access[k].flags & SFG_ACC_WRITE))
            return 0;

    *clear = SFG_NONE;
    uint32_t prev = n->slot[kl].in_owner;
    if (prev != 0 && g->node[prev].meta->type == SFG_CLEAR_LIST &&
        g->node[prev].meta->snode == snode) {
        const sfg_node *c = &g->node[prev];
        uint32_t kc = sfg_meta_find(c->meta, list);
        /* an executed clear_list already emptied the list; only its own listgen may read it */
        if (c->executed || kc == SFG_NONE || c->slot[kc].n_readers != (appends ? 1u : 0u))
            return 0;
        *clear = prev;
        prev = c->slot[kc].in_owner;
    } else if (appends) {
        return 0; /* appending to a list that is not cleared first is not idempotent */
    }
    if (prev == 0)
        return 0;
    const sfg_node *p = &g->node[prev];
    if (p->meta->type != SFG_LISTGEN || p->meta->snode != snode || p->ir.hash != n->ir.hash)
        return 0;
    /* same hash, hence the same access list: compare the versions read, input by input */
    for (uint32_t k = 0; k < m->n_access; k++)
        if (k != kl && p->slot[k].in_ver != n->slot[k].in_ver)
            return 0;
    return 1;
}

int sfg_pass_listgen(sfg_queue *q, int *changed) {
    sfg_graph *g = &q->g;
    uint32_t fp = g->first_pending, np = sfg_graph_pending(g);
    *changed = 0;
    if (!np)
        return SFG_OK;
    unsigned char *dead = calloc(np, 1);
    if (!dead)
        return SFG_ENOMEM;
    uint64_t removed = 0;
    for (uint32_t i = fp; i < g->n_node; i++) {
        if (g->node[i].meta->type != SFG_LISTGEN)
            continue;
        uint32_t clear;
        if (!redundant(g, i, &clear))
            continue;
        dead[i - fp] = 1;
        removed++;
        if (clear != SFG_NONE) {
            dead[clear - fp] = 1;
            removed++;
        }
    }
    int rc = SFG_OK;
    if (removed) {
        sfg_graph_remove(g, dead);
        rc = sfg_graph_rebuild(g);
        q->stats.listgens_removed += removed;
        *changed = 1;
    }
    free(dead);
    return rc;
}
