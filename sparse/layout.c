/* Layout text -> SNode geometry (plm_rt_config). Recursive descent over the grammar in layout.h;
 * every error names the 1-based column where the problem starts. */
#include "sparse/layout.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 15

typedef struct pnode {
    int kind, col;
    int num_axes, order[3];
    unsigned bits[3]; /* per axis x, y, z */
} pnode;

typedef struct pfield {
    char name[PLM_LAYOUT_NAME_MAX];
    int components, col;
} pfield;

typedef struct parser {
    const char *text;
    size_t pos;
    char *err;
    size_t errlen;
    int failed;
} parser;

static int fail(parser *p, size_t at, const char *fmt, ...)
{
    if (!p->failed) {
        int n = snprintf(p->err, p->errlen, "column %zu: ", at + 1);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < p->errlen)
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
        p->failed = 1;
    }
    return -1;
}

static void skip_ws(parser *p)
{
    while (isspace((unsigned char)p->text[p->pos]))
        p->pos++;
}

static int peek(parser *p)
{
    skip_ws(p);
    return (unsigned char)p->text[p->pos];
}

static int expect(parser *p, char c)
{
    if (peek(p) != c) {
        char got = p->text[p->pos];
        if (got)
            return fail(p, p->pos, "expected '%c', found '%c'", c, got);
        return fail(p, p->pos, "expected '%c', found the end of the layout", c);
    }
    p->pos++;
    return 0;
}

/* Reads [A-Za-z_][A-Za-z0-9_]* into buf; returns its length (0 when none). */
static size_t ident(parser *p, char *buf, size_t cap)
{
    skip_ws(p);
    size_t start = p->pos, n = 0;
    if (!isalpha((unsigned char)p->text[start]) && p->text[start] != '_')
        return 0;
    while (isalnum((unsigned char)p->text[p->pos]) || p->text[p->pos] == '_') {
        if (n + 1 < cap)
            buf[n] = p->text[p->pos];
        n++;
        p->pos++;
    }
    buf[n + 1 < cap ? n : cap - 1] = 0;
    return n;
}

static int integer(parser *p, long long *out)
{
    skip_ws(p);
    size_t start = p->pos;
    int neg = 0;
    if (p->text[p->pos] == '-' || p->text[p->pos] == '+')
        neg = p->text[p->pos++] == '-';
    if (!isdigit((unsigned char)p->text[p->pos]))
        return fail(p, start, "expected a number");
    long long v = 0;
    while (isdigit((unsigned char)p->text[p->pos])) {
        v = v * 10 + (p->text[p->pos++] - '0');
        if (v > (1ll << 40))
            return fail(p, start, "number too large");
    }
    *out = neg ? -v : v;
    return 0;
}

static int parse_offset(parser *p, int off[3])
{
    if (expect(p, '('))
        return -1;
    long long v[3];
    int n = 0;
    for (;;) {
        size_t at = p->pos;
        if (n == 3)
            return fail(p, at, "offset takes 1 or 3 values");
        if (integer(p, &v[n]))
            return -1;
        if (v[n] < INT32_MIN || v[n] > INT32_MAX)
            return fail(p, at, "offset out of the 32-bit range");
        n++;
        if (peek(p) != ',')
            break;
        p->pos++;
    }
    if (n == 2)
        return fail(p, p->pos, "offset takes 1 or 3 values");
    for (int a = 0; a < 3; a++)
        off[a] = (int)(n == 1 ? v[0] : v[a]);
    return expect(p, ')');
}

