/* The builder: a cursor in a block and one small function per statement kind. */
#include "engine/ir/ir_internal.h"

void ir_builder_init(ir_builder *b, ir_task *t)
{
    b->task = t;
    b->block = t->body;
    b->before = NULL;
}

void ir_builder_at_end(ir_builder *b, ir_block *block)
{
    b->block = block;
    b->before = NULL;
}

void ir_builder_before(ir_builder *b, ir_stmt *pos)
{
    b->block = pos->parent;
    b->before = pos;
}

ir_stmt *ir_emit(ir_builder *b, ir_stmt *s)
{
    if (!s)
        return NULL;
    if (b->before)
        ir_insert_before(b->before, s);
    else
        ir_append(b->block, s);
    return s;
}

static ir_stmt *mk(ir_builder *b, int op, ir_type ty, int nargs, ir_stmt *a0, ir_stmt *a1,
                   ir_stmt *a2)
{
    ir_stmt *ops[3] = {a0, a1, a2};
    for (int i = 0; i < nargs; i++)
        if (!ops[i])
            return NULL;
    ir_stmt *s = ir_stmt_new(b->task, op, ty);
    if (!s)
        return NULL;
    s->nargs = (uint8_t)nargs;
    for (int i = 0; i < nargs; i++)
        s->arg[i] = ops[i];
    return s;
}

ir_stmt *ir_const_int(ir_builder *b, ir_type ty, int64_t v)
{
    ir_stmt *s = mk(b, IR_CONST, ty, 0, NULL, NULL, NULL);
    if (!s)
        return NULL;
    if (ty == IR_BOOL)
        v = v != 0;
    else if (ty == IR_I32)
        v = (int32_t)v;
    else if (ty == IR_U32)
        v = (uint32_t)v;
    s->ival = v;
    return ir_emit(b, s);
}

ir_stmt *ir_const_i32(ir_builder *b, int32_t v) { return ir_const_int(b, IR_I32, v); }

ir_stmt *ir_const_float(ir_builder *b, ir_type ty, double v)
{
    ir_stmt *s = mk(b, IR_CONST, ty, 0, NULL, NULL, NULL);
    if (!s)
        return NULL;
    s->fval = ty == IR_F32 ? (double)(float)v : v;
    return ir_emit(b, s);
}

ir_stmt *ir_arg(ir_builder *b, ir_type ty, uint32_t index)
{
    ir_stmt *s = mk(b, IR_ARG, ty, 0, NULL, NULL, NULL);
    if (s)
        s->index = index;
    return ir_emit(b, s);
}

ir_stmt *ir_unary(ir_builder *b, int op, ir_stmt *a)
{
    ir_stmt *s = mk(b, IR_UNARY, a ? a->ty : IR_VOID, 1, a, NULL, NULL);
    if (s)
        s->sub = (uint8_t)op;
    return ir_emit(b, s);
}

ir_stmt *ir_binary(ir_builder *b, int op, ir_stmt *x, ir_stmt *y)
{
    ir_type ty = ir_binop_is_cmp(op) ? IR_BOOL : x ? x->ty : IR_VOID;
    ir_stmt *s = mk(b, IR_BINARY, ty, 2, x, y, NULL);
    if (s)
        s->sub = (uint8_t)op;
    return ir_emit(b, s);
}

ir_stmt *ir_select(ir_builder *b, ir_stmt *c, ir_stmt *x, ir_stmt *y)
{
    return ir_emit(b, mk(b, IR_SELECT, x ? x->ty : IR_VOID, 3, c, x, y));
}

ir_stmt *ir_fma(ir_builder *b, ir_stmt *x, ir_stmt *y, ir_stmt *z)
{
    return ir_emit(b, mk(b, IR_FMA, x ? x->ty : IR_VOID, 3, x, y, z));
}

ir_stmt *ir_cast(ir_builder *b, ir_type to, ir_stmt *a)
{
    return ir_emit(b, mk(b, IR_CAST, to, 1, a, NULL, NULL));
}

