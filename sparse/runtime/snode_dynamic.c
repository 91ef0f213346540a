/* dynamic: a 1-D list of cells with a length n, stored as a linked chain of chunks from the
 * SNode's node allocator. Cells [0, n) are active; activating cell i makes n at least i + 1;
 * deactivating cell i truncates the list to length i (chunks past it are recycled, the cells of
 * the kept chunk past it reset to the backgrounds). Chunks are created under the container's
 * lock; the length only grows by an atomic compare-and-swap. */
#include "sparse/runtime/rt_internal.h"

static rt_dyn_header *hdr(uint8_t *c) { return (rt_dyn_header *)c; }

int32_t plm_rt_dynamic_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    (void)c;
    return rt_sn(rt, snode)->num_cells;
}

int32_t plm_rt_dynamic_length(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    (void)rt, (void)snode;
    return RT_LOAD_ACQ(&hdr(c)->n);
}

/* Cell i's content, or NULL when its chunk does not exist (yet). */
static uint8_t *slot(const plm_rt_snode *s, uint8_t *c, int32_t i)
{
    uint8_t *chunk = RT_LOAD_ACQ(&hdr(c)->head);
    for (int32_t k = i >> s->dyn_log2_chunk; k > 0 && chunk; k--)
        chunk = RT_LOAD_ACQ((uint8_t **)chunk);
    if (!chunk)
        return NULL;
    return chunk + 8 + (uint64_t)(i & ((1 << s->dyn_log2_chunk) - 1)) * s->cell_bytes;
}

static void fill_cells(plm_runtime *rt, int32_t snode, uint8_t *first, int32_t count)
{
    const plm_rt_snode *s = rt_sn(rt, snode);
    for (int32_t j = 0; j < count; j++)
        plm_rt__fill_content(rt, snode, first + (uint64_t)j * s->cell_bytes);
}

/* Makes sure the chunks holding cells [0, i] exist; 0 when an allocation failed. */
static int ensure_chunks(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (slot(s, c, i))
        return 1;
    int ok = 1;
    rt_lock(&hdr(c)->lock);
    uint8_t **link = &hdr(c)->head;
    for (int32_t k = 0; k <= (i >> s->dyn_log2_chunk); k++) {
        uint8_t *chunk = RT_LOAD_RELAXED(link);
        if (!chunk) {
            chunk = plm_rt_node_alloc(rt, snode);
            if (chunk == s->alloc.sink) {
                ok = 0;
                break;
            }
            fill_cells(rt, snode, chunk + 8, 1 << s->dyn_log2_chunk);
            RT_STORE_REL(link, chunk);
        }
        link = (uint8_t **)chunk;
    }
    rt_unlock(&hdr(c)->lock);
    return ok;
}

void plm_rt_dynamic_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (i < 0 || i >= s->num_cells) {
        plm_rt_set_error(rt, PLM_RT_ERR_RANGE, snode, 0);
        return;
    }
    if (i < RT_LOAD_ACQ(&hdr(c)->n))
        return;
    if (!ensure_chunks(rt, snode, c, i))
        return;
    for (;;) {
        int32_t n = RT_LOAD_ACQ(&hdr(c)->n);
        if (n > i || RT_CAS(&hdr(c)->n, n, i + 1))
            return;
    }
}

int32_t plm_rt_dynamic_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    (void)rt, (void)snode;
    return i >= 0 && i < RT_LOAD_ACQ(&hdr(c)->n);
}

uint8_t *plm_rt_dynamic_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i,
                                       int32_t activate)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (activate)
        plm_rt_dynamic_activate(rt, snode, c, i);
    uint8_t *p = plm_rt_dynamic_is_active(rt, snode, c, i) ? slot(s, c, i) : NULL;
    if (!p && activate)
        p = s->alloc.sink + 8;
    return p;
}

uint8_t *plm_rt_dynamic_append(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t *index)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    int32_t n;
    for (;;) {
        n = RT_LOAD_ACQ(&hdr(c)->n);
        if (n >= s->num_cells) {
            plm_rt_set_error(rt, PLM_RT_ERR_DYNAMIC, snode, 0);
            *index = -1;
            return s->alloc.sink + 8;
        }
        if (!ensure_chunks(rt, snode, c, n)) {
            *index = -1;
            return s->alloc.sink + 8;
        }
        if (RT_CAS(&hdr(c)->n, n, n + 1))
            break;
    }
    *index = n;
    return slot(s, c, n);
}

void plm_rt_dynamic_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    rt_lock(&hdr(c)->lock);
    int32_t n = hdr(c)->n;
    if (i >= 0 && i < n) {
        int32_t per = 1 << s->dyn_log2_chunk;
        int32_t keep = (i + per - 1) >> s->dyn_log2_chunk; /* chunks still holding live cells */
        uint8_t **link = &hdr(c)->head;
        for (int32_t k = 0; k < keep && *link; k++)
            link = (uint8_t **)*link;
        uint8_t *drop = *link;
        RT_STORE_REL(link, (uint8_t *)NULL);
        while (drop) {
            uint8_t *next = *(uint8_t **)drop;
            plm_rt_node_recycle(rt, snode, drop);
            drop = next;
        }
        /* Cells i .. end of the last kept chunk held values: reset them. */
        int32_t end = keep * per < n ? keep * per : n;
        for (int32_t j = i; j < end; j++) {
            uint8_t *cell = slot(s, c, j);
            if (cell) {
                rt_zero(cell, s->cell_bytes);
                plm_rt__fill_content(rt, snode, cell);
            }
        }
        RT_STORE_REL(&hdr(c)->n, i);
    }
    rt_unlock(&hdr(c)->lock);
}
