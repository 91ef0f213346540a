/* cuda_pool.h — the device memory pool: where SNode trees (and kernels' temporaries) live when
 * the engine runs on a GPU.
 *
 * One managed allocation (cuMemAllocManaged: a single address for host and device, pages move
 * to whichever side touches them) is cut into equal slices, one per tree. A tree's runtime
 * bump-allocates inside its slice on either side (the host imports blocks, GPU kernels activate
 * cells), so nothing is relocated or copied by hand: reading a field on the host after a sync
 * moves its pages back, and cuda_pool_prefetch moves a range ahead of the kernels.
 *
 * The pool never asks for more than the device has free (managed memory beyond that is
 * oversubscription, which can stall the GPU): its size is min(asked, 80% of free memory).
 *
 * Ownership: the pool owns the allocation; a slice taken belongs to the taker until given back.
 * Threads: one thread at a time per pool (the engine's context thread). The device's context
 * must be current on that thread. */
#ifndef PLUME_ENGINE_BACKEND_CUDA_POOL_H
#define PLUME_ENGINE_BACKEND_CUDA_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backend/cuda_driver.h"

#define CUDA_POOL_MAX_SLICES 256

typedef struct cuda_pool {
    const cuda_driver *drv;
    CUdeviceptr base;
    size_t bytes;        /* the whole allocation */
    size_t slice_bytes;  /* bytes per slice, a multiple of 2 MiB */
    uint32_t nslices;
    uint8_t used[CUDA_POOL_MAX_SLICES];
} cuda_pool;

/* Allocates min(want_bytes, 80% of the device's free memory) and cuts it into nslices slices
 * (1..CUDA_POOL_MAX_SLICES). 0, or -1 with the driver's error in msg. */
int cuda_pool_create(const cuda_driver *drv, size_t want_bytes, uint32_t nslices, cuda_pool *out,
                     char *msg, size_t msg_size);
void cuda_pool_destroy(cuda_pool *p);

/* A free slice, zero-filled: *ptr (host- and device-addressable) and *bytes. -1 when every
 * slice is taken ("device memory pool: all N slices of M MiB are in use") or the fill fails. */
int cuda_pool_take(cuda_pool *p, void **ptr, size_t *bytes, char *msg, size_t msg_size);
/* Gives a slice back; ptr must come from cuda_pool_take of this pool. */
void cuda_pool_give(cuda_pool *p, void *ptr);
/* Whether ptr lies inside the pool's allocation. */
int cuda_pool_owns(const cuda_pool *p, const void *ptr);

#endif
