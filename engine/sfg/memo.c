/* The flush memo: what the passes made of a flush, kept by a key that describes everything they
 * read, so a flush that comes again (a solver's next iteration, the next substep) takes the
 * result instead of optimizing again.
 *
 * What the passes read: the pending tasks (IR, base hash, arguments, names, in order), which
 * task or survivor each access finds its version from, and the versions themselves, which the
 * passes only ever compare for equality between accesses to one state (listgen: a survivor's
 * inputs against a pending listgen's; demotion: the masks both tasks query; fusion and DSE:
 * list versions). Survivors are read through their IR, base hash, type and slots. The key hashes
 * all of that with versions written as distances from the state's version at the flush's
 * start, so equal keys mean equal comparisons. Two independent 64-bit hashes make the key; as
 * with IR hashes (sfg_ir_ops.hash), equal keys are taken to mean equal inputs. */
#include "engine/sfg/sfg_internal.h"

#include <stdlib.h>
#include <string.h>

/* Past this many entries or bytes of copied arguments the memo starts again empty: a program
 * whose flushes never repeat should not grow it without bound. */
#define MEMO_MAX_ENTRIES 4096u
#define MEMO_MAX_BYTES (64u << 20)

typedef struct memo_node {
    sfg_ir ir;
    uint64_t base_hash;
    const sfg_task_meta *meta;
    unsigned char *args;
    size_t args_size;
    sfg_tags tags;
    char name[SFG_NAME_MAX];
} memo_node;

struct sfg_memo_entry {
    memo_node *node;
    uint32_t n;
    sfg_stats delta; /* what the passes added to the pass counters */
};

typedef struct hasher {
    uint64_t a, b;
} hasher;

/* One multiply per word and lane (a key hashes thousands of words per flush, and a full mix
 * per word was a fifth of a memoized flush); each step is invertible in the state, and the
 * lanes differ in multiplier, rotation and how the word enters. The key mixes both at the end. */
static void put(hasher *h, uint64_t w) {
    h->a = (h->a ^ w) * 0x9e3779b97f4a7c15ull;
    h->a = (h->a << 31) | (h->a >> 33);
    h->b = (h->b + w) * 0xff51afd7ed558ccdull;
    h->b = (h->b << 27) | (h->b >> 37);
}

static void put_bytes(hasher *h, const void *p, size_t n) {
    const unsigned char *c = p;
    put(h, (uint64_t)n);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, c, 8);
        put(h, w);
        c += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, c, n);
        put(h, w);
    }
}

/* The state record of node i's access k (rebuild fills slot.rec for every node it inserted;
 * the map answers for any other). */
static const sfg_state_rec *rec_of(const sfg_graph *g, uint32_t i, uint32_t k) {
    const sfg_slot *sl = &g->node[i].slot[k];
    if (sl->rec)
        return &g->st[sl->rec - 1];
    uint64_t v;
    if (sfg_map_get(&g->st_index, g->node[i].meta->access[k].state, 0, &v))
        return &g->st[v];
    return NULL;
}

/* A version as its distance from the state's version at the flush's start (no record: the
 * state is new to the graph, and its base is 0). */
static uint64_t dist(const sfg_state_rec *r, uint64_t v) {
    return v - (r ? r->base_version : 0);
}

void sfg_memo_key(const sfg_graph *g, uint64_t key[2]) {
    hasher h = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull};
    put(&h, g->first_pending);
    put(&h, g->n_node);
    for (uint32_t i = 1; i < g->n_node; i++) {
        const sfg_node *n = &g->node[i];
        int pending = i >= g->first_pending;
        put(&h, n->ir.hash);
        put(&h, n->base_hash);
        put(&h, ((uint64_t)n->meta->type << 1) | (uint64_t)n->executed);
        if (pending) {
            put_bytes(&h, n->args, n->args_size);
            put_bytes(&h, n->name, strlen(n->name));
            for (uint32_t t = 0; t < n->tags.n; t++)
                put(&h, (uint64_t)(uintptr_t)n->tags.tag[t]);
            put(&h, ((uint64_t)n->tags.n << 1) | n->tags.more);
        }
        for (uint32_t k = 0; k < n->meta->n_access; k++) {
            const sfg_slot *sl = &n->slot[k];
            uint64_t d = dist(rec_of(g, i, k), sl->in_ver);
            /* A survivor read its version before this flush: the current one (0) or an older
             * one, which no pending task can find, so no comparison tells older ones apart
             * (and a long-lived survivor's distances grow every flush). */
            put(&h, pending || d == 0 ? d : UINT64_MAX);
            if (pending)
                put(&h, sl->in_owner);
        }
    }
    key[0] = sfg_mix64(h.a ^ (h.b >> 17));
    key[1] = sfg_mix64(h.b + 0x243f6a8885a308d3ull) ^ h.a;
}

