/* Each pass alone on a small hand-built task: the IR before (written by hand) and after
 * (written by hand from the pass's rules), verified; then the whole pipeline with its dump
 * callback, and what must never be touched (float identities, effects, task loops). */
#include "../ir/ir_test.h"
#include "engine/opt/opt.h"

static ir_field_info fields[2];
static const ir_type args[] = {IR_F32, IR_I32};

static ir_task *kernel(ir_builder *b, const char *name)
{
    ir_task *t = ir_task_new(IR_TASK_KERNEL, name, fields, 2, args, 2);
    ir_builder_init(b, t);
    return t;
}

/* Runs only `pass` and checks the text after it and that something changed or not. */
static void only(ir_task *t, uint32_t pass, const char *after)
{
    char err[512];
    CHECK(opt_run(t, OPT_ALL & ~pass, NULL, NULL, err, sizeof err) == 0);
    must_verify(t, after);
    CHECK_TEXT(ir_print_task(t), after);
}

static void test_fold(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "fold");
    ir_stmt *six = ir_const_i32(&b, 6);
    ir_stmt *seven = ir_const_i32(&b, 7);
    ir_stmt *m = ir_binary(&b, IR_MUL, six, seven);
    ir_stmt *a = ir_arg(&b, IR_I32, 1);
    ir_stmt *s = ir_binary(&b, IR_ADD, a, m);
    ir_stmt *c = ir_cast(&b, IR_F32, ir_binary(&b, IR_SUB, m, six));
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, &s), c);
    CHECK_TEXT(ir_print_task(t), "task kernel \"fold\" {\n"
                                 "  $0 = const i32 6\n"
                                 "  $1 = const i32 7\n"
                                 "  $2 = mul i32 $0 $1\n"
                                 "  $3 = arg i32 #1\n"
                                 "  $4 = add i32 $3 $2\n"
                                 "  $5 = sub i32 $2 $0\n"
                                 "  $6 = cast f32 $5\n"
                                 "  $7 = global_ptr ptr<f32> @a [$4]\n"
                                 "  $8 : global_store $7 $6\n"
                                 "}\n");
    /* a chain folds in one pre-order walk: 42, then 36, then 36.0 */
    only(t, OPT_FOLD, "task kernel \"fold\" {\n"
                      "  $0 = const i32 6\n"
                      "  $1 = const i32 7\n"
                      "  $2 = const i32 42\n"
                      "  $3 = arg i32 #1\n"
                      "  $4 = add i32 $3 $2\n"
                      "  $5 = const i32 36\n"
                      "  $6 = const f32 36.0\n"
                      "  $7 = global_ptr ptr<f32> @a [$4]\n"
                      "  $8 : global_store $7 $6\n"
                      "}\n");
    ir_task_free(t);
}