static int parse_node(parser *p, int kind, pnode *nd)
{
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    if (expect(p, '('))
        return -1;
    nd->num_axes = 3;
    nd->order[0] = 0, nd->order[1] = 1, nd->order[2] = 2;
    if (isalpha(peek(p))) {
        size_t at = p->pos;
        char axes[16];
        size_t n = ident(p, axes, sizeof axes);
        if (n > 3)
            return fail(p, at, "axes '%s': give 1 to 3 of i, j, k", axes);
        int seen[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            int a = axes[i] == 'i' ? 0 : axes[i] == 'j' ? 1 : axes[i] == 'k' ? 2 : -1;
            if (a < 0)
                return fail(p, at + i, "unknown axis '%c' (axes are i, j, k)", axes[i]);
            if (seen[a])
                return fail(p, at + i, "axis '%c' given twice", axes[i]);
            seen[a] = 1;
            nd->order[i] = a;
        }
        nd->num_axes = (int)n;
        if (expect(p, ','))
            return -1;
    }
    long long sizes[3];
    int ns = 0;
    for (;;) {
        size_t at = p->pos;
        skip_ws(p);
        at = p->pos;
        if (ns == nd->num_axes)
            return fail(p, at, "too many sizes: %d axes take 1 or %d sizes", nd->num_axes,
                        nd->num_axes);
        if (integer(p, &sizes[ns]))
            return -1;
        long long s = sizes[ns];
        if (s < 1 || (s & (s - 1)))
            return fail(p, at, "size %lld is not a power of two", s);
        if (s > (1ll << 24))
            return fail(p, at, "size %lld is too large (at most 2^24)", s);
        ns++;
        if (peek(p) != ',')
            break;
        p->pos++;
    }
    if (ns != 1 && ns != nd->num_axes)
        return fail(p, p->pos, "%d sizes for %d axes: give 1 or %d", ns, nd->num_axes,
                    nd->num_axes);
    for (int i = 0; i < nd->num_axes; i++) {
        long long s = sizes[ns == 1 ? 0 : i];
        unsigned b = 0;
        while ((1ll << b) < s)
            b++;
        nd->bits[nd->order[i]] = b;
    }
    return expect(p, ')');
}

static int parse_place(parser *p, pfield *fields, int *nfields, int max_fields)
{
    if (expect(p, '('))
        return -1;
    int n = 0;
    for (;;) {
        skip_ws(p);
        size_t at = p->pos;
        pfield f = {.components = 1, .col = (int)at};
        size_t len = ident(p, f.name, sizeof f.name);
        if (len == 0)
            return fail(p, at, "expected a field name");
        if (len >= PLM_LAYOUT_NAME_MAX)
            return fail(p, at, "field name longer than %d characters", PLM_LAYOUT_NAME_MAX - 1);
        if (peek(p) == ':') {
            p->pos++;
            skip_ws(p);
            size_t tat = p->pos;
            char type[16];
            if (!ident(p, type, sizeof type))
                return fail(p, tat, "expected a field type (f32 or vec3)");
            if (!strcmp(type, "f32"))
                f.components = 1;
            else if (!strcmp(type, "vec3"))
                f.components = 3;
            else
                return fail(p, tat, "unknown field type '%s' (f32 or vec3)", type);
        }
        if (n >= max_fields)
            return fail(p, at, "too many fields (at most %d)", PLM_RT_MAX_FIELDS);
        fields[n++] = f;
        if (peek(p) != ',')
            break;
        p->pos++;
    }
    *nfields = n;
    return expect(p, ')');
}

static uint64_t round8(uint64_t v) { return (v + 7) & ~(uint64_t)7; }

