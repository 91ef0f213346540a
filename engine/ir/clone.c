/* Deep copies of blocks and tasks. While copying, a source statement's `repl` points at its
 * copy: operands are always defined before their uses (and loops before their bodies), so one
 * pre-order pass maps every inner reference. */
#include "engine/ir/ir_internal.h"

#include <string.h>

typedef struct cctx {
    ir_task *dst;
    ir_outer_map_fn outer;
    void *ud;
    int failed;
} cctx;

static ir_stmt *map(cctx *c, ir_stmt *o)
{
    if (!o)
        return NULL;
    if (o->repl)
        return o->repl;
    ir_stmt *m = c->outer ? c->outer(o, c->ud) : NULL;
    if (!m)
        c->failed = 1;
    return m;
}

static void copy_block(cctx *c, ir_block *to, ir_block *from)
{
    for (ir_stmt *s = from->first; s && !c->failed; s = s->next) {
        ir_stmt *n = ir_stmt_new(c->dst, s->op, s->ty);
        if (!n) {
            c->failed = 1;
            return;
        }
        n->sub = s->sub;
        n->nargs = s->nargs;
        n->comp = s->comp;
        n->level = s->level;
        n->activate = s->activate;
        n->parallel = s->parallel;
        n->field = s->field;
        n->index = s->index;
        n->demoted = s->demoted;
        n->ival = s->ival;
        n->fval = s->fval;
        for (int i = 0; i < s->nargs; i++)
            n->arg[i] = map(c, s->arg[i]);
        n->loop = map(c, s->loop);
        ir_append(to, n);
        s->repl = n;
        if (s->body)
            copy_block(c, n->body, s->body);
        if (s->els)
            copy_block(c, n->els, s->els);
    }
}

static int clear(ir_stmt *s, void *ud)
{
    (void)ud;
    s->repl = NULL;
    return 0;
}

int ir_block_clone_into(ir_task *dst, ir_block *to, ir_task *src, ir_block *from,
                        ir_outer_map_fn outer, void *ud)
{
    (void)src;
    cctx c = {dst, outer, ud, 0};
    copy_block(&c, to, from);
    ir_walk(from, clear, NULL);
    return c.failed ? -1 : 0;
}

ir_task *ir_task_clone(ir_task *t)
{
    ir_task *n = ir_task_new(t->kind, t->name, t->fields, t->nfields, t->arg_types, t->nargs);
    if (!n)
        return NULL;
    n->field = t->field;
    n->level = t->level;
    n->gtmp_bytes = t->gtmp_bytes;
    n->has_meta = t->has_meta;
    n->distinct_slots = t->distinct_slots;
    n->meta = t->meta;
    if (t->meta.naccess) {
        n->meta.access = ir_alloc(n, t->meta.naccess * sizeof *n->meta.access);
        if (!n->meta.access) {
            ir_task_free(n);
            return NULL;
        }
        memcpy(n->meta.access, t->meta.access, t->meta.naccess * sizeof *n->meta.access);
    }
    if (ir_block_clone_into(n, n->body, t, t->body, NULL, NULL)) {
        ir_task_free(n);
        return NULL;
    }
    return n;
}
