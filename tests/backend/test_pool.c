/* The CPU pool: every index exactly once under uneven work, worker ids exclusive, each worker
 * starting on its own run of chunks, nested and concurrent loops, several pools, bad
 * arguments. `test_backend_pool quick` runs a smaller version (for valgrind). */
#include "engine/backend/cpu_pool.h"
#include "tests/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int quick;

typedef struct cover {
    int64_t n;
    atomic_int *hits;
    atomic_int busy[CPU_POOL_MAX_THREADS]; /* 1 while a chunk of that worker id runs */
    int n_threads;
    int64_t grain;
    atomic_int bad_chunks;
    atomic_int chunks;
    volatile double sink;
} cover;

/* Uneven work: items near multiples of 97 are ~200x dearer than the rest. */
static double spin(int64_t i)
{
    int reps = (i % 97) < 3 ? 2000 : 10;
    double s = 0;
    for (int k = 0; k < reps; k++)
        s += (double)(k ^ i) * 1e-9;
    return s;
}

static void cover_fn(void *ctx, int64_t b, int64_t e, int worker)
{
    cover *c = ctx;
    atomic_fetch_add(&c->chunks, 1);
    if (worker < 0 || worker >= c->n_threads || b < 0 || e > c->n || b >= e ||
        e - b > c->grain) {
        atomic_fetch_add(&c->bad_chunks, 1);
        return;
    }
    if (atomic_exchange(&c->busy[worker], 1) != 0)
        atomic_fetch_add(&c->bad_chunks, 1); /* two chunks at once with one id */
    double s = 0;
    for (int64_t i = b; i < e; i++) {
        atomic_fetch_add(&c->hits[i], 1);
        s += spin(i);
    }
    c->sink = s;
    atomic_store(&c->busy[worker], 0);
}

static void check_cover(cpu_pool *pool, int64_t n, int64_t grain)
{
    cover *c = calloc(1, sizeof *c);
    c->n = n;
    c->hits = calloc((size_t)(n > 0 ? n : 1), sizeof *c->hits);
    c->n_threads = cpu_pool_threads(pool);
    c->grain = grain > 0 ? grain : n;
    char err[256];
    CHECK_EQ(cpu_pool_parallel_for(pool, n, grain, cover_fn, c, err, sizeof err), 0);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++)
        wrong += atomic_load(&c->hits[i]) != 1;
    if (wrong)
        fprintf(stderr, "threads=%d n=%lld grain=%lld: %lld indices not hit exactly once\n",
                c->n_threads, (long long)n, (long long)grain, (long long)wrong);
    CHECK_EQ(wrong, 0);
    CHECK_EQ(atomic_load(&c->bad_chunks), 0);
    if (n <= 0)
        CHECK_EQ(atomic_load(&c->chunks), 0);
    else if (grain > 0)
        CHECK_EQ(atomic_load(&c->chunks), (n + grain - 1) / grain);
    free(c->hits);
    free(c);
}

/* ---- affinity: each worker starts on its own run of chunks ---- */

typedef struct runs_probe {
    int n_threads;
    atomic_int arrived;
    atomic_llong first[CPU_POOL_MAX_THREADS]; /* the first chunk's begin per worker, -1: none */
    atomic_int timed_out;
} runs_probe;

/* A worker's first chunk waits until every worker has begun one: no worker can then have
 * taken a chunk from another's run, so each first chunk shows where its worker starts. */
static void runs_fn(void *ctx, int64_t b, int64_t e, int worker)
{
    (void)e;
    runs_probe *r = ctx;
    long long none = -1;
    if (!atomic_compare_exchange_strong(&r->first[worker], &none, (long long)b))
        return;
    atomic_fetch_add(&r->arrived, 1);
    time_t t0 = time(NULL);
    while (atomic_load(&r->arrived) < r->n_threads)
        if (time(NULL) - t0 > 10) {
            atomic_store(&r->timed_out, 1);
            return;
        }
}

/* With T workers, chunks of 2 items and 4 chunks a worker, worker w's run is items
 * [8w, 8w + 8): its first chunk must begin at 8w, in every loop. */
static void check_runs(cpu_pool *pool)
{
    int t = cpu_pool_threads(pool);
    for (int rep = 0; rep < (quick ? 3 : 20); rep++) {
        runs_probe *r = calloc(1, sizeof *r);
        r->n_threads = t;
        for (int w = 0; w < t; w++)
            atomic_store(&r->first[w], -1);
        CHECK_EQ(cpu_pool_parallel_for(pool, 8 * (int64_t)t, 2, runs_fn, r, NULL, 0), 0);
        CHECK_EQ(atomic_load(&r->timed_out), 0);
        for (int w = 0; w < t; w++) {
            if (atomic_load(&r->first[w]) != 8LL * w)
                fprintf(stderr, "threads=%d: worker %d began at item %lld, not %d\n", t, w,
                        atomic_load(&r->first[w]), 8 * w);
            CHECK_EQ(atomic_load(&r->first[w]), 8LL * w);
        }
        free(r);
    }
}

/* ---- nested loops ---- */

typedef struct nest {
    cpu_pool *outer_pool, *inner_pool; /* inner: the same pool, or another one */
    int64_t n_outer, n_inner;
    atomic_int *hits; /* n_outer * n_inner */
    atomic_int bad;
} nest;

typedef struct inner_ctx {
    nest *ns;
    int64_t row;
    int outer_worker;
    int same_pool;
} inner_ctx;

static void inner_fn(void *ctx, int64_t b, int64_t e, int worker)
{
    inner_ctx *ic = ctx;
    if (ic->same_pool && worker != ic->outer_worker)
        atomic_fetch_add(&ic->ns->bad, 1); /* a nested loop keeps its worker's id */
    for (int64_t j = b; j < e; j++)
        atomic_fetch_add(&ic->ns->hits[ic->row * ic->ns->n_inner + j], 1);
}

