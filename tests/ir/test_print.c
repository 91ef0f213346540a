/* The printed form against text written by hand from docs/ir.md ("Printed form"). */
#include "ir_test.h"

#include <math.h>

static void test_kernel(void)
{
    ir_field_info f[2] = {dense1("a"), sparse3("v", 3)};
    ir_type args[] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_KERNEL, "k", f, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0), *hi = ir_const_i32(&b, 16);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *i = ir_loop_index(&b, rf, 0);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, &i);
    ir_stmt *x = ir_global_load(&b, p);
    ir_stmt *m = ir_binary(&b, IR_MUL, x, ir_arg(&b, IR_F32, 0));
    ir_global_store(&b, p, m);
    ir_builder_init(&b, t);
    ir_stmt *cond = ir_const_int(&b, IR_BOOL, 1);
    ir_stmt *iff = ir_if(&b, cond);
    ir_builder_at_end(&b, iff->body);
    ir_const_float(&b, IR_F32, 0.5);
    ir_const_float(&b, IR_F32, 0.1);
    ir_builder_at_end(&b, iff->els);
    ir_const_float(&b, IR_F64, -INFINITY);
    ir_const_float(&b, IR_F64, 1e30);
    ir_const_float(&b, IR_F64, 2.0);
    ir_builder_init(&b, t);
    ir_stmt *sf = ir_struct_for(&b, 1);
    ir_builder_at_end(&b, sf->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, sf, (uint32_t)a);
    ir_stmt *vp = ir_global_ptr(&b, 1, 2, I);
    vp->demoted = 0x6;
    ir_atomic(&b, IR_ATOMIC_ADD, vp, ir_const_float(&b, IR_F32, 1.0));
    ir_field_op(&b, IR_DEACTIVATE, 1, I);
    ir_stmt *w = ir_while(&b);
    ir_builder_at_end(&b, w->body);
    ir_break(&b, w);
    ir_builder_init(&b, t);
    ir_const_int(&b, IR_U32, 4294967295u);
    ir_const_int(&b, IR_I64, -5);
    ir_const_int(&b, IR_BOOL, 0);
    ir_stmt *al = ir_alloca(&b, IR_I32);
    ir_store(&b, al, lo);
    ir_load(&b, al);
    ir_cast(&b, IR_F64, hi);
    ir_unary(&b, IR_NEG, hi);
    must_verify(t, "print kernel");
    CHECK_TEXT(ir_print_task(t),
               "task kernel \"k\" {\n"
               "  $0 = const i32 0\n"
               "  $1 = const i32 16\n"
               "  $2 : range_for $0 $1 parallel {\n"
               "    $3 = loop_index i32 $2 0\n"
               "    $4 = global_ptr ptr<f32> @a [$3]\n"
               "    $5 = global_load f32 $4\n"
               "    $6 = arg f32 #0\n"
               "    $7 = mul f32 $5 $6\n"
               "    $8 : global_store $4 $7\n"
               "  }\n"
               "  $9 = const bool true\n"
               "  $10 : if $9 {\n"
               "    $11 = const f32 0.5\n"
               "    $12 = const f32 0.1\n"
               "  } else {\n"
               "    $13 = const f64 -inf\n"
               "    $14 = const f64 1e+30\n"
               "    $15 = const f64 2.0\n"
               "  }\n"
               "  $16 : struct_for @v {\n"
               "    $17 = loop_index i32 $16 0\n"
               "    $18 = loop_index i32 $16 1\n"
               "    $19 = loop_index i32 $16 2\n"
               "    $20 = global_ptr ptr<f32> @v.2 [$17 $18 $19] demoted(1,2)\n"
               "    $21 = const f32 1.0\n"
               "    $22 = atomic_add f32 $20 $21\n"
               "    $23 : deactivate @v [$17 $18 $19]\n"
               "    $24 : while {\n"
               "      $25 : break $24\n"
               "    }\n"
               "  }\n"
               "  $26 = const u32 4294967295\n"
               "  $27 = const i64 -5\n"
               "  $28 = const bool false\n"
               "  $29 = alloca ptr<i32>\n"
               "  $30 : store $29 $0\n"
               "  $31 = load i32 $29\n"
               "  $32 = cast f64 $1\n"
               "  $33 = neg i32 $1\n"
               "}\n");
    ir_task_free(t);
}

/* A lowered struct_for task with temporaries: sn_* statements and the task header. */
static void test_lowered(void)
{
    ir_field_info f = sparse3("q", 1);
    ir_type args[] = {IR_I64};
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "k#2", &f, 1, args, 1);
    t->field = 0;
    t->level = 2;
    t->gtmp_bytes = 8;
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *g = ir_gtmp_ptr(&b, IR_F32, 4);
    ir_stmt *sf = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, sf->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, sf, (uint32_t)a);
    ir_stmt *r = ir_sn_root(&b, 0);
    ir_stmt *c1 = ir_sn_child(&b, 0, 1, r);
    ir_stmt *i1 = ir_sn_index(&b, 0, 1, I);
    ir_stmt *l1 = ir_sn_lookup(&b, 0, 1, 1, c1, i1);
    ir_stmt *fp = ir_sn_field_ptr(&b, 0, 0, 0, l1, i1);
    ir_stmt *v = ir_global_load(&b, g);
    ir_global_store(&b, fp, v);
    ir_sn_op(&b, IR_SN_IS_ACTIVE, 0, 1, c1, i1);
    ir_sn_op(&b, IR_SN_DEACTIVATE, 0, 3, c1, i1);
    must_verify(t, "print lowered");
    CHECK_TEXT(ir_print_task(t),
               "task struct_for \"k#2\" @q.L2 gtmp=8 {\n"
               "  $0 = gtmp_ptr ptr<f32> +4\n"
               "  $1 : struct_for @q {\n"
               "    $2 = loop_index i32 $1 0\n"
               "    $3 = loop_index i32 $1 1\n"
               "    $4 = loop_index i32 $1 2\n"
               "    $5 = sn_root cell @q\n"
               "    $6 = sn_child cell @q.L1 $5\n"
               "    $7 = sn_index i32 @q.L1 [$2 $3 $4]\n"
               "    $8 = sn_lookup cell @q.L1 $6 $7 activate\n"
               "    $9 = sn_field_ptr ptr<f32> @q $8 $7\n"
               "    $10 = global_load f32 $0\n"
               "    $11 : global_store $9 $10\n"
               "    $12 = sn_is_active bool @q.L1 $6 $7\n"
               "    $13 : sn_deactivate @q.L3 $6 $7\n"
               "  }\n"
               "}\n");
    ir_task_free(t);
}

static void test_empty_and_meta_none(void)
{
    ir_field_info f = sparse3("q", 1);
    ir_task *t = ir_task_new(IR_TASK_LISTGEN, "lg", &f, 1, NULL, 0);
    t->field = 0;
    t->level = 1;
    CHECK_TEXT(ir_print_task(t), "task listgen \"lg\" @q.L1 {\n}\n");
    CHECK_TEXT(ir_print_meta(t), "meta: none\n");
    ir_task_free(t);
}

int main(void)
{
    test_kernel();
    test_lowered();
    test_empty_and_meta_none();
    return ir_test_result("ir_print");
}