static void test_simplify(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "simplify");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *zero = ir_const_i32(&b, 0);
    ir_stmt *s2 = ir_binary(&b, IR_ADD, zero, n);      /* 0 + n -> n */
    ir_stmt *one = ir_const_i32(&b, 1);
    ir_stmt *s4 = ir_binary(&b, IR_MUL, s2, one);      /* n * 1 -> n */
    ir_stmt *s5 = ir_binary(&b, IR_SUB, s4, s4);       /* n - n -> 0 */
    ir_stmt *x = ir_arg(&b, IR_F32, 0);
    ir_stmt *fz = ir_const_float(&b, IR_F32, 0.0);
    ir_stmt *s8 = ir_binary(&b, IR_ADD, x, fz);        /* stays: -0 + 0 = +0 */
    ir_stmt *s9 = ir_binary(&b, IR_MUL, x, fz);        /* stays: inf * 0 = nan */
    ir_stmt *fone = ir_const_float(&b, IR_F32, 1.0);
    ir_stmt *s11 = ir_binary(&b, IR_MUL, s8, fone);    /* -> s8 */
    ir_stmt *s12 = ir_unary(&b, IR_NEG, s11);
    ir_stmt *s13 = ir_unary(&b, IR_NEG, s12);          /* -> s8 */
    ir_stmt *s14 = ir_binary(&b, IR_LT, n, n);         /* false */
    ir_stmt *iff = ir_if(&b, s14);
    ir_builder_at_end(&b, iff->body);
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, &s5), s13);
    ir_builder_at_end(&b, iff->els);
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, &n), s9);
    CHECK_TEXT(ir_print_task(t), "task kernel \"simplify\" {\n"
                                 "  $0 = arg i32 #1\n"
                                 "  $1 = const i32 0\n"
                                 "  $2 = add i32 $1 $0\n"
                                 "  $3 = const i32 1\n"
                                 "  $4 = mul i32 $2 $3\n"
                                 "  $5 = sub i32 $4 $4\n"
                                 "  $6 = arg f32 #0\n"
                                 "  $7 = const f32 0.0\n"
                                 "  $8 = add f32 $6 $7\n"
                                 "  $9 = mul f32 $6 $7\n"
                                 "  $10 = const f32 1.0\n"
                                 "  $11 = mul f32 $8 $10\n"
                                 "  $12 = neg f32 $11\n"
                                 "  $13 = neg f32 $12\n"
                                 "  $14 = lt bool $0 $0\n"
                                 "  $15 : if $14 {\n"
                                 "    $16 = global_ptr ptr<f32> @a [$5]\n"
                                 "    $17 : global_store $16 $13\n"
                                 "  } else {\n"
                                 "    $18 = global_ptr ptr<f32> @a [$0]\n"
                                 "    $19 : global_store $18 $9\n"
                                 "  }\n"
                                 "}\n");
    only(t, OPT_SIMPLIFY, "task kernel \"simplify\" {\n"
                          "  $0 = arg i32 #1\n"
                          "  $1 = const i32 0\n"
                          "  $2 = const i32 1\n"
                          "  $3 = const i32 0\n"
                          "  $4 = arg f32 #0\n"
                          "  $5 = const f32 0.0\n"
                          "  $6 = add f32 $4 $5\n"
                          "  $7 = mul f32 $4 $5\n"
                          "  $8 = const f32 1.0\n"
                          "  $9 = neg f32 $6\n"
                          "  $10 = const bool false\n"
                          "  $11 = global_ptr ptr<f32> @a [$0]\n"
                          "  $12 : global_store $11 $7\n"
                          "}\n");
    ir_task_free(t);
}

/* bool identities, select, x*0 for ints, and a loop with no iteration */
static void test_simplify_more(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "more");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *zero = ir_const_i32(&b, 0);
    ir_stmt *p = ir_binary(&b, IR_GT, n, zero);
    ir_stmt *tr = ir_const_int(&b, IR_BOOL, 1);
    ir_stmt *q = ir_binary(&b, IR_AND, tr, p);           /* -> p */
    ir_stmt *x = ir_arg(&b, IR_F32, 0);
    ir_stmt *sel = ir_select(&b, q, x, x);               /* -> x */
    ir_stmt *k = ir_binary(&b, IR_MUL, n, zero);         /* -> 0 */
    ir_stmt *rf = ir_range_for(&b, n, n, 0);             /* not constant: stays */
    (void)rf;
    ir_stmt *four = ir_const_i32(&b, 4);
    ir_stmt *dead = ir_range_for(&b, four, zero, 0);     /* [4, 0): no iteration */
    ir_builder_at_end(&b, dead->body);
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, &n), x);
    ir_builder_init(&b, t);
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, &k), sel);
    only(t, OPT_SIMPLIFY, "task kernel \"more\" {\n"
                          "  $0 = arg i32 #1\n"
                          "  $1 = const i32 0\n"
                          "  $2 = gt bool $0 $1\n"
                          "  $3 = const bool true\n"
                          "  $4 = arg f32 #0\n"
                          "  $5 = const i32 0\n"
                          "  $6 : range_for $0 $0 {\n"
                          "  }\n"
                          "  $7 = const i32 4\n"
                          "  $8 = global_ptr ptr<f32> @a [$5]\n"
                          "  $9 : global_store $8 $4\n"
                          "}\n");
    ir_task_free(t);
}

