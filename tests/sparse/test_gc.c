/* Garbage collection: under churn (activate, deactivate, collect, repeat) memory is reused, not
 * grown: bytes in use stay exactly flat after the first round, and reused blocks come back
 * zero-filled (then set to the background), never holding the old values. */
#include <stdlib.h>
#include <string.h>

#include "sparse/tree.h"
#include "test_util.h"

static void test_block_churn(void)
{
    enum { K = 3000, ROUNDS = 25 };
    plm_tree *t = NULL;
    char err[256];
    CHECK(plm_tree_create(PLM_LAYOUT_DEFAULT ".place(a)", 256u << 20, &t, err, sizeof err) == 0,
          "%s", err);
    if (!t)
        return;
    int f = plm_tree_field(t, "a");
    rng r = {7};
    uint64_t flat = 0;
    int32_t(*blocks)[3] = malloc(sizeof *blocks * K);
    uint8_t *used = malloc(32 * 32 * 32);
    for (int round = 0; round < ROUNDS; round++) {
        /* A background of 0 in even rounds shows the zero-fill; 2.5 in odd rounds the refill. */
        float bg = (round & 1) ? 2.5f : 0.0f;
        plm_tree_set_background(t, f, &bg);
        /* K distinct blocks of a 256^3 region (eight interior nodes), different every round. */
        memset(used, 0, 32 * 32 * 32);
        for (int i = 0; i < K; i++) {
            uint32_t b;
            do
                b = rng_below(&r, 32 * 32 * 32);
            while (used[b]);
            used[b] = 1;
            blocks[i][0] = (int32_t)(b >> 10) * 8 - 128;
            blocks[i][1] = (int32_t)((b >> 5) & 31) * 8 - 128;
            blocks[i][2] = (int32_t)(b & 31) * 8 - 128;
        }
        int stale = 0;
        for (int i = 0; i < K; i++) {
            float *d = plm_tree_block(t, f, blocks[i][0], blocks[i][1], blocks[i][2], 1, NULL);
            for (int v = 0; v < 512; v++) {
                stale += d[v] != bg;
                d[v] = 1000.0f + (float)round;
            }
        }
        CHECK(stale == 0, "round %d: %d voxels of reused blocks were not reset", round, stale);
        plm_tree_stats st;
        plm_tree_stats_get(t, &st);
        CHECK(st.snode[2].live_cells == K, "round %d: %lld live blocks", round,
              (long long)st.snode[2].live_cells);
        if (round == 1)
            flat = st.bytes_in_use;
        if (round > 1)
            CHECK(st.bytes_in_use == flat, "round %d: %llu bytes in use, was %llu", round,
                  (unsigned long long)st.bytes_in_use, (unsigned long long)flat);
        for (int i = 0; i < K; i++)
            plm_tree_deactivate_block(t, f, blocks[i][0], blocks[i][1], blocks[i][2]);
        plm_tree_stats_get(t, &st);
        CHECK(st.snode[2].recycled_cells == K, "round %d: %lld recycled", round,
              (long long)st.snode[2].recycled_cells);
        plm_tree_gc(t);
        plm_tree_stats_get(t, &st);
        CHECK(st.snode[2].live_cells == 0 && st.snode[2].recycled_cells == 0 &&
                  st.snode[2].free_cells == st.snode[2].carved_cells,
              "round %d: after gc live %lld recycled %lld free %lld carved %lld", round,
              (long long)st.snode[2].live_cells, (long long)st.snode[2].recycled_cells,
              (long long)st.snode[2].free_cells, (long long)st.snode[2].carved_cells);
        /* The empty interior nodes were pruned and collected too. */
        CHECK(st.snode[1].live_cells == 0, "round %d: %lld interior nodes kept", round,
              (long long)st.snode[1].live_cells);
        CHECK(st.snode[2].carved_cells == K, "round %d: %lld blocks carved in all", round,
              (long long)st.snode[2].carved_cells);
    }
    free(blocks);
    free(used);
    plm_tree_destroy(t);
}

