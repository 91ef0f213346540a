/* The engine's GPU: opening the device, its memory pool, the runtime's own kernels. */
#define _GNU_SOURCE
#include "engine/cuda_internal.h"
#include "engine/backend/cuda_rt_kernels.h"
#include "engine/codegen/ptx.h"
#include "engine/codegen/toolchain.h"
#include "sparse/bitcode.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Slices of the pool: one per field's tree. The smoke scene declares about 40 fields. */
#define POOL_SLICES 96

/* The newest architecture LLVM 16 writes PTX for that is not newer than the device: the driver
 * JIT-compiles PTX for older architectures forward. */
static int ptx_sm_for(int device_sm)
{
    static const int known[] = {90, 89, 87, 86, 80, 75, 72, 70};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (device_sm >= known[i])
            return known[i];
    return 0;
}

/* ptx_emit builder: the embedded kernels' bitcode, with every plm_cuda_k_* marked a kernel. */
static int build_rt_kernels(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    (void)user;
    if (plm_cuda_rt_kernels_bc_size == 0) {
        cg_set_err(err, n, "this build has no GPU runtime kernels (clang-16 was not found)");
        return -1;
    }
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(
        (const char *)plm_cuda_rt_kernels_bc, plm_cuda_rt_kernels_bc_size, "cuda-rt-kernels", 0);
    LLVMModuleRef k = NULL;
    int bad = LLVMParseBitcodeInContext2(ctx, buf, &k);
    LLVMDisposeMemoryBuffer(buf);
    if (bad || !k) {
        cg_set_err(err, n, "the GPU runtime kernels' bitcode does not parse");
        return -1;
    }
    cg_strip_target_attributes(k);
    LLVMSetTarget(k, LLVMGetTarget(mod));
    LLVMSetDataLayout(k, LLVMGetDataLayoutStr(mod));
    if (LLVMLinkModules2(mod, k)) {
        cg_set_err(err, n, "linking the GPU runtime kernels failed");
        return -1;
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (!LLVMIsDeclaration(f) && strncmp(name, "plm_cuda_k_", 11) == 0)
            ptx_mark_kernel(mod, f);
    }
    return 0;
}

int eng_cuda_rt_kernels_ptx(int sm, char **ptx, char *msg, size_t msg_size)
{
    ptx_options po = ptx_options_default();
    po.sm = sm;
    po.runtime_bc = plm_runtime_bc_nvptx64;
    po.runtime_bc_size = plm_runtime_bc_nvptx64_size;
    char err[1024];
    *ptx = NULL;
    if (ptx_emit(&po, build_rt_kernels, NULL, JIT_EMIT_ASM, ptx, NULL, err, sizeof err) != 0) {
        snprintf(msg, msg_size, "GPU runtime kernels: %s", err);
        return -1;
    }
    return 0;
}

static int load_rt_kernels(eng_cuda *cu, char *msg, size_t n)
{
    char *ptx = NULL;
    if (eng_cuda_rt_kernels_ptx(cu->sm, &ptx, msg, n) != 0)
        return -1;
    int rc = cuda_module_load_ptx(cu->drv, ptx, &cu->rt_module, msg, n);
    free(ptx);
    if (rc)
        return -1;
    static const char *const names[] = {"plm_cuda_k_clear_list", "plm_cuda_k_listgen_root",
                                        "plm_cuda_k_listgen_items", "plm_cuda_k_listgen_cells",
                                        "plm_cuda_k_gc_begin", "plm_cuda_k_gc_items",
                                        "plm_cuda_k_gc_end"};
    CUfunction *slots[] = {&cu->k_clear_list, &cu->k_listgen_root, &cu->k_listgen_items,
                           &cu->k_listgen_cells, &cu->k_gc_begin, &cu->k_gc_items,
                           &cu->k_gc_end};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (cuda_check(cu->drv, cu->drv->cuModuleGetFunction(slots[i], cu->rt_module, names[i]),
                       names[i], msg, n))
            return -1;
    return 0;
}

/* The disk cache of compiled tasks, in the CPU's folder (jit_disk_default_dir). What decides the
 * machine code besides the task and this build: the device's compute capability, the driver
 * (whose JIT made it), the PTX target, libdevice and the runtime's bitcode. */
static void open_disk(eng_cuda *cu, int dev_sm)
{
    char *dir = jit_disk_default_dir();
    if (!dir)
        return;
    ptx_options po = ptx_options_default();
    struct stat st;
    long long ld_size = 0, ld_time = 0;
    if (po.libdevice && stat(po.libdevice, &st) == 0) {
        ld_size = (long long)st.st_size;
        ld_time = (long long)st.st_mtime;
    }
    char arch[32], features[PATH_MAX + 700];
    snprintf(arch, sizeof arch, "cuda sm_%d", dev_sm);
    snprintf(features, sizeof features, "driver %d %s; ptx sm_%d; libdevice %s %lld %lld",
             cu->drv->version, cu->drv->build, cu->sm, po.libdevice ? po.libdevice : "none",
             ld_size, ld_time);
    jit_disk_open(&cu->disk, dir, arch, features, 3, plm_runtime_bc_nvptx64,
                  plm_runtime_bc_nvptx64_size);
    free(dir);
}

