/* The verifier: a valid task passes; each broken task is rejected with a message naming the
 * task, the statement as printed ($N) with its op, and the rule. */
#include "ir_test.h"

static void expect_reject(int line, ir_task *t, const char *where, const char *why)
{
    char err[512] = "";
    int rc = ir_verify(t, err, sizeof err);
    if (rc != -1 || !strstr(err, where) || !strstr(err, why) || !strstr(err, "task '")) {
        fprintf(stderr, "line %d: rc %d, message \"%s\"; wanted \"%s\" and \"%s\"\n", line, rc,
                err, where, why);
        check_failures++;
    }
    ir_task_free(t);
}
#define REJECT(t, where, why) expect_reject(__LINE__, (t), (where), (why))

static ir_field_info fields[2];
static const ir_type args1[] = {IR_F32};

static ir_task *kernel(ir_builder *b)
{
    ir_task *t = ir_task_new(IR_TASK_KERNEL, "k", fields, 2, args1, 1);
    ir_builder_init(b, t);
    return t;
}

static void test_valid(void)
{
    ir_builder b;
    ir_task *t = kernel(&b);
    ir_stmt *lo = ir_const_i32(&b, 0), *hi = ir_const_i32(&b, 8);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *i = ir_loop_index(&b, rf, 0);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, &i);
    ir_global_store(&b, p, ir_arg(&b, IR_F32, 0));
    ir_stmt *w = ir_while(&b);
    ir_builder_at_end(&b, w->body);
    ir_break(&b, w);
    char err[256] = "x";
    CHECK(ir_verify(t, err, sizeof err) == 0 && err[0] == 0);
    ir_task_free(t);
}

static void test_rules(void)
{
    ir_builder b;
    ir_task *t;
    ir_stmt *a, *c, *s, *x, *rf;

    /* 1. an operand defined later in the block */
    t = kernel(&b);
    a = ir_const_i32(&b, 1);
    c = ir_const_i32(&b, 2);
    s = ir_binary(&b, IR_ADD, a, c);
    ir_unlink(c);
    ir_insert_after(s, c);
    REJECT(t, "$1 (binary)", "used before its definition");

    /* 2. a value of a nested block used after the block */
    t = kernel(&b);
    ir_stmt *iff = ir_if(&b, ir_const_int(&b, IR_BOOL, 1));
    ir_builder_at_end(&b, iff->body);
    x = ir_const_i32(&b, 3);
    ir_builder_init(&b, t);
    ir_unary(&b, IR_NEG, x);
    REJECT(t, "$3 (unary)", "does not dominate");

    /* 3. binary operands of different types */
    t = kernel(&b);
    ir_binary(&b, IR_ADD, ir_const_i32(&b, 1), ir_const_float(&b, IR_F32, 1.0));
    REJECT(t, "$2 (binary)", "type mismatch");

    /* 4. a store through something that is not an alloca */
    t = kernel(&b);
    ir_store(&b, ir_const_i32(&b, 1), ir_const_i32(&b, 2));
    REJECT(t, "$2 (store)", "not an alloca");

    /* 5. a loop index after its loop */
    t = kernel(&b);
    rf = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 4), 0);
    ir_loop_index(&b, rf, 0);
    REJECT(t, "$3 (loop_index)", "does not enclose");

    /* 6. break out of a parallel loop */
    t = kernel(&b);
    rf = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 4), 1);
    ir_builder_at_end(&b, rf->body);
    ir_break(&b, rf);
    REJECT(t, "$3 (break)", "break out of a parallel loop");

    /* 7. a field slot the task does not have */
    t = kernel(&b);
    a = ir_const_i32(&b, 0);
    ir_global_ptr(&b, 0, 0, &a)->field = 5;
    REJECT(t, "$1 (global_ptr)", "field slot 5 of 2");

    /* 8. a level outside the field's chain */
    t = kernel(&b);
    ir_sn_child(&b, 1, 4, ir_sn_root(&b, 1));
    REJECT(t, "$1 (sn_child)", "level 4 outside 1..3");

    /* 9. a parallel loop inside a serial one */
    t = kernel(&b);
    a = ir_const_i32(&b, 0);
    c = ir_const_i32(&b, 4);
    rf = ir_range_for(&b, a, c, 0);
    ir_builder_at_end(&b, rf->body);
    ir_range_for(&b, a, c, 1);
    REJECT(t, "$3 (range_for)", "parallel loop outside");

    /* 10. a type left to infer */
    t = kernel(&b);
    ir_const_i32(&b, 1)->ty = IR_TYPE_INFER;
    REJECT(t, "$0 (const)", "not inferred");

    /* 11. an argument the kernel does not have */
    t = kernel(&b);
    ir_arg(&b, IR_F32, 3);
    REJECT(t, "$0 (arg)", "argument #3 of 1");

    /* 12. an if on an integer */
    t = kernel(&b);
    ir_if(&b, ir_const_i32(&b, 1));
    REJECT(t, "$1 (if)", "condition is i32");

    /* 13. a component the field does not have */
    t = kernel(&b);
    a = ir_const_i32(&b, 0);
    ir_global_ptr(&b, 0, 1, &a);
    REJECT(t, "$1 (global_ptr)", "component 1 of a 1-component field");

    /* 14. a temporary outside the buffer */
    t = kernel(&b);
    t->gtmp_bytes = 4;
    ir_gtmp_ptr(&b, IR_F64, 0);
    REJECT(t, "$0 (gtmp_ptr)", "outside 4 bytes");

    /* 15. break leaving an outer loop */
    t = kernel(&b);
    ir_stmt *w1 = ir_while(&b);
    ir_builder_at_end(&b, w1->body);
    ir_stmt *w2 = ir_while(&b);
    ir_builder_at_end(&b, w2->body);
    ir_break(&b, w1);
    REJECT(t, "$2 (break)", "other than the innermost");

    /* 16. a range_for task that does not end in its loop */
    t = ir_task_new(IR_TASK_RANGE_FOR, "k#1", fields, 2, args1, 1);
    ir_builder_init(&b, t);
    ir_const_i32(&b, 0);
    REJECT(t, "$0 (const)", "must end in its parallel loop");

    /* 17. a loop task's prologue with an effect */
    t = ir_task_new(IR_TASK_RANGE_FOR, "k#1", fields, 2, args1, 1);
    ir_builder_init(&b, t);
    a = ir_const_i32(&b, 0);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, &a);
    ir_global_store(&b, p, ir_arg(&b, IR_F32, 0));
    ir_range_for(&b, a, a, 1);
    REJECT(t, "$3 (global_store)", "prologue");

    /* 18. broken links: a statement claiming another block */
    t = kernel(&b);
    a = ir_const_i32(&b, 0);
    ir_const_i32(&b, 1)->parent = ir_block_new(t, NULL);
    REJECT(t, "$1 (const)", "broken block links");

    /* 19. a load whose type is not the alloca's */
    t = kernel(&b);
    ir_load(&b, ir_alloca(&b, IR_I32))->ty = IR_F32;
    REJECT(t, "$1 (load)", "type mismatch");

    /* 20. a struct_for over a 0-D field */
    ir_field_info z[1] = {scalar0("s")};
    t = ir_task_new(IR_TASK_KERNEL, "k", z, 1, NULL, 0);
    ir_builder_init(&b, t);
    ir_struct_for(&b, 0);
    REJECT(t, "$0 (struct_for)", "0-D field");
}

int main(void)
{
    fields[0] = dense1("a");
    fields[1] = sparse3("v", 1);
    test_valid();
    test_rules();
    return ir_test_result("ir_verify");
}