static void test_forward(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "forward");
    ir_stmt *v = ir_alloca(&b, IR_I32);
    ir_stmt *l1 = ir_load(&b, v);                        /* zero-initialized -> 0 */
    ir_stmt *a = ir_arg(&b, IR_I32, 1);
    ir_store(&b, v, a);
    ir_stmt *l4 = ir_load(&b, v);                        /* -> a */
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_GT, l4, l1));
    ir_builder_at_end(&b, iff->body);
    ir_stmt *l7 = ir_load(&b, v);                        /* -> a (dominated) */
    ir_store(&b, v, l7);
    ir_builder_init(&b, t);
    ir_stmt *l9 = ir_load(&b, v);                        /* unknown: stored in the if */
    ir_stmt *l10 = ir_load(&b, v);                       /* -> l9 */
    ir_stmt *lo = ir_const_i32(&b, 0), *hi = ir_const_i32(&b, 4);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 0);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *l14 = ir_load(&b, v);                       /* stays: the body stores v */
    ir_store(&b, v, ir_binary(&b, IR_ADD, l14, l10));
    ir_builder_init(&b, t);
    ir_stmt *l17 = ir_load(&b, v);                       /* stays: the loop stored v */
    ir_stmt *gp = ir_global_ptr(&b, 0, 0, &l17); /* apart: C leaves argument order open */
    ir_global_store(&b, gp, ir_cast(&b, IR_F32, l9));
    CHECK_TEXT(ir_print_task(t), "task kernel \"forward\" {\n"
                                 "  $0 = alloca ptr<i32>\n"
                                 "  $1 = load i32 $0\n"
                                 "  $2 = arg i32 #1\n"
                                 "  $3 : store $0 $2\n"
                                 "  $4 = load i32 $0\n"
                                 "  $5 = gt bool $4 $1\n"
                                 "  $6 : if $5 {\n"
                                 "    $7 = load i32 $0\n"
                                 "    $8 : store $0 $7\n"
                                 "  }\n"
                                 "  $9 = load i32 $0\n"
                                 "  $10 = load i32 $0\n"
                                 "  $11 = const i32 0\n"
                                 "  $12 = const i32 4\n"
                                 "  $13 : range_for $11 $12 {\n"
                                 "    $14 = load i32 $0\n"
                                 "    $15 = add i32 $14 $10\n"
                                 "    $16 : store $0 $15\n"
                                 "  }\n"
                                 "  $17 = load i32 $0\n"
                                 "  $18 = global_ptr ptr<f32> @a [$17]\n"
                                 "  $19 = cast f32 $9\n"
                                 "  $20 : global_store $18 $19\n"
                                 "}\n");
    only(t, OPT_FORWARD, "task kernel \"forward\" {\n"
                         "  $0 = alloca ptr<i32>\n"
                         "  $1 = const i32 0\n"
                         "  $2 = arg i32 #1\n"
                         "  $3 : store $0 $2\n"
                         "  $4 = gt bool $2 $1\n"
                         "  $5 : if $4 {\n"
                         "    $6 : store $0 $2\n"
                         "  }\n"
                         "  $7 = load i32 $0\n"
                         "  $8 = const i32 0\n"
                         "  $9 = const i32 4\n"
                         "  $10 : range_for $8 $9 {\n"
                         "    $11 = load i32 $0\n"
                         "    $12 = add i32 $11 $7\n"
                         "    $13 : store $0 $12\n"
                         "  }\n"
                         "  $14 = load i32 $0\n"
                         "  $15 = global_ptr ptr<f32> @a [$14]\n"
                         "  $16 = cast f32 $7\n"
                         "  $17 : global_store $15 $16\n"
                         "}\n");
    ir_task_free(t);
}

