/* cpu_pool.h — a persistent pthread pool that runs parallel-for loops over index ranges.
 *
 * What it does. cpu_pool_create starts n-1 background threads; the thread that calls
 * cpu_pool_parallel_for is the n-th worker, so "2 threads" means the caller plus one helper.
 * A loop over [0, n_items) is cut into chunks of `grain` items. Worker w of the W taking part
 * owns the w-th of W consecutive runs of chunks and runs its own run's chunks in order first,
 * then takes what is left of the others' (a thread that drew cheap chunks, or started late,
 * is made up for); the call returns when every chunk has run. So loops of the same size give
 * each worker the same items as long as none had to help another, and data a worker wrote in
 * one loop is still in its core's cache in the next. Each chunk is passed to fn(ctx, begin,
 * end, worker_id) with begin < end <= n_items.
 *
 * worker_id is in [0, cpu_pool_threads(pool)) and no two chunks that run at the same time in
 * one loop share an id, so per-worker scratch indexed by worker_id needs no lock. The calling
 * thread is worker 0.
 *
 * Several pools may live in one process (one per engine context); they are independent.
 *
 * Threads.
 *   - cpu_pool_create / cpu_pool_destroy: any thread, but destroy only when no loop of this
 *     pool is running or waiting (the owner's job, usually the engine context's thread).
 *   - cpu_pool_parallel_for: any thread. Loops from different threads on one pool run one after
 *     the other (a later caller waits for the pool). A call made from inside fn, on the same
 *     pool (a nested loop), runs serially on the calling worker with that worker's id, so nested
 *     code is correct and cannot deadlock. fn must not wait for another thread's loop on the
 *     same pool.
 *   - fn runs on the caller and on the pool's threads; it must be safe to run concurrently with
 *     itself on disjoint ranges.
 *
 * Idle helpers. After a loop a helper keeps watching for the next one for about 100 us (a
 * spinning core) before it sleeps, because solver steps post loops microseconds apart and a
 * wake-up costs more than many of those loops; an idle pool costs no CPU after that.
 *
 * Errors. Functions return 0 on success or -1 and write a one-line message to err (when err is
 * not NULL). Nothing here aborts or exits. */
#ifndef PLUME_ENGINE_BACKEND_CPU_POOL_H
#define PLUME_ENGINE_BACKEND_CPU_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct cpu_pool cpu_pool;

/* One chunk of a loop: items [begin, end). */
typedef void (*cpu_range_fn)(void *ctx, int64_t begin, int64_t end, int worker_id);

/* n_threads: total workers including the caller; 0 = the number of CPUs this process may run
 * on. At most CPU_POOL_MAX_THREADS. *out is NULL on failure. */
#define CPU_POOL_MAX_THREADS 1024
int cpu_pool_create(int n_threads, cpu_pool **out, char *err, size_t err_size);

/* Joins the threads and frees the pool. NULL is accepted. */
void cpu_pool_destroy(cpu_pool *pool);

/* The number of workers (caller included). */
int cpu_pool_threads(const cpu_pool *pool);

/* Runs fn over [0, n_items) in chunks of grain items (grain <= 0 picks a grain that gives
 * about 8 chunks per worker). n_items <= 0 returns at once. A loop with one chunk, or on a
 * one-thread pool, runs on the caller without waking anyone. */
int cpu_pool_parallel_for(cpu_pool *pool, int64_t n_items, int64_t grain, cpu_range_fn fn,
                          void *ctx, char *err, size_t err_size);

/* The number of CPUs this process may run on (sched affinity), at least 1. */
int cpu_pool_cpu_count(void);

#endif
