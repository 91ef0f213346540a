/* dense: a plain array of cells; every cell is always active. */
#include "sparse/runtime/rt_internal.h"

int32_t plm_rt_dense_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c)
{
    (void)c;
    return rt_sn(rt, snode)->num_cells;
}

void plm_rt_dense_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    (void)rt, (void)snode, (void)c, (void)i;
}

/* Dense cells cannot be deactivated: the call is accepted and does nothing. */
void plm_rt_dense_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    (void)rt, (void)snode, (void)c, (void)i;
}

int32_t plm_rt_dense_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i)
{
    (void)rt, (void)snode, (void)c, (void)i;
    return 1;
}

uint8_t *plm_rt_dense_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i,
                                     int32_t activate)
{
    (void)activate;
    const plm_rt_snode *s = rt_sn(rt, snode);
    if (s->is_leaf && s->soa)
        return c + s->header_bytes;
    return c + s->header_bytes + (uint64_t)i * s->cell_bytes;
}
