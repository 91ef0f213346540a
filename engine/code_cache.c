/* Open-addressing table of compiled tasks: launches look it up once per task per batch. */
#include "engine/code_cache.h"

#include <stdlib.h>

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key & (cap - 1);
}

eng_code *code_cache_find(eng_code_cache *c, uint64_t key)
{
    if (!c->cap)
        return NULL;
    for (uint32_t i = slot_of(key, c->cap);; i = (i + 1) & (c->cap - 1)) {
        eng_code *e = c->slots[i];
        if (!e)
            return NULL;
        if (e->key == key)
            return e;
    }
}

static int grow(eng_code_cache *c)
{
    uint32_t cap = c->cap ? c->cap * 2 : 64;
    eng_code **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < c->cap; i++) {
        eng_code *e = c->slots[i];
        if (!e)
            continue;
        uint32_t j = slot_of(e->key, cap);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = e;
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return 0;
}

eng_code *code_cache_add(eng_code_cache *c, uint64_t key)
{
    /* Keep the load under one half so probes stay short. */
    if ((c->count + 1) * 2 > c->cap && grow(c) != 0)
        return NULL;
    eng_code *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->key = key;
    uint32_t i = slot_of(key, c->cap);
    while (c->slots[i])
        i = (i + 1) & (c->cap - 1);
    c->slots[i] = e;
    c->count++;
    return e;
}

void code_cache_free(eng_code_cache *c)
{
    for (uint32_t i = 0; i < c->cap; i++)
        if (c->slots[i]) {
            ir_task_free(c->slots[i]->lowered);
            free(c->slots[i]);
        }
    free(c->slots);
    c->slots = NULL;
    c->cap = c->count = 0;
}
