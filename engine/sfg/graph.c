/* The state-flow graph itself: nodes are tasks, edges are states. Built by inserting tasks in a
 * topological order; each state keeps a chain of writers (its versions) with reader branches.
 * Passes edit the task list and call sfg_graph_rebuild, which re-inserts everything: since any
 * topological order builds the same graph, no pass has to patch edges by hand. */
#include "engine/sfg/sfg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sfg_node_release(sfg_node *n) {
    free(n->slot);
    free(n->args);
    n->slot = NULL;
    n->args = NULL;
}

int sfg_graph_init(sfg_graph *g) {
    memset(g, 0, sizeof *g);
    if (sfg_reserve((void **)&g->node, &g->cap_node, 16, sizeof *g->node))
        return SFG_ENOMEM;
    memset(&g->node[0], 0, sizeof g->node[0]);
    g->node[0].executed = 1;
    strcpy(g->node[0].name, "initial");
    g->n_node = 1;
    g->first_pending = 1;
    return SFG_OK;
}

void sfg_graph_free(sfg_graph *g) {
    for (uint32_t i = 0; i < g->n_node; i++)
        sfg_node_release(&g->node[i]);
    free(g->node);
    free(g->st);
    sfg_map_free(&g->st_index);
    free(g->rd);
    free(g->edge);
    free(g->succ_start);
    free(g->succ);
    memset(g, 0, sizeof *g);
}

uint32_t sfg_graph_pending(const sfg_graph *g) { return g->n_node - g->first_pending; }

int sfg_node_init(sfg_node *n, sfg_ir ir, uint64_t base_hash, const sfg_task_meta *meta,
                  const void *args, size_t args_size, const char *name, const sfg_tags *tags,
                  uint64_t serial) {
    memset(n, 0, sizeof *n);
    n->ir = ir;
    if (tags)
        n->tags = *tags;
    n->base_hash = base_hash;
    n->meta = meta;
    n->serial = serial;
    if (meta->n_access) {
        n->slot = calloc(meta->n_access, sizeof *n->slot);
        if (!n->slot)
            return SFG_ENOMEM;
    }
    if (args_size) {
        n->args = malloc(args_size);
        if (!n->args) {
            free(n->slot);
            n->slot = NULL;
            return SFG_ENOMEM;
        }
        memcpy(n->args, args, args_size);
        n->args_size = args_size;
    }
    if (name) { /* copied, not printed: every launched and replayed task comes through here */
        size_t len = strnlen(name, sizeof n->name - 1);
        memcpy(n->name, name, len);
        n->name[len] = 0;
    }
    return SFG_OK;
}

void sfg_tags_merge(sfg_tags *out, const sfg_tags *a, const sfg_tags *b) {
    sfg_tags m = *a;
    /* a part without a tag came from somewhere unknown: the list is not the whole story */
    if ((a->n == 0) != (b->n == 0))
        m.more = 1;
    for (uint32_t i = 0; i < b->n; i++) {
        uint32_t j = 0;
        while (j < m.n && m.tag[j] != b->tag[i])
            j++;
        if (j < m.n)
            continue;
        if (m.n < SFG_MAX_TAGS)
            m.tag[m.n++] = b->tag[i];
        else
            m.more = 1;
    }
    m.more |= b->more;
    *out = m;
}

int sfg_graph_append(sfg_graph *g, sfg_ir ir, uint64_t base_hash, const sfg_task_meta *meta,
                     const void *args, size_t args_size, const char *name, const sfg_tags *tags) {
    if (sfg_reserve((void **)&g->node, &g->cap_node, g->n_node + 1, sizeof *g->node))
        return SFG_ENOMEM;
    int rc = sfg_node_init(&g->node[g->n_node], ir, base_hash, meta, args, args_size, name, tags,
                           ++g->next_serial);
    if (rc)
        return rc;
    g->n_node++;
    return SFG_OK;
}

