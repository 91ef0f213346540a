/* Overwritten stores: in one block, a global store is dropped when a later store of the same
 * block goes through the same pointer statement and nothing in between may read the element.
 * Fusion makes these: `b[I] = s; total += b[I]; b[I] = 0` fused three times stores b[I] six
 * times per iteration, and once loads are forwarded only the last store is needed.
 *
 * "May read" is decided per statement between the two stores:
 *   - a global load or atomic through a pointer that may alias the stored one (the same
 *     statement; the same field slot; any slot unless the task's slots are distinct fields,
 *     ir_task.distinct_slots; global temporaries alias only each other);
 *   - anything that is not plain arithmetic, a local variable access, a pointer or cell
 *     computation or an activation: activity queries (an unlowered store activates, so the
 *     dropped store's activation would be missed), deactivations, control flow and nested
 *     blocks end every candidate. Nested blocks are scanned on their own.
 * Another iteration of a parallel loop reading the element in between would race with the
 * later store anyway, so it is not a reader the pass must keep the first store for. */
#include "engine/opt/opt_internal.h"

#define DSE_PENDING 32

typedef struct dse_block {
    const ir_task *t;
    ir_stmt *pend[DSE_PENDING]; /* stores not read since */
    int n;
} dse_block;

static int may_alias(const ir_task *t, const ir_stmt *p, const ir_stmt *q)
{
    if (p == q)
        return 1;
    int gp = p->op == IR_GTMP_PTR, gq = q->op == IR_GTMP_PTR;
    if (gp || gq)
        return gp && gq;
    return p->field == q->field || !t->distinct_slots;
}

/* Statements that read no field memory and change nothing a later read could see besides
 * activity, which an overwriting store to the same pointer sets again. */
static int transparent(const ir_stmt *s)
{
    switch (s->op) {
    case IR_CONST: case IR_ARG: case IR_UNARY: case IR_BINARY: case IR_SELECT: case IR_CAST:
    case IR_FMA:
    case IR_ALLOCA: case IR_LOAD: case IR_STORE: case IR_GLOBAL_PTR: case IR_GTMP_PTR:
    case IR_LOOP_INDEX: case IR_SN_ROOT: case IR_SN_CHILD: case IR_SN_INDEX: case IR_SN_LOOKUP:
    case IR_SN_FIELD_PTR: case IR_ACTIVATE: case IR_SN_ACTIVATE:
        return 1;
    default:
        return 0;
    }
}

static void forget_aliases(dse_block *d, const ir_stmt *ptr)
{
    int w = 0;
    for (int k = 0; k < d->n; k++)
        if (!may_alias(d->t, d->pend[k]->arg[0], ptr))
            d->pend[w++] = d->pend[k];
    d->n = w;
}

static int scan(const ir_task *t, ir_block *b)
{
    dse_block d = {.t = t, .n = 0};
    int changed = 0;
    for (ir_stmt *s = b->first, *next; s; s = next) {
        next = s->next;
        if (s->body || s->els) {
            if (s->body)
                changed += scan(t, s->body);
            if (s->els)
                changed += scan(t, s->els);
            d.n = 0;
            continue;
        }
        if (s->op == IR_GLOBAL_STORE) {
            int w = 0;
            for (int k = 0; k < d.n; k++) {
                if (d.pend[k]->arg[0] == s->arg[0]) {
                    ir_unlink(d.pend[k]);
                    changed++;
                } else {
                    d.pend[w++] = d.pend[k];
                }
            }
            d.n = w;
            if (d.n == DSE_PENDING) { /* the oldest candidate stays */
                for (int k = 1; k < d.n; k++)
                    d.pend[k - 1] = d.pend[k];
                d.n--;
            }
            d.pend[d.n++] = s;
        } else if (s->op == IR_GLOBAL_LOAD || s->op == IR_ATOMIC) {
            forget_aliases(&d, s->arg[0]);
        } else if (!transparent(s)) {
            d.n = 0;
        }
    }
    return changed;
}

int opt_dse(ir_task *t)
{
    return scan(t, t->body);
}