static void test_cse_values_and_loads(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "cse");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *one = ir_const_i32(&b, 1);
    ir_stmt *s2 = ir_binary(&b, IR_ADD, n, one);
    ir_stmt *s3 = ir_binary(&b, IR_ADD, one, n);         /* commutative: -> s2 */
    ir_stmt *p4 = ir_global_ptr(&b, 0, 0, &s2);
    ir_stmt *p5 = ir_global_ptr(&b, 0, 0, &s3);          /* -> p4 */
    ir_stmt *l6 = ir_global_load(&b, p4);
    ir_stmt *l7 = ir_global_load(&b, p5);                /* -> l6: nothing stored between */
    ir_global_store(&b, p4, l7);
    ir_stmt *l9 = ir_global_load(&b, p4);                /* -> l7: the value just stored */
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_GT, n, one));
    ir_builder_at_end(&b, iff->body);
    ir_binary(&b, IR_ADD, n, one);                       /* -> s2 (dominated) */
    ir_stmt *s13 = ir_binary(&b, IR_SUB, n, one);
    (void)s13;
    ir_builder_init(&b, t);
    ir_stmt *s14 = ir_binary(&b, IR_SUB, n, one);        /* stays: s13 does not dominate */
    ir_stmt *lo = ir_const_i32(&b, 0);
    ir_stmt *rf = ir_range_for(&b, lo, s14, 0);
    ir_builder_at_end(&b, rf->body);
    ir_stmt *l17 = ir_global_load(&b, p4);               /* stays: the body stores */
    ir_global_store(&b, p4, ir_binary(&b, IR_ADD, l17, l6));
    ir_builder_init(&b, t);
    ir_global_store(&b, p5, l9);
    only(t, OPT_CSE, "task kernel \"cse\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = const i32 1\n"
                     "  $2 = add i32 $0 $1\n"
                     "  $3 = global_ptr ptr<f32> @a [$2]\n"
                     "  $4 = global_load f32 $3\n"
                     "  $5 : global_store $3 $4\n"
                     "  $6 = gt bool $0 $1\n"
                     "  $7 : if $6 {\n"
                     "    $8 = sub i32 $0 $1\n"
                     "  }\n"
                     "  $9 = sub i32 $0 $1\n"
                     "  $10 = const i32 0\n"
                     "  $11 : range_for $10 $9 {\n"
                     "    $12 = global_load f32 $3\n"
                     "    $13 = add f32 $12 $4\n"
                     "    $14 : global_store $3 $13\n"
                     "  }\n"
                     "  $15 : global_store $3 $4\n"
                     "}\n");
    ir_task_free(t);
}

/* lowered lookups: pure between activations; an activated cell answers later lookups until
 * a deactivation */
static void test_cse_lookups(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "lookups");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *r = ir_sn_root(&b, 1);
    ir_stmt *c = ir_sn_child(&b, 1, 1, r);
    ir_stmt *idx[3] = {n, n, n};
    ir_stmt *i = ir_sn_index(&b, 1, 1, idx);
    ir_sn_lookup(&b, 1, 1, 0, c, i);
    ir_sn_lookup(&b, 1, 1, 0, c, i);                     /* -> $5 */
    ir_sn_lookup(&b, 1, 1, 1, c, i);                     /* activates: stays */
    ir_sn_lookup(&b, 1, 1, 0, c, i);                     /* -> the activated cell */
    ir_sn_op(&b, IR_SN_IS_ACTIVE, 1, 1, c, i);           /* stays: the mask changed */
    ir_sn_lookup(&b, 1, 1, 1, c, i);                     /* -> the activated cell */
    ir_sn_op(&b, IR_SN_DEACTIVATE, 1, 1, c, i);
    ir_sn_lookup(&b, 1, 1, 0, c, i);                     /* stays: after a deactivation */
    ir_sn_root(&b, 1);                                   /* -> $1 */
    only(t, OPT_CSE, "task kernel \"lookups\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = sn_root cell @v\n"
                     "  $2 = sn_child cell @v.L1 $1\n"
                     "  $3 = sn_index i32 @v.L1 [$0 $0 $0]\n"
                     "  $4 = sn_lookup cell @v.L1 $2 $3\n"
                     "  $5 = sn_lookup cell @v.L1 $2 $3 activate\n"
                     "  $6 = sn_is_active bool @v.L1 $2 $3\n"
                     "  $7 : sn_deactivate @v.L1 $2 $3\n"
                     "  $8 = sn_lookup cell @v.L1 $2 $3\n"
                     "}\n");
    ir_task_free(t);
}

/* Slots bound to distinct fields (ir_task.distinct_slots) keep their loads and lookups across
 * stores through the other slot; slots that may alias do not. A store to a local variable
 * never ends a field load's life. Built the same way twice, once per setting. */
