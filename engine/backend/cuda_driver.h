/* cuda_driver.h — the CUDA Driver API, loaded at run time with dlopen("libcuda.so.1").
 *
 * Plume builds and runs where CUDA is absent: nothing here links against CUDA or includes
 * cuda.h. This header declares the few driver types and entry points the GPU backend uses,
 * with the driver's own names and ABI (the versioned symbols such as cuMemAlloc_v2 are looked
 * up under the plain name's field), so code reads like CUDA code: drv->cuMemAlloc(&p, n).
 * Do not include cuda.h in the same file: the type names would clash.
 *
 * Required entry points must all resolve or loading fails with the missing name. The CUDA
 * graph functions are optional: when any is missing, has_graphs is 0, their fields are NULL
 * and the caller launches on streams instead.
 *
 * Ownership and lifetime. cuda_driver_shared() loads the process's driver once and returns a
 * table that lives until exit, or until the library this code is linked into is unloaded.
 * cuda_driver_load() loads a table from an explicit library (tests point it at a fake driver)
 * and cuda_driver_free() frees the table. The library itself is
 * never dlclose'd: a CUDA driver leaves threads behind, and unloading it under them crashes.
 *
 * Threads. Every function here may be called from any thread; cuda_driver_shared is safe to
 * race. The driver's own rules apply to the entry points (a context is current per thread:
 * call cuda_context_open, or drv->cuCtxSetCurrent, on each thread that uses the device).
 *
 * Errors. Functions return 0 on success or -1 and write one line to msg (when msg is not NULL)
 * that names the failing call and, for driver errors, the error's name and text from
 * cuGetErrorName / cuGetErrorString, e.g.
 *   "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): ptxas ..."
 */
#ifndef PLUME_ENGINE_BACKEND_CUDA_DRIVER_H
#define PLUME_ENGINE_BACKEND_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/* ---- The driver's types (same sizes and values as cuda.h) --------------------------------- */

typedef int CUresult; /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUlinkState_st *CUlinkState;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_NOT_READY = 600,
};

/* The device attributes the backend reads (CUdevice_attribute values). */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
};

enum { CU_MEM_ATTACH_GLOBAL = 1 };
enum { CU_LIMIT_STACK_SIZE = 0 };
enum { CU_MEMHOSTALLOC_PORTABLE = 1, CU_MEMHOSTALLOC_DEVICEMAP = 2 };
/* cuMemPrefetchAsync's destination for the host. */
enum { CU_DEVICE_CPU = -1 };

/* CUjit_option values used for cuModuleLoadDataEx's logs. */
enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_POSITION_INDEPENDENT_CODE = 30, /* CUDA 12: 0 for code that is not relocatable */
};

/* CUjitInputType: what cuLinkAddData is given. */
enum { CU_JIT_INPUT_PTX = 1 };

enum { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 };
enum { CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 };
enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2
};

/* CUDA_KERNEL_NODE_PARAMS as the driver's version-1 graph entry points take it. */
typedef struct CUDA_KERNEL_NODE_PARAMS_v1 {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
} CUDA_KERNEL_NODE_PARAMS_v1;

/* ---- The entry-point table --------------------------------------------------------------- */

