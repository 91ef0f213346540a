/* The async queue: eager mode, flush on demand / on sync / every N launches, statistics,
 * Graphviz dumps (option and environment variable), pass-list parsing and error paths. */
#include "tests/check.h"
#include "toy_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static toy_ir *inc(void) { return TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(0, TA_INDEX, 0, 1)); }

static void test_eager(void) {
    sfg_options o = {.eager = 1};
    toy_env e;
    CHECK(!toy_env_init(&e, &o, 1, 0));
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
        CHECK_EQ(e.ex.batches, (uint64_t)i + 1);
        CHECK_EQ(sfg_pending(e.q), 0);
    }
    CHECK_EQ(e.ex.syncs, 5);
    CHECK_EQ(e.world.val[0][7], 5);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_launched, 5);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_fused, 0);
    CHECK_EQ(sfg_sync(e.q), 0); /* nothing queued: no batch */
    CHECK_EQ(e.ex.batches, 5);
    toy_env_free(&e);
}

static void test_flush_points(void) {
    sfg_options o = {.flush_every = 4, .disabled_passes = SFG_PASS_FUSION};
    toy_env e;
    CHECK(!toy_env_init(&e, &o, 1, 0));
    for (int i = 0; i < 3; i++)
        CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(e.ex.batches, 0);
    CHECK_EQ(sfg_pending(e.q), 3);
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(e.ex.batches, 1);
    CHECK_EQ(e.ex.last_n, 4);
    CHECK_EQ(e.ex.syncs, 0);
    CHECK_EQ(sfg_pending(e.q), 0);
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(sfg_flush(e.q), 0);
    CHECK_EQ(e.ex.batches, 2);
    CHECK_EQ(e.ex.syncs, 0);
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK_EQ(e.ex.batches, 3);
    CHECK_EQ(e.ex.syncs, 1);
    CHECK_EQ(sfg_flush(e.q), 0); /* empty */
    CHECK_EQ(e.ex.batches, 3);
    CHECK_EQ(e.world.val[0][0], 6);
    toy_env_free(&e);
}

static void test_stats(void) {
    toy_env e;
    CHECK(!toy_env_init(&e, NULL, 1, 1));
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(toy_launch(&e, toy_new(TOY_CLEAR, 0, 0, 0, 0, NULL, 0), NULL, "clear"), 0);
        CHECK_EQ(toy_launch(&e, toy_new(TOY_LISTGEN, 0, 0, 0, 0, NULL, 0), NULL, "listgen"), 0);
        CHECK_EQ(toy_launch(&e, TOY_STRUCT_IR(0, 0, TS_ADDC(1, TA_INDEX, 0, 1)), NULL, "inc"), 0);
        CHECK_EQ(toy_launch(&e, TOY_SERIAL_IR(0, TS_ADDC(TOY_SCALAR, TA_CONST, 0, 1)), NULL, "s"), 0);
    }
    CHECK_EQ(sfg_sync(e.q), 0);
    const sfg_stats *st = sfg_get_stats(e.q);
    CHECK_EQ(st->tasks_enqueued, 12);
    CHECK_EQ(st->launched[SFG_CLEAR_LIST], 1);
    CHECK_EQ(st->launched[SFG_LISTGEN], 1);
    CHECK_EQ(st->listgens, 1);
    CHECK_EQ(st->listgens_removed, 4);
    CHECK_EQ(st->launched[SFG_STRUCT_FOR], 1);
    CHECK_EQ(st->launched[SFG_SERIAL], 1);
    CHECK_EQ(st->tasks_fused, 4);
    CHECK_EQ(st->tasks_launched, 4);
    CHECK_EQ(st->tasks_launched, e.ex.tasks);
    CHECK_EQ(st->flushes, 1);
    CHECK(st->optimizer_s >= 0.0 && st->optimizer_s < 10.0);
    sfg_reset_stats(e.q);
    CHECK_EQ(sfg_get_stats(e.q)->tasks_launched, 0);
    toy_env_free(&e);
}

