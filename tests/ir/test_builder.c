/* The builder: types filled from operands, constants normalized to their type, NULL operands
 * propagate, cursor placement; links, walks, use counts and replacement. */
#include "ir_test.h"

static int order[64], norder;

static int record(ir_stmt *s, void *ud)
{
    (void)ud;
    if (norder < 64)
        order[norder++] = (int)s->ival;
    return 0;
}

static int stop_at_3(ir_stmt *s, void *ud)
{
    (void)ud;
    return s->op == IR_CONST && s->ival == 3 ? 42 : 0;
}

static void test_types_and_constants(void)
{
    ir_field_info f[2] = {dense1("a"), sparse3("v", 3)};
    ir_type args[] = {IR_F32, IR_I64};
    ir_task *t = ir_task_new(IR_TASK_KERNEL, "k", f, 2, args, 2);
    CHECK(t && t->nfields == 2 && t->nargs == 2 && t->arg_types[1] == IR_I64);
    CHECK(strcmp(t->fields[1].name, "v") == 0 && t->fields[1].components == 3);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *c = ir_const_i32(&b, 7);
    CHECK(c->op == IR_CONST && c->ty == IR_I32 && c->ival == 7);
    CHECK(ir_const_int(&b, IR_U32, -1)->ival == 4294967295LL);
    CHECK(ir_const_int(&b, IR_I32, 0x1ffffffffLL)->ival == -1);
    CHECK(ir_const_int(&b, IR_BOOL, 5)->ival == 1);
    CHECK(ir_const_float(&b, IR_F32, 0.1)->fval == (double)0.1f);
    CHECK(ir_const_float(&b, IR_F64, 0.1)->fval == 0.1);
    ir_stmt *x = ir_arg(&b, IR_F32, 0);
    CHECK(x->op == IR_ARG && x->index == 0 && x->ty == IR_F32);
    CHECK(ir_binary(&b, IR_ADD, x, x)->ty == IR_F32);
    CHECK(ir_binary(&b, IR_LT, x, x)->ty == IR_BOOL);
    CHECK(ir_unary(&b, IR_SQRT, x)->ty == IR_F32);
    CHECK(ir_cast(&b, IR_I32, x)->ty == IR_I32);
    ir_stmt *cond = ir_binary(&b, IR_EQ, c, c);
    CHECK(ir_select(&b, cond, x, x)->ty == IR_F32);
    ir_stmt *al = ir_alloca(&b, IR_F64);
    CHECK(al->ty == IR_PTR(IR_F64) && IR_POINTEE(al->ty) == IR_F64);
    CHECK(ir_load(&b, al)->ty == IR_F64);
    ir_stmt *idx3[3] = {c, c, c};
    ir_stmt *gp = ir_global_ptr(&b, 1, 2, idx3);
    CHECK(gp->ty == IR_PTR(IR_F32) && gp->nargs == 3 && gp->comp == 2 && gp->field == 1);
    CHECK(ir_atomic(&b, IR_ATOMIC_ADD, gp, x)->ty == IR_F32);
    CHECK(ir_field_op(&b, IR_IS_ACTIVE, 1, idx3)->ty == IR_BOOL);
    CHECK(ir_field_op(&b, IR_ACTIVATE, 1, idx3)->ty == IR_VOID);
    /* NULL operands and bad slots give NULL, so a sequence is checked once */
    CHECK(ir_binary(&b, IR_ADD, x, NULL) == NULL);
    CHECK(ir_load(&b, NULL) == NULL);
    CHECK(ir_global_ptr(&b, 2, 0, idx3) == NULL);
    ir_stmt *idx_bad[3] = {c, NULL, c};
    CHECK(ir_global_ptr(&b, 1, 0, idx_bad) == NULL);
    CHECK(ir_struct_for(&b, 5) == NULL);
    /* loops: range_for index has the bounds' type; struct_for's is i32 */
    ir_stmt *lo = ir_const_int(&b, IR_I64, 0), *hi = ir_arg(&b, IR_I64, 1);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 1);
    CHECK(rf->parallel == 1 && rf->body && rf->body->owner == rf && !rf->els);
    ir_builder_at_end(&b, rf->body);
    CHECK(ir_loop_index(&b, rf, 0)->ty == IR_I64);
    ir_builder_init(&b, t);
    ir_stmt *sf = ir_struct_for(&b, 1);
    CHECK(sf->parallel == 1 && sf->field == 1);
    ir_builder_at_end(&b, sf->body);
    CHECK(ir_loop_index(&b, sf, 2)->ty == IR_I32);
    ir_builder_init(&b, t);
    ir_stmt *iff = ir_if(&b, cond);
    CHECK(iff->body && iff->els && iff->els->owner == iff && iff->ty == IR_VOID);
    CHECK(ir_task_bytes(t) > 0);
    ir_task_free(t);
}

