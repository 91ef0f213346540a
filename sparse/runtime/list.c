/* Chunked lists in the arena: reserve n consecutive elements with one atomic add, creating the
 * chunks they fall in under the list's lock (double-checked, so the common path takes no lock).
 * When the budget runs out a chunk may be missing: writers use plm_rt_list_slot (NULL there) and
 * readers stop at plm_rt_list_readable, so nothing ever dereferences a missing chunk. */
#include "sparse/runtime/rt_internal.h"

static int touch_chunk(plm_runtime *rt, plm_rt_list *l, uint32_t k, int32_t snode)
{
    if (k >= l->max_chunks) {
        plm_rt_set_error(rt, PLM_RT_ERR_BUDGET, snode, rt->budget + 1);
        return 0;
    }
    if (RT_LOAD_ACQ(&l->chunks[k]))
        return 1;
    int ok = 1;
    uint32_t mask = rt_warp_active_mask();
    if (rt_warp_elect(mask, (uint64_t)(uintptr_t)&l->chunks[k])) {
        rt_lock(&l->lock);
        if (!RT_LOAD_RELAXED(&l->chunks[k])) {
            uint64_t bytes = l->elem_bytes << l->log2_chunk_elems;
            uint8_t *p = (uint8_t *)plm_rt_arena_alloc(rt, bytes, 64, snode);
            if (p)
                RT_STORE_REL(&l->chunks[k], p);
            else
                ok = 0;
        }
        rt_unlock(&l->lock);
    }
    rt_warp_sync(mask);
    return ok && RT_LOAD_ACQ(&l->chunks[k]) != NULL;
}

int plm_rt__list_touch(plm_runtime *rt, plm_rt_list *l, int32_t i, int32_t snode)
{
    return touch_chunk(rt, l, (uint32_t)i >> l->log2_chunk_elems, snode);
}

int32_t plm_rt_list_reserve(plm_runtime *rt, plm_rt_list *l, int32_t n, int32_t snode)
{
    if (n <= 0)
        return RT_LOAD_RELAXED(&l->count);
    int32_t start = RT_FETCH_ADD(&l->count, n);
    if (start < 0 || start > 0x7fffffff - n) {
        plm_rt_set_error(rt, PLM_RT_ERR_BUDGET, snode, rt->budget + 1);
        return -1;
    }
    /* A chunk that cannot be created is recorded as an error; the others are still made so
     * the caller can write what fits (plm_rt_list_slot says where). */
    uint32_t first = (uint32_t)start >> l->log2_chunk_elems;
    uint32_t last = (uint32_t)(start + n - 1) >> l->log2_chunk_elems;
    for (uint32_t k = first; k <= last; k++)
        touch_chunk(rt, l, k, snode);
    return start;
}

uint8_t *plm_rt_list_elem(const plm_rt_list *l, int32_t i)
{
    uint32_t u = (uint32_t)i;
    uint8_t *chunk = l->chunks[u >> l->log2_chunk_elems];
    return chunk + (uint64_t)(u & ((1u << l->log2_chunk_elems) - 1)) * l->elem_bytes;
}

uint8_t *plm_rt_list_slot(const plm_rt_list *l, int32_t i)
{
    uint32_t u = (uint32_t)i;
    uint32_t k = u >> l->log2_chunk_elems;
    if (i < 0 || k >= l->max_chunks)
        return NULL;
    uint8_t *chunk = RT_LOAD_ACQ(&l->chunks[k]);
    if (!chunk)
        return NULL;
    return chunk + (uint64_t)(u & ((1u << l->log2_chunk_elems) - 1)) * l->elem_bytes;
}

int32_t plm_rt_list_readable(const plm_rt_list *l)
{
    int32_t n = RT_LOAD_ACQ(&l->count);
    if (n <= 0)
        return 0;
    uint32_t last = (uint32_t)(n - 1) >> l->log2_chunk_elems;
    for (uint32_t k = 0; k <= last; k++)
        if (k >= l->max_chunks || !RT_LOAD_ACQ(&l->chunks[k]))
            return (int32_t)(k << l->log2_chunk_elems);
    return n;
}
