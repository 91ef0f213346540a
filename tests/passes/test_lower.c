/* Access lowering, golden: the chains written out by hand from the rules in passes.h (every
 * access walks from the root; writes activate every level but demoted ones; reads never
 * activate; activate/deactivate act at the deepest (non-demoted) sparse level). */
#include "tests/check.h"
#include "engine/passes/passes.h"
#include "pass_util.h"

static void lower_and_check(ir_task *t, const char *want)
{
    char err[512];
    CHECK_EQ(passes_lower_access(t, err, sizeof err), 0);
    CHECK_EQ(ir_verify(t, err, sizeof err), 0);
    char *p = ir_print_task(t);
    CHECK_STR(p, want);
    free(p);
}

static void test_dense_range(void)
{
    ir_field_info f[2] = {dense1("x", 10), dense1("y", 10)};
    ir_type args[1] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "saxpy", f, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0);
    ir_stmt *hi = ir_const_i32(&b, 1024);
    ir_stmt *loop = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    ir_stmt *m = ir_binary(&b, IR_MUL, x, ir_arg(&b, IR_F32, 0));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &i), m);
    lower_and_check(t, "task range_for \"saxpy\" {\n"
                       "  $0 = const i32 0\n"
                       "  $1 = const i32 1024\n"
                       "  $2 : range_for $0 $1 parallel {\n"
                       "    $3 = loop_index i32 $2 0\n"
                       "    $4 = sn_root cell @x\n"
                       "    $5 = sn_child cell @x.L1 $4\n"
                       "    $6 = sn_index i32 @x.L1 [$3]\n"
                       "    $7 = sn_field_ptr ptr<f32> @x $5 $6\n"
                       "    $8 = global_load f32 $7\n"
                       "    $9 = arg f32 #0\n"
                       "    $10 = mul f32 $8 $9\n"
                       "    $11 = sn_root cell @y\n"
                       "    $12 = sn_child cell @y.L1 $11\n"
                       "    $13 = sn_index i32 @y.L1 [$3]\n"
                       "    $14 = sn_field_ptr ptr<f32> @y $12 $13 activate\n"
                       "    $15 : global_store $14 $10\n"
                       "  }\n"
                       "}\n");
    ir_task_free(t);
}

