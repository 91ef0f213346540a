/* List-generation removal: a list still valid across two flushes, within one flush, through a
 * parent list; and the cases where the list must be regenerated (mask written by a task or by
 * the host, parent list regenerated, a listgen that appends without a clear, forgotten state). */
#include "tests/check.h"
#include "toy_ir.h"

#include <string.h>

static void launch(toy_env *e, toy_ir *ir, const char *name) { CHECK_EQ(toy_launch(e, ir, NULL, name), 0); }

/* clear_list + listgen + struct-for over `snode` adding `c` to x. */
static void kernel(toy_env *e, int snode, int c) {
    launch(e, toy_new(TOY_CLEAR, snode, 0, 0, 0, NULL, 0), "clear");
    launch(e, toy_new(TOY_LISTGEN, snode, 0, 0, 0, NULL, 0), "listgen");
    launch(e, TOY_STRUCT_IR(snode, 0, TS_ADDC(0, TA_INDEX, 0, c)), "inc");
}

/* An optimized env (fusion off, to count tasks plainly) and an eager reference. */
static void envs(toy_env *ref, toy_env *opt, uint32_t disabled) {
    sfg_options eager = {.eager = 1}, o = {.disabled_passes = disabled | SFG_PASS_FUSION};
    CHECK(!toy_env_init(ref, &eager, 1, 0));
    CHECK(!toy_env_init(opt, &o, 1, 1));
    toy_world_init(&ref->world, 3);
    toy_world_init(&opt->world, 3);
}

static void finish(toy_env *ref, toy_env *opt) {
    CHECK_EQ(sfg_sync(opt->q), 0);
    CHECK(!memcmp(&ref->world, &opt->world, sizeof ref->world));
    toy_env_free(ref);
    toy_env_free(opt);
}

static void test_across_flushes(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    for (int round = 0; round < 3; round++) {
        kernel(&ref, 0, 1);
        kernel(&opt, 0, 1);
        CHECK_EQ(sfg_flush(opt.q), 0);
        if (round == 0) {
            CHECK_EQ(opt.ex.last_n, 3);
        } else {
            /* the listgen survivor of the first flush still owns an up-to-date list */
            CHECK_EQ(opt.ex.last_n, 1);
            CHECK_EQ(opt.ex.last_type[0], SFG_STRUCT_FOR);
        }
    }
    CHECK_EQ(sfg_get_stats(opt.q)->listgens_removed, 4);
    CHECK_EQ(sfg_get_stats(opt.q)->listgens, 1);
    finish(&ref, &opt);
}

static void test_within_flush(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    for (int k = 0; k < 4; k++) {
        kernel(&ref, 0, k);
        kernel(&opt, 0, k);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 1);
    CHECK_EQ(toy_last_count(&opt, SFG_CLEAR_LIST), 1);
    CHECK_EQ(toy_last_count(&opt, SFG_STRUCT_FOR), 4);
    finish(&ref, &opt);

    /* the pass disabled: every listgen runs */
    envs(&ref, &opt, SFG_PASS_LISTGEN);
    for (int k = 0; k < 4; k++) {
        kernel(&ref, 0, k);
        kernel(&opt, 0, k);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 4);
    CHECK_EQ(sfg_get_stats(opt.q)->listgens_removed, 0);
    finish(&ref, &opt);
}

static void test_mask_written(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_flush(opt.q), 0);
    /* a task activates a cell of SNode 0: the next list differs */
    launch(&ref, TOY_SERIAL_IR(0, TS_ACT(0, TA_CONST, 9)), "activate");
    launch(&opt, TOY_SERIAL_IR(0, TS_ACT(0, TA_CONST, 9)), "activate");
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 1);
    CHECK_EQ(sfg_get_stats(opt.q)->listgens_removed, 0);
    finish(&ref, &opt);

    /* the host writes the mask between two flushes */
    envs(&ref, &opt, 0);
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_sync(opt.q), 0);
    ref.world.mask[0][11] = 1;
    opt.world.mask[0][11] = 1;
    sfg_state m = SFG_STATE(SFG_MASK, 0);
    CHECK_EQ(sfg_host_write(opt.q, &m, 1), 0);
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 1);
    finish(&ref, &opt);

    /* sfg_forget: nothing earlier is trusted */
    envs(&ref, &opt, 0);
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_sync(opt.q), 0);
    CHECK_EQ(sfg_forget(opt.q), 0);
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 1);
    finish(&ref, &opt);
}

/* SNode 1's listgen reads list(0): it stays valid while both its mask and list(0) do. */
static void test_parent_list(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    for (int k = 0; k < 2; k++) {
        toy_env *e[2] = {&ref, &opt};
        for (int j = 0; j < 2; j++) {
            launch(e[j], toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), "clear0");
            launch(e[j], toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), "listgen0");
            kernel(e[j], 1, 2);
        }
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 2);
    CHECK_EQ(sfg_get_stats(opt.q)->listgens_removed, 4);
    /* the parent's mask changes: list(0) is regenerated, so list(1) must be too */
    toy_env *e[2] = {&ref, &opt};
    for (int j = 0; j < 2; j++) {
        launch(e[j], TOY_SERIAL_IR(0, TS_ACT(0, TA_CONST, 13)), "activate0");
        launch(e[j], toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), "clear0");
        launch(e[j], toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), "listgen0");
        kernel(e[j], 1, 2);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 2);
    finish(&ref, &opt);
}

/* A listgen that appends to a list nobody cleared produces a longer list: never removed. */
static void test_append_without_clear(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    toy_env *e[2] = {&ref, &opt};
    for (int j = 0; j < 2; j++) {
        launch(e[j], toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), "listgen");
        launch(e[j], TOY_STRUCT_IR(0, 0, TS_ADDC(0, TA_INDEX, 0, 1)), "inc");
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 2);
    CHECK_EQ(sfg_get_stats(opt.q)->listgens_removed, 0);
    finish(&ref, &opt);
}

/* A clear_list that ran in an earlier flush emptied the list: the listgen after it stays. */
static void test_executed_clear(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    toy_env *e[2] = {&ref, &opt};
    kernel(&ref, 0, 1);
    kernel(&opt, 0, 1);
    CHECK_EQ(sfg_flush(opt.q), 0);
    for (int j = 0; j < 2; j++)
        launch(e[j], toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), "clear");
    CHECK_EQ(sfg_flush(opt.q), 0);
    for (int j = 0; j < 2; j++) {
        launch(e[j], toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), "listgen");
        launch(e[j], TOY_STRUCT_IR(0, 0, TS_ADDC(0, TA_INDEX, 0, 1)), "inc");
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 1);
    CHECK_EQ(sfg_get_stats(opt.q)->listgens_removed, 0);
    finish(&ref, &opt);
}

int main(void) {
    test_executed_clear();
    test_across_flushes();
    test_within_flush();
    test_mask_written();
    test_parent_list();
    test_append_without_clear();
    CHECK_DONE();
}
