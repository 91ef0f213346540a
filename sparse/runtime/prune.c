/* Pruning: a pointer cell whose content is nothing but empty sparse containers (pointer or
 * bitmasked with no active cell, dynamic of length 0) is deactivated, bottom-up, so that churn
 * over a moving region does not keep every interior block it ever touched. Leaf values are never
 * pruned: a cell holding placed values directly is not empty. */
#include "sparse/runtime/rt_internal.h"

static int prune_container(plm_runtime *rt, int32_t snode, uint8_t *c);

/* Prunes below this content and says whether it is now empty. */
static int content_empty(plm_runtime *rt, int32_t snode, uint8_t *content)
{
    const plm_rt_snode *s = &rt->snodes[snode];
    if (s->is_leaf)
        return 0;
    int empty = 1;
    for (int32_t ch = s->first_child; ch >= 0; ch = rt->snodes[ch].next_sibling)
        if (!prune_container(rt, ch, content + rt->snodes[ch].offset_in_parent))
            empty = 0;
    return empty;
}

static int prune_container(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    const plm_rt_snode *s = &rt->snodes[snode];
    if (!s->has_sparse)
        return 0;
    uint8_t *data = c + s->header_bytes;
    switch (s->kind) {
    case PLM_RT_POINTER: {
        uint8_t **slots = rt_pointer_slots(s, c);
        for (int32_t i = 0; i < s->num_cells; i++)
            if (slots[i] && content_empty(rt, snode, slots[i]))
                plm_rt_pointer_deactivate(rt, snode, c, i);
        return *rt_num_active(c) == 0;
    }
    case PLM_RT_BITMASKED: {
        if (!s->is_leaf)
            for (int32_t i = 0; i < s->num_cells; i++)
                if (plm_rt_bitmasked_is_active(rt, snode, c, i))
                    content_empty(rt, snode, data + (uint64_t)i * s->cell_bytes);
        return *rt_num_active(c) == 0;
    }
    case PLM_RT_DYNAMIC: return ((rt_dyn_header *)c)->n == 0;
    default: {
        int empty = 1;
        for (int32_t i = 0; i < s->num_cells; i++)
            if (!content_empty(rt, snode, data + (uint64_t)i * s->cell_bytes))
                empty = 0;
        return empty;
    }
    }
}

void plm_rt_prune(plm_runtime *rt) { prune_container(rt, 0, rt->root); }
