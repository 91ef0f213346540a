/* Small statement helpers shared by the passes. */
#include "engine/opt/opt_internal.h"

#include <string.h>

int opt_const_is_int(const ir_stmt *s, int64_t v)
{
    return opt_is_const(s) && (s->ty == IR_BOOL || ir_type_is_int(s->ty)) && s->ival == v;
}

int opt_const_is_float(const ir_stmt *s, double v)
{
    return opt_is_const(s) && ir_type_is_float(s->ty) && s->fval == v &&
           (s->fval < 0 || 1.0 / s->fval < 0) == (v < 0 || 1.0 / v < 0);
}

void opt_make_const(ir_stmt *s, opt_val v)
{
    s->op = IR_CONST;
    s->sub = 0;
    s->nargs = 0;
    memset(s->arg, 0, sizeof s->arg);
    s->ival = ir_type_is_float(s->ty) ? 0 : opt_norm_int(s->ty, v.i);
    s->fval = ir_type_is_float(s->ty) ? (s->ty == IR_F32 ? (double)(float)v.f : v.f) : 0.0;
}

void opt_replace(ir_stmt *s, ir_stmt *with)
{
    s->repl = with;
    ir_unlink(s);
}

int opt_is_pure(const ir_stmt *s)
{
    switch (s->op) {
    case IR_CONST: case IR_ARG: case IR_UNARY: case IR_BINARY: case IR_SELECT: case IR_CAST:
    case IR_FMA:
    case IR_ALLOCA: case IR_LOAD: case IR_GLOBAL_PTR: case IR_GTMP_PTR: case IR_GLOBAL_LOAD:
    case IR_IS_ACTIVE: case IR_LOOP_INDEX: case IR_SN_ROOT: case IR_SN_CHILD: case IR_SN_INDEX:
    case IR_SN_IS_ACTIVE:
        return 1;
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR:
        return !s->activate;
    default:
        return 0;
    }
}

int opt_is_task_loop(const ir_task *t, const ir_stmt *s)
{
    return (t->kind == IR_TASK_RANGE_FOR || t->kind == IR_TASK_STRUCT_FOR) &&
           s == t->body->last && s->parent == t->body;
}

static int effect_visit(ir_stmt *s, void *ud)
{
    (void)ud;
    /* a while loop without effects still may not terminate */
    return s->op == IR_WHILE || (ir_op_has_effect(s) && s->op != IR_IF && !ir_op_is_loop(s->op));
}

int opt_block_has_effect(ir_block *b)
{
    return ir_walk(b, effect_visit, NULL) != 0;
}

int opt_stmt_has_effect(ir_stmt *s)
{
    if (effect_visit(s, NULL))
        return 1;
    return (s->body && opt_block_has_effect(s->body)) || (s->els && opt_block_has_effect(s->els));
}
