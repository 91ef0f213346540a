/* Task fusion: what must fuse and what must not (the paper's two races, a path of length 2,
 * mismatched ranges and lists, side effects), where the fused task lands, and that results
 * match eager execution with parallel loops run backwards in the optimized run. */
#include "tests/check.h"
#include "toy_ir.h"

#include <string.h>

enum { X = 0, Y = 1, Z = 2, W = 3, V = 4, S = TOY_SCALAR };

typedef void (*program)(toy_env *e);

/* Runs p eagerly (forward) and optimized (backward) from the same world; returns the optimized
 * env's stats through *st and the last batch through `opt_env` (freed by the caller). */
static void run_both(program p, uint32_t disabled, toy_env *opt_env) {
    sfg_options eager = {.eager = 1};
    sfg_options opt = {.disabled_passes = disabled};
    toy_env ref;
    CHECK(!toy_env_init(&ref, &eager, 1, 0));
    CHECK(!toy_env_init(opt_env, &opt, 1, 1));
    toy_world_init(&ref.world, 7);
    toy_world_init(&opt_env->world, 7);
    p(&ref);
    p(opt_env);
    CHECK_EQ(sfg_sync(ref.q), 0);
    CHECK_EQ(sfg_sync(opt_env->q), 0);
    CHECK(!memcmp(&ref.world, &opt_env->world, sizeof ref.world));
    CHECK(!opt_env->ex.bad_order && !opt_env->ex.missing_dep);
    toy_env_free(&ref);
}

static void launch(toy_env *e, toy_ir *ir, const int32_t *args, const char *name) {
    CHECK_EQ(toy_launch(e, ir, args, name), 0);
}

static void chain_copy(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), NULL, "y=x+1");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Z, TA_INDEX, 0, Y, TA_INDEX, 0, 4)), NULL, "z=y+4");
}

static void increments(toy_env *e) {
    for (int i = 0; i < 10; i++)
        launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(X, TA_INDEX, 0, 1)), NULL, "inc");
}

static void test_chain_and_increments(void) {
    toy_env e;
    run_both(chain_copy, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 1);
    toy_env_free(&e);

    run_both(increments, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 9);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_launched, 1);
    toy_env_free(&e);

    /* with fusion disabled nothing fuses */
    run_both(increments, SFG_PASS_FUSION, &e);
    CHECK_EQ(e.ex.last_n, 10);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    toy_env_free(&e);
}

/* for i in x: x[i] = 1;  for i in x: x[i + 1] = 2 — not element-wise: must not fuse. */
static void race_shift_range(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(X, TA_INDEX, 0, 1)), NULL, "x[i]=1");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(X, TA_INDEX, 1, 2)), NULL, "x[i+1]=2");
}

static void race_shift_struct(toy_env *e) {
    launch(e, toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), NULL, "clear");
    launch(e, toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), NULL, "listgen");
    launch(e, TOY_STRUCT_IR(0, 0, TS_STORE(X, TA_INDEX, 0, 1)), NULL, "x[i]=1");
    launch(e, TOY_STRUCT_IR(0, 0, TS_STORE(X, TA_INDEX, 1, 2)), NULL, "x[i+1]=2");
}

/* y[0] = 0 in every iteration, then y[0] += x[i]: the store is not unique per iteration. */
static void race_reduction(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(S, TA_CONST, 0, 0)), NULL, "y[0]=0");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADD(S, TA_CONST, 0, X, TA_INDEX, 0, 0)), NULL, "y[0]+=x[i]");
}

/* two reductions into y[0]: both atomic adds, they commute and may fuse */
static void two_reductions(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(S, TA_CONST, 0, 1)), NULL, "y[0]+=1");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADD(S, TA_CONST, 0, X, TA_INDEX, 0, 0)), NULL, "y[0]+=x[i]");
}

static void test_races(void) {
    toy_env e;
    run_both(race_shift_range, 0, &e);
    CHECK_EQ(e.ex.last_n, 2);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    toy_env_free(&e);

    run_both(race_shift_struct, 0, &e);
    CHECK_EQ(toy_last_count(&e, SFG_STRUCT_FOR), 2);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    toy_env_free(&e);

    run_both(race_reduction, 0, &e);
    CHECK_EQ(e.ex.last_n, 2);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    toy_env_free(&e);

    run_both(two_reductions, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 1);
    toy_env_free(&e);
}

