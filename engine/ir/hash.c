/* Structural identity of a task: a stream of 64-bit words describing everything that defines
 * its behaviour (operands by pre-order number), hashed or compared word by word. */
#include "engine/ir/ir_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct words {
    uint64_t *w;
    size_t n, cap;
    int failed;
} words;

static void put(words *ws, uint64_t v)
{
    if (ws->failed)
        return;
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? ws->cap * 2 : 256;
        uint64_t *w = realloc(ws->w, cap * sizeof *w);
        if (!w) {
            ws->failed = 1;
            return;
        }
        ws->w = w;
        ws->cap = cap;
    }
    ws->w[ws->n++] = v;
}

static void put_block(words *ws, const ir_block *b)
{
    for (const ir_stmt *s = b->first; s; s = s->next) {
        uint64_t fbits;
        memcpy(&fbits, &s->fval, sizeof fbits);
        put(ws, (uint64_t)s->op | (uint64_t)s->ty << 8 | (uint64_t)s->sub << 16 |
                    (uint64_t)s->nargs << 24 | (uint64_t)s->comp << 32 |
                    (uint64_t)s->level << 40 | (uint64_t)s->activate << 48 |
                    (uint64_t)s->parallel << 56);
        put(ws, (uint64_t)s->field | (uint64_t)s->index << 16);
        put(ws, s->demoted);
        put(ws, (uint64_t)s->ival);
        put(ws, fbits);
        for (int i = 0; i < s->nargs; i++)
            put(ws, s->arg[i] ? s->arg[i]->id : ~0ull);
        if (s->loop)
            put(ws, s->loop->id);
        if (s->body) {
            put(ws, 0xb10cull);
            put_block(ws, s->body);
            put(ws, 0xe15eull);
            if (s->els)
                put_block(ws, s->els);
            put(ws, 0xe2dull);
        }
    }
}

static void put_bytes(words *ws, const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc = acc << 8 | c[i];
        if (i % 8 == 7) {
            put(ws, acc);
            acc = 0;
        }
    }
    put(ws, acc);
}

/* family: leave out where each field sits in its tree's cells (place_offset), so one kernel
 * launched on fields placed side by side in one tree streams alike. */
static int stream(ir_task *t, words *ws, int family)
{
    ir_task_number(t);
    put(ws, (uint64_t)t->kind | (uint64_t)t->field << 8 | (uint64_t)t->level << 24);
    put(ws, t->nfields);
    for (uint32_t i = 0; i < t->nfields; i++) {
        const ir_field_info *f = &t->fields[i];
        /* names do not change behaviour; the layout does */
        put(ws, (uint64_t)f->elem | (uint64_t)f->components << 8 | (uint64_t)f->dim << 16 |
                    (uint64_t)f->nlevels << 24);
        /* the geometry too (ir_geom): code folds it in */
        put(ws, f->place_known);
        put(ws, family ? 0 : f->place_offset);
        put(ws, f->place_stride);
        /* which earlier slot shares the tree (code differs), not the engine's key */
        put(ws, ir_tree_slot(t, i));
        for (int l = 0; l < f->nlevels && l < IR_MAX_LEVELS; l++)
            put_bytes(ws, &f->levels[l], sizeof f->levels[l]);
    }
    put(ws, t->nargs);
    put_bytes(ws, t->arg_types, t->nargs);
    put(ws, t->gtmp_bytes);
    put_block(ws, t->body);
    return ws->failed ? -1 : 0;
}

static uint64_t hash_of(ir_task *t, int family)
{
    words ws = {0};
    uint64_t h = 0x9e3779b97f4a7c15ull;
    if (stream(t, &ws, family) == 0) {
        for (size_t i = 0; i < ws.n; i++) {
            /* splitmix-style mixing of each word into the running state */
            uint64_t z = h ^ (ws.w[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            h = z ^ (z >> 31);
        }
    } else {
        h = 0; /* out of memory: a hash that never matches a real one is not available, so
                * fall back to a constant; ir_task_equal still tells tasks apart */
    }
    free(ws.w);
    return h;
}

uint64_t ir_task_hash(ir_task *t) { return hash_of(t, 0); }
uint64_t ir_task_family_hash(ir_task *t) { return hash_of(t, 1); }

int ir_task_equal(ir_task *a, ir_task *b)
{
    words wa = {0}, wb = {0};
    int eq = stream(a, &wa, 0) == 0 && stream(b, &wb, 0) == 0 && wa.n == wb.n &&
             memcmp(wa.w, wb.w, wa.n * sizeof *wa.w) == 0;
    free(wa.w);
    free(wb.w);
    return eq;
}
