/* A bump arena per task: chunks of at least 16 KiB, freed together. Statements are never freed
 * one by one; a task's passes rarely drop more than they keep. */
#include "engine/ir/ir_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct ir_chunk {
    struct ir_chunk *next;
    size_t used, cap;
    max_align_t data[];
} ir_chunk;

struct ir_arena {
    ir_chunk *head;
    size_t bytes;
};

ir_arena *ir_arena_new(void)
{
    return calloc(1, sizeof(ir_arena));
}

void ir_arena_free(ir_arena *a)
{
    if (!a)
        return;
    ir_chunk *c = a->head;
    while (c) {
        ir_chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void *ir_arena_alloc(ir_arena *a, size_t bytes)
{
    const size_t align = sizeof(max_align_t);
    bytes = (bytes + align - 1) / align * align;
    ir_chunk *c = a->head;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = bytes > 16384 ? bytes : 16384;
        c = malloc(sizeof(ir_chunk) + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        a->bytes += sizeof(ir_chunk) + cap;
    }
    void *p = (char *)c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

size_t ir_arena_bytes(const ir_arena *a)
{
    return a ? a->bytes : 0;
}
