/* Internals shared by the engine's own files; plugin/ uses engine.h and kernel.h only. */
#ifndef PLUME_ENGINE_INTERNAL_H
#define PLUME_ENGINE_INTERNAL_H

#include "engine/engine.h"
#include "engine/kernel.h"
#include "sparse/tree.h"

/* Kernels exist only when every stage was built (engine/CMakeLists.txt). */
#if PLUME_HAVE_KERNELS
#include "engine/backend/cpu_pool.h"
#include "engine/code_cache.h"
#include "engine/codegen/jit.h"
#include "engine/kernel_internal.h"
#include "engine/sfg/sfg.h"
#include "engine/task_profile.h"
#endif

/* SFG value-state ids of kernels' global-temporary buffers: above every field id. */
#define ENG_GTMP_STATE_BASE (1u << 24)

#define ENG_ERR_SIZE 16384

struct eng_context {
    eng_progress_fn progress; /* eng_set_progress */
    void *progress_user;
    eng_cancel_fn cancel; /* eng_set_cancel */
    void *cancel_user;
    double cancel_polled; /* when a running batch last asked it (eng_poll_cancel) */
    int threads;
    uint64_t budget;
    /* Bytes in use over the context's CPU trees, which charge it as they grow (atomic; the
     * runtime's shared_used): the budget holds for the context, not per tree. (On a GPU the
     * trees share the device pool, which the budget sizes.) */
    uint64_t mem_used;
    eng_field **fields;
    int nfields;
    char err[ENG_ERR_SIZE];
    int err_code; /* the code eng_fail returned with err */
    eng_mode mode;
    int deterministic; /* eng_set_deterministic: order-dependent tasks run serially */
#if PLUME_HAVE_KERNELS
    /* Kernels (created on the first launch: a context that only moves volumes never starts
     * threads or LLVM). */
    eng_program **programs;
    uint32_t nprograms;
    /* released by their users while launches of theirs were still queued: freed once those
     * have run (eng_program_release) */
    eng_program **retired;
    uint32_t nretired;
    int runtime_ready;
    cpu_pool *pool;
    jit *jit;
    sfg_bank *bank;
    sfg_queue *queue;
    eng_code_cache codes;
    uint32_t next_gtmp_state;
    eng_stats stats;      /* the parts the engine counts itself (times) */
    eng_stats stats_base; /* counters of queues replaced by eng_set_mode */
    jit_stats jit_base;   /* JIT counters at the last reset */
    int in_exec;          /* inside a flush: host hooks must not flush again */
    int exec_rc;          /* the executor's engine error code of the last failed batch */
    struct eng_cuda *cuda; /* the GPU the context runs on (exec_cuda.h); NULL: the CPU */
    task_profile profile;  /* PLUME_PROFILE=1: time per task, printed when the runtime goes */
    struct eng_launcher *launcher; /* the launch thread (launcher.h); NULL until first used */
#endif
};

/* Where eng_fail writes its message on this thread instead of ctx->err, or NULL: the launch
 * thread's own buffer (launcher.c), so its failures never race the context's thread. */
extern _Thread_local char *eng_thread_err;