static int create_stage_events(eng_cuda *cu, char *msg, size_t msg_size)
{
    for (int i = 0; i < CUDA_STAGES; i++)
        if (cuda_check(cu->drv, cu->drv->cuEventCreate(&cu->stages[i].start, CU_EVENT_DEFAULT),
                       "cuEventCreate", msg, msg_size) ||
            cuda_check(cu->drv, cu->drv->cuEventCreate(&cu->stages[i].end, CU_EVENT_DEFAULT),
                       "cuEventCreate", msg, msg_size))
            return -1;
    return 0;
}

int eng_cuda_open(int ordinal, uint64_t budget, eng_cuda **out, char *msg, size_t msg_size)
{
    *out = NULL;
    const cuda_driver *drv = NULL;
    if (cuda_driver_shared(&drv, msg, msg_size) != 0)
        return -1;
    int count = 0;
    if (cuda_device_count(drv, &count, msg, msg_size) != 0)
        return -1;
    if (count <= ordinal) {
        snprintf(msg, msg_size, "CUDA driver %d.%d found but it reports %d device%s",
                 drv->version / 1000, drv->version % 1000 / 10, count, count == 1 ? "" : "s");
        return -1;
    }
    eng_cuda *cu = calloc(1, sizeof *cu);
    if (!cu) {
        snprintf(msg, msg_size, "out of host memory");
        return -1;
    }
    cu->drv = drv;
    if (cuda_device_query(drv, ordinal, &cu->info, msg, msg_size) != 0) {
        free(cu);
        return -1;
    }
    int dev_sm = cu->info.sm_major * 10 + cu->info.sm_minor;
    cu->dev_sm = dev_sm;
    cu->sm = ptx_sm_for(dev_sm);
    if (!cu->sm) {
        snprintf(msg, msg_size, "device %s is sm_%d; Plume needs sm_70 or newer", cu->info.name,
                 dev_sm);
        free(cu);
        return -1;
    }
    if (cuda_context_open(drv, ordinal, &cu->cc, msg, msg_size) != 0) {
        free(cu);
        return -1;
    }
    int managed = 0;
    drv->cuDeviceGetAttribute(&managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, cu->cc.device);
    if (!managed) {
        snprintf(msg, msg_size, "device %s has no managed memory, which Plume's GPU trees need",
                 cu->info.name);
        eng_cuda_close(cu);
        return -1;
    }
    /* Activation fills and releases containers recursively (sparse/runtime/content.c): the
     * driver's default of 1 KiB of stack per thread is not enough for a deep layout. */
    if (cuda_check(drv, drv->cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 16384), "cuCtxSetLimit", msg,
                   msg_size) ||
        cuda_check(drv, drv->cuStreamCreate(&cu->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
                   msg, msg_size) ||
        create_stage_events(cu, msg, msg_size) != 0 ||
        cuda_pool_create(drv, budget, POOL_SLICES, &cu->pool, msg, msg_size) != 0 ||
        cuda_check(drv, drv->cuMemHostAlloc((void **)&cu->error_flags,
                                            cu->pool.nslices * sizeof *cu->error_flags,
                                            CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
                   "cuMemHostAlloc", msg, msg_size) ||
        load_rt_kernels(cu, msg, msg_size) != 0) {
        eng_cuda_close(cu);
        return -1;
    }
    const char *g = getenv("PLUME_CUDA_GRAPHS");
    cu->graphs_on = drv->has_graphs && !(g && !strcmp(g, "0"));
    const char *v = getenv("PLUME_CUDA_VERBOSE");
    cu->verbose = v && v[0] == '1';
    const char *w = getenv("PLUME_CUDA_WATCHDOG");
    cu->watch_s = w ? strtod(w, NULL) : 0.0;
    if (!(cu->watch_s > 0.0) || !drv->cuStreamQuery || !drv->cuEventQuery)
        cu->watch_s = 0.0;
    /* Left running, batches share managed memory with the host, which may write some of it
     * meanwhile (a new buffer zeroed for the next task): only where the device allows that. */
    int concurrent = 0;
    drv->cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                              cu->cc.device);
    const char *as = getenv("PLUME_CUDA_ASYNC");
    cu->async = concurrent && !(as && !strcmp(as, "0"));
    if (!cuda_ptxas_find(cu->ptxas, sizeof cu->ptxas))
        cu->ptxas[0] = 0;
    /* machine code to keep comes from ptxas or from the driver's linker */
    if (cu->ptxas[0] || drv->has_linker)
        open_disk(cu, dev_sm);
    snprintf(cu->desc, sizeof cu->desc, "CUDA: %s (sm_%d, %d SMs, driver %d.%d, %zu MiB pool)",
             cu->info.name, dev_sm, cu->info.multiprocessors, drv->version / 1000,
             drv->version % 1000 / 10, cu->pool.bytes >> 20);
    *out = cu;
    return 0;
}