static ir_task *distinct_case(ir_builder *b, int distinct)
{
    ir_task *t = kernel(b, distinct ? "distinct" : "aliasing");
    t->distinct_slots = (uint8_t)distinct;
    ir_stmt *n = ir_arg(b, IR_I32, 1);
    ir_stmt *pa = ir_global_ptr(b, 0, 0, &n);
    ir_stmt *la = ir_global_load(b, pa);
    ir_stmt *loc = ir_alloca(b, IR_F32);
    ir_store(b, loc, la);
    ir_global_load(b, pa);                               /* -> la: only a local changed */
    ir_stmt *idx[3] = {n, n, n};
    ir_stmt *r = ir_sn_root(b, 1);
    ir_stmt *c = ir_sn_child(b, 1, 1, r);
    ir_stmt *i = ir_sn_index(b, 1, 1, idx);
    ir_stmt *cell = ir_sn_lookup(b, 1, 1, 0, c, i);
    ir_stmt *pv = ir_sn_field_ptr(b, 1, 0, 0, cell, i);
    ir_stmt *lv = ir_global_load(b, pv);
    ir_global_store(b, pa, lv);                          /* a store through slot 0 */
    ir_stmt *cell2 = ir_sn_lookup(b, 1, 1, 0, c, i);     /* distinct: -> cell */
    ir_stmt *pv2 = ir_sn_field_ptr(b, 1, 0, 0, cell2, i);
    ir_stmt *lv2 = ir_global_load(b, pv2);               /* distinct: -> lv */
    ir_stmt *la2 = ir_global_load(b, pa);                /* -> lv: the value just stored */
    ir_global_store(b, pa, ir_binary(b, IR_ADD, lv2, la2));
    return t;
}

static void test_cse_distinct_slots(void)
{
    ir_builder b;
    ir_task *t = distinct_case(&b, 1);
    only(t, OPT_CSE, "task kernel \"distinct\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = global_ptr ptr<f32> @a [$0]\n"
                     "  $2 = global_load f32 $1\n"
                     "  $3 = alloca ptr<f32>\n"
                     "  $4 : store $3 $2\n"
                     "  $5 = sn_root cell @v\n"
                     "  $6 = sn_child cell @v.L1 $5\n"
                     "  $7 = sn_index i32 @v.L1 [$0 $0 $0]\n"
                     "  $8 = sn_lookup cell @v.L1 $6 $7\n"
                     "  $9 = sn_field_ptr ptr<f32> @v $8 $7\n"
                     "  $10 = global_load f32 $9\n"
                     "  $11 : global_store $1 $10\n"
                     "  $12 = add f32 $10 $10\n"
                     "  $13 : global_store $1 $12\n"
                     "}\n");
    ir_task_free(t);
    t = distinct_case(&b, 0);
    only(t, OPT_CSE, "task kernel \"aliasing\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = global_ptr ptr<f32> @a [$0]\n"
                     "  $2 = global_load f32 $1\n"
                     "  $3 = alloca ptr<f32>\n"
                     "  $4 : store $3 $2\n"
                     "  $5 = sn_root cell @v\n"
                     "  $6 = sn_child cell @v.L1 $5\n"
                     "  $7 = sn_index i32 @v.L1 [$0 $0 $0]\n"
                     "  $8 = sn_lookup cell @v.L1 $6 $7\n"
                     "  $9 = sn_field_ptr ptr<f32> @v $8 $7\n"
                     "  $10 = global_load f32 $9\n"
                     "  $11 : global_store $1 $10\n"
                     "  $12 = sn_lookup cell @v.L1 $6 $7\n"
                     "  $13 = sn_field_ptr ptr<f32> @v $12 $7\n"
                     "  $14 = global_load f32 $13\n"
                     "  $15 = add f32 $14 $10\n"
                     "  $16 : global_store $1 $15\n"
                     "}\n");
    ir_task_free(t);
}

/* Lowered stores: a load through the activating pointer a store wrote through is the stored
 * value; through a plain (maybe NULL) pointer it is not. A store changes values only, so the
 * lookups of its field stay shared. */
/* A global_ptr only read lowers to lookups at its own place: one made before a store to
 * another element of the field (which activates that element's block) is not the same
 * pointer after it, since its lookup may have found the block missing; the pointer stored
 * through stays the same. */