/* A -> B directly (y) and A -> C -> B (C over another range): A and B must not fuse. */
static void path_of_two(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), NULL, "A");
    launch(e, TOY_RANGE_IR(0, 16, 0, TS_COPY(Z, TA_INDEX, 0, Y, TA_INDEX, 0, 1)), NULL, "C");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(W, TA_INDEX, 0, Z, TA_INDEX, 0, 0),
                           TS_COPY(V, TA_INDEX, 0, Y, TA_INDEX, 0, 0)),
           NULL, "B");
}

static void path_of_one(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), NULL, "A");
    launch(e, TOY_RANGE_IR(0, 16, 0, TS_COPY(Z, TA_INDEX, 0, X, TA_INDEX, 0, 1)), NULL, "C");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(W, TA_INDEX, 0, Z, TA_INDEX, 0, 0),
                           TS_COPY(V, TA_INDEX, 0, Y, TA_INDEX, 0, 0)),
           NULL, "B");
}

static void test_paths(void) {
    toy_env e;
    run_both(path_of_two, 0, &e);
    CHECK_EQ(e.ex.last_n, 3);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    toy_env_free(&e);

    /* C no longer depends on A: A and B fuse, and the fused task must wait for C */
    run_both(path_of_one, 0, &e);
    CHECK_EQ(e.ex.last_n, 2);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 1);
    CHECK(!strcmp(e.ex.last_name[0], "C"));
    CHECK(!strcmp(e.ex.last_name[1], "A+B"));
    toy_env_free(&e);
}

/* A writes y; E (another range) reads y; B is independent of E: the fused A+B goes before E. */
static void fused_before_reader(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), NULL, "A");
    launch(e, TOY_RANGE_IR(0, 16, 0, TS_COPY(Z, TA_INDEX, 0, Y, TA_INDEX, 0, 1)), NULL, "E");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(W, TA_INDEX, 0, X, TA_INDEX, 0, 3)), NULL, "B");
}

static void test_placement(void) {
    toy_env e;
    run_both(fused_before_reader, 0, &e);
    CHECK_EQ(e.ex.last_n, 2);
    CHECK(!strcmp(e.ex.last_name[0], "A+B"));
    CHECK(!strcmp(e.ex.last_name[1], "E"));
    toy_env_free(&e);
}

static void mismatched(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(X, TA_INDEX, 0, 1)), NULL, "full");
    launch(e, TOY_RANGE_IR(0, 16, 0, TS_STORE(Y, TA_INDEX, 0, 1)), NULL, "half");
    toy_ir *fx = TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Z, TA_INDEX, 0, 1));
    toy_ir *fy = TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(W, TA_INDEX, 0, 1));
    fx->side_effects = fy->side_effects = 1;
    launch(e, fx, NULL, "print1");
    launch(e, fy, NULL, "print2");
}

static void serials(toy_env *e) {
    launch(e, TOY_SERIAL_IR(0, TS_STORE(S, TA_CONST, 0, 1)), NULL, "s=1");
    launch(e, TOY_SERIAL_IR(0, TS_STORE(X, TA_CONST, 3, 5), TS_ADD(S, TA_CONST, 0, X, TA_CONST, 3, 0)),
           NULL, "x[3]=5;s+=x[3]");
}

static void with_args(toy_env *e) {
    int32_t a = 5, b = 7;
    launch(e, TOY_RANGE_IR(0, TOY_N, 1, TS_STORE_ARG(X, TA_INDEX, 0, 0)), &a, "x=arg");
    launch(e, TOY_RANGE_IR(0, TOY_N, 1, TS_STORE_ARG(Y, TA_INDEX, 0, 0)), &b, "y=arg");
}

static void test_types(void) {
    toy_env e;
    run_both(mismatched, 0, &e);
    CHECK_EQ(e.ex.last_n, 4);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    toy_env_free(&e);

    run_both(serials, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(e.world.val[S][0], 6);
    toy_env_free(&e);

    run_both(with_args, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(e.world.val[X][3], 5);
    CHECK_EQ(e.world.val[Y][3], 7);
    toy_env_free(&e);
}

/* Paper fig. 7: two struct-for kernels over a sparse x, each with clear_list + listgen. After
 * listgen removal the second loop reads the same list and fuses with the first. */
static void two_struct_kernels(toy_env *e) {
    for (int k = 0; k < 2; k++) {
        launch(e, toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), NULL, "clear");
        launch(e, toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), NULL, "listgen");
        launch(e, TOY_STRUCT_IR(0, 0, TS_ADDC(X, TA_INDEX, 0, 1 + k)), NULL, "inc");
    }
}

