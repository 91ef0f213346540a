/* Offload of small hand-built kernels: the printed task sequence and each task's metadata.
 * Expected texts follow the rules of passes.h (segments, recomputed pure operands, values and
 * allocas carried through gtmp slots of 8 bytes in statement order, list tasks from the root
 * down, gc after deactivation of a pointer level), written by hand. */
#include "tests/check.h"
#include "engine/passes/passes.h"
#include "pass_util.h"

static ir_task **offload(ir_task *k, uint32_t *n)
{
    ir_task **tasks = NULL;
    char err[512];
    if (passes_offload(k, &tasks, n, err, sizeof err) != 0) {
        fprintf(stderr, "offload: %s\n", err);
        *n = 0;
        return NULL;
    }
    return tasks;
}

static void free_tasks(ir_task **t, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        ir_task_free(t[i]);
    free(t);
}

static void check_task(ir_task *t, const char *want_ir, const char *want_meta)
{
    char *p = print_norm(t);
    CHECK_STR(p, want_ir);
    free(p);
    char *m = ir_print_meta(t);
    CHECK_STR(m, want_meta);
    free(m);
}

/* y[i] = a * x[i] over [0, n): the bounds are recomputed in the prologue, no gtmp. */
static void test_range(void)
{
    ir_field_info f[2] = {dense1("x", 10), dense1("y", 10)};
    ir_type args[2] = {IR_F32, IR_I32};
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "saxpy", f, 2, args, 2);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *lo = ir_const_i32(&b, 0), *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *loop = ir_range_for(&b, lo, n, 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    ir_stmt *m = ir_binary(&b, IR_MUL, x, ir_arg(&b, IR_F32, 0));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &i), m);
    uint32_t nt = 0;
    ir_task **t = offload(k, &nt);
    CHECK_EQ(nt, 1);
    if (nt == 1) {
        CHECK_EQ(t[0]->kind, IR_TASK_RANGE_FOR);
        CHECK_EQ(t[0]->nargs, 2); /* no temporaries: no extra argument */
        CHECK_EQ(t[0]->gtmp_bytes, 0);
        check_task(t[0],
                   "task range_for \"saxpy#0\" {\n"
                   "  $0 = const i32 0\n"
                   "  $1 = arg i32 #1\n"
                   "  $2 : range_for $0 $1 parallel {\n"
                   "    $3 = loop_index i32 $2 0\n"
                   "    $4 = global_ptr ptr<f32> @x [$3]\n"
                   "    $5 = global_load f32 $4\n"
                   "    $6 = arg f32 #0\n"
                   "    $7 = mul f32 $5 $6\n"
                   "    $8 = global_ptr ptr<f32> @y [$3]\n"
                   "    $9 : global_store $8 $7\n"
                   "  }\n"
                   "}\n",
                   "meta range_for dynamic\n"
                   "  value @x: read elementwise unique\n"
                   "  value @y: write elementwise unique cover\n");
    }
    free_tasks(t, nt);
    ir_task_free(k);
}

