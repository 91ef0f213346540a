/* The sparse runtime on an NVIDIA GPU: the nvptx64 bitcode, linked with small C kernels and
 * lowered to PTX at build time, runs concurrent activation from 1M threads (many racing for the
 * same blocks, warp election on), then reads and list generation; results are checked against
 * values computed here. The CUDA driver is loaded with dlopen: without it the test is skipped.
 * usage: test_sparse_gpu KERNELS.ptx [--voxels N] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sparse/layout.h"
#include "sparse/runtime/runtime.h"
#include "../test_util.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction;

static struct {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(int *, int);
    CUresult (*DeviceGetName)(char *, int, int);
    CUresult (*CtxCreate)(CUcontext *, unsigned, int);
    CUresult (*CtxDestroy)(CUcontext);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, void *, void **, void **);
    CUresult (*CtxSynchronize)(void);
    CUresult (*GetErrorString)(CUresult, const char **);
} cu;

static int cu_ok(CUresult r, const char *what)
{
    if (r == 0)
        return 1;
    const char *s = "?";
    if (cu.GetErrorString)
        cu.GetErrorString(r, &s);
    fprintf(stderr, "%s: CUDA error %d (%s)\n", what, r, s);
    test_failures++;
    return 0;
}

static int load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
#define SYM(field, name)                                                                   \
    if (!(*(void **)&cu.field = dlsym(lib, name)))                                          \
        return 0;
    SYM(Init, "cuInit") SYM(DeviceGet, "cuDeviceGet") SYM(DeviceGetName, "cuDeviceGetName")
    SYM(CtxCreate, "cuCtxCreate_v2") SYM(CtxDestroy, "cuCtxDestroy_v2")
    SYM(ModuleLoadData, "cuModuleLoadData") SYM(ModuleGetFunction, "cuModuleGetFunction")
    SYM(MemAlloc, "cuMemAlloc_v2") SYM(MemFree, "cuMemFree_v2")
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2") SYM(MemcpyDtoH, "cuMemcpyDtoH_v2")
    SYM(MemsetD8, "cuMemsetD8_v2") SYM(LaunchKernel, "cuLaunchKernel")
    SYM(CtxSynchronize, "cuCtxSynchronize") SYM(GetErrorString, "cuGetErrorString")
#undef SYM
    return 1;
}

static CUmodule mod;

static int launch(const char *name, int threads, void **args)
{
    CUfunction f;
    if (!cu_ok(cu.ModuleGetFunction(&f, mod, name), name))
        return 0;
    unsigned block = 256, grid = (unsigned)((threads + 255) / 256);
    if (!cu_ok(cu.LaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL), name))
        return 0;
    return cu_ok(cu.CtxSynchronize(), name);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float value_of(const int32_t *v)
{
    uint32_t h = ((uint32_t)v[0] * 73856093u) ^ ((uint32_t)v[1] * 19349663u) ^
                 ((uint32_t)v[2] * 83492791u);
    return (float)(h >> 8) * 1e-3f;
}

static int cmp3(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KERNELS.ptx [--voxels N]\n", argv[0]);
        return 2;
    }
    int n = 1 << 20;
    if (argc >= 4 && !strcmp(argv[2], "--voxels"))
        n = atoi(argv[3]);
    if (!load_driver() || cu.Init(0) != 0) {
        printf("SKIPPED: no CUDA driver (libcuda.so.1) or no GPU: the runtime was not run on a GPU\n");
        return 77;
    }
    int dev;
    CUcontext ctx;
    char dev_name[128] = "";
    if (!cu_ok(cu.DeviceGet(&dev, 0), "cuDeviceGet") ||
        !cu_ok(cu.CtxCreate(&ctx, 0, dev), "cuCtxCreate"))
        return 1;
    cu.DeviceGetName(dev_name, sizeof dev_name, dev);
    char *ptx = read_file(argv[1]);
    CHECK(ptx != NULL, "cannot read %s", argv[1]);
    if (!ptx || !cu_ok(cu.ModuleLoadData(&mod, ptx), "cuModuleLoadData"))
        return 1;

    /* The runtime's structs have one layout on both sides. */
    CUdeviceptr d_out;
    cu_ok(cu.MemAlloc(&d_out, 64), "alloc");
    void *a_layout[] = {&d_out};
    uint64_t lay[5];
    launch("plm_gpu_k_layout", 1, a_layout);
    cu.MemcpyDtoH(lay, d_out, sizeof lay);
    CHECK(lay[0] == sizeof(plm_runtime) && lay[1] == offsetof(plm_runtime, snodes) &&
              lay[2] == offsetof(plm_runtime, fields) && lay[3] == sizeof(plm_rt_snode) &&
              lay[4] == sizeof(plm_rt_elem),
          "struct layout differs between host and device");

    /* Tree in device memory: default layout, two fields. */
    plm_layout *L;
    char err[256];
    if (plm_layout_parse(PLM_LAYOUT_DEFAULT ".place(value, count)", &L, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint64_t budget = 2ull << 30;
    CUdeviceptr d_arena, d_cfg, d_vox, d_read, d_items;
    cu_ok(cu.MemAlloc(&d_arena, budget), "arena");
    cu_ok(cu.MemsetD8(d_arena, 0, budget), "zero arena");
    cu_ok(cu.MemAlloc(&d_cfg, sizeof L->cfg), "cfg");
    cu_ok(cu.MemcpyHtoD(d_cfg, &L->cfg, sizeof L->cfg), "cfg copy");
    void *a_init[] = {&d_arena, &budget, &d_cfg, &d_out};
    launch("plm_gpu_k_init", 1, a_init);
    uint64_t init_out[2];
    cu.MemcpyDtoH(init_out, d_out, sizeof init_out);
    CHECK(init_out[0] == d_arena, "plm_rt_init on the device failed (needed %llu)",
          (unsigned long long)init_out[1]);
    CUdeviceptr d_rt = d_arena;

    /* n voxels from a pool of n/4 in a 256^3 cube: threads of one warp race for voxels and
     * blocks. */
    int pool = n / 4 > 0 ? n / 4 : 1;
    int32_t(*vox)[3] = malloc(sizeof *vox * (size_t)n);
    int32_t(*pv)[3] = malloc(sizeof *pv * (size_t)pool);
    rng r = {2024};
    for (int i = 0; i < pool; i++)
        for (int a = 0; a < 3; a++)
            pv[i][a] = (int32_t)rng_below(&r, 256) - 128;
    for (int i = 0; i < n; i++)
        memcpy(vox[i], pv[i % 7 == 0 ? (uint32_t)(i % pool) : rng_below(&r, (uint32_t)pool)], sizeof vox[i]);
    cu_ok(cu.MemAlloc(&d_vox, sizeof *vox * (size_t)n), "vox");
    cu_ok(cu.MemcpyHtoD(d_vox, vox, sizeof *vox * (size_t)n), "vox copy");
    int32_t fv = 0, fc = 1;
    void *a_write[] = {&d_rt, &d_vox, &n, &fv, &fc};
    double t0 = now();
    launch("plm_gpu_k_write", n, a_write);
    double t_write = now() - t0;

    plm_runtime *rt = malloc(sizeof *rt);
    cu.MemcpyDtoH(rt, d_rt, sizeof *rt);
    CHECK(rt->magic == PLM_RT_MAGIC, "runtime magic");
    CHECK(rt->error == 0, "device runtime error %u", rt->error);

    /* Independent counts: distinct blocks and occurrences per voxel. */
    int32_t(*sorted)[3] = malloc(sizeof *sorted * (size_t)n);
    memcpy(sorted, vox, sizeof *vox * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp3);
    int32_t(*blk)[3] = malloc(sizeof *blk * (size_t)n);
    for (int i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            blk[i][a] = sorted[i][a] & ~7;
    qsort(blk, (size_t)n, sizeof *blk, cmp3);
    int64_t distinct_blocks = 0;
    for (int i = 0; i < n; i++)
        distinct_blocks += i == 0 || cmp3(blk[i], blk[i - 1]) != 0;
    CHECK(rt->snodes[2].alloc.live == distinct_blocks, "device allocated %lld blocks, distinct %lld",
          (long long)rt->snodes[2].alloc.live, (long long)distinct_blocks);

    /* Values and counts read back on the device. */
    float *vals = malloc(sizeof(float) * (size_t)n), *cnts = malloc(sizeof(float) * (size_t)n);
    cu_ok(cu.MemAlloc(&d_read, sizeof(float) * (size_t)n), "read");
    cu_ok(cu.MemcpyHtoD(d_vox, sorted, sizeof *sorted * (size_t)n), "sorted copy");
    void *a_read_v[] = {&d_rt, &d_vox, &n, &fv, &d_read};
    launch("plm_gpu_k_read", n, a_read_v);
    cu.MemcpyDtoH(vals, d_read, sizeof(float) * (size_t)n);
    void *a_read_c[] = {&d_rt, &d_vox, &n, &fc, &d_read};
    launch("plm_gpu_k_read", n, a_read_c);
    cu.MemcpyDtoH(cnts, d_read, sizeof(float) * (size_t)n);
    int bad_val = 0, bad_cnt = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cmp3(sorted[i], sorted[j]) == 0)
            j++;
        bad_val += vals[i] != value_of(sorted[i]);
        bad_cnt += cnts[i] != (float)(j - i);
        i = j;
    }
    CHECK(bad_val == 0, "%d voxels with wrong values", bad_val);
    CHECK(bad_cnt == 0, "%d voxels with wrong atomic counts", bad_cnt);

    /* List generation on the device, level by level. */
    cu_ok(cu.MemAlloc(&d_items, 8), "items");
    double t_list = 0;
    for (int32_t s = 0; s <= 2; s++) {
        void *a_begin[] = {&d_rt, &s, &d_items};
        launch("plm_gpu_k_listgen_begin", 1, a_begin);
        int32_t items = 0;
        cu.MemcpyDtoH(&items, d_items, sizeof items);
        if (s > 0) {
            void *a_lg[] = {&d_rt, &s, &items};
            t0 = now();
            launch("plm_gpu_k_listgen", items, a_lg);
            t_list += now() - t0;
        }
    }
    cu.MemcpyDtoH(rt, d_rt, sizeof *rt);
    CHECK(rt->snodes[2].list.count == distinct_blocks, "device listed %d blocks, want %lld",
          rt->snodes[2].list.count, (long long)distinct_blocks);
    CHECK(rt->error == 0, "device runtime error %u after listgen", rt->error);

    printf("%s: %d voxel writes (%lld blocks) in %.2f ms = %.1f Mvox/s (incl. launch); "
           "listgen %.3f ms\n",
           dev_name, n, (long long)distinct_blocks, t_write * 1e3, n / t_write / 1e6, t_list * 1e3);
    free(vox), free(pv), free(sorted), free(blk), free(vals), free(cnts), free(rt), free(ptx);
    plm_layout_free(L);
    cu.CtxDestroy(ctx);
    return TEST_RESULT();
}