/* The record of `state`, created (owned by the initial node, version 0) on first sight. */
static int state_index(sfg_graph *g, sfg_state state, uint32_t *out) {
    uint64_t v;
    if (sfg_map_get(&g->st_index, state, 0, &v)) {
        *out = (uint32_t)v;
        return SFG_OK;
    }
    if (sfg_reserve((void **)&g->st, &g->cap_st, g->n_st + 1, sizeof *g->st) ||
        sfg_map_put(&g->st_index, state, 0, g->n_st))
        return SFG_ENOMEM;
    g->st[g->n_st] = (sfg_state_rec){.state = state,
                                     .owner = 0,
                                     .owner_k = SFG_NONE,
                                     .version = 0,
                                     .readers = SFG_NONE,
                                     .base_owner = 0,
                                     .base_owner_k = SFG_NONE,
                                     .base_version = 0};
    *out = g->n_st++;
    return SFG_OK;
}

static int add_edge(sfg_graph *g, uint32_t from, uint32_t to, sfg_state state, uint32_t kind) {
    if (sfg_reserve((void **)&g->edge, &g->cap_edge, g->n_edge + 1, sizeof *g->edge))
        return SFG_ENOMEM;
    g->edge[g->n_edge++] = (sfg_gedge){.from = from, .to = to, .state = state, .kind = kind};
    return SFG_OK;
}

/* Inserts node i after everything already inserted: one step of every state-flow chain it
 * touches. RAW and WAW give flow edges from the latest owner; WAR gives dependency edges from
 * the readers of the version being replaced. */
static int insert(sfg_graph *g, uint32_t i) {
    const sfg_task_meta *m = g->node[i].meta;
    for (uint32_t k = 0; k < m->n_access; k++) {
        const sfg_access *a = &m->access[k];
        sfg_slot *sl = &g->node[i].slot[k];
        uint32_t si;
        int rc = SFG_OK;
        if (sl->rec) {
            si = sl->rec - 1;
        } else {
            if ((rc = state_index(g, a->state, &si)))
                return rc;
            sl->rec = si + 1;
        }
        sfg_state_rec *st = &g->st[si];
        sl->in_ver = st->version;
        sl->in_owner = st->owner;
        sl->n_readers = 0;
        sl->next_writer = SFG_NONE;
        sl->out_ver = 0;
        sfg_slot *owner_slot =
            st->owner != 0 && st->owner_k != SFG_NONE ? &g->node[st->owner].slot[st->owner_k]
                                                      : NULL;
        if (a->flags & SFG_ACC_READ) {
            if ((rc = add_edge(g, st->owner, i, a->state, SFG_EDGE_FLOW)))
                return rc;
            if (owner_slot)
                owner_slot->n_readers++;
        }
        if (a->flags & SFG_ACC_WRITE) {
            if (!(a->flags & SFG_ACC_READ) &&
                (rc = add_edge(g, st->owner, i, a->state, SFG_EDGE_FLOW)))
                return rc;
            for (uint32_t r = st->readers; r != SFG_NONE; r = g->rd[r].next)
                if ((rc = add_edge(g, g->rd[r].node, i, a->state, SFG_EDGE_DEP)))
                    return rc;
            st = &g->st[si];
            if (owner_slot)
                owner_slot->next_writer = i;
            st->version++;
            st->owner = i;
            st->owner_k = k;
            st->readers = SFG_NONE;
            sl->out_ver = st->version;
        } else {
            if (sfg_reserve((void **)&g->rd, &g->cap_rd, g->n_rd + 1, sizeof *g->rd))
                return SFG_ENOMEM;
            st = &g->st[si];
            g->rd[g->n_rd] = (struct sfg_reader){.node = i, .next = st->readers};
            st->readers = g->n_rd++;
        }
    }
    return SFG_OK;
}

/* Every state back to where the last executed batch left it, before the pending tasks are
 * inserted (or numbered) again. */
static void reset_states(sfg_graph *g) {
    for (uint32_t s = 0; s < g->n_st; s++) {
        sfg_state_rec *st = &g->st[s];
        st->owner = st->base_owner;
        st->owner_k = st->base_owner_k;
        st->version = st->base_version;
        st->readers = SFG_NONE;
    }
}

/* The version part of insert() alone, for every pending task in order: what the memo key
 * reads (slot in_ver, in_owner, out_ver) without the edges, reader lists and successor lists a
 * rebuild makes. A memoized flush replaces these tasks anyway, and its replay rebuilds. */
