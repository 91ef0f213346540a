/* A toy IR for testing the state-flow graph without the real engine: tasks over a tiny world
 * of integer fields and sparse SNodes (masks and lists), with an interpreter, the metadata a
 * real offload pass would derive, and the IR operations (fuse, demote, remove stores). Parallel
 * loops can run backwards, so a fusion that breaks a parallel loop's independence shows up as
 * a different result. */
#ifndef PLUME_TESTS_SFG_TOY_IR_H
#define PLUME_TESTS_SFG_TOY_IR_H

#include "engine/sfg/sfg.h"

#include <stdint.h>

#define TOY_N 32        /* cells per field and per SNode */
#define TOY_FIELDS 8    /* field 7 is a 0-D scalar: every address is its cell 0 */
#define TOY_SCALAR 7
#define TOY_SNODES 4    /* SNode 1's parent is SNode 0 (its listgen reads list(0)) */
#define TOY_LIST_CAP (4 * TOY_N)

enum toy_loop { TOY_SERIAL, TOY_RANGE, TOY_STRUCT, TOY_CLEAR, TOY_LISTGEN, TOY_GC };
/* addresses: i + off, the constant off, i / 2, or args[off] (not a function of the index) */
enum toy_mode { TA_INDEX, TA_CONST, TA_HALF, TA_ARG };
enum toy_op { TOP_STORE, TOP_ADD, TOP_ACTIVATE, TOP_DEACTIVATE };

typedef struct toy_stmt {
    uint8_t op;
    uint8_t target;        /* field (STORE/ADD) or SNode (ACTIVATE/DEACTIVATE) */
    uint8_t mode;
    int8_t off;
    int8_t src;            /* field loaded into the value, or -1 */
    uint8_t smode;
    int8_t soff;
    int8_t arg;            /* argument added to the value, or -1 */
    int32_t c;             /* constant added to the value */
} toy_stmt;

typedef struct toy_ir {
    uint8_t loop;
    uint8_t snode;         /* struct_for / clear / listgen / gc */
    uint8_t side_effects;
    uint8_t n_args;        /* int32 arguments */
    uint8_t family;        /* sfg_task_meta.family (0: none; fused tasks have none) */
    uint8_t heavy;         /* fusing two heavy tasks of different families is declined */
    int32_t begin, end;    /* range_for */
    uint32_t n;
    toy_stmt s[];
} toy_ir;

typedef struct toy_world {
    int32_t val[TOY_FIELDS][TOY_N];
    uint8_t mask[TOY_SNODES][TOY_N];
    int32_t list[TOY_SNODES][TOY_LIST_CAP];
    int32_t list_n[TOY_SNODES];
    int overflow;
} toy_world;

/* Statement builders. */
#define TS_STORE(f, m, o, c_) ((toy_stmt){TOP_STORE, (f), (m), (o), -1, 0, 0, -1, (c_)})
#define TS_COPY(f, m, o, s, sm, so, c_) ((toy_stmt){TOP_STORE, (f), (m), (o), (s), (sm), (so), -1, (c_)})
#define TS_ADD(f, m, o, s, sm, so, c_) ((toy_stmt){TOP_ADD, (f), (m), (o), (s), (sm), (so), -1, (c_)})
#define TS_ADDC(f, m, o, c_) ((toy_stmt){TOP_ADD, (f), (m), (o), -1, 0, 0, -1, (c_)})
#define TS_STORE_ARG(f, m, o, a) ((toy_stmt){TOP_STORE, (f), (m), (o), -1, 0, 0, (a), 0})
#define TS_ACT(s, m, o) ((toy_stmt){TOP_ACTIVATE, (s), (m), (o), -1, 0, 0, -1, 0})
#define TS_DEACT(s, m, o) ((toy_stmt){TOP_DEACTIVATE, (s), (m), (o), -1, 0, 0, -1, 0})

/* A new IR (malloc'd; NULL when out of memory). */
toy_ir *toy_new(int loop, int snode, int begin, int end, int n_args, const toy_stmt *s, int n);
#define TOY_RANGE_IR(b, e, nargs, ...) \
    toy_new(TOY_RANGE, 0, (b), (e), (nargs), (toy_stmt[]){__VA_ARGS__}, \
            (int)(sizeof((toy_stmt[]){__VA_ARGS__}) / sizeof(toy_stmt)))
#define TOY_STRUCT_IR(sn, nargs, ...) \
    toy_new(TOY_STRUCT, (sn), 0, 0, (nargs), (toy_stmt[]){__VA_ARGS__}, \
            (int)(sizeof((toy_stmt[]){__VA_ARGS__}) / sizeof(toy_stmt)))
#define TOY_SERIAL_IR(nargs, ...) \
    toy_new(TOY_SERIAL, 0, 0, 0, (nargs), (toy_stmt[]){__VA_ARGS__}, \
            (int)(sizeof((toy_stmt[]){__VA_ARGS__}) / sizeof(toy_stmt)))

/* Counters the ops keep, for tests of the bank. */
typedef struct toy_counters {
    int hashes, metas, fuses, demotes, removes, frees;
    sfg_access acc[3 * TOY_FIELDS + 3 * TOY_SNODES]; /* scratch for meta */
} toy_counters;

/* The ops table over toy IR; `counters` is its ud and must outlive the bank. */
sfg_ir_ops toy_ops(toy_counters *counters);

/* Runs one task on the world; parallel loops run backwards when `reverse`. */
void toy_run(toy_world *w, const toy_ir *ir, const int32_t *args, int reverse);
void toy_world_init(toy_world *w, uint32_t seed);

/* ---- a recording executor ---- */

#define TOY_MAX_BATCH 8192

typedef struct toy_exec {
    toy_world *world;     /* NULL: record only */
    int reverse;
    int fail;             /* return non-zero from the next call */
    uint64_t batches, tasks, syncs;
    uint64_t in_order;  /* batches flagged in_order (every sync batch and eager launch) */
    uint64_t by_type[SFG_TASK_TYPE_COUNT];
    /* the last batch */
    uint32_t last_n, last_n_edges;
    uint64_t last_hash[TOY_MAX_BATCH];
    int last_type[TOY_MAX_BATCH];
    char last_name[TOY_MAX_BATCH][64];
    sfg_tags last_tags[TOY_MAX_BATCH];
    sfg_edge *last_edges;  /* malloc'd copy */
    uint32_t last_edges_cap;
    int bad_order;         /* an edge with from >= to, or two edges of one pair, was seen */
    int missing_dep;       /* two conflicting tasks of a batch without a path between them */
} toy_exec;

int toy_executor(void *ud, const sfg_batch *b);
void toy_exec_free(toy_exec *e);

/* Test helpers: a bank + queue over toy IR, and a launch that interns the IR. */
typedef struct toy_env {
    toy_counters cnt;
    sfg_bank *bank;
    sfg_queue *q;
    toy_exec ex;
    toy_world world;
} toy_env;

int toy_env_init(toy_env *env, const sfg_options *opt, int run_world, int reverse);
void toy_env_free(toy_env *env);
/* Interns ir (ownership passes) and launches it; returns the sfg status. */
int toy_launch(toy_env *env, toy_ir *ir, const int32_t *args, const char *name);
/* The same, with sfg_launch_tagged's tag. */
int toy_launch_tagged(toy_env *env, toy_ir *ir, const int32_t *args, const char *name,
                      const void *tag);
/* The last batch: number of tasks of this type. */
int toy_last_count(const toy_env *env, int type);

#endif
