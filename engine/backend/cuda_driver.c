/* Loading the CUDA driver with dlopen and resolving its entry points by name. */
#define _GNU_SOURCE
#include "engine/backend/cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_LIBRARY "libcuda.so.1"

static void set_msg(char *msg, size_t n, const char *fmt, ...)
{
    if (!msg || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
}

/* One table slot: the field and the exported names to try, newest ABI first. The versioned
 * names matter: the plain cuMemAlloc is the 32-bit-size API of CUDA 3.x. */
typedef struct entry {
    size_t offset;
    const char *names[3];
    int optional; /* 1: part of the graph API; 2: optional on its own; 3: the linker */
} entry;

#define E(field, ...) {offsetof(cuda_driver, field), {__VA_ARGS__}, 0}
#define G(field, ...) {offsetof(cuda_driver, field), {__VA_ARGS__}, 1}
#define O(field, ...) {offsetof(cuda_driver, field), {__VA_ARGS__}, 2}
#define L(field, ...) {offsetof(cuda_driver, field), {__VA_ARGS__}, 3}

static const entry entries[] = {
    E(cuInit, "cuInit"),
    E(cuDriverGetVersion, "cuDriverGetVersion"),
    E(cuGetErrorName, "cuGetErrorName"),
    E(cuGetErrorString, "cuGetErrorString"),
    E(cuDeviceGetCount, "cuDeviceGetCount"),
    E(cuDeviceGet, "cuDeviceGet"),
    E(cuDeviceGetName, "cuDeviceGetName"),
    E(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    E(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
    E(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    E(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    E(cuCtxSetCurrent, "cuCtxSetCurrent"),
    E(cuCtxSynchronize, "cuCtxSynchronize"),
    E(cuCtxSetLimit, "cuCtxSetLimit"),
    E(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
    E(cuModuleUnload, "cuModuleUnload"),
    E(cuModuleGetFunction, "cuModuleGetFunction"),
    E(cuLaunchKernel, "cuLaunchKernel"),
    E(cuMemAlloc, "cuMemAlloc_v2"),
    E(cuMemFree, "cuMemFree_v2"),
    E(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
    E(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
    E(cuMemsetD8, "cuMemsetD8_v2"),
    E(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    E(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    E(cuMemsetD8Async, "cuMemsetD8Async"),
    E(cuMemGetInfo, "cuMemGetInfo_v2"),
    E(cuMemAllocManaged, "cuMemAllocManaged"),
    E(cuMemHostAlloc, "cuMemHostAlloc"),
    E(cuMemFreeHost, "cuMemFreeHost"),
    O(cuMemPrefetchAsync, "cuMemPrefetchAsync"),
    E(cuStreamCreate, "cuStreamCreate"),
    E(cuStreamDestroy, "cuStreamDestroy_v2"),
    E(cuStreamSynchronize, "cuStreamSynchronize"),
    E(cuEventCreate, "cuEventCreate"),
    E(cuEventDestroy, "cuEventDestroy_v2"),
    E(cuEventRecord, "cuEventRecord"),
    E(cuEventSynchronize, "cuEventSynchronize"),
    /* CUDA 12.8 added a _v2; the original stays exported with the same signature. */
    E(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    O(cuStreamQuery, "cuStreamQuery"),
    O(cuEventQuery, "cuEventQuery"),
    G(cuStreamBeginCapture, "cuStreamBeginCapture_v2"),
    G(cuStreamEndCapture, "cuStreamEndCapture"),
    G(cuGraphCreate, "cuGraphCreate"),
    G(cuGraphAddKernelNode, "cuGraphAddKernelNode"),
    G(cuGraphAddDependencies, "cuGraphAddDependencies"),
    G(cuGraphInstantiate, "cuGraphInstantiateWithFlags"),
    G(cuGraphLaunch, "cuGraphLaunch"),
    G(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams"),
    G(cuGraphExecDestroy, "cuGraphExecDestroy"),
    G(cuGraphDestroy, "cuGraphDestroy"),
    L(cuLinkCreate, "cuLinkCreate_v2"),
    L(cuLinkAddData, "cuLinkAddData_v2"),
    L(cuLinkComplete, "cuLinkComplete"),
    L(cuLinkDestroy, "cuLinkDestroy"),
};

/* Returns 0 when every required entry resolved; names the first missing one otherwise. */
static int resolve(void *lib, cuda_driver *drv, const char **missing)
{
    /* groups (graphs: 1, the linker: 3) are all there or none is used */
    int whole[4] = {1, 1, 1, 1};
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        const entry *e = &entries[i];
        void *sym = NULL;
        for (int k = 0; k < 3 && e->names[k] && !sym; k++)
            sym = dlsym(lib, e->names[k]);
        if (!sym) {
            if (!e->optional) {
                *missing = e->names[0];
                return -1;
            }
            whole[e->optional] = 0;
        }
        /* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
        memcpy((char *)drv + e->offset, &sym, sizeof sym);
    }
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        int g = entries[i].optional;
        if ((g == 1 || g == 3) && !whole[g])
            memset((char *)drv + entries[i].offset, 0, sizeof(void *));
    }
    drv->has_graphs = whole[1];
    drv->has_linker = whole[3];
    return 0;
}

int cuda_check(const cuda_driver *drv, CUresult r, const char *what, char *msg, size_t msg_size)
{
    if (r == CUDA_SUCCESS)
        return 0;
    const char *name = NULL, *text = NULL;
    if (drv && drv->cuGetErrorName && drv->cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (drv && drv->cuGetErrorString && drv->cuGetErrorString(r, &text) != CUDA_SUCCESS)
        text = NULL;
    if (name)
        set_msg(msg, msg_size, "%s: %s (%s)", what, name, text ? text : "no description");
    else
        set_msg(msg, msg_size, "%s: CUDA error %d", what, (int)r);
    return -1;
}

int cuda_driver_load(const char *library, cuda_driver **out, char *msg, size_t msg_size)
{
    if (!out) {
        set_msg(msg, msg_size, "cuda_driver_load: out is NULL");
        return -1;
    }
    *out = NULL;
    const char *name = library ? library : DEFAULT_LIBRARY;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        set_msg(msg, msg_size, "no CUDA driver: %s not found (%s)", name,
                why ? why : "dlopen failed");
        return -1;
    }
    cuda_driver *drv = calloc(1, sizeof *drv);
    if (!drv) {
        set_msg(msg, msg_size, "cuda_driver_load: out of memory");
        return -1;
    }
    const char *missing = NULL;
    if (resolve(lib, drv, &missing) != 0) {
        set_msg(msg, msg_size, "CUDA driver %s is too old or broken: it lacks %s", name, missing);
        free(drv);
        return -1;
    }
    if (drv->cuDriverGetVersion(&drv->version) != CUDA_SUCCESS)
        drv->version = 0;
    /* Which build of the driver: its version number is the same for every build of a
     * branch, whose JIT may still compile differently (the kernel cache's names use this). */
    Dl_info info;
    struct stat st;
    void *sym;
    memcpy(&sym, &drv->cuInit, sizeof sym);
    if (dladdr(sym, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0)
        snprintf(drv->build, sizeof drv->build, "%s %lld %lld", info.dli_fname,
                 (long long)st.st_size, (long long)st.st_mtime);
    else
        snprintf(drv->build, sizeof drv->build, "%s", name);
    char why[512];
    if (cuda_check(drv, drv->cuInit(0), "cuInit", why, sizeof why) != 0) {
        set_msg(msg, msg_size, "CUDA driver %d.%d found but unusable: %s", drv->version / 1000,
                drv->version % 1000 / 10, why);
        free(drv);
        return -1;
    }
    *out = drv;
    return 0;
}

void cuda_driver_free(cuda_driver *drv)
{
    free(drv);
}

static pthread_once_t shared_once = PTHREAD_ONCE_INIT;
static cuda_driver *shared_drv;
static char shared_msg[512];

static void load_shared(void)
{
    if (cuda_driver_load(NULL, &shared_drv, shared_msg, sizeof shared_msg) != 0)
        shared_drv = NULL;
}

/* The table dies with the code that reads it: a host that dlcloses the plugin (the plume CLI
 * does) would otherwise leave it unreachable. The driver library itself stays loaded. */
__attribute__((destructor)) static void free_shared(void)
{
    free(shared_drv);
    shared_drv = NULL;
}

int cuda_driver_shared(const cuda_driver **out, char *msg, size_t msg_size)
{
    pthread_once(&shared_once, load_shared);
    if (out)
        *out = shared_drv;
    if (!shared_drv) {
        set_msg(msg, msg_size, "%s", shared_msg);
        return -1;
    }
    return 0;
}

int cuda_device_count(const cuda_driver *drv, int *count, char *msg, size_t msg_size)
{
    *count = 0;
    return cuda_check(drv, drv->cuDeviceGetCount(count), "cuDeviceGetCount", msg, msg_size);
}

int cuda_device_query(const cuda_driver *drv, int ordinal, cuda_device_info *info, char *msg,
                      size_t msg_size)
{
    memset(info, 0, sizeof *info);
    CUdevice dev;
    char what[64];
    snprintf(what, sizeof what, "cuDeviceGet(%d)", ordinal);
    if (cuda_check(drv, drv->cuDeviceGet(&dev, ordinal), what, msg, msg_size) != 0)
        return -1;
    if (cuda_check(drv, drv->cuDeviceGetName(info->name, (int)sizeof info->name - 1, dev),
                   "cuDeviceGetName", msg, msg_size) != 0)
        return -1;
    struct {
        int attr;
        int *dst;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->sm_major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->sm_minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->multiprocessors},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info->max_threads_per_block},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &info->warp_size},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        if (cuda_check(drv, drv->cuDeviceGetAttribute(attrs[i].dst, attrs[i].attr, dev),
                       "cuDeviceGetAttribute", msg, msg_size) != 0)
            return -1;
    }
    return cuda_check(drv, drv->cuDeviceTotalMem(&info->total_mem, dev), "cuDeviceTotalMem",
                      msg, msg_size);
}

int cuda_driver_probe(char *msg, size_t msg_size)
{
    const cuda_driver *drv;
    char why[512];
    if (cuda_driver_shared(&drv, why, sizeof why) != 0) {
        set_msg(msg, msg_size, "%s", why);
        return 0;
    }
    int major = drv->version / 1000, minor = drv->version % 1000 / 10;
    int count = 0;
    if (cuda_device_count(drv, &count, why, sizeof why) != 0) {
        set_msg(msg, msg_size, "CUDA driver %d.%d found but unusable: %s", major, minor, why);
        return 0;
    }
    if (count <= 0) {
        set_msg(msg, msg_size, "CUDA driver %d.%d found but it reports no device", major, minor);
        return 0;
    }
    cuda_device_info info;
    if (cuda_device_query(drv, 0, &info, why, sizeof why) != 0) {
        set_msg(msg, msg_size, "CUDA driver %d.%d found but device 0 is unusable: %s", major,
                minor, why);
        return 0;
    }
    set_msg(msg, msg_size, "CUDA driver %d.%d: %d device%s, device 0 %s, sm_%d%d, %d SMs, %.1f GiB",
            major, minor, count, count == 1 ? "" : "s", info.name, info.sm_major, info.sm_minor,
            info.multiprocessors, (double)info.total_mem / (1024.0 * 1024.0 * 1024.0));
    return 1;
}

int cuda_context_open(const cuda_driver *drv, int ordinal, cuda_context *out, char *msg,
                      size_t msg_size)
{
    memset(out, 0, sizeof *out);
    CUdevice dev;
    char what[64];
    snprintf(what, sizeof what, "cuDeviceGet(%d)", ordinal);
    if (cuda_check(drv, drv->cuDeviceGet(&dev, ordinal), what, msg, msg_size) != 0)
        return -1;
    CUcontext ctx;
    if (cuda_check(drv, drv->cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain", msg,
                   msg_size) != 0)
        return -1;
    if (cuda_check(drv, drv->cuCtxSetCurrent(ctx), "cuCtxSetCurrent", msg, msg_size) != 0) {
        drv->cuDevicePrimaryCtxRelease(dev);
        return -1;
    }
    out->drv = drv;
    out->device = dev;
    out->ctx = ctx;
    return 0;
}

void cuda_context_close(cuda_context *c)
{
    if (!c || !c->drv || !c->ctx)
        return;
    c->drv->cuDevicePrimaryCtxRelease(c->device);
    c->ctx = NULL;
}

/* The JIT's error log, trimmed, after "why" in msg. */
static void with_log(char *msg, size_t msg_size, const char *why, char *log, size_t log_size)
{
    log[log_size - 1] = 0;
    size_t len = strlen(log);
    while (len && (log[len - 1] == '\n' || log[len - 1] == '\r'))
        log[--len] = 0;
    set_msg(msg, msg_size, "%s%s%s", why, len ? ": " : "", log);
}

int cuda_module_load_ptx(const cuda_driver *drv, const char *ptx, CUmodule *out, char *msg,
                         size_t msg_size)
{
    *out = NULL;
    char log[4096];
    log[0] = 0;
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = drv->cuModuleLoadDataEx(out, ptx, 2, options, values);
    if (r == CUDA_SUCCESS)
        return 0;
    char why[512];
    cuda_check(drv, r, "cuModuleLoadDataEx", why, sizeof why);
    with_log(msg, msg_size, why, log, sizeof log);
    return -1;
}

int cuda_link_ptx(const cuda_driver *drv, const char *ptx, void **image, size_t *size, char *msg,
                  size_t msg_size)
{
    *image = NULL;
    *size = 0;
    if (!drv->has_linker) {
        set_msg(msg, msg_size, "this CUDA driver has no JIT linker (cuLinkCreate_v2)");
        return -1;
    }
    char log[4096];
    log[0] = 0;
    /* The linker compiles its inputs as relocatable code (nvcc's -rdc=true) unless told
     * otherwise; a task's PTX is a whole program, as cuModuleLoadDataEx compiles it. */
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                     CU_JIT_POSITION_INDEPENDENT_CODE};
    void *values[] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)0};
    CUlinkState st = NULL;
    char why[512];
    CUresult r = drv->cuLinkCreate(3, options, values, &st);
    if (r != CUDA_SUCCESS) {
        cuda_check(drv, r, "cuLinkCreate", msg, msg_size);
        return -1;
    }
    void *out = NULL;
    size_t n = 0;
    r = drv->cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "task.ptx", 0,
                           NULL, NULL);
    const char *step = "cuLinkAddData";
    if (r == CUDA_SUCCESS) {
        step = "cuLinkComplete";
        r = drv->cuLinkComplete(st, &out, &n);
    }
    if (r == CUDA_SUCCESS && (!out || n == 0)) {
        drv->cuLinkDestroy(st);
        set_msg(msg, msg_size, "cuLinkComplete: no image");
        return -1;
    }
    if (r != CUDA_SUCCESS) {
        cuda_check(drv, r, step, why, sizeof why);
        with_log(msg, msg_size, why, log, sizeof log);
        drv->cuLinkDestroy(st);
        return -1;
    }
    /* the image belongs to the linker's state: copy it out before destroying that */
    *image = malloc(n);
    if (*image) {
        memcpy(*image, out, n);
        *size = n;
    }
    drv->cuLinkDestroy(st);
    if (!*image) {
        set_msg(msg, msg_size, "out of host memory for a %zu-byte image", n);
        return -1;
    }
    return 0;
}

int cuda_module_load_image(const cuda_driver *drv, const void *image, CUmodule *out, char *msg,
                           size_t msg_size)
{
    *out = NULL;
    return cuda_check(drv, drv->cuModuleLoadDataEx(out, image, 0, NULL, NULL),
                      "cuModuleLoadDataEx (cubin)", msg, msg_size);
}
