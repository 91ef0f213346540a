/* Store-to-load forwarding of local variables (allocas). Walking each block in order, the
 * pass knows the value each alloca holds: zero right after its declaration (the code
 * generator zeroes an alloca each time its declaration runs), the value of the last store, or
 * the result of the last load. A load of a known value is replaced by it. A nested block
 * starts from what the enclosing block knows (it is dominated by it), except that a loop body
 * first forgets the allocas the body stores (a later iteration sees them changed); after an
 * `if` or a loop, the allocas stored inside are forgotten. What one branch learns is undone
 * before the other branch (an undo log, so nothing is copied per block). */
#include "engine/opt/opt_internal.h"

#include <stdlib.h>

typedef struct undo {
    uint32_t id;
    ir_stmt *old;
} undo;

typedef struct fctx {
    ir_stmt **known; /* by alloca id */
    undo *log;
    size_t nlog, cap;
    int changed, oom;
} fctx;

/* marks "zero, as declared" */
static ir_stmt zero_marker;
#define ZERO (&zero_marker)

static void set(fctx *c, const ir_stmt *alloca, ir_stmt *v)
{
    uint32_t id = alloca->id;
    if (c->known[id] == v)
        return;
    if (c->nlog == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        undo *l = realloc(c->log, cap * sizeof *l);
        if (!l) {
            c->oom = 1;
            c->known[id] = NULL; /* forgetting is always safe */
            return;
        }
        c->log = l;
        c->cap = cap;
    }
    c->log[c->nlog].id = id;
    c->log[c->nlog].old = c->known[id];
    c->nlog++;
    c->known[id] = v;
}

static void undo_to(fctx *c, size_t h)
{
    while (c->nlog > h) {
        c->nlog--;
        c->known[c->log[c->nlog].id] = c->log[c->nlog].old;
    }
}

static int forget_visit(ir_stmt *s, void *ud)
{
    if (s->op == IR_STORE)
        set(ud, ir_resolve(s->arg[0]), NULL);
    return 0;
}

static void forget_stored(fctx *c, ir_block *b)
{
    ir_walk(b, forget_visit, c);
}

static void block(fctx *c, ir_block *b)
{
    for (ir_stmt *s = b->first, *next; s; s = next) {
        next = s->next;
        for (int i = 0; i < s->nargs; i++)
            s->arg[i] = ir_resolve(s->arg[i]);
        switch (s->op) {
        case IR_ALLOCA:
            set(c, s, ZERO);
            break;
        case IR_STORE:
            set(c, s->arg[0], s->arg[1]);
            break;
        case IR_LOAD: {
            ir_stmt *k = c->known[s->arg[0]->id];
            if (k == ZERO) {
                opt_val zero = {0, 0.0};
                opt_make_const(s, zero);
                c->changed++;
            } else if (k) {
                opt_replace(s, k);
                c->changed++;
            } else {
                set(c, s->arg[0], s);
            }
            break;
        }
        case IR_IF: {
            size_t h = c->nlog;
            block(c, s->body);
            undo_to(c, h);
            block(c, s->els);
            undo_to(c, h);
            forget_stored(c, s->body);
            forget_stored(c, s->els);
            break;
        }
        case IR_RANGE_FOR: case IR_STRUCT_FOR: case IR_WHILE: {
            forget_stored(c, s->body);
            size_t h = c->nlog;
            block(c, s->body);
            undo_to(c, h);
            break;
        }
        default:
            break;
        }
    }
}

int opt_forward(ir_task *t)
{
    uint32_t n = ir_task_number(t);
    fctx c = {0};
    c.known = calloc(n ? n : 1, sizeof *c.known);
    if (!c.known)
        return -1;
    block(&c, t->body);
    free(c.known);
    free(c.log);
    if (c.changed)
        ir_task_replace_uses(t);
    return c.oom ? -1 : c.changed;
}
