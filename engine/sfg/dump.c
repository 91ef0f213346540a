/* Graphviz dumps of the state-flow graph, for people debugging the optimizer: one .dot file
 * per step of a flush (its input, and after each pass that changed something). Survivors of
 * earlier flushes are dashed; dependency (write-after-read) edges are dashed too. */
#include "engine/sfg/sfg_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct strbuf {
    char *s;
    size_t len, cap;
    int oom;
} strbuf;

static void put(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(strbuf *b, const char *fmt, ...) {
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap ? b->cap * 2 : 4096;
        while (ncap < b->len + (size_t)n + 1)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
}

static const char *type_name(sfg_task_type t) {
    static const char *names[SFG_TASK_TYPE_COUNT] = {"serial",     "range_for", "struct_for",
                                                     "clear_list", "listgen",   "gc"};
    return (unsigned)t < SFG_TASK_TYPE_COUNT ? names[t] : "?";
}

static const char *kind_name(sfg_state s) {
    static const char *names[4] = {"value", "mask", "list", "alloc"};
    return names[SFG_STATE_KIND(s)];
}

/* Node names in dumps: quotes and backslashes would break the dot syntax. */
static void put_escaped(strbuf *b, const char *s) {
    for (; *s; s++)
        put(b, "%s%c", (*s == '"' || *s == '\\') ? "\\" : "", *s);
}

char *sfg_graph_dot(const sfg_graph *g, const char *title) {
    strbuf b = {0};
    put(&b, "digraph sfg {\n  label=\"%s\";\n  node [shape=box, fontname=\"monospace\"];\n",
        title);
    put(&b, "  n0 [label=\"initial state\", shape=ellipse];\n");
    for (uint32_t i = 1; i < g->n_node; i++) {
        const sfg_node *n = &g->node[i];
        const sfg_task_meta *m = n->meta;
        put(&b, "  n%u [label=\"#%llu ", i, (unsigned long long)n->serial);
        put_escaped(&b, n->name);
        put(&b, "\\n%s", type_name(m->type));
        if (m->type == SFG_RANGE_FOR && !(m->flags & SFG_TASK_DYNAMIC_RANGE))
            put(&b, " [%lld, %lld)", (long long)m->begin, (long long)m->end);
        else if (m->type != SFG_SERIAL && m->type != SFG_RANGE_FOR)
            put(&b, " snode %u", m->snode);
        put(&b, "\\nir %016llx\"%s];\n", (unsigned long long)n->ir.hash,
            n->executed ? ", style=dashed" : "");
    }
    for (uint32_t e = 0; e < g->n_edge; e++) {
        const sfg_gedge *x = &g->edge[e];
        put(&b, "  n%u -> n%u [label=\"%s %u\"%s];\n", x->from, x->to, kind_name(x->state),
            SFG_STATE_ID(x->state), x->kind == SFG_EDGE_DEP ? ", style=dashed" : "");
    }
    put(&b, "}\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int sfg_dump(sfg_queue *q, const char *what) {
    if (!q->dump_dir[0])
        return SFG_OK;
    char path[768], title[128];
    int step = q->dump_step++;
    snprintf(title, sizeof title, "batch %llu step %d: %s", (unsigned long long)q->batch_index,
             step, what);
    snprintf(path, sizeof path, "%s/sfg_b%04llu_s%02d_%s.dot", q->dump_dir,
             (unsigned long long)q->batch_index, step, what);
    /* dumps are a debugging aid: a failure is reported in sfg_error() but fails nothing */
    if (mkdir(q->dump_dir, 0777) && errno != EEXIST) {
        sfg_set_error(q->err, "sfg dump: cannot create %s: %s", q->dump_dir, strerror(errno));
        return SFG_OK;
    }
    char *dot = sfg_graph_dot(&q->g, title);
    if (!dot)
        return SFG_OK;
    FILE *f = fopen(path, "w");
    if (!f) {
        sfg_set_error(q->err, "sfg dump: cannot write %s: %s", path, strerror(errno));
    } else {
        fputs(dot, f);
        fclose(f);
    }
    free(dot);
    return SFG_OK;
}
