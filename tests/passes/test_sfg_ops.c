/* The SFG's IR operations on bound tasks: fusion of range_for and struct_for tasks (printed
 * result, renumbered slots and arguments, metadata through the ops table), refusals, demotion,
 * store removal (empty or not), hashing of the binding. Expected texts written from the rules
 * in passes.h. */
#include "tests/check.h"
#include "engine/passes/passes.h"
#include "engine/sfg/sfg_ir_meta.h"
#include "pass_util.h"

/* dst[i] = src[i] <op> arg#0 over [0, n) */
static ir_task *range_task(const char *name, const char *src, const char *dst, int op,
                           int n)
{
    ir_field_info f[2] = {dense1(src, 10), dense1(dst, 10)};
    ir_type args[1] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, name, f, 2, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0);
    ir_stmt *loop = ir_range_for(&b, lo, ir_const_i32(&b, n), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    ir_stmt *m = ir_binary(&b, op, x, ir_arg(&b, IR_F32, 0));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &i), m);
    return t;
}

static passes_bound *bind(ir_task *t, uint32_t id0, uint32_t id1)
{
    uint32_t ids[2] = {id0, id1};
    passes_bound *b = passes_bound_create(t, ids, t->nfields, 100);
    ir_task_free(t);
    return b;
}

static void check_print(passes_bound *b, const char *want)
{
    CHECK(b != NULL);
    if (!b)
        return;
    char *p = print_norm(b->task);
    CHECK_STR(p, want);
    free(p);
}

static void test_fuse_range(void)
{
    sfg_ir_ops ops = passes_sfg_ops();
    passes_bound *a = bind(range_task("a", "x", "y", IR_MUL, 1024), 10, 11);
    passes_bound *b = bind(range_task("b", "y", "z", IR_ADD, 1024), 11, 12);
    passes_bound *f = ops.fuse(ops.ud, a, b, NULL);
    check_print(f, "task range_for \"a+b\" {\n"
                   "  $0 = const i32 0\n"
                   "  $1 = const i32 1024\n"
                   "  $2 : range_for $0 $1 parallel {\n"
                   "    $3 = loop_index i32 $2 0\n"
                   "    $4 = global_ptr ptr<f32> @x [$3]\n"
                   "    $5 = global_load f32 $4\n"
                   "    $6 = arg f32 #0\n"
                   "    $7 = mul f32 $5 $6\n"
                   "    $8 = global_ptr ptr<f32> @y [$3]\n"
                   "    $9 : global_store $8 $7\n"
                   /* b's body keeps its own loop_index, now of a's loop */
                   "    $10 = loop_index i32 $2 0\n"
                   "    $11 = global_ptr ptr<f32> @y [$10]\n"
                   "    $12 = global_load f32 $11\n"
                   "    $13 = arg f32 #1\n"
                   "    $14 = add f32 $12 $13\n"
                   "    $15 = global_ptr ptr<f32> @z [$10]\n"
                   "    $16 : global_store $15 $14\n"
                   "  }\n"
                   "}\n");
    if (f) {
        CHECK_EQ(f->nfields, 3); /* y shared: x, y, z */
        CHECK_EQ(f->field_id[0], 10);
        CHECK_EQ(f->field_id[1], 11);
        CHECK_EQ(f->field_id[2], 12);
        CHECK_EQ(f->task->nargs, 2);
        char *m = ir_print_meta(f->task);
        CHECK_STR(m, "meta range_for [0, 1024)\n"
                     "  value @x: read elementwise unique\n"
                     "  value @y: read write elementwise unique cover\n"
                     "  value @z: write elementwise unique cover\n");
        free(m);
        sfg_task_meta sm;
        CHECK_EQ(ops.meta(ops.ud, f, &sm), 0);
        CHECK_EQ(sm.type, SFG_RANGE_FOR);
        CHECK_EQ(sm.begin, 0);
        CHECK_EQ(sm.end, 1024);
        CHECK_EQ(sm.n_access, 3);
        if (sm.n_access == 3) {
            CHECK_EQ(sm.access[1].state, SFG_STATE(SFG_VALUE, 11));
            CHECK_EQ(sm.access[1].flags, SFG_ACC_READ | SFG_ACC_WRITE | SFG_ACC_UNIQUE |
                                             SFG_ACC_COVER);
        }
        CHECK(ops.hash(ops.ud, f) != ops.hash(ops.ud, a));
    }
    /* other range, other kind: declined */
    passes_bound *c = bind(range_task("c", "y", "z", IR_ADD, 512), 11, 12);
    CHECK(ops.fuse(ops.ud, a, c, NULL) == NULL);
    ops.free_ir(ops.ud, c);
    ops.free_ir(ops.ud, f);
    ops.free_ir(ops.ud, a);
    ops.free_ir(ops.ud, b);
}

