/* Statement -> word maps of the code generator (cg_map; cg_vmap and cg_smap are views of it in
 * cg_internal.h): open addressing on the statement's address, so the task is only read and no
 * field of a statement is borrowed for bookkeeping. One map belongs to one emitting thread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"

static size_t slot_of(const ir_stmt *s, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

/* Doubles the table (64 slots at first), keeping it at most half full. */
static int grow(cg_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    const ir_stmt **k = calloc(cap, sizeof *k);
    intptr_t *vals = calloc(cap, sizeof *vals);
    if (!k || !vals) {
        free(k);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(m->keys[i], cap);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int cg_map_put(cg_map *m, const ir_stmt *s, intptr_t v)
{
    if ((m->used + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    size_t j = slot_of(s, m->cap);
    while (m->keys[j] && m->keys[j] != s)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->used++;
    m->keys[j] = s;
    m->vals[j] = v;
    return 0;
}

intptr_t cg_map_get(const cg_map *m, const ir_stmt *s)
{
    if (!m->cap)
        return 0;
    for (size_t j = slot_of(s, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == s)
            return m->vals[j];
    return 0;
}

void cg_map_free(cg_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
