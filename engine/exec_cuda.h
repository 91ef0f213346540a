/* exec_cuda.h — the engine on an NVIDIA GPU: the device, its memory, and the executor that runs
 * the state-flow graph's batches there.
 *
 * A context on CUDA (eng_use_cuda, before its first field) keeps the same host-side model as
 * on the CPU: every field is a sparse tree (sparse/tree.h), but the tree's arena is a slice of
 * the device memory pool (engine/backend/cuda_pool.h, managed memory), so host code (VDB
 * import and export, block copies, voxel reads) and GPU kernels address the same bytes and
 * nothing is copied by hand. The executor (exec_cuda.c) compiles each new task to PTX for the
 * device (in parallel on the CPU pool's threads), loads it, and launches a batch with no round
 * trip to the host: list sizes, loop bounds and pending gc cells are read on the device
 * (engine/backend/cuda_rt_kernels.c). A batch whose shape was seen before relaunches its
 * instantiated CUDA graph, edges from the SFG's dependencies; otherwise it is built, or the
 * kernels go on one stream when the driver lacks graphs or PLUME_CUDA_GRAPHS=0. A batch the
 * host needs at once (a sync) is waited for before the executor returns; the others, eager
 * launches included, are left running on the stream (PLUME_CUDA_ASYNC=0: every batch is
 * waited for), and every engine call that touches the device's memory from the host or reads
 * what tasks wrote waits first (eng_cuda_drain, through engine/launcher.h's drain and wait).
 *
 * Threads: the engine's context thread, or its launch thread while the context's thread
 * waits for it or only queues and optimizes (the compile workers make the device's context
 * current on their own threads, the executor on the thread it runs on).
 *
 * Errors: 0 or -1 with one line in msg; driver errors name the call and the driver's error
 * ("cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access ...)"). */
#ifndef PLUME_ENGINE_EXEC_CUDA_H
#define PLUME_ENGINE_EXEC_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef struct eng_cuda eng_cuda;
struct sfg_batch;
struct eng_context;

/* Opens device `ordinal`: driver (dlopen), primary context, stream, the memory pool (at most
 * budget bytes) and the runtime's own kernels. -1 with the reason in msg ("no CUDA driver:
 * libcuda.so.1 not found (...)"). */
int eng_cuda_open(int ordinal, uint64_t budget, eng_cuda **out, char *msg, size_t msg_size);
/* Unloads modules, destroys graphs and the pool. Fields must be gone. */
void eng_cuda_close(eng_cuda *cu);
/* "CUDA: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, driver 13.0)". */
const char *eng_cuda_describe(const eng_cuda *cu);

/* Tree arenas: a zero-filled slice of the pool, and the slice's error flag (zeroed, pinned host
 * memory both sides address; the context owns it) for plm_tree_set_error_flag. */
int eng_cuda_arena_take(eng_cuda *cu, void **arena, uint64_t *bytes, uint32_t **error_flag,
                        char *msg, size_t msg_size);
void eng_cuda_arena_give(eng_cuda *cu, void *arena);
/* Small buffers both sides address (kernels' global temporaries): zero-filled; NULL on failure. */
void *eng_cuda_buffer_new(eng_cuda *cu, size_t bytes);
void eng_cuda_buffer_free(eng_cuda *cu, void *p);

/* The runtime's own GPU kernels (clear_list, listgen, gc) as PTX for sm (70..90), what
 * eng_cuda_open loads: for checks without a GPU. *ptx is malloc'd. 0, or -1 with msg. */
int eng_cuda_rt_kernels_ptx(int sm, char **ptx, char *msg, size_t msg_size);

/* Compiles the batch's new tasks (fresh[i]) and runs the batch on the device; codes[i] is
 * task i's code entry (engine_internal.h, eng_resolve_codes). What eng_exec_resolved does on
 * a GPU context: on the context's thread, or on its launch thread (engine/launcher.h). */
struct eng_code;
int eng_exec_resolved_cuda(struct eng_context *ctx, const struct sfg_batch *batch,
                           struct eng_code *const *codes, const unsigned char *fresh);
/* Waits for the batches left running (eng_cuda.async), adds their GPU time, and with report
 * returns the runtime errors they raised (ENG_OK, or the error with ctx's message); without
 * report errors stay for the next check. A no-op when nothing runs. Context thread only. */
int eng_cuda_drain(struct eng_context *ctx, int report);
/* Its compiling part alone (the device's context must be current on this thread). */
int eng_compile_cuda(struct eng_context *ctx, const struct sfg_batch *batch,
                     struct eng_code *const *codes, const unsigned char *fresh);

typedef struct eng_cuda_stats {
    double kernel_s;           /* GPU time of batches, from CUDA events */
    uint64_t kernels;          /* kernel launches (nodes of graphs included) */
    uint64_t graph_launches;   /* batches launched as a CUDA graph */
    uint64_t graphs_built;     /* of which instantiated for the first time */
    uint64_t stream_batches;   /* batches launched kernel by kernel on the stream */
    uint64_t tasks_compiled;
    uint64_t instructions;
    double compile_s;          /* summed over compile threads */
    double emit_s, load_s;     /* of which LLVM to PTX, and the driver's PTX to machine code */
    uint64_t tasks_from_disk;  /* of tasks_compiled, loaded from the kernel cache */
    uint64_t tasks_ptxas;      /* of tasks_compiled, assembled by the toolkit's ptxas */
    double disk_s;             /* of compile_s, loading those */
} eng_cuda_stats;
void eng_cuda_get_stats(const eng_cuda *cu, eng_cuda_stats *out);
void eng_cuda_reset_stats(eng_cuda *cu);
/* 1: batches go out as CUDA graphs where the driver has them (the default, unless the
 * environment says PLUME_CUDA_GRAPHS=0); 0: kernel by kernel on the stream. */
void eng_cuda_set_graphs(eng_cuda *cu, int on);

#endif
