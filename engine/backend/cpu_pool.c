/* The CPU thread pool: one posted loop at a time, chunks drawn from an atomic counter.
 *
 * Protocol. The poster (holding `submit`) writes the job, opens it (`closed` = 0) and bumps
 * `generation`. A helper that sees a new generation announces itself in `active`, then looks
 * at `closed`: open, it takes chunks (helpers whose id is not below `wanted` take none, so a
 * loop with 3 chunks busies no more than 2 helpers); closed, it leaves without touching the
 * job. When no chunk is left the poster closes the job and waits until `active` is 0. Both
 * sides write their flag before reading the other's (sequentially consistent atomics), so
 * either the poster sees the helper and waits for it, or the helper sees the job closed: the
 * job fields are never rewritten while a helper may still read them, and the poster never
 * waits for a helper that has not woken up yet.
 *
 * Affinity. Each participant owns a run of consecutive chunks, the same run for every loop of
 * the same size, and takes the chunks of its own run first; only then does it take what is
 * left of the others' runs. A solver posts loop after loop over the same blocks (a smoothing
 * sweep reads what the one before wrote), and a block that goes to the same core each time is
 * still in that core's cache. With one shared counter the blocks went to whichever thread
 * asked first, so every loop moved about half its data between the cores: the multigrid
 * sweeps took as long on two threads as on one.
 *
 * Latency. Tasks of a solver step follow each other within microseconds, and waking a
 * sleeping thread costs more than many of them take. So a helper that finished a loop (or
 * found none) spins for a while (SPIN_NS) watching `generation` before it sleeps on `wake`;
 * `sleepers` tells the poster whether anyone needs the condition variable at all. */
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
#include <time.h>
#include <unistd.h>

/* One participant's run of chunks [next, end); on its own cache line, since its owner and a
 * thief both bump `next`. */
typedef struct run {
    _Alignas(64) _Atomic int64_t next;
    int64_t end;
} run;

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
    pthread_mutex_t lock;   /* with `wake`: sleeping helpers */
    pthread_cond_t wake;
    _Atomic uint64_t generation; /* bumped per posted loop */
    _Atomic int closed;          /* 1: the current job takes no new helper */
    _Atomic int active;          /* helpers between announcing themselves and leaving */
    _Atomic int sleepers;        /* helpers waiting on `wake` (or about to) */
    _Atomic int stop;

    /* the job: written by the poster while it is closed and no helper is active */
    int wanted; /* workers 0..wanted-1 take part in the current loop */
    cpu_range_fn fn;
    void *ctx;
    int64_t n_items, grain;
    run *runs; /* n_threads of them; runs[0..wanted) hold the current loop's chunk indices */
};

/* How long an idle helper keeps watching for the next loop before it sleeps. */
#define SPIN_NS 100000

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

/* Runs the chunks left in r; returns when it has none. The plain load first keeps a finished
 * run's line clean in the other cores' caches on pools of many threads. */
static void drain_run(cpu_pool *p, run *r, int worker)
{
    for (;;) {
        if (atomic_load_explicit(&r->next, memory_order_relaxed) >= r->end)
            return;
        int64_t c = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
        if (c >= r->end)
            return;
        int64_t b = c * p->grain;
        int64_t e = b + p->grain < p->n_items ? b + p->grain : p->n_items;
        p->fn(p->ctx, b, e, worker);
    }
}

static void run_chunks(cpu_pool *p, int worker)
{
    cpu_pool *saved_pool = tl_pool;
    int saved_worker = tl_worker;
    tl_pool = p;
    tl_worker = worker;
    int w = p->wanted;
    for (int k = 0; k < w; k++)
        drain_run(p, &p->runs[(worker + k) % w], worker);
    tl_pool = saved_pool;
    tl_worker = saved_worker;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Returns once `generation` differs from seen or the pool stops. */
static void await_loop(cpu_pool *p, uint64_t seen)
{
    uint64_t t0 = mono_ns();
    for (unsigned i = 0;; i++) {
        if (atomic_load(&p->generation) != seen || atomic_load(&p->stop))
            return;
        cpu_relax();
        if ((i & 63) == 63 && mono_ns() - t0 > SPIN_NS)
            break;
    }
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add(&p->sleepers, 1);
    while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->lock);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->lock);
}

static void *helper_main(void *arg)
{
    helper *h = arg;
    cpu_pool *p = h->pool;
    uint64_t seen = 0;
    for (;;) {
        await_loop(p, seen);
        if (atomic_load(&p->stop))
            break;
        atomic_fetch_add(&p->active, 1);
        /* the job is what the generation now says, whichever one that is */
        seen = atomic_load(&p->generation);
        if (!atomic_load(&p->closed) && h->id < p->wanted)
            run_chunks(p, h->id);
        atomic_fetch_sub(&p->active, 1);
    }
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
    atomic_init(&p->generation, 0);
    atomic_init(&p->closed, 1);
    atomic_init(&p->active, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->stop, 0);
    p->runs = aligned_alloc(_Alignof(run), (size_t)n_threads * sizeof *p->runs);
    if (!p->runs) {
        set_err(err, err_size, "cpu_pool_create: out of memory");
        cpu_pool_destroy(p);
        return -1;
    }
    for (int i = 0; i < n_threads; i++) {
        atomic_init(&p->runs[i].next, 0);
        p->runs[i].end = 0;
    }
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
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_started; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->submit);
    free(p->threads);
    free(p->helpers);
    free(p->runs);
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
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n_items;
    p->grain = grain;
    p->wanted = chunks < p->n_threads ? (int)chunks : p->n_threads;
    for (int w = 0; w < p->wanted; w++) {
        atomic_store_explicit(&p->runs[w].next, chunks * w / p->wanted, memory_order_relaxed);
        p->runs[w].end = chunks * (w + 1) / p->wanted;
    }
    atomic_store(&p->closed, 0);
    atomic_fetch_add(&p->generation, 1);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }

    run_chunks(p, 0);

    /* every chunk is taken; helpers still running one are counted in `active` */
    atomic_store(&p->closed, 1);
    while (atomic_load(&p->active) > 0)
        cpu_relax();
    pthread_mutex_unlock(&p->submit);
    return 0;
}
