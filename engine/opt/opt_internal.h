/* Internals shared by the optimizer's passes: one function per pass, the evaluation of
 * operators on constants (also used by tests), and small statement helpers. */
#ifndef PLUME_OPT_INTERNAL_H
#define PLUME_OPT_INTERNAL_H

#include "engine/opt/opt.h"

/* A pass returns how many statements it changed, or -1 when out of memory. A pass sets `repl`
 * on the statements it drops and unlinks them; it resolves uses itself before returning. */
int opt_fold(ir_task *t);
int opt_simplify(ir_task *t);
int opt_forward(ir_task *t);
int opt_cse(ir_task *t);
int opt_dce(ir_task *t);
int opt_dse(ir_task *t);

/* A constant's value: ival for bool and integers (i32 sign-extended, u32 zero-extended), fval
 * for floats (f32 values exactly representable), as in ir_stmt. */
typedef struct opt_val {
    int64_t i;
    double f;
} opt_val;

/* Evaluate with the IR's semantics (ir.h, and what engine/codegen emits). `ty` is the operand
 * type (for a cast: `from` and `to`). Return 0 and set *out, or -1 when the result must not be
 * folded: transcendental functions (libm and libdevice may round differently), pow, atan2,
 * float min/max of zeros of different signs (minnum may return either), or an op the type
 * does not have. Comparisons give a bool in out->i. */
int opt_eval_unary(int op, ir_type ty, opt_val a, opt_val *out);
int opt_eval_binary(int op, ir_type ty, opt_val a, opt_val b, opt_val *out);
int opt_eval_cast(ir_type to, ir_type from, opt_val a, opt_val *out);
/* Brings an integer to its type's range (bool: 0/1; i32 wraps; u32 zero-extended). */
int64_t opt_norm_int(ir_type ty, int64_t v);

/* ---- helpers (util.c) ---- */

static inline int opt_is_const(const ir_stmt *s) { return s && s->op == IR_CONST; }
int opt_const_is_int(const ir_stmt *s, int64_t v);       /* bool/int constant equal to v */
int opt_const_is_float(const ir_stmt *s, double v);      /* float constant equal to v, same
                                                          * sign for zeros */
/* Turns s into a constant of its own type, in place (operands dropped). */
void opt_make_const(ir_stmt *s, opt_val v);
/* Drops s: uses of s go to `with` (resolved at the pass's end); s is unlinked. */
void opt_replace(ir_stmt *s, ir_stmt *with);
/* Computes a value and nothing else (dropping an unused one changes nothing). */
int opt_is_pure(const ir_stmt *s);
/* A loop that must stay: the parallel loop ending a range_for/struct_for task's body. */
int opt_is_task_loop(const ir_task *t, const ir_stmt *s);
/* 1 when a statement in block b (nested blocks included) may have an effect. */
int opt_block_has_effect(ir_block *b);
int opt_stmt_has_effect(ir_stmt *s);  /* s itself or its nested blocks */

#endif
