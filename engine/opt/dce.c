/* Dead code elimination: values nobody uses (pure statements only), allocas nobody loads
 * (with their stores), `if`s with two empty blocks and range_for/struct_for loops with an
 * empty body (never the loop a loop task is made of; never a while, which might not end).
 * One backward sweep per block removes whole chains: a dropped statement's operands lose a
 * use at once. */
#include "engine/opt/opt_internal.h"

#include <stdlib.h>

typedef struct dctx {
    ir_task *t;
    uint8_t *loaded; /* by alloca id */
    int changed;
} dctx;

static int mark_loads(ir_stmt *s, void *ud)
{
    dctx *c = ud;
    if (s->op == IR_LOAD)
        c->loaded[s->arg[0]->id] = 1;
    return 0;
}

static int drop_dead_stores(ir_stmt *s, void *ud)
{
    dctx *c = ud;
    if (s->op == IR_STORE && !c->loaded[s->arg[0]->id]) {
        ir_unlink(s); /* ir_walk has taken s->next already */
        c->changed++;
    }
    return 0;
}

static void drop_uses(ir_stmt *s)
{
    for (int i = 0; i < s->nargs; i++)
        if (s->arg[i] && s->arg[i]->mark)
            s->arg[i]->mark--;
}

static int removable_control(const dctx *c, const ir_stmt *s)
{
    if (s->op == IR_IF)
        return !s->body->first && !s->els->first;
    if (s->op == IR_RANGE_FOR || s->op == IR_STRUCT_FOR)
        return !s->body->first && !opt_is_task_loop(c->t, s);
    return 0;
}

static void sweep(dctx *c, ir_block *b)
{
    for (ir_stmt *s = b->last, *prev; s; s = prev) {
        prev = s->prev;
        if (s->body)
            sweep(c, s->body);
        if (s->els)
            sweep(c, s->els);
        if ((opt_is_pure(s) && s->mark == 0) || removable_control(c, s)) {
            drop_uses(s);
            ir_unlink(s);
            c->changed++;
        }
    }
}

int opt_dce(ir_task *t)
{
    uint32_t n = ir_task_number(t);
    dctx c = {.t = t};
    c.loaded = calloc(n ? n : 1, 1);
    if (!c.loaded)
        return -1;
    ir_walk(t->body, mark_loads, &c);
    ir_walk(t->body, drop_dead_stores, &c);
    free(c.loaded);
    ir_task_count_uses(t);
    sweep(&c, t->body);
    return c.changed;
}