/* Fills cfg with one chain's SNodes (bottom-up sizes), linking them below the root. */
static int build_chain(parser *p, plm_layout *L, const pnode *nodes, int nn, const int off[3],
                       const pfield *fields, int nf, int aos, int last_sibling)
{
    plm_rt_config *cfg = &L->cfg;
    if (cfg->num_snodes + nn > PLM_RT_MAX_SNODES)
        return fail(p, (size_t)nodes[0].col, "too many SNodes (at most %d)", PLM_RT_MAX_SNODES);
    if (cfg->num_fields + nf > PLM_RT_MAX_FIELDS)
        return fail(p, (size_t)fields[0].col, "too many fields (at most %d)", PLM_RT_MAX_FIELDS);
    int base = cfg->num_snodes;
    unsigned shift[3] = {0, 0, 0};
    uint64_t child_bytes = 0;
    int child_inline = 0, child_sparse = 0;
    for (int l = nn - 1; l >= 0; l--) {
        const pnode *nd = &nodes[l];
        plm_rt_snode *s = &cfg->snodes[base + l];
        memset(s, 0, sizeof *s);
        s->id = base + l;
        s->kind = nd->kind;
        s->parent = l == 0 ? 0 : base + l - 1;
        s->depth = l + 1;
        s->first_child = l == nn - 1 ? -1 : base + l + 1;
        s->next_sibling = -1;
        s->num_axes = nd->num_axes;
        unsigned total = 0;
        for (int a = 0; a < 3; a++) {
            s->axis_order[a] = a < nd->num_axes ? nd->order[a] : -1;
            s->axis_bits[a] = nd->bits[a];
            s->axis_shift[a] = shift[a];
            s->coord_offset[a] = off[a];
            total += nd->bits[a];
        }
        unsigned below = 0;
        for (int i = nd->num_axes - 1; i >= 0; i--) {
            s->index_shift[nd->order[i]] = below;
            below += nd->bits[nd->order[i]];
        }
        if (total > 24)
            return fail(p, (size_t)nd->col, "%s node has 2^%u cells (at most 2^24)",
                        plm_layout_kind_name(nd->kind), total);
        for (int a = 0; a < 3; a++)
            shift[a] += nd->bits[a];
        uint64_t n = (uint64_t)1 << total;
        s->num_cells = (int32_t)n;
        s->is_leaf = l == nn - 1;
        if (s->is_leaf) {
            int soa = !aos && (nd->kind == PLM_RT_DENSE || nd->kind == PLM_RT_BITMASKED);
            s->soa = soa;
            uint64_t at = 0, cell = 0;
            for (int f = 0; f < nf; f++) {
                plm_rt_field *fd = &cfg->fields[cfg->num_fields + f];
                uint64_t bytes = 4u * (uint64_t)fields[f].components;
                memset(fd, 0, sizeof *fd);
                fd->snode = base + l;
                fd->components = fields[f].components;
                fd->offset = soa ? at : cell;
                at += n * bytes;
                cell += bytes;
            }
            for (int f = 0; f < nf; f++)
                cfg->fields[cfg->num_fields + f].stride =
                    soa ? 4u * (uint64_t)fields[f].components : cell;
            s->cell_bytes = cell;
            s->inline_data = nd->kind == PLM_RT_DENSE || nd->kind == PLM_RT_BITMASKED;
        } else {
            s->cell_bytes = child_bytes;
            s->inline_data = (nd->kind == PLM_RT_DENSE || nd->kind == PLM_RT_BITMASKED) &&
                             child_inline;
        }
        s->has_sparse = nd->kind != PLM_RT_DENSE || child_sparse;
        switch (nd->kind) {
        case PLM_RT_DENSE:
            s->header_bytes = 0;
            s->container_bytes = round8(n * s->cell_bytes);
            break;
        case PLM_RT_POINTER:
            s->header_bytes = 8 + round8(4 * n);
            s->container_bytes = s->header_bytes + 8 * n;
            s->alloc_bytes = round8(s->cell_bytes);
            break;
        case PLM_RT_BITMASKED:
            s->header_bytes = 8 + round8(4 * ((n + 31) / 32));
            s->container_bytes = round8(s->header_bytes + n * s->cell_bytes);
            break;
        case PLM_RT_DYNAMIC: {
            unsigned lc = total < 6 ? total : 6; /* chunks of up to 64 cells */
            s->dyn_log2_chunk = (int32_t)lc;
            s->header_bytes = 16;
            s->container_bytes = 16;
            s->alloc_bytes = round8(8 + ((uint64_t)1 << lc) * s->cell_bytes);
            break;
        }
        }
        if (s->is_leaf && s->inline_data)
            s->leaf_data_bytes = n * s->cell_bytes;
        if (s->container_bytes > ((uint64_t)1 << 40) || s->cell_bytes > ((uint64_t)1 << 40))
            return fail(p, (size_t)nd->col, "%s node needs %llu bytes per container (too large)",
                        plm_layout_kind_name(nd->kind), (unsigned long long)s->container_bytes);
        child_bytes = s->container_bytes;
        child_inline = s->inline_data;
        child_sparse = s->has_sparse;
    }
    for (int a = 0; a < 3; a++) {
        if (shift[a] > 30)
            return fail(p, (size_t)nodes[0].col, "axis %c spans 2^%u voxels (at most 2^30)",
                        "ijk"[a], shift[a]);
        if ((long long)off[a] + (1ll << shift[a]) - 1 > INT32_MAX)
            return fail(p, (size_t)nodes[0].col,
                        "offset + extent along %c passes the 32-bit index range", "ijk"[a]);
    }
    for (int l = 0; l < nn; l++)
        for (int a = 0; a < 3; a++)
            cfg->snodes[base + l].extent_bits[a] = shift[a];
    /* Link below the root; the root's cell is the concatenation of its children's containers. */
    plm_rt_snode *root = &cfg->snodes[0];
    plm_rt_snode *top = &cfg->snodes[base];
    top->offset_in_parent = root->cell_bytes;
    root->cell_bytes += round8(top->container_bytes);
    root->container_bytes = root->cell_bytes;
    root->inline_data |= top->inline_data;
    root->has_sparse |= top->has_sparse;
    if (last_sibling < 0)
        root->first_child = base;
    else
        cfg->snodes[last_sibling].next_sibling = base;
    for (int f = 0; f < nf; f++) {
        for (int g = 0; g < cfg->num_fields; g++)
            if (!strcmp(L->field_names[g], fields[f].name))
                return fail(p, (size_t)fields[f].col, "field '%s' placed twice", fields[f].name);
        for (int g = 0; g < f; g++)
            if (!strcmp(fields[g].name, fields[f].name))
                return fail(p, (size_t)fields[f].col, "field '%s' placed twice", fields[f].name);
    }
    for (int f = 0; f < nf; f++)
        memcpy(L->field_names[cfg->num_fields + f], fields[f].name, PLM_LAYOUT_NAME_MAX);
    cfg->num_fields += nf;
    cfg->num_snodes += nn;
    return 0;
}

