/* What happens to a cell's content when it is created or dropped: a fresh cell (zero-filled by the
 * arena or by gc) gets the fields' background values wherever its memory holds placed values
 * directly; a dropped cell hands every block its subtree allocated back to the allocators. */
#include "sparse/runtime/rt_internal.h"

static int background_is_zero(const plm_rt_field *f)
{
    for (int32_t k = 0; k < f->components; k++)
        if (f->background[k] != 0.0f)
            return 0;
    return 1;
}

static void fill_values(plm_runtime *rt, int32_t snode, uint8_t *base, int32_t first, int32_t n)
{
    for (int32_t f = 0; f < rt->num_fields; f++) {
        const plm_rt_field *fd = &rt->fields[f];
        if (fd->snode != snode || background_is_zero(fd))
            continue;
        for (int32_t i = first; i < first + n; i++) {
            float *v = (float *)(base + fd->offset + (uint64_t)i * fd->stride);
            for (int32_t k = 0; k < fd->components; k++)
                v[k] = fd->background[k];
        }
    }
}

void plm_rt__reset_leaf_cell(plm_runtime *rt, int32_t snode, uint8_t *data, int32_t i)
{
    for (int32_t f = 0; f < rt->num_fields; f++) {
        const plm_rt_field *fd = &rt->fields[f];
        if (fd->snode != snode)
            continue;
        float *v = (float *)(data + fd->offset + (uint64_t)i * fd->stride);
        for (int32_t k = 0; k < fd->components; k++)
            v[k] = fd->background[k];
    }
}

void plm_rt__fill_container(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (!s->inline_data)
        return;
    uint8_t *data = c + s->header_bytes;
    if (s->is_leaf) {
        fill_values(rt, snode, data, 0, s->num_cells);
        return;
    }
    for (int32_t i = 0; i < s->num_cells; i++)
        plm_rt__fill_content(rt, snode, data + (uint64_t)i * s->cell_bytes);
}

void plm_rt__fill_content(plm_runtime *rt, int32_t snode, uint8_t *content)
{
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (s->is_leaf) {
        /* One cell's values: only pointer and dynamic leaves hand out single cells. */
        fill_values(rt, snode, content, 0, 1);
        return;
    }
    for (int32_t ch = s->first_child; ch >= 0; ch = rt->snodes[ch].next_sibling)
        plm_rt__fill_container(rt, ch, content + rt->snodes[ch].offset_in_parent);
}

void plm_rt__release_content(plm_runtime *rt, int32_t snode, uint8_t *content)
{
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (s->is_leaf)
        return;
    for (int32_t ch = s->first_child; ch >= 0; ch = rt->snodes[ch].next_sibling)
        plm_rt__release_container(rt, ch, content + rt->snodes[ch].offset_in_parent);
}

void plm_rt__release_container(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    plm_rt_snode *s = rt_sn(rt, snode);
    if (!s->has_sparse)
        return;
    uint8_t *data = c + s->header_bytes;
    switch (s->kind) {
    case PLM_RT_ROOT:
    case PLM_RT_DENSE:
        for (int32_t i = 0; i < s->num_cells; i++)
            plm_rt__release_content(rt, snode, data + (uint64_t)i * s->cell_bytes);
        break;
    case PLM_RT_POINTER: {
        uint8_t **slots = rt_pointer_slots(s, c);
        for (int32_t i = 0; i < s->num_cells; i++) {
            uint8_t *p = slots[i];
            if (p) {
                plm_rt__release_content(rt, snode, p);
                plm_rt_node_recycle(rt, snode, p);
                slots[i] = NULL;
            }
        }
        *rt_num_active(c) = 0;
        break;
    }
    case PLM_RT_BITMASKED: {
        /* Each active cell goes back to its freshly activated state, as plm_rt_bitmasked_deactivate
         * leaves it: a container with no pointer above is never reallocated, so a later
         * activation would otherwise see the old values. */
        uint32_t *words = rt_bitmask_words(c);
        for (int32_t i = 0; i < s->num_cells; i++) {
            if (!((words[i >> 5] >> (i & 31)) & 1u))
                continue;
            if (s->is_leaf) {
                plm_rt__reset_leaf_cell(rt, snode, data, i);
                continue;
            }
            uint8_t *cell = data + (uint64_t)i * s->cell_bytes;
            plm_rt__release_content(rt, snode, cell);
            rt_zero(cell, s->cell_bytes);
            plm_rt__fill_content(rt, snode, cell);
        }
        for (int32_t w = 0; w < (s->num_cells + 31) / 32; w++)
            words[w] = 0;
        *rt_num_active(c) = 0;
        break;
    }
    case PLM_RT_DYNAMIC: {
        rt_dyn_header *h = (rt_dyn_header *)c;
        uint8_t *chunk = h->head;
        while (chunk) {
            uint8_t *next = *(uint8_t **)chunk;
            plm_rt_node_recycle(rt, snode, chunk);
            chunk = next;
        }
        h->head = NULL;
        h->n = 0;
        break;
    }
    default:
        break;
    }
}