/* The mask of SNode 0 changes between the loops: the lists differ, no fusion. */
static void struct_lists_differ(toy_env *e) {
    launch(e, toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), NULL, "clear");
    launch(e, toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), NULL, "listgen");
    launch(e, TOY_STRUCT_IR(0, 0, TS_ADDC(X, TA_INDEX, 0, 1)), NULL, "inc");
    launch(e, TOY_SERIAL_IR(0, TS_ACT(0, TA_CONST, 5)), NULL, "activate");
    launch(e, toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), NULL, "clear");
    launch(e, toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), NULL, "listgen");
    launch(e, TOY_STRUCT_IR(0, 0, TS_ADDC(X, TA_INDEX, 0, 2)), NULL, "inc2");
}

static void test_struct_for(void) {
    toy_env e;
    run_both(two_struct_kernels, 0, &e);
    CHECK_EQ(e.ex.last_n, 3);
    CHECK_EQ(toy_last_count(&e, SFG_STRUCT_FOR), 1);
    CHECK_EQ(toy_last_count(&e, SFG_LISTGEN), 1);
    CHECK_EQ(sfg_get_stats(e.q)->listgens_removed, 2);
    toy_env_free(&e);

    /* without listgen removal the second loop reads a new list version: no fusion */
    run_both(two_struct_kernels, SFG_PASS_LISTGEN, &e);
    CHECK_EQ(toy_last_count(&e, SFG_STRUCT_FOR), 2);
    toy_env_free(&e);

    run_both(struct_lists_differ, 0, &e);
    CHECK_EQ(toy_last_count(&e, SFG_STRUCT_FOR), 2);
    CHECK_EQ(toy_last_count(&e, SFG_LISTGEN), 2);
    toy_env_free(&e);
}

static toy_ir *tagged(toy_ir *ir, int family, int heavy) {
    if (ir) {
        ir->family = (uint8_t)family;
        ir->heavy = (uint8_t)heavy;
    }
    return ir;
}

/* Two kernels applied to two fields each, interleaved (as one node graph advects channel by
 * channel): a1 b1 a2 b2, all independent and heavy; fusing across families is declined. */
static void families(toy_env *e) {
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 1, 1)), 1, 1),
           NULL, "a1");
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Z, TA_INDEX, 0, X, TA_INDEX, -1, 2)), 2, 1),
           NULL, "b1");
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(W, TA_INDEX, 0, V, TA_INDEX, 1, 1)), 1, 1),
           NULL, "a2");
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(5, TA_INDEX, 0, V, TA_INDEX, -1, 2)), 2, 1),
           NULL, "b2");
}

/* a (heavy), b (heavy, another family), c (light): a's nearest partner b declines; a must then
 * try c, in a later round, rather than stop. */
static void declined_then_other(toy_env *e) {
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), 1, 1),
           NULL, "a");
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Z, TA_INDEX, 0, X, TA_INDEX, 0, 2)), 2, 1),
           NULL, "b");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(W, TA_INDEX, 0, Y, TA_INDEX, 0, 3)), NULL, "c");
}

/* a (heavy), b (heavy, another family), c and d (light). */
static void heavy_then_light(toy_env *e) {
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), 1, 1),
           NULL, "a");
    launch(e, tagged(TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Z, TA_INDEX, 0, X, TA_INDEX, 0, 2)), 2, 1),
           NULL, "b");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(W, TA_INDEX, 0, Y, TA_INDEX, 0, 3)), NULL, "c");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(V, TA_INDEX, 0, W, TA_INDEX, 0, 4)), NULL, "d");
}

static int has_task(const toy_env *e, const char *name) {
    for (uint32_t i = 0; i < e->ex.last_n; i++)
        if (!strcmp(e->ex.last_name[i], name))
            return 1;
    return 0;
}

