/* A fake libcuda.so.1 for the driver-loader tests on machines without a GPU. Its behaviour
 * is picked by FAKE_CUDA_MODE at each call:
 *   "nodevice" (default): cuInit fails with CUDA_ERROR_NO_DEVICE (100), as a real driver does
 *                         on a machine whose GPU is missing;
 *   "zero":     cuInit succeeds, cuDeviceGetCount reports 0;
 *   "one":      one device "Fake GPU" of compute capability 8.6 with 84 SMs and 12 GiB.
 * cuModuleLoadDataEx fails with CUDA_ERROR_INVALID_PTX (218) and writes a log line, except for
 * an image the fake linker made ("CUBIN(...)"), which loads. The linker (cuLink*_v2) "compiles"
 * PTX to "CUBIN(<its first 12 bytes>)", fails with a log line on PTX that contains "bad", and
 * overwrites its image when destroyed (so a caller must have copied it).
 * Built with -DFAKE_CUDA_OLD it lacks cuLaunchKernel (a driver too old to load), and it never
 * exports the graph functions (so has_graphs must come out 0). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static const char *mode(void)
{
    const char *m = getenv("FAKE_CUDA_MODE");
    return m ? m : "nodevice";
}

API int cuInit(unsigned flags)
{
    (void)flags;
    return strcmp(mode(), "nodevice") == 0 ? 100 : 0;
}
API int cuDriverGetVersion(int *v)
{
    *v = 12040;
    return 0;
}
API int cuGetErrorName(int e, const char **s)
{
    switch (e) {
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 218: *s = "CUDA_ERROR_INVALID_PTX"; return 0;
    case 999: *s = "CUDA_ERROR_UNKNOWN"; return 0;
    default: *s = NULL; return 1;
    }
}
API int cuGetErrorString(int e, const char **s)
{
    switch (e) {
    case 100: *s = "no CUDA-capable device is detected"; return 0;
    case 218: *s = "a PTX JIT compilation failed"; return 0;
    case 999: *s = "unknown error"; return 0;
    default: *s = NULL; return 1;
    }
}
API int cuDeviceGetCount(int *n)
{
    *n = strcmp(mode(), "one") == 0 ? 1 : 0;
    return 0;
}
API int cuDeviceGet(int *d, int ordinal)
{
    if (strcmp(mode(), "one") != 0 || ordinal != 0)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *d = 0;
    return 0;
}
API int cuDeviceGetName(char *name, int len, int dev)
{
    (void)dev;
    strncpy(name, "Fake GPU", (size_t)len);
    return 0;
}
API int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    switch (attr) {
    case 75: *v = 8; break;
    case 76: *v = 6; break;
    case 16: *v = 84; break;
    case 1: *v = 1024; break;
    case 10: *v = 32; break;
    default: return 1;
    }
    return 0;
}
API int cuDeviceTotalMem_v2(size_t *b, int dev)
{
    (void)dev;
    *b = (size_t)12 << 30;
    return 0;
}
API int cuDevicePrimaryCtxRetain(void **c, int d)
{
    (void)d;
    static int ctx;
    *c = &ctx;
    return 0;
}
API int cuDevicePrimaryCtxRelease_v2(int d)
{
    (void)d;
    return 0;
}
API int cuCtxSetCurrent(void *c)
{
    (void)c;
    return 0;
}
API int cuCtxSynchronize(void) { return 0; }
/* The error log buffer among JIT options 5 (buffer) and 6 (its size). */
static void jit_log(unsigned n, int *opt, void **val, char **log, size_t *size)
{
    *log = NULL;
    *size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (opt[i] == 5)
            *log = val[i];
        if (opt[i] == 6)
            *size = (size_t)(uintptr_t)val[i];
    }
}
static int fake_module;
API int cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *opt, void **val)
{
    *m = NULL;
    if (strncmp(img, "CUBIN(", 6) == 0) {
        *m = &fake_module;
        return 0;
    }
    char *log;
    size_t size;
    jit_log(n, opt, val, &log, &size);
    if (log && size)
        strncpy(log, "ptxas fatal   : fake parse error at line 3\n", size);
    return 218;
}
typedef struct fake_link {
    char *log;
    size_t log_size;
    char image[32];
} fake_link;
API int cuLinkCreate_v2(unsigned n, int *opt, void **val, void **state)
{
    fake_link *l = calloc(1, sizeof *l);
    jit_log(n, opt, val, &l->log, &l->log_size);
    *state = l;
    return 0;
}
API int cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
                         unsigned n, int *opt, void **val)
{
    (void)name, (void)n, (void)opt, (void)val;
    fake_link *l = state;
    if (type != 1 || strlen(data) + 1 != size)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    if (strstr(data, "bad")) {
        if (l->log && l->log_size)
            strncpy(l->log, "ptxas fatal   : fake link error\n", l->log_size);
        return 218;
    }
    snprintf(l->image, sizeof l->image, "CUBIN(%.12s)", (const char *)data);
    return 0;
}
API int cuLinkComplete(void *state, void **image, size_t *size)
{
    fake_link *l = state;
    *image = l->image;
    *size = strlen(l->image) + 1;
    return 0;
}
API int cuLinkDestroy(void *state)
{
    fake_link *l = state;
    memset(l->image, 'X', sizeof l->image);
    free(l);
    return 0;
}
/* The rest only has to exist. */
#define STUB(name) API int name(void) { return 999; }
STUB(cuModuleUnload)
STUB(cuModuleGetFunction)
#ifndef FAKE_CUDA_OLD
STUB(cuLaunchKernel)
#endif
STUB(cuMemAlloc_v2)
STUB(cuMemFree_v2)
STUB(cuMemcpyHtoD_v2)
STUB(cuMemcpyDtoH_v2)
STUB(cuMemsetD8_v2)
STUB(cuMemcpyHtoDAsync_v2)
STUB(cuMemcpyDtoHAsync_v2)
STUB(cuMemsetD8Async)
STUB(cuMemGetInfo_v2)
STUB(cuCtxSetLimit)
STUB(cuMemAllocManaged)
STUB(cuMemHostAlloc)
STUB(cuMemFreeHost)
STUB(cuStreamCreate)
STUB(cuStreamDestroy_v2)
STUB(cuStreamSynchronize)
STUB(cuEventCreate)
STUB(cuEventDestroy_v2)
STUB(cuEventRecord)
STUB(cuEventSynchronize)
STUB(cuEventElapsedTime)