void plm_rt_refill_background(plm_runtime *rt, int32_t field)
{
    const plm_rt_field *fd = &rt->fields[field];
    const plm_rt_snode *s = rt_sn(rt, fd->snode);
    if (!s->bg_container)
        return;
    uint8_t *data = s->bg_container + s->header_bytes;
    for (int32_t i = 0; i < s->num_cells; i++) {
        float *v = (float *)(data + fd->offset + (uint64_t)i * fd->stride);
        for (int32_t k = 0; k < fd->components; k++)
            v[k] = fd->background[k];
    }
}

/* Sets field's background in the cells of container c of path[depth] (and below) that are not
 * active through a bitmasked node: live says every bitmasked cell above is active; keep_live
 * that the chain has a bitmasked node (an all-dense chain has no inactive cell to tell apart). */
static void fill_field_below(plm_runtime *rt, const plm_rt_field *fd, const int32_t *path,
                             int32_t depth, uint8_t *c, int live, int keep_live)
{
    const plm_rt_snode *s = rt_sn(rt, path[depth]);
    const uint32_t *words = s->kind == PLM_RT_BITMASKED ? rt_bitmask_words(c) : NULL;
    uint8_t *data = c + s->header_bytes;
    const plm_rt_snode *child = s->is_leaf ? NULL : rt_sn(rt, path[depth + 1]);
    for (int32_t i = 0; i < s->num_cells; i++) {
        int live_i = live && (!words || ((words[i >> 5] >> (i & 31)) & 1u));
        if (child) {
            fill_field_below(rt, fd, path, depth + 1,
                             data + (uint64_t)i * s->cell_bytes + child->offset_in_parent, live_i,
                             keep_live);
            continue;
        }
        if (live_i && keep_live)
            continue;
        float *v = (float *)(data + fd->offset + (uint64_t)i * fd->stride);
        for (int32_t k = 0; k < fd->components; k++)
            v[k] = fd->background[k];
    }
}

/* The nodes from the root's child down to field's leaf; their count, or 0 when the chain is not
 * allocated whole with the tree. */
static int32_t inline_chain(plm_runtime *rt, int32_t field, int32_t *path, int *has_bitmasked)
{
    int32_t n = 0;
    *has_bitmasked = 0;
    for (int32_t s = rt->fields[field].snode; s > 0; s = rt_sn(rt, s)->parent) {
        path[n++] = s;
        *has_bitmasked |= rt_sn(rt, s)->kind == PLM_RT_BITMASKED;
    }
    if (n == 0 || !rt_sn(rt, path[n - 1])->inline_data)
        return 0;
    for (int32_t a = 0, b = n - 1; a < b; a++, b--) {
        int32_t t = path[a];
        path[a] = path[b];
        path[b] = t;
    }
    return n;
}

int32_t plm_rt_fill_field_inline(plm_runtime *rt, int32_t field)
{
    int32_t path[PLM_RT_MAX_SNODES];
    int has_bitmasked;
    if (!inline_chain(rt, field, path, &has_bitmasked))
        return 0;
    fill_field_below(rt, &rt->fields[field], path, 0,
                     rt->root + rt_sn(rt, path[0])->offset_in_parent, 1, has_bitmasked);
    return 1;
}

void plm_rt_clear_chain(plm_runtime *rt, int32_t field)
{
    int32_t top = rt->fields[field].snode;
    while (top > 0 && rt_sn(rt, top)->parent > 0)
        top = rt_sn(rt, top)->parent;
    if (top <= 0)
        return;
    plm_rt__release_container(rt, top, rt->root + rt_sn(rt, top)->offset_in_parent);
    int32_t path[PLM_RT_MAX_SNODES];
    int has_bitmasked;
    if (inline_chain(rt, field, path, &has_bitmasked) && !has_bitmasked)
        fill_field_below(rt, &rt->fields[field], path, 0,
                         rt->root + rt_sn(rt, path[0])->offset_in_parent, 1, 0);
}
