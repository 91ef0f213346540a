/* Windows of thousands of tasks: a long chain fuses into one task in O(log n) rounds with the
 * IR bank answering repeated pairs; a window larger than one reachability block; a mixed
 * window checked against eager; a window where nothing may fuse (every candidate examined).
 * Prints the optimizer time of each (speed itself is benchmarked elsewhere; ctest's timeout
 * guards against a quadratic blow-up). */
#include "tests/check.h"
#include "toy_ir.h"

#include <string.h>

static void chain(int n) {
    toy_env e;
    CHECK(!toy_env_init(&e, NULL, 1, 1));
    for (int i = 0; i < n; i++)
        CHECK_EQ(toy_launch(&e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(0, TA_INDEX, 0, 1)), NULL, "inc"), 0);
    int fuses_before = e.cnt.fuses;
    CHECK_EQ(sfg_sync(e.q), 0);
    const sfg_stats *st = sfg_get_stats(e.q);
    CHECK_EQ(e.ex.last_n, 1);
    CHECK_EQ(st->tasks_fused, (uint64_t)n - 1);
    CHECK_EQ(e.world.val[0][5], n);
    /* identical pairs fuse once per round: a few dozen fuse calls at most, not n */
    CHECK(e.cnt.fuses - fuses_before <= 64);
    printf("chain of %d increments: 1 task, %d fuse calls, optimizer %.3f s\n", n,
           e.cnt.fuses - fuses_before, st->optimizer_s);
    toy_env_free(&e);
}

/* Eight fields; element-wise copies over two ranges, stencil reads, reductions. */
static void mixed(int n) {
    sfg_options eager = {.eager = 1};
    toy_env ref, opt;
    CHECK(!toy_env_init(&ref, &eager, 1, 0));
    CHECK(!toy_env_init(&opt, NULL, 1, 1));
    toy_world_init(&ref.world, 11);
    toy_world_init(&opt.world, 11);
    toy_env *e[2] = {&ref, &opt};
    for (int i = 0; i < n; i++) {
        int f = i % 6, g = (i * 7 + 3) % 6, end = (i / 6) % 2 ? 16 : TOY_N;
        for (int j = 0; j < 2; j++) {
            toy_ir *ir;
            switch (i % 5) {
            case 0: ir = TOY_RANGE_IR(0, end, 0, TS_ADD(6, TA_CONST, 0, f, TA_INDEX, 0, 0)); break;
            case 1: ir = TOY_RANGE_IR(0, end, 0, TS_COPY(f, TA_INDEX, 0, g == f ? 6 : g, TA_INDEX, 1, 1)); break;
            default: ir = TOY_RANGE_IR(0, end, 0, TS_ADDC(f, TA_INDEX, 0, 1)); break;
            }
            CHECK_EQ(toy_launch(e[j], ir, NULL, "t"), 0);
        }
    }
    CHECK_EQ(sfg_sync(opt.q), 0);
    CHECK(!memcmp(&ref.world, &opt.world, sizeof ref.world));
    const sfg_stats *st = sfg_get_stats(opt.q);
    CHECK(st->tasks_launched < (uint64_t)n);
    printf("mixed window of %d tasks: %llu launched, %llu fused, optimizer %.3f s\n", n,
           (unsigned long long)st->tasks_launched, (unsigned long long)st->tasks_fused,
           st->optimizer_s);
    toy_env_free(&ref);
    toy_env_free(&opt);
}

/* x[i] += x[i + 1] again and again (the deep_hierarchy jitter): nothing may fuse. */
static void unfusible(int n) {
    toy_env e;
    CHECK(!toy_env_init(&e, NULL, 0, 0));
    for (int i = 0; i < n; i++)
        CHECK_EQ(toy_launch(&e, TOY_RANGE_IR(0, 16, 0, TS_ADD(0, TA_INDEX, 0, 0, TA_INDEX, 1, 0)), NULL, "jitter"), 0);
    CHECK_EQ(sfg_sync(e.q), 0);
    const sfg_stats *st = sfg_get_stats(e.q);
    CHECK_EQ(st->tasks_fused, 0);
    CHECK_EQ(e.ex.last_n, (uint32_t)n);
    printf("%d unfusible tasks: optimizer %.3f s\n", n, st->optimizer_s);
    toy_env_free(&e);
}

int main(void) {
    chain(4096);
    chain(6000); /* more than one reachability block */
    mixed(3000);
    unfusible(3000);
    CHECK_DONE();
}
