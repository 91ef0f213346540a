/* The printed form (docs/ir.md, "Printed form"): stable text for golden tests and for
 * `plume compile --emit ir`. One statement per line: "$N = op type operands" for values,
 * "$N : op operands" for effects; nested blocks indented by two spaces. */
#include "engine/ir/ir_internal.h"

#include <inttypes.h>

static const char *const task_kinds[] = {"serial", "range_for", "struct_for", "clear_list",
                                         "listgen", "gc", "kernel"};

static const char *task_kind_name(int k)
{
    return k >= 0 && k <= IR_TASK_KERNEL ? task_kinds[k] : "?";
}

static void field_ref(ir_buf *b, const ir_task *t, uint32_t f)
{
    if (f < t->nfields && t->fields[f].name[0])
        ir_buf_printf(b, "@%s", t->fields[f].name);
    else
        ir_buf_printf(b, "@f%u", f);
}

static void field_comp(ir_buf *b, const ir_task *t, const ir_stmt *s)
{
    field_ref(b, t, s->field);
    if (s->field < t->nfields && t->fields[s->field].components > 1)
        ir_buf_printf(b, ".%u", s->comp);
}

static void operand(ir_buf *b, const ir_stmt *o)
{
    if (o)
        ir_buf_printf(b, " $%u", o->id);
    else
        ir_buf_puts(b, " <null>");
}

static void index_list(ir_buf *b, const ir_stmt *s)
{
    ir_buf_puts(b, " [");
    for (int i = 0; i < s->nargs; i++)
        ir_buf_printf(b, i ? " $%u" : "$%u", s->arg[i] ? s->arg[i]->id : 0u);
    ir_buf_puts(b, "]");
}

static void demoted(ir_buf *b, uint32_t mask)
{
    if (!mask)
        return;
    ir_buf_puts(b, " demoted(");
    int first = 1;
    for (int l = 0; l < 32; l++)
        if (mask & (1u << l)) {
            ir_buf_printf(b, first ? "%d" : ",%d", l);
            first = 0;
        }
    ir_buf_puts(b, ")");
}

static void block(ir_buf *b, ir_task *t, const ir_block *blk, int depth);

static void stmt(ir_buf *b, ir_task *t, const ir_stmt *s, int depth)
{
    for (int i = 0; i < depth; i++)
        ir_buf_puts(b, "  ");
    const char *name = ir_op_name(s->op);
    if (s->op == IR_UNARY)
        name = ir_unop_name(s->sub);
    else if (s->op == IR_BINARY)
        name = ir_binop_name(s->sub);
    if (s->ty != IR_VOID)
        ir_buf_printf(b, "$%u = ", s->id);
    else
        ir_buf_printf(b, "$%u : ", s->id);
    if (s->op == IR_ATOMIC)
        ir_buf_printf(b, "atomic_%s", ir_atomic_name(s->sub));
    else
        ir_buf_puts(b, name);
    if (s->ty != IR_VOID)
        ir_buf_printf(b, " %s", ir_type_name(s->ty));
    switch (s->op) {
    case IR_CONST:
        if (ir_type_is_float(s->ty)) {
            ir_buf_puts(b, " ");
            ir_buf_float(b, s->ty, s->fval);
        } else if (s->ty == IR_BOOL) {
            ir_buf_puts(b, s->ival ? " true" : " false");
        } else {
            ir_buf_printf(b, " %" PRId64, s->ival);
        }
        break;
    case IR_ARG:
        ir_buf_printf(b, " #%u", s->index);
        break;
    case IR_GLOBAL_PTR:
    case IR_IS_ACTIVE:
    case IR_ACTIVATE:
    case IR_DEACTIVATE:
        ir_buf_puts(b, " ");
        if (s->op == IR_GLOBAL_PTR)
            field_comp(b, t, s);
        else
            field_ref(b, t, s->field);
        index_list(b, s);
        demoted(b, s->demoted);
        break;
    case IR_GTMP_PTR:
        ir_buf_printf(b, " +%" PRId64, s->ival);
        break;
    case IR_STRUCT_FOR:
        ir_buf_puts(b, " ");
        field_ref(b, t, s->field);
        break;
    case IR_LOOP_INDEX:
        operand(b, s->loop);
        ir_buf_printf(b, " %u", s->index);
        break;
    case IR_BREAK:
    case IR_CONTINUE:
        operand(b, s->loop);
        break;
    case IR_SN_ROOT:
        ir_buf_puts(b, " ");
        field_ref(b, t, s->field);
        break;
    case IR_SN_INDEX:
        ir_buf_puts(b, " ");
        field_ref(b, t, s->field);
        ir_buf_printf(b, ".L%u", s->level);
        index_list(b, s);
        break;
    case IR_SN_FIELD_PTR:
        ir_buf_puts(b, " ");
        field_comp(b, t, s);
        break;
    case IR_SN_CHILD: case IR_SN_LOOKUP: case IR_SN_IS_ACTIVE: case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
        ir_buf_puts(b, " ");
        field_ref(b, t, s->field);
        ir_buf_printf(b, ".L%u", s->level);
        break;
    default:
        break;
    }
    if (s->op != IR_GLOBAL_PTR && s->op != IR_IS_ACTIVE && s->op != IR_ACTIVATE &&
        s->op != IR_DEACTIVATE && s->op != IR_SN_INDEX)
        for (int i = 0; i < s->nargs; i++)
            operand(b, s->arg[i]);
    if ((s->op == IR_SN_LOOKUP || s->op == IR_SN_FIELD_PTR) && s->activate)
        ir_buf_puts(b, " activate");
    if (s->op == IR_RANGE_FOR && s->parallel)
        ir_buf_puts(b, " parallel");
    if (s->body) {
        ir_buf_puts(b, " {\n");
        block(b, t, s->body, depth + 1);
        for (int i = 0; i < depth; i++)
            ir_buf_puts(b, "  ");
        if (s->els && s->els->first) {
            ir_buf_puts(b, "} else {\n");
            block(b, t, s->els, depth + 1);
            for (int i = 0; i < depth; i++)
                ir_buf_puts(b, "  ");
        }
        ir_buf_puts(b, "}");
    }
    ir_buf_puts(b, "\n");
}