/* dst[i] = src[i] + 1 + 1 + ... (`adds` additions) over [0, 1024): a body of about 2 * adds
 * statements */
static ir_task *heavy_task(const char *name, const char *src, const char *dst, int adds)
{
    ir_field_info f[2] = {dense1(src, 10), dense1(dst, 10)};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, name, f, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 1024), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    for (int k = 0; k < adds; k++)
        x = ir_binary(&b, IR_ADD, x, ir_const_float(&b, IR_F32, 1.0));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &i), x);
    return t;
}

/* dst[i] = src[i] + a + a + ... (`adds` additions of the f32 argument a, argument #0) */
static ir_task *heavy_arg_task(const char *name, const char *src, const char *dst, int adds)
{
    ir_field_info f[2] = {dense1(src, 10), dense1(dst, 10)};
    ir_type at[1] = {IR_F32};
    ir_task *t = ir_task_new(IR_TASK_RANGE_FOR, name, f, 2, at, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *a = ir_arg(&b, IR_F32, 0);
    ir_stmt *loop = ir_range_for(&b, ir_const_i32(&b, 0), ir_const_i32(&b, 1024), 1);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *i = ir_loop_index(&b, loop, 0);
    ir_stmt *x = ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    for (int k = 0; k < adds; k++)
        x = ir_binary(&b, IR_ADD, x, a);
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &i), x);
    return t;
}

static int count_one(ir_stmt *s, void *ud)
{
    (void)s;
    (*(uint32_t *)ud)++;
    return 0;
}

/* Two bodies above PASSES_FUSE_HEAVY statements are not fused; a heavy and a light one are;
 * two heavy ones computing the same values from the same field are (the fused body computes
 * them once: about one body's statements, not two). */
static void test_fuse_heavy(void)
{
    sfg_ir_ops ops = passes_sfg_ops();
    int adds = (int)PASSES_FUSE_HEAVY / 2 + 10;
    passes_bound *a = bind(heavy_task("a", "x", "y", adds), 10, 11);
    passes_bound *b = bind(heavy_task("b", "u", "v", adds), 12, 13);
    passes_bound *c = bind(heavy_task("c", "u", "w", 3), 12, 14);
    CHECK(ops.fuse(ops.ud, a, b, NULL) == NULL);
    passes_bound *ac = ops.fuse(ops.ud, a, c, NULL);
    CHECK(ac != NULL);
    passes_bound *ca = ops.fuse(ops.ud, c, a, NULL);
    CHECK(ca != NULL);
    passes_bound *same = bind(heavy_task("s", "x", "z", adds), 10, 15);
    passes_bound *as = ops.fuse(ops.ud, a, same, NULL);
    CHECK(as != NULL);
    if (as) {
        uint32_t n = 0;
        ir_walk(as->task->body, count_one, &n);
        CHECK(n < (uint32_t)adds + 20);
        CHECK(as->nfields == 3 && as->task->distinct_slots);
    }
    ops.free_ir(ops.ud, as);
    ops.free_ir(ops.ud, same);

    /* the same with an argument: only when the launch's arguments are equal (the SFG's
     * match) may b read a's, and only then is the work shared */
    int arg_adds = (int)PASSES_FUSE_HEAVY + 10;
    passes_bound *pa = bind(heavy_arg_task("p", "x", "y", arg_adds), 10, 11);
    passes_bound *pb = bind(heavy_arg_task("q", "x", "z", arg_adds), 10, 15);
    CHECK(ops.fuse(ops.ud, pa, pb, NULL) == NULL);
    int32_t differ[1] = {-1}, equal[1] = {0};
    sfg_arg_match md = {1, differ}, me = {1, equal};
    CHECK(ops.fuse(ops.ud, pa, pb, &md) == NULL);
    passes_bound *pq = ops.fuse(ops.ud, pa, pb, &me);
    CHECK(pq != NULL);
    if (pq) {
        uint32_t n = 0;
        ir_walk(pq->task->body, count_one, &n);
        CHECK(n < (uint32_t)arg_adds + 20);
        CHECK(pq->task->nargs == 2); /* the launch still passes both argument lists */
    }
    ops.free_ir(ops.ud, pq);
    ops.free_ir(ops.ud, pa);
    ops.free_ir(ops.ud, pb);
    ops.free_ir(ops.ud, ac);
    ops.free_ir(ops.ud, ca);
    ops.free_ir(ops.ud, a);
    ops.free_ir(ops.ud, b);
    ops.free_ir(ops.ud, c);
}

