/* code_cache.h — compiled code of tasks, by the hash of the bound task the SFG hands the
 * executor. Entries live as long as the context (the JIT keeps their code). One thread (the
 * context's). */
#ifndef PLUME_ENGINE_CODE_CACHE_H
#define PLUME_ENGINE_CODE_CACHE_H

#include <stdint.h>

#include "engine/codegen/jit.h"
#include "engine/ir/ir.h"

typedef struct eng_code {
    uint64_t key;
    ir_task *lowered;  /* what was compiled (owned): kinds, slots, levels for the executor */
    void *fn[2];       /* entry point, and range_for's bounds function; NULL until the
                        * compile was waited on and succeeded */
    jit_result result;
} eng_code;

typedef struct eng_code_cache {
    eng_code **slots;  /* open addressing, power-of-two capacity */
    uint32_t cap, count;
} eng_code_cache;

eng_code *code_cache_find(eng_code_cache *c, uint64_t key);
/* A new entry for key (not present); NULL when out of memory. */
eng_code *code_cache_add(eng_code_cache *c, uint64_t key);
void code_cache_free(eng_code_cache *c);

#endif
