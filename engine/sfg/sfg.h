/* sfg.h — the state-flow graph (SFG): Plume's async task queue and inter-kernel optimizer.
 *
 * What it does. The engine launches *tasks* (offloaded pieces of kernels: serial, range_for,
 * struct_for, plus the runtime's clear_list, listgen and gc tasks). Instead of running them at
 * once, the queue keeps them; at a flush it builds a graph whose nodes are the tasks and whose
 * edges are the *states* they read and write (field values, and per sparse SNode its mask, list
 * and allocator), runs four passes (list-generation removal, activation demotion, task fusion,
 * dead-store elimination) and hands the surviving tasks, in an order that honours every edge,
 * to an executor callback together with those edges.
 *
 * The SFG never looks inside a task. It sees two things the engine supplies:
 *   - per task IR, a metadata record (sfg_task_meta) that says which states the task touches
 *     and how; the rules each flag must follow are written next to the flag — the passes are
 *     only as sound as this metadata;
 *   - a table of IR operations (sfg_ir_ops) that hash, fuse, demote activations and remove
 *     stores on the real IR. Their results are cached by IR hash in the IR bank.
 * docs/sfg.md describes the design and each pass's rules.
 *
 * Ownership. IR handed to the bank (sfg_bank_intern, or returned by an op) belongs to the bank
 * and is freed with ops->free_ir when the bank is destroyed; an sfg_ir handle stays valid until
 * then. Metadata returned by the bank is bank-owned with the same lifetime. Launch arguments
 * are copied at launch.
 *
 * Threads. A queue and its bank are used by one thread at a time (the engine's context thread);
 * the IR ops and the executor are called on that thread, from inside sfg_launch / sfg_flush /
 * sfg_sync. Different queues are independent.
 *
 * Errors. Functions return SFG_OK or an SFG_E* code and write a message readable with
 * sfg_error() / sfg_bank_error(). Nothing here aborts or exits.
 */
#ifndef PLUME_ENGINE_SFG_H
#define PLUME_ENGINE_SFG_H

#include <stddef.h>
#include <stdint.h>

enum {
    SFG_OK = 0,
    SFG_EINVAL = 1,  /* bad argument or malformed metadata */
    SFG_ENOMEM = 2,
    SFG_EOP = 3,     /* an IR operation failed or declined */
    SFG_EEXEC = 4    /* the executor reported a failure */
};

/* ---- States ---------------------------------------------------------------------------- */

/* A field has one value state; a sparse SNode has a mask, a list and an allocator state.
 * Ids are the engine's: field ids for SFG_VALUE, SNode ids for the other kinds (< 2^30). */
typedef enum sfg_state_kind { SFG_VALUE = 0, SFG_MASK = 1, SFG_LIST = 2, SFG_ALLOC = 3 } sfg_state_kind;

typedef uint32_t sfg_state;
#define SFG_STATE(kind, id) ((sfg_state)((((uint32_t)(id)) << 2) | ((uint32_t)(kind) & 3u)))
#define SFG_STATE_KIND(s) ((sfg_state_kind)((s) & 3u))
#define SFG_STATE_ID(s) ((uint32_t)(s) >> 2)

/* ---- Task metadata ------------------------------------------------------------------- */

typedef enum sfg_task_type {
    SFG_SERIAL = 0,
    SFG_RANGE_FOR = 1,
    SFG_STRUCT_FOR = 2,
    SFG_CLEAR_LIST = 3, /* empties list(snode) */
    SFG_LISTGEN = 4,    /* appends the active cells of snode to list(snode) */
    SFG_GC = 5,         /* returns deactivated blocks of snode to its allocator */
    SFG_TASK_TYPE_COUNT = 6
} sfg_task_type;

/* Per-access flags. "Iteration" means one iteration of the task's loop (a serial task is one
 * iteration). "Own cell" means the cell addressed by the loop index itself (addr == 0) or by
 * the address function named by a non-zero sfg_access.addr. */
