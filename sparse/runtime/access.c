/* Dispatch on SNode kind, coordinates to cell indices, and whole access paths from the root. */
#include "sparse/runtime/rt_internal.h"

int32_t plm_rt_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    (void)c;
    return rt_sn(rt, snode)->num_cells;
}

void plm_rt_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    switch (rt_sn(rt, snode)->kind) {
    case PLM_RT_POINTER: plm_rt_pointer_activate(rt, snode, c, i); break;
    case PLM_RT_BITMASKED: plm_rt_bitmasked_activate(rt, snode, c, i); break;
    case PLM_RT_DYNAMIC: plm_rt_dynamic_activate(rt, snode, c, i); break;
    default: break;
    }
}

void plm_rt_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    switch (rt_sn(rt, snode)->kind) {
    case PLM_RT_POINTER: plm_rt_pointer_deactivate(rt, snode, c, i); break;
    case PLM_RT_BITMASKED: plm_rt_bitmasked_deactivate(rt, snode, c, i); break;
    case PLM_RT_DYNAMIC: plm_rt_dynamic_deactivate(rt, snode, c, i); break;
    default: break;
    }
}

int32_t plm_rt_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    switch (rt_sn(rt, snode)->kind) {
    case PLM_RT_POINTER: return plm_rt_pointer_is_active(rt, snode, c, i);
    case PLM_RT_BITMASKED: return plm_rt_bitmasked_is_active(rt, snode, c, i);
    case PLM_RT_DYNAMIC: return plm_rt_dynamic_is_active(rt, snode, c, i);
    default: return 1;
    }
}

uint8_t *plm_rt_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i,
                               int32_t activate)
{
    switch (rt_sn(rt, snode)->kind) {
    case PLM_RT_POINTER: return plm_rt_pointer_lookup_element(rt, snode, c, i, activate);
    case PLM_RT_BITMASKED: return plm_rt_bitmasked_lookup_element(rt, snode, c, i, activate);
    case PLM_RT_DYNAMIC: return plm_rt_dynamic_lookup_element(rt, snode, c, i, activate);
    case PLM_RT_DENSE: return plm_rt_dense_lookup_element(rt, snode, c, i, activate);
    default: return c; /* the root's single cell is its container */
    }
}

int32_t plm_rt_cell_index(const plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z)
{
    const plm_rt_snode *s = &rt->snodes[snode];
    int32_t v[3] = {x, y, z};
    uint32_t idx = 0;
    for (int a = 0; a < 3; a++) {
        int64_t u = (int64_t)v[a] - (int64_t)s->coord_offset[a];
        if (u < 0 || u >= ((int64_t)1 << s->extent_bits[a]))
            return -1;
        uint32_t cell = ((uint32_t)u >> s->axis_shift[a]) & ((1u << s->axis_bits[a]) - 1u);
        idx |= cell << s->index_shift[a];
    }
    return (int32_t)idx;
}

uint8_t *plm_rt_container_of(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z,
                             int32_t activate)
{
    if (snode == 0)
        return rt->root;
    int32_t path[PLM_RT_MAX_DEPTH];
    int32_t depth = 0;
    for (int32_t s = snode; s > 0 && depth < PLM_RT_MAX_DEPTH; s = rt->snodes[s].parent)
        path[depth++] = s;
    if (plm_rt_cell_index(rt, snode, x, y, z) < 0) {
        if (activate)
            plm_rt_set_error(rt, PLM_RT_ERR_RANGE, snode, 0);
        return NULL;
    }
    uint8_t *content = rt->root;
    for (int32_t d = depth - 1; d > 0; d--) {
        const plm_rt_snode *s = &rt->snodes[path[d]];
        uint8_t *c = content + s->offset_in_parent;
        content = plm_rt_lookup_element(rt, path[d], c, plm_rt_cell_index(rt, path[d], x, y, z),
                                        activate);
        if (!content)
            return NULL;
    }
    return content + rt->snodes[snode].offset_in_parent;
}

uint8_t *plm_rt_field_ptr(plm_runtime *rt, int32_t field, uint8_t *c, int32_t i, int32_t activate)
{
    const plm_rt_field *f = &rt->fields[field];
    const plm_rt_snode *s = &rt->snodes[f->snode];
    switch (s->kind) {
    case PLM_RT_BITMASKED:
        if (activate)
            plm_rt_bitmasked_activate(rt, f->snode, c, i);
        else if (!plm_rt_bitmasked_is_active(rt, f->snode, c, i))
            return NULL;
        /* fall through */
    case PLM_RT_DENSE:
        return c + s->header_bytes + f->offset + (uint64_t)i * f->stride;
    default: {
        uint8_t *cell = plm_rt_lookup_element(rt, f->snode, c, i, activate);
        return cell ? cell + f->offset : NULL;
    }
    }
}

uint8_t *plm_rt_access(plm_runtime *rt, int32_t field, int32_t x, int32_t y, int32_t z,
                       int32_t activate)
{
    int32_t leaf = rt->fields[field].snode;
    uint8_t *c = plm_rt_container_of(rt, leaf, x, y, z, activate);
    if (!c)
        return activate ? rt->value_sink : NULL;
    return plm_rt_field_ptr(rt, field, c, plm_rt_cell_index(rt, leaf, x, y, z), activate);
}

int32_t plm_rt_is_active_at(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z)
{
    uint8_t *c = plm_rt_container_of(rt, snode, x, y, z, 0);
    return c ? plm_rt_is_active(rt, snode, c, plm_rt_cell_index(rt, snode, x, y, z)) : 0;
}

void plm_rt_activate_at(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z)
{
    uint8_t *c = plm_rt_container_of(rt, snode, x, y, z, 1);
    if (c)
        plm_rt_activate(rt, snode, c, plm_rt_cell_index(rt, snode, x, y, z));
}

void plm_rt_deactivate_at(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z)
{
    uint8_t *c = plm_rt_container_of(rt, snode, x, y, z, 0);
    if (c)
        plm_rt_deactivate(rt, snode, c, plm_rt_cell_index(rt, snode, x, y, z));
}