/* gc in two steps, items in any order (as GPU blocks would run them). */
static void test_split_gc(void)
{
    plm_tree *t = NULL;
    char err[256];
    CHECK(plm_tree_create("pointer(ijk,8).dense(ijk,4).place(a)", 16u << 20, &t, err, sizeof err) == 0,
          "%s", err);
    if (!t)
        return;
    plm_runtime *rt = plm_tree_runtime(t);
    float one = 1.0f;
    for (int i = 0; i < 100; i++)
        plm_tree_write(t, 0, (i % 8) * 4, (i / 8 % 8) * 4, (i / 64) * 4, &one);
    for (int i = 0; i < 60; i++)
        plm_tree_deactivate(t, 1, (i % 8) * 4, (i / 8 % 8) * 4, (i / 64) * 4);
    int32_t n = plm_rt_gc_begin(rt, 1);
    CHECK(n == 60, "%d pending", n);
    for (int32_t i = n - 1; i >= 0; i--)
        plm_rt_gc_item(rt, 1, i);
    plm_tree_stats st;
    plm_tree_stats_get(t, &st);
    CHECK(st.snode[1].free_cells == 60 && st.snode[1].live_cells == 40, "free %lld live %lld",
          (long long)st.snode[1].free_cells, (long long)st.snode[1].live_cells);
    uint64_t before = st.bytes_in_use;
    for (int i = 0; i < 60; i++)
        plm_tree_write(t, 0, (i % 8) * 4 + 1, (i / 8 % 8) * 4, (i / 64) * 4, &one);
    plm_tree_stats_get(t, &st);
    CHECK(st.bytes_in_use == before && st.snode[1].free_cells == 0, "reuse: %llu -> %llu",
          (unsigned long long)before, (unsigned long long)st.bytes_in_use);
    float v;
    CHECK(plm_tree_read(t, 0, 1, 0, 0, &v) == 1 && v == 1.0f, "written");
    CHECK(plm_tree_read(t, 0, 0, 0, 0, &v) == 1 && v == 0.0f, "old value gone: %g", v);
    plm_tree_destroy(t);
}

/* Dynamic chunks churn too: the same lengths every round need no new memory after the first. */
static void test_dynamic_churn(void)
{
    plm_tree *t = NULL;
    char err[256];
    CHECK(plm_tree_create("dense(i,16).dynamic(j,1024).place(a)", 16u << 20, &t, err, sizeof err) == 0,
          "%s", err);
    if (!t)
        return;
    uint64_t flat = 0;
    for (int round = 0; round < 10; round++) {
        float v = (float)round + 1.0f, got;
        for (int x = 0; x < 16; x++)
            plm_tree_write(t, 0, x, 700, 0, &v);
        CHECK(plm_tree_read(t, 0, 5, 100, 0, &got) == 1 && got == 0.0f, "fresh cells are zero");
        CHECK(plm_tree_read(t, 0, 5, 700, 0, &got) == 1 && got == v, "written cell");
        CHECK(plm_tree_read(t, 0, 5, 701, 0, &got) == 0, "past the length");
        for (int x = 0; x < 16; x++)
            plm_tree_deactivate(t, 2, x, 0, 0); /* the dynamic level */
        plm_tree_gc(t);
        plm_tree_stats st;
        plm_tree_stats_get(t, &st);
        CHECK(st.snode[2].live_cells == 0, "chunks kept");
        /* 700 / 64 + 1 = 11 chunks per list. */
        CHECK(st.snode[2].carved_cells == 16 * 11, "%lld chunks carved",
              (long long)st.snode[2].carved_cells);
        if (round == 0)
            flat = st.bytes_in_use;
        CHECK(st.bytes_in_use == flat, "round %d: %llu bytes, was %llu", round,
              (unsigned long long)st.bytes_in_use, (unsigned long long)flat);
    }
    plm_tree_destroy(t);
}

int main(void)
{
    test_block_churn();
    test_split_gc();
    test_dynamic_churn();
    return TEST_RESULT();
}
