/* Small helpers of the SFG: growable arrays, error text, a clock, and a hash map keyed by two
 * 64-bit words (IR hashes, state ids). */
#include "engine/sfg/sfg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sfg_reserve(void **p, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap)
        return SFG_OK;
    uint64_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    if (ncap > UINT32_MAX)
        return SFG_ENOMEM;
    void *np = realloc(*p, (size_t)ncap * elem);
    if (!np)
        return SFG_ENOMEM;
    *p = np;
    *cap = (uint32_t)ncap;
    return SFG_OK;
}

void sfg_set_error(char *buf, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, SFG_ERR_MAX, fmt, ap);
    va_end(ap);
}

double sfg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* splitmix64's finalizer: spreads keys that differ in few bits (small ids) over the table. */
uint64_t sfg_mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

struct sfg_map_slot {
    uint64_t k0, k1, v;
    uint32_t used;
};

static uint32_t map_home(uint64_t k0, uint64_t k1, uint32_t cap) {
    return (uint32_t)(sfg_mix64(k0 ^ sfg_mix64(k1 + 0x9e3779b97f4a7c15ull)) & (cap - 1));
}

static int map_grow(sfg_map *m) {
    uint32_t ncap = m->cap ? m->cap * 2 : 64;
    if (ncap < m->cap)
        return SFG_ENOMEM;
    struct sfg_map_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return SFG_ENOMEM;
    for (uint32_t i = 0; i < m->cap; i++) {
        struct sfg_map_slot *s = &m->slot[i];
        if (!s->used)
            continue;
        uint32_t h = map_home(s->k0, s->k1, ncap);
        while (ns[h].used)
            h = (h + 1) & (ncap - 1);
        ns[h] = *s;
    }
    free(m->slot);
    m->slot = ns;
    m->cap = ncap;
    return SFG_OK;
}

int sfg_map_put(sfg_map *m, uint64_t k0, uint64_t k1, uint64_t v) {
    /* keep the load under 1/2 so probe chains stay short */
    if ((uint64_t)(m->n + 1) * 2 > m->cap) {
        int rc = map_grow(m);
        if (rc)
            return rc;
    }
    uint32_t h = map_home(k0, k1, m->cap);
    while (m->slot[h].used) {
        if (m->slot[h].k0 == k0 && m->slot[h].k1 == k1) {
            m->slot[h].v = v;
            return SFG_OK;
        }
        h = (h + 1) & (m->cap - 1);
    }
    m->slot[h].k0 = k0;
    m->slot[h].k1 = k1;
    m->slot[h].v = v;
    m->slot[h].used = 1;
    m->n++;
    return SFG_OK;
}

int sfg_map_get(const sfg_map *m, uint64_t k0, uint64_t k1, uint64_t *v) {
    if (!m->cap)
        return 0;
    uint32_t h = map_home(k0, k1, m->cap);
    while (m->slot[h].used) {
        if (m->slot[h].k0 == k0 && m->slot[h].k1 == k1) {
            *v = m->slot[h].v;
            return 1;
        }
        h = (h + 1) & (m->cap - 1);
    }
    return 0;
}

void sfg_map_clear(sfg_map *m) {
    if (m->cap)
        memset(m->slot, 0, (size_t)m->cap * sizeof *m->slot);
    m->n = 0;
}

void sfg_map_free(sfg_map *m) {
    free(m->slot);
    m->slot = NULL;
    m->cap = m->n = 0;
}

uint32_t sfg_meta_find(const sfg_task_meta *m, sfg_state state) {
    uint32_t lo = 0, hi = m->n_access;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->access[mid].state < state)
            lo = mid + 1;
        else if (m->access[mid].state > state)
            hi = mid;
        else
            return mid;
    }
    return SFG_NONE;
}
