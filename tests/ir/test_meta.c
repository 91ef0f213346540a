/* Task metadata (ir.h, "metadata"): states and flags of small hand-built tasks, expected from
 * the flag definitions: elementwise/unique for f[I] at exactly the loop index, cover for an
 * unconditional element-wise store, atomic for updates whose old value is unused, full for a
 * serial unconditional store of a 0-D field never read, index_only for unconditional
 * activations at loop-index positions. */
#include "ir_test.h"

static uint32_t flags_of(ir_task *t, int kind, uint32_t field, uint32_t level)
{
    const ir_access *a = ir_meta_find(&t->meta, kind, field, level);
    return a ? a->flags : 0xdeadu;
}

/* struct_for over q (pointer.pointer.dense): q[I] = q[I] * 2 */
static void test_struct_for_scale(void)
{
    ir_field_info f = sparse3("q", 1);
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "s", &f, 1, NULL, 0);
    t->field = 0;
    t->level = 2;
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *sf = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, sf->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, sf, (uint32_t)a);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, I);
    ir_stmt *x = ir_global_load(&b, p);
    ir_stmt *two = ir_const_float(&b, IR_F32, 2.0);
    ir_global_store(&b, p, ir_binary(&b, IR_MUL, x, two));
    must_verify(t, "struct_for scale");
    CHECK(ir_task_compute_meta(t) == 0 && t->has_meta);
    CHECK(t->meta.kind == IR_TASK_STRUCT_FOR && t->meta.field == 0 && t->meta.level == 2);
    CHECK(flags_of(t, IR_STATE_VALUE, 0, 0) == (IR_ACC_READ | IR_ACC_WRITE | IR_ACC_ELEMENTWISE |
                                                IR_ACC_UNIQUE | IR_ACC_COVER));
    /* the load reads the masks to find the value (lookup: nothing asks whether a cell is
     * active), the store activates at loop-index positions unconditionally: at the loop
     * index itself, in every iteration */
    const uint32_t act = IR_ACC_READ | IR_ACC_WRITE | IR_ACC_INDEX_ONLY | IR_ACC_LOOKUP |
                         IR_ACC_AT_INDEX | IR_ACC_AT_EVERY_INDEX;
    CHECK(flags_of(t, IR_STATE_MASK, 0, 1) == act);
    CHECK(flags_of(t, IR_STATE_MASK, 0, 2) == act);
    CHECK(!ir_meta_find(&t->meta, IR_STATE_MASK, 0, 3)); /* dense leaf: no mask */
    CHECK(flags_of(t, IR_STATE_LIST, 0, 2) == IR_ACC_READ);
    CHECK(flags_of(t, IR_STATE_ALLOC, 0, 1) == (IR_ACC_WRITE | IR_ACC_ATOMIC));
    CHECK(ir_meta_find(&t->meta, IR_STATE_ALLOC, 0, 1)->atomic_op == IR_ATOMIC_ACTIVATE);
    CHECK(!ir_meta_find(&t->meta, IR_STATE_GTMP, 0, 0));
    CHECK_TEXT(ir_print_meta(t), "meta struct_for @q.L2\n"
                                 "  value @q: read write elementwise unique cover\n"
                                 "  mask @q.L1: read write index_only lookup at_index "
                                 "at_every_index\n"
                                 "  mask @q.L2: read write index_only lookup at_index "
                                 "at_every_index\n"
                                 "  list @q.L2: read\n"
                                 "  alloc @q.L1: write atomic(activate)\n"
                                 "  alloc @q.L2: write atomic(activate)\n");
    ir_task_free(t);
}