ir_stmt *ir_alloca(ir_builder *b, ir_type elem)
{
    return ir_emit(b, mk(b, IR_ALLOCA, IR_PTR(elem), 0, NULL, NULL, NULL));
}

ir_stmt *ir_load(ir_builder *b, ir_stmt *ptr)
{
    return ir_emit(b, mk(b, IR_LOAD, ptr ? IR_POINTEE(ptr->ty) : IR_VOID, 1, ptr, NULL, NULL));
}

ir_stmt *ir_store(ir_builder *b, ir_stmt *ptr, ir_stmt *v)
{
    return ir_emit(b, mk(b, IR_STORE, IR_VOID, 2, ptr, v, NULL));
}

static ir_stmt *indexed(ir_builder *b, int op, ir_type ty, uint32_t field, ir_stmt *const *idx)
{
    if (field >= b->task->nfields)
        return NULL;
    int dim = b->task->fields[field].dim;
    for (int i = 0; i < dim; i++)
        if (!idx || !idx[i])
            return NULL;
    ir_stmt *s = ir_stmt_new(b->task, op, ty);
    if (!s)
        return NULL;
    s->field = (uint16_t)field;
    s->nargs = (uint8_t)dim;
    for (int i = 0; i < dim; i++)
        s->arg[i] = idx[i];
    return s;
}

ir_stmt *ir_global_ptr(ir_builder *b, uint32_t field, uint32_t comp, ir_stmt *const *idx)
{
    ir_type elem = field < b->task->nfields ? b->task->fields[field].elem : IR_F32;
    ir_stmt *s = indexed(b, IR_GLOBAL_PTR, IR_PTR(elem), field, idx);
    if (s)
        s->comp = (uint8_t)comp;
    return ir_emit(b, s);
}

ir_stmt *ir_gtmp_ptr(ir_builder *b, ir_type elem, uint32_t offset)
{
    ir_stmt *s = mk(b, IR_GTMP_PTR, IR_PTR(elem), 0, NULL, NULL, NULL);
    if (s)
        s->ival = offset;
    return ir_emit(b, s);
}

ir_stmt *ir_global_load(ir_builder *b, ir_stmt *ptr)
{
    return ir_emit(b, mk(b, IR_GLOBAL_LOAD, ptr ? IR_POINTEE(ptr->ty) : IR_VOID, 1, ptr, NULL,
                         NULL));
}

ir_stmt *ir_global_store(ir_builder *b, ir_stmt *ptr, ir_stmt *v)
{
    return ir_emit(b, mk(b, IR_GLOBAL_STORE, IR_VOID, 2, ptr, v, NULL));
}

ir_stmt *ir_atomic(ir_builder *b, int op, ir_stmt *ptr, ir_stmt *v)
{
    ir_stmt *s = mk(b, IR_ATOMIC, ptr ? IR_POINTEE(ptr->ty) : IR_VOID, 2, ptr, v, NULL);
    if (s)
        s->sub = (uint8_t)op;
    return ir_emit(b, s);
}

ir_stmt *ir_field_op(ir_builder *b, int op, uint32_t field, ir_stmt *const *idx)
{
    return ir_emit(b, indexed(b, op, op == IR_IS_ACTIVE ? IR_BOOL : IR_VOID, field, idx));
}

ir_stmt *ir_if(ir_builder *b, ir_stmt *cond)
{
    return ir_emit(b, mk(b, IR_IF, IR_VOID, 1, cond, NULL, NULL));
}

ir_stmt *ir_range_for(ir_builder *b, ir_stmt *begin, ir_stmt *end, int parallel)
{
    ir_stmt *s = mk(b, IR_RANGE_FOR, IR_VOID, 2, begin, end, NULL);
    if (s)
        s->parallel = parallel != 0;
    return ir_emit(b, s);
}

ir_stmt *ir_struct_for(ir_builder *b, uint32_t field)
{
    if (field >= b->task->nfields)
        return NULL;
    ir_stmt *s = mk(b, IR_STRUCT_FOR, IR_VOID, 0, NULL, NULL, NULL);
    if (s) {
        s->field = (uint16_t)field;
        s->parallel = 1;
    }
    return ir_emit(b, s);
}

