/* diag.c — collecting diagnostics and rendering them as
 *   file:line:col: error: message
 *   <the source line>
 *   <spaces and tabs up to the column>^
 * Tabs in the source line are repeated in the caret line so the caret stays under the
 * character whatever the terminal's tab width; columns count characters (UTF-8 sequences
 * are one column). */
#include <stdio.h>
#include <string.h>

#include "engine/lang/lang_internal.h"

enum { MAX_DIAGS = 200 };

static void add(pk_ctx *c, int sev, pk_loc loc, const char *fmt, va_list ap) {
    if (c->ndiags >= MAX_DIAGS)
        return;
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *msg;
    if ((size_t)n < sizeof small) {
        msg = pk_strndup(c, small, (size_t)n);
    } else {
        msg = pk_alloc(c, (size_t)n + 1);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
    }
    if (c->ndiags == c->cap_diags) {
        uint32_t ncap = c->cap_diags ? c->cap_diags * 2 : 16;
        pk_diag *d = pk_alloc(c, ncap * sizeof *d);
        if (c->ndiags)
            memcpy(d, c->diags, c->ndiags * sizeof *d);
        c->diags = d;
        c->cap_diags = ncap;
    }
    pk_diag *d = &c->diags[c->ndiags++];
    d->severity = sev;
    d->loc = loc;
    d->message = msg;
}

void pk_error(pk_ctx *c, pk_loc loc, const char *fmt, ...) {
    c->note_ok = false;
    if (c->fatal)
        return; /* an error already stopped the compilation */
    c->nerrors++;
    if ((int)c->nerrors >= c->max_errors)
        c->fatal = true;
    if (c->ndiags >= MAX_DIAGS)
        return;
    c->note_ok = true;
    va_list ap;
    va_start(ap, fmt);
    add(c, PK_SEV_ERROR, loc, fmt, ap);
    va_end(ap);
}

void pk_warning(pk_ctx *c, pk_loc loc, const char *fmt, ...) {
    c->note_ok = false;
    /* Warnings leave room for the errors and their notes. */
    if (c->fatal || (c->opt && c->opt->no_warnings) || c->ndiags >= MAX_DIAGS / 2)
        return;
    c->note_ok = true;
    va_list ap;
    va_start(ap, fmt);
    add(c, PK_SEV_WARNING, loc, fmt, ap);
    va_end(ap);
}

void pk_note(pk_ctx *c, pk_loc loc, const char *fmt, ...) {
    if (!c->note_ok)
        return; /* the diagnostic it explains was dropped */
    va_list ap;
    va_start(ap, fmt);
    add(c, PK_SEV_NOTE, loc, fmt, ap);
    va_end(ap);
}

static const pk_source *find_source(pk_ctx *c, const char *file) {
    for (int i = 0; i < c->nsources; i++)
        if (c->sources[i].name == file)
            return &c->sources[i];
    return NULL;
}

/* Start of 1-based line `line`, or NULL. Scans from the start: diagnostics are few. */
static const char *line_start(const char *text, size_t len, uint32_t line, const char **end) {
    const char *p = text, *e = text + len;
    for (uint32_t l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        if (!nl)
            return NULL;
        p = nl + 1;
    }
    const char *q = memchr(p, '\n', (size_t)(e - p));
    *end = q ? q : e;
    if (*end > p && (*end)[-1] == '\r')
        (*end)--;
    return p;
}

void pk_excerpt(const char *text, size_t len, uint32_t line, uint32_t col, pk_put_fn put,
                void *ud) {
    const char *end = NULL;
    const char *p = line_start(text, len, line, &end);
    if (!p)
        return;
    /* The line, with control characters shown as spaces so the terminal is not disturbed; the
     * caret line's spaces and tabs follow it character by character. */
    uint32_t c = 1;
    for (const char *q = p; q < end; q++) {
        unsigned char ch = (unsigned char)*q;
        char out = (ch < 0x20 && ch != '\t') || ch == 0x7f ? ' ' : (char)ch;
        put(ud, &out, 1);
    }
    put(ud, "\n", 1);
    for (const char *q = p; q < end && c < col; q++) {
        unsigned char ch = (unsigned char)*q;
        if ((ch & 0xC0) == 0x80)
            continue; /* continuation byte: same column */
        put(ud, ch == '\t' ? "\t" : " ", 1);
        c++;
    }
    for (; c < col; c++) /* position just past the end of the line */
        put(ud, " ", 1);
    put(ud, "^", 1);
}

typedef struct buf_put {
    pk_ctx *c;
    pk_buf *b;
} buf_put;

static void put_buf(void *ud, const char *s, size_t n) {
    buf_put *bp = ud;
    pk_buf_putn(bp->c, bp->b, s, n);
}

static void render_one(pk_ctx *c, pk_buf *b, const pk_diag *d) {
    static const char *const sev[] = {"error", "warning", "note"};
    const char *file = d->loc.file ? d->loc.file : "<input>";
    if (d->loc.line == 0) { /* about the whole file */
        pk_buf_printf(c, b, "%s: %s: %s\n", file, sev[d->severity], d->message);
        return;
    }
    pk_buf_printf(c, b, "%s:%u:%u: %s: %s\n", file, d->loc.line, d->loc.col, sev[d->severity],
                  d->message);
    const pk_source *s = find_source(c, d->loc.file);
    if (!s)
        return;
    buf_put bp = {c, b};
    size_t before = b->len;
    pk_excerpt(s->text, s->len, d->loc.line, d->loc.col, put_buf, &bp);
    if (b->len != before)
        pk_buf_puts(c, b, "\n");
}

const char *pk_render_diags(pk_ctx *c, int errors_only) {
    pk_buf b = {0};
    uint32_t skipped = 0;
    int parent = PK_SEV_ERROR; /* a note goes with the error or warning before it */
    for (uint32_t i = 0; i < c->ndiags; i++) {
        const pk_diag *d = &c->diags[i];
        if (d->severity != PK_SEV_NOTE)
            parent = d->severity;
        if (errors_only && parent != PK_SEV_ERROR) {
            skipped += d->severity == PK_SEV_WARNING;
            continue;
        }
        render_one(c, &b, d);
    }
    if (c->fatal && (int)c->nerrors >= c->max_errors)
        pk_buf_printf(c, &b, "too many errors; stopped after %u\n", c->nerrors);
    if (skipped)
        pk_buf_printf(c, &b, "(and %u warning%s, not shown while there are errors)\n", skipped,
                      skipped == 1 ? "" : "s");
    return b.data ? b.data : "";
}
