/* pointer: an array of cell pointers, each NULL or a cell from the SNode's node allocator.
 *
 * Activation is double-checked locking: the read path is one acquire load; a missing cell is
 * created under the cell's spin lock, after checking again. On the GPU only one lane per warp and
 * cell enters the lock (warp election on the slot's address) and the others wait at a warp
 * barrier, then read the published pointer. */
#include "sparse/runtime/rt_internal.h"

int32_t plm_rt_pointer_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    (void)c;
    return rt_sn(rt, snode)->num_cells;
}

/* Out of line on purpose: the slow path (lock, allocate, fill) is rare, and inlined at every
 * activating access of a task it made GPU kernels several times larger, which the driver's PTX
 * compiler pays for in seconds per task. The fast path above stays inline. */
__attribute__((noinline)) static uint8_t *install(plm_runtime *rt, int32_t snode, uint8_t *c,
                                                  int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    uint8_t **slot = rt_pointer_slots(s, c) + i;
    uint32_t *lock = rt_pointer_locks(c) + i;
    uint32_t mask = rt_warp_active_mask();
    if (rt_warp_elect(mask, (uint64_t)(uintptr_t)slot)) {
        rt_lock(lock);
        if (!RT_LOAD_RELAXED(slot)) {
            uint8_t *p = plm_rt_node_alloc(rt, snode);
            if (p != s->alloc.sink) {
                plm_rt__fill_content(rt, snode, p);
                RT_STORE_REL(slot, p);
                RT_FETCH_ADD(rt_num_active(c), 1u);
            }
        }
        rt_unlock(lock);
    }
    rt_warp_sync(mask);
    uint8_t *p = RT_LOAD_ACQ(slot);
    return p ? p : s->alloc.sink; /* NULL here means the allocation failed: error recorded */
}

uint8_t *plm_rt_pointer_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i,
                                       int32_t activate)
{
    uint8_t *p = RT_LOAD_ACQ(rt_pointer_slots(rt_sn(rt, snode), c) + i);
    if (p || !activate)
        return p;
    return install(rt, snode, c, i);
}

void plm_rt_pointer_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    plm_rt_pointer_lookup_element(rt, snode, c, i, 1);
}

int32_t plm_rt_pointer_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    return RT_LOAD_ACQ(rt_pointer_slots(rt_sn(rt, snode), c) + i) != NULL;
}

void plm_rt_pointer_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    uint8_t **slot = rt_pointer_slots(s, c) + i;
    if (!RT_LOAD_ACQ(slot))
        return;
    uint32_t *lock = rt_pointer_locks(c) + i;
    rt_lock(lock);
    uint8_t *p = RT_LOAD_RELAXED(slot);
    if (p) {
        RT_STORE_REL(slot, (uint8_t *)NULL);
        RT_FETCH_ADD(rt_num_active(c), 0xffffffffu);
        plm_rt__release_content(rt, snode, p);
        plm_rt_node_recycle(rt, snode, p);
    }
    rt_unlock(lock);
}