enum {
    /* The task's result depends on the version of the state it finds (any load, any
     * read-modify-write, an activation that checks the mask). */
    SFG_ACC_READ = 1u << 0,
    /* The task may change the state. */
    SFG_ACC_WRITE = 1u << 1,
    /* Element-wise and unique per iteration: every access of one iteration to the state goes to
     * one address, that address is the same function of the loop index in every task that
     * uses the same `addr` key, and no two iterations use the same address. addr == 0 means
     * "the loop index itself". Two tasks can be fused over a shared written state when both
     * accesses carry this flag with the same addr (or both are SFG_ACC_ATOMIC, below). */
    SFG_ACC_UNIQUE = 1u << 2,
    /* All accesses are commutative atomic updates of one kind (`op`), whose old value is not
     * used, and the task does not otherwise read the state: e.g. `+=` reductions, activation
     * without an activity query, allocator traffic. Two tasks whose accesses to a shared state
     * are both ATOMIC with the same op may be fused (float `+=` is then reordered). */
    SFG_ACC_ATOMIC = 1u << 3,
    /* Value states, with WRITE and UNIQUE addr 0: every iteration writes its own cell
     * unconditionally. A later task with this flag and the same iteration set overwrites all
     * cells that an earlier UNIQUE addr-0 writer could have written (dead-store elimination). */
    SFG_ACC_COVER = 1u << 4,
    /* Value states, with WRITE: after the task, the state does not depend on its previous
     * version at all (every cell that can hold a value is written unconditionally, none is read
     * first), e.g. a fill of a whole dense field or of a 0-D scalar. */
    SFG_ACC_FULL = 1u << 5,
    /* Mask states, with WRITE: the cells activated depend only on the loop index and on
     * constants of the IR — not on launch arguments nor on loaded values. Two tasks with the
     * same launched IR and the same iteration set then activate the same cells. */
    SFG_ACC_INDEX_ONLY = 1u << 6,
    /* Mask states: the task reads the mask only to look values up and writes it only by
     * activating (no activity query, no deactivation). Inactive cells and cells activated but
     * not yet written read alike (the field's background), so two such tasks may be fused:
     * which activations one iteration sees first changes no value; the value states decide
     * the rest. */
    SFG_ACC_LOOKUP = 1u << 7,
    /* Mask states, with WRITE: every activation is of the cell holding the loop index itself
     * (conditional or not): the task activates a subset of its iteration set's cells. */
    SFG_ACC_AT_INDEX = 1u << 8,
    /* With SFG_ACC_AT_INDEX: some activation runs in every iteration, so the task activates
     * exactly its iteration set's cells. A task with SFG_ACC_AT_INDEX after one with this
     * flag over the same iteration set, the mask unchanged between, activates nothing new,
     * whatever its IR (activation demotion). */
    SFG_ACC_AT_EVERY_INDEX = 1u << 9
};

typedef struct sfg_access {
    sfg_state state;
    uint32_t flags;   /* SFG_ACC_* */
    uint64_t addr;    /* with SFG_ACC_UNIQUE: 0 = loop index, else an engine-chosen key naming
                       * an address function unique per iteration (e.g. a loop_unique hint) */
    uint32_t op;      /* with SFG_ACC_ATOMIC: engine-defined kind of the atomic update */
} sfg_access;

/* Task flags. */
enum {
    /* The task does something no state describes (prints, writes host memory): never fused,
     * never deleted. */
    SFG_TASK_SIDE_EFFECTS = 1u << 0,
    /* range_for whose bounds are computed at run time: begin/end are meaningless, so the task
     * is never fused and never compared with another task's range. */
    SFG_TASK_DYNAMIC_RANGE = 1u << 1
};

/* What the SFG knows about one task's IR. The rules the engine must follow:
 * - accesses list every state the task may touch, each state once (any order; the bank
 *   sorts a copy). A task that activates a cell writes the mask (and usually the allocator)
 *   of that SNode and of every ancestor SNode it may activate; a task that deactivates cells
 *   writes the mask of that SNode and of every descendant, whose cells vanish with them.
 * - struct_for over a sparse SNode reads list(snode); its iteration set is that list version.
 *   A struct_for that does not read list(snode) iterates a fixed (dense) set.
 * - listgen of S reads mask(S) and list(parent(S)) (and list(S) when it appends) and writes
 *   list(S); clear_list of S writes list(S); gc of S writes alloc(S) (and reads mask(S)).
 *   listgen is a pure function of the states it reads: the same input versions give the
 *   same list. */