static int kind_of(const char *w)
{
    if (!strcmp(w, "dense"))
        return PLM_RT_DENSE;
    if (!strcmp(w, "pointer"))
        return PLM_RT_POINTER;
    if (!strcmp(w, "bitmasked"))
        return PLM_RT_BITMASKED;
    if (!strcmp(w, "dynamic"))
        return PLM_RT_DYNAMIC;
    return -1;
}

static int parse_chain(parser *p, plm_layout *L, int *last_sibling)
{
    pnode nodes[MAX_CHAIN];
    pfield fields[PLM_RT_MAX_FIELDS];
    int nn = 0, nf = 0, aos = 0, off[3] = {0, 0, 0};
    for (;;) {
        skip_ws(p);
        size_t at = p->pos;
        char w[32];
        if (!ident(p, w, sizeof w)) {
            if (!p->text[at])
                return fail(p, at, "expected a node, found the end of the layout");
            return fail(p, at, "expected a node (dense, pointer, bitmasked, dynamic) or place");
        }
        if (!strcmp(w, "offset")) {
            if (nn > 0)
                return fail(p, at, "offset must come first in its chain");
            if (parse_offset(p, off))
                return -1;
        } else if (!strcmp(w, "place") || !strcmp(w, "place_aos")) {
            if (nn == 0)
                return fail(p, at, "place needs a node before it");
            aos = w[5] != 0;
            if (parse_place(p, fields, &nf, PLM_RT_MAX_FIELDS))
                return -1;
            break;
        } else {
            int kind = kind_of(w);
            if (kind < 0)
                return fail(p, at,
                            "unknown node kind '%s' (expected dense, pointer, bitmasked, dynamic, "
                            "offset or place)",
                            w);
            if (nn > 0 && nodes[nn - 1].kind == PLM_RT_DYNAMIC)
                return fail(p, at, "dynamic must be the last node before place");
            if (nn == MAX_CHAIN)
                return fail(p, at, "more than %d nodes in one chain", MAX_CHAIN);
            if (parse_node(p, kind, &nodes[nn]))
                return -1;
            nodes[nn].col = (int)at;
            if (kind == PLM_RT_DYNAMIC && nodes[nn].num_axes != 1)
                return fail(p, at, "dynamic takes exactly one axis, e.g. dynamic(k,1024)");
            nn++;
        }
        if (peek(p) != '.') {
            if (p->text[p->pos] && p->text[p->pos] != ';')
                return fail(p, p->pos, "expected '.', found '%c'", p->text[p->pos]);
            return fail(p, p->pos, "the chain must end with .place(...)");
        }
        p->pos++;
    }
    int first = L->cfg.num_snodes;
    if (build_chain(p, L, nodes, nn, off, fields, nf, aos, *last_sibling))
        return -1;
    *last_sibling = first;
    L->num_chains++;
    return 0;
}

