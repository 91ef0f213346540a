/* Small helpers shared by the passes. */
#include "engine/passes/passes_internal.h"

ir_stmt *pass_gtmp_ptr(ir_builder *b, ir_type elem, uint32_t arg, uint32_t offset)
{
    ir_stmt *s = ir_stmt_new(b->task, IR_GTMP_PTR, IR_PTR(elem));
    if (!s)
        return NULL;
    s->index = arg;
    s->ival = offset;
    return ir_emit(b, s);
}

int pass_global_effect(const ir_stmt *s)
{
    switch (s->op) {
    case IR_GLOBAL_STORE: case IR_ATOMIC: case IR_ACTIVATE: case IR_DEACTIVATE:
    case IR_SN_ACTIVATE: case IR_SN_DEACTIVATE:
        return 1;
    case IR_SN_LOOKUP: case IR_SN_FIELD_PTR:
        return s->activate != 0;
    default:
        return 0;
    }
}

static int effect_visit(ir_stmt *s, void *ud)
{
    (void)ud;
    return pass_global_effect(s);
}

int pass_block_has_effect(ir_block *b)
{
    return ir_walk(b, effect_visit, NULL) != 0;
}

/* Ops that only compute a value: dropping an unused one changes nothing (the IR defines every
 * arithmetic case, so nothing traps). */
static int pure(const ir_stmt *s)
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

typedef struct dead_ctx {
    int changed;
} dead_ctx;

static void sweep(ir_block *b, dead_ctx *c)
{
    for (ir_stmt *s = b->last, *prev; s; s = prev) {
        prev = s->prev;
        if (s->body)
            sweep(s->body, c);
        if (s->els)
            sweep(s->els, c);
        if (pure(s) && s->mark == 0) {
            /* operands lose a use now, so a chain dies in one backward sweep */
            for (int i = 0; i < s->nargs; i++)
                if (s->arg[i] && s->arg[i]->mark)
                    s->arg[i]->mark--;
            ir_unlink(s);
            c->changed = 1;
        }
    }
}

void pass_drop_dead(ir_task *t)
{
    for (int round = 0; round < 64; round++) {
        dead_ctx c = {0};
        ir_task_count_uses(t);
        sweep(t->body, &c);
        if (!c.changed)
            break;
    }
}

ir_task *pass_clone(const ir_task *t)
{
    return ir_task_clone((ir_task *)t);
}

static int touches_state(ir_stmt *s, void *ud)
{
    (void)ud;
    switch (s->op) {
    case IR_GLOBAL_LOAD: case IR_GLOBAL_STORE: case IR_ATOMIC: case IR_IS_ACTIVE:
    case IR_ACTIVATE: case IR_DEACTIVATE:
        return 1;
    default:
        return s->op >= IR_SN_ROOT;
    }
}

int pass_compute_meta(ir_task *t)
{
    if (t->kind != IR_TASK_SERIAL && t->kind != IR_TASK_RANGE_FOR && t->kind != IR_TASK_KERNEL)
        return ir_task_compute_meta(t);
    if (ir_walk(t->body, touches_state, NULL))
        return ir_task_compute_meta(t);
    ir_task_meta *m = &t->meta;
    m->kind = t->kind == IR_TASK_KERNEL ? IR_TASK_SERIAL : t->kind;
    m->flags = 0;
    m->field = t->field;
    m->level = t->level;
    m->begin = m->end = 0;
    m->naccess = 0;
    m->access = NULL;
    ir_stmt *loop = t->body->last;
    if (t->kind == IR_TASK_RANGE_FOR && loop && loop->op == IR_RANGE_FOR) {
        if (loop->arg[0]->op == IR_CONST && loop->arg[1]->op == IR_CONST) {
            m->begin = loop->arg[0]->ival;
            m->end = loop->arg[1]->ival;
        } else {
            m->flags |= IR_TASKF_DYNAMIC_RANGE;
        }
    }
    t->has_meta = 1;
    return 0;
}
