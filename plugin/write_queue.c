/* Deferred file writes: a FIFO of captured files and barriers, one writer thread
 * (write_queue.h). */
#include "plugin/write_queue.h"
#include "plugin/vdb_stable.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One file to write, or a barrier. Files go from the queue to the writer and then to the done
 * list, which the context's thread empties (it logs them there, as only it may). */
typedef struct wq_item {
    struct wq_item *next;
    pl_wq_barrier *barrier; /* set: this item is a barrier, nothing else is used */
    char *what, *path;
    plm_vdb_grid **grids;
    int count;
    plm_vdb_write_options wo;
    plm_vdb_meta *meta; /* wo.file_meta: the item's own copies */
    uint64_t seq;       /* 1, 2, ... in the order queued */
    int dropped;        /* not written: queued after a failed write, before its report */
    int uuid_left;
    plume_status status;
    char err[4600];
} wq_item;

struct pl_wq_barrier {
    pthread_mutex_t *mu; /* the queue's */
    pthread_cond_t *cv;
    int done, failed;
    char err[4800];
};

struct pl_write_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* any change: an item queued or done, a barrier passed, stop */
    pthread_t thread;
    int started, no_thread, stop;
    wq_item *head, *tail; /* queued, oldest first */
    wq_item *done_head, *done_tail;
    int pending;          /* files queued or being written */
    uint64_t last_seq;    /* of the last file queued */
    uint64_t drop_through; /* files up to this one were queued before a failure's report: dropped */
    /* the first failure not yet reported to the host, and the writes dropped after it */
    int failed;
    plume_status fail_status;
    char fail_msg[4800];
    unsigned dropped;
    /* the first file that failed or was dropped since the queue was made or rewound: every
     * barrier after it fails (a checkpoint must not claim the frames past a missing file) */
    int missing;
    char missing_msg[4800];
};

/* How often a push waiting for a slot asks the host whether it cancelled. */
#define WQ_CANCEL_POLL_MS 20

static void item_free(wq_item *it)
{
    if (!it)
        return;
    for (int i = 0; i < it->count; i++)
        plm_vdb_grid_free(it->grids[i]);
    free(it->grids);
    if (it->meta)
        for (int i = 0; i < it->wo.file_meta_count; i++) {
            free((char *)it->meta[i].key);
            free((char *)it->meta[i].type);
            free((char *)it->meta[i].value);
        }
    free(it->meta);
    free(it->what);
    free(it->path);
    free(it);
}

static void free_grids(wq_item *it)
{
    for (int i = 0; i < it->count; i++)
        plm_vdb_grid_free(it->grids[i]);
    it->count = 0;
}

/* Writes one file; no lock held. */
static void write_item(wq_item *it)
{
    it->status = pl_vdb_write_stable_core(it->path, (const plm_vdb_grid *const *)it->grids, it->count, &it->wo,
                                          it->err, sizeof it->err, &it->uuid_left);
    free_grids(it); /* the captured frame's memory goes back now, not when the item is logged */
}

/* With the lock held: what a file's outcome changes, and the item to the done list. */
static void settle(pl_write_queue *q, wq_item *it)
{
    if (it->dropped) {
        if (it->seq > q->drop_through)
            q->dropped++; /* else the report counted it already */
        if (!q->missing) {
            q->missing = 1;
            snprintf(q->missing_msg, sizeof q->missing_msg, "%s (%s) was dropped after an earlier write failed",
                     it->what, it->path);
        }
    } else if (it->status != PLUME_OK) {
        if (!q->failed) {
            q->failed = 1;
            /* reported by a later call, where no argument of the host's is at fault */
            q->fail_status = PLUME_ERR_IO;
            snprintf(q->fail_msg, sizeof q->fail_msg, "%s: %s", it->what, it->err);
        }
        if (!q->missing) {
            q->missing = 1;
            snprintf(q->missing_msg, sizeof q->missing_msg, "%s failed: %s", it->what, it->err);
        }
    }
    it->next = NULL;
    if (q->done_tail)
        q->done_tail->next = it;
    else
        q->done_head = it;
    q->done_tail = it;
    q->pending--;
}