/* for (I in q) q[I] = q[I] + 1   or   for (I in q) r[I] = q[I] (q in slot 1) */
static ir_task *struct_task(const char *name, int copy)
{
    ir_field_info f[2];
    f[0] = copy ? vdb_field("r") : vdb_field("q");
    f[1] = copy ? vdb_field("q") : vdb_field("unused");
    uint32_t qslot = copy ? 1 : 0;
    ir_task *t = ir_task_new(IR_TASK_STRUCT_FOR, name, f, 2, NULL, 0);
    t->field = (uint16_t)qslot;
    t->level = 2;
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *loop = ir_struct_for(&b, qslot);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *p = ir_global_ptr(&b, qslot, 0, I);
    ir_stmt *v = ir_global_load(&b, p);
    if (copy) {
        ir_global_store(&b, ir_global_ptr(&b, 0, 0, I), v);
    } else {
        ir_stmt *w = ir_binary(&b, IR_ADD, v, ir_const_float(&b, IR_F32, 1.0));
        ir_global_store(&b, p, w);
    }
    return t;
}

static void test_fuse_struct_demote(void)
{
    sfg_ir_ops ops = passes_sfg_ops();
    passes_bound *a = bind(struct_task("inc", 0), 5, 9);
    passes_bound *b = bind(struct_task("copy", 1), 6, 5);
    passes_bound *f = ops.fuse(ops.ud, a, b, NULL);
    check_print(f, "task struct_for \"inc+copy\" @q.L2 {\n"
                   "  $0 : struct_for @q {\n"
                   "    $1 = loop_index i32 $0 0\n"
                   "    $2 = loop_index i32 $0 1\n"
                   "    $3 = loop_index i32 $0 2\n"
                   "    $4 = global_ptr ptr<f32> @q [$1 $2 $3]\n"
                   "    $5 = global_load f32 $4\n"
                   "    $6 = const f32 1.0\n"
                   "    $7 = add f32 $5 $6\n"
                   "    $8 : global_store $4 $7\n"
                   "    $9 = loop_index i32 $0 0\n"
                   "    $10 = loop_index i32 $0 1\n"
                   "    $11 = loop_index i32 $0 2\n"
                   "    $12 = global_ptr ptr<f32> @q [$9 $10 $11]\n"
                   "    $13 = global_load f32 $12\n"
                   "    $14 = global_ptr ptr<f32> @r [$9 $10 $11]\n"
                   "    $15 : global_store $14 $13\n"
                   "  }\n"
                   "}\n");
    if (f) {
        /* slots: a's (q=5, unused=9), then b's r=6; b's q merged into slot 0 */
        CHECK_EQ(f->nfields, 3);
        CHECK_EQ(f->field_id[2], 6);
        sfg_task_meta sm;
        CHECK_EQ(ops.meta(ops.ud, f, &sm), 0);
        CHECK_EQ(sm.type, SFG_STRUCT_FOR);
        CHECK_EQ(sm.snode, SFG_SNODE_ID(5, 2));
        const ir_access *v = ir_meta_find(&f->task->meta, IR_STATE_VALUE, 0, 0);
        CHECK(v && (v->flags & IR_ACC_UNIQUE) && (v->flags & IR_ACC_WRITE));
    }
    /* struct_for over another field: declined */
    passes_bound *other = bind(struct_task("copy", 1), 6, 7);
    CHECK(ops.fuse(ops.ud, a, other, NULL) == NULL);
    ops.free_ir(ops.ud, other);

    /* demotion of q's level 1: the global_ptr carries demoted(1), mask L1 is not written */
    passes_bound *d = ops.demote_activation(ops.ud, a, SFG_SNODE_ID(5, 1));
    CHECK(d != NULL);
    if (d) {
        char *p = ir_print_task(d->task);
        CHECK(p && strstr(p, "global_ptr ptr<f32> @q [$1 $2 $3] demoted(1)\n") != NULL);
        free(p);
        const ir_access *m1 = ir_meta_find(&d->task->meta, IR_STATE_MASK, 0, 1);
        const ir_access *m2 = ir_meta_find(&d->task->meta, IR_STATE_MASK, 0, 2);
        CHECK(m1 && !(m1->flags & IR_ACC_WRITE));
        CHECK(m2 && (m2->flags & IR_ACC_WRITE));
        CHECK(ir_meta_find(&d->task->meta, IR_STATE_ALLOC, 0, 1) == NULL);
        CHECK(ir_meta_find(&d->task->meta, IR_STATE_ALLOC, 0, 2) != NULL);
        /* demoting again changes nothing: declined */
        CHECK(ops.demote_activation(ops.ud, d, SFG_SNODE_ID(5, 1)) == NULL);
        ops.free_ir(ops.ud, d);
    }
    /* another field's SNode, or a dense level: nothing to demote */
    CHECK(ops.demote_activation(ops.ud, a, SFG_SNODE_ID(6, 1)) == NULL);
    CHECK(ops.demote_activation(ops.ud, a, SFG_SNODE_ID(5, 3)) == NULL);

    /* removing q's stores from inc: the activation stays, so the task is not empty */
    int empty = 7;
    passes_bound *r = ops.remove_stores(ops.ud, a, SFG_STATE(SFG_VALUE, 5), &empty);
    check_print(r, "task struct_for \"inc\" @q.L2 {\n"
                   "  $0 : struct_for @q {\n"
                   "    $1 = loop_index i32 $0 0\n"
                   "    $2 = loop_index i32 $0 1\n"
                   "    $3 = loop_index i32 $0 2\n"
                   "    $4 : activate @q [$1 $2 $3]\n"
                   "  }\n"
                   "}\n");
    CHECK_EQ(empty, 0);
    ops.free_ir(ops.ud, r);
    /* a field it does not write: declined */
    CHECK(ops.remove_stores(ops.ud, a, SFG_STATE(SFG_VALUE, 6), &empty) == NULL);
    CHECK(ops.remove_stores(ops.ud, a, SFG_STATE(SFG_MASK, 5), &empty) == NULL);
    ops.free_ir(ops.ud, f);
    ops.free_ir(ops.ud, a);
    ops.free_ir(ops.ud, b);
}

