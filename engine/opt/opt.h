/* opt.h — Plume's scalar optimizer: constant folding, algebraic simplification, common
 * subexpression elimination, store-to-load forwarding of local variables, dead code
 * elimination and removal of overwritten field stores on one task (engine/ir/ir.h), run in a fixed order to a small fixed point.
 *
 * It works on every task form: whole kernels before offload (global_ptr form, parallel loops
 * at the top level) and lowered tasks (sn_* statements). It keeps the task's shape (a loop
 * task still ends in its loop), preserves IR semantics exactly (integer wrap-around, floored
 * division with x/0 = 0, shift counts modulo the width, f32 rounding; no float identity that
 * is wrong for -0.0, NaN or infinities), and never reorders or drops an effect.
 *
 * Threads: no global state; one task per call, different tasks on different threads at once.
 * Ownership: the task stays the caller's; statements the passes drop stay in its arena.
 */
#ifndef PLUME_OPT_OPT_H
#define PLUME_OPT_OPT_H

#include "engine/ir/ir.h"

#include <stddef.h>
#include <stdint.h>

/* Pass bits for `disabled`; each pass lives in its own file of engine/opt. The order in which
 * they run in one round is the order of the bits. */
enum {
    OPT_FOLD = 1u << 0,     /* "fold": operators on constants become constants */
    OPT_SIMPLIFY = 1u << 1, /* "simplify": algebraic identities, constant if/select */
    OPT_FORWARD = 1u << 2,  /* "forward": loads of local variables take the stored value */
    OPT_CSE = 1u << 3,      /* "cse": equal pure statements computed once */
    OPT_DCE = 1u << 4,      /* "dce": unused values, unread locals, empty control flow */
    OPT_DSE = 1u << 5,      /* "dse": field stores overwritten in the same block unread */
    OPT_ALL = 0x3f
};

/* Called after a pass changed the task (not after passes that found nothing to do), with the
 * pass's name as above; used by `plume compile --emit ir` to print the IR after each pass. */
typedef void (*opt_dump_fn)(const char *pass, ir_task *t, void *ud);

/* Optimizes t in place, skipping the passes whose bits are set in `disabled`. `dump` may be
 * NULL. Returns 0, or -1 with a message in err (n bytes) when out of memory or — in builds
 * without NDEBUG, where the verifier runs after every pass — when a pass broke the IR (the
 * message names the pass). The task is valid IR after a failure only in the first case. */
int opt_run(ir_task *t, uint32_t disabled, opt_dump_fn dump, void *ud, char *err, size_t n);

/* The bit of a pass named as above ("cse"), or 0 for an unknown name. */
uint32_t opt_pass_bit(const char *name);

#endif
