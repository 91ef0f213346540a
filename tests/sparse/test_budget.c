/* The byte budget: going over it fails the activating work with a clear message at the next
 * check, never a crash; memory stays inside the budget; after clearing and collecting, the
 * tree works again. Also the other runtime errors (index range, full dynamic). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/tree.h"
#include "test_util.h"

#define BUDGET (4u << 20)

static void check_budget_message(const char *msg, uint64_t budget)
{
    unsigned long long needed = 0, got_budget = 0;
    int n = sscanf(msg, "memory budget exceeded: needed %llu bytes, budget %llu bytes", &needed,
                   &got_budget);
    CHECK(n == 2, "message '%s'", msg);
    CHECK(got_budget == budget, "budget in message %llu", got_budget);
    CHECK(needed > budget, "needed %llu should pass the budget", needed);
}

static int count_block(void *user, const int32_t origin[3], float *data)
{
    (void)origin;
    (void)data;
    ++*(int64_t *)user;
    return 0;
}

static void test_serial(void)
{
    plm_tree *t = NULL;
    char err[256];
    CHECK(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(a)", BUDGET, &t, err, sizeof err) == 0,
          "%s", err);
    if (!t)
        return;
    float bg = 7.0f;
    plm_tree_set_background(t, 0, &bg);
    /* One voxel in each of 4000 blocks, spread over many interior nodes: far more than 4 MiB. */
    int failed_at = -1;
    for (int i = 0; i < 4000; i++) {
        float v = (float)i;
        int32_t x = (i % 40) * 64 - 1280, y = (i / 40 % 10) * 200 - 1000, z = (i / 400) * 8;
        plm_tree_write(t, 0, x, y, z, &v);
        if (failed_at < 0 && plm_rt_error(plm_tree_runtime(t)) != PLM_RT_OK)
            failed_at = i;
    }
    plm_tree_stats st;
    plm_tree_stats_get(t, &st);
    CHECK(failed_at > 0, "the budget was never exceeded");
    CHECK(st.bytes_in_use <= BUDGET, "%llu bytes in use past the budget",
          (unsigned long long)st.bytes_in_use);
    /* Writes before the failure landed; the failed ones were not stored and read background. */
    float got;
    CHECK(plm_tree_read(t, 0, -1280, -1000, 0, &got) == 1 && got == 0.0f, "first write");
    int i = 3999;
    CHECK(plm_tree_read(t, 0, (i % 40) * 64 - 1280, (i / 40 % 10) * 200 - 1000, (i / 400) * 8,
                        &got) == 0 && got == bg, "failed write reads the background, got %g", got);
    char msg[256];
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_BUDGET, "error code");
    check_budget_message(msg, BUDGET);
    CHECK(strstr(msg, "failed operations") != NULL, "count of failures in '%s'", msg);
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == 0 && msg[0] == 0, "cleared");
    /* Listing still works, or fails cleanly. */
    int64_t n = plm_tree_list_blocks(t, 0, 2);
    CHECK(n == failed_at || (n == -1 && plm_tree_check_error(t, msg, sizeof msg) != 0),
          "listed %lld blocks, %d written", (long long)n, failed_at);
    /* Visiting the blocks needs no list, so no memory: every written block is found. */
    int64_t seen = 0;
    CHECK(plm_tree_foreach_block(t, 0, count_block, &seen) == 0, "foreach after the error");
    CHECK(seen == failed_at, "visited %lld blocks, %d written", (long long)seen, failed_at);
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == 0, "foreach made an error: %s", msg);
    /* Free everything and reuse the memory: no new error, bytes in use do not grow. */
    for (int k = 0; k < 4000; k++)
        plm_tree_deactivate_block(t, 0, (k % 40) * 64 - 1280, (k / 40 % 10) * 200 - 1000,
                                  (k / 400) * 8);
    plm_tree_gc(t);
    plm_tree_check_error(t, msg, sizeof msg);
    uint64_t before = plm_rt_bytes_in_use(plm_tree_runtime(t));
    for (int k = 0; k < failed_at / 2; k++) {
        float v = 1.0f;
        plm_tree_write(t, 0, (k % 40) * 64 - 1280, (k / 40 % 10) * 200 - 1000, (k / 400) * 8, &v);
    }
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == 0, "after gc: %s", msg);
    CHECK(plm_rt_bytes_in_use(plm_tree_runtime(t)) == before, "reuse after gc");
    plm_tree_destroy(t);
}

typedef struct job {
    plm_tree *t;
    int seed;
} job;

static void *writer(void *arg)
{
    job *j = arg;
    rng r = {(uint64_t)j->seed * 977 + 1};
    for (int i = 0; i < 20000; i++) {
        float v = 1.0f;
        int32_t x = (int32_t)rng_below(&r, 4096) - 2048, y = (int32_t)rng_below(&r, 4096) - 2048,
                z = (int32_t)rng_below(&r, 4096) - 2048;
        plm_tree_write(j->t, 0, x, y, z, &v);
        float *blk = plm_tree_block(j->t, 0, z, x, y, 1, NULL);
        blk[511] = 2.0f; /* writes into a sink must be harmless */
    }
    return NULL;
}