/* range_for [0, 1024): s[] += a[i] (atomic, old value unused); b[i + 1] = a[i] under an if */
static void test_range_for_reduce(void)
{
    ir_field_info f[3] = {dense1("a"), scalar0("s"), dense1("b")};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "r", f, 3, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0), *hi = ir_const_i32(&b, 1024);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *i = ir_loop_index(&b, rf, 0);
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    ir_atomic(&b, IR_ATOMIC_ADD, ir_global_ptr(&b, 1, 0, NULL), x);
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_GT, x, ir_const_float(&b, IR_F32, 0.0)));
    ir_builder_at_end(&b, iff->body);
    ir_stmt *i1 = ir_binary(&b, IR_ADD, i, ir_const_i32(&b, 1));
    ir_global_store(&b, ir_global_ptr(&b, 2, 0, &i1), x);
    must_verify(t, "range_for reduce");
    CHECK(ir_task_compute_meta(t) == 0);
    CHECK(t->meta.begin == 0 && t->meta.end == 1024 && !(t->meta.flags & IR_TASKF_DYNAMIC_RANGE));
    CHECK(flags_of(t, IR_STATE_VALUE, 0, 0) == (IR_ACC_READ | IR_ACC_ELEMENTWISE | IR_ACC_UNIQUE));
    CHECK(flags_of(t, IR_STATE_VALUE, 1, 0) == (IR_ACC_READ | IR_ACC_WRITE | IR_ACC_ATOMIC));
    CHECK(ir_meta_find(&t->meta, IR_STATE_VALUE, 1, 0)->atomic_op == IR_ATOMIC_ADD);
    CHECK(flags_of(t, IR_STATE_VALUE, 2, 0) == IR_ACC_WRITE); /* offset index, conditional */
    CHECK(t->meta.naccess == 3); /* dense fields have no masks, lists or allocators */
    CHECK_TEXT(ir_print_meta(t), "meta range_for [0, 1024)\n"
                                 "  value @a: read elementwise unique\n"
                                 "  value @s: read write atomic(add)\n"
                                 "  value @b: write\n");
    ir_task_free(t);
}

/* an atomic whose old value is used is not "atomic"; a store at the index but under an if
 * is element-wise without cover; a dynamic range is flagged */
static void test_range_for_conditional(void)
{
    ir_field_info f[2] = {dense1("a"), dense1("c")};
    ir_type args[] = {IR_I32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, "r", f, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0), *hi = ir_arg(&b, IR_I32, 0);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *i = ir_loop_index(&b, rf, 0);
    ir_stmt *pa = ir_global_ptr(&b, 0, 0, &i);
    ir_stmt *old = ir_atomic(&b, IR_ATOMIC_MAX, pa, ir_const_float(&b, IR_F32, 1.0));
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_LT, old, ir_const_float(&b, IR_F32, 5.0)));
    ir_builder_at_end(&b, iff->body);
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &i), old);
    must_verify(t, "range_for conditional");
    CHECK(ir_task_compute_meta(t) == 0);
    CHECK(t->meta.flags & IR_TASKF_DYNAMIC_RANGE);
    CHECK(flags_of(t, IR_STATE_VALUE, 0, 0) ==
          (IR_ACC_READ | IR_ACC_WRITE | IR_ACC_ELEMENTWISE | IR_ACC_UNIQUE));
    CHECK(flags_of(t, IR_STATE_VALUE, 1, 0) ==
          (IR_ACC_WRITE | IR_ACC_ELEMENTWISE | IR_ACC_UNIQUE));
    ir_task_free(t);
}

/* serial: s = 3 (full); s2 = s2 + 1 (read, not full); a bitmasked field activated at an
 * argument-dependent index (not index_only) */
static void test_serial(void)
{
    ir_field_info f[3] = {scalar0("s"), scalar0("s2"), bitmasked3("m")};
    ir_type args[] = {IR_I32};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "z", f, 3, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, NULL), ir_const_float(&b, IR_F32, 3.0));
    ir_stmt *p2 = ir_global_ptr(&b, 1, 0, NULL);
    ir_stmt *v = ir_global_load(&b, p2);
    ir_global_store(&b, p2, ir_binary(&b, IR_ADD, v, ir_const_float(&b, IR_F32, 1.0)));
    ir_stmt *k = ir_arg(&b, IR_I32, 0);
    ir_stmt *idx[3] = {k, k, k};
    ir_field_op(&b, IR_ACTIVATE, 2, idx);
    must_verify(t, "serial");
    CHECK(ir_task_compute_meta(t) == 0 && t->meta.kind == IR_TASK_SERIAL);
    CHECK(flags_of(t, IR_STATE_VALUE, 0, 0) == (IR_ACC_WRITE | IR_ACC_FULL));
    CHECK(flags_of(t, IR_STATE_VALUE, 1, 0) == (IR_ACC_READ | IR_ACC_WRITE));
    /* activation only: the masks are written without being read; at an argument's index,
     * not at a loop index (a serial task has none) */
    CHECK(flags_of(t, IR_STATE_MASK, 2, 1) == (IR_ACC_WRITE | IR_ACC_ATOMIC | IR_ACC_LOOKUP));
    CHECK(flags_of(t, IR_STATE_MASK, 2, 2) == (IR_ACC_WRITE | IR_ACC_ATOMIC | IR_ACC_LOOKUP));
    CHECK(flags_of(t, IR_STATE_ALLOC, 2, 1) == (IR_ACC_WRITE | IR_ACC_ATOMIC));
    CHECK(!ir_meta_find(&t->meta, IR_STATE_ALLOC, 2, 2)); /* bitmasked: no allocator */
    CHECK(!ir_meta_find(&t->meta, IR_STATE_VALUE, 2, 0)); /* activation is not a value access */
    ir_task_free(t);
}

