/* Structural hash and equality, and clones: equal tasks hash equal whatever their names and
 * arenas; a changed immediate, type, operand or layout changes both; a clone prints the same
 * text, is equal, and is independent of its source. */
#include "ir_test.h"

typedef struct knobs {
    const char *name;
    int32_t scale;      /* an immediate */
    int swap;           /* operands of the sub swapped */
    int log2_leaf;      /* layout of the field */
    int parallel;
} knobs;

static ir_task *build(knobs k)
{
    static const int kinds[] = {IR_KIND_POINTER, IR_KIND_DENSE};
    int sizes[] = {4, k.log2_leaf};
    ir_field_info f = make_field("a", IR_I32, 1, 1, 2, kinds, sizes);
    ir_type args[] = {IR_I32};
    ir_task *t = ir_task_new(IR_TASK_KERNEL, k.name, &f, 1, args, 1);
    ir_builder b;
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0); /* emitted in this order: C leaves argument order open */
    ir_stmt *hi = ir_arg(&b, IR_I32, 0);
    ir_stmt *rf = ir_range_for(&b, lo, hi, k.parallel);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *i = ir_loop_index(&b, rf, 0);
    ir_stmt *s = ir_binary(&b, IR_MUL, i, ir_const_i32(&b, k.scale));
    ir_stmt *d = k.swap ? ir_binary(&b, IR_SUB, i, s) : ir_binary(&b, IR_SUB, s, i);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, &i);
    ir_global_store(&b, p, d);
    return t;
}

static void test_hash_equal(void)
{
    knobs base = {"k", 3, 0, 3, 1};
    ir_task *a = build(base);
    knobs renamed = base;
    renamed.name = "other";
    ir_task *b = build(renamed);
    CHECK(ir_task_equal(a, b));
    CHECK(ir_task_hash(a) == ir_task_hash(b));

    knobs variants[4];
    for (int v = 0; v < 4; v++)
        variants[v] = base;
    variants[0].scale = 4;
    variants[1].swap = 1;
    variants[2].log2_leaf = 2;
    variants[3].parallel = 0;
    for (int v = 0; v < 4; v++) {
        ir_task *c = build(variants[v]);
        CHECK(!ir_task_equal(a, c));
        CHECK(ir_task_hash(a) != ir_task_hash(c));
        ir_task_free(c);
    }
    /* one immediate changed, then restored */
    ir_task *c = build(base);
    ir_stmt *k = c->body->first; /* const i32 0 */
    CHECK(k->op == IR_CONST);
    k->ival = 1;
    CHECK(!ir_task_equal(a, c) && ir_task_hash(a) != ir_task_hash(c));
    k->ival = 0;
    CHECK(ir_task_equal(a, c) && ir_task_hash(a) == ir_task_hash(c));
    c->gtmp_bytes = 8;
    CHECK(!ir_task_equal(a, c) && ir_task_hash(a) != ir_task_hash(c));
    ir_task_free(c);
    ir_task_free(a);
    ir_task_free(b);
}

static ir_stmt *outer_to_arg(ir_stmt *o, void *ud)
{
    (void)o;
    return ud;
}

static void test_clone(void)
{
    knobs base = {"k", 3, 0, 3, 1};
    ir_task *a = build(base);
    a->gtmp_bytes = 16;
    CHECK(ir_task_compute_meta(a) == 0);
    ir_task *c = ir_task_clone(a);
    CHECK(c && c->arena != a->arena && c->body != a->body);
    char *pa = ir_print_task(a), *pc = ir_print_task(c);
    CHECK(pa && pc && strcmp(pa, pc) == 0);
    char *ma = ir_print_meta(a), *mc = ir_print_meta(c);
    CHECK(ma && mc && strcmp(ma, mc) == 0);
    CHECK(c->meta.access != a->meta.access && c->meta.naccess == a->meta.naccess);
    free(ma);
    free(mc);
    CHECK(ir_task_equal(a, c) && ir_task_hash(a) == ir_task_hash(c));
    must_verify(c, "clone");
    /* the clone's statements point into the clone */
    ir_stmt *rf = c->body->last;
    CHECK(rf->op == IR_RANGE_FOR && rf->body->first->loop == rf);
    CHECK(rf->arg[0] == c->body->first);
    /* changing the clone leaves the source as it was */
    c->body->first->ival = 7;
    char *pa2 = ir_print_task(a);
    CHECK(pa2 && strcmp(pa, pa2) == 0);
    CHECK(!ir_task_equal(a, c));
    free(pa);
    free(pa2);
    free(pc);
    ir_task_free(c);

    /* a loop body copied into another task: the outer loop index maps through the callback */
    ir_field_info f = a->fields[0];
    ir_type args[] = {IR_I32};
    ir_task *d = ir_task_new(IR_TASK_SERIAL, "d", &f, 1, args, 1);
    ir_builder b;
    ir_builder_init(&b, d);
    ir_stmt *arg = ir_arg(&b, IR_I32, 0);
    ir_stmt *loop = a->body->last;
    ir_block *body = loop->body;
    /* skip the loop index: copy from the statement after it, by moving it out first */
    ir_stmt *li = body->first;
    ir_unlink(li);
    CHECK(ir_block_clone_into(d, d->body, a, body, outer_to_arg, arg) == 0);
    ir_prepend(body, li);
    must_verify(d, "clone_into");
    CHECK_TEXT(ir_print_task(d),
               "task serial \"d\" {\n"
               "  $0 = arg i32 #0\n"
               "  $1 = const i32 3\n"
               "  $2 = mul i32 $0 $1\n"
               "  $3 = sub i32 $2 $0\n"
               "  $4 = global_ptr ptr<i32> @a [$0]\n"
               "  $5 : global_store $4 $3\n"
               "}\n");
    /* an outer operand the callback cannot map fails */
    ir_task *e = ir_task_new(IR_TASK_SERIAL, "e", &f, 1, args, 1);
    ir_unlink(li);
    CHECK(ir_block_clone_into(e, e->body, a, body, NULL, NULL) == -1);
    ir_prepend(body, li);
    ir_task_free(e);
    ir_task_free(d);
    ir_task_free(a);
}

int main(void)
{
    test_hash_equal();
    test_clone();
    return ir_test_result("ir_hash");
}
