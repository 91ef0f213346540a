/* lang.c — pk_compile(): the standard library and the user's source are lexed and parsed into
 * one program, checked if the syntax is clean, verified, and the diagnostics rendered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

struct pk_result {
    pk_arena *arena;
    pk_program *program; /* NULL when there are errors */
    const char *text;
    const char *error_text; /* the errors alone (text itself when there are no warnings) */
    pk_diag *diags;
    uint32_t ndiags, nerrors;
    pk_source sources[2]; /* names and texts for pk_result_excerpt (copies in the arena) */
    int nsources;
};

const char *pk_stdlib_source(size_t *len) {
    if (len)
        *len = pk_stdlib_size;
    return (const char *)pk_stdlib_bytes;
}

static void parse_source(pk_ctx *c, const pk_source *s) {
    uint32_t n = 0;
    pk_token *toks = pk_lex(c, s, &n);
    if (!c->fatal)
        pk_parse(c, s, toks, n);
}

/* Position key of a diagnostic: file (in compile order), line, column. */
static uint64_t diag_key(const pk_ctx *c, const pk_diag *d) {
    uint64_t file = 0;
    for (int i = 0; i < c->nsources; i++)
        if (c->sources[i].name == d->loc.file)
            file = (uint64_t)i;
    return file << 56 | (uint64_t)(d->loc.line & 0xffffff) << 32 | d->loc.col;
}

/* Orders diagnostics by position (they are found stage by stage: lexer, parser, checker),
 * keeping each note right after the diagnostic it explains. Stable; n is small (capped). */
static void sort_diags(pk_ctx *c) {
    uint32_t n = c->ndiags, ngroups = 0;
    if (n < 2)
        return;
    uint32_t *start = pk_alloc(c, sizeof(uint32_t) * (n + 1));
    for (uint32_t i = 0; i < n; i++)
        if (c->diags[i].severity != PK_SEV_NOTE || i == 0)
            start[ngroups++] = i;
    start[ngroups] = n;
    uint32_t *order = pk_alloc(c, sizeof(uint32_t) * ngroups);
    for (uint32_t g = 0; g < ngroups; g++) {
        uint32_t j = g;
        uint64_t key = diag_key(c, &c->diags[start[g]]);
        while (j > 0 && diag_key(c, &c->diags[start[order[j - 1]]]) > key) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = g;
    }
    pk_diag *sorted = pk_alloc(c, sizeof(pk_diag) * n);
    uint32_t k = 0;
    for (uint32_t g = 0; g < ngroups; g++)
        for (uint32_t i = start[order[g]]; i < start[order[g] + 1]; i++)
            sorted[k++] = c->diags[i];
    c->diags = sorted;
}