int sfg_graph_number(sfg_graph *g) {
    reset_states(g);
    g->n_rd = 0;
    g->n_edge = 0;
    for (uint32_t i = g->first_pending; i < g->n_node; i++) {
        const sfg_task_meta *m = g->node[i].meta;
        for (uint32_t k = 0; k < m->n_access; k++) {
            sfg_slot *sl = &g->node[i].slot[k];
            uint32_t si;
            if (sl->rec) {
                si = sl->rec - 1;
            } else {
                int rc = state_index(g, m->access[k].state, &si);
                if (rc)
                    return rc;
                sl->rec = si + 1;
            }
            sfg_state_rec *st = &g->st[si];
            sl->in_ver = st->version;
            sl->in_owner = st->owner;
            sl->out_ver = 0;
            if (m->access[k].flags & SFG_ACC_WRITE) {
                st->version++;
                st->owner = i;
                st->owner_k = k;
                sl->out_ver = st->version;
            }
        }
    }
    return SFG_OK;
}

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Successor lists (CSR), sorted and without duplicates: two tasks sharing several states are
 * one dependency for ordering and reachability. */
static int build_succ(sfg_graph *g) {
    if (sfg_reserve((void **)&g->succ_start, &g->cap_succ_start, g->n_node + 1,
                    sizeof *g->succ_start) ||
        sfg_reserve((void **)&g->succ, &g->cap_succ, g->n_edge ? g->n_edge : 1, sizeof *g->succ))
        return SFG_ENOMEM;
    uint32_t *start = g->succ_start, fp = g->first_pending;
    memset(start, 0, (size_t)(g->n_node + 1) * sizeof *start);
    /* Only pending tasks get lists (fusion's reachability reads no others): the initial node
     * and other survivors own most states at a flush's start, and their long lists were
     * sorted at every rebuild for nothing. */
    for (uint32_t e = 0; e < g->n_edge; e++)
        if (g->edge[e].from >= fp)
            start[g->edge[e].from + 1]++;
    for (uint32_t i = 0; i < g->n_node; i++)
        start[i + 1] += start[i];
    /* fill using start[i] as a cursor, then shift back */
    for (uint32_t e = 0; e < g->n_edge; e++)
        if (g->edge[e].from >= fp)
            g->succ[start[g->edge[e].from]++] = g->edge[e].to;
    for (uint32_t i = g->n_node; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    uint32_t w = 0;
    for (uint32_t i = 0; i < g->n_node; i++) {
        uint32_t b = start[i], e = start[i + 1];
        /* most tasks have a few successors: insertion sort, without qsort's calls per compare
         * (which were a third of the graph rebuilds that fusion rounds do) */
        if (e - b <= 24) {
            for (uint32_t j = b + 1; j < e; j++) {
                uint32_t v = g->succ[j], k = j;
                for (; k > b && g->succ[k - 1] > v; k--)
                    g->succ[k] = g->succ[k - 1];
                g->succ[k] = v;
            }
        } else {
            qsort(g->succ + b, e - b, sizeof *g->succ, cmp_u32);
        }
        start[i] = w;
        for (uint32_t j = b; j < e; j++)
            if (j == b || g->succ[j] != g->succ[j - 1])
                g->succ[w++] = g->succ[j];
    }
    start[g->n_node] = w;
    return SFG_OK;
}

int sfg_graph_rebuild(sfg_graph *g) {
    reset_states(g);
    for (uint32_t i = 1; i < g->first_pending; i++)
        for (uint32_t k = 0; k < g->node[i].meta->n_access; k++) {
            g->node[i].slot[k].n_readers = 0;
            g->node[i].slot[k].next_writer = SFG_NONE;
        }
    g->n_rd = 0;
    g->n_edge = 0;
    for (uint32_t i = g->first_pending; i < g->n_node; i++) {
        int rc = insert(g, i);
        if (rc)
            return rc;
    }
    return build_succ(g);
}

void sfg_graph_remove(sfg_graph *g, const unsigned char *dead) {
    uint32_t w = g->first_pending;
    for (uint32_t i = g->first_pending; i < g->n_node; i++) {
        if (dead[i - g->first_pending]) {
            sfg_node_release(&g->node[i]);
            continue;
        }
        g->node[w++] = g->node[i];
    }
    g->n_node = w;
}

int sfg_graph_set_ir(sfg_graph *g, uint32_t i, sfg_ir ir, const sfg_task_meta *meta) {
    sfg_node *n = &g->node[i];
    sfg_slot *slot = NULL;
    if (meta->n_access && !(slot = calloc(meta->n_access, sizeof *slot)))
        return SFG_ENOMEM;
    free(n->slot);
    n->slot = slot;
    n->ir = ir;
    n->meta = meta;
    return SFG_OK;
}

int sfg_graph_retire(sfg_graph *g) {
    unsigned char *alive = calloc(g->n_node, 1);
    uint32_t *remap = malloc((size_t)g->n_node * sizeof *remap);
    if (!alive || !remap) {
        free(alive);
        free(remap);
        return SFG_ENOMEM;
    }
    alive[0] = 1;
    for (uint32_t s = 0; s < g->n_st; s++)
        alive[g->st[s].owner] = 1;
    uint32_t w = 0;
    for (uint32_t i = 0; i < g->n_node; i++) {
        if (!alive[i]) {
            sfg_node_release(&g->node[i]);
            remap[i] = SFG_NONE;
            continue;
        }
        remap[i] = w;
        g->node[i].executed = 1;
        g->node[w++] = g->node[i];
    }
    g->n_node = w;
    g->first_pending = w;
    for (uint32_t s = 0; s < g->n_st; s++) {
        sfg_state_rec *st = &g->st[s];
        st->base_owner = st->owner = remap[st->owner];
        st->base_owner_k = st->owner_k;
        st->base_version = st->version;
        st->readers = SFG_NONE;
    }
    g->n_edge = 0;
    g->n_rd = 0;
    free(alive);
    free(remap);
    return build_succ(g);
}

void sfg_graph_forget(sfg_graph *g) {
    for (uint32_t i = 1; i < g->n_node; i++)
        sfg_node_release(&g->node[i]);
    g->n_node = g->first_pending = 1;
    for (uint32_t s = 0; s < g->n_st; s++) {
        sfg_state_rec *st = &g->st[s];
        /* a fresh version: nothing recorded before can match it */
        st->base_version = (st->version > st->base_version ? st->version : st->base_version) + 1;
        st->version = st->base_version;
        st->base_owner = st->owner = 0;
        st->base_owner_k = st->owner_k = SFG_NONE;
        st->readers = SFG_NONE;
    }
    g->n_edge = 0;
    g->n_rd = 0;
}

int sfg_graph_host_write(sfg_graph *g, sfg_state state) {
    uint32_t si;
    int rc = state_index(g, state, &si);
    if (rc)
        return rc;
    sfg_state_rec *st = &g->st[si];
    st->base_version = (st->version > st->base_version ? st->version : st->base_version) + 1;
    st->version = st->base_version;
    st->base_owner = st->owner = 0;
    st->base_owner_k = st->owner_k = SFG_NONE;
    st->readers = SFG_NONE;
    return SFG_OK;
}

int sfg_same_domain(const sfg_node *a, const sfg_node *b) {
    const sfg_task_meta *ma = a->meta, *mb = b->meta;
    if (ma->type != mb->type)
        return 0;
    switch (ma->type) {
    case SFG_SERIAL:
        return 1;
    case SFG_RANGE_FOR:
        return !((ma->flags | mb->flags) & SFG_TASK_DYNAMIC_RANGE) && ma->begin == mb->begin &&
               ma->end == mb->end;
    case SFG_STRUCT_FOR: {
        if (ma->snode != mb->snode)
            return 0;
        sfg_state list = SFG_STATE(SFG_LIST, ma->snode);
        uint32_t ka = sfg_meta_find(ma, list), kb = sfg_meta_find(mb, list);
        if (ka == SFG_NONE || kb == SFG_NONE)
            return ka == kb;
        return a->slot[ka].in_ver == b->slot[kb].in_ver;
    }
    default:
        return 0;
    }
}
