/* Struct-for bodies that act only at the first voxel of each leaf block: per-block kernels
 * (the smoke solver's prunes, clears and topology growth) iterate every voxel of a block but
 * do their work under `if ((I.x & 7) == 0 && (I.y & 7) == 0 && (I.z & 7) == 0 && ...)`.
 *
 * What is recognized. The loop body is pure statements (values, reads, lookups and activity
 * queries that activate nothing) and exactly one `if` without an else; the `if`'s condition is
 * a tree of boolean `and`s with, among its leaves, tests `(loop index along axis a) & m == 0`
 * (operands in either order). Every cell whose index along axis a fails such a test skips the
 * `if`, and the pure statements around it have no effect, so the cell need not run at all.
 *
 * What the caller does with it (task_entry.c). Along a tested axis whose mask covers the
 * leaf's cell bits, a block whose first voxel is a multiple of the block size (checked per
 * list entry, never assumed: a layout's offset may shift blocks) has exactly one cell that can
 * pass, its first; the cell loop then runs that one cell instead of the whole axis. */
#include "engine/codegen/cg_internal.h"

static int pure(const ir_stmt *s)
{
    switch (s->op) {
    case IR_CONST:
    case IR_ARG:
    case IR_UNARY:
    case IR_BINARY:
    case IR_SELECT:
    case IR_FMA:
    case IR_CAST:
    case IR_LOOP_INDEX:
    case IR_LOAD:
    case IR_GTMP_PTR:
    case IR_GLOBAL_PTR:
    case IR_GLOBAL_LOAD:
    case IR_IS_ACTIVE:
    case IR_SN_ROOT:
    case IR_SN_CHILD:
    case IR_SN_INDEX:
    case IR_SN_IS_ACTIVE:
        return 1;
    case IR_SN_LOOKUP:
    case IR_SN_FIELD_PTR:
        return !s->activate;
    default:
        return 0;
    }
}

static int is_const(const ir_stmt *s, int64_t v)
{
    return s->op == IR_CONST && s->ty != IR_F32 && s->ty != IR_F64 && s->ival == v;
}

/* `loop index a & m == 0`: records m for axis a. */
static void leaf_test(const ir_stmt *s, const ir_stmt *loop, int *axes, int32_t mask[])
{
    if (s->op != IR_BINARY || s->sub != IR_EQ || s->nargs < 2)
        return;
    const ir_stmt *x = is_const(s->arg[1], 0) ? s->arg[0] : is_const(s->arg[0], 0) ? s->arg[1] : NULL;
    if (!x || x->op != IR_BINARY || x->sub != IR_AND || x->ty != IR_I32 || x->nargs < 2)
        return;
    const ir_stmt *li = x->arg[0], *m = x->arg[1];
    if (li->op != IR_LOOP_INDEX) {
        li = x->arg[1];
        m = x->arg[0];
    }
    if (li->op != IR_LOOP_INDEX || li->loop != loop || li->index >= IR_MAX_DIM ||
        m->op != IR_CONST)
        return;
    *axes |= 1 << li->index;
    mask[li->index] |= (int32_t)m->ival;
}

static void and_tree(const ir_stmt *s, const ir_stmt *loop, int *axes, int32_t mask[], int depth)
{
    if (depth > 32)
        return;
    if (s->op == IR_BINARY && s->sub == IR_AND && s->ty == IR_BOOL && s->nargs >= 2) {
        and_tree(s->arg[0], loop, axes, mask, depth + 1);
        and_tree(s->arg[1], loop, axes, mask, depth + 1);
        return;
    }
    leaf_test(s, loop, axes, mask);
}

int cg_block_head(const ir_stmt *loop, int32_t mask[IR_MAX_DIM])
{
    const ir_stmt *guard = NULL;
    for (int a = 0; a < IR_MAX_DIM; a++)
        mask[a] = 0;
    if (!loop || loop->op != IR_STRUCT_FOR || !loop->body)
        return 0;
    for (const ir_stmt *s = loop->body->first; s; s = s->next) {
        if (pure(s))
            continue;
        if (s->op != IR_IF || guard || (s->els && s->els->first) || s->nargs < 1)
            return 0;
        guard = s;
    }
    if (!guard)
        return 0;
    int axes = 0;
    and_tree(guard->arg[0], loop, &axes, mask, 0);
    return axes;
}
