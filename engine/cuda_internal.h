/* The device state shared by cuda_device.c (open, memory, runtime kernels) and exec_cuda.c
 * (the executor). Private to engine/. */
#ifndef PLUME_ENGINE_CUDA_INTERNAL_H
#define PLUME_ENGINE_CUDA_INTERNAL_H

#include "engine/backend/cuda_driver.h"
#include "engine/backend/cuda_pool.h"
#include "engine/backend/cuda_ptxas.h"
#include "engine/codegen/jit_disk.h"
#include "engine/exec_cuda.h"

/* One kernel launch of a batch: what a stream launch or a graph node needs. Parameters are
 * held by value; an i32 parameter is the low half of its slot (little-endian). */
typedef struct cuda_launch {
    CUfunction fn;
    uint32_t grid, block;
    uint32_t nparams;
    uint64_t param[3];
} cuda_launch;

/* An instantiated graph and the batch shape it was built from (compared in full on lookup). */
typedef struct cuda_graph_entry {
    uint64_t key;
    cuda_launch *launches;
    uint32_t nlaunches;
    uint32_t *edges; /* pairs of launch indices */
    uint32_t nedges;
    CUgraphExec exec;
    uint64_t last_use;
} cuda_graph_entry;

#define CUDA_GRAPH_CACHE 64

/* Batches that may be in flight at once (PLUME_CUDA_ASYNC): each has a staging buffer of its
 * own for its task parameters, which the host may refill only after the batch's copy of it
 * has completed, and a pair of events for its GPU time. */
#define CUDA_STAGES 8

typedef struct cuda_stage {
    uint8_t *host;      /* pinned: the batch's task parameters, copied to params_dev */
    size_t cap;
    CUevent start, end; /* around the batch on the stream (after the copy: end also says the
                         * copy has read host) */
    int busy;           /* recorded, its time not yet added to stats.kernel_s */
    uint64_t seq;       /* the batch's number (next_stage when it took the stage) */
    char names[256];    /* its tasks, for the watchdog (filled only when it is on) */
} cuda_stage;

struct eng_cuda {
    const cuda_driver *drv;
    cuda_context cc;
    cuda_device_info info;
    int sm;            /* what PTX is generated for */
    int dev_sm;        /* the device's compute capability (major * 10 + minor) */
    /* the toolkit's ptxas (cuda_ptxas.h) when one is found, else empty; ptxas_refused is set
     * (atomically, from compile threads) once the driver refuses a cubin it made */
    char ptxas[4096];
    int ptxas_refused;
    CUstream stream;
    cuda_pool pool;
    /* pinned host memory, one word per pool slice: the error flag of the tree in that slice
     * (plm_tree_set_error_flag), polled after each batch without moving the tree's pages */
    uint32_t *error_flags;
    /* compiled tasks' machine code kept between processes (jit_disk.h: the CPU's folder, an
     * identity of its own); off where neither ptxas nor the driver's linker makes a cubin, or
     * the cache is off */
    jit_disk disk;
    int verbose; /* PLUME_CUDA_VERBOSE=1: compile figures at close, cache misses as they come */
    /* PLUME_CUDA_WATCHDOG=S (seconds, > 0): the host's waits for the GPU poll, and every S
     * seconds of one wait say so on stderr, naming the oldest batch not finished (the stages
     * keep their batches' names only then). 0: plain synchronizing waits. */
    double watch_s;
    char desc[400];

    /* the runtime's own kernels (cuda_rt_kernels.c) */
    CUmodule rt_module;
    CUfunction k_clear_list, k_listgen_root, k_listgen_items, k_listgen_cells, k_gc_begin, k_gc_items,
        k_gc_end;

    /* task modules, unloaded at close */
    CUmodule *modules;
    uint32_t nmodules, cap_modules;

    /* per-batch task parameters: built in a stage's pinned buffer (params_host points at the
     * current one), copied once per batch into params_dev. One device buffer serves every
     * batch: a batch's copy into it follows the previous batch's kernels on the stream. */
    cuda_stage stages[CUDA_STAGES];
    uint32_t next_stage;
    uint8_t *params_host;
    CUdeviceptr params_dev;
    size_t params_cap;
    /* 1 (default; PLUME_CUDA_ASYNC=0 turns it off): a batch flushed without a sync, and every
     * eager launch, is left running; the host waits where it touches the device's memory
     * (eng_cuda_drain). 0: the host waits after every batch. */
    int async;
    int in_flight;      /* batches launched and not waited for */
    int memset_pending; /* atomic: a buffer zeroed on the stream by the context's thread
                         * (eng_cuda_buffer_new), which may not own in_flight */
    int unchecked;      /* batches left running may have raised runtime errors nobody has
                         * reported yet (a drain without report leaves them for the next) */

    /* the batch being launched */
    cuda_launch *launches;
    uint32_t nlaunches, cap_launches;
    uint32_t *edges;
    uint32_t nedges, cap_edges;
    uint32_t *task_first, *task_last; /* per SFG task: its first and last launch */
    uint32_t cap_tasks;

    int graphs_on;
    cuda_graph_entry graphs[CUDA_GRAPH_CACHE];
    uint32_t ngraphs;
    uint64_t use_clock;

    eng_cuda_stats stats;
};

/* Adds the GPU time of every finished stage to stats.kernel_s and marks it free; a stage still
 * running is left (the caller synchronized the stream first to harvest them all). */
void eng_cuda_harvest(eng_cuda *cu);

/* Waits until the stream's work (ev NULL) or the event has completed: the driver's
 * synchronizing call, or, with the watchdog on, polling that reports long waits. Returns the
 * driver's result. The context's thread or the launch thread, whichever drives the stream. */
CUresult eng_cuda_wait(eng_cuda *cu, CUevent ev);

/* The number of threads per block the executor uses for a struct_for over leaves of ncells. */
#define CUDA_RANGE_BLOCK 128u

#endif