static void test_threads(void)
{
    plm_tree *t = NULL;
    char err[256];
    CHECK(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(a)", BUDGET, &t, err, sizeof err) == 0,
          "%s", err);
    if (!t)
        return;
    pthread_t th[3];
    job jobs[3];
    for (int k = 0; k < 3; k++) {
        jobs[k] = (job){t, k};
        pthread_create(&th[k], NULL, writer, &jobs[k]);
    }
    for (int k = 0; k < 3; k++)
        pthread_join(th[k], NULL);
    char msg[256];
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_BUDGET, "threads: %s", msg);
    check_budget_message(msg, BUDGET);
    CHECK(plm_rt_bytes_in_use(plm_tree_runtime(t)) <= BUDGET, "inside the budget");
    plm_tree_destroy(t);
}

static void test_other_errors(void)
{
    char err[256], msg[256];
    plm_tree *t = NULL;
    /* A budget too small for the layout itself. */
    CHECK(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(a)", 100000, &t, err, sizeof err) == -1 &&
              t == NULL, "tiny budget accepted");
    CHECK(strstr(err, "memory budget exceeded") && strstr(err, "budget 100000 bytes"), "'%s'", err);
    CHECK(plm_tree_create("dense(i,8).plac(a)", 1u << 20, &t, err, sizeof err) == -1, "bad layout");
    CHECK(strstr(err, "layout: column 12: unknown node kind 'plac'") != NULL, "'%s'", err);

    CHECK(plm_tree_create("offset(-8).pointer(ij,4).dense(ij,4).place(a)", 1u << 20, &t, err,
                          sizeof err) == 0, "%s", err);
    if (!t)
        return;
    float v = 1.0f;
    plm_tree_write(t, 0, 8, 0, 0, &v); /* x range is [-8, 8) */
    CHECK(plm_tree_read(t, 0, 8, 0, 0, &v) == 0, "outside reads inactive");
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_RANGE, "range error");
    CHECK(strstr(msg, "outside the index range") != NULL, "'%s'", msg);
    plm_tree_destroy(t);

    CHECK(plm_tree_create("dense(i,2).dynamic(j,8).place(a)", 1u << 20, &t, err, sizeof err) == 0,
          "%s", err);
    if (!t)
        return;
    plm_runtime *rt = plm_tree_runtime(t);
    uint8_t *c = plm_rt_container_of(rt, 2, 1, 0, 0, 1);
    int32_t idx = 0;
    for (int i = 0; i < 9; i++)
        *(float *)plm_rt_dynamic_append(rt, 2, c, &idx) = (float)i;
    CHECK(idx == -1, "ninth append fails");
    CHECK(plm_rt_dynamic_length(rt, 2, c) == 8, "length stays 8");
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_DYNAMIC, "dynamic full");
    CHECK(strstr(msg, "full dynamic") != NULL, "'%s'", msg);
    float got;
    CHECK(plm_tree_read(t, 0, 1, 7, 0, &got) == 1 && got == 7.0f, "eighth append kept");
    plm_tree_destroy(t);
}

/* A tree with an error flag (what a GPU context gives each tree): an error raises the flag, the
 * check reports it and lowers the flag, and a check that finds the flag down reads nothing else
 * (so a poll after each GPU batch moves none of the arena's pages to the host). */
static void test_error_flag(void)
{
    char err[256], msg[256];
    plm_tree *t = NULL;
    CHECK(plm_tree_create("offset(-8).pointer(ij,4).dense(ij,4).place(a)", 1u << 20, &t, err,
                          sizeof err) == 0, "%s", err);
    if (!t)
        return;
    /* an error pending when the flag is given raises it */
    float v = 1.0f;
    plm_tree_write(t, 0, 8, 0, 0, &v);
    uint32_t flag = 0;
    plm_tree_set_error_flag(t, &flag);
    CHECK(flag == 1, "pending error: flag %u", flag);
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_RANGE, "range error");
    CHECK(flag == 0, "check lowers the flag: %u", flag);
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == 0 && msg[0] == 0, "nothing pending");
    /* an error recorded by the runtime raises it */
    plm_tree_write(t, 0, -9, 0, 0, &v);
    CHECK(flag == 1, "new error: flag %u", flag);
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_RANGE &&
              strstr(msg, "outside the index range"), "'%s'", msg);
    /* the flag, not the runtime's record, is what a check reads */
    plm_tree_write(t, 0, 9, 0, 0, &v);
    CHECK(plm_rt_error(plm_tree_runtime(t)) == PLM_RT_ERR_RANGE, "recorded");
    flag = 0;
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == 0, "flag down: no error read");
    flag = 1;
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == PLM_RT_ERR_RANGE, "flag up: error read");
    CHECK(plm_rt_error(plm_tree_runtime(t)) == PLM_RT_OK && flag == 0, "cleared");
    plm_tree_destroy(t);
}

int main(void)
{
    test_serial();
    test_threads();
    test_other_errors();
    test_error_flag();
    return TEST_RESULT();
}
