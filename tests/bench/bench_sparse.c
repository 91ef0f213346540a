/* plume-bench sparse: the sparse runtime's speed and memory in the default layout.
 *   activate  1M random voxel writes (activation on write) with 1 and 2 threads, in a 256^3
 *             region (most writes find their block) and a 512^3 region (most create one); each
 *             run on a fresh tree, best of two runs per thread count
 *   listgen   list generation over 100k active 8^3 blocks, 1 and 2 threads
 *   memory    bookkeeping bytes over raw leaf values for those blocks (target <= 5%)
 *   churn     100 rounds of activating, deactivating and collecting 50k blocks: bytes in use
 *             and resident memory after round 10 must stay within 5% */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "sparse/tree.h"

#define LAYOUT PLM_LAYOUT_DEFAULT ".place(density)"

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static plm_tree *make_tree(uint64_t budget)
{
    plm_tree *t = NULL;
    char err[256];
    if (plm_tree_create(LAYOUT, budget, &t, err, sizeof err) != 0) {
        fprintf(stderr, "bench sparse: %s\n", err);
        return NULL;
    }
    return t;
}

static int check_error(plm_tree *t, const char *what)
{
    char msg[256];
    if (plm_tree_check_error(t, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench sparse: %s: %s\n", what, msg);
        return 1;
    }
    return 0;
}

/* ---- activation ---- */

typedef struct writer_job {
    plm_tree *t;
    const int32_t (*vox)[3];
    int begin, end;
} writer_job;

static void *writer(void *arg)
{
    writer_job *j = arg;
    float v = 1.0f;
    for (int i = j->begin; i < j->end; i++)
        plm_tree_write(j->t, 0, j->vox[i][0], j->vox[i][1], j->vox[i][2], &v);
    return NULL;
}

static int bench_activate(bench_ctx *ctx, int region)
{
    int n = ctx->quick ? 20000 : 1000000;
    int32_t(*vox)[3] = malloc(sizeof *vox * (size_t)n);
    uint64_t s = 12345 + (uint64_t)region;
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            vox[i][a] = (int32_t)(rng_next(&s) % (uint64_t)region) - region / 2;
    double rate[2] = {0, 0};
    int64_t blocks = 0;
    /* 1, 2, 1, 2 threads, best of two each: the first run in a process pays extra page-fault
     * and huge-page setup costs that would otherwise all land on the 1-thread figure. */
    for (int run = 0; run < 4; run++) {
        int threads = 1 + (run & 1);
        plm_tree *t = make_tree(4ull << 30);
        if (!t) {
            free(vox);
            return 1;
        }
        writer_job jobs[2];
        pthread_t th;
        double t0 = bench_now();
        for (int k = 0; k < threads; k++)
            jobs[k] = (writer_job){t, (const int32_t(*)[3])vox, n * k / threads, n * (k + 1) / threads};
        if (threads == 2 && pthread_create(&th, NULL, writer, &jobs[1]) != 0) {
            fprintf(stderr, "bench sparse: pthread_create failed\n");
            plm_tree_destroy(t);
            free(vox);
            return 1;
        }
        writer(&jobs[0]);
        if (threads == 2)
            pthread_join(th, NULL);
        double dt = bench_now() - t0;
        if (n / dt / 1e6 > rate[threads - 1])
            rate[threads - 1] = n / dt / 1e6;
        plm_tree_stats st;
        plm_tree_stats_get(t, &st);
        blocks = st.snode[2].live_cells;
        int bad = check_error(t, "activation");
        plm_tree_destroy(t);
        if (bad) {
            free(vox);
            return 1;
        }
    }
    free(vox);
    char name[64];
    snprintf(name, sizeof name, "activate_%d_cube", region);
    printf("%-22s %9d voxels  %8lld blocks  %8.2f Mvox/s (1 thread)  %8.2f Mvox/s (2 threads)  x%.2f\n",
           name, n, (long long)blocks, rate[0], rate[1], rate[1] / rate[0]);
    json_array_append_new(ctx->cases,
                          json_pack("{s:s, s:i, s:i, s:I, s:f, s:f, s:f}", "name", name, "voxels", n,
                                    "region", region, "blocks", (json_int_t)blocks,
                                    "mvox_per_s_1thread", rate[0], "mvox_per_s_2threads", rate[1],
                                    "speedup_2threads", rate[1] / rate[0]));
    return 0;
}

/* ---- list generation and memory over many blocks ---- */

/* nblocks distinct random blocks out of the side^3 block grid centred on the origin. */
static int32_t (*random_blocks(int nblocks, int side, uint64_t seed))[3]
{
    uint8_t *used = calloc((size_t)side * side * side, 1);
    int32_t(*b)[3] = malloc(sizeof *b * (size_t)nblocks);
    for (int i = 0; i < nblocks; i++) {
        uint64_t k;
        do
            k = rng_next(&seed) % ((uint64_t)side * side * side);
        while (used[k]);
        used[k] = 1;
        b[i][0] = (int32_t)(k / ((uint64_t)side * side)) * 8 - side * 4;
        b[i][1] = (int32_t)(k / (uint64_t)side % (uint64_t)side) * 8 - side * 4;
        b[i][2] = (int32_t)(k % (uint64_t)side) * 8 - side * 4;
    }
    free(used);
    return b;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_listgen_memory(bench_ctx *ctx)
{
    int nblocks = ctx->quick ? 5000 : 100000, side = ctx->quick ? 24 : 64;
    plm_tree *t = make_tree(1ull << 30);
    if (!t)
        return 1;
    int32_t(*b)[3] = random_blocks(nblocks, side, 99);
    for (int i = 0; i < nblocks; i++) {
        float *d = plm_tree_block(t, 0, b[i][0], b[i][1], b[i][2], 1, NULL);
        d[0] = 1.0f;
    }
    free(b);
    plm_tree_stats st;
    plm_tree_stats_get(t, &st);
    double raw = (double)st.leaf_value_bytes;
    double book = (double)st.bytes_in_use - raw;
    /* list generation: median of 7 runs */
    double ms[2];
    int64_t listed = 0;
    for (int threads = 1; threads <= 2; threads++) {
        double runs[7];
        for (int r = 0; r < 7; r++) {
            double t0 = bench_now();
            listed = plm_tree_list_blocks(t, 0, threads);
            runs[r] = (bench_now() - t0) * 1e3;
        }
        qsort(runs, 7, sizeof runs[0], cmp_double);
        ms[threads - 1] = runs[3];
    }
    plm_tree_stats_get(t, &st);
    double book_lists = (double)st.bytes_in_use - raw;
    int bad = check_error(t, "listgen") || listed != nblocks;
    plm_tree_destroy(t);
    if (bad) {
        fprintf(stderr, "bench sparse: listed %lld blocks, want %d\n", (long long)listed, nblocks);
        return 1;
    }
    printf("%-22s %9d blocks  %8.3f ms  %8.2f Mblocks/s (1 thread)  %8.3f ms  %8.2f Mblocks/s (2 threads)\n",
           "listgen", nblocks, ms[0], nblocks / ms[0] / 1e3, ms[1], nblocks / ms[1] / 1e3);
    json_array_append_new(ctx->cases,
                          json_pack("{s:s, s:i, s:f, s:f, s:f, s:f}", "name", "listgen", "blocks",
                                    nblocks, "ms_1thread", ms[0], "blocks_per_s_1thread",
                                    nblocks / ms[0] * 1e3, "ms_2threads", ms[1],
                                    "blocks_per_s_2threads", nblocks / ms[1] * 1e3));
    double pct = 100.0 * book / raw, pct_lists = 100.0 * book_lists / raw;
    printf("%-22s %9d blocks  raw leaf values %.1f MiB  bookkeeping %.2f MiB = %.2f%% (%.2f%% with lists)  %s\n",
           "memory", nblocks, raw / 1048576.0, book / 1048576.0, pct, pct_lists,
           ctx->quick ? "(quick sizes: fixed costs dominate, target not applied)"
           : pct <= 5.0 ? "<= 5%: ok" : "> 5%: OVER TARGET");
    json_array_append_new(ctx->cases,
                          json_pack("{s:s, s:i, s:f, s:f, s:f, s:f, s:b}", "name", "memory", "blocks",
                                    nblocks, "raw_leaf_bytes", raw, "bookkeeping_bytes", book,
                                    "bookkeeping_pct", pct, "bookkeeping_pct_with_lists", pct_lists,
                                    "within_5pct", pct <= 5.0));
    return 0;
}

/* ---- churn ---- */

static int bench_churn(bench_ctx *ctx)
{
    int rounds = ctx->quick ? 20 : 100, nblocks = ctx->quick ? 2000 : 50000;
    int side = ctx->quick ? 24 : 64;
    plm_tree *t = make_tree(1ull << 30);
    if (!t)
        return 1;
    uint64_t bytes10 = 0, rss10 = 0, bytes_max = 0, rss_max = 0, rss_min = UINT64_MAX;
    uint64_t bytes_min = UINT64_MAX;
    double t0 = bench_now();
    for (int round = 1; round <= rounds; round++) {
        int32_t(*b)[3] = random_blocks(nblocks, side, 1000 + (uint64_t)round);
        for (int i = 0; i < nblocks; i++) {
            float *d = plm_tree_block(t, 0, b[i][0], b[i][1], b[i][2], 1, NULL);
            d[i & 511] = (float)round;
        }
        for (int i = 0; i < nblocks; i++)
            plm_tree_deactivate_block(t, 0, b[i][0], b[i][1], b[i][2]);
        plm_tree_gc(t);
        free(b);
        if (check_error(t, "churn")) {
            plm_tree_destroy(t);
            return 1;
        }
        uint64_t bytes = plm_rt_bytes_in_use(plm_tree_runtime(t)), rss = rss_bytes();
        if (round == 10) {
            bytes10 = bytes;
            rss10 = rss;
        }
        if (round >= 10) {
            bytes_max = bytes > bytes_max ? bytes : bytes_max;
            bytes_min = bytes < bytes_min ? bytes : bytes_min;
            rss_max = rss > rss_max ? rss : rss_max;
            rss_min = rss < rss_min ? rss : rss_min;
        }
    }
    double dt = bench_now() - t0;
    plm_tree_destroy(t);
    double bytes_growth = 100.0 * ((double)bytes_max - (double)bytes10) / (double)bytes10;
    double rss_growth = 100.0 * ((double)rss_max - (double)rss10) / (double)rss10;
    int flat = bytes_growth <= 5.0 && rss_growth <= 5.0 && (double)rss_min >= 0.95 * (double)rss10;
    printf("%-22s %4d rounds x %d blocks  %.2f s  bytes in use %.1f MiB at round 10, max %.1f MiB (%+.2f%%)  "
           "RSS %.1f MiB at round 10, max %.1f MiB (%+.2f%%)  %s\n",
           "churn", rounds, nblocks, dt, bytes10 / 1048576.0, bytes_max / 1048576.0, bytes_growth,
           rss10 / 1048576.0, rss_max / 1048576.0, rss_growth, flat ? "flat: ok" : "NOT FLAT");
    json_array_append_new(
        ctx->cases,
        json_pack("{s:s, s:i, s:i, s:f, s:I, s:I, s:f, s:I, s:I, s:f, s:b}", "name", "churn",
                  "rounds", rounds, "blocks_per_round", nblocks, "wall_s", dt, "bytes_in_use_round10",
                  (json_int_t)bytes10, "bytes_in_use_max", (json_int_t)bytes_max,
                  "bytes_growth_pct", bytes_growth, "rss_round10", (json_int_t)rss10, "rss_max",
                  (json_int_t)rss_max, "rss_growth_pct", rss_growth, "flat_within_5pct", flat));
    return 0;
}

static int run_sparse(bench_ctx *ctx)
{
    printf("sparse runtime, layout %s%s\n", LAYOUT, ctx->quick ? " (quick sizes)" : "");
    if (bench_activate(ctx, 256) || bench_activate(ctx, 512))
        return 1;
    if (bench_listgen_memory(ctx))
        return 1;
    return bench_churn(ctx);
}

BENCH_SUITE("sparse", "sparse runtime: activation, list generation, memory, churn", run_sparse)
