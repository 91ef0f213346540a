/* The CPU thread pool: one posted loop at a time, chunks drawn from an atomic counter.
 *
 * Protocol. A loop is posted under `lock` by bumping `generation`; helpers whose id is below
 * `wanted` join, the others go back to sleep (a loop with 3 chunks wakes no more than 2
 * helpers' worth of work). The poster waits until every joining helper has checked out
 * (`pending` reaches 0) before it returns, so the job fields are never rewritten while a
 * helper may still read them. `submit` serializes loops posted from different threads. */
#define _GNU_SOURCE
#include "engine/backend/cpu_pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct helper {
    cpu_pool *pool;
    int id;
} helper;

struct cpu_pool {
    int n_threads;   /* workers, caller included */
    int n_started;   /* helper threads actually running */
    pthread_t *threads;
    helper *helpers;

    pthread_mutex_t submit; /* held by the thread whose loop owns the pool */
    pthread_mutex_t lock;   /* guards everything below except `next` */
    pthread_cond_t wake;
    pthread_cond_t done;
    uint64_t generation;
    int wanted;  /* workers 0..wanted-1 take part in the current loop */
    int pending; /* joining helpers that have not checked out yet */
    int stop;

    cpu_range_fn fn;
    void *ctx;
    int64_t n_items, grain;
    _Atomic int64_t next;
};

/* The pool and worker id whose chunk this thread is running, for nested loops. */
static _Thread_local cpu_pool *tl_pool;
static _Thread_local int tl_worker;

static void set_err(char *err, size_t n, const char *fmt, ...)
{
    if (!err || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

int cpu_pool_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0)
            return c;
    }
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

static void run_chunks(cpu_pool *p, int worker)
{
    cpu_pool *saved_pool = tl_pool;
    int saved_worker = tl_worker;
    tl_pool = p;
    tl_worker = worker;
    for (;;) {
        int64_t b = atomic_fetch_add_explicit(&p->next, p->grain, memory_order_relaxed);
        if (b >= p->n_items)
            break;
        int64_t e = b + p->grain < p->n_items ? b + p->grain : p->n_items;
        p->fn(p->ctx, b, e, worker);
    }
    tl_pool = saved_pool;
    tl_worker = saved_worker;
}

static void *helper_main(void *arg)
{
    helper *h = arg;
    cpu_pool *p = h->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
        seen = p->generation;
        if (h->id >= p->wanted)
            continue;
        pthread_mutex_unlock(&p->lock);
        run_chunks(p, h->id);
        pthread_mutex_lock(&p->lock);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int cpu_pool_create(int n_threads, cpu_pool **out, char *err, size_t err_size)
{
    if (!out) {
        set_err(err, err_size, "cpu_pool_create: out is NULL");
        return -1;
    }
    *out = NULL;
    if (n_threads < 0 || n_threads > CPU_POOL_MAX_THREADS) {
        set_err(err, err_size, "cpu_pool_create: thread count %d is outside 0..%d", n_threads,
                CPU_POOL_MAX_THREADS);
        return -1;
    }
    if (n_threads == 0)
        n_threads = cpu_pool_cpu_count();
    if (n_threads > CPU_POOL_MAX_THREADS)
        n_threads = CPU_POOL_MAX_THREADS;

    cpu_pool *p = calloc(1, sizeof *p);
    if (!p) {
        set_err(err, err_size, "cpu_pool_create: out of memory");
        return -1;
    }
    p->n_threads = n_threads;
    pthread_mutex_init(&p->submit, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    if (n_threads > 1) {
        p->threads = calloc((size_t)n_threads - 1, sizeof *p->threads);
        p->helpers = calloc((size_t)n_threads - 1, sizeof *p->helpers);
        if (!p->threads || !p->helpers) {
            set_err(err, err_size, "cpu_pool_create: out of memory");
            cpu_pool_destroy(p);
            return -1;
        }
    }
    for (int i = 1; i < n_threads; i++) {
        p->helpers[i - 1] = (helper){p, i};
        int rc = pthread_create(&p->threads[i - 1], NULL, helper_main, &p->helpers[i - 1]);
        if (rc != 0) {
            set_err(err, err_size, "cpu_pool_create: starting thread %d of %d failed: %s", i,
                    n_threads, strerror(rc));
            cpu_pool_destroy(p);
            return -1;
        }
        p->n_started++;
    }
    *out = p;
    return 0;
}

void cpu_pool_destroy(cpu_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_started; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->submit);
    free(p->threads);
    free(p->helpers);
    free(p);
}

int cpu_pool_threads(const cpu_pool *p)
{
    return p ? p->n_threads : 0;
}

static void run_serial(int64_t n, int64_t grain, cpu_range_fn fn, void *ctx, int worker)
{
    for (int64_t b = 0; b < n; b += grain)
        fn(ctx, b, b + grain < n ? b + grain : n, worker);
}

int cpu_pool_parallel_for(cpu_pool *p, int64_t n_items, int64_t grain, cpu_range_fn fn,
                          void *ctx, char *err, size_t err_size)
{
    if (!p || !fn) {
        set_err(err, err_size, "cpu_pool_parallel_for: %s is NULL", p ? "fn" : "pool");
        return -1;
    }
    if (n_items <= 0)
        return 0;
    if (n_items > INT64_MAX / 2) {
        set_err(err, err_size, "cpu_pool_parallel_for: %lld items is too many",
                (long long)n_items);
        return -1;
    }
    if (grain <= 0) {
        grain = n_items / ((int64_t)p->n_threads * 8);
        if (grain < 1)
            grain = 1;
    }
    if (grain > n_items)
        grain = n_items;
    int64_t chunks = (n_items + grain - 1) / grain;

    /* Nested loop on this pool: the pool is busy with our caller's loop. */
    if (tl_pool == p) {
        run_serial(n_items, grain, fn, ctx, tl_worker);
        return 0;
    }
    if (chunks == 1 || p->n_threads == 1) {
        cpu_pool *saved_pool = tl_pool;
        int saved_worker = tl_worker;
        tl_pool = p;
        tl_worker = 0;
        run_serial(n_items, grain, fn, ctx, 0);
        tl_pool = saved_pool;
        tl_worker = saved_worker;
        return 0;
    }

    pthread_mutex_lock(&p->submit);
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n_items;
    p->grain = grain;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->wanted = chunks < p->n_threads ? (int)chunks : p->n_threads;
    p->pending = p->wanted - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    run_chunks(p, 0);

    pthread_mutex_lock(&p->lock);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->submit);
    return 0;
}
