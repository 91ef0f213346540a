/* State shared by the offload files (offload.c: phases A and C; offload_carry.c: phase B and
 * the operands a task takes from earlier ones). */
#ifndef PLUME_ENGINE_PASSES_OFFLOAD_INTERNAL_H
#define PLUME_ENGINE_PASSES_OFFLOAD_INTERNAL_H

#include "engine/passes/passes_internal.h"

typedef struct off_ctx {
    ir_task *k;            /* private clone of the kernel, numbered once (ids index below) */
    uint32_t nstmt;
    uint32_t *seg;         /* per statement id: its segment */
    uint8_t *remat;        /* per id: 0 unknown, 1 recomputable, 2 not */
    uint8_t *carry;        /* per id: used across segments and not recomputable */
    uint32_t *gtmp_off;    /* per id: byte offset + 1 of its gtmp slot, 0 for none */
    uint32_t gtmp_bytes;
    uint32_t gtmp_arg;     /* argument number of the buffer's address */
    ir_type *arg_types;    /* the tasks' arguments: the kernel's, + i64 when gtmp is used */
    uint32_t nargs;
    /* the task being built */
    ir_task *cur;
    ir_block *prologue;    /* recomputed and loaded operands, put in front of the body */
    ir_stmt **memo_src, **memo_dst; /* src->mark = index + 1 while a task is built */
    uint32_t nmemo, memo_cap;
    /* output */
    ir_task **tasks;
    uint32_t ntasks, cap;
    char *err;
    size_t n;
} off_ctx;

int off_fail(off_ctx *o, const ir_stmt *s, const char *msg);
int off_remat(off_ctx *o, const ir_stmt *s, int depth);
/* Phase B: gives carried values and allocas their gtmp slots and rewrites the kernel. */
int off_carry(off_ctx *o);
/* ir_outer_map_fn for the segment clones: ud = off_ctx. */
ir_stmt *off_outer(ir_stmt *outer, void *ud);

#endif