static void test_cse_pointers_across_stores(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "ptrs");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *m = ir_binary(&b, IR_ADD, n, ir_const_i32(&b, 1));
    ir_stmt *pa = ir_global_ptr(&b, 0, 0, &n);
    ir_stmt *l = ir_global_load(&b, pa);
    ir_stmt *pb = ir_global_ptr(&b, 0, 0, &m);
    ir_global_store(&b, pb, l);
    ir_stmt *pa2 = ir_global_ptr(&b, 0, 0, &n);          /* stays: pb's store came between */
    ir_stmt *pb2 = ir_global_ptr(&b, 0, 0, &m);          /* -> pb */
    ir_global_store(&b, pb2, ir_global_load(&b, pa2));
    only(t, OPT_CSE, "task kernel \"ptrs\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = const i32 1\n"
                     "  $2 = add i32 $0 $1\n"
                     "  $3 = global_ptr ptr<f32> @a [$0]\n"
                     "  $4 = global_load f32 $3\n"
                     "  $5 = global_ptr ptr<f32> @a [$2]\n"
                     "  $6 : global_store $5 $4\n"
                     "  $7 = global_ptr ptr<f32> @a [$0]\n"
                     "  $8 = global_load f32 $7\n"
                     "  $9 : global_store $5 $8\n"
                     "}\n");
    ir_task_free(t);
}

static void test_cse_store_forwarding(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "fwd");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *x = ir_arg(&b, IR_F32, 0);
    ir_stmt *idx[3] = {n, n, n};
    ir_stmt *r = ir_sn_root(&b, 1);
    ir_stmt *c = ir_sn_child(&b, 1, 1, r);
    ir_stmt *i = ir_sn_index(&b, 1, 1, idx);
    ir_stmt *cell = ir_sn_lookup(&b, 1, 1, 1, c, i);
    ir_stmt *p = ir_sn_field_ptr(&b, 1, 0, 1, cell, i);
    ir_global_store(&b, p, x);
    ir_stmt *l = ir_global_load(&b, p);                  /* -> x */
    ir_stmt *cell2 = ir_sn_lookup(&b, 1, 1, 0, c, i);    /* -> cell */
    ir_stmt *p2 = ir_sn_field_ptr(&b, 1, 0, 0, cell2, i); /* -> p: that cell is active */
    ir_global_store(&b, p2, ir_binary(&b, IR_ADD, l, x));
    ir_stmt *l2 = ir_global_load(&b, p2);                /* -> the sum */
    ir_stmt *jdx[3] = {ir_const_i32(&b, 5), n, n};
    ir_stmt *j = ir_sn_index(&b, 1, 1, jdx);
    ir_stmt *q = ir_sn_field_ptr(&b, 1, 0, 0, ir_sn_lookup(&b, 1, 1, 0, c, j), j);
    ir_global_store(&b, q, l2);
    ir_global_store(&b, p, ir_global_load(&b, q));      /* stays: q may be NULL */
    only(t, OPT_CSE, "task kernel \"fwd\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = arg f32 #0\n"
                     "  $2 = sn_root cell @v\n"
                     "  $3 = sn_child cell @v.L1 $2\n"
                     "  $4 = sn_index i32 @v.L1 [$0 $0 $0]\n"
                     "  $5 = sn_lookup cell @v.L1 $3 $4 activate\n"
                     "  $6 = sn_field_ptr ptr<f32> @v $5 $4 activate\n"
                     "  $7 : global_store $6 $1\n"
                     "  $8 = add f32 $1 $1\n"
                     "  $9 : global_store $6 $8\n"
                     "  $10 = const i32 5\n"
                     "  $11 = sn_index i32 @v.L1 [$10 $0 $0]\n"
                     "  $12 = sn_lookup cell @v.L1 $3 $11\n"
                     "  $13 = sn_field_ptr ptr<f32> @v $12 $11\n"
                     "  $14 : global_store $13 $8\n"
                     "  $15 = global_load f32 $13\n"
                     "  $16 : global_store $6 $15\n"
                     "}\n");
    ir_task_free(t);
}

