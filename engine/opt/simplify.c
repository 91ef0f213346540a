/* Algebraic simplification: identities that hold for every value of the IR's types, so that
 * no rule is wrong for wrap-around integers, -0.0, NaN or infinities. Floats only get
 * x*1, x/1, x-(+0), x+(-0), double negation and equal select arms; x*0, x-x and x+0 stay.
 * Constant operands of commutative operators move to the right, so that one rule covers
 * both sides. An `if` on a constant is replaced by the block it takes; a range_for whose
 * constant bounds give no iteration goes away. */
#include "engine/opt/opt_internal.h"

static int is_commutative(int op)
{
    return op == IR_ADD || op == IR_MUL || op == IR_MIN || op == IR_MAX || op == IR_AND ||
           op == IR_OR || op == IR_XOR || op == IR_EQ || op == IR_NE;
}

static int64_t all_ones(ir_type ty)
{
    return opt_norm_int(ty, -1);
}

static int to_const(ir_stmt *s, int64_t v)
{
    opt_val r = {v, 0};
    opt_make_const(s, r);
    return 1;
}

static int to_value(ir_stmt *s, ir_stmt *x)
{
    opt_replace(s, x);
    return 1;
}

static int simplify_int(ir_stmt *s, ir_stmt *x, ir_stmt *y)
{
    ir_type ty = x->ty;
    int same = x == y;
    int bits = ty == IR_I64 ? 64 : 32;
    switch (s->sub) {
    case IR_ADD:
        if (opt_const_is_int(y, 0))
            return to_value(s, x);
        break;
    case IR_SUB:
        if (opt_const_is_int(y, 0))
            return to_value(s, x);
        if (same)
            return to_const(s, 0);
        break;
    case IR_MUL:
        if (opt_const_is_int(y, 1))
            return to_value(s, x);
        if (opt_const_is_int(y, 0))
            return to_const(s, 0);
        break;
    case IR_DIV:
        if (opt_const_is_int(y, 1))
            return to_value(s, x);
        if (opt_const_is_int(y, 0))
            return to_const(s, 0); /* x / 0 = 0 */
        break;
    case IR_MOD:
        if (opt_const_is_int(y, 1) || opt_const_is_int(y, 0) ||
            (ir_type_is_signed(ty) && opt_const_is_int(y, -1)))
            return to_const(s, 0);
        break;
    case IR_AND:
        if (opt_const_is_int(y, 0))
            return to_const(s, 0);
        if (same || opt_const_is_int(y, all_ones(ty)))
            return to_value(s, x);
        break;
    case IR_OR:
        if (opt_const_is_int(y, 0) || same)
            return to_value(s, x);
        if (opt_const_is_int(y, all_ones(ty)))
            return to_const(s, all_ones(ty));
        break;
    case IR_XOR:
        if (opt_const_is_int(y, 0))
            return to_value(s, x);
        if (same)
            return to_const(s, 0);
        break;
    case IR_SHL:
    case IR_SHR:
        if (opt_is_const(y) && ((uint64_t)y->ival & (uint64_t)(bits - 1)) == 0)
            return to_value(s, x);
        break;
    case IR_MIN:
    case IR_MAX:
        if (same)
            return to_value(s, x);
        break;
    case IR_LT: case IR_GT: case IR_NE:
        if (same)
            return to_const(s, 0);
        break;
    case IR_LE: case IR_GE: case IR_EQ:
        if (same)
            return to_const(s, 1);
        break;
    default:
        break;
    }
    return 0;
}

static int simplify_bool(ir_stmt *s, ir_stmt *x, ir_stmt *y)
{
    int same = x == y;
    switch (s->sub) {
    case IR_AND:
        if (opt_const_is_int(y, 1) || same)
            return to_value(s, x);
        if (opt_const_is_int(y, 0))
            return to_const(s, 0);
        break;
    case IR_OR:
        if (opt_const_is_int(y, 0) || same)
            return to_value(s, x);
        if (opt_const_is_int(y, 1))
            return to_const(s, 1);
        break;
    case IR_XOR:
    case IR_NE:
        if (opt_const_is_int(y, 0))
            return to_value(s, x);
        if (same)
            return to_const(s, 0);
        break;
    case IR_EQ:
        if (opt_const_is_int(y, 1))
            return to_value(s, x);
        if (same)
            return to_const(s, 1);
        break;
    default:
        break;
    }
    return 0;
}

