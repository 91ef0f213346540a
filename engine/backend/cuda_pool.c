/* The device memory pool: one managed allocation in equal slices. */
#define _GNU_SOURCE
#include "engine/backend/cuda_pool.h"

#include <stdio.h>
#include <string.h>

#define SLICE_ALIGN ((size_t)2 << 20)

int cuda_pool_create(const cuda_driver *drv, size_t want_bytes, uint32_t nslices, cuda_pool *out,
                     char *msg, size_t msg_size)
{
    memset(out, 0, sizeof *out);
    if (nslices == 0 || nslices > CUDA_POOL_MAX_SLICES) {
        snprintf(msg, msg_size, "device memory pool: %u slices asked for (1..%d)", nslices,
                 CUDA_POOL_MAX_SLICES);
        return -1;
    }
    size_t free_b = 0, total_b = 0;
    if (cuda_check(drv, drv->cuMemGetInfo(&free_b, &total_b), "cuMemGetInfo", msg, msg_size))
        return -1;
    size_t cap = free_b / 10 * 8;
    size_t bytes = want_bytes < cap ? want_bytes : cap;
    size_t slice = bytes / nslices / SLICE_ALIGN * SLICE_ALIGN;
    if (slice == 0) {
        snprintf(msg, msg_size,
                 "device memory pool: %zu MiB free on the device is too little for %u slices",
                 free_b >> 20, nslices);
        return -1;
    }
    bytes = slice * nslices;
    CUdeviceptr base = 0;
    if (cuda_check(drv, drv->cuMemAllocManaged(&base, bytes, CU_MEM_ATTACH_GLOBAL),
                   "cuMemAllocManaged", msg, msg_size))
        return -1;
    out->drv = drv;
    out->base = base;
    out->bytes = bytes;
    out->slice_bytes = slice;
    out->nslices = nslices;
    return 0;
}

void cuda_pool_destroy(cuda_pool *p)
{
    if (p->base)
        p->drv->cuMemFree(p->base);
    memset(p, 0, sizeof *p);
}

int cuda_pool_take(cuda_pool *p, void **ptr, size_t *bytes, char *msg, size_t msg_size)
{
    for (uint32_t i = 0; i < p->nslices; i++) {
        if (p->used[i])
            continue;
        CUdeviceptr at = p->base + (CUdeviceptr)i * p->slice_bytes;
        /* On the device: the pages a tree never touches are filled there and stay there. */
        if (cuda_check(p->drv, p->drv->cuMemsetD8(at, 0, p->slice_bytes), "cuMemsetD8", msg,
                       msg_size))
            return -1;
        p->used[i] = 1;
        *ptr = (void *)(uintptr_t)at;
        *bytes = p->slice_bytes;
        return 0;
    }
    snprintf(msg, msg_size, "device memory pool: all %u slices of %zu MiB are in use", p->nslices,
             p->slice_bytes >> 20);
    return -1;
}

void cuda_pool_give(cuda_pool *p, void *ptr)
{
    if (!cuda_pool_owns(p, ptr))
        return;
    size_t i = (size_t)((CUdeviceptr)(uintptr_t)ptr - p->base) / p->slice_bytes;
    p->used[i] = 0;
}

int cuda_pool_owns(const cuda_pool *p, const void *ptr)
{
    CUdeviceptr a = (CUdeviceptr)(uintptr_t)ptr;
    return p->base && a >= p->base && a < p->base + p->bytes;
}