/* deactivation reads and writes the masks it touches; gtmp accesses are one state; list
 * tasks: listgen reads the parent list and the level's mask and writes its list */
static void test_deactivate_gtmp_listgen(void)
{
    ir_field_info f = bitmasked3("m");
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, "d", &f, 1, NULL, 0);
    t->field = 0;
    t->level = 1;
    t->gtmp_bytes = 4;
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *g = ir_gtmp_ptr(&b, IR_F32, 0);
    ir_stmt *sf = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, sf->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, sf, (uint32_t)a);
    ir_field_op(&b, IR_DEACTIVATE, 0, I);
    ir_atomic(&b, IR_ATOMIC_ADD, g, ir_const_float(&b, IR_F32, 1.0));
    must_verify(t, "deactivate");
    CHECK(ir_task_compute_meta(t) == 0);
    CHECK(flags_of(t, IR_STATE_MASK, 0, 2) == (IR_ACC_READ | IR_ACC_WRITE));
    CHECK(flags_of(t, IR_STATE_GTMP, 0, 0) == (IR_ACC_READ | IR_ACC_WRITE));
    CHECK(flags_of(t, IR_STATE_LIST, 0, 1) == IR_ACC_READ);
    ir_task_free(t);

    ir_field_info q = sparse3("q", 1);
    t = ir_task_new(IR_TASK_LISTGEN, "lg", &q, 1, NULL, 0);
    t->field = 0;
    t->level = 2;
    CHECK(ir_task_compute_meta(t) == 0);
    CHECK_TEXT(ir_print_meta(t), "meta listgen @q.L2\n"
                                 "  mask @q.L2: read\n"
                                 "  list @q.L1: read\n"
                                 "  list @q.L2: write\n");
    ir_task_free(t);

    /* a task touching no state at all (metadata with no access) */
    t = ir_task_new(IR_TASK_SERIAL, "empty", NULL, 0, NULL, 0);
    CHECK(ir_task_compute_meta(t) == 0 && t->meta.naccess == 0 && t->has_meta);
    CHECK_TEXT(ir_print_meta(t), "meta serial\n");
    ir_task_free(t);
}

/* A struct_for task over slot 0 (a sparse3 field, leaf list at level 2) with the builder at
 * the end of the loop body and the three loop indices in I. */
static ir_task *struct_for_task(const char *name, ir_field_info *f, uint32_t n, ir_builder *b,
                                ir_stmt **loop, ir_stmt *I[3])
{
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, name, f, n, NULL, 0);
    t->field = 0;
    t->level = 2;
    ir_builder_init(b, t);
    *loop = ir_struct_for(b, 0);
    ir_builder_at_end(b, (*loop)->body);
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(b, *loop, (uint32_t)a);
    return t;
}

/* struct_for over q: r[I] = r[I] + 1 where is_active(r, I) — an activity query: the mask is
 * not read for values alone, so r's masks are not lookup (fusion must not interleave another
 * task's activations of r with this query); q is only iterated */