ir_stmt *ir_while(ir_builder *b)
{
    return ir_emit(b, mk(b, IR_WHILE, IR_VOID, 0, NULL, NULL, NULL));
}

ir_stmt *ir_loop_index(ir_builder *b, ir_stmt *loop, uint32_t axis)
{
    if (!loop)
        return NULL;
    ir_type ty = loop->op == IR_RANGE_FOR && loop->arg[0] ? loop->arg[0]->ty : IR_I32;
    ir_stmt *s = mk(b, IR_LOOP_INDEX, ty, 0, NULL, NULL, NULL);
    if (s) {
        s->loop = loop;
        s->index = axis;
    }
    return ir_emit(b, s);
}

ir_stmt *ir_break(ir_builder *b, ir_stmt *loop)
{
    if (!loop)
        return NULL;
    ir_stmt *s = mk(b, IR_BREAK, IR_VOID, 0, NULL, NULL, NULL);
    if (s)
        s->loop = loop;
    return ir_emit(b, s);
}

ir_stmt *ir_continue(ir_builder *b, ir_stmt *loop)
{
    if (!loop)
        return NULL;
    ir_stmt *s = mk(b, IR_CONTINUE, IR_VOID, 0, NULL, NULL, NULL);
    if (s)
        s->loop = loop;
    return ir_emit(b, s);
}

ir_stmt *ir_sn_root(ir_builder *b, uint32_t field)
{
    ir_stmt *s = mk(b, IR_SN_ROOT, IR_CELL, 0, NULL, NULL, NULL);
    if (s)
        s->field = (uint16_t)field;
    return ir_emit(b, s);
}

ir_stmt *ir_sn_child(ir_builder *b, uint32_t field, uint32_t level, ir_stmt *cell)
{
    ir_stmt *s = mk(b, IR_SN_CHILD, IR_CELL, 1, cell, NULL, NULL);
    if (s) {
        s->field = (uint16_t)field;
        s->level = (uint8_t)level;
    }
    return ir_emit(b, s);
}

ir_stmt *ir_sn_index(ir_builder *b, uint32_t field, uint32_t level, ir_stmt *const *idx)
{
    ir_stmt *s = indexed(b, IR_SN_INDEX, IR_I32, field, idx);
    if (s)
        s->level = (uint8_t)level;
    return ir_emit(b, s);
}

ir_stmt *ir_sn_lookup(ir_builder *b, uint32_t field, uint32_t level, int activate,
                      ir_stmt *container, ir_stmt *index)
{
    ir_stmt *s = mk(b, IR_SN_LOOKUP, IR_CELL, 2, container, index, NULL);
    if (s) {
        s->field = (uint16_t)field;
        s->level = (uint8_t)level;
        s->activate = activate != 0;
    }
    return ir_emit(b, s);
}

ir_stmt *ir_sn_field_ptr(ir_builder *b, uint32_t field, uint32_t comp, int activate,
                         ir_stmt *container, ir_stmt *index)
{
    ir_type elem = field < b->task->nfields ? b->task->fields[field].elem : IR_F32;
    ir_stmt *s = mk(b, IR_SN_FIELD_PTR, IR_PTR(elem), 2, container, index, NULL);
    if (s) {
        s->field = (uint16_t)field;
        s->comp = (uint8_t)comp;
        s->activate = activate != 0;
        if (field < b->task->nfields)
            s->level = (uint8_t)(b->task->fields[field].nlevels - 1);
    }
    return ir_emit(b, s);
}

ir_stmt *ir_sn_op(ir_builder *b, int op, uint32_t field, uint32_t level, ir_stmt *container,
                  ir_stmt *index)
{
    ir_stmt *s = mk(b, op, op == IR_SN_IS_ACTIVE ? IR_BOOL : IR_VOID, 2, container, index, NULL);
    if (s) {
        s->field = (uint16_t)field;
        s->level = (uint8_t)level;
    }
    return ir_emit(b, s);
}