typedef struct sfg_task_meta {
    sfg_task_type type;
    uint32_t flags;          /* SFG_TASK_* */
    uint32_t snode;          /* struct_for: the SNode looped over; clear_list/listgen/gc:
                              * the SNode served; otherwise ignored */
    int64_t begin, end;      /* range_for: constant iteration range [begin, end) */
    uint32_t n_access;
    const sfg_access *access;
    /* Tasks of one family run the same code, perhaps on other fields (the engine: the hash of
     * the unbound IR). Fusion prefers a partner of the task's own family: such bodies often
     * compute the same values (several fields advected along one velocity). 0: none. */
    uint64_t family;
} sfg_task_meta;

/* ---- IR operations (implemented by the engine on the real IR) ------------------------- */

/* An IR handle: the hash the bank stores the IR under, and the IR itself (bank-owned). */
typedef struct sfg_ir {
    uint64_t hash;
    void *ir;
} sfg_ir;

/* Every op receives `ud`. IR arguments are never modified (copy on write: an op builds a new
 * IR). New IR returned by an op is handed to the bank, which owns it from then on. Pointers in
 * metadata filled by `meta` only have to stay valid until the next call of any op (the bank
 * copies them). Ops other than hash/meta/free_ir may return NULL to decline; the SFG then
 * leaves the task as it is. */
/* Which launch arguments of a fusion's second task hold the same bytes as one of the first's
 * (arguments compared in slots of sfg_ir_ops.arg_unit bytes): same[i] is the first task's slot
 * equal to the second's slot i, or -1. An IR may then read the first task's argument where the
 * second's was read, so values both compute from equal arguments are computed once. */
typedef struct sfg_arg_match {
    uint32_t n;
    const int32_t *same;
} sfg_arg_match;

typedef struct sfg_ir_ops {
    void *ud;
    /* A hash of everything that defines the IR's behaviour (loop, body, constants); equal
     * hashes are taken to mean identical IR. */
    uint64_t (*hash)(void *ud, const void *ir);
    /* Fills *out for the IR; returns 0, or non-zero when the IR is malformed. */
    int (*meta)(void *ud, const void *ir, sfg_task_meta *out);
    /* A task running the body of a then the body of b in each iteration (both have the same
     * type and iteration set). Launch arguments of the result are a's followed by b's. `m`
     * (NULL or empty when arguments are not compared) says which of b's equal a's for this
     * launch; the result may rely on it, and the bank caches it per pattern. */
    void *(*fuse)(void *ud, const void *a, const void *b, const sfg_arg_match *m);
    /* The task with every activation of cells of `snode` turned into a plain lookup (the SFG
     * has proven them active): the result no longer writes mask(snode). */
    void *(*demote_activation)(void *ud, const void *ir, uint32_t snode);
    /* The task without its stores to value state `state` (other effects, activations
     * included, stay). Sets *empty to 1 when the result does nothing at all. */
    void *(*remove_stores)(void *ud, const void *ir, sfg_state state, int *empty);
    void (*free_ir)(void *ud, void *ir);
    /* Bytes per argument slot in launch arguments, for sfg_arg_match; 0: not compared. */
    size_t arg_unit;
} sfg_ir_ops;

/* ---- IR bank ----------------------------------------------------------------------------- */

typedef struct sfg_bank sfg_bank;

typedef struct sfg_bank_stats {
    uint64_t irs;            /* distinct IRs held */
    uint64_t interned;       /* sfg_bank_intern calls (duplicates included) */
    uint64_t cache_hits;     /* fuse/demote/remove_stores/meta answered from the caches */
    uint64_t cache_misses;   /* ... that had to call an op */
} sfg_bank_stats;