static void entry_free(sfg_memo_entry *e) {
    for (uint32_t i = 0; i < e->n; i++)
        free(e->node[i].args);
    free(e->node);
    e->node = NULL;
    e->n = 0;
}

static void memo_clear(sfg_memo *m) {
    for (uint32_t i = 0; i < m->n; i++)
        entry_free(&m->entry[i]);
    m->n = 0;
    m->bytes = 0;
    sfg_map_clear(&m->index);
}

void sfg_memo_free(sfg_memo *m) {
    memo_clear(m);
    free(m->entry);
    sfg_map_free(&m->index);
    memset(m, 0, sizeof *m);
}

const sfg_memo_entry *sfg_memo_find(const sfg_memo *m, const uint64_t key[2]) {
    uint64_t v;
    return sfg_map_get(&m->index, key[0], key[1], &v) ? &m->entry[v] : NULL;
}

/* The counters the passes move (queue.c counts launches after the passes, hit or not). */
static sfg_stats pass_delta(const sfg_stats *after, const sfg_stats *before) {
    sfg_stats d;
    memset(&d, 0, sizeof d);
    d.listgens_removed = after->listgens_removed - before->listgens_removed;
    d.activations_demoted = after->activations_demoted - before->activations_demoted;
    d.tasks_fused = after->tasks_fused - before->tasks_fused;
    d.stores_eliminated = after->stores_eliminated - before->stores_eliminated;
    d.tasks_eliminated = after->tasks_eliminated - before->tasks_eliminated;
    return d;
}

int sfg_memo_store(sfg_memo *m, const uint64_t key[2], const sfg_graph *g,
                   const sfg_stats *before, const sfg_stats *after) {
    uint32_t np = sfg_graph_pending(g);
    size_t bytes = (size_t)np * sizeof(memo_node);
    for (uint32_t i = g->first_pending; i < g->n_node; i++)
        bytes += g->node[i].args_size;
    if (bytes > MEMO_MAX_BYTES)
        return SFG_OK; /* too big to keep: optimized afresh every time, the rest kept */
    if (m->n >= MEMO_MAX_ENTRIES || m->bytes + bytes > MEMO_MAX_BYTES)
        memo_clear(m);
    if (sfg_reserve((void **)&m->entry, &m->cap, m->n + 1, sizeof *m->entry))
        return SFG_ENOMEM;
    sfg_memo_entry *e = &m->entry[m->n];
    memset(e, 0, sizeof *e);
    if (np && !(e->node = calloc(np, sizeof *e->node)))
        return SFG_ENOMEM;
    for (uint32_t p = 0; p < np; p++) {
        const sfg_node *n = &g->node[g->first_pending + p];
        memo_node *o = &e->node[p];
        o->ir = n->ir;
        o->base_hash = n->base_hash;
        o->meta = n->meta;
        memcpy(o->name, n->name, sizeof o->name);
        o->tags = n->tags;
        if (n->args_size) {
            if (!(o->args = malloc(n->args_size))) {
                entry_free(e);
                return SFG_ENOMEM;
            }
            memcpy(o->args, n->args, n->args_size);
            o->args_size = n->args_size;
        }
        e->n = p + 1;
    }
    e->n = np;
    e->delta = pass_delta(after, before);
    if (sfg_map_put(&m->index, key[0], key[1], m->n)) {
        entry_free(e);
        return SFG_ENOMEM;
    }
    m->n++;
    m->bytes += bytes;
    return SFG_OK;
}

int sfg_memo_replay(const sfg_memo_entry *e, sfg_graph *g, sfg_stats *stats) {
    for (uint32_t i = g->first_pending; i < g->n_node; i++)
        sfg_node_release(&g->node[i]);
    g->n_node = g->first_pending;
    for (uint32_t p = 0; p < e->n; p++) {
        const memo_node *o = &e->node[p];
        int rc = sfg_graph_append(g, o->ir, o->base_hash, o->meta, o->args, o->args_size, o->name, &o->tags);
        if (rc)
            return rc;
    }
    int rc = sfg_graph_rebuild(g);
    if (rc)
        return rc; /* the flush fails: its batch never runs, so nothing is counted */
    stats->listgens_removed += e->delta.listgens_removed;
    stats->activations_demoted += e->delta.activations_demoted;
    stats->tasks_fused += e->delta.tasks_fused;
    stats->stores_eliminated += e->delta.stores_eliminated;
    stats->tasks_eliminated += e->delta.tasks_eliminated;
    return SFG_OK;
}
