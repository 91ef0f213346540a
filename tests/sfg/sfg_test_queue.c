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
    /* each launch is issued at once, in order; none says the host reads (it reads after a
     * sync, which finds nothing queued: a GPU then waits for its stream, not for a batch) */
    CHECK_EQ(e.ex.in_order, 5);
    CHECK_EQ(e.ex.syncs, 0);
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
    CHECK_EQ(e.ex.in_order, 0); /* a full window may be deferred */
    CHECK_EQ(sfg_pending(e.q), 0);
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(sfg_flush(e.q), 0);
    CHECK_EQ(e.ex.batches, 2);
    CHECK_EQ(e.ex.syncs, 0);
    CHECK_EQ(toy_launch(&e, inc(), NULL, "inc"), 0);
    CHECK_EQ(sfg_sync(e.q), 0);
    CHECK_EQ(e.ex.batches, 3);
    CHECK_EQ(e.ex.syncs, 1);
    CHECK_EQ(e.ex.in_order, 1);
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

/* One solver-like iteration: a fresh list of SNode 1, a struct-for over it, an update of field 0
 * everywhere, a serial task with an argument, and a struct-for reading what the update wrote. */
static int iteration(toy_env *e, int32_t arg) {
    int rc = toy_launch(e, toy_new(TOY_CLEAR, 1, 0, 0, 0, NULL, 0), NULL, "clear");
    rc |= toy_launch(e, toy_new(TOY_LISTGEN, 1, 0, 0, 0, NULL, 0), NULL, "listgen");
    rc |= toy_launch(e, TOY_STRUCT_IR(1, 0, TS_ADDC(1, TA_INDEX, 0, 1)), NULL, "inc1");
    rc |= toy_launch(e, TOY_RANGE_IR(0, TOY_N, 0, TS_ADDC(0, TA_INDEX, 0, 2)), NULL, "inc0");
    rc |= toy_launch(e, TOY_SERIAL_IR(1, TS_STORE_ARG(TOY_SCALAR, TA_CONST, 0, 0)), &arg, "set");
    rc |= toy_launch(e, TOY_STRUCT_IR(1, 0, TS_COPY(2, TA_INDEX, 0, 0, TA_INDEX, 0, 3)), NULL,
                     "copy");
    return rc;
}

/* The same batch went to both executors. */
static void same_batch(const toy_env *a, const toy_env *b) {
    CHECK_EQ(a->ex.last_n, b->ex.last_n);
    CHECK_EQ(a->ex.last_n_edges, b->ex.last_n_edges);
    for (uint32_t i = 0; i < a->ex.last_n && i < b->ex.last_n; i++) {
        CHECK_EQ(a->ex.last_hash[i], b->ex.last_hash[i]);
        CHECK(!strcmp(a->ex.last_name[i], b->ex.last_name[i]));
    }
    if (a->ex.last_n_edges == b->ex.last_n_edges && a->ex.last_n_edges)
        CHECK(!memcmp(a->ex.last_edges, b->ex.last_edges,
                      a->ex.last_n_edges * sizeof *a->ex.last_edges));
}

/* The flush memo: a repeated flush takes the passes' earlier result, which must be exactly what
 * the passes make of it (compared with a queue that optimizes every flush); a new argument or a
 * host write to a mask the passes relied on is a new flush. */
static void test_memo(void) {
    sfg_options off = {.no_memo = 1};
    toy_env a, b;
    CHECK(!toy_env_init(&a, NULL, 1, 1));
    CHECK(!toy_env_init(&b, &off, 1, 1));
    toy_env *env[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(toy_launch(env[k], TOY_RANGE_IR(0, 16, 0, TS_ACT(0, TA_INDEX, 0),
                                                 TS_ACT(1, TA_INDEX, 0)),
                            NULL, "activate"),
                 0);
        CHECK_EQ(sfg_sync(env[k]->q), 0);
    }
    for (int it = 0; it < 10; it++) {
        /* iteration 5 changes the serial task's argument; 6 and 9 follow a host write of
         * mask(1), which makes the list that the listgen removal relied on stale */
        int32_t arg = it == 5 ? 9 : 4;
        int written = it == 6 || it == 9;
        if (written) {
            sfg_state mask = SFG_STATE(SFG_MASK, 1);
            CHECK_EQ(sfg_host_write(a.q, &mask, 1), 0);
            CHECK_EQ(sfg_host_write(b.q, &mask, 1), 0);
        }
        CHECK_EQ(iteration(&a, arg), 0);
        CHECK_EQ(iteration(&b, arg), 0);
        uint64_t before = sfg_get_stats(a.q)->flushes_memoized;
        CHECK_EQ(sfg_sync(a.q), 0);
        CHECK_EQ(sfg_sync(b.q), 0);
        uint64_t hit = sfg_get_stats(a.q)->flushes_memoized - before;
        /* From iteration 2 on a flush starts from the graph the previous iteration left, the
         * same every time (the survivors' arguments are not among the passes' inputs), so
         * iterations 3 and 4 repeat one before them, and 8 repeats 7. Iteration 9 differs from
         * 8 only in the version of the mask the surviving listgen read (at 8 the current one,
         * at 9 an older one), and repeats 6, which also followed a host write. */
        if (it == 3 || it == 4 || it == 8 || it == 9)
            CHECK_EQ(hit, 1);
        if (it == 5 || it == 6)
            CHECK_EQ(hit, 0);
        /* the list is generated the first time and after each host write, else kept */
        CHECK_EQ(toy_last_count(&a, SFG_LISTGEN), it == 0 || written ? 1 : 0);
        same_batch(&a, &b);
        CHECK(!memcmp(&a.world, &b.world, sizeof a.world));
    }
    const sfg_stats *sa = sfg_get_stats(a.q), *sb = sfg_get_stats(b.q);
    CHECK_EQ(sa->tasks_launched, sb->tasks_launched);
    CHECK_EQ(sa->tasks_fused, sb->tasks_fused);
    CHECK_EQ(sa->listgens_removed, sb->listgens_removed);
    CHECK_EQ(sa->activations_demoted, sb->activations_demoted);
    CHECK_EQ(sa->stores_eliminated, sb->stores_eliminated);
    CHECK_EQ(sa->tasks_eliminated, sb->tasks_eliminated);
    CHECK(sa->tasks_fused > 0);
    CHECK_EQ(sb->flushes_memoized, 0);
    toy_env_free(&a);
    toy_env_free(&b);
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
    test_memo();
    test_dump();
    test_parse();
    test_errors();
    CHECK_DONE();
}