typedef struct cuda_driver {
    int version; /* cuDriverGetVersion: 1000 * major + 10 * minor */
    int has_graphs;
    int has_linker;
    char build[512]; /* the library's path, size and modification time */

    CUresult (*cuInit)(unsigned int flags);
    CUresult (*cuDriverGetVersion)(int *version);
    CUresult (*cuGetErrorName)(CUresult err, const char **name);
    CUresult (*cuGetErrorString)(CUresult err, const char **text);

    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice dev);
    CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev); /* _v2 */

    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev); /* _v2 */
    CUresult (*cuCtxSetCurrent)(CUcontext ctx);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuCtxSetLimit)(int limit, size_t value);

    CUresult (*cuModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned int n_options,
                                   int *options, void **values);
    CUresult (*cuModuleUnload)(CUmodule mod);
    CUresult (*cuModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*cuLaunchKernel)(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shared_bytes, CUstream stream, void **params,
                               void **extra);

    CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes); /* _v2 */
    CUresult (*cuMemFree)(CUdeviceptr ptr);                 /* _v2 */
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes); /* _v2 */
    CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);       /* _v2 */
    CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t bytes); /* _v2 */
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
    CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream s);
    CUresult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes); /* _v2 */
    /* Managed memory: one address for the host and the device, pages migrate on touch. */
    CUresult (*cuMemAllocManaged)(CUdeviceptr *ptr, size_t bytes, unsigned int flags);
    /* Page-locked host memory, for asynchronous copies. */
    CUresult (*cuMemHostAlloc)(void **ptr, size_t bytes, unsigned int flags);
    CUresult (*cuMemFreeHost)(void *ptr);
    /* Optional (NULL where missing): moves managed pages ahead of their use. */
    CUresult (*cuMemPrefetchAsync)(CUdeviceptr ptr, size_t bytes, CUdevice dst, CUstream s);

    CUresult (*cuStreamCreate)(CUstream *stream, unsigned int flags);
    CUresult (*cuStreamDestroy)(CUstream stream); /* _v2 */
    CUresult (*cuStreamSynchronize)(CUstream stream);
    CUresult (*cuEventCreate)(CUevent *event, unsigned int flags);
    CUresult (*cuEventDestroy)(CUevent event); /* _v2 */
    CUresult (*cuEventRecord)(CUevent event, CUstream stream);
    CUresult (*cuEventSynchronize)(CUevent event);
    CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
    /* Optional (NULL where missing): whether work is done, without waiting (the watchdog). */
    CUresult (*cuStreamQuery)(CUstream stream);
    CUresult (*cuEventQuery)(CUevent event);

    /* Optional: CUDA graphs (NULL unless has_graphs). */
    CUresult (*cuStreamBeginCapture)(CUstream stream, int mode); /* _v2 */
    CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph *graph);
    CUresult (*cuGraphCreate)(CUgraph *graph, unsigned int flags);
    CUresult (*cuGraphAddKernelNode)(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                     size_t n_deps, const CUDA_KERNEL_NODE_PARAMS_v1 *params);
    CUresult (*cuGraphAddDependencies)(CUgraph graph, const CUgraphNode *from,
                                       const CUgraphNode *to, size_t n);
    CUresult (*cuGraphInstantiate)(CUgraphExec *exec, CUgraph graph,
                                   unsigned long long flags); /* WithFlags */
    CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
    CUresult (*cuGraphExecKernelNodeSetParams)(CUgraphExec exec, CUgraphNode node,
                                               const CUDA_KERNEL_NODE_PARAMS_v1 *params);
    CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
    CUresult (*cuGraphDestroy)(CUgraph graph);

    /* Optional: the JIT linker (NULL unless has_linker), which hands back the machine code it
     * made from PTX, for the disk cache of compiled tasks. */
    CUresult (*cuLinkCreate)(unsigned int n_options, int *options, void **values,
                             CUlinkState *state); /* _v2 */
    CUresult (*cuLinkAddData)(CUlinkState state, int type, void *data, size_t size,
                              const char *name, unsigned int n_options, int *options,
                              void **values); /* _v2 */
    CUresult (*cuLinkComplete)(CUlinkState state, void **image, size_t *size);
    CUresult (*cuLinkDestroy)(CUlinkState state);
} cuda_driver;

/* ---- Loading --------------------------------------------------------------------------- */

/* Loads the process's driver (libcuda.so.1) once, calls cuInit(0), and returns the shared
 * table; later calls return the same table or the same failure message. */
int cuda_driver_shared(const cuda_driver **out, char *msg, size_t msg_size);

/* Loads a table from `library` (a name for dlopen or a path; NULL = "libcuda.so.1") and calls
 * cuInit(0). Free the table with cuda_driver_free. */
int cuda_driver_load(const char *library, cuda_driver **out, char *msg, size_t msg_size);
void cuda_driver_free(cuda_driver *drv);

/* Whether a usable driver and at least one device exist. Returns 1 and describes the first
 * device ("CUDA driver 12.4: device 0 NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB"), or 0
 * with the reason in one line ("no CUDA driver: libcuda.so.1 not found (...)", "CUDA driver
 * 12.4 found but it reports no device: ..."). Never fails harder than returning 0. */
int cuda_driver_probe(char *msg, size_t msg_size);

/* Formats a driver error. Returns 0 when r is CUDA_SUCCESS, else -1 with
 * "what: NAME (text)" in msg. */
int cuda_check(const cuda_driver *drv, CUresult r, const char *what, char *msg, size_t msg_size);

/* ---- Devices, contexts, modules ---------------------------------------------------------- */

typedef struct cuda_device_info {
    char name[256];
    int sm_major, sm_minor; /* compute capability */
    int multiprocessors;
    int max_threads_per_block;
    int warp_size;
    size_t total_mem;
} cuda_device_info;

int cuda_device_count(const cuda_driver *drv, int *count, char *msg, size_t msg_size);
int cuda_device_query(const cuda_driver *drv, int ordinal, cuda_device_info *info, char *msg,
                      size_t msg_size);

/* A device's primary context, retained and made current on the calling thread. */
typedef struct cuda_context {
    const cuda_driver *drv;
    CUdevice device;
    CUcontext ctx;
} cuda_context;

int cuda_context_open(const cuda_driver *drv, int ordinal, cuda_context *out, char *msg,
                      size_t msg_size);
/* Releases the primary context (the driver destroys it with its last release). */
void cuda_context_close(cuda_context *c);

/* Loads a NUL-terminated PTX image into the current context. On failure the message carries
 * the driver's JIT error log. */
int cuda_module_load_ptx(const cuda_driver *drv, const char *ptx, CUmodule *out, char *msg,
                         size_t msg_size);

/* Compiles a NUL-terminated PTX image for the current context's device with the driver's
 * linker (drv->has_linker) and returns the machine code (a cubin) in *image (malloc'd, the
 * caller frees) and *size. On failure the message carries the linker's error log. Any
 * thread whose current context is the device's. */
int cuda_link_ptx(const cuda_driver *drv, const char *ptx, void **image, size_t *size, char *msg,
                  size_t msg_size);

/* Loads a cubin made by cuda_link_ptx (on a device of the same compute capability) into the
 * current context. */
int cuda_module_load_image(const cuda_driver *drv, const void *image, CUmodule *out, char *msg,
                           size_t msg_size);

#endif
