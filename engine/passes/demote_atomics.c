/* Atomic demotion: an atomic update of f[I] where every access of the task to f is at exactly
 * the parallel loop's own index (metadata: elementwise) cannot race — no other iteration
 * touches that element — so it becomes a load, the operation and a store. `x[i] += 1` over a
 * dense array then costs a plain read-modify-write instead of a locked instruction, and a
 * fused chain of such updates keeps the value in a register. */
#include "engine/passes/passes_internal.h"

static const int binop_of[IR_ATOMIC_COUNT] = {
    [IR_ATOMIC_ADD] = IR_ADD, [IR_ATOMIC_SUB] = IR_SUB, [IR_ATOMIC_MIN] = IR_MIN,
    [IR_ATOMIC_MAX] = IR_MAX, [IR_ATOMIC_MUL] = IR_MUL, [IR_ATOMIC_DIV] = IR_DIV,
};

typedef struct demote_ctx {
    ir_task *t;
    int failed;
    uint32_t count, cap;
    ir_stmt **done; /* the replaced atomics, unlinked after the walk */
} demote_ctx;

static int elementwise_field(const ir_task *t, uint32_t field)
{
    const ir_access *a = ir_meta_find(&t->meta, IR_STATE_VALUE, field, 0);
    return a && (a->flags & IR_ACC_ELEMENTWISE) && (a->flags & IR_ACC_UNIQUE);
}

static int visit(ir_stmt *s, void *ud)
{
    demote_ctx *d = ud;
    if (s->op != IR_ATOMIC || s->sub >= IR_ATOMIC_COUNT)
        return 0;
    ir_stmt *ptr = s->arg[0];
    if (ptr->op != IR_GLOBAL_PTR || !elementwise_field(d->t, ptr->field))
        return 0;
    ir_builder b;
    ir_builder_init(&b, d->t);
    ir_builder_before(&b, s);
    ir_stmt *old = ir_global_load(&b, ptr);
    ir_stmt *val = ir_binary(&b, binop_of[s->sub], old, s->arg[1]);
    ir_stmt *st = ir_global_store(&b, ptr, val);
    if (!st) {
        d->failed = 1;
        return 1;
    }
    if (d->count == d->cap) {
        uint32_t cap = d->cap ? 2 * d->cap : 16;
        ir_stmt **grown = ir_alloc(d->t, cap * sizeof *grown);
        if (!grown) {
            d->failed = 1;
            return 1;
        }
        for (uint32_t i = 0; i < d->count; i++)
            grown[i] = d->done[i];
        d->done = grown;
        d->cap = cap;
    }
    s->repl = old;
    d->done[d->count++] = s;
    return 0;
}

int pass_demote_atomics(ir_task *t, uint32_t *demoted)
{
    *demoted = 0;
    if (t->kind != IR_TASK_RANGE_FOR && t->kind != IR_TASK_STRUCT_FOR)
        return 0;
    if (!t->has_meta && pass_compute_meta(t) != 0)
        return -1;
    demote_ctx d = {t, 0, 0, 0, NULL};
    ir_walk(t->body, visit, &d);
    if (d.failed)
        return -1;
    /* the old values now come from the loads; then the atomics themselves go */
    if (d.count)
        ir_task_replace_uses(t);
    for (uint32_t i = 0; i < d.count; i++)
        ir_unlink(d.done[i]);
    *demoted = d.count;
    return 0;
}
