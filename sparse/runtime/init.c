/* plm_rt_init: lays out the runtime struct, chunk tables, sinks and the root container at the
 * start of the arena. */
#include "sparse/runtime/rt_internal.h"

static uint32_t log2_floor(uint64_t v)
{
    uint32_t r = 0;
    while (v > 1) {
        v >>= 1;
        r++;
    }
    return r;
}

/* Chunks are at least 64 KiB and at least budget/4096, so a chunk table never needs more than
 * about 4096 slots (32 KiB) however large the budget, and the slack of a half-used last chunk
 * stays a small fraction of the budget. */
static uint64_t chunk_target(uint64_t budget)
{
    uint64_t t = (uint64_t)1 << 16;
    while (t < budget / 4096)
        t <<= 1;
    return t;
}

static int list_setup(plm_runtime *rt, plm_rt_list *l, uint64_t elem_bytes, uint64_t max_elems,
                      int32_t snode)
{
    uint64_t target = chunk_target(rt->budget);
    uint64_t per = elem_bytes >= target ? 1 : target / elem_bytes;
    l->elem_bytes = elem_bytes;
    l->log2_chunk_elems = log2_floor(per);
    per = (uint64_t)1 << l->log2_chunk_elems;
    uint64_t chunks = max_elems / per + 1;
    if (chunks > ((uint64_t)1 << 31) / per)
        chunks = ((uint64_t)1 << 31) / per; /* indices are int32 */
    l->max_chunks = (uint32_t)chunks;
    l->count = 0;
    l->lock = 0;
    l->chunks = (uint8_t **)plm_rt_arena_alloc(rt, chunks * sizeof(uint8_t *), 8, snode);
    return l->chunks != NULL;
}

plm_runtime *plm_rt_init(void *arena, uint64_t arena_bytes, const plm_rt_config *cfg,
                         uint64_t *needed)
{
    uint64_t fixed = rt_align_up(sizeof(plm_runtime), 64);
    if (needed)
        *needed = fixed;
    if (!arena || ((uintptr_t)arena & 63u) || arena_bytes < fixed || cfg->num_snodes < 1 ||
        cfg->num_snodes > PLM_RT_MAX_SNODES || cfg->num_fields > PLM_RT_MAX_FIELDS)
        return NULL;
    plm_runtime *rt = (plm_runtime *)arena;
    rt->magic = 0;
    rt->arena = (uint8_t *)arena;
    rt->budget = arena_bytes;
    rt->used = fixed;
    rt->error = 0;
    rt->error_snode = -1;
    rt->error_needed = 0;
    rt->error_budget = 0;
    rt->shared_used = 0;
    rt->shared_budget = 0;
    rt->error_count = 0;
    rt->error_flag = NULL;
    rt->num_snodes = cfg->num_snodes;
    rt->num_fields = cfg->num_fields;
    for (int32_t i = 0; i < cfg->num_snodes; i++)
        rt->snodes[i] = cfg->snodes[i];
    for (int32_t i = 0; i < cfg->num_fields; i++)
        rt->fields[i] = cfg->fields[i];

    int ok = 1;
    for (int32_t i = 0; i < rt->num_snodes && ok; i++) {
        plm_rt_snode *s = &rt->snodes[i];
        plm_rt_allocator *a = &s->alloc;
        a->free_used = 0;
        a->gc_pending = 0;
        a->live = 0;
        a->sink = NULL;
        /* A list of active cells never holds more than the cells the budget can pay for. */
        uint64_t max_cells = arena_bytes / (s->cell_bytes ? s->cell_bytes : 4) + 1;
        ok = list_setup(rt, &s->list, sizeof(plm_rt_elem), max_cells, i);
        if (ok && (s->kind == PLM_RT_POINTER || s->kind == PLM_RT_DYNAMIC)) {
            uint64_t max_alloc = arena_bytes / s->alloc_bytes + 1;
            ok = list_setup(rt, &a->data, rt_align_up(s->alloc_bytes, 8), max_alloc, i);
            /* Room for an entry per cell the data list can ever carve (node_alloc relies on
             * it). */
            uint64_t carvable = (uint64_t)a->data.max_chunks << a->data.log2_chunk_elems;
            ok = ok && list_setup(rt, &a->free, sizeof(uint8_t *), carvable, i) &&
                 list_setup(rt, &a->recycled, sizeof(uint8_t *), carvable, i);
            if (ok) {
                a->sink = (uint8_t *)plm_rt_arena_alloc(rt, s->alloc_bytes, 64, i);
                ok = a->sink != NULL;
            }
        }
    }
    if (ok) {
        rt->value_sink = (uint8_t *)plm_rt_arena_alloc(rt, 64, 64, 0);
        rt->root = (uint8_t *)plm_rt_arena_alloc(rt, rt->snodes[0].container_bytes, 64, 0);
        ok = rt->value_sink && rt->root;
    }
    for (int32_t i = 0; i < rt->num_snodes && ok; i++) {
        plm_rt_snode *s = &rt->snodes[i];
        s->bg_container = NULL;
        if (!s->is_leaf || s->kind != PLM_RT_DENSE || !s->inline_data)
            continue;
        s->bg_container = (uint8_t *)plm_rt_arena_alloc(rt, s->container_bytes, 64, i);
        ok = s->bg_container != NULL;
        if (ok)
            plm_rt__fill_container(rt, i, s->bg_container);
    }
    if (!ok) {
        if (needed)
            *needed = rt->error_needed;
        return NULL;
    }
    plm_rt__fill_container(rt, 0, rt->root);
    if (needed)
        *needed = rt->used;
    rt->magic = PLM_RT_MAGIC;
    return rt;
}
