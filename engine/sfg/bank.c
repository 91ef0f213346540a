/* The IR bank: every IR the queue has seen, by hash, and the results of the IR operations cached
 * by the hashes of their inputs, so a kernel launched a thousand times is fused, demoted or
 * stripped of dead stores once. Metadata is computed once per hash. */
#include "engine/sfg/sfg_internal.h"

#include <stdlib.h>
#include <string.h>

#define DECLINED UINT64_MAX

sfg_bank *sfg_bank_create(const sfg_ir_ops *ops) {
    if (!ops || !ops->hash || !ops->meta || !ops->fuse || !ops->demote_activation ||
        !ops->remove_stores || !ops->free_ir)
        return NULL;
    sfg_bank *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->ops = *ops;
    return b;
}

void sfg_bank_destroy(sfg_bank *b) {
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n_entry; i++) {
        b->ops.free_ir(b->ops.ud, b->entry[i].ir);
        if (b->entry[i].meta) {
            free((void *)b->entry[i].meta->access);
            free(b->entry[i].meta);
        }
    }
    free(b->entry);
    sfg_map_free(&b->by_hash);
    sfg_map_free(&b->fuse_cache);
    sfg_map_free(&b->demote_cache);
    sfg_map_free(&b->dse_cache);
    free(b);
}

const char *sfg_bank_error(const sfg_bank *b) { return b ? b->err : "no bank"; }

sfg_bank_stats sfg_bank_get_stats(const sfg_bank *b) { return b->stats; }

static uint32_t find_entry(const sfg_bank *b, uint64_t hash) {
    uint64_t v;
    return sfg_map_get(&b->by_hash, hash, 0, &v) ? (uint32_t)v : SFG_NONE;
}

/* Adds `ir` (owned from now on) and returns its entry index through *idx. */
static int intern(sfg_bank *b, void *ir, uint32_t *idx) {
    if (!ir) {
        sfg_set_error(b->err, "sfg bank: NULL IR");
        return SFG_EINVAL;
    }
    b->stats.interned++;
    uint64_t hash = b->ops.hash(b->ops.ud, ir);
    uint32_t e = find_entry(b, hash);
    if (e != SFG_NONE) {
        if (b->entry[e].ir != ir)
            b->ops.free_ir(b->ops.ud, ir);
        *idx = e;
        return SFG_OK;
    }
    if (sfg_reserve((void **)&b->entry, &b->cap_entry, b->n_entry + 1, sizeof *b->entry) ||
        sfg_map_put(&b->by_hash, hash, 0, b->n_entry)) {
        b->ops.free_ir(b->ops.ud, ir);
        sfg_set_error(b->err, "sfg bank: out of memory");
        return SFG_ENOMEM;
    }
    b->entry[b->n_entry] = (sfg_bank_entry){.hash = hash, .ir = ir, .meta = NULL};
    *idx = b->n_entry++;
    b->stats.irs = b->n_entry;
    return SFG_OK;
}

static sfg_ir handle(const sfg_bank *b, uint32_t e) {
    return (sfg_ir){.hash = b->entry[e].hash, .ir = b->entry[e].ir};
}

int sfg_bank_intern(sfg_bank *b, void *ir, sfg_ir *out) {
    uint32_t e;
    int rc = intern(b, ir, &e);
    if (rc)
        return rc;
    *out = handle(b, e);
    return SFG_OK;
}

static int held(sfg_bank *b, sfg_ir ir, uint32_t *e, const char *who) {
    *e = find_entry(b, ir.hash);
    if (*e == SFG_NONE || b->entry[*e].ir != ir.ir) {
        sfg_set_error(b->err, "%s: IR %016llx is not held by this bank", who,
                      (unsigned long long)ir.hash);
        return SFG_EINVAL;
    }
    return SFG_OK;
}

static int cmp_access(const void *x, const void *y) {
    const sfg_access *a = x, *c = y;
    return a->state < c->state ? -1 : a->state > c->state;
}

/* Copies and checks what ops->meta filled: sorted by state, each state once. */
static int copy_meta(sfg_bank *b, uint64_t hash, const sfg_task_meta *m, sfg_task_meta **out) {
    if ((unsigned)m->type >= SFG_TASK_TYPE_COUNT) {
        sfg_set_error(b->err, "sfg metadata of IR %016llx: bad task type %d",
                      (unsigned long long)hash, (int)m->type);
        return SFG_EINVAL;
    }
    if (m->type == SFG_RANGE_FOR && !(m->flags & SFG_TASK_DYNAMIC_RANGE) && m->begin > m->end) {
        sfg_set_error(b->err, "sfg metadata of IR %016llx: range [%lld, %lld) is reversed",
                      (unsigned long long)hash, (long long)m->begin, (long long)m->end);
        return SFG_EINVAL;
    }
    if (m->n_access && !m->access) {
        sfg_set_error(b->err, "sfg metadata of IR %016llx: %u accesses but no array",
                      (unsigned long long)hash, m->n_access);
        return SFG_EINVAL;
    }
    sfg_task_meta *c = calloc(1, sizeof *c);
    sfg_access *acc = m->n_access ? malloc((size_t)m->n_access * sizeof *acc) : NULL;
    if (!c || (m->n_access && !acc)) {
        free(c);
        free(acc);
        sfg_set_error(b->err, "sfg bank: out of memory");
        return SFG_ENOMEM;
    }
    *c = *m;
    if (m->n_access)
        memcpy(acc, m->access, (size_t)m->n_access * sizeof *acc);
    if (m->n_access)
        qsort(acc, m->n_access, sizeof *acc, cmp_access);
    for (uint32_t i = 0; i < m->n_access; i++) {
        const char *bad = NULL;
        if (!(acc[i].flags & (SFG_ACC_READ | SFG_ACC_WRITE)))
            bad = "neither READ nor WRITE";
        else if (i && acc[i].state == acc[i - 1].state)
            bad = "listed twice";
        if (bad) {
            sfg_set_error(b->err, "sfg metadata of IR %016llx: state %u of kind %d %s",
                          (unsigned long long)hash, SFG_STATE_ID(acc[i].state),
                          (int)SFG_STATE_KIND(acc[i].state), bad);
            free(c);
            free(acc);
            return SFG_EINVAL;
        }
    }
    c->access = acc;
    *out = c;
    return SFG_OK;
}