int eng_fail(eng_context *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* eng_set_progress's callback for compiles (done of total tasks), where one is set and this is
 * the context's thread (exec.c). */
void eng_report_compile(eng_context *ctx, uint32_t done, uint32_t total);

int eng_field_new(eng_context *ctx, const eng_field_desc *desc, eng_field **out);
/* n fields placed in one new tree (aos: interleaved per voxel), ids ctx->nfields .. + n - 1
 * (the caller appends them in that order); out receives n fields or, on failure, n NULLs. */
int eng_field_new_group(eng_context *ctx, const eng_field_desc *descs, int n, int aos,
                        eng_field **out);
/* 1 when the field shares its tree with others (declared in a group of two or more). */
int eng_field_shares_tree(const eng_field *f);
/* Sets the field's values in every active block to its background; the blocks stay active
 * (how a field of a group is cleared: its tree's cells are its siblings' too). */
void eng_field_fill_background(eng_context *ctx, eng_field *f);
void eng_field_free(eng_field *f);
uint64_t eng_field_bytes(eng_field *f);
plm_tree *eng_field_tree(eng_field *f);
int eng_field_id(const eng_field *f);            /* index in ctx->fields */
int eng_field_tree_id(const eng_field *f);       /* the field's id inside its tree */
/* Host hooks (field_store.c): before the host reads a field, queued work runs; before it
 * writes one, too, and the queue forgets what it knew of the field's states. No-ops without
 * kernels. */
int eng_host_read(eng_context *ctx);
int eng_host_write(eng_context *ctx, eng_field *f);

#if PLUME_HAVE_KERNELS
/* The field as the IR sees it (computed at declaration); NULL when its layout cannot be
 * expressed in the IR. */
const ir_field_info *eng_field_ir_info(const eng_field *f);

/* Kernels' runtime: pool, JIT, bank and queue, made on first use. */
int eng_runtime_ready(eng_context *ctx);
void eng_runtime_free(eng_context *ctx);
/* The SFG executor (exec.c), on the CPU and on a GPU: a batch flushed without a sync goes to
 * the launch thread (launcher.h) when the mode asks for one. */
int eng_exec_batch(void *ud, const sfg_batch *batch);
/* Whether the batch compiles task i's code: it is new (fresh[i]), or a cancelled compile left
 * it without a function and no earlier task of the batch shares it. Asked where the batch runs,
 * in batch order, never while an earlier batch may still be compiling it. */
int eng_code_to_compile(eng_code *const *codes, const unsigned char *fresh, uint32_t i);
/* Code entries for a batch's tasks (codes[i] NULL for runtime tasks; fresh[i] = 1 where the
 * entry is new and still has to be compiled). The context's thread only. */
int eng_resolve_codes(eng_context *ctx, const sfg_batch *batch, eng_code **codes,
                      unsigned char *fresh);
/* Compiles the tasks whose code entries are fresh, then runs the batch (exec.c; on a GPU
 * exec_cuda.c): on the launch thread, or on the context's thread once that one is idle. */
int eng_exec_resolved(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                      const unsigned char *fresh);
/* Only the compiling part: what a batch dropped after a failure still does, so that the code
 * entries made for it (found by later batches as not fresh) hold code. */
int eng_compile_resolved(eng_context *ctx, const sfg_batch *batch, eng_code *const *codes,
                         const unsigned char *fresh);
sfg_executor_fn eng_executor(const eng_context *ctx);
/* The code cache's entry for a task with code (serial, range_for, struct_for): found, or made
 * with the task lowered for code generation (*fresh = 1: the caller compiles it). */
int eng_code_for(eng_context *ctx, const sfg_exec_task *t, eng_code **out, int *fresh);
/* The SNode a runtime task (clear_list, listgen, gc) names as field id * 16 + level: its tree's
 * runtime, the SNode's id there and (level may be NULL) the level. ENG_OK or an engine error. */
int eng_task_snode(eng_context *ctx, uint32_t snode, plm_runtime **rt, int32_t *rt_snode,
                   uint32_t *level);
/* Budget and range errors recorded by running tasks, as an engine error; cleared. culprit:
 * the task after which the first error was seen (exec.c), or NULL: the message names its
 * kernels and starts with its program's origin (eng_program_set_origin), and one of its
 * fields is the one reported. */
int eng_check_runtime_errors(eng_context *ctx, const sfg_exec_task *culprit);
/* 1 when a field task t binds (a runtime task: the field it works on) has a runtime error
 * raised (t ran last: t raised it). */
int eng_task_faulted(eng_context *ctx, const sfg_exec_task *t);
/* An SFG failure as an engine error (the executor's own message is kept). */
int eng_queue_error(eng_context *ctx, int sfg_code);
#endif

#endif
