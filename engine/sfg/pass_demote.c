/* Activation demotion. A task T activates cells of SNode S (it writes mask(S)). If the latest
 * writer of mask(S) before T is a task O over the same iteration set that activated every cell
 * T can, and no one changed the mask since, T's activations are no-ops and become plain
 * lookups. T then no longer writes mask(S), so a later listgen of S can be removed, and tasks
 * that only read S between O and T no longer order T after them (fusion). O covers T when
 *  - both were launched from the same IR and activate cells that depend only on the loop index
 *    (SFG_ACC_INDEX_ONLY): the multigrid restriction relaunched each V-cycle; or
 *  - O activates the cell of every loop index and T only cells of loop indices
 *    (SFG_ACC_AT_EVERY_INDEX, SFG_ACC_AT_INDEX), whatever their IRs: a solver's kernels writing
 *    their results into trees of their own at each voxel of one domain.
 * "Same iteration set" is sfg_same_domain (a struct_for's list version) plus equal versions of
 * every mask both tasks query (a bitmasked leaf decides which voxels a struct_for visits).
 * O may be a survivor of an earlier flush. */
#include "engine/sfg/sfg_internal.h"

#include <stdlib.h>

/* Every mask that nodes o and i both query (read for activity, not only to look values up)
 * has the same version for both; `skip`, the mask O last wrote, is the one being compared. */
static int same_queries(const sfg_graph *g, uint32_t o, uint32_t i, sfg_state skip) {
    const sfg_node *on = &g->node[o], *t = &g->node[i];
    for (uint32_t k = 0; k < t->meta->n_access; k++) {
        const sfg_access *a = &t->meta->access[k];
        if (SFG_STATE_KIND(a->state) != SFG_MASK || !(a->flags & SFG_ACC_READ) ||
            (a->flags & SFG_ACC_LOOKUP) || a->state == skip)
            continue;
        uint32_t ko = sfg_meta_find(on->meta, a->state);
        if (ko == SFG_NONE)
            continue;
        const sfg_access *b = &on->meta->access[ko];
        if ((b->flags & SFG_ACC_READ) && !(b->flags & SFG_ACC_LOOKUP) &&
            on->slot[ko].in_ver != t->slot[k].in_ver)
            return 0;
    }
    return 1;
}

static int can_demote(const sfg_graph *g, uint32_t i, uint32_t k) {
    const sfg_node *t = &g->node[i];
    const sfg_access *a = &t->meta->access[k];
    if (SFG_STATE_KIND(a->state) != SFG_MASK || !(a->flags & SFG_ACC_WRITE) ||
        !(a->flags & (SFG_ACC_INDEX_ONLY | SFG_ACC_AT_INDEX)))
        return 0;
    uint32_t o = t->slot[k].in_owner;
    if (o == 0 || o == i)
        return 0;
    const sfg_node *on = &g->node[o];
    if (!sfg_same_domain(on, t) || !same_queries(g, o, i, a->state))
        return 0;
    uint32_t ko = sfg_meta_find(on->meta, a->state);
    if (ko == SFG_NONE || !(on->meta->access[ko].flags & SFG_ACC_WRITE))
        return 0;
    uint32_t of = on->meta->access[ko].flags;
    if (on->base_hash == t->base_hash && (a->flags & SFG_ACC_INDEX_ONLY) &&
        (of & SFG_ACC_INDEX_ONLY))
        return 1;
    if (!(a->flags & SFG_ACC_AT_INDEX) || !(of & SFG_ACC_AT_EVERY_INDEX))
        return 0;
    /* ... and only where it gains something: another task read O's mask in between (a
     * listgen that may then stand for T's too, a reader that would otherwise order T after
     * it). Elsewhere demoting only costs a new IR and another sweep of the passes: a smoke
     * cook's optimizer time went from 0.41 to 0.63 s for no change in tasks or fusions. */
    uint32_t self = (a->flags & SFG_ACC_READ) ? 1u : 0u;
    return on->slot[ko].n_readers > self;
}

static int writes(const sfg_task_meta *m, sfg_state s) {
    uint32_t k = sfg_meta_find(m, s);
    return k != SFG_NONE && (m->access[k].flags & SFG_ACC_WRITE);
}

int sfg_pass_demote(sfg_queue *q, int *changed) {
    sfg_graph *g = &q->g;
    *changed = 0;
    /* decide on the graph as built, then edit: later tasks compare with earlier ones as they
     * were launched, and equal activation sets chain (T3 = T2 = T1) */
    uint32_t fp = g->first_pending, np = sfg_graph_pending(g);
    uint32_t *first = malloc((size_t)np * sizeof *first);
    uint32_t *snodes = NULL, n_sn = 0, cap_sn = 0;
    if (!first && np)
        return SFG_ENOMEM;
    int rc = SFG_OK;
    for (uint32_t i = fp; i < g->n_node && !rc; i++) {
        first[i - fp] = n_sn;
        const sfg_task_meta *m = g->node[i].meta;
        if (m->type != SFG_SERIAL && m->type != SFG_RANGE_FOR && m->type != SFG_STRUCT_FOR)
            continue;
        for (uint32_t k = 0; k < m->n_access; k++) {
            if (!can_demote(g, i, k))
                continue;
            if ((rc = sfg_reserve((void **)&snodes, &cap_sn, n_sn + 1, sizeof *snodes)))
                break;
            snodes[n_sn++] = SFG_STATE_ID(m->access[k].state);
        }
    }
    for (uint32_t i = fp; i < g->n_node && !rc; i++) {
        uint32_t b = first[i - fp], e = i + 1 < g->n_node ? first[i + 1 - fp] : n_sn;
        if (b == e)
            continue;
        sfg_ir ir = g->node[i].ir;
        const sfg_task_meta *meta = g->node[i].meta;
        int done = 0;
        for (uint32_t j = b; j < e; j++) {
            sfg_ir out;
            const sfg_task_meta *om;
            int r = sfg_bank_demote(q->bank, ir, snodes[j], &out);
            if (r == SFG_EOP)
                continue; /* the engine declined: keep the activation */
            if (r) {
                rc = r;
                break;
            }
            if ((r = sfg_bank_meta(q->bank, out, &om))) {
                rc = r;
                break;
            }
            if (writes(om, SFG_STATE(SFG_MASK, snodes[j])))
                continue; /* the op did not do what it promised: ignore its result */
            ir = out;
            meta = om;
            done++;
        }
        if (done && !rc) {
            rc = sfg_graph_set_ir(g, i, ir, meta);
            q->stats.activations_demoted += (uint64_t)done;
            *changed = 1;
        }
    }
    free(first);
    free(snodes);
    if (*changed && !rc)
        rc = sfg_graph_rebuild(g);
    return rc;
}
