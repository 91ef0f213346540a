/* Bound tasks: what the SFG bank stores. A task alone is not enough for the SFG: the same
 * offloaded task launched on other fields touches other states, so the binding of its slots
 * (and of its global temporaries) is part of its identity and of its hash. */
#include "engine/passes/passes_internal.h"

#include <stdlib.h>
#include <string.h>

passes_bound *passes_bound_adopt(ir_task *task, const uint32_t *field_id, uint32_t nfields,
                                 uint32_t gtmp_state)
{
    if (!task || nfields != task->nfields || nfields > PASSES_MAX_SLOTS ||
        (nfields && !field_id)) {
        ir_task_free(task);
        return NULL;
    }
    if (!task->has_meta && pass_compute_meta(task) != 0) {
        ir_task_free(task);
        return NULL;
    }
    passes_bound *b = calloc(1, sizeof *b);
    uint32_t *ids = malloc((nfields ? nfields : 1) * sizeof *ids);
    if (!b || !ids) {
        free(b);
        free(ids);
        ir_task_free(task);
        return NULL;
    }
    if (nfields)
        memcpy(ids, field_id, nfields * sizeof *ids);
    b->task = task;
    b->nfields = nfields;
    b->field_id = ids;
    b->gtmp_state = gtmp_state;
    return b;
}

passes_bound *passes_bound_create(const ir_task *task, const uint32_t *field_id,
                                  uint32_t nfields, uint32_t gtmp_state)
{
    if (!task)
        return NULL;
    return passes_bound_adopt(pass_clone(task), field_id, nfields, gtmp_state);
}

void passes_bound_free(passes_bound *b)
{
    if (!b)
        return;
    ir_task_free(b->task);
    free(b->field_id);
    free(b->meta_buf);
    free(b);
}

passes_bound *passes_bound_clone(const passes_bound *b)
{
    if (!b)
        return NULL;
    return passes_bound_create(b->task, b->field_id, b->nfields, b->gtmp_state);
}

uint32_t pass_tree_id(const passes_bound *b, uint32_t slot)
{
    uint32_t key = b->task->fields[slot].tree_key;
    return key ? key - 1 : b->field_id[slot];
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

typedef struct gtmp_hash {
    uint64_t h;
    int used;
} gtmp_hash;

/* The gtmp argument number decides which buffer a fused task touches; the IR hash may not
 * cover it, so it is mixed in here. */
static int hash_gtmp(ir_stmt *s, void *ud)
{
    gtmp_hash *g = ud;
    if (s->op == IR_GTMP_PTR) {
        g->h = mix(g->h, s->index);
        g->used = 1;
    }
    return 0;
}

uint64_t passes_bound_hash(const passes_bound *b)
{
    uint64_t h = mix(ir_task_hash(b->task), b->nfields);
    for (uint32_t i = 0; i < b->nfields; i++)
        h = mix(h, b->field_id[i]);
    gtmp_hash g = {h, 0};
    ir_walk(b->task->body, hash_gtmp, &g);
    /* two specs' identical tasks share a bank entry unless they touch their own buffers */
    return g.used ? mix(g.h, b->gtmp_state) : g.h;
}

int pass_uses_gtmp(const ir_task *t)
{
    gtmp_hash g = {0, 0};
    ir_walk(t->body, hash_gtmp, &g);
    return g.used;
}
