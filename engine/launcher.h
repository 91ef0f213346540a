/* launcher.h — the launch thread of a CPU context: batches flushed without a sync run there,
 * one after the other in the order they were flushed, while the context's own thread goes on
 * queueing tasks and optimizing the next flush (issue 6 item 5). A sync waits for the launch
 * thread to finish everything handed to it, then runs its own batch on the context's thread.
 *
 * What crosses. The executor (exec.c) resolves each task's code entry on the context's thread
 * first (lowering a task it has not seen clones the bound IR, which the optimizer clones too),
 * then hands over a deep copy of the batch: tasks, their argument bytes and names, the code
 * entries, and which of them are new (the launch thread submits those to the JIT). The launch
 * thread reads the context's fields, pool, JIT and code entries; every engine call that
 * changes those, or reads what tasks write, waits for it first (eng_launcher_drain: the host
 * hooks through eng_sync, field declarations, mode and determinism changes, statistics,
 * destruction).
 *
 * Errors. A batch that fails on the launch thread keeps its message (eng_fail writes to the
 * launch thread's own buffer there); the batches queued after it are dropped (only their new
 * code is compiled); the next drain or submit on the context's thread (the next flush or sync)
 * returns the error code and puts the message in the context's error, once.
 *
 * Threads: every function here on the context's thread only. */
#ifndef PLUME_ENGINE_LAUNCHER_H
#define PLUME_ENGINE_LAUNCHER_H

#include "engine/engine_internal.h"

#if PLUME_HAVE_KERNELS
typedef struct eng_launcher eng_launcher;

/* Hands the batch to the launch thread (started on first use). codes[i]: task i's code entry
 * or NULL (runtime tasks); fresh[i]: 1 where the entry still has to be compiled. Copies what
 * it needs; ENG_OK, or the error of an earlier batch (ctx->err set). A batch dropped because
 * of an earlier failure still has its new code entries compiled there (later batches find
 * them made and do not compile them). */
int eng_launcher_submit(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                        const unsigned char *fresh);

/* Waits until the launch thread has run (or dropped) everything handed to it, and on a GPU
 * until the batches left running on the stream have finished (eng_cuda_drain). ENG_OK, or
 * the engine error of a batch that failed there or of a runtime error the GPU's batches
 * raised (ctx->err set). A no-op without a launch thread or batches in flight. */
int eng_launcher_drain(eng_context *ctx);

/* Waits for the launch thread alone: for a batch about to run on the context's thread, which
 * follows the GPU stream's work in the stream's order. */
int eng_launcher_drain_thread(eng_context *ctx);

/* Waits the same way but leaves an error where it is, for the next drain or submit: for
 * calls that cannot report it (statistics, field declarations). */
void eng_launcher_wait(eng_context *ctx);

/* Waits and ends the thread (eng_runtime_free); an error not yet reported is dropped. */
void eng_launcher_stop(eng_context *ctx);

/* 1 on the launch thread: engine hooks that would wait for it return at once there. */
int eng_on_launch_thread(void);
#endif

#endif