static int simplify_float(ir_stmt *s, ir_stmt *x, ir_stmt *y)
{
    switch (s->sub) {
    case IR_MUL:
    case IR_DIV:
        if (opt_const_is_float(y, 1.0))
            return to_value(s, x);
        break;
    case IR_SUB: /* x - (+0) = x, also for x = -0 */
        if (opt_const_is_float(y, 0.0))
            return to_value(s, x);
        break;
    case IR_ADD: /* x + (-0) = x, also for x = +0 */
        if (opt_const_is_float(y, -0.0))
            return to_value(s, x);
        break;
    default:
        break;
    }
    return 0;
}

static int simplify_binary(ir_stmt *s)
{
    int n = 0;
    if (is_commutative(s->sub) && opt_is_const(s->arg[0]) && !opt_is_const(s->arg[1])) {
        ir_stmt *tmp = s->arg[0];
        s->arg[0] = s->arg[1];
        s->arg[1] = tmp;
        n = 1;
    }
    ir_stmt *x = s->arg[0], *y = s->arg[1];
    if (ir_type_is_int(x->ty))
        return n + simplify_int(s, x, y);
    if (x->ty == IR_BOOL)
        return n + simplify_bool(s, x, y);
    if (ir_type_is_float(x->ty))
        return n + simplify_float(s, x, y);
    return n;
}

static int simplify_unary(ir_stmt *s)
{
    ir_stmt *a = s->arg[0];
    int self_inverse = s->sub == IR_NEG || s->sub == IR_NOT || s->sub == IR_BITNOT;
    if (self_inverse && a->op == IR_UNARY && a->sub == s->sub)
        return to_value(s, ir_resolve(a->arg[0]));
    if (ir_type_is_int(s->ty) && (s->sub == IR_FLOOR || s->sub == IR_CEIL ||
                                  s->sub == IR_ROUND || s->sub == IR_TRUNC))
        return to_value(s, a);
    if (s->ty == IR_U32 && s->sub == IR_ABS)
        return to_value(s, a);
    return 0;
}

static int simplify_stmt(ir_stmt *s)
{
    for (int i = 0; i < s->nargs; i++)
        s->arg[i] = ir_resolve(s->arg[i]);
    switch (s->op) {
    case IR_BINARY:
        return simplify_binary(s);
    case IR_UNARY:
        return simplify_unary(s);
    case IR_CAST:
        if (s->arg[0]->ty == s->ty)
            return to_value(s, s->arg[0]);
        return 0;
    case IR_SELECT:
        if (opt_is_const(s->arg[0]))
            return to_value(s, s->arg[0]->ival ? s->arg[1] : s->arg[2]);
        if (s->arg[1] == s->arg[2])
            return to_value(s, s->arg[1]);
        if (s->ty == IR_BOOL && opt_const_is_int(s->arg[1], 1) && opt_const_is_int(s->arg[2], 0))
            return to_value(s, s->arg[0]);
        return 0;
    default:
        return 0;
    }
}

static int simplify_block(const ir_task *t, ir_block *b)
{
    int n = 0;
    for (ir_stmt *s = b->first, *next; s; s = next) {
        next = s->next;
        if (s->op == IR_IF) {
            s->arg[0] = ir_resolve(s->arg[0]);
            if (opt_is_const(s->arg[0])) {
                /* the taken block's statements take the if's place and are visited next */
                ir_block *taken = s->arg[0]->ival ? s->body : s->els;
                ir_stmt *first = taken->first;
                while (taken->first) {
                    ir_stmt *m = taken->first;
                    ir_unlink(m);
                    ir_insert_before(s, m);
                }
                ir_unlink(s);
                n++;
                if (first)
                    next = first;
                continue;
            }
        }
        if (s->op == IR_RANGE_FOR && !opt_is_task_loop(t, s)) {
            ir_stmt *lo = ir_resolve(s->arg[0]), *hi = ir_resolve(s->arg[1]);
            /* ints are stored extended by their signedness: int64 order is the type's */
            if (opt_is_const(lo) && opt_is_const(hi) && lo->ival >= hi->ival) {
                ir_unlink(s); /* runs no iteration */
                n++;
                continue;
            }
        }
        n += simplify_stmt(s);
        if (s->body)
            n += simplify_block(t, s->body);
        if (s->els)
            n += simplify_block(t, s->els);
    }
    return n;
}

int opt_simplify(ir_task *t)
{
    int n = simplify_block(t, t->body);
    if (n)
        ir_task_replace_uses(t);
    return n;
}