/* NULL only when out of memory. ops is copied; all its function pointers are required. */
sfg_bank *sfg_bank_create(const sfg_ir_ops *ops);
void sfg_bank_destroy(sfg_bank *b);
const char *sfg_bank_error(const sfg_bank *b);
/* Takes ownership of `ir` (also on failure). When an IR with the same hash is already held,
 * `ir` is freed and the held one is returned. */
int sfg_bank_intern(sfg_bank *b, void *ir, sfg_ir *out);
/* Metadata for a held IR, computed once per hash. */
int sfg_bank_meta(sfg_bank *b, sfg_ir ir, const sfg_task_meta **out);
/* Cached ops: SFG_EOP when the op declined (the refusal is cached too). */
/* `m` may be NULL (no argument equal); results are cached per (a, c, pattern of m). */
int sfg_bank_fuse(sfg_bank *b, sfg_ir a, sfg_ir c, const sfg_arg_match *m, sfg_ir *out);
int sfg_bank_demote(sfg_bank *b, sfg_ir ir, uint32_t snode, sfg_ir *out);
int sfg_bank_remove_stores(sfg_bank *b, sfg_ir ir, sfg_state state, sfg_ir *out, int *empty);
sfg_bank_stats sfg_bank_get_stats(const sfg_bank *b);

/* ---- The async queue ----------------------------------------------------------------------- */

/* Pass switches: a bit set disables the pass. */
enum {
    SFG_PASS_LISTGEN = 1u << 0,
    SFG_PASS_DEMOTE = 1u << 1,
    SFG_PASS_FUSION = 1u << 2,
    SFG_PASS_DSE = 1u << 3,
    SFG_PASS_ALL = 0xfu
};

typedef struct sfg_options {
    int eager;                 /* 1: every launch runs at once; no graph, no passes */
    uint32_t flush_every;      /* flush automatically after this many launches; 0: never */
    uint32_t disabled_passes;  /* SFG_PASS_* bits */
    uint32_t max_fusion_rounds;/* 0: 64. Each round fuses every task at most once */
    uint32_t fusion_scan;      /* 0: 16. Candidates examined per task per round */
    const char *dump_dir;      /* Graphviz dumps before/after each pass; NULL: $PLUME_SFG_DUMP;
                                * "" or unset: no dumps. Copied. */
    int no_memo;               /* 1: optimize every flush afresh. 0: a flush whose tasks,
                                * arguments and dependencies on earlier batches repeat an
                                * earlier flush's gets that flush's result without running the
                                * passes (engine/sfg/memo.c); also off under dumps and with
                                * PLUME_SFG_MEMO=0 */
} sfg_options;

/* Parses "listgen,demote,fusion,dse" (any subset, comma-separated, or "" / "none") into
 * SFG_PASS_* bits. Returns SFG_EINVAL on an unknown name. */
int sfg_parse_passes(const char *list, uint32_t *bits);

/* Where a task came from (sfg_launch_tagged's opaque tags): one for a launched task, the distinct
 * tags of its parts for a fused one, up to SFG_MAX_TAGS (more: some were left out). */
#define SFG_MAX_TAGS 4
typedef struct sfg_tags {
    const void *tag[SFG_MAX_TAGS];
    uint32_t n;
    uint32_t more;
} sfg_tags;

/* One task as the executor receives it. Pointers are valid during the executor call only,
 * except ir.ir and meta, which live as long as the bank. */
typedef struct sfg_exec_task {
    sfg_ir ir;
    const sfg_task_meta *meta;
    const void *args;
    size_t args_size;
    const char *name;
    sfg_tags tags;
} sfg_exec_task;

enum { SFG_EDGE_FLOW = 1u, SFG_EDGE_DEP = 2u }; /* RAW/WAW and WAR */

/* "tasks[to] must start after tasks[from] finished"; from < to; one edge per pair. */
typedef struct sfg_edge {
    uint32_t from, to;
    uint32_t kinds;  /* SFG_EDGE_* */
} sfg_edge;

