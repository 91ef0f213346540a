/* arena.c — bump allocation for one compilation: the AST, names, tokens and diagnostics are
 * all freed together by pk_arena_free(). Also the small growable helpers built on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

typedef struct pk_chunk {
    struct pk_chunk *next;
    size_t size, used;
    max_align_t data[];
} pk_chunk;

struct pk_arena {
    pk_chunk *head;
};

enum { CHUNK_BYTES = 64 * 1024 };

pk_arena *pk_arena_new(void) { return calloc(1, sizeof(pk_arena)); }

void pk_arena_free(pk_arena *a) {
    if (!a)
        return;
    pk_chunk *ch = a->head;
    while (ch) {
        pk_chunk *next = ch->next;
        free(ch);
        ch = next;
    }
    free(a);
}

void *pk_arena_alloc(pk_arena *a, size_t size) {
    size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size == 0)
        size = align;
    pk_chunk *ch = a->head;
    if (!ch || ch->size - ch->used < size) {
        size_t cap = size > CHUNK_BYTES ? size : CHUNK_BYTES;
        ch = malloc(sizeof(pk_chunk) + cap);
        if (!ch)
            return NULL;
        ch->size = cap;
        ch->used = 0;
        /* A big block goes behind the current chunk so the current one keeps filling. */
        if (a->head && cap > CHUNK_BYTES) {
            ch->next = a->head->next;
            a->head->next = ch;
        } else {
            ch->next = a->head;
            a->head = ch;
        }
    }
    void *p = (char *)ch->data + ch->used;
    ch->used += size;
    memset(p, 0, size);
    return p;
}

void *pk_alloc(pk_ctx *c, size_t size) {
    void *p = pk_arena_alloc(c->arena, size);
    if (!p)
        longjmp(c->oom, 1);
    return p;
}

char *pk_strndup(pk_ctx *c, const char *s, size_t n) {
    char *p = pk_alloc(c, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void pk_vec_push(pk_ctx *c, void ***items, uint32_t *n, uint32_t *cap, void *item) {
    if (*n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        void **p = pk_alloc(c, ncap * sizeof(void *));
        if (*n)
            memcpy(p, *items, *n * sizeof(void *));
        *items = p;
        *cap = ncap;
    }
    (*items)[(*n)++] = item;
}

void pk_buf_putn(pk_ctx *c, pk_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 256;
        while (ncap < b->len + n + 1)
            ncap *= 2;
        char *p = pk_alloc(c, ncap);
        if (b->len)
            memcpy(p, b->data, b->len);
        b->data = p;
        b->cap = ncap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void pk_buf_puts(pk_ctx *c, pk_buf *b, const char *s) { pk_buf_putn(c, b, s, strlen(s)); }

void pk_buf_printf(pk_ctx *c, pk_buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        pk_buf_putn(c, b, small, (size_t)n);
        return;
    }
    char *big = pk_alloc(c, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pk_buf_putn(c, b, big, (size_t)n);
}

pk_name *pk_intern(pk_ctx *c, const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    if (c->names_count * 2 >= c->names_cap) {
        uint32_t ncap = c->names_cap ? c->names_cap * 2 : 1024;
        pk_name **tab = pk_alloc(c, ncap * sizeof(pk_name *));
        for (uint32_t i = 0; i < c->names_cap; i++) {
            pk_name *e = c->names[i];
            while (e) {
                pk_name *next = e->next;
                uint32_t k = e->hash & (ncap - 1);
                e->next = tab[k];
                tab[k] = e;
                e = next;
            }
        }
        c->names = tab;
        c->names_cap = ncap;
    }
    uint32_t k = h & (c->names_cap - 1);
    for (pk_name *e = c->names[k]; e; e = e->next)
        if (e->hash == h && e->len == n && memcmp(e->str, s, n) == 0)
            return e;
    pk_name *e = pk_alloc(c, sizeof *e);
    e->str = pk_strndup(c, s, n);
    e->len = (uint32_t)n;
    e->hash = h;
    e->next = c->names[k];
    c->names[k] = e;
    c->names_count++;
    return e;
}
