/* Internals shared by the files of engine/sfg/; nothing outside this folder includes it. */
#ifndef PLUME_ENGINE_SFG_INTERNAL_H
#define PLUME_ENGINE_SFG_INTERNAL_H

#include "engine/sfg/sfg.h"

#include <stdarg.h>

#define SFG_NONE UINT32_MAX
#define SFG_NAME_MAX 192 /* a fused task's name lists its parts */
#define SFG_ERR_MAX 256

/* ---- small utilities (util.c) ---- */

/* Makes room for `need` elements in *p (capacity *cap, element size `elem`); 0 or SFG_ENOMEM. */
int sfg_reserve(void **p, uint32_t *cap, uint32_t need, size_t elem);
void sfg_set_error(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double sfg_now(void);
uint64_t sfg_mix64(uint64_t x);

/* Open-addressing map from a 128-bit key (k0, k1) to a 64-bit value. */
typedef struct sfg_map {
    struct sfg_map_slot *slot;
    uint32_t cap;   /* power of two or 0 */
    uint32_t n;
} sfg_map;

int sfg_map_put(sfg_map *m, uint64_t k0, uint64_t k1, uint64_t v);
/* 1 and *v set when found, 0 otherwise. */
int sfg_map_get(const sfg_map *m, uint64_t k0, uint64_t k1, uint64_t *v);
void sfg_map_clear(sfg_map *m);
void sfg_map_free(sfg_map *m);

/* Index of `state` in a bank-sorted access array, or SFG_NONE. */
uint32_t sfg_meta_find(const sfg_task_meta *m, sfg_state state);

/* ---- the IR bank (bank.c) ---- */

typedef struct sfg_bank_entry {
    uint64_t hash;
    void *ir;
    sfg_task_meta *meta;  /* NULL until first asked; access array allocated with it */
} sfg_bank_entry;

struct sfg_bank {
    sfg_ir_ops ops;
    sfg_bank_entry *entry;
    uint32_t n_entry, cap_entry;
    sfg_map by_hash;      /* hash -> entry index */
    sfg_map fuse_cache;   /* (hash a, hash b) -> result hash | declined */
    sfg_map demote_cache; /* (hash, snode) -> result hash | declined */
    sfg_map dse_cache;    /* (hash, state) -> result entry index, empty and declined bits */
    sfg_bank_stats stats;
    char err[SFG_ERR_MAX];
};

/* ---- the graph (graph.c) ---- */

/* What a node knows about one of its accesses (parallel to meta->access). Versions are
 * monotonic per state over the queue's life; owners are node indices in the current build. */
typedef struct sfg_slot {
    uint64_t in_ver;      /* version the task finds (reads, or replaces) */
    uint64_t out_ver;     /* version it produces (WRITE only) */
    uint32_t in_owner;    /* node that produced in_ver (0: the initial node) */
    uint32_t n_readers;   /* WRITE: tasks that read out_ver */
    uint32_t next_writer; /* WRITE: the task that replaces out_ver, or SFG_NONE */
    uint32_t rec;         /* the access's state record + 1 (0: not looked up yet): records are
                           * never removed, and a graph is rebuilt many times per flush */
} sfg_slot;

typedef struct sfg_node {
    sfg_ir ir;
    uint64_t base_hash;    /* hash as launched (or as fused): demotion compares these */
    const sfg_task_meta *meta;
    sfg_slot *slot;
    unsigned char *args;
    size_t args_size;
    uint64_t serial;       /* launch number, for dumps */
    int executed;          /* survivor from an earlier flush */
    sfg_tags tags;
    char name[SFG_NAME_MAX];
} sfg_node;

typedef struct sfg_state_rec {
    sfg_state state;
    uint32_t owner, owner_k;           /* current latest owner and its access index */
    uint64_t version;
    uint32_t readers;                  /* head of the reader list of `version` in g->rd */
    uint32_t base_owner, base_owner_k; /* after the last executed batch */
    uint64_t base_version;
} sfg_state_rec;

typedef struct sfg_gedge {
    uint32_t from, to;
    sfg_state state;
    uint32_t kind;  /* SFG_EDGE_FLOW or SFG_EDGE_DEP */
} sfg_gedge;

typedef struct sfg_graph {
    /* [0] the initial node; [1, first_pending) survivors; then the pending tasks in a
     * topological order (launch order, as edited by the passes). */
    sfg_node *node;
    uint32_t n_node, cap_node;
    uint32_t first_pending;
    sfg_state_rec *st;
    uint32_t n_st, cap_st;
    sfg_map st_index;           /* state -> index in st */
    struct sfg_reader { uint32_t node, next; } *rd;
    uint32_t n_rd, cap_rd;
    sfg_gedge *edge;
    uint32_t n_edge, cap_edge;
    /* successors of each pending node, deduplicated, sorted (CSR over node indices; a
     * survivor's list is empty: nothing reads those) */
    uint32_t *succ_start, *succ;
    uint32_t cap_succ_start, cap_succ;
    uint64_t next_serial;
} sfg_graph;

/* Fills a node (copies args and name; fresh slots). */
int sfg_node_init(sfg_node *n, sfg_ir ir, uint64_t base_hash, const sfg_task_meta *meta,
                  const void *args, size_t args_size, const char *name, const sfg_tags *tags,
                  uint64_t serial);
/* out = the distinct tags of a and b, in that order (out may be a or b). */
void sfg_tags_merge(sfg_tags *out, const sfg_tags *a, const sfg_tags *b);
void sfg_node_release(sfg_node *n);

void sfg_graph_free(sfg_graph *g);
int sfg_graph_init(sfg_graph *g);
/* Appends a pending node (not yet in the edges; rebuild does that). Takes a copy of args. */
int sfg_graph_append(sfg_graph *g, sfg_ir ir, uint64_t base_hash, const sfg_task_meta *meta,
                     const void *args, size_t args_size, const char *name, const sfg_tags *tags);
/* Rebuilds states, versions, edges and successor lists by inserting the pending tasks in
 * order on top of the survivors (reconstruction invariance). */
int sfg_graph_rebuild(sfg_graph *g);
/* Gives the pending tasks' accesses the versions and owners a rebuild would (what the memo
 * key reads) without edges or successor lists: a rebuild must follow before anything else
 * reads the graph. */
int sfg_graph_number(sfg_graph *g);
/* Drops pending nodes with dead[i - first_pending] set, keeping the order. Needs a rebuild. */
void sfg_graph_remove(sfg_graph *g, const unsigned char *dead);
/* Replaces a node's IR and metadata (slots reallocated). Needs a rebuild. */
int sfg_graph_set_ir(sfg_graph *g, uint32_t i, sfg_ir ir, const sfg_task_meta *meta);
/* After the batch ran: keeps the nodes that own the latest version of some state. */
int sfg_graph_retire(sfg_graph *g);
/* Drops every survivor and every version: back to the initial node. */
void sfg_graph_forget(sfg_graph *g);
/* Gives `state` a fresh version owned by the initial node. */
int sfg_graph_host_write(sfg_graph *g, sfg_state state);
uint32_t sfg_graph_pending(const sfg_graph *g);
/* Both tasks iterate the same set (same type; same constant range; same SNode and same version
 * of its list). */
int sfg_same_domain(const sfg_node *a, const sfg_node *b);

/* ---- the flush memo (memo.c) ---- */

/* What the passes made of one flush: the pending tasks they left and the counters they moved. */
typedef struct sfg_memo_entry sfg_memo_entry;

typedef struct sfg_memo {
    sfg_memo_entry *entry;
    uint32_t n, cap;
    size_t bytes;      /* arguments and nodes held, for the bound */
    sfg_map index;     /* key -> entry index */
} sfg_memo;

/* The key of the graph as rebuilt at a flush's start: everything the passes read. */
void sfg_memo_key(const sfg_graph *g, uint64_t key[2]);
const sfg_memo_entry *sfg_memo_find(const sfg_memo *m, const uint64_t key[2]);
/* Keeps g's pending tasks (after the passes) under key, with the pass counters' change from
 * *before to *after. A full memo starts again empty first; a flush too big to keep is not
 * kept. SFG_ENOMEM: the flush is not kept (the memo may have been emptied). */
int sfg_memo_store(sfg_memo *m, const uint64_t key[2], const sfg_graph *g,
                   const sfg_stats *before, const sfg_stats *after);
/* Replaces g's pending tasks by the entry's and rebuilds; once that succeeded, adds its
 * counters to *stats. */
int sfg_memo_replay(const sfg_memo_entry *e, sfg_graph *g, sfg_stats *stats);
void sfg_memo_free(sfg_memo *m);

/* ---- the queue and the passes ---- */

struct sfg_queue {
    sfg_bank *bank;
    sfg_executor_fn exec;
    void *exec_ud;
    sfg_options opt;
    char dump_dir[512];
    sfg_graph g;
    sfg_memo memo;
    int memo_on;      /* passes run, no dumps, not switched off (sfg_options.no_memo) */
    sfg_stats stats;
    uint32_t since_flush;
    uint64_t batch_index;
    int dump_step;
    char err[SFG_ERR_MAX];
};

/* Each pass edits q->g, leaves it rebuilt, sets *changed, returns SFG_OK or an error. */
int sfg_pass_listgen(sfg_queue *q, int *changed);
int sfg_pass_demote(sfg_queue *q, int *changed);
int sfg_pass_fusion(sfg_queue *q, int *changed);
int sfg_pass_dse(sfg_queue *q, int *changed);

/* Writes <dump_dir>/sfg_<batch>_<step>_<what>.dot; silent no-op without a dump dir. */
int sfg_dump(sfg_queue *q, const char *what);
/* The graph as Graphviz text into a malloc'd string (NULL when out of memory). */
char *sfg_graph_dot(const sfg_graph *g, const char *title);

#endif