static void test_vdb_ops(void)
{
    ir_field_info f[1] = {vdb_field("q")};
    ir_type args[3] = {IR_I32, IR_I32, IR_I32};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "ops", f, 1, args, 3);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_arg(&b, IR_I32, (uint32_t)a);
    ir_stmt *v = ir_global_load(&b, ir_global_ptr(&b, 0, 0, I));
    ir_stmt *w = ir_global_ptr(&b, 0, 0, I);
    w->demoted = 1u << 1;
    ir_global_store(&b, w, v);
    ir_field_op(&b, IR_IS_ACTIVE, 0, I);
    ir_field_op(&b, IR_ACTIVATE, 0, I);
    ir_field_op(&b, IR_DEACTIVATE, 0, I);
    lower_and_check(t, "task serial \"ops\" {\n"
                       "  $0 = arg i32 #0\n"
                       "  $1 = arg i32 #1\n"
                       "  $2 = arg i32 #2\n"
                       /* read: no activation */
                       "  $3 = sn_root cell @q\n"
                       "  $4 = sn_child cell @q.L1 $3\n"
                       "  $5 = sn_index i32 @q.L1 [$0 $1 $2]\n"
                       "  $6 = sn_lookup cell @q.L1 $4 $5\n"
                       "  $7 = sn_child cell @q.L2 $6\n"
                       "  $8 = sn_index i32 @q.L2 [$0 $1 $2]\n"
                       "  $9 = sn_lookup cell @q.L2 $7 $8\n"
                       "  $10 = sn_child cell @q.L3 $9\n"
                       "  $11 = sn_index i32 @q.L3 [$0 $1 $2]\n"
                       "  $12 = sn_field_ptr ptr<f32> @q $10 $11\n"
                       "  $13 = global_load f32 $12\n"
                       /* write with level 1 demoted */
                       "  $14 = sn_root cell @q\n"
                       "  $15 = sn_child cell @q.L1 $14\n"
                       "  $16 = sn_index i32 @q.L1 [$0 $1 $2]\n"
                       "  $17 = sn_lookup cell @q.L1 $15 $16\n"
                       "  $18 = sn_child cell @q.L2 $17\n"
                       "  $19 = sn_index i32 @q.L2 [$0 $1 $2]\n"
                       "  $20 = sn_lookup cell @q.L2 $18 $19 activate\n"
                       "  $21 = sn_child cell @q.L3 $20\n"
                       "  $22 = sn_index i32 @q.L3 [$0 $1 $2]\n"
                       "  $23 = sn_field_ptr ptr<f32> @q $21 $22 activate\n"
                       "  $24 : global_store $23 $13\n"
                       /* is_active: the whole path, no activation */
                       "  $25 = sn_root cell @q\n"
                       "  $26 = sn_child cell @q.L1 $25\n"
                       "  $27 = sn_index i32 @q.L1 [$0 $1 $2]\n"
                       "  $28 = sn_lookup cell @q.L1 $26 $27\n"
                       "  $29 = sn_child cell @q.L2 $28\n"
                       "  $30 = sn_index i32 @q.L2 [$0 $1 $2]\n"
                       "  $31 = sn_lookup cell @q.L2 $29 $30\n"
                       "  $32 = sn_child cell @q.L3 $31\n"
                       "  $33 = sn_index i32 @q.L3 [$0 $1 $2]\n"
                       "  $34 = sn_is_active bool @q.L3 $32 $33\n"
                       /* activate: down to the deepest sparse level (2; the leaf is dense) */
                       "  $35 = sn_root cell @q\n"
                       "  $36 = sn_child cell @q.L1 $35\n"
                       "  $37 = sn_index i32 @q.L1 [$0 $1 $2]\n"
                       "  $38 = sn_lookup cell @q.L1 $36 $37 activate\n"
                       "  $39 = sn_child cell @q.L2 $38\n"
                       "  $40 = sn_index i32 @q.L2 [$0 $1 $2]\n"
                       "  $41 : sn_activate @q.L2 $39 $40\n"
                       /* deactivate: the deepest sparse level, reached without activating */
                       "  $42 = sn_root cell @q\n"
                       "  $43 = sn_child cell @q.L1 $42\n"
                       "  $44 = sn_index i32 @q.L1 [$0 $1 $2]\n"
                       "  $45 = sn_lookup cell @q.L1 $43 $44\n"
                       "  $46 = sn_child cell @q.L2 $45\n"
                       "  $47 = sn_index i32 @q.L2 [$0 $1 $2]\n"
                       "  $48 : sn_deactivate @q.L2 $46 $47\n"
                       "}\n");
    ir_task_free(t);
}

/* Bitmasked leaf: activation acts at the leaf; a demoted activation of every sparse level
 * disappears; a 0-D read has an empty index; deactivating a dense-only field is a no-op. */
static void test_bitmasked_and_0d(void)
{
    static const int k[] = {IR_KIND_POINTER, IR_KIND_BITMASKED};
    static const int s[] = {4, 5};
    ir_field_info f[3] = {mk_field("m", 1, 1, 2, k, s), scalar0("s"), dense1("d", 3)};
    ir_type args[1] = {IR_I32};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "bm", f, 3, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *i = ir_arg(&b, IR_I32, 0);
    ir_field_op(&b, IR_ACTIVATE, 0, &i);
    ir_stmt *a = ir_field_op(&b, IR_ACTIVATE, 0, &i);
    a->demoted = (1u << 1) | (1u << 2);
    ir_global_load(&b, ir_global_ptr(&b, 1, 0, NULL));
    ir_field_op(&b, IR_DEACTIVATE, 2, &i);
    lower_and_check(t, "task serial \"bm\" {\n"
                       "  $0 = arg i32 #0\n"
                       "  $1 = sn_root cell @m\n"
                       "  $2 = sn_child cell @m.L1 $1\n"
                       "  $3 = sn_index i32 @m.L1 [$0]\n"
                       "  $4 = sn_lookup cell @m.L1 $2 $3 activate\n"
                       "  $5 = sn_child cell @m.L2 $4\n"
                       "  $6 = sn_index i32 @m.L2 [$0]\n"
                       "  $7 : sn_activate @m.L2 $5 $6\n"
                       "  $8 = sn_root cell @s\n"
                       "  $9 = sn_child cell @s.L1 $8\n"
                       "  $10 = sn_index i32 @s.L1 []\n"
                       "  $11 = sn_field_ptr ptr<f32> @s $9 $10\n"
                       "  $12 = global_load f32 $11\n"
                       "}\n");
    ir_task_free(t);
}

int main(void)
{
    test_dense_range();
    test_vdb_ops();
    test_bitmasked_and_0d();
    CHECK_DONE();
}
