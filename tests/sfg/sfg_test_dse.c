/* Dead-store elimination: an overwritten store goes (and its task when it becomes empty); a
 * store read in between, the last version of a field, a store overwritten by a read-modify-
 * write, or by a loop over another range or list, stays. The paper's clear() example and the
 * autodiff loss/gradient pattern. */
#include "tests/check.h"
#include "toy_ir.h"

#include <string.h>

enum { X = 0, Y = 1, Z = 2, G = 3, S = TOY_SCALAR };

typedef void (*program)(toy_env *e);

static void launch(toy_env *e, toy_ir *ir, const char *name) { CHECK_EQ(toy_launch(e, ir, NULL, name), 0); }

static void run_both(program p, uint32_t disabled, toy_env *opt) {
    sfg_options eager = {.eager = 1}, o = {.disabled_passes = disabled};
    toy_env ref;
    CHECK(!toy_env_init(&ref, &eager, 1, 0));
    CHECK(!toy_env_init(opt, &o, 1, 1));
    toy_world_init(&ref.world, 9);
    toy_world_init(&opt->world, 9);
    p(&ref);
    p(opt);
    CHECK_EQ(sfg_sync(opt->q), 0);
    CHECK(!memcmp(&ref.world, &opt->world, sizeof ref.world));
    toy_env_free(&ref);
}

static void overwritten(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 1)), "y=1");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 2)), "y=2");
}

static void read_between(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 1)), "y=1");
    launch(e, TOY_RANGE_IR(0, 16, 0, TS_COPY(Z, TA_INDEX, 0, Y, TA_INDEX, 1, 0)), "z=y[i+1]");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 2)), "y=2");
}

static void last_version(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 1)), "y=1");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Z, TA_INDEX, 0, 1)), "z=1");
}

static void rmw_after(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 1)), "y=1");
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(Y, TA_INDEX, 0, 2)), "y+=2");
}

/* the later loop covers only [0, 16): cells 16..31 of the first store survive */
static void partial_cover(toy_env *e) {
    launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 1)), "y=1");
    launch(e, TOY_RANGE_IR(0, 16, 0, TS_STORE(Y, TA_INDEX, 0, 2)), "y[:16]=2");
}

/* the paper's clear(); inc_x() (which reads x back); clear(): y = 0 in the first clear is
 * dead, x = 0 is not */
static void clear_example(toy_env *e) {
    for (int k = 0; k < 2; k++) {
        launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(X, TA_INDEX, 0, 0), TS_STORE(Y, TA_INDEX, 0, 0)),
               "clear");
        if (k)
            continue;
        launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(X, TA_INDEX, 0, 1)), "inc_x");
        launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_COPY(Z, TA_INDEX, 0, X, TA_INDEX, 0, 0)), "show_x");
    }
}

/* struct-for stores over the same list: the later one covers the earlier one */
static void struct_cover(toy_env *e) {
    launch(e, toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), "clear");
    launch(e, toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), "listgen");
    launch(e, TOY_STRUCT_IR(0, 0, TS_STORE(Y, TA_INDEX, 0, 4)), "y=4");
    launch(e, TOY_STRUCT_IR(0, 0, TS_STORE(Y, TA_INDEX, 0, 5)), "y=5");
}

static void test_basic(void) {
    const uint32_t nofuse = SFG_PASS_FUSION;
    toy_env e;
    run_both(overwritten, nofuse, &e);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK(!strcmp(e.ex.last_name[0], "y=2"));
    CHECK_EQ(sfg_get_stats(e.q)->stores_eliminated, 1);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_eliminated, 1);
    toy_env_free(&e);

    run_both(overwritten, nofuse | SFG_PASS_DSE, &e);
    CHECK_EQ(e.ex.last_n, 2);
    toy_env_free(&e);

    program keep[] = {read_between, last_version, rmw_after, partial_cover};
    int keep_n[] = {3, 2, 2, 2};
    for (int i = 0; i < 4; i++) {
        run_both(keep[i], nofuse, &e);
        CHECK_EQ(e.ex.last_n, keep_n[i]);
        CHECK_EQ(sfg_get_stats(e.q)->stores_eliminated, 0);
        toy_env_free(&e);
    }

    run_both(clear_example, nofuse, &e);
    CHECK_EQ(e.ex.last_n, 4);
    CHECK_EQ(sfg_get_stats(e.q)->stores_eliminated, 1);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_eliminated, 0);
    toy_env_free(&e);

    run_both(struct_cover, nofuse, &e);
    CHECK_EQ(toy_last_count(&e, SFG_STRUCT_FOR), 1);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_eliminated, 1);
    toy_env_free(&e);
}

/* A store that survived a flush is never touched: it already ran. */
static void test_across_flush(void) {
    sfg_options o = {.disabled_passes = SFG_PASS_FUSION};
    toy_env e;
    CHECK(!toy_env_init(&e, &o, 1, 0));
    launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 1)), "y=1");
    CHECK_EQ(sfg_flush(e.q), 0);
    launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_STORE(Y, TA_INDEX, 0, 2)), "y=2");
    CHECK_EQ(sfg_flush(e.q), 0);
    CHECK_EQ(e.ex.tasks, 2);
    CHECK_EQ(sfg_get_stats(e.q)->stores_eliminated, 0);
    toy_env_free(&e);
}

/* Autodiff: each step clears the loss, reduces into it and accumulates a gradient. Only the
 * last loss survives; the earlier clears and reductions go, the gradient tasks stay. */
static void autodiff(toy_env *e) {
    for (int k = 0; k < 10; k++) {
        launch(e, TOY_SERIAL_IR(0, TS_STORE(S, TA_CONST, 0, 0)), "loss=0");
        launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADD(S, TA_CONST, 0, X, TA_INDEX, 0, 0)), "loss+=x");
        launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADD(G, TA_INDEX, 0, X, TA_INDEX, 0, 2)), "grad");
    }
}

static void test_autodiff(void) {
    toy_env e;
    run_both(autodiff, SFG_PASS_FUSION, &e);
    CHECK_EQ(e.ex.last_n, 12);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_eliminated, 18);
    CHECK_EQ(e.world.val[S][0] != 0, 1);
    toy_env_free(&e);

    /* with fusion too: fewer tasks still, same fields */
    run_both(autodiff, 0, &e);
    CHECK(e.ex.last_n < 12);
    toy_env_free(&e);
}

int main(void) {
    test_basic();
    test_across_flush();
    test_autodiff();
    CHECK_DONE();
}
