/* check.h — state shared by the checker's files (check.c: declarations and statements,
 * check_expr.c: expressions, check_call.c: builtins, constructors and calls). */
#ifndef PLUME_LANG_CHECK_H
#define PLUME_LANG_CHECK_H

#include "engine/lang/lang_internal.h"

/* A call of a user function, kept for the whole-program passes (recursion, inlined size,
 * field-access propagation). */
typedef struct pk_callsite {
    pk_func *caller, *callee;
    pk_expr *call;
    uint64_t mult;  /* static-unroll multiplier at the call */
    bool parallel;  /* inside a parallel loop of a kernel */
} pk_callsite;

typedef struct checker {
    pk_ctx *c;
    pk_func *fn;      /* function or kernel being checked; NULL for global constants */
    pk_name **bound;  /* names bound to locals, innermost last */
    uint32_t nbound, capbound;
    pk_stmt **loops;  /* enclosing loops, innermost last */
    uint32_t nloops, caploops;
    uint32_t region;  /* current parallel loop id, 0 in serial code */
    uint64_t unroll;  /* product of enclosing static trip counts */
    uint64_t weight;  /* nodes checked in this function, times their unroll factor */
    pk_var **locals;  /* locals of this function, for the unused-variable warning */
    uint32_t nlocals, caplocals;
    pk_callsite *calls;
    uint32_t ncalls, capcalls;
    uint64_t *weights; /* own weight per function index */
    bool in_stdlib;    /* checking the standard library: user globals are invisible */
    uint32_t *callee_stamp; /* per function index: 1 + index of the last caller recording it */
} checker;

/* Flags of check_expr */
enum {
    CK_FIELD_OK = 1, /* a bare field name is allowed (argument, struct-for target) */
    CK_LVALUE = 2,   /* the expression is assigned to: field accesses are not reads */
    CK_VOID_OK = 4   /* statement level: a call without a value is fine */
};

pk_expr *ck_expr(checker *k, pk_expr *e, int flags);
/* Checks e as a value and converts it implicitly to t (error when it cannot). */
pk_expr *ck_expr_to(checker *k, pk_expr *e, pk_type t, const char *what);
/* The place an expression starts (its leftmost operand), for messages about all of it. */
pk_loc ck_expr_start(const pk_expr *e);
/* Converts an already checked expression implicitly. */
pk_expr *ck_coerce(checker *k, pk_expr *e, pk_type t, const char *what);
/* Gives an untyped literal its default type (i32, i64 when too big, f32). */
pk_expr *ck_finalize(checker *k, pk_expr *e);
/* Explicit conversion (constructors, casts): any numeric to any numeric. */
pk_expr *ck_convert(checker *k, pk_expr *e, pk_type t);
/* Common type of several checked operands for arithmetic-like builtins and operators: the
 * vector type if any operand is a vector (all vectors equal), else the scalar join.
 * Returns PK_T_ERROR after reporting at loc. */
pk_type ck_unify(checker *k, pk_expr **ops, int n, pk_loc loc, const char *what);
/* Converts each operand to t, splatting scalars when t is a vector or mat3. */
void ck_apply(checker *k, pk_expr **ops, int n, pk_type t, const char *what);

pk_expr *ck_new(checker *k, int kind, pk_type t, pk_loc loc);
pk_expr *ck_call(checker *k, pk_expr *e);      /* PK_E_CALL_NAME */
bool ck_implicit_ok(pk_type from, pk_type to);
const char *ck_tn(checker *k, pk_type t);       /* type name in the arena */
void ck_mark_field(checker *k, pk_var *v, uint32_t bits);
/* Global names as visible from the code being checked (NULL when none). */
pk_var *ck_global_const(checker *k, pk_name *n);
pk_func *ck_global_funcs(checker *k, pk_name *n);

#endif
