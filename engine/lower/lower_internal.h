/* State shared by the lowering's files: lower.c (entry, kernel frame, errors), lower_expr.c
 * (expressions), lower_builtin.c (builtins and matrix products), lower_assign.c (places and
 * assignments), lower_stmt.c (statements and loops), lower_call.c (inlining).
 *
 * Values. A language value is an array of scalar SSA statements, one per component (mat3:
 * 9, column-major); its type comes from the AST node that produced it.
 * Variables. A variable that is never assigned after its declaration is bound to the SSA
 * values of its initializer; an assigned one to one alloca per component.
 * Loops. Every IR loop being built is on a stack; `break`, `continue` and `return` name the
 * IR loop they leave, and leaving several IR loops at once goes through a flag (lw_leave). */
#ifndef PLUME_ENGINE_LOWER_INTERNAL_H
#define PLUME_ENGINE_LOWER_INTERNAL_H

#include "engine/lower/lower.h"

#define LW_MAX_COMP 9
#define LW_MAX_INLINE 64
#define LW_MAX_PENDING 4

typedef struct lw_val {
    int n;
    ir_stmt *c[LW_MAX_COMP];
} lw_val;

enum { LB_NONE = 0, LB_SSA, LB_ALLOCA, LB_FIELD };

typedef struct lw_bind {
    uint8_t kind;
    int n;
    ir_stmt *c[LW_MAX_COMP]; /* SSA values or allocas */
    uint32_t slot;           /* LB_FIELD */
} lw_bind;

/* One function being lowered: the kernel itself, or one inlined call. */
typedef struct lw_frame {
    const pk_func *fn;
    lw_bind *vars;        /* fn->nvars */
    uint8_t *assigned;    /* per variable slot: assigned somewhere in the body */
    struct lw_frame *up;
    int depth;
    /* return: `simple` functions return only as their body's last statement, whose value
     * lands in ret; the others run in a one-shot while (loop index wrap) and store into
     * ret_slot */
    int simple;
    int wrap;
    lw_val ret;
    ir_stmt *ret_slot[LW_MAX_COMP];
} lw_frame;

typedef struct lw_loop {
    ir_stmt *ir;
    const pk_stmt *ast;   /* the language loop it implements; NULL for a return wrapper */
    int outer, inner;     /* outermost / innermost IR loop of that language loop */
    ir_stmt *flag;        /* outer loops: "leaving" flag, made on first need */
    int pending[LW_MAX_PENDING]; /* loop indices whose flag an exit from here set */
    int npending;
} lw_loop;

typedef struct lw {
    const pk_program *prog;
    const pk_func *kernel;
    ir_task *t;
    ir_builder b;
    lw_frame *frame;
    uint32_t nscalar;     /* IR arguments of scalar parameters */
    int parallel;         /* inside a parallel loop: compound field updates are atomic */
    lw_loop *loops;
    int nloops, caploops;
    char *err;
    size_t n;
    int failed;
} lw;

/* lower.c */
int lw_fail(lw *L, pk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int lw_oom(lw *L, pk_loc loc);
ir_type lw_ir_type(pk_type t); /* scalar type of t's components */
/* 0 when every component of v is there, else an out-of-memory failure */
int lw_check(lw *L, const lw_val *v, pk_loc loc);
/* A binding for frame->fn's variable v (NULL for a foreign variable) */
lw_bind *lw_var(lw *L, const pk_var *v);
/* Binds v in the current frame to the n values: SSA when never assigned, else allocas. */
int lw_bind_value(lw *L, const pk_var *v, const lw_val *val, pk_loc loc);
/* Field slot of a field parameter (or a function's field parameter) */
int lw_field_slot(lw *L, const pk_var *v, pk_loc loc, uint32_t *slot);
/* Marks in `assigned` the slots of variables assigned anywhere in s. */
void lw_scan_assigned(const pk_stmt *s, uint8_t *assigned, uint32_t nvars);

/* lower_expr.c */
int lw_expr(lw *L, const pk_expr *e, lw_val *out);
/* IR constant of scalar kind k (PK_T_*) from an int or a float */
ir_stmt *lw_const(lw *L, ir_type ty, int64_t i, double f);
/* 1 when evaluating e has no effect (no user call): it may be evaluated unconditionally */
int lw_pure(const pk_expr *e);
/* a op b with constants folded for i32/i64 add, sub, mul */
ir_stmt *lw_bin(lw *L, int op, ir_stmt *a, ir_stmt *b);
/* One global_ptr per component of the field element e (PK_E_FIELD_ACCESS) */
int lw_field_ptrs(lw *L, const pk_expr *e, ir_stmt **ptrs, int *n);
/* The i32 index components of a field index expression (none for dim 0) */
int lw_field_index(lw *L, const pk_expr *index, int dim, ir_stmt **idx, pk_loc loc);

/* lower_builtin.c */
int lw_builtin(lw *L, const pk_expr *e, lw_val *out);
int lw_matmul(lw *L, const pk_expr *e, const lw_val *a, const lw_val *b, lw_val *out);

/* lower_call.c */
int lw_call(lw *L, const pk_expr *e, lw_val *out);

/* lower_assign.c */
int lw_assign(lw *L, const pk_stmt *s);

/* lower_stmt.c: *term = 1 when s always jumps away (break, continue, return) */
int lw_stmt(lw *L, const pk_stmt *s, int *term);
/* -1 with an error at v[index]: an index known only after folding is out of range. */
int lw_component_range(lw *L, const pk_expr *e, long long index);
/* -1 with an error at loc past LW_MAX_LOOP_DEPTH open IR loops, or out of memory. */
int lw_push_loop(lw *L, ir_stmt *ir, const pk_stmt *ast, int outer, int inner, pk_loc loc);
enum { LW_MAX_LOOP_DEPTH = 56 };
/* Pops the innermost loop; the builder goes after it, where pending exits are passed on. */
int lw_pop_loop(lw *L, pk_loc loc);
/* Jumps out of every IR loop up to and including loops[target]. */
int lw_leave(lw *L, int target, pk_loc loc);

#endif