/* With the lock held: the barrier's answer. */
static void pass_barrier(pl_write_queue *q, pl_wq_barrier *b)
{
    b->failed = q->missing;
    if (b->failed)
        snprintf(b->err, sizeof b->err, "%s", q->missing_msg);
    b->done = 1;
}

/* With the lock held (released while writing): writes a file, or drops it when a failure
 * before it is unreported or was reported after it was queued, so that the host hears of
 * every file lost. */
static void run_one(pl_write_queue *q, wq_item *it)
{
    if (q->failed || it->seq <= q->drop_through) {
        it->dropped = 1;
    } else {
        pthread_mutex_unlock(&q->mu);
        write_item(it);
        pthread_mutex_lock(&q->mu);
    }
    settle(q, it);
}

static void *writer_main(void *arg)
{
    pl_write_queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        if (!q->head)
            break; /* stop, and nothing left */
        wq_item *it = q->head;
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        if (it->barrier) {
            pass_barrier(q, it->barrier);
            free(it);
        } else {
            run_one(q, it);
        }
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

pl_write_queue *pl_wq_create(void)
{
    pl_write_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* timed waits unmoved by clock changes */
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    return q;
}

/* With the lock held: waits until no file is pending. */
static void wait_idle(pl_write_queue *q)
{
    while (q->pending > 0 || q->head)
        pthread_cond_wait(&q->cv, &q->mu);
}

void pl_wq_destroy(pl_write_queue *q, pl_context *ctx)
{
    if (!q)
        return;
    pl_wq_finish(q, ctx); /* a failure is logged at ERROR level by pl_fail */
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (q->started)
        pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* With the lock held: `it` to the end of the queue, and the writer woken. */
static void enqueue(pl_write_queue *q, wq_item *it)
{
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    pthread_cond_broadcast(&q->cv);
}

static char *dup_or(const char *s, int *oom)
{
    char *d = strdup(s ? s : "");
    if (!d)
        *oom = 1;
    return d;
}

plume_status pl_wq_push(pl_write_queue *q, pl_context *ctx, const char *what, const char *path,
                        plm_vdb_grid **grids, int count, const plm_vdb_write_options *wo)
{
    wq_item *it = calloc(1, sizeof *it);
    int oom = !it;
    if (it) {
        it->grids = calloc((size_t)(count > 0 ? count : 1), sizeof *it->grids);
        it->wo = wo ? *wo : (plm_vdb_write_options){0};
        it->what = dup_or(what, &oom);
        it->path = dup_or(path, &oom);
        if (it->wo.file_meta_count > 0) {
            it->meta = calloc((size_t)it->wo.file_meta_count, sizeof *it->meta);
            oom |= !it->meta;
            for (int i = 0; it->meta && i < it->wo.file_meta_count; i++) {
                it->meta[i].key = dup_or(wo->file_meta[i].key, &oom);
                it->meta[i].type = dup_or(wo->file_meta[i].type, &oom);
                it->meta[i].value = dup_or(wo->file_meta[i].value, &oom);
            }
        }
        it->wo.file_meta = it->meta;
        oom |= !it->grids;
    }
    if (oom) {
        item_free(it);
        for (int i = 0; i < count; i++)
            plm_vdb_grid_free(grids[i]);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "%s: out of host memory queueing %s", what, path);
    }
    for (int i = 0; i < count; i++)
        it->grids[i] = grids[i];
    it->count = count;

    pthread_mutex_lock(&q->mu);
    if (!q->started && !q->no_thread) {
        int rc = pthread_create(&q->thread, NULL, writer_main, q);
        q->started = rc == 0;
        q->no_thread = rc != 0;
        if (rc != 0)
            pl_log(ctx, PLUME_LOG_DEBUG, "deferred writes: no writer thread (%s); writing on the cook's thread",
                   strerror(rc));
    }
    if (q->no_thread) { /* in order: whatever was queued before is done (there is no thread) */
        q->pending++;
        it->seq = ++q->last_seq;
        run_one(q, it);
        pthread_mutex_unlock(&q->mu);
        return PLUME_OK;
    }
    /* A slow disk holds the cook here, so the host's cancel is looked at while waiting (the
     * host may call is_cancelled only on this thread, which is the cook's). */
    while (q->pending >= PL_WQ_MAX_PENDING) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += WQ_CANCEL_POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&q->cv, &q->mu, &until);
        if (q->pending < PL_WQ_MAX_PENDING)
            break;
        int busy = q->pending;
        pthread_mutex_unlock(&q->mu);
        if (pl_cancelled(ctx)) {
            item_free(it);
            return pl_fail(ctx, PLUME_ERR_CANCELLED,
                           "%s: cancelled by the host while %d earlier files were still being "
                           "written; %s was not written",
                           what, busy, path);
        }
        pthread_mutex_lock(&q->mu);
    }
    q->pending++;
    it->seq = ++q->last_seq;
    enqueue(q, it);
    pthread_mutex_unlock(&q->mu);
    return PLUME_OK;
}