int plm_layout_parse(const char *text, plm_layout **out, char *err, size_t errlen)
{
    char dummy[8];
    parser p = {.text = text ? text : "", .err = err ? err : dummy,
                .errlen = err ? errlen : sizeof dummy};
    *out = NULL;
    if (errlen)
        p.err[0] = 0;
    plm_layout *L = calloc(1, sizeof *L);
    if (!L) {
        snprintf(p.err, p.errlen, "out of host memory parsing the layout");
        return -1;
    }
    plm_rt_snode *root = &L->cfg.snodes[0];
    root->kind = PLM_RT_ROOT;
    root->parent = -1;
    root->first_child = -1;
    root->next_sibling = -1;
    root->num_cells = 1;
    for (int a = 0; a < 3; a++)
        root->axis_order[a] = -1;
    L->cfg.num_snodes = 1;
    int last = -1;
    for (;;) {
        if (parse_chain(&p, L, &last))
            break;
        if (peek(&p) == ';') {
            p.pos++;
            continue;
        }
        if (p.text[p.pos])
            fail(&p, p.pos, "expected ';' or the end of the layout, found '%c'", p.text[p.pos]);
        break;
    }
    if (p.failed) {
        free(L);
        return -1;
    }
    if (root->container_bytes == 0)
        root->container_bytes = root->cell_bytes = 8;
    *out = L;
    return 0;
}

void plm_layout_free(plm_layout *layout) { free(layout); }

int plm_layout_field(const plm_layout *layout, const char *name)
{
    for (int f = 0; f < layout->cfg.num_fields; f++)
        if (!strcmp(layout->field_names[f], name))
            return f;
    return -1;
}

int plm_layout_block_snode(const plm_layout *layout, int field)
{
    if (field < 0 || field >= layout->cfg.num_fields)
        return -1;
    return layout->cfg.snodes[layout->cfg.fields[field].snode].parent;
}

const char *plm_layout_kind_name(int kind)
{
    switch (kind) {
    case PLM_RT_ROOT: return "root";
    case PLM_RT_DENSE: return "dense";
    case PLM_RT_POINTER: return "pointer";
    case PLM_RT_BITMASKED: return "bitmasked";
    case PLM_RT_DYNAMIC: return "dynamic";
    default: return "?";
    }
}
