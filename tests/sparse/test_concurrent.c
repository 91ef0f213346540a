/* Concurrent activation stress: several threads write overlapping voxel sets at once (many of
 * them racing to create the same blocks), and the result is compared with a tree filled by one
 * thread: same active blocks, same values, every atomic increment counted once, and no block
 * allocated twice (allocator live counts equal the number of distinct blocks). Also concurrent
 * dynamic appends and multi-threaded list generation against the serial one. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/tree.h"
#include "test_util.h"

#define NTHREADS 4
#define LAYOUT PLM_LAYOUT_DEFAULT ".place(value, count)"

typedef struct job {
    plm_tree *t;
    const int32_t (*vox)[3];
    int begin, end;
    int fvalue, fcount;
} job;

static float value_of(const int32_t v[3])
{
    uint32_t h = ((uint32_t)v[0] * 73856093u) ^ ((uint32_t)v[1] * 19349663u) ^
                 ((uint32_t)v[2] * 83492791u);
    return (float)(h >> 8) * 1e-3f;
}

static void atomic_add_float(float *p, float d)
{
    uint32_t *u = (uint32_t *)p;
    uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED), nw;
    do {
        float f;
        memcpy(&f, &old, 4);
        f += d;
        memcpy(&nw, &f, 4);
    } while (!__atomic_compare_exchange_n(u, &old, nw, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

static void *writer(void *arg)
{
    job *j = arg;
    plm_runtime *rt = plm_tree_runtime(j->t);
    for (int i = j->begin; i < j->end; i++) {
        const int32_t *v = j->vox[i];
        float val = value_of(v);
        plm_tree_write(j->t, j->fvalue, v[0], v[1], v[2], &val);
        float *c = (float *)plm_rt_access(rt, j->fcount, v[0], v[1], v[2], 1);
        atomic_add_float(c, 1.0f);
    }
    return NULL;
}

static int cmp_coord(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* Sorted origins of the active blocks. */
static int32_t (*block_origins(plm_tree *t, int field, int nthreads, int64_t *n))[3]
{
    *n = plm_tree_list_blocks(t, field, nthreads);
    int32_t(*o)[3] = malloc(sizeof *o * (size_t)(*n > 0 ? *n : 1));
    for (int64_t i = 0; i < *n; i++) {
        float *data;
        plm_tree_block_at(t, field, i, o[i], &data);
    }
    qsort(o, (size_t)*n, sizeof *o, cmp_coord);
    return o;
}

static void test_activation(void)
{
    enum { N = 120000, POOL = 40000 };
    rng r = {42};
    /* A pool of voxels in a 384^3 region around the origin; the list draws from it with repeats
     * so threads collide on voxels as well as on blocks. */
    int32_t(*pool)[3] = malloc(sizeof *pool * POOL);
    for (int i = 0; i < POOL; i++)
        for (int a = 0; a < 3; a++)
            pool[i][a] = (int32_t)rng_below(&r, 384) - 192;
    int32_t(*vox)[3] = malloc(sizeof *vox * N);
    for (int i = 0; i < N; i++)
        memcpy(vox[i], pool[rng_below(&r, POOL)], sizeof vox[i]);

    char err[256];
    plm_tree *par = NULL, *ser = NULL;
    CHECK(plm_tree_create(LAYOUT, 1ull << 30, &par, err, sizeof err) == 0, "%s", err);
    CHECK(plm_tree_create(LAYOUT, 1ull << 30, &ser, err, sizeof err) == 0, "%s", err);
    if (!par || !ser)
        return;
    int fv = plm_tree_field(par, "value"), fc = plm_tree_field(par, "count");
    float bg = -1.0f;
    plm_tree_set_background(par, fv, &bg);
    plm_tree_set_background(ser, fv, &bg);

    pthread_t th[NTHREADS];
    job jobs[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) {
        jobs[k] = (job){par, (const int32_t(*)[3])vox, N * k / NTHREADS, N * (k + 1) / NTHREADS, fv, fc};
        CHECK(pthread_create(&th[k], NULL, writer, &jobs[k]) == 0, "pthread_create");
    }
    job all = {ser, (const int32_t(*)[3])vox, 0, N, fv, fc};
    writer(&all);
    for (int k = 0; k < NTHREADS; k++)
        pthread_join(th[k], NULL);

    char msg[256];
    CHECK(plm_tree_check_error(par, msg, sizeof msg) == 0, "parallel tree error: %s", msg);

    /* Same blocks, listed serially and with threads. */
    int64_t np, ns, np4;
    int32_t(*op)[3] = block_origins(par, fv, 1, &np);
    int32_t(*os)[3] = block_origins(ser, fv, 1, &ns);
    CHECK(np == ns && np > 1000, "blocks: parallel %lld serial %lld", (long long)np, (long long)ns);
    CHECK(np == ns && memcmp(op, os, sizeof *op * (size_t)np) == 0, "block sets differ");
    int32_t(*op4)[3] = block_origins(par, fv, NTHREADS, &np4);
    CHECK(np4 == np && memcmp(op, op4, sizeof *op * (size_t)np) == 0,
          "threaded list generation differs from serial");

    /* No block allocated twice: live leaf blocks == distinct blocks, by an independent count. */
    int32_t(*blk)[3] = malloc(sizeof *blk * N);
    for (int i = 0; i < N; i++)
        for (int a = 0; a < 3; a++)
            blk[i][a] = vox[i][a] & ~7;
    qsort(blk, N, sizeof *blk, cmp_coord);
    int64_t distinct = 0;
    for (int i = 0; i < N; i++)
        distinct += i == 0 || cmp_coord(blk[i], blk[i - 1]) != 0;
    plm_tree_stats st;
    plm_tree_stats_get(par, &st);
    CHECK(st.snode[2].live_cells == distinct, "leaf blocks allocated %lld, distinct %lld",
          (long long)st.snode[2].live_cells, (long long)distinct);
    CHECK(np == distinct, "listed %lld, distinct %lld", (long long)np, (long long)distinct);
    plm_tree_stats st2;
    plm_tree_stats_get(ser, &st2);
    CHECK(st.snode[1].live_cells == st2.snode[1].live_cells, "interior nodes %lld vs %lld",
          (long long)st.snode[1].live_cells, (long long)st2.snode[1].live_cells);

    /* Values equal; counts equal the number of occurrences. */
    qsort(vox, N, sizeof *vox, cmp_coord);
    for (int i = 0; i < N;) {
        int j = i;
        while (j < N && cmp_coord(vox[i], vox[j]) == 0)
            j++;
        float a, b, c;
        plm_tree_read(par, fv, vox[i][0], vox[i][1], vox[i][2], &a);
        plm_tree_read(ser, fv, vox[i][0], vox[i][1], vox[i][2], &b);
        plm_tree_read(par, fc, vox[i][0], vox[i][1], vox[i][2], &c);
        CHECK(a == b && a == value_of(vox[i]), "value at (%d,%d,%d)", vox[i][0], vox[i][1], vox[i][2]);
        CHECK(c == (float)(j - i), "count at (%d,%d,%d): %g want %d", vox[i][0], vox[i][1],
              vox[i][2], c, j - i);
        i = j;
    }
    free(op), free(os), free(op4), free(blk), free(pool), free(vox);
    plm_tree_destroy(par);
    plm_tree_destroy(ser);
}