static void outer_fn(void *ctx, int64_t b, int64_t e, int worker)
{
    nest *ns = ctx;
    for (int64_t i = b; i < e; i++) {
        inner_ctx ic = {ns, i, worker, ns->inner_pool == ns->outer_pool};
        if (cpu_pool_parallel_for(ns->inner_pool, ns->n_inner, 3, inner_fn, &ic, NULL, 0) != 0)
            atomic_fetch_add(&ns->bad, 1);
    }
}

static void check_nested(cpu_pool *outer, cpu_pool *inner)
{
    nest ns = {outer, inner, 40, 25, NULL, 0};
    ns.hits = calloc((size_t)(ns.n_outer * ns.n_inner), sizeof *ns.hits);
    CHECK_EQ(cpu_pool_parallel_for(outer, ns.n_outer, 2, outer_fn, &ns, NULL, 0), 0);
    int64_t wrong = 0;
    for (int64_t k = 0; k < ns.n_outer * ns.n_inner; k++)
        wrong += atomic_load(&ns.hits[k]) != 1;
    CHECK_EQ(wrong, 0);
    CHECK_EQ(atomic_load(&ns.bad), 0);
    free(ns.hits);
}

/* ---- several threads posting loops to one pool ---- */

typedef struct poster {
    cpu_pool *pool;
    int rounds;
} poster;

static void *poster_main(void *arg)
{
    poster *ps = arg;
    for (int r = 0; r < ps->rounds; r++)
        check_cover(ps->pool, 1000 + 37 * r, 1 + r % 13);
    return NULL;
}

int main(int argc, char **argv)
{
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    char err[256];
    const int thread_counts[] = {1, 2, 4};
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        cpu_pool *pool = NULL;
        int rc = cpu_pool_create(thread_counts[t], &pool, err, sizeof err);
        CHECK_MSG(rc == 0 && pool, err);
        if (!pool)
            continue;
        CHECK_EQ(cpu_pool_threads(pool), thread_counts[t]);
        const int64_t sizes[] = {0, 1, 2, 5, 97, 1000, quick ? 3000 : 100000};
        const int64_t grains[] = {0, 1, 7, 64, 1 << 20};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
                if (grains[g] == 1 && sizes[s] > 5000)
                    continue; /* one atomic per item: slow under valgrind, adds nothing */
                check_cover(pool, sizes[s], grains[g]);
            }
        /* Many small loops in a row: the post/check-out protocol under churn. */
        for (int r = 0; r < (quick ? 50 : 2000); r++)
            check_cover(pool, 1 + r % 9, 1);

        check_runs(pool);
        check_nested(pool, pool); /* nested on the same pool: serial, same worker id */
        cpu_pool *other = NULL;
        CHECK_EQ(cpu_pool_create(2, &other, err, sizeof err), 0);
        check_nested(pool, other); /* nested on another pool */
        cpu_pool_destroy(other);

        pthread_t th[3];
        poster ps = {pool, quick ? 5 : 60};
        for (int k = 0; k < 3; k++)
            pthread_create(&th[k], NULL, poster_main, &ps);
        for (int k = 0; k < 3; k++)
            pthread_join(th[k], NULL);
        cpu_pool_destroy(pool);
    }

    /* Several pools alive at once, used alternately. */
    cpu_pool *a = NULL, *b = NULL;
    CHECK_EQ(cpu_pool_create(2, &a, err, sizeof err), 0);
    CHECK_EQ(cpu_pool_create(3, &b, err, sizeof err), 0);
    for (int r = 0; r < 10; r++) {
        check_cover(r % 2 ? a : b, 5000, 100);
    }
    cpu_pool_destroy(a);
    cpu_pool_destroy(b);

    /* 0 = one worker per CPU we may run on. */
    cpu_pool *all = NULL;
    CHECK_EQ(cpu_pool_create(0, &all, err, sizeof err), 0);
    CHECK_EQ(cpu_pool_threads(all), cpu_pool_cpu_count());
    CHECK(cpu_pool_cpu_count() >= 1);
    check_cover(all, 777, 0);
    cpu_pool_destroy(all);

    /* Bad arguments are reported, not crashed on. */
    cpu_pool *bad = (cpu_pool *)&err;
    err[0] = 0;
    CHECK_EQ(cpu_pool_create(-1, &bad, err, sizeof err), -1);
    CHECK(bad == NULL);
    CHECK(strstr(err, "-1") != NULL);
    CHECK_EQ(cpu_pool_create(CPU_POOL_MAX_THREADS + 1, &bad, err, sizeof err), -1);
    cpu_pool *one = NULL;
    CHECK_EQ(cpu_pool_create(1, &one, err, sizeof err), 0);
    err[0] = 0;
    CHECK_EQ(cpu_pool_parallel_for(one, 10, 1, NULL, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "fn") != NULL);
    CHECK_EQ(cpu_pool_parallel_for(NULL, 10, 1, cover_fn, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "pool") != NULL);
    cpu_pool_destroy(one);
    cpu_pool_destroy(NULL);

    /* Create and destroy repeatedly: threads are joined, nothing leaks (valgrind checks). */
    for (int r = 0; r < (quick ? 5 : 50); r++) {
        cpu_pool *p = NULL;
        CHECK_EQ(cpu_pool_create(1 + r % 4, &p, err, sizeof err), 0);
        if (r % 2)
            check_cover(p, 100, 10);
        cpu_pool_destroy(p);
    }
    CHECK_DONE();
}