void eng_cuda_close(eng_cuda *cu)
{
    if (!cu)
        return;
    const cuda_driver *drv = cu->drv;
    if (cu->stream) {
        eng_cuda_wait(cu, NULL);
        eng_cuda_harvest(cu);
    }
    if (cu->verbose)
        fprintf(stderr,
                "plume: cuda: %llu tasks compiled (LLVM to PTX %.1f s, PTX to machine code %.1f s, "
                "summed over threads; %llu by ptxas%s), %llu of them loaded from the kernel cache "
                "(%.1f s); %llu kernels, %llu graph launches (%llu built), %llu stream batches, "
                "%.3f s on the GPU\n",
                (unsigned long long)cu->stats.tasks_compiled, cu->stats.emit_s, cu->stats.load_s,
                (unsigned long long)cu->stats.tasks_ptxas,
                cu->ptxas[0] ? (cu->ptxas_refused ? ", then refused" : "") : ", none found",
                (unsigned long long)cu->stats.tasks_from_disk, cu->stats.disk_s,
                (unsigned long long)cu->stats.kernels, (unsigned long long)cu->stats.graph_launches,
                (unsigned long long)cu->stats.graphs_built,
                (unsigned long long)cu->stats.stream_batches, cu->stats.kernel_s);
    for (uint32_t i = 0; i < cu->ngraphs; i++) {
        drv->cuGraphExecDestroy(cu->graphs[i].exec);
        free(cu->graphs[i].launches);
        free(cu->graphs[i].edges);
    }
    for (uint32_t i = 0; i < cu->nmodules; i++)
        drv->cuModuleUnload(cu->modules[i]);
    free(cu->modules);
    if (cu->rt_module)
        drv->cuModuleUnload(cu->rt_module);
    if (cu->params_dev)
        drv->cuMemFree(cu->params_dev);
    for (int i = 0; i < CUDA_STAGES; i++) {
        if (cu->stages[i].host)
            drv->cuMemFreeHost(cu->stages[i].host);
        if (cu->stages[i].start)
            drv->cuEventDestroy(cu->stages[i].start);
        if (cu->stages[i].end)
            drv->cuEventDestroy(cu->stages[i].end);
    }
    if (cu->error_flags)
        drv->cuMemFreeHost(cu->error_flags);
    free(cu->launches);
    free(cu->edges);
    free(cu->task_first);
    free(cu->task_last);
    cuda_pool_destroy(&cu->pool);
    jit_disk_close(&cu->disk);
    if (cu->stream)
        drv->cuStreamDestroy(cu->stream);
    if (cu->cc.ctx)
        cuda_context_close(&cu->cc);
    free(cu);
}

const char *eng_cuda_describe(const eng_cuda *cu) { return cu->desc; }

int eng_cuda_arena_take(eng_cuda *cu, void **arena, uint64_t *bytes, uint32_t **error_flag,
                        char *msg, size_t msg_size)
{
    size_t b = 0;
    if (cuda_pool_take(&cu->pool, arena, &b, msg, msg_size) != 0)
        return -1;
    *bytes = b;
    size_t slice = (size_t)((CUdeviceptr)(uintptr_t)*arena - cu->pool.base) / cu->pool.slice_bytes;
    *error_flag = &cu->error_flags[slice];
    **error_flag = 0;
    return 0;
}

void eng_cuda_arena_give(eng_cuda *cu, void *arena) { cuda_pool_give(&cu->pool, arena); }

void *eng_cuda_buffer_new(eng_cuda *cu, size_t bytes)
{
    CUdeviceptr p = 0;
    if (cu->drv->cuMemAllocManaged(&p, bytes ? bytes : 8, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS)
        return NULL;
    /* Zeroed in stream order, by the device: batches may be running, and the host touches
     * managed memory only after it waited for them (eng_cuda_drain). Only tasks use the
     * buffer, and they are queued after this; in_flight is not set here, since the launch
     * thread may own that flag right now, but a flag of its own. */
    if (cu->drv->cuMemsetD8Async(p, 0, bytes ? bytes : 8, cu->stream) != CUDA_SUCCESS) {
        cu->drv->cuMemFree(p);
        return NULL;
    }
    /* the next drain waits for it even if no batch follows (one that failed to bind) */
    __atomic_store_n(&cu->memset_pending, 1, __ATOMIC_RELEASE);
    return (void *)(uintptr_t)p;
}

void eng_cuda_buffer_free(eng_cuda *cu, void *p)
{
    if (p)
        cu->drv->cuMemFree((CUdeviceptr)(uintptr_t)p);
}

void eng_cuda_get_stats(const eng_cuda *cu, eng_cuda_stats *out) { *out = cu->stats; }
void eng_cuda_reset_stats(eng_cuda *cu) { memset(&cu->stats, 0, sizeof cu->stats); }
void eng_cuda_set_graphs(eng_cuda *cu, int on) { cu->graphs_on = on && cu->drv->has_graphs; }