/* A range bound loaded from a field: computed by a serial task, carried through gtmp. */
static void test_range_bound_carried(void)
{
    ir_field_info f[2] = {scalar0("s"), dense1("x", 10)};
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "fill", f, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *v = ir_global_load(&b, ir_global_ptr(&b, 0, 0, NULL));
    ir_stmt *end = ir_cast(&b, IR_I32, v);
    ir_stmt *lo = ir_const_i32(&b, 0);
    ir_stmt *loop = ir_range_for(&b, lo, end, 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    /* one statement per line: argument evaluation order is unspecified in C */
    ir_stmt *px = ir_global_ptr(&b, 1, 0, &i);
    ir_global_store(&b, px, ir_cast(&b, IR_F32, i));
    uint32_t nt = 0;
    ir_task **t = offload(k, &nt);
    CHECK_EQ(nt, 2);
    if (nt == 2) {
        for (int j = 0; j < 2; j++) {
            CHECK_EQ(t[j]->nargs, 1);
            CHECK_EQ(t[j]->arg_types[0], IR_I64);
            CHECK_EQ(t[j]->gtmp_bytes, 8);
            CHECK(gtmp_args_are(t[j], 0));
        }
        check_task(t[0],
                   "task serial \"fill#0\" gtmp=8 {\n"
                   "  $0 = global_ptr ptr<f32> @s []\n"
                   "  $1 = global_load f32 $0\n"
                   "  $2 = cast i32 $1\n"
                   "  $3 = gtmp_ptr ptr<i32> +0\n"
                   "  $4 : global_store $3 $2\n"
                   "}\n",
                   "meta serial\n"
                   "  value @s: read\n"
                   "  gtmp: write\n");
        check_task(t[1],
                   "task range_for \"fill#1\" gtmp=8 {\n"
                   "  $0 = const i32 0\n"
                   "  $1 = gtmp_ptr ptr<i32> +0\n"
                   "  $2 = global_load i32 $1\n"
                   "  $3 : range_for $0 $2 parallel {\n"
                   "    $4 = loop_index i32 $3 0\n"
                   "    $5 = global_ptr ptr<f32> @x [$4]\n"
                   "    $6 = cast f32 $4\n"
                   "    $7 : global_store $5 $6\n"
                   "  }\n"
                   "}\n",
                   "meta range_for dynamic\n"
                   "  value @x: write elementwise unique cover\n"
                   "  gtmp: read\n");
    }
    free_tasks(t, nt);
    ir_task_free(k);
}

/* serial (a value and an alloca carried) ; struct_for over a VDB-like field ; serial that
 * deactivates: list tasks before the struct_for, gc after the deactivation. */
static void test_struct(void)
{
    ir_field_info f[2] = {vdb_field("q"), scalar0("s")};
    ir_type args[1] = {IR_F32};
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "k", f, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *c0 = ir_const_i32(&b, 0);
    ir_stmt *sp = ir_global_ptr(&b, 1, 0, NULL);
    ir_stmt *v = ir_global_load(&b, sp);
    ir_stmt *acc = ir_alloca(&b, IR_F32);
    ir_store(&b, acc, v);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3] = {ir_loop_index(&b, loop, 0), ir_loop_index(&b, loop, 1),
                     ir_loop_index(&b, loop, 2)};
    ir_stmt *p = ir_global_ptr(&b, 0, 0, I);
    ir_global_store(&b, p, ir_binary(&b, IR_MUL, ir_global_load(&b, p), v));
    ir_builder_init(&b, k);
    ir_stmt *ld = ir_load(&b, acc);
    ir_stmt *u = ir_binary(&b, IR_ADD, ld, ir_const_float(&b, IR_F32, 1.0));
    ir_global_store(&b, sp, u);
    ir_stmt *z[3] = {c0, c0, c0};
    ir_field_op(&b, IR_DEACTIVATE, 0, z);
    char err[256];
    CHECK_EQ(ir_verify(k, err, sizeof err), 0);

    uint32_t nt = 0;
    ir_task **t = offload(k, &nt);
    CHECK_EQ(nt, 8);
    if (nt != 8) {
        free_tasks(t, nt);
        ir_task_free(k);
        return;
    }
    for (uint32_t j = 0; j < nt; j++) {
        CHECK_EQ(t[j]->nargs, 2);
        CHECK_EQ(t[j]->arg_types[1], IR_I64);
        CHECK_EQ(t[j]->gtmp_bytes, 16);
        CHECK(gtmp_args_are(t[j], 1));
    }
    check_task(t[0],
               "task serial \"k#0\" gtmp=16 {\n"
               "  $0 = global_ptr ptr<f32> @s []\n"
               "  $1 = global_load f32 $0\n"
               "  $2 = gtmp_ptr ptr<f32> +0\n"
               "  $3 : global_store $2 $1\n"
               "  $4 = gtmp_ptr ptr<f32> +8\n"
               "  $5 = const f32 0.0\n"
               "  $6 : global_store $4 $5\n"
               "  $7 = gtmp_ptr ptr<f32> +8\n"
               "  $8 : global_store $7 $1\n"
               "}\n",
               "meta serial\n"
               "  value @s: read\n"
               "  gtmp: write\n");
    check_task(t[1], "task clear_list \"k#1\" @q.L1 gtmp=16 {\n}\n",
               "meta clear_list @q.L1\n"
               "  list @q.L1: write\n");
    check_task(t[2], "task listgen \"k#2\" @q.L1 gtmp=16 {\n}\n",
               "meta listgen @q.L1\n"
               "  mask @q.L1: read\n"
               "  list @q.L1: write\n");
    check_task(t[3], "task clear_list \"k#3\" @q.L2 gtmp=16 {\n}\n",
               "meta clear_list @q.L2\n"
               "  list @q.L2: write\n");
    check_task(t[4], "task listgen \"k#4\" @q.L2 gtmp=16 {\n}\n",
               "meta listgen @q.L2\n"
               "  mask @q.L2: read\n"
               "  list @q.L1: read\n"
               "  list @q.L2: write\n");
    check_task(t[5],
               "task struct_for \"k#5\" @q.L2 gtmp=16 {\n"
               "  $0 = gtmp_ptr ptr<f32> +0\n"
               "  $1 = global_load f32 $0\n"
               "  $2 : struct_for @q {\n"
               "    $3 = loop_index i32 $2 0\n"
               "    $4 = loop_index i32 $2 1\n"
               "    $5 = loop_index i32 $2 2\n"
               /* q[I] at the loop index is active: no level needs activating */
               "    $6 = global_ptr ptr<f32> @q [$3 $4 $5] demoted(1,2)\n"
               "    $7 = global_load f32 $6\n"
               "    $8 = mul f32 $7 $1\n"
               "    $9 : global_store $6 $8\n"
               "  }\n"
               "}\n",
               "meta struct_for @q.L2\n"
               "  value @q: read write elementwise unique cover\n"
               "  mask @q.L1: read lookup\n"
               "  mask @q.L2: read lookup\n"
               "  list @q.L2: read\n"
               "  gtmp: read\n");
    check_task(t[6],
               "task serial \"k#6\" gtmp=16 {\n"
               "  $0 = global_ptr ptr<f32> @s []\n"
               "  $1 = const i32 0\n"
               "  $2 = gtmp_ptr ptr<f32> +8\n"
               "  $3 = global_load f32 $2\n"
               "  $4 = const f32 1.0\n"
               "  $5 = add f32 $3 $4\n"
               "  $6 : global_store $0 $5\n"
               "  $7 : deactivate @q [$1 $1 $1]\n"
               "}\n",
               "meta serial\n"
               "  value @q: write\n"
               "  value @s: write full\n"
               "  mask @q.L2: read write\n"
               "  alloc @q.L2: write\n"
               "  gtmp: read\n");
    check_task(t[7], "task gc \"k#7\" @q.L2 gtmp=16 {\n}\n",
               "meta gc @q.L2\n"
               "  mask @q.L2: read\n"
               "  alloc @q.L2: write\n");
    /* the kernel is left as it was */
    CHECK_EQ(k->nargs, 1);
    CHECK_EQ(ir_verify(k, err, sizeof err), 0);
    free_tasks(t, nt);
    ir_task_free(k);
}