static void test_links_and_walks(void)
{
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "s", NULL, 0, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *c1 = ir_const_i32(&b, 1);
    ir_stmt *c3 = ir_const_i32(&b, 3);
    ir_builder_before(&b, c3);
    ir_stmt *c2 = ir_const_i32(&b, 2); /* goes between 1 and 3 */
    CHECK(t->body->first == c1 && c1->next == c2 && c2->next == c3 && t->body->last == c3);
    CHECK(c3->prev == c2 && c2->parent == t->body);
    ir_builder_init(&b, t);
    ir_stmt *cond = ir_const_int(&b, IR_BOOL, 1);
    cond->ival = 100; /* not printed: only walked */
    ir_stmt *iff = ir_if(&b, cond);
    ir_builder_at_end(&b, iff->els);
    ir_const_i32(&b, 5);
    ir_builder_at_end(&b, iff->body);
    ir_const_i32(&b, 4);
    ir_builder_init(&b, t);
    ir_const_i32(&b, 6);
    /* pre-order, a statement before its blocks, then before else */
    norder = 0;
    CHECK(ir_walk(t->body, record, NULL) == 0);
    int want[] = {1, 2, 3, 100, 0, 4, 5, 6};
    CHECK(norder == 8);
    for (int i = 0; i < 8 && i < norder; i++)
        CHECK(order[i] == want[i]);
    CHECK(ir_walk(t->body, stop_at_3, NULL) == 42);
    CHECK(ir_task_number(t) == 8 && c3->id == 2 && iff->id == 4);
    /* unlink and move */
    ir_unlink(c2);
    CHECK(c1->next == c3 && c3->prev == c1 && !c2->parent);
    ir_unlink(c1);
    CHECK(t->body->first == c3 && !c3->prev);
    ir_prepend(t->body, c1);
    CHECK(t->body->first == c1 && c1->next == c3);
    ir_block *to = ir_block_new(t, NULL);
    ir_move_after(c3, to);
    CHECK(t->body->last == c3 && !c3->next && to->first == cond && to->last->ival == 6);
    CHECK(cond->parent == to);
    ir_insert_after(c3, c2);
    CHECK(t->body->last == c2 && c3->next == c2);
    ir_task_free(t);
}

static void test_uses_and_replace(void)
{
    ir_type args[] = {IR_I32};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "s", NULL, 0, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *a = ir_arg(&b, IR_I32, 0);
    ir_stmt *x = ir_binary(&b, IR_ADD, a, a);
    ir_stmt *y = ir_binary(&b, IR_MUL, x, a);
    ir_stmt *rf = ir_range_for(&b, a, y, 0);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *li = ir_loop_index(&b, rf, 0);
    ir_stmt *z = ir_binary(&b, IR_SUB, li, x);
    ir_task_count_uses(t);
    CHECK(a->mark == 4 && x->mark == 2 && y->mark == 1 && rf->mark == 1 && z->mark == 0);
    /* x's uses go to y's replacement chain end: x -> y2 -> a */
    ir_builder_init(&b, t);
    x->repl = y;
    y->repl = a;
    CHECK(ir_resolve(x) == a);
    ir_task_replace_uses(t);
    CHECK(y->arg[0] == a && z->arg[1] == a && rf->arg[1] == a);
    CHECK(!x->repl && !y->repl);
    ir_task_free(t);
}

int main(void)
{
    test_types_and_constants();
    test_links_and_walks();
    test_uses_and_replace();
    CHECK(ir_type_is_int(IR_U32) && !ir_type_is_int(IR_BOOL) && ir_type_is_signed(IR_I64));
    CHECK(!ir_type_is_signed(IR_U32) && ir_type_is_float(IR_F64));
    CHECK(ir_type_size(IR_BOOL) == 1 && ir_type_size(IR_F64) == 8 && ir_type_size(IR_CELL) == 8);
    CHECK(ir_type_size(IR_PTR(IR_I32)) == 8 && ir_type_size(IR_VOID) == 0);
    CHECK(strcmp(ir_type_name(IR_PTR(IR_F32)), "ptr<f32>") == 0);
    CHECK(strcmp(ir_op_name(IR_SN_FIELD_PTR), "sn_field_ptr") == 0);
    CHECK(strcmp(ir_binop_name(IR_SHR), "shr") == 0 && strcmp(ir_unop_name(IR_ABS), "abs") == 0);
    CHECK(strcmp(ir_atomic_name(IR_ATOMIC_ACTIVATE), "activate") == 0);
    return ir_test_result("ir_builder");
}
