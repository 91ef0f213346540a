/* Deferred file writes of one context: the "plume.deferred_writes/1" extension (plume.h).
 *
 * With deferral on, the export node captures its grids on the context's thread and queues the
 * file here; one writer thread per context (started at the first queued write) writes the
 * files in the order queued, each atomically (pl_vdb_write_stable_core), while the host cooks
 * the next frame. What the writer cannot tell the host itself (it must not call the host's
 * callbacks) waits for the context's thread: pl_wq_collect logs the files written and returns a
 * failure once. After a failed write the writer drops every later write until that failure has
 * been reported, so nothing after a missing frame lands unannounced.
 *
 * Checkpoints must not claim a frame whose files failed: a checkpoint queues a barrier
 * (pl_wq_add_barrier) and writes only if no file queued before it failed or was dropped since
 * the queue was made or rewound (pl_wq_rewind: a checkpoint loaded, so the frames after it are
 * cooked again). A refused checkpoint does not clear that: a host that cooks on after a failure
 * would otherwise get a checkpoint past the missing frame.
 *
 * Ownership: the queue belongs to its context (pl_context.writes); pl_wq_push takes the job's
 * grids whatever it returns. A barrier belongs to whoever asked for it until
 * pl_wq_barrier_wait, which frees it. Threads: the context's thread for everything except
 * pl_wq_barrier_wait, which the checkpoint's writer thread may call; a barrier points into its
 * queue, so the context waits for its checkpoint writer (pl_checkpoint_wait) before
 * pl_wq_destroy. */
#ifndef PLUME_PLUGIN_WRITE_QUEUE_H
#define PLUME_PLUGIN_WRITE_QUEUE_H

#include "plugin/plugin.h"
#include "vdbio/vdbio.h"

/* Writes pending at most (queued or being written): a third push waits, so a slow disk holds
 * the cook back instead of filling memory with captured frames. */
#define PL_WQ_MAX_PENDING 2

typedef struct pl_write_queue pl_write_queue;
typedef struct pl_wq_barrier pl_wq_barrier;

/* NULL when out of memory. */
pl_write_queue *pl_wq_create(void);
/* Waits for every pending write, logs what is left to log (a failure nobody collected at
 * ERROR level) and frees. q may be NULL. */
void pl_wq_destroy(pl_write_queue *q, pl_context *ctx);

/* Queues the file `path` of grids[0..count) with the write options `wo` (its file_meta
 * copied). `what` names the write in messages ("node 'export', frame 7"). Takes the grids (and
 * frees them, also on failure). Waits while PL_WQ_MAX_PENDING writes are pending; when the host
 * cancels meanwhile, returns PLUME_ERR_CANCELLED without queueing the file (the files queued
 * before it are still written). When no writer thread can be started, writes here and now. */
plume_status pl_wq_push(pl_write_queue *q, pl_context *ctx, const char *what, const char *path,
                        plm_vdb_grid **grids, int count, const plm_vdb_write_options *wo);

/* Logs the files written since the last call (INFO "wrote PATH") and returns, through pl_fail,
 * the first failure since the last report (then forgotten) as PLUME_ERR_IO: its message names
 * the file and what wrote it, and counts the writes dropped after it. PLUME_OK when none. */
plume_status pl_wq_collect(pl_write_queue *q, pl_context *ctx);
/* Waits until nothing is pending, then pl_wq_collect. */
plume_status pl_wq_finish(pl_write_queue *q, pl_context *ctx);

/* A checkpoint was loaded: the frames after it will be cooked and written again. Waits until
 * nothing is pending, logs a failure not yet reported at ERROR level instead of returning it
 * later (its frame is one the load discards), and forgets the missing files for barriers. */
void pl_wq_rewind(pl_write_queue *q, pl_context *ctx);

/* A point in the queue's order; NULL when out of memory (then pl_wq_barrier_wait(NULL) says
 * nothing is known to have failed). */
pl_wq_barrier *pl_wq_add_barrier(pl_write_queue *q);
/* Waits until every write queued before b is done. Returns 0 when no file queued before it
 * failed or was dropped since the queue was made or rewound; otherwise -1 with the first such
 * file's message in err. Frees b. Any thread. */
int pl_wq_barrier_wait(pl_wq_barrier *b, char *err, size_t err_size);

#endif