static void test_remove_empty_and_hash(void)
{
    sfg_ir_ops ops = passes_sfg_ops();
    passes_bound *a = bind(range_task("a", "x", "y", IR_MUL, 64), 10, 11);
    int empty = 0;
    passes_bound *r = ops.remove_stores(ops.ud, a, SFG_STATE(SFG_VALUE, 11), &empty);
    CHECK(r != NULL);
    CHECK_EQ(empty, 1); /* dense y: no activation left, the load of x went with the store */
    if (r)
        CHECK(ir_meta_find(&r->task->meta, IR_STATE_VALUE, 0, 0) == NULL);
    ops.free_ir(ops.ud, r);
    /* an atomic whose old value is used becomes a load */
    ir_field_info f[2] = {dense1("x", 4), dense1("y", 4)};
    ir_task *t = ir_task_new(IR_TASK_SERIAL, "at", f, 2, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *z = ir_const_i32(&b, 0);
    ir_stmt *px = ir_global_ptr(&b, 0, 0, &z);
    ir_stmt *old = ir_atomic(&b, IR_ATOMIC_ADD, px, ir_const_float(&b, IR_F32, 1.0));
    ir_global_store(&b, ir_global_ptr(&b, 1, 0, &z), old);
    passes_bound *ab = bind(t, 10, 11);
    passes_bound *ar = ops.remove_stores(ops.ud, ab, SFG_STATE(SFG_VALUE, 10), &empty);
    check_print(ar, "task serial \"at\" {\n"
                    "  $0 = const i32 0\n"
                    "  $1 = global_ptr ptr<f32> @x [$0]\n"
                    "  $2 = global_load f32 $1\n"
                    "  $3 = global_ptr ptr<f32> @y [$0]\n"
                    "  $4 : global_store $3 $2\n"
                    "}\n");
    CHECK_EQ(empty, 0);
    ops.free_ir(ops.ud, ar);
    ops.free_ir(ops.ud, ab);

    /* the same task bound to other fields hashes differently; a clone hashes the same */
    passes_bound *a2 = bind(range_task("a", "x", "y", IR_MUL, 64), 10, 12);
    passes_bound *a3 = passes_bound_clone(a);
    CHECK(ops.hash(ops.ud, a) != ops.hash(ops.ud, a2));
    CHECK(a3 && ops.hash(ops.ud, a) == ops.hash(ops.ud, a3));
    /* a binding that does not match the task is refused */
    uint32_t ids[1] = {1};
    CHECK(passes_bound_create(a->task, ids, 1, 0) == NULL);
    ops.free_ir(ops.ud, a3);
    ops.free_ir(ops.ud, a2);
    ops.free_ir(ops.ud, a);
}

int main(void)
{
    test_fuse_range();
    test_fuse_heavy();
    test_fuse_struct_demote();
    test_remove_empty_and_hash();
    CHECK_DONE();
}
