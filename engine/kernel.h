/* kernel.h — kernels in the engine's internal API (for plugin/): compile source written in the
 * kernel language, launch its kernels on fields with scalar arguments, sync, and read counters.
 *
 * A launch does not run at once: its tasks go to the context's state-flow-graph queue
 * (engine/sfg/sfg.h), which optimizes and runs them at a flush (explicit, every N tasks, or a
 * sync). Every host read of a field (eng_field_read_block, eng_field_reduce, ...) syncs first,
 * and every host write tells the queue, so host code never sees a stale or half-written field.
 * In eager mode each launch runs before eng_launch returns (the reference for the optimizer).
 *
 * Ownership: programs belong to the context and live until eng_destroy; kernel pointers and
 * the strings they hand out live as long as their program.
 *
 * Threads: as for the rest of engine.h, one thread at a time per context. Inside, tasks run on
 * the context's CPU pool and compile on the JIT's compile threads.
 *
 * Errors: ENG_ECOMPILE for source with errors: eng_error() then holds every diagnostic as
 * "file:line:col: error: ..." with the source line and a caret. Launch errors name the kernel
 * and the parameter. A task that exceeds the memory budget makes the next sync fail with
 * ENG_ENOMEM ("memory budget exceeded ..."). */
#ifndef PLUME_ENGINE_KERNEL_H
#define PLUME_ENGINE_KERNEL_H

#include "engine/engine.h"

typedef struct eng_program eng_program;
typedef struct eng_kernel eng_kernel;

/* Compiles `len` bytes of `src`; `file` names it in diagnostics. */
int eng_program_compile(eng_context *ctx, const char *file, const char *src, size_t len,
                        eng_program **out);
/* The caller is done with p and its kernels (a kernel node whose code changed, or that goes):
 * p is freed as soon as no queued launch of its kernels can still run (at once when nothing
 * is queued, else after the next sync), instead of staying until the context goes. p may be
 * NULL. Threading: the context's thread, outside any cook of p's kernels. */
void eng_program_release(eng_context *ctx, eng_program *p);
/* Who the program's kernels work for, in the words a runtime error of theirs should start with
 * (a node: "node 'blur' (org.plume.kernel)"): a kernel that writes outside its field, or runs
 * past the budget, is named with it at the next sync, whichever node syncs. Copied; set once,
 * before any of p's kernels is launched (later calls are ignored and return ENG_EINVAL).
 * Threading: the context's thread. */
int eng_program_set_origin(eng_context *ctx, eng_program *p, const char *origin);
/* The length of the start of eng_error's message that is a program's origin followed by ": "
 * (the runtime error of one of its kernels), 0 when the message starts with none: a caller
 * that adds where it was (its own node) leaves such a message as it is, since it names the
 * node to fix. Threading: the context's thread. */
size_t eng_error_origin(const eng_context *ctx);
uint32_t eng_program_kernel_count(const eng_program *p);
/* The warnings of a program that compiled (file:line:col, the line and a caret each, as the
 * errors are rendered), or NULL when it had none; owned by the program. */
const char *eng_program_warnings(const eng_program *p);
eng_kernel *eng_program_kernel(eng_program *p, uint32_t i);
eng_kernel *eng_program_find(eng_program *p, const char *name);

/* Parameter kinds as a node sees them. */
typedef enum eng_param_type {
    ENG_P_BOOL = 0,
    ENG_P_I32 = 1,
    ENG_P_F32 = 2,
    ENG_P_VEC3 = 3,
    ENG_P_IVEC3 = 4,
    ENG_P_FIELD_F32 = 5,
    ENG_P_FIELD_VEC3 = 6,
    ENG_P_OTHER = 7,  /* a type nodes cannot set (vec2, mat3, ...): launches pass zero */
    ENG_P_U32 = 8,
    ENG_P_I64 = 9,
    ENG_P_F64 = 10
} eng_param_type;

enum { ENG_ACCESS_READ = 1, ENG_ACCESS_WRITE = 2 };

