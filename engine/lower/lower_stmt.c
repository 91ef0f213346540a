/* Statements and loops.
 *
 * Leaving loops. The IR's break and continue act on the innermost loop only, and one language
 * loop may be several IR loops (an ivec box is a nest, x innermost; a function with an early
 * return runs in a one-shot while). lw_leave breaks out of the innermost IR loop directly when
 * that is the target; otherwise it sets the target's flag (an alloca put just before the
 * target, made when first needed) and breaks; every IR loop closed after such a break tests
 * the flag and leaves again, until the target itself is left. */
#include "engine/lower/lower_internal.h"

#include <stdlib.h>
#include <string.h>

int lw_push_loop(lw *L, ir_stmt *ir, const pk_stmt *ast, int outer, int inner, pk_loc loc)
{
    /* The code generator keeps at most CG_MAX_LOOPS (64) loops open in one task; a few are
     * left for its own. Caught here, the error names the loop in the source. */
    if (L->nloops >= LW_MAX_LOOP_DEPTH)
        return lw_fail(L, loc, "loops nested more than %d deep (an ivec box loop counts one a "
                       "dimension, a function with an early return one a call)", LW_MAX_LOOP_DEPTH);
    if (L->nloops == L->caploops) {
        int cap = L->caploops ? 2 * L->caploops : 16;
        lw_loop *g = realloc(L->loops, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        L->loops = g;
        L->caploops = cap;
    }
    lw_loop *l = &L->loops[L->nloops++];
    memset(l, 0, sizeof *l);
    l->ir = ir;
    l->ast = ast;
    l->outer = outer;
    l->inner = inner;
    return 0;
}

int lw_leave(lw *L, int target, pk_loc loc)
{
    int top = L->nloops - 1;
    if (target < 0 || target > top)
        return lw_fail(L, loc, "jump to a loop that does not enclose it");
    lw_loop *cur = &L->loops[top];
    if (target == top)
        return ir_break(&L->b, cur->ir) ? 0 : lw_oom(L, loc);
    lw_loop *T = &L->loops[target];
    if (!T->flag) {
        ir_builder at;
        ir_builder_init(&at, L->t);
        ir_builder_before(&at, T->ir);
        if (!(T->flag = ir_alloca(&at, IR_BOOL)))
            return lw_oom(L, loc);
    }
    if (!ir_store(&L->b, T->flag, ir_const_int(&L->b, IR_BOOL, 1)) || !ir_break(&L->b, cur->ir))
        return lw_oom(L, loc);
    for (int i = 0; i < cur->npending; i++)
        if (cur->pending[i] == target)
            return 0;
    if (cur->npending == LW_MAX_PENDING)
        return lw_fail(L, loc, "too many jumps out of nested loops");
    cur->pending[cur->npending++] = target;
    return 0;
}

int lw_pop_loop(lw *L, pk_loc loc)
{
    lw_loop done = L->loops[--L->nloops];
    ir_builder_at_end(&L->b, done.ir->parent);
    for (int i = 0; i < done.npending; i++) {
        int target = done.pending[i];
        ir_stmt *br = ir_if(&L->b, ir_load(&L->b, L->loops[target].flag));
        if (!br)
            return lw_oom(L, loc);
        ir_block *after = L->b.block;
        ir_builder_at_end(&L->b, br->body);
        if (lw_leave(L, target, loc) != 0)
            return -1;
        ir_builder_at_end(&L->b, after);
    }
    return 0;
}

static int bind_ssa(lw *L, const pk_var *v, ir_stmt *const *c, int n, pk_loc loc)
{
    lw_bind *b = lw_var(L, v);
    if (!b)
        return lw_fail(L, loc, "loop variable '%s' of another function", v->name);
    b->kind = LB_SSA;
    b->n = n;
    for (int i = 0; i < n; i++)
        b->c[i] = c[i];
    return 0;
}

/* The loop body, in the innermost IR loop's block; pops the n IR loops of the nest. */
static int loop_body(lw *L, const pk_stmt *s, int nir)
{
    int term = 0;
    if (lw_stmt(L, s->then, &term) != 0)
        return -1;
    for (int i = 0; i < nir; i++)
        if (lw_pop_loop(L, s->loc) != 0)
            return -1;
    return 0;
}

static int serial_range(lw *L, const pk_stmt *s, const lw_val *lo, const lw_val *hi)
{
    int n = lo->n;
    ir_stmt *loops[3];
    for (int a = n - 1; a >= 0; a--) {
        loops[a] = ir_range_for(&L->b, lo->c[a], hi->c[a], 0);
        if (!loops[a] || lw_push_loop(L, loops[a], s, a == n - 1, a == 0, s->loc) != 0)
            return lw_oom(L, s->loc);
        ir_builder_at_end(&L->b, loops[a]->body);
    }
    ir_stmt *idx[3];
    for (int a = 0; a < n; a++)
        if (!(idx[a] = ir_loop_index(&L->b, loops[a], 0)))
            return lw_oom(L, s->loc);
    if (bind_ssa(L, s->var, idx, n, s->loc) != 0)
        return -1;
    return loop_body(L, s, n);
}

static ir_stmt *max0(lw *L, ir_stmt *x)
{
    if (x && x->op == IR_CONST)
        return ir_const_int(&L->b, x->ty, x->ival > 0 ? x->ival : 0);
    return ir_binary(&L->b, IR_MAX, x, ir_const_int(&L->b, x ? x->ty : IR_I32, 0));
}

static ir_stmt *to_i64(lw *L, ir_stmt *x)
{
    if (x && x->op == IR_CONST)
        return ir_const_int(&L->b, IR_I64, x->ival);
    return ir_cast(&L->b, IR_I64, x);
}

/* One linear i64 range over the box, the last axis fastest (z of an ivec3, y of an ivec2):
 * the parallel loop the offload and the code generator know. Dense layouts store the last
 * axis fastest (voxel x*64 + y*8 + z in a block), so consecutive iterations touch consecutive
 * elements (x fastest strode a row per iteration: a fused clear of three 128^2 fields ran at
 * 6 ns a store). Extents are clamped at 0 so an empty box runs nothing. */
static int parallel_box(lw *L, const pk_stmt *s, const lw_val *lo, const lw_val *hi)
{
    int n = lo->n;
    ir_stmt *ext[3];
    ir_stmt *total = NULL;
    for (int a = 0; a < n; a++) {
        ext[a] = to_i64(L, max0(L, lw_bin(L, IR_SUB, hi->c[a], lo->c[a])));
        total = a ? lw_bin(L, IR_MUL, total, ext[a]) : ext[a];
    }
    ir_stmt *loop = ir_range_for(&L->b, ir_const_int(&L->b, IR_I64, 0), total, 1);
    if (!loop || lw_push_loop(L, loop, s, 1, 1, s->loc) != 0)
        return lw_oom(L, s->loc);
    ir_builder_at_end(&L->b, loop->body);
    ir_stmt *rest = ir_loop_index(&L->b, loop, 0), *idx[3];
    for (int a = n - 1; a >= 0; a--) {
        ir_stmt *q = rest;
        if (a > 0) {
            q = ir_binary(&L->b, IR_MOD, rest, ext[a]);
            rest = ir_binary(&L->b, IR_DIV, rest, ext[a]);
        }
        idx[a] = ir_binary(&L->b, IR_ADD, lo->c[a], ir_cast(&L->b, IR_I32, q));
        if (!idx[a])
            return lw_oom(L, s->loc);
    }
    if (bind_ssa(L, s->var, idx, n, s->loc) != 0)
        return -1;
    return loop_body(L, s, 1);
}

static int at_top(lw *L)
{
    return L->b.block == L->t->body && L->frame->depth == 0 && L->nloops == 0 && !L->parallel;
}

static int for_range(lw *L, const pk_stmt *s)
{
    lw_val lo, hi;
    if (lw_expr(L, s->lo, &lo) != 0 || lw_expr(L, s->hi, &hi) != 0)
        return -1;
    if (lo.n != hi.n || lo.n < 1 || lo.n > 3)
        return lw_fail(L, s->loc, "range bounds of %d and %d components", lo.n, hi.n);
    if (!s->parallel)
        return serial_range(L, s, &lo, &hi);
    if (!at_top(L))
        return lw_fail(L, s->loc, "parallel loop outside the kernel's top level");
    L->parallel = 1;
    int rc;
    if (lo.n == 1) {
        ir_stmt *loop = ir_range_for(&L->b, lo.c[0], hi.c[0], 1);
        if (!loop || lw_push_loop(L, loop, s, 1, 1, s->loc) != 0) {
            L->parallel = 0;
            return lw_oom(L, s->loc);
        }
        ir_builder_at_end(&L->b, loop->body);
        ir_stmt *idx = ir_loop_index(&L->b, loop, 0);
        rc = idx ? bind_ssa(L, s->var, &idx, 1, s->loc) : lw_oom(L, s->loc);
        if (rc == 0)
            rc = loop_body(L, s, 1);
    } else {
        rc = parallel_box(L, s, &lo, &hi);
    }
    L->parallel = 0;
    return rc;
}

static int for_field(lw *L, const pk_stmt *s)
{
    uint32_t slot;
    if (lw_field_slot(L, s->field, s->loc, &slot) != 0)
        return -1;
    int dim = L->t->fields[slot].dim;
    if (dim < 1)
        return lw_fail(L, s->loc, "struct-for over a 0-D field");
    if (!at_top(L))
        return lw_fail(L, s->loc, "struct-for outside the kernel's top level");
    ir_stmt *loop = ir_struct_for(&L->b, slot);
    if (!loop || lw_push_loop(L, loop, s, 1, 1, s->loc) != 0)
        return lw_oom(L, s->loc);
    ir_builder_at_end(&L->b, loop->body);
    ir_stmt *idx[3];
    for (int a = 0; a < dim; a++)
        if (!(idx[a] = ir_loop_index(&L->b, loop, (uint32_t)a)))
            return lw_oom(L, s->loc);
    if (bind_ssa(L, s->var, idx, dim, s->loc) != 0)
        return -1;
    L->parallel = 1;
    int rc = loop_body(L, s, 1);
    L->parallel = 0;
    return rc;
}

static int while_loop(lw *L, const pk_stmt *s)
{
    ir_stmt *w = ir_while(&L->b);
    if (!w || lw_push_loop(L, w, s, 1, 1, s->loc) != 0)
        return lw_oom(L, s->loc);
    ir_builder_at_end(&L->b, w->body);
    lw_val c;
    if (lw_expr(L, s->cond, &c) != 0)
        return -1;
    ir_stmt *br = ir_if(&L->b, ir_unary(&L->b, IR_NOT, c.c[0]));
    if (!br)
        return lw_oom(L, s->loc);
    ir_builder_at_end(&L->b, br->body);
    if (!ir_break(&L->b, w))
        return lw_oom(L, s->loc);
    ir_builder_at_end(&L->b, w->body);
    return loop_body(L, s, 1);
}

static int if_stmt(lw *L, const pk_stmt *s, int *term)
{
    lw_val c;
    if (lw_expr(L, s->cond, &c) != 0)
        return -1;
    ir_stmt *br = ir_if(&L->b, c.c[0]);
    if (!br)
        return lw_oom(L, s->loc);
    ir_block *after = L->b.block;
    int t1 = 0, t2 = 0;
    ir_builder_at_end(&L->b, br->body);
    if (lw_stmt(L, s->then, &t1) != 0)
        return -1;
    ir_builder_at_end(&L->b, br->els);
    if (s->els && lw_stmt(L, s->els, &t2) != 0)
        return -1;
    ir_builder_at_end(&L->b, after);
    *term = t1 && t2 && s->els;
    return 0;
}

static int static_for(lw *L, const pk_stmt *s, int *term)
{
    for (int64_t v = s->first; v < s->last; v++) {
        ir_stmt *c = ir_const_i32(&L->b, (int32_t)v);
        if (!c)
            return lw_oom(L, s->loc);
        if (bind_ssa(L, s->var, &c, 1, s->loc) != 0 || lw_stmt(L, s->then, term) != 0)
            return -1;
        if (*term)
            break;
    }
    return 0;
}

static int jump(lw *L, const pk_stmt *s)
{
    if (s->kind == PK_S_CONTINUE) {
        lw_loop *top = L->nloops ? &L->loops[L->nloops - 1] : NULL;
        if (!top || top->ast != s->loop || !top->inner)
            return lw_fail(L, s->loc, "continue of a loop that is not the innermost one");
        return ir_continue(&L->b, top->ir) ? 0 : lw_oom(L, s->loc);
    }
    for (int i = L->nloops - 1; i >= 0; i--)
        if (L->loops[i].ast == s->loop && L->loops[i].outer)
            return lw_leave(L, i, s->loc);
    return lw_fail(L, s->loc, "break outside its loop");
}

static int ret(lw *L, const pk_stmt *s)
{
    lw_frame *f = L->frame;
    if (f->depth == 0)
        return lw_fail(L, s->loc, "return in a kernel");
    lw_val v = {0};
    if (s->value && lw_expr(L, s->value, &v) != 0)
        return -1;
    if (f->simple) {
        f->ret = v;
        return 0;
    }
    for (int i = 0; i < v.n; i++)
        if (!ir_store(&L->b, f->ret_slot[i], v.c[i]))
            return lw_oom(L, s->loc);
    return lw_leave(L, f->wrap, s->loc);
}

int lw_stmt(lw *L, const pk_stmt *s, int *term)
{
    *term = 0;
    if (L->failed)
        return -1;
    if (!s)
        return 0;
    switch (s->kind) {
    case PK_S_BLOCK:
        /* code after a jump never runs: it is left out */
        for (uint32_t i = 0; i < s->nbody && !*term; i++)
            if (lw_stmt(L, s->body[i], term) != 0)
                return -1;
        return 0;
    case PK_S_DECL: {
        lw_val v;
        if (lw_expr(L, s->value, &v) != 0)
            return -1;
        return lw_bind_value(L, s->var, &v, s->loc);
    }
    case PK_S_ASSIGN:
        return lw_assign(L, s);
    case PK_S_EXPR: {
        lw_val v;
        return lw_expr(L, s->value, &v);
    }
    case PK_S_IF:
        return if_stmt(L, s, term);
    case PK_S_WHILE:
        return while_loop(L, s);
    case PK_S_FOR_RANGE:
        return for_range(L, s);
    case PK_S_FOR_FIELD:
        return for_field(L, s);
    case PK_S_FOR_STATIC:
        return static_for(L, s, term);
    case PK_S_BREAK:
    case PK_S_CONTINUE:
        *term = 1;
        return jump(L, s);
    case PK_S_RETURN:
        *term = 1;
        return ret(L, s);
    default:
        return lw_fail(L, s->loc, "unsupported statement (kind %u)", s->kind);
    }
}