static int file_has(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

static void test_dump(void) {
    char dir[] = "/tmp/sfg_dump_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp failed");
        return;
    }
    sfg_options o = {.dump_dir = dir};
    toy_env e;
    CHECK(!toy_env_init(&e, &o, 0, 0));
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc \"one\""), 0);
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(sfg_flush(e.q), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/sfg_b0000_s00_input.dot", dir);
    CHECK(file_has(path, "digraph sfg"));
    CHECK(file_has(path, "n1 -> n2"));
    CHECK(file_has(path, "inc \\\"one\\\""));
    snprintf(path, sizeof path, "%s/sfg_b0000_s01_fusion.dot", dir);
    CHECK(file_has(path, "digraph sfg"));
    CHECK(file_has(path, "A") || file_has(path, "inc"));
    CHECK(!file_has(path, "n1 -> n2"));
    remove(path);
    snprintf(path, sizeof path, "%s/sfg_b0000_s02_output.dot", dir);
    CHECK(file_has(path, "range_for [0, 32)"));
    remove(path);
    snprintf(path, sizeof path, "%s/sfg_b0000_s00_input.dot", dir);
    remove(path);
    toy_env_free(&e);

    /* the environment variable, when the option is not given */
    setenv("PLUME_SFG_DUMP", dir, 1);
    CHECK(!toy_env_init(&e, NULL, 0, 0));
    unsetenv("PLUME_SFG_DUMP");
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(sfg_flush(e.q), 0);
    snprintf(path, sizeof path, "%s/sfg_b0000_s00_input.dot", dir);
    CHECK(file_has(path, "digraph sfg"));
    remove(path);
    snprintf(path, sizeof path, "%s/sfg_b0000_s01_output.dot", dir);
    CHECK(file_has(path, "digraph sfg"));
    remove(path);
    toy_env_free(&e);
    CHECK_EQ(rmdir(dir), 0);
}

static void test_parse(void) {
    uint32_t bits = 99;
    CHECK_EQ(sfg_parse_passes("listgen,dse", &bits), SFG_OK);
    CHECK_EQ(bits, SFG_PASS_LISTGEN | SFG_PASS_DSE);
    CHECK_EQ(sfg_parse_passes("demote,fusion", &bits), SFG_OK);
    CHECK_EQ(bits, SFG_PASS_DEMOTE | SFG_PASS_FUSION);
    CHECK_EQ(sfg_parse_passes("", &bits), SFG_OK);
    CHECK_EQ(bits, 0);
    CHECK_EQ(sfg_parse_passes("none", &bits), SFG_OK);
    CHECK_EQ(sfg_parse_passes("listgen,fuse", &bits), SFG_EINVAL);
    CHECK_EQ(sfg_parse_passes("listgenx", &bits), SFG_EINVAL);
}

static void test_errors(void) {
    toy_env e;
    CHECK(!toy_env_init(&e, NULL, 1, 0));
    /* malformed metadata: a reversed range, and an IR the engine cannot describe */
    CHECK_EQ(toy_launch(&e, toy_new(TOY_RANGE, 0, 10, 5, 0, NULL, 0), NULL, "bad"), SFG_EINVAL);
    CHECK(strstr(sfg_error(e.q), "reversed") != NULL);
    CHECK_EQ(toy_launch(&e, toy_new(99, 0, 0, 0, 0, NULL, 0), NULL, "bad"), SFG_EOP);
    CHECK(strstr(sfg_error(e.q), "metadata") != NULL);
    /* an IR handle this bank does not hold */
    toy_ir *stray = inc();
    sfg_ir h = {.hash = 42, .ir = stray};
    CHECK_EQ(sfg_launch(e.q, h, NULL, 0, "stray"), SFG_EINVAL);
    free(stray);
    /* arguments without a pointer */
    sfg_ir good;
    CHECK_EQ(sfg_bank_intern(e.bank, inc(), &good), 0);
    CHECK_EQ(sfg_launch(e.q, good, NULL, 4, "x"), SFG_EINVAL);
    /* host writes and forget need an empty queue */
    CHECK_EQ(sfg_launch(e.q, good, NULL, 0, "x"), 0);
    sfg_state s = SFG_STATE(SFG_VALUE, 0);
    CHECK_EQ(sfg_host_write(e.q, &s, 1), SFG_EINVAL);
    CHECK_EQ(sfg_forget(e.q), SFG_EINVAL);
    /* the executor fails: the flush says so and the queue is empty afterwards */
    e.ex.fail = 1;
    CHECK_EQ(sfg_flush(e.q), SFG_EEXEC);
    CHECK(strstr(sfg_error(e.q), "executor") != NULL);
    CHECK_EQ(sfg_pending(e.q), 0);
    e.ex.fail = 0;
    CHECK_EQ(sfg_launch(e.q, good, NULL, 0, "x"), 0);
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK_EQ(sfg_host_write(e.q, &s, 1), 0);
    CHECK_EQ(sfg_launch(NULL, good, NULL, 0, "x"), SFG_EINVAL);
    CHECK_EQ(sfg_flush(NULL), SFG_EINVAL);
    CHECK(sfg_queue_create(NULL, toy_executor, NULL, NULL) == NULL);
    toy_env_free(&e);
}

int main(void) {
    test_eager();
    test_flush_points();
    test_stats();
    test_dump();
    test_parse();
    test_errors();
    CHECK_DONE();
}