static void test_partners(void) {
    toy_env e;
    run_both(families, 0, &e);
    CHECK_EQ(e.ex.last_n, 2);
    CHECK(has_task(&e, "a1+a2"));
    CHECK(has_task(&e, "b1+b2"));
    /* the IR side is asked once per pair, while partners are chosen: round 1 a1+a2 and b1+b2
     * (relatives first; only a1+a2 is applied, the two intervals overlap) and a2+b2 (a2 has no
     * relative after it, so it asks a stranger: refused); round 2 the fused a1a2 (family none)
     * with b1 and with b2 (both refused); round 3 a1a2 with b1b2 (refused): six */
    CHECK_EQ(e.cnt.fuses, 6);
    toy_env_free(&e);

    /* The same launches flushed twice choose the same pairs, so the second flush asks the IR
     * side nothing new. (When refusals were only learnt by trying, the first flush paired a
     * with b, was refused, and fused c+d then a+cd; the second skipped b and fused a+c then
     * ac+d: a new task to compile, which the smoke solver met in each of its first frames.) */
    sfg_options o = {0};
    CHECK(!toy_env_init(&e, &o, 1, 1));
    toy_world_init(&e.world, 7);
    heavy_then_light(&e);
    CHECK_EQ(sfg_sync(e.q), 0);
    uint32_t n1 = e.ex.last_n;
    uint64_t asked = e.cnt.fuses;
    char first[TOY_MAX_BATCH][64];
    memcpy(first, e.ex.last_name, sizeof first);
    CHECK_EQ(n1, 2);
    heavy_then_light(&e);
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK_EQ(e.cnt.fuses, asked);
    CHECK_EQ(e.ex.last_n, n1);
    for (uint32_t i = 0; i < n1 && i < e.ex.last_n; i++)
        CHECK(!strcmp(first[i], e.ex.last_name[i]));
    toy_env_free(&e);

    run_both(declined_then_other, 0, &e);
    CHECK_EQ(e.ex.last_n, 2);
    CHECK(has_task(&e, "a+c"));
    CHECK(has_task(&e, "b"));
    toy_env_free(&e);
}

/* Tags (who launched a task) reach the executor: a fused task has its parts' distinct tags, in
 * order, and says when a part had none or there were too many to keep; the memo's replay of
 * the same launches keeps them, and launches differing only in tags are not replayed alike. */
static const char *const who[6] = {"n0", "n1", "n2", "n3", "n4", "n5"};
static const char *const *tag_set = who;
static void tagged_chain(toy_env *e) {
    toy_launch_tagged(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Y, TA_INDEX, 0, X, TA_INDEX, 0, 1)), NULL, "y", tag_set[0]);
    toy_launch_tagged(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Z, TA_INDEX, 0, Y, TA_INDEX, 0, 4)), NULL, "z", tag_set[1]);
    toy_launch_tagged(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(Z, TA_INDEX, 0, 1)), NULL, "z+", tag_set[0]);
}

static void many_tags(toy_env *e) {
    for (int i = 0; i < 6; i++)
        toy_launch_tagged(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(X, TA_INDEX, 0, 1)), NULL, "inc", who[i]);
}

static void test_tags(void) {
    toy_env e;
    run_both(tagged_chain, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(e.ex.last_tags[0].n, 2);
    CHECK(e.ex.last_tags[0].tag[0] == who[0] && e.ex.last_tags[0].tag[1] == who[1]);
    CHECK_EQ(e.ex.last_tags[0].more, 0);
    /* flushed again (twice: the first finds the first's tasks as its predecessors, the second
     * repeats it): replayed from the memo, tags and all */
    uint64_t memo = sfg_get_stats(e.q)->flushes_memoized;
    tagged_chain(&e);
    CHECK_EQ(sfg_sync(e.q), 0);
    tagged_chain(&e);
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK(sfg_get_stats(e.q)->flushes_memoized > memo);
    CHECK(e.ex.last_tags[0].n == 2 && e.ex.last_tags[0].tag[1] == who[1]);
    /* the same launches by others: not the memo's entry for the first */
    static const char *const others[2] = {"m0", "m1"};
    tag_set = others;
    tagged_chain(&e);
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK(e.ex.last_tags[0].n == 2 && e.ex.last_tags[0].tag[0] == others[0] &&
          e.ex.last_tags[0].tag[1] == others[1]);
    tag_set = who;
    /* one part without a tag */
    toy_launch_tagged(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(X, TA_INDEX, 0, 1)), NULL, "a", who[2]);
    toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(X, TA_INDEX, 0, 1)), NULL, "b");
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK(e.ex.last_tags[0].n == 1 && e.ex.last_tags[0].tag[0] == who[2] && e.ex.last_tags[0].more == 1);
    toy_env_free(&e);

    run_both(many_tags, 0, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(e.ex.last_tags[0].n, SFG_MAX_TAGS);
    CHECK_EQ(e.ex.last_tags[0].more, 1);
    toy_env_free(&e);

    /* eager: each task with its own */
    sfg_options eager = {.eager = 1};
    CHECK(!toy_env_init(&e, &eager, 1, 0));
    toy_world_init(&e.world, 7);
    toy_launch_tagged(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(X, TA_INDEX, 0, 1)), NULL, "a", who[3]);
    CHECK(e.ex.last_n == 1 && e.ex.last_tags[0].n == 1 && e.ex.last_tags[0].tag[0] == who[3]);
    toy_env_free(&e);
}

int main(void) {
    test_tags();
    test_chain_and_increments();
    test_partners();
    test_races();
    test_paths();
    test_placement();
    test_types();
    test_struct_for();
    CHECK_DONE();
}