/* Serial code with no effect is dropped; constant bounds stay constants (static range). */
static void test_drop_and_constant(void)
{
    ir_field_info f[1] = {dense1("x", 4)};
    ir_task *k = ir_task_new(IR_TASK_KERNEL, "c", f, 1, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *lo = ir_const_i32(&b, 2), *hi = ir_const_i32(&b, 14);
    ir_global_load(&b, ir_global_ptr(&b, 0, 0, &lo)); /* unused read: no task */
    ir_stmt *loop = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *px = ir_global_ptr(&b, 0, 0, &lo);
    ir_atomic(&b, IR_ATOMIC_ADD, px, ir_cast(&b, IR_F32, i));
    uint32_t nt = 0;
    ir_task **t = offload(k, &nt);
    CHECK_EQ(nt, 1);
    if (nt == 1)
        check_task(t[0],
                   "task range_for \"c#0\" {\n"
                   "  $0 = const i32 2\n"
                   "  $1 = const i32 14\n"
                   "  $2 : range_for $0 $1 parallel {\n"
                   "    $3 = loop_index i32 $2 0\n"
                   "    $4 = global_ptr ptr<f32> @x [$0]\n"
                   "    $5 = cast f32 $3\n"
                   "    $6 = atomic_add f32 $4 $5\n"
                   "  }\n"
                   "}\n",
                   "meta range_for [2, 14)\n"
                   "  value @x: read write atomic(add)\n");
    free_tasks(t, nt);
    ir_task_free(k);
}

static void test_errors(void)
{
    ir_field_info f[1] = {dense1("x", 4)};
    ir_task *k = ir_task_new(IR_TASK_SERIAL, "notk", f, 1, NULL, 0);
    ir_task **t = NULL;
    uint32_t nt = 7;
    char err[256] = "";
    CHECK_EQ(passes_offload(k, &t, &nt, err, sizeof err), -1);
    CHECK(strstr(err, "notk") != NULL);
    CHECK_EQ(nt, 0);
    ir_task_free(k);
}

int main(void)
{
    test_range();
    test_range_bound_carried();
    test_struct();
    test_drop_and_constant();
    test_errors();
    CHECK_DONE();
}