static void test_dce(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "dce");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *two = ir_const_i32(&b, 2);
    ir_binary(&b, IR_ADD, ir_binary(&b, IR_MUL, n, two), two); /* unused chain */
    ir_stmt *v = ir_alloca(&b, IR_I32);                        /* stored, never loaded */
    ir_store(&b, v, n);
    ir_stmt *iff = ir_if(&b, ir_binary(&b, IR_GT, n, two));    /* only dead values inside */
    ir_builder_at_end(&b, iff->body);
    ir_unary(&b, IR_NEG, n);
    ir_builder_init(&b, t);
    ir_stmt *lo = ir_const_i32(&b, 0);
    ir_stmt *hi = ir_const_i32(&b, 8);
    ir_stmt *rf = ir_range_for(&b, lo, hi, 1);                 /* reads only */
    ir_builder_at_end(&b, rf->body);
    ir_stmt *i = ir_loop_index(&b, rf, 0);
    ir_global_load(&b, ir_global_ptr(&b, 0, 0, &i));
    ir_builder_init(&b, t);
    ir_stmt *w = ir_while(&b);                                 /* might not end: stays */
    ir_builder_at_end(&b, w->body);
    ir_break(&b, w);
    ir_builder_init(&b, t);
    ir_load(&b, ir_alloca(&b, IR_F32));                        /* loaded, but unused */
    ir_stmt *x = ir_arg(&b, IR_F32, 0);
    ir_atomic(&b, IR_ATOMIC_ADD, ir_global_ptr(&b, 0, 0, &n), x); /* effect: stays */
    only(t, OPT_DCE, "task kernel \"dce\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 : while {\n"
                     "    $2 : break $1\n"
                     "  }\n"
                     "  $3 = arg f32 #0\n"
                     "  $4 = global_ptr ptr<f32> @a [$0]\n"
                     "  $5 = atomic_add f32 $4 $3\n"
                     "}\n");
    ir_task_free(t);

    /* a range_for task keeps its loop even when the body is empty */
    t = ir_task_new(IR_TASK_RANGE_FOR, "k#1", fields, 2, args, 2);
    ir_builder_init(&b, t);
    lo = ir_const_i32(&b, 0);
    hi = ir_const_i32(&b, 8);
    rf = ir_range_for(&b, lo, hi, 1);
    ir_builder_at_end(&b, rf->body);
    ir_loop_index(&b, rf, 0);
    only(t, OPT_ALL, "task range_for \"k#1\" {\n"
                     "  $0 = const i32 0\n"
                     "  $1 = const i32 8\n"
                     "  $2 : range_for $0 $1 parallel {\n"
                     "  }\n"
                     "}\n");
    ir_task_free(t);
}

/* Overwritten field stores: a store dropped only when the same pointer is stored again in the
 * same block with nothing between that may read it. Slots not known distinct may alias, so a
 * load of another field keeps the store before it; with distinct slots it does not. An `if`
 * between (its block may read) keeps it either way. */
static ir_task *dse_task(ir_builder *b)
{
    ir_task *t = kernel(b, "dse");
    ir_stmt *n = ir_arg(b, IR_I32, 1);
    ir_stmt *p = ir_global_ptr(b, 0, 0, &n);
    ir_global_store(b, p, ir_const_float(b, IR_F32, 1.0));
    ir_global_store(b, p, ir_const_float(b, IR_F32, 2.0));
    ir_stmt *idx[3] = {n, n, n};
    ir_stmt *x = ir_global_load(b, ir_global_ptr(b, 1, 0, idx));
    ir_global_store(b, p, x);
    ir_stmt *iff = ir_if(b, ir_binary(b, IR_GT, x, ir_const_float(b, IR_F32, 0.0)));
    ir_builder_at_end(b, iff->body);
    ir_global_store(b, p, ir_const_float(b, IR_F32, 5.0));
    ir_builder_init(b, t);
    ir_global_store(b, p, ir_const_float(b, IR_F32, 6.0));
    return t;
}