typedef struct eng_param {
    const char *name;
    int type;        /* eng_param_type */
    int dim;         /* fields: 0..3 */
    uint32_t access; /* fields: ENG_ACCESS_* bits */
} eng_param;

const char *eng_kernel_name(const eng_kernel *k);
uint32_t eng_kernel_param_count(const eng_kernel *k);
const eng_param *eng_kernel_param(const eng_kernel *k, uint32_t i);

/* One argument per kernel parameter, in order: `field` for field parameters, else the value in
 * `f` (floats, vectors) or `i` (bool, integers). */
typedef struct eng_arg {
    eng_field *field;
    double f[3];
    int64_t i[3];
} eng_arg;

int eng_launch(eng_context *ctx, eng_kernel *k, const eng_arg *args, uint32_t nargs);
/* The checks eng_launch makes of field parameter p's field f (present, its components and
 * dimensions those of the parameter): ENG_OK or the error eng_launch would give. For checking
 * a node's bindings before anything is launched. */
int eng_kernel_check_field(eng_context *ctx, const eng_kernel *k, uint32_t p, eng_field *f);
/* ENG_ECOMPILE with a file:line:col message when a field parameter of k has an element type
 * no node's field holds (field<i32>, field<f64>, field<vec2>: they get no port), else ENG_OK. */
int eng_kernel_check_bindable(eng_context *ctx, const eng_kernel *k);
/* Runs what is queued without waiting for a reader. */
int eng_flush(eng_context *ctx);
/* Runs what is queued and reports errors of the tasks (budget). */
int eng_sync(eng_context *ctx);

typedef struct eng_mode {
    int eager;                /* 1: no queue, no optimization */
    uint32_t disabled_passes; /* SFG_PASS_* bits (engine/sfg/sfg.h) */
    uint32_t flush_every;     /* 0: only at syncs and explicit flushes */
    int launch_thread;        /* 1: a batch flushed without a sync runs on the CPU context's
                               * launch thread while this thread queues and optimizes the next
                               * (engine/launcher.h); 0: every batch runs on this thread.
                               * PLUME_LAUNCH_THREAD=0 or 1 overrides it. */
} eng_mode;
/* Syncs, then changes how later launches run. */
int eng_set_mode(eng_context *ctx, const eng_mode *mode);

typedef struct eng_stats {
    uint64_t tasks_launched;     /* tasks run, all types */
    uint64_t launched_by_type[7];/* serial, range_for, struct_for, clear_list, listgen, gc, - */
    uint64_t listgens;
    uint64_t tasks_enqueued;
    uint64_t tasks_fused;
    uint64_t activations_demoted;
    uint64_t listgens_removed;
    uint64_t stores_eliminated;
    uint64_t tasks_eliminated;
    uint64_t tasks_compiled;     /* JIT compiles (cache misses) */
    uint64_t tasks_from_disk;    /* ... of which loaded from the kernel cache on disk */
    uint64_t instructions;       /* LLVM instructions emitted, after optimization */
    uint64_t flushes;
    uint64_t flushes_memoized;   /* ... optimized by the memo of earlier flushes' results */
    uint64_t batches_async;      /* batches run on the launch thread */
    double compile_s;            /* wall time in the JIT, summed over compile threads */
    double backend_s;            /* wall time running tasks */
    double optimizer_s;          /* wall time in the state-flow graph */
    double frontend_s;           /* wall time lowering and preparing IR */
    /* On a GPU (0 on the CPU): */
    double kernel_s;             /* GPU time of the batches, from CUDA events */
    uint64_t kernels;            /* kernel launches, graph nodes included */
    uint64_t graph_launches;     /* batches launched as one CUDA graph */
    uint64_t graphs_built;       /* graphs instantiated (the rest were cached) */
} eng_stats;
void eng_get_stats(eng_context *ctx, eng_stats *out);
void eng_reset_stats(eng_context *ctx);

#endif