static void test_query_is_not_lookup(void)
{
    ir_field_info f[2] = {sparse3("q", 1), sparse3("r", 1)};
    ir_builder b;
    ir_stmt *sf, *I[3];
    ir_task *t = struct_for_task("a", f, 2, &b, &sf, I);
    ir_stmt *iff = ir_if(&b, ir_field_op(&b, IR_IS_ACTIVE, 1, I));
    ir_builder_at_end(&b, iff->body);
    ir_stmt *p = ir_global_ptr(&b, 1, 0, I);
    ir_global_store(&b, p, ir_binary(&b, IR_ADD, ir_global_load(&b, p),
                                     ir_const_float(&b, IR_F32, 1.0)));
    must_verify(t, "query");
    CHECK(ir_task_compute_meta(t) == 0);
    CHECK(!(flags_of(t, IR_STATE_MASK, 1, 1) & IR_ACC_LOOKUP));
    CHECK(!(flags_of(t, IR_STATE_MASK, 1, 2) & IR_ACC_LOOKUP));
    CHECK(flags_of(t, IR_STATE_MASK, 1, 2) & IR_ACC_READ);
    ir_task_free(t);
}

/* struct_for over q: r[I] = 1 under `if (I.x % 2 == 0)` activates cells decided by the loop
 * index alone (index_only); s[I] = 1 under `if (q[I] > 0)` depends on a loaded value (not).
 * Both activate only at the loop index (at_index), neither in every iteration; u[I + 1] = 1
 * unconditionally is index_only and activates in every iteration, but off the index. */
static void test_index_decided_if(void)
{
    ir_field_info f[4] = {sparse3("q", 1), sparse3("r", 1), sparse3("s", 1), sparse3("u", 1)};
    ir_builder b;
    ir_stmt *sf, *I[3];
    ir_task *t = struct_for_task("c", f, 4, &b, &sf, I);
    ir_stmt *one = ir_const_float(&b, IR_F32, 1.0);
    ir_stmt *even = ir_binary(&b, IR_EQ, ir_binary(&b, IR_MOD, I[0], ir_const_i32(&b, 2)),
                              ir_const_i32(&b, 0));
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, I));
    ir_stmt *pos = ir_binary(&b, IR_GT, x, ir_const_float(&b, IR_F32, 0.0));
    ir_stmt *i1 = ir_if(&b, even);
    ir_builder_at_end(&b, i1->body);
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, I), one);
    ir_builder_at_end(&b, sf->body);
    ir_stmt *i2 = ir_if(&b, pos);
    ir_builder_at_end(&b, i2->body);
    ir_global_store(&b, ir_global_ptr(&b, 2, 0, I), one);
    ir_builder_at_end(&b, sf->body);
    ir_stmt *J[3] = {ir_binary(&b, IR_ADD, I[0], ir_const_i32(&b, 1)), I[1], I[2]};
    ir_global_store(&b, ir_global_ptr(&b, 3, 0, J), one);
    must_verify(t, "index decided");
    CHECK(ir_task_compute_meta(t) == 0);
    CHECK(flags_of(t, IR_STATE_MASK, 1, 1) & IR_ACC_INDEX_ONLY);
    CHECK(flags_of(t, IR_STATE_MASK, 1, 2) & IR_ACC_INDEX_ONLY);
    CHECK(!(flags_of(t, IR_STATE_MASK, 2, 1) & IR_ACC_INDEX_ONLY));
    CHECK(!(flags_of(t, IR_STATE_MASK, 2, 2) & IR_ACC_INDEX_ONLY));
    for (uint32_t fi = 1; fi <= 2; fi++)
        for (uint32_t l = 1; l <= 2; l++) {
            CHECK(flags_of(t, IR_STATE_MASK, fi, l) & IR_ACC_AT_INDEX);
            CHECK(!(flags_of(t, IR_STATE_MASK, fi, l) & IR_ACC_AT_EVERY_INDEX));
        }
    CHECK(flags_of(t, IR_STATE_MASK, 3, 1) & IR_ACC_INDEX_ONLY);
    CHECK(!(flags_of(t, IR_STATE_MASK, 3, 1) & (IR_ACC_AT_INDEX | IR_ACC_AT_EVERY_INDEX)));
    CHECK(!(flags_of(t, IR_STATE_MASK, 3, 2) & (IR_ACC_AT_INDEX | IR_ACC_AT_EVERY_INDEX)));
    ir_task_free(t);
}

int main(void)
{
    test_struct_for_scale();
    test_range_for_reduce();
    test_range_for_conditional();
    test_serial();
    test_deactivate_gtmp_listgen();
    test_query_is_not_lookup();
    test_index_decided_if();
    return ir_test_result("ir_meta");
}