static void test_dse(void)
{
    ir_builder b;
    ir_task *t = dse_task(&b);
    only(t, OPT_DSE, "task kernel \"dse\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = global_ptr ptr<f32> @a [$0]\n"
                     "  $2 = const f32 1.0\n"
                     "  $3 = const f32 2.0\n"
                     "  $4 : global_store $1 $3\n"
                     "  $5 = global_ptr ptr<f32> @v [$0 $0 $0]\n"
                     "  $6 = global_load f32 $5\n"
                     "  $7 : global_store $1 $6\n"
                     "  $8 = const f32 0.0\n"
                     "  $9 = gt bool $6 $8\n"
                     "  $10 : if $9 {\n"
                     "    $11 = const f32 5.0\n"
                     "    $12 : global_store $1 $11\n"
                     "  }\n"
                     "  $13 = const f32 6.0\n"
                     "  $14 : global_store $1 $13\n"
                     "}\n");
    ir_task_free(t);
    t = dse_task(&b);
    t->distinct_slots = 1;
    only(t, OPT_DSE, "task kernel \"dse\" {\n"
                     "  $0 = arg i32 #1\n"
                     "  $1 = global_ptr ptr<f32> @a [$0]\n"
                     "  $2 = const f32 1.0\n"
                     "  $3 = const f32 2.0\n"
                     "  $4 = global_ptr ptr<f32> @v [$0 $0 $0]\n"
                     "  $5 = global_load f32 $4\n"
                     "  $6 : global_store $1 $5\n"
                     "  $7 = const f32 0.0\n"
                     "  $8 = gt bool $5 $7\n"
                     "  $9 : if $8 {\n"
                     "    $10 = const f32 5.0\n"
                     "    $11 : global_store $1 $10\n"
                     "  }\n"
                     "  $12 = const f32 6.0\n"
                     "  $13 : global_store $1 $12\n"
                     "}\n");
    ir_task_free(t);
}

static char dumped[256];
static int ndumps;

static void dump(const char *pass, ir_task *t, void *ud)
{
    CHECK(ud == &ndumps && t != NULL);
    ndumps++;
    size_t len = strlen(dumped);
    snprintf(dumped + len, sizeof dumped - len, "%s%s", len ? "," : "", pass);
}

static void test_pipeline(void)
{
    ir_builder b;
    ir_task *t = kernel(&b, "full");
    ir_stmt *n = ir_arg(&b, IR_I32, 1);
    ir_stmt *v = ir_alloca(&b, IR_F32);
    ir_store(&b, v, ir_const_float(&b, IR_F32, 2.0));
    ir_stmt *y = ir_load(&b, v);
    ir_stmt *z = ir_binary(&b, IR_MUL, y, ir_const_float(&b, IR_F32, 3.0));
    ir_global_store(&b, ir_global_ptr(&b, 0, 0, &n), z);
    ir_task *untouched = ir_task_clone(t);
    char err[256];
    /* every pass disabled: nothing changes, nothing dumped */
    ndumps = 0;
    CHECK(opt_run(untouched, OPT_ALL, dump, &ndumps, err, sizeof err) == 0);
    CHECK(ndumps == 0 && ir_task_equal(untouched, t));
    ir_task_free(untouched);
    /* forward the stored 2.0, drop the local, fold 2*3, drop the constants */
    dumped[0] = 0;
    CHECK(opt_run(t, 0, dump, &ndumps, err, sizeof err) == 0);
    CHECK(strcmp(dumped, "forward,dce,fold,dce") == 0);
    if (strcmp(dumped, "forward,dce,fold,dce") != 0)
        fprintf(stderr, "dumped: %s\n", dumped);
    must_verify(t, "pipeline");
    CHECK_TEXT(ir_print_task(t), "task kernel \"full\" {\n"
                                 "  $0 = arg i32 #1\n"
                                 "  $1 = const f32 6.0\n"
                                 "  $2 = global_ptr ptr<f32> @a [$0]\n"
                                 "  $3 : global_store $2 $1\n"
                                 "}\n");
    /* a second run finds nothing */
    ndumps = 0;
    CHECK(opt_run(t, 0, dump, &ndumps, err, sizeof err) == 0 && ndumps == 0);
    ir_task_free(t);
    CHECK(opt_pass_bit("cse") == OPT_CSE && opt_pass_bit("fold") == OPT_FOLD);
    CHECK(opt_pass_bit("dce") == OPT_DCE && opt_pass_bit("nope") == 0 && !opt_pass_bit(NULL));
    CHECK(opt_pass_bit("dse") == OPT_DSE);
    CHECK(opt_run(NULL, 0, NULL, NULL, err, sizeof err) == -1 && strstr(err, "no task"));
}

int main(void)
{
    fields[0] = dense1("a");
    fields[1] = sparse3("v", 1);
    test_fold();
    test_dse();
    test_simplify();
    test_simplify_more();
    test_forward();
    test_cse_values_and_loads();
    test_cse_lookups();
    test_cse_distinct_slots();
    test_cse_store_forwarding();
    test_cse_pointers_across_stores();
    test_dce();
    test_pipeline();
    return ir_test_result("opt_passes");
}
