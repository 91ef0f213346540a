/* bitmasked: a dense array of cells plus one activity bit per cell. Deactivation releases what
 * the cell's subtree allocated and resets the cell to its freshly activated state (zero, then
 * backgrounds), so a later activation sees what a new pointer cell would. */
#include "sparse/runtime/rt_internal.h"

int32_t plm_rt_bitmasked_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    (void)c;
    return rt_sn(rt, snode)->num_cells;
}

void plm_rt_bitmasked_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    (void)rt, (void)snode;
    uint32_t *w = rt_bitmask_words(c) + (i >> 5);
    uint32_t bit = 1u << (i & 31);
    if (RT_LOAD_ACQ(w) & bit)
        return;
    if (!(RT_FETCH_OR(w, bit) & bit))
        RT_FETCH_ADD(rt_num_active(c), 1u);
}

int32_t plm_rt_bitmasked_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    (void)rt, (void)snode;
    return (RT_LOAD_ACQ(rt_bitmask_words(c) + (i >> 5)) >> (i & 31)) & 1u;
}

uint8_t *plm_rt_bitmasked_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i,
                                         int32_t activate)
{
    if (activate)
        plm_rt_bitmasked_activate(rt, snode, c, i);
    else if (!plm_rt_bitmasked_is_active(rt, snode, c, i))
        return NULL;
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (s->is_leaf && s->soa)
        return c + s->header_bytes;
    return c + s->header_bytes + (uint64_t)i * s->cell_bytes;
}

void plm_rt_bitmasked_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    uint32_t *w = rt_bitmask_words(c) + (i >> 5);
    uint32_t bit = 1u << (i & 31);
    if (!(RT_FETCH_AND(w, ~bit) & bit))
        return;
    RT_FETCH_ADD(rt_num_active(c), 0xffffffffu);
    uint8_t *data = c + s->header_bytes;
    if (s->is_leaf) {
        plm_rt__reset_leaf_cell(rt, snode, data, i);
        return;
    }
    uint8_t *cell = data + (uint64_t)i * s->cell_bytes;
    plm_rt__release_content(rt, snode, cell);
    rt_zero(cell, s->cell_bytes);
    plm_rt__fill_content(rt, snode, cell);
}
