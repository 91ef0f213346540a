/* Activation demotion on the multigrid restriction pattern (for i in fine: coarse[i/2] += ...):
 * from the second identical restriction on, activations become lookups and the coarse list
 * stays valid — within one flush and across flushes. And the cases where it must not happen:
 * a different IR, a mask changed in between, a different fine list, activation addresses that
 * depend on a launch argument. */
#include "tests/check.h"
#include "toy_ir.h"

#include <string.h>

enum { FINE = 0, COARSE = 2, XF = 0, YC = 1 };

static void launch(toy_env *e, toy_ir *ir, const int32_t *args, const char *name) {
    CHECK_EQ(toy_launch(e, ir, args, name), 0);
}

static void lists(toy_env *e, int snode) {
    launch(e, toy_new(TOY_CLEAR, snode, 0, 0, 0, NULL, 0), NULL, "clear");
    launch(e, toy_new(TOY_LISTGEN, snode, 0, 0, 0, NULL, 0), NULL, "listgen");
}

/* restrict (activates coarse[i/2]) then a smoothing loop over the coarse SNode */
static void iteration(toy_env *e, int c) {
    lists(e, FINE);
    launch(e, TOY_STRUCT_IR(FINE, 0, TS_ACT(COARSE, TA_HALF, 0), TS_ADD(YC, TA_HALF, 0, XF, TA_INDEX, 0, c)),
           NULL, "restrict");
    lists(e, COARSE);
    launch(e, TOY_STRUCT_IR(COARSE, 0, TS_ADDC(YC, TA_INDEX, 0, 1)), NULL, "smooth");
}

static void envs(toy_env *ref, toy_env *opt, uint32_t disabled) {
    sfg_options eager = {.eager = 1}, o = {.disabled_passes = disabled};
    CHECK(!toy_env_init(ref, &eager, 1, 0));
    CHECK(!toy_env_init(opt, &o, 1, 1));
    toy_world_init(&ref->world, 5);
    toy_world_init(&opt->world, 5);
}

static void finish(toy_env *ref, toy_env *opt) {
    CHECK_EQ(sfg_sync(opt->q), 0);
    CHECK(!memcmp(&ref->world, &opt->world, sizeof ref->world));
    CHECK(!opt->ex.bad_order && !opt->ex.missing_dep);
    toy_env_free(ref);
    toy_env_free(opt);
}

static void test_restrict_one_flush(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    for (int k = 0; k < 3; k++) {
        iteration(&ref, 1);
        iteration(&opt, 1);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    const sfg_stats *st = sfg_get_stats(opt.q);
    CHECK_EQ(st->activations_demoted, 2);
    /* one listgen per SNode is left; iterations 2 and 3 lose clear + listgen of both */
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 2);
    CHECK_EQ(st->listgens_removed, 8);
    finish(&ref, &opt);

    /* demotion off: the coarse mask keeps changing, its list is regenerated every time */
    envs(&ref, &opt, SFG_PASS_DEMOTE);
    for (int k = 0; k < 3; k++) {
        iteration(&ref, 1);
        iteration(&opt, 1);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, 0);
    CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 4);
    finish(&ref, &opt);
}

static void test_restrict_across_flushes(void) {
    toy_env ref, opt;
    envs(&ref, &opt, 0);
    for (int k = 0; k < 3; k++) {
        iteration(&ref, 1);
        iteration(&opt, 1);
        CHECK_EQ(sfg_flush(opt.q), 0);
        if (k > 0) {
            /* the first restriction survives as owner of the coarse mask */
            CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), 0);
            CHECK_EQ(toy_last_count(&opt, SFG_STRUCT_FOR), 2);
        }
    }
    CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, 2);
    finish(&ref, &opt);
}

