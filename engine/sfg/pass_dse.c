/* Dead-store elimination across tasks. A task T's stores to value state s are dead when the
 * version T produces is read by no task and the next writer W overwrites every cell T could
 * have written without reading s first: W writes s fully (SFG_ACC_FULL), or W covers its own
 * cell in every iteration (SFG_ACC_COVER) over the same iteration set on which T writes only
 * its own cells (UNIQUE, addr 0). The latest version of a state is never dead (it has no next
 * writer in the window): the host may read any field at a sync. Tasks the engine reports empty
 * after losing their stores are deleted; that can kill more stores, so the pass iterates. */
#include "engine/sfg/sfg_internal.h"

#include <stdlib.h>

#define DSE_ITERATIONS 16

static int store_dead(const sfg_graph *g, uint32_t i, uint32_t k) {
    const sfg_node *t = &g->node[i];
    const sfg_access *a = &t->meta->access[k];
    if (SFG_STATE_KIND(a->state) != SFG_VALUE || !(a->flags & SFG_ACC_WRITE))
        return 0;
    const sfg_slot *sl = &t->slot[k];
    if (sl->n_readers || sl->next_writer == SFG_NONE)
        return 0;
    const sfg_node *w = &g->node[sl->next_writer];
    uint32_t kw = sfg_meta_find(w->meta, a->state);
    if (kw == SFG_NONE)
        return 0;
    const sfg_access *aw = &w->meta->access[kw];
    if (!(aw->flags & SFG_ACC_WRITE) || (aw->flags & SFG_ACC_READ))
        return 0;
    if (aw->flags & SFG_ACC_FULL)
        return 1;
    const uint32_t own = SFG_ACC_UNIQUE;
    return (aw->flags & SFG_ACC_COVER) && (aw->flags & own) && aw->addr == 0 &&
           (a->flags & own) && a->addr == 0 && t->meta->type != SFG_SERIAL &&
           sfg_same_domain(t, w);
}

static int writes(const sfg_task_meta *m, sfg_state s) {
    uint32_t k = sfg_meta_find(m, s);
    return k != SFG_NONE && (m->access[k].flags & SFG_ACC_WRITE);
}

/* Removes the dead stores of node i; sets *gone when the task became empty. */
static int strip(sfg_queue *q, uint32_t i, int *edited, int *gone) {
    sfg_graph *g = &q->g;
    sfg_node *t = &g->node[i];
    sfg_ir ir = t->ir;
    const sfg_task_meta *meta = t->meta;
    *edited = *gone = 0;
    for (uint32_t k = 0; k < t->meta->n_access; k++) {
        if (!store_dead(g, i, k))
            continue;
        sfg_state s = t->meta->access[k].state;
        sfg_ir out;
        const sfg_task_meta *om;
        int empty = 0;
        int rc = sfg_bank_remove_stores(q->bank, ir, s, &out, &empty);
        if (rc == SFG_EOP)
            continue;
        if (rc)
            return rc;
        if ((rc = sfg_bank_meta(q->bank, out, &om)))
            return rc;
        if (writes(om, s))
            continue; /* the op kept the store: ignore its result */
        q->stats.stores_eliminated++;
        ir = out;
        meta = om;
        *edited = 1;
        if (empty && !(t->meta->flags & SFG_TASK_SIDE_EFFECTS) &&
            !(om->flags & SFG_TASK_SIDE_EFFECTS)) {
            *gone = 1;
            return SFG_OK;
        }
    }
    if (*edited)
        return sfg_graph_set_ir(g, i, ir, meta);
    return SFG_OK;
}

int sfg_pass_dse(sfg_queue *q, int *changed) {
    sfg_graph *g = &q->g;
    *changed = 0;
    for (int it = 0; it < DSE_ITERATIONS; it++) {
        uint32_t fp = g->first_pending, np = sfg_graph_pending(g);
        if (!np)
            return SFG_OK;
        unsigned char *dead = calloc(np, 1);
        if (!dead)
            return SFG_ENOMEM;
        /* decide on the graph as built, then edit: a store killed by W stays dead when W's own
         * store is killed too, since W's successor covers what W covered */
        unsigned char *hit = calloc(np, 1);
        if (!hit) {
            free(dead);
            return SFG_ENOMEM;
        }
        uint32_t n_hit = 0;
        for (uint32_t i = fp; i < g->n_node; i++)
            for (uint32_t k = 0; k < g->node[i].meta->n_access; k++)
                if (store_dead(g, i, k)) {
                    hit[i - fp] = 1;
                    n_hit++;
                    break;
                }
        int rc = SFG_OK, any = 0, n_dead = 0;
        /* strip in launch order: stripping reallocates a node's slots, and a node's
         * decision reads only its own slots and those of later nodes, untouched until then */
        for (uint32_t i = fp; n_hit && i < g->n_node && !rc; i++) {
            if (!hit[i - fp])
                continue;
            int edited, gone;
            rc = strip(q, i, &edited, &gone);
            if (gone) {
                dead[i - fp] = 1;
                n_dead++;
            }
            any |= edited;
        }
        free(hit);
        if (!rc && n_dead) {
            sfg_graph_remove(g, dead);
            q->stats.tasks_eliminated += (uint64_t)n_dead;
        }
        free(dead);
        if (rc)
            return rc;
        if (!any)
            return SFG_OK;
        *changed = 1;
        if ((rc = sfg_graph_rebuild(g)))
            return rc;
    }
    return SFG_OK;
}