static int meta_of(sfg_bank *b, uint32_t e, const sfg_task_meta **out) {
    if (b->entry[e].meta) {
        b->stats.cache_hits++;
        *out = b->entry[e].meta;
        return SFG_OK;
    }
    b->stats.cache_misses++;
    sfg_task_meta m;
    memset(&m, 0, sizeof m);
    if (b->ops.meta(b->ops.ud, b->entry[e].ir, &m)) {
        sfg_set_error(b->err, "sfg bank: the engine could not compute metadata of IR %016llx",
                      (unsigned long long)b->entry[e].hash);
        return SFG_EOP;
    }
    int rc = copy_meta(b, b->entry[e].hash, &m, &b->entry[e].meta);
    if (rc)
        return rc;
    *out = b->entry[e].meta;
    return SFG_OK;
}

int sfg_bank_meta(sfg_bank *b, sfg_ir ir, const sfg_task_meta **out) {
    uint32_t e;
    int rc = held(b, ir, &e, "sfg_bank_meta");
    return rc ? rc : meta_of(b, e, out);
}

/* Looks a cached result up; returns 1 with *rc and *out (and *aux) set when cached. */
static int cached(sfg_bank *b, const sfg_map *m, uint64_t k0, uint64_t k1, sfg_ir *out,
                  uint64_t *aux, int *rc) {
    uint64_t v;
    if (!sfg_map_get(m, k0, k1, &v))
        return 0;
    b->stats.cache_hits++;
    if (v == DECLINED) {
        *rc = SFG_EOP;
        return 1;
    }
    *out = handle(b, (uint32_t)(v >> 8));
    if (aux)
        *aux = v & 0xff;
    *rc = SFG_OK;
    return 1;
}

/* Stores the op's result (NULL: declined) in the cache and the bank. */
static int remember(sfg_bank *b, sfg_map *m, uint64_t k0, uint64_t k1, void *res, uint64_t aux,
                    sfg_ir *out) {
    b->stats.cache_misses++;
    if (!res) {
        if (sfg_map_put(m, k0, k1, DECLINED))
            return SFG_ENOMEM;
        return SFG_EOP;
    }
    uint32_t e;
    int rc = intern(b, res, &e);
    if (rc)
        return rc;
    if (sfg_map_put(m, k0, k1, ((uint64_t)e << 8) | aux))
        return SFG_ENOMEM;
    *out = handle(b, e);
    return SFG_OK;
}

/* The fuse cache's second key: c's hash, and the argument pattern when any slot matched. */
static uint64_t fuse_key(sfg_ir c, const sfg_arg_match *m) {
    uint64_t k = c.hash;
    if (!m)
        return k;
    for (uint32_t i = 0; i < m->n; i++)
        if (m->same[i] >= 0)
            k = sfg_mix64(k ^ ((uint64_t)i << 32 | (uint32_t)m->same[i]));
    return k;
}

int sfg_bank_fuse(sfg_bank *b, sfg_ir a, sfg_ir c, const sfg_arg_match *m, sfg_ir *out) {
    uint32_t ea, ec;
    int rc = held(b, a, &ea, "sfg_bank_fuse");
    if (!rc)
        rc = held(b, c, &ec, "sfg_bank_fuse");
    if (rc)
        return rc;
    uint64_t k = fuse_key(c, m);
    if (cached(b, &b->fuse_cache, a.hash, k, out, NULL, &rc))
        return rc;
    void *res = b->ops.fuse(b->ops.ud, a.ir, c.ir, m);
    return remember(b, &b->fuse_cache, a.hash, k, res, 0, out);
}

int sfg_bank_demote(sfg_bank *b, sfg_ir ir, uint32_t snode, sfg_ir *out) {
    uint32_t e;
    int rc = held(b, ir, &e, "sfg_bank_demote");
    if (rc)
        return rc;
    if (cached(b, &b->demote_cache, ir.hash, snode, out, NULL, &rc))
        return rc;
    void *res = b->ops.demote_activation(b->ops.ud, ir.ir, snode);
    return remember(b, &b->demote_cache, ir.hash, snode, res, 0, out);
}

int sfg_bank_remove_stores(sfg_bank *b, sfg_ir ir, sfg_state state, sfg_ir *out, int *empty) {
    uint32_t e;
    int rc = held(b, ir, &e, "sfg_bank_remove_stores");
    if (rc)
        return rc;
    uint64_t aux = 0;
    if (cached(b, &b->dse_cache, ir.hash, state, out, &aux, &rc)) {
        *empty = (int)aux;
        return rc;
    }
    int emp = 0;
    void *res = b->ops.remove_stores(b->ops.ud, ir.ir, state, &emp);
    rc = remember(b, &b->dse_cache, ir.hash, state, res, emp ? 1 : 0, out);
    *empty = emp ? 1 : 0;
    return rc;
}