typedef struct append_job {
    plm_tree *t;
    int snode, thread, per_thread, field;
} append_job;

static void *appender(void *arg)
{
    append_job *j = arg;
    plm_runtime *rt = plm_tree_runtime(j->t);
    for (int i = 0; i < j->per_thread; i++) {
        int32_t x = i % 8; /* eight lists, all threads append to all of them */
        uint8_t *c = plm_rt_container_of(rt, j->snode, x, 0, 0, 1);
        int32_t idx;
        float *cell = (float *)plm_rt_dynamic_append(rt, j->snode, c, &idx);
        cell[0] = (float)(j->thread * 1000000 + i); /* a unique tag */
    }
    return NULL;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void test_dynamic_append(void)
{
    enum { PER = 3000 };
    plm_tree *t = NULL;
    char err[256];
    CHECK(plm_tree_create("pointer(i,8).dynamic(j,4096).place(tag)", 256u << 20, &t, err,
                          sizeof err) == 0, "%s", err);
    if (!t)
        return;
    int dyn = plm_tree_layout(t)->cfg.fields[0].snode;
    pthread_t th[NTHREADS];
    append_job jobs[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) {
        jobs[k] = (append_job){t, dyn, k, PER, 0};
        pthread_create(&th[k], NULL, appender, &jobs[k]);
    }
    for (int k = 0; k < NTHREADS; k++)
        pthread_join(th[k], NULL);
    plm_runtime *rt = plm_tree_runtime(t);
    int64_t total = 0;
    for (int32_t x = 0; x < 8; x++) {
        uint8_t *c = plm_rt_container_of(rt, dyn, x, 0, 0, 0);
        total += c ? plm_rt_dynamic_length(rt, dyn, c) : 0;
    }
    CHECK(total == NTHREADS * PER, "appended %lld, want %d", (long long)total, NTHREADS * PER);
    int64_t n = plm_tree_listgen(t, dyn, 2);
    CHECK(n == NTHREADS * PER, "listed %lld", (long long)n);
    float *tags = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++)
        tags[i] = *(const float *)plm_rt_list_get(rt, dyn, (int32_t)i)->cell;
    qsort(tags, (size_t)n, sizeof *tags, cmp_float);
    int dup = 0;
    for (int64_t i = 1; i < n; i++)
        dup += tags[i] == tags[i - 1];
    CHECK(dup == 0, "%d appended cells share a slot", dup);
    free(tags);
    char msg[256];
    CHECK(plm_tree_check_error(t, msg, sizeof msg) == 0, "%s", msg);
    plm_tree_destroy(t);
}

int main(void)
{
    test_activation();
    test_dynamic_append();
    return TEST_RESULT();
}
