/* Per-SNode node allocator and its garbage collection.
 *
 * Allocation takes the next unused entry of the free list (one atomic add on a cursor) or, when
 * the free list is used up, a new cell at the end of the data list. The free list only changes
 * during gc, which runs with nothing else on the tree, so the cursor is all the coordination
 * allocation needs. Recycled cells wait in the recycled list until gc zero-fills them. */
#include "sparse/runtime/rt_internal.h"

uint8_t *plm_rt_node_alloc(plm_runtime *rt, int32_t snode)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    plm_rt_allocator *a = &s->alloc;
    /* After an error every allocation gets the sink, so no real cell is ever hung below a sink. */
    if (plm_rt_error(rt) != PLM_RT_OK) {
        RT_FETCH_ADD(&rt->error_count, (int64_t)1);
        return a->sink;
    }
    int32_t cursor = RT_FETCH_ADD(&a->free_used, 1);
    uint8_t *p;
    if (cursor < RT_LOAD_RELAXED(&a->free.count)) {
        p = *(uint8_t **)plm_rt_list_elem(&a->free, cursor);
    } else {
        /* The free and recycled lists never hold more entries than cells were carved, so
         * making their chunks exist up to index i now means recycling and gc never need
         * memory: deactivating always works, even with the budget used up. */
        int32_t i = plm_rt_list_reserve(rt, &a->data, 1, snode);
        p = plm_rt_list_slot(&a->data, i);
        if (!p || !plm_rt__list_touch(rt, &a->free, i, snode) ||
            !plm_rt__list_touch(rt, &a->recycled, i, snode))
            return a->sink;
    }
    RT_FETCH_ADD(&a->live, (int64_t)1);
    return p;
}

void plm_rt_node_recycle(plm_runtime *rt, int32_t snode, uint8_t *cell)
{
    plm_rt_allocator *a = &rt_sn(rt, snode)->alloc;
    if (cell == a->sink)
        return;
    RT_FETCH_ADD(&a->live, (int64_t)-1);
    uint8_t **slot = (uint8_t **)plm_rt_list_slot(&a->recycled,
                                                  plm_rt_list_reserve(rt, &a->recycled, 1, snode));
    if (slot)
        *slot = cell;
}

int32_t plm_rt_gc_begin(plm_runtime *rt, int32_t snode)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (s->kind != PLM_RT_POINTER && s->kind != PLM_RT_DYNAMIC)
        return 0;
    plm_rt_allocator *a = &s->alloc;
    int32_t size = a->free.count;
    int32_t used = a->free_used < size ? a->free_used : size;
    /* Move the unused tail of the free list to its head (forward copy is safe with overlap). */
    for (int32_t i = used; i < size; i++)
        *(uint8_t **)plm_rt_list_elem(&a->free, i - used) =
            *(uint8_t **)plm_rt_list_elem(&a->free, i);
    a->free.count = size - used;
    a->free_used = 0;
    a->gc_pending = a->recycled.count;
    a->recycled.count = 0; /* entries stay readable until gc_item has moved them */
    return a->gc_pending;
}

void plm_rt_gc_item(plm_runtime *rt, int32_t snode, int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    plm_rt_allocator *a = &s->alloc;
    if (i < 0 || i >= a->gc_pending)
        return;
    uint8_t **from = (uint8_t **)plm_rt_list_slot(&a->recycled, i);
    if (!from)
        return;
    uint8_t *cell = *from;
    rt_zero(cell, s->alloc_bytes);
    uint8_t **to = (uint8_t **)plm_rt_list_slot(&a->free, plm_rt_list_reserve(rt, &a->free, 1, snode));
    if (to)
        *to = cell;
}

void plm_rt_gc(plm_runtime *rt, int32_t snode)
{
    int32_t n = plm_rt_gc_begin(rt, snode);
    for (int32_t i = 0; i < n; i++)
        plm_rt_gc_item(rt, snode, i);
    rt_sn(rt, snode)->alloc.gc_pending = 0;
}