typedef struct sfg_batch {
    const sfg_exec_task *tasks;  /* a topological order of the edges below */
    uint32_t n_tasks;
    const sfg_edge *edges;
    uint32_t n_edges;
    /* 1: the host reads the results once the executor returns, so the work must have finished
     * (sfg_sync). */
    int sync;
    /* 1: the batch must be issued before the executor returns, on the calling thread, after every
     * batch handed over before it: every sync batch, and eager mode's one-task batches, which
     * run at their launch (the CPU runs them at once, a GPU queues them on its stream) but are
     * read by the host only after it next syncs. 0: the executor may defer it (a launch
     * thread), keeping the order of batches. */
    int in_order;
    uint64_t index;              /* counts batches from 0 */
} sfg_batch;

/* Returns 0 on success; non-zero fails the flush (SFG_EEXEC). */
typedef int (*sfg_executor_fn)(void *ud, const sfg_batch *batch);

typedef struct sfg_stats {
    uint64_t launched[SFG_TASK_TYPE_COUNT]; /* tasks handed to the executor, by type */
    uint64_t tasks_launched;                /* sum of the above */
    uint64_t tasks_enqueued;                /* sfg_launch calls */
    uint64_t listgens;                      /* listgen tasks launched */
    uint64_t listgens_removed;              /* listgen + clear_list tasks removed */
    uint64_t activations_demoted;           /* (task, SNode) demotions */
    uint64_t tasks_fused;                   /* fusions (each removes one task) */
    uint64_t stores_eliminated;             /* (task, state) dead stores removed */
    uint64_t tasks_eliminated;              /* tasks deleted because they became empty */
    uint64_t flushes;                       /* batches handed to the executor */
    uint64_t flushes_memoized;              /* ... of which the memo optimized */
    double optimizer_s;                     /* wall time in graph building and passes */
} sfg_stats;

typedef struct sfg_queue sfg_queue;

/* The queue uses `bank` (not owned; it must outlive the queue) and calls `exec` with `exec_ud`.
 * opt may be NULL (defaults). NULL only when out of memory. */
sfg_queue *sfg_queue_create(sfg_bank *bank, sfg_executor_fn exec, void *exec_ud,
                            const sfg_options *opt);
/* Drops queued tasks without running them. */
void sfg_queue_destroy(sfg_queue *q);
const char *sfg_error(const sfg_queue *q);

/* Queues a task (ir from this queue's bank). args are copied; name (may be NULL) is copied,
 * truncated, and used in dumps and profiles only (a fused task's joins its parts' with '+'). In eager mode the task runs before this returns; with
 * flush_every set, the launch that fills the window flushes. */
int sfg_launch(sfg_queue *q, sfg_ir ir, const void *args, size_t args_size, const char *name);
/* sfg_launch, with an opaque tag (NULL: none) the executor receives with the task (where the
 * task came from: who to blame for its errors); a fused task has its parts' tags. A tag must
 * stay valid while the task may run. The memo tells tags apart by address. */
int sfg_launch_tagged(sfg_queue *q, sfg_ir ir, const void *args, size_t args_size,
                      const char *name, const void *tag);
/* Optimizes and hands the queued tasks to the executor (sync = 0). No-op when empty. */
int sfg_flush(sfg_queue *q);
/* Same, with sync = 1: the engine calls this before the host reads any field. */
int sfg_sync(sfg_queue *q);
uint32_t sfg_pending(const sfg_queue *q);
const sfg_stats *sfg_get_stats(const sfg_queue *q);
void sfg_reset_stats(sfg_queue *q);
/* The host changed these states outside any task (a block written from host memory, a field
 * cleared): each gets a new version owned by the initial node, so no later flush trusts what
 * it knew of them (a list generated before is then regenerated). Call after sfg_sync, with no
 * task pending (SFG_EINVAL otherwise). */
int sfg_host_write(sfg_queue *q, const sfg_state *states, uint32_t n);
/* Forgets everything earlier flushes proved: the next flush starts from the initial state.
 * Call with no task pending. */
int sfg_forget(sfg_queue *q);

#endif