static void test_not_demoted(void) {
    toy_env ref, opt;
    toy_env *e[2] = {&ref, &opt};

    /* a different IR (another constant) activates the same cells, but the SFG cannot know */
    envs(&ref, &opt, 0);
    for (int j = 0; j < 2; j++) {
        iteration(e[j], 1);
        iteration(e[j], 2);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, 0);
    finish(&ref, &opt);

    /* the coarse mask changes in between (a deactivation) */
    envs(&ref, &opt, 0);
    for (int j = 0; j < 2; j++) {
        iteration(e[j], 1);
        launch(e[j], TOY_SERIAL_IR(0, TS_DEACT(COARSE, TA_CONST, 3)), NULL, "deactivate");
        iteration(e[j], 1);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, 0);
    finish(&ref, &opt);

    /* the fine mask changes: the restriction loops over a different list */
    envs(&ref, &opt, 0);
    for (int j = 0; j < 2; j++) {
        iteration(e[j], 1);
        launch(e[j], TOY_SERIAL_IR(0, TS_ACT(FINE, TA_CONST, 30)), NULL, "activate");
        iteration(e[j], 1);
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, 0);
    finish(&ref, &opt);

    /* activation at an address given by a launch argument: not a function of the index */
    envs(&ref, &opt, 0);
    int32_t a1 = 4, a2 = 17;
    for (int j = 0; j < 2; j++) {
        launch(e[j], TOY_SERIAL_IR(1, TS_ACT(COARSE, TA_ARG, 0)), &a1, "act@arg");
        launch(e[j], TOY_SERIAL_IR(1, TS_ACT(COARSE, TA_ARG, 0)), &a2, "act@arg");
        lists(e[j], COARSE);
        launch(e[j], TOY_STRUCT_IR(COARSE, 0, TS_ADDC(YC, TA_INDEX, 0, 1)), NULL, "smooth");
    }
    CHECK_EQ(sfg_flush(opt.q), 0);
    CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, 0);
    finish(&ref, &opt);
}

/* Two different IRs over one range both activate the coarse cell of each index (a solver's
 * kernels writing their results at each voxel of one domain): the second one's activations are
 * no-ops whatever its IR, and the smoothing between them no longer orders it. Not when the
 * second activates off the index, or over more indices than the first; and not when nothing
 * read the mask between them (nothing to gain). */
static void other_ir(toy_env *e, int b_off, int a_end, int between) {
    launch(e, TOY_RANGE_IR(0, a_end, 0, TS_ACT(COARSE, TA_INDEX, 0), TS_STORE(2, TA_INDEX, 0, 5)),
           NULL, "A");
    if (between) {
        lists(e, COARSE);
        launch(e, TOY_STRUCT_IR(COARSE, 0, TS_ADDC(YC, TA_INDEX, 0, 1)), NULL, "smooth");
    }
    launch(e, TOY_RANGE_IR(0, TOY_N - 1, 0, TS_ACT(COARSE, TA_INDEX, b_off),
                           TS_STORE(3, TA_INDEX, 0, 7)),
           NULL, "B");
    lists(e, COARSE);
    launch(e, TOY_STRUCT_IR(COARSE, 0, TS_ADDC(YC, TA_INDEX, 0, 1)), NULL, "smooth");
}

static void test_other_ir_at_index(void) {
    static const struct {
        int b_off, a_end, between, demoted, listgens;
    } cases[] = {{0, TOY_N - 1, 1, 1, 1},
                 {1, TOY_N - 1, 1, 0, 2},
                 {0, TOY_N / 2, 1, 0, 2},
                 {0, TOY_N - 1, 0, 0, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        toy_env ref, opt;
        envs(&ref, &opt, 0);
        other_ir(&ref, cases[c].b_off, cases[c].a_end, cases[c].between);
        other_ir(&opt, cases[c].b_off, cases[c].a_end, cases[c].between);
        CHECK_EQ(sfg_flush(opt.q), 0);
        CHECK_EQ(sfg_get_stats(opt.q)->activations_demoted, (uint64_t)cases[c].demoted);
        /* demoted, B no longer changes the coarse mask: the second list is the first one */
        CHECK_EQ(toy_last_count(&opt, SFG_LISTGEN), cases[c].listgens);
        finish(&ref, &opt);
    }
}

int main(void) {
    test_other_ir_at_index();
    test_restrict_one_flush();
    test_restrict_across_flushes();
    test_not_demoted();
    CHECK_DONE();
}