static pk_result *compile(pk_ctx *cp, const char *file, const char *src, size_t len) {
    pk_ctx *c = cp;
    c->max_errors = c->opt->max_errors > 0 ? c->opt->max_errors : PK_DEFAULT_MAX_ERRORS;
    if (c->max_errors > 100)
        c->max_errors = 100;
    c->prog = pk_alloc(c, sizeof *c->prog);
    c->prog->arena = c->arena;
    pk_register_keywords(c);
    c->stdlib_file = pk_strndup(c, "stdlib.pk", 9);
    if (!file)
        file = "<input>";
    const char *fname = pk_strndup(c, file, strlen(file));
    if (!src)
        len = 0;

    if (!c->opt->no_stdlib) {
        pk_source *s = &c->sources[c->nsources++];
        s->name = c->stdlib_file;
        s->text = (const char *)pk_stdlib_bytes;
        s->len = pk_stdlib_size;
        s->is_stdlib = 1;
    }
    pk_source *user = &c->sources[c->nsources++];
    user->name = fname;
    user->text = src ? src : "";
    user->len = len;
    /* a file with old Mac line ends (a CR alone) reads as lines, not as one line whose first
     * comment runs to the end of the file: a copy with those CRs as LFs (CRLF stays) */
    if (src && len <= PK_MAX_SOURCE_BYTES) {
        const char *cr = memchr(src, '\r', len);
        while (cr && cr + 1 < src + len && cr[1] == '\n')
            cr = memchr(cr + 2, '\r', len - (size_t)(cr + 2 - src));
        if (cr) {
            char *t = pk_alloc(c, len + 1);
            memcpy(t, src, len);
            t[len] = 0;
            for (size_t i = 0; i < len; i++)
                if (t[i] == '\r' && (i + 1 == len || t[i + 1] != '\n'))
                    t[i] = '\n';
            user->text = t;
        }
    }

    if (len > PK_MAX_SOURCE_BYTES) {
        pk_loc at = {fname, 0, 0};
        pk_error(c, at, "the source is too large (%zu bytes; the limit is %d)", len,
                 PK_MAX_SOURCE_BYTES);
    } else {
        for (int i = 0; i < c->nsources && !c->fatal; i++)
            parse_source(c, &c->sources[i]);
        if (c->nerrors == 0)
            pk_check_program(c);
        char msg[256];
        if (c->nerrors == 0 && !pk_verify(c->prog, msg, sizeof msg)) {
            pk_loc at = {fname, 0, 0};
            pk_error(c, at, "internal error: %s", msg);
        }
    }

    sort_diags(c);
    pk_result *r = pk_alloc(c, sizeof *r);
    r->arena = c->arena;
    r->program = c->nerrors ? NULL : c->prog;
    r->diags = c->diags;
    r->ndiags = c->ndiags;
    r->nerrors = c->nerrors;
    for (int i = 0; i < c->nsources && i < 2; i++) {
        r->sources[i] = c->sources[i];
        if (c->sources[i].is_stdlib)
            continue;
        if (c->sources[i].len > PK_MAX_SOURCE_BYTES)
            r->sources[i].len = 0; /* refused unread */
        r->sources[i].text = pk_strndup(c, c->sources[i].text, r->sources[i].len);
    }
    r->nsources = c->nsources < 2 ? c->nsources : 2;
    r->text = pk_render_diags(c, 0);
    r->error_text = r->text;
    if (c->nerrors && c->nerrors < c->ndiags)
        r->error_text = pk_render_diags(c, 1);
    return r;
}

pk_result *pk_compile(const char *file, const char *src, size_t len, const pk_options *opt) {
    static const pk_options defaults = {0, 0, 0};
    pk_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->arena = pk_arena_new();
    c->opt = opt ? opt : &defaults;
    if (!c->arena) {
        free(c);
        return NULL;
    }
    pk_result *r = NULL;
    /* Out of memory anywhere below longjmps here; only `c` (not modified since) is used. */
    if (setjmp(c->oom) == 0)
        r = compile(c, file, src, len);
    else
        pk_arena_free(c->arena);
    free(c);
    return r;
}

int pk_result_ok(const pk_result *r) { return r && r->nerrors == 0; }
const pk_program *pk_result_program(const pk_result *r) { return r ? r->program : NULL; }
const char *pk_result_text(const pk_result *r) { return r ? r->text : ""; }
const char *pk_result_error_text(const pk_result *r) { return r ? r->error_text : ""; }
uint32_t pk_result_error_count(const pk_result *r) { return r ? r->nerrors : 0; }
uint32_t pk_result_diag_count(const pk_result *r) { return r ? r->ndiags : 0; }
const pk_diag *pk_result_diag(const pk_result *r, uint32_t i) {
    return r && i < r->ndiags ? &r->diags[i] : NULL;
}
typedef struct bounded {
    char *out;
    size_t n, at;
} bounded;

static void put_bounded(void *ud, const char *s, size_t len) {
    bounded *b = ud;
    for (size_t i = 0; i < len && b->at + 1 < b->n; i++)
        b->out[b->at++] = s[i];
}

int pk_result_excerpt(const pk_result *r, const char *file, uint32_t line, uint32_t col,
                      char *out, size_t n) {
    if (!out || n == 0)
        return -1;
    out[0] = 0;
    for (int i = 0; r && file && i < r->nsources; i++) {
        const pk_source *s = &r->sources[i];
        if (strcmp(s->name, file))
            continue;
        bounded b = {out, n, 0};
        pk_excerpt(s->text, s->len, line, col, put_bounded, &b);
        out[b.at] = 0;
        return b.at ? 0 : -1;
    }
    return -1;
}

void pk_result_free(pk_result *r) {
    if (r)
        pk_arena_free(r->arena);
}