plume_status pl_wq_collect(pl_write_queue *q, pl_context *ctx)
{
    pthread_mutex_lock(&q->mu);
    wq_item *done = q->done_head;
    q->done_head = q->done_tail = NULL;
    int failed = q->failed;
    plume_status st = q->fail_status;
    unsigned dropped = q->dropped;
    char msg[4800];
    if (failed) {
        snprintf(msg, sizeof msg, "%s", q->fail_msg);
        /* every file still queued came after the failed one: it will be dropped too, and is
         * counted now, as the host hears of the failure only once */
        for (wq_item *it = q->head; it; it = it->next)
            dropped += !it->barrier;
        q->drop_through = q->last_seq;
        q->failed = 0;
        q->dropped = 0;
    }
    pthread_mutex_unlock(&q->mu);
    while (done) {
        wq_item *next = done->next;
        if (done->uuid_left)
            pl_log(ctx, PLUME_LOG_DEBUG, "%s: unknown OpenVDB header; its UUID is left random", done->path);
        if (!done->dropped && done->status == PLUME_OK)
            pl_log(ctx, PLUME_LOG_INFO, "wrote %s", done->path);
        else if (done->dropped)
            pl_log(ctx, PLUME_LOG_ERROR, "%s: %s was not written: an earlier write failed", done->what,
                   done->path);
        item_free(done);
        done = next;
    }
    if (!failed)
        return PLUME_OK;
    if (dropped)
        return pl_fail(ctx, st, "%s (the %u write%s queued after it %s dropped)", msg, dropped,
                       dropped == 1 ? "" : "s", dropped == 1 ? "was" : "were");
    return pl_fail(ctx, st, "%s", msg);
}

plume_status pl_wq_finish(pl_write_queue *q, pl_context *ctx)
{
    pthread_mutex_lock(&q->mu);
    wait_idle(q);
    pthread_mutex_unlock(&q->mu);
    return pl_wq_collect(q, ctx);
}

void pl_wq_rewind(pl_write_queue *q, pl_context *ctx)
{
    /* pl_fail logs the failure at ERROR level; nothing returns it */
    (void)pl_wq_finish(q, ctx);
    pthread_mutex_lock(&q->mu);
    q->missing = 0;
    pthread_mutex_unlock(&q->mu);
}

pl_wq_barrier *pl_wq_add_barrier(pl_write_queue *q)
{
    pl_wq_barrier *b = calloc(1, sizeof *b);
    wq_item *it = b ? calloc(1, sizeof *it) : NULL;
    if (!it) {
        free(b);
        return NULL;
    }
    b->mu = &q->mu;
    b->cv = &q->cv;
    it->barrier = b;
    pthread_mutex_lock(&q->mu);
    if (!q->started) { /* nothing can be queued: the answer is known now */
        pass_barrier(q, b);
        free(it);
    } else {
        enqueue(q, it);
    }
    pthread_mutex_unlock(&q->mu);
    return b;
}

int pl_wq_barrier_wait(pl_wq_barrier *b, char *err, size_t err_size)
{
    if (!b)
        return 0;
    pthread_mutex_lock(b->mu);
    while (!b->done)
        pthread_cond_wait(b->cv, b->mu);
    pthread_mutex_unlock(b->mu);
    int failed = b->failed;
    if (failed && err_size)
        snprintf(err, err_size, "%s", b->err);
    free(b);
    return failed ? -1 : 0;
}