static void block(ir_buf *b, ir_task *t, const ir_block *blk, int depth)
{
    for (const ir_stmt *s = blk->first; s; s = s->next)
        stmt(b, t, s, depth);
}

char *ir_print_task(ir_task *t)
{
    ir_buf b = {0};
    ir_task_number(t);
    ir_buf_printf(&b, "task %s \"%s\"", task_kind_name(t->kind), t->name);
    if (t->kind == IR_TASK_STRUCT_FOR || t->kind == IR_TASK_CLEAR_LIST ||
        t->kind == IR_TASK_LISTGEN || t->kind == IR_TASK_GC) {
        ir_buf_puts(&b, " ");
        field_ref(&b, t, t->field);
        ir_buf_printf(&b, ".L%u", t->level);
    }
    if (t->gtmp_bytes)
        ir_buf_printf(&b, " gtmp=%u", t->gtmp_bytes);
    ir_buf_puts(&b, " {\n");
    block(&b, t, t->body, 1);
    ir_buf_puts(&b, "}\n");
    return ir_buf_finish(&b);
}

static const char *const state_names[] = {"value", "mask", "list", "alloc", "gtmp"};

char *ir_print_meta(const ir_task *t)
{
    ir_buf b = {0};
    const ir_task_meta *m = &t->meta;
    if (!t->has_meta) {
        ir_buf_puts(&b, "meta: none\n");
        return ir_buf_finish(&b);
    }
    ir_buf_printf(&b, "meta %s", task_kind_name(m->kind));
    if (m->kind == IR_TASK_RANGE_FOR) {
        if (m->flags & IR_TASKF_DYNAMIC_RANGE)
            ir_buf_puts(&b, " dynamic");
        else
            ir_buf_printf(&b, " [%" PRId64 ", %" PRId64 ")", m->begin, m->end);
    }
    if (m->kind >= IR_TASK_STRUCT_FOR && m->kind <= IR_TASK_GC) {
        ir_buf_puts(&b, " ");
        field_ref(&b, t, m->field);
        ir_buf_printf(&b, ".L%u", m->level);
    }
    ir_buf_puts(&b, "\n");
    static const char *const flag_names[] = {"read", "write", "elementwise", "unique",
                                             "atomic", "cover", "full", "index_only",
                                             "lookup", "at_index", "at_every_index"};
    for (uint32_t i = 0; i < m->naccess; i++) {
        const ir_access *a = &m->access[i];
        ir_buf_printf(&b, "  %s", a->kind <= IR_STATE_GTMP ? state_names[a->kind] : "?");
        if (a->kind != IR_STATE_GTMP) {
            ir_buf_puts(&b, " ");
            field_ref(&b, t, a->field);
            if (a->kind != IR_STATE_VALUE)
                ir_buf_printf(&b, ".L%u", a->level);
        }
        ir_buf_puts(&b, ":");
        for (int f = 0; f < (int)(sizeof flag_names / sizeof *flag_names); f++)
            if (a->flags & (1u << f)) {
                ir_buf_printf(&b, " %s", flag_names[f]);
                if ((1u << f) == IR_ACC_ATOMIC)
                    ir_buf_printf(&b, "(%s)", ir_atomic_name(a->atomic_op));
            }
        ir_buf_puts(&b, "\n");
    }
    return ir_buf_finish(&b);
}
