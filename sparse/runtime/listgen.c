/* List generation: list(S) = the active cells of S inside the containers that list(parent(S))
 * names. One work item scans at most PLM_RT_LISTGEN_CHUNK cells of one container, counts the
 * active ones, reserves that many slots with one atomic add and writes them, so items can run on
 * any number of threads and a large container is spread over several of them. */
#include "sparse/runtime/rt_internal.h"

void plm_rt_list_clear(plm_runtime *rt, int32_t snode) { rt_sn(rt, snode)->list.count = 0; }

int32_t plm_rt_list_size(plm_runtime *rt, int32_t snode)
{
    /* After a failed reservation the count runs past the chunks that exist: stop before. */
    return plm_rt_list_readable(&rt_sn(rt, snode)->list);
}

plm_rt_elem *plm_rt_list_get(plm_runtime *rt, int32_t snode, int32_t i)
{
    return (plm_rt_elem *)plm_rt_list_elem(&rt_sn(rt, snode)->list, i);
}

void plm_rt_listgen_root(plm_runtime *rt)
{
    plm_rt_list *l = &rt->snodes[0].list;
    l->count = 0;
    plm_rt_elem *e = (plm_rt_elem *)plm_rt_list_slot(l, plm_rt_list_reserve(rt, l, 1, 0));
    if (!e)
        return;
    e->cell = rt->root;
    e->coord[0] = e->coord[1] = e->coord[2] = 0;
    e->index = 0;
}

static int32_t chunks_per_container(const plm_rt_snode *s)
{
    return (s->num_cells + PLM_RT_LISTGEN_CHUNK - 1) / PLM_RT_LISTGEN_CHUNK;
}

int32_t plm_rt_listgen_num_items(plm_runtime *rt, int32_t snode)
{
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (snode == 0)
        return 1;
    int64_t n = (int64_t)plm_rt_list_size(rt, s->parent) * chunks_per_container(s);
    return n > 0x7fffffff ? 0x7fffffff : (int32_t)n;
}

static void put(plm_rt_elem *e, const plm_rt_snode *s, const int32_t base[3], uint8_t *cell,
                int32_t i)
{
    if (e) /* else its chunk could not be created: the error is recorded */
        rt_list_entry(e, s, base, cell, i);
}

void plm_rt_listgen_item(plm_runtime *rt, int32_t snode, int32_t item)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (snode == 0) {
        plm_rt_listgen_root(rt);
        return;
    }
    int32_t cpc = chunks_per_container(s);
    const plm_rt_elem *pe = plm_rt_list_get(rt, s->parent, item / cpc);
    uint8_t *c = pe->cell + s->offset_in_parent;
    int32_t lo = (item % cpc) * PLM_RT_LISTGEN_CHUNK;
    int32_t hi = lo + PLM_RT_LISTGEN_CHUNK < s->num_cells ? lo + PLM_RT_LISTGEN_CHUNK : s->num_cells;
    int32_t base[3];
    for (int a = 0; a < 3; a++)
        base[a] = pe->coord[a] + (s->parent == 0 ? s->coord_offset[a] : 0);

    if (s->kind == PLM_RT_DYNAMIC) {
        int32_t n = RT_LOAD_ACQ(&((rt_dyn_header *)c)->n);
        if (hi > n)
            hi = n;
        if (hi <= lo)
            return;
        int32_t per = 1 << s->dyn_log2_chunk;
        uint8_t *chunk = ((rt_dyn_header *)c)->head;
        for (int32_t k = lo >> s->dyn_log2_chunk; k > 0 && chunk; k--)
            chunk = *(uint8_t **)chunk;
        /* Cells whose chunk is missing (a failed allocation) are not listed. */
        int32_t avail = 0;
        for (uint8_t *ch = chunk; ch && lo + avail < hi; ch = *(uint8_t **)ch)
            avail += per - ((lo + avail) & (per - 1));
        if (lo + avail < hi)
            hi = lo + avail;
        int32_t at = plm_rt_list_reserve(rt, &s->list, hi - lo, snode);
        if (at < 0)
            return;
        for (int32_t i = lo; i < hi; i++) {
            if (i > lo && (i & (per - 1)) == 0)
                chunk = *(uint8_t **)chunk;
            uint8_t *cell = chunk + 8 + (uint64_t)(i & (per - 1)) * s->cell_bytes;
            put((plm_rt_elem *)plm_rt_list_slot(&s->list, at + i - lo), s, base, cell, i);
        }
        return;
    }

    int32_t count = 0;
    if (s->kind == PLM_RT_DENSE || s->kind == PLM_RT_ROOT)
        count = hi - lo;
    else
        for (int32_t i = lo; i < hi; i++)
            count += rt_active_cell(s, c, i) != NULL;
    if (count == 0)
        return;
    int32_t at = plm_rt_list_reserve(rt, &s->list, count, snode);
    if (at < 0)
        return;
    for (int32_t i = lo; i < hi && count > 0; i++) {
        uint8_t *cell = rt_active_cell(s, c, i);
        if (cell) {
            put((plm_rt_elem *)plm_rt_list_slot(&s->list, at++), s, base, cell, i);
            count--;
        }
    }
}

int64_t plm_rt_listgen_num_cells(plm_runtime *rt, int32_t snode)
{
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (snode == 0)
        return 1;
    return (int64_t)plm_rt_list_size(rt, s->parent) * s->num_cells;
}

void plm_rt_listgen_cell(plm_runtime *rt, int32_t snode, int64_t idx)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (snode == 0) {
        plm_rt_listgen_root(rt);
        return;
    }
    if (s->kind == PLM_RT_DYNAMIC)
        return;
    const plm_rt_elem *pe = plm_rt_list_get(rt, s->parent, (int32_t)(idx / s->num_cells));
    int32_t i = (int32_t)(idx % s->num_cells);
    uint8_t *c = pe->cell + s->offset_in_parent;
    uint8_t *cell = rt_active_cell(s, c, i);
    if (!cell)
        return;
    int32_t base[3];
    for (int a = 0; a < 3; a++)
        base[a] = pe->coord[a] + (s->parent == 0 ? s->coord_offset[a] : 0);
    int32_t at = plm_rt_list_reserve(rt, &s->list, 1, snode);
    if (at >= 0)
        put((plm_rt_elem *)plm_rt_list_slot(&s->list, at), s, base, cell, i);
}

void plm_rt_listgen(plm_runtime *rt, int32_t snode)
{
    if (snode == 0) {
        plm_rt_listgen_root(rt);
        return;
    }
    plm_rt_list_clear(rt, snode);
    int32_t n = plm_rt_listgen_num_items(rt, snode);
    for (int32_t i = 0; i < n; i++)
        plm_rt_listgen_item(rt, snode, i);
}
