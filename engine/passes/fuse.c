/* Task fusion for the SFG: one task running a's body then b's in each iteration. The SFG has
 * checked the dependencies; this file checks what only the IR can tell (same loop, bound
 * types, a `continue` in a that would skip b's part) and declines otherwise.
 *
 * Construction: a is cloned whole; b is cloned into a scratch block of the new task, its slots,
 * scalar arguments and gtmp argument numbers are renumbered after a's, its prologue goes in
 * front of a's loop and its loop body at the end of a's loop body, with references to b's loop
 * redirected to a's. */
#include "engine/passes/passes_internal.h"
#if PLUME_HAVE_OPT
#include "engine/opt/opt.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct remap {
    uint32_t slot[PASSES_MAX_SLOTS];
    uint32_t arg_shift;
    const sfg_arg_match *same; /* b's arguments equal to one of a's, or NULL */
    ir_stmt *from_loop, *to_loop;
} remap;

static int uses_field(const ir_stmt *s)
{
    return s->op == IR_GLOBAL_PTR || s->op == IR_IS_ACTIVE || s->op == IR_ACTIVATE ||
           s->op == IR_DEACTIVATE || s->op == IR_STRUCT_FOR || s->op >= IR_SN_ROOT;
}

static int renumber(ir_stmt *s, void *ud)
{
    remap *r = ud;
    if (uses_field(s))
        s->field = (uint16_t)r->slot[s->field];
    if (s->op == IR_ARG || s->op == IR_GTMP_PTR) {
        if (r->same && s->index < r->same->n && r->same->same[s->index] >= 0)
            s->index = (uint32_t)r->same->same[s->index];
        else
            s->index += r->arg_shift;
    }
    if (r->from_loop && s->loop == r->from_loop)
        s->loop = r->to_loop;
    return 0;
}

typedef struct cont_find {
    const ir_stmt *loop;
} cont_find;

static int continues(ir_stmt *s, void *ud)
{
    cont_find *c = ud;
    return s->op == IR_CONTINUE && s->loop == c->loop;
}

static int same_field(const ir_field_info *x, const ir_field_info *y)
{
    return memcmp(x, y, sizeof *x) == 0;
}

/* Same kind and iteration set, as far as the IR can tell. */
static int compatible(const passes_bound *a, const passes_bound *b)
{
    ir_task *ta = a->task, *tb = b->task;
    if (ta->kind != tb->kind)
        return 0;
    if (ta->kind == IR_TASK_SERIAL)
        return 1;
    if (ta->kind != IR_TASK_RANGE_FOR && ta->kind != IR_TASK_STRUCT_FOR)
        return 0;
    ir_stmt *la = ta->body->last, *lb = tb->body->last;
    if (!la || !lb || la->op != lb->op)
        return 0;
    /* a `continue` of a's loop would skip b's part of the fused body */
    cont_find cf = {la};
    if (ir_walk(la->body, continues, &cf))
        return 0;
    if (ta->kind == IR_TASK_RANGE_FOR) {
        if (!ta->has_meta || !tb->has_meta || (ta->meta.flags & IR_TASKF_DYNAMIC_RANGE) ||
            (tb->meta.flags & IR_TASKF_DYNAMIC_RANGE))
            return 0;
        return ta->meta.begin == tb->meta.begin && ta->meta.end == tb->meta.end &&
               la->arg[0]->ty == lb->arg[0]->ty;
    }
    if (ta->field >= a->nfields || tb->field >= b->nfields)
        return 0;
    /* loops over one tree (through any field placed in it) visit the same cells */
    const ir_field_info *fa = &ta->fields[ta->field], *fb = &tb->fields[tb->field];
    return pass_tree_id(a, ta->field) == pass_tree_id(b, tb->field) && ta->level == tb->level &&
           fa->nlevels == fb->nlevels && fa->dim == fb->dim &&
           memcmp(fa->levels, fb->levels, fa->nlevels * sizeof *fa->levels) == 0;
}

static int count_stmt(ir_stmt *s, void *ud)
{
    (void)s;
    (*(uint32_t *)ud)++;
    return 0;
}

static uint32_t task_size(const ir_task *t)
{
    uint32_t n = 0;
    ir_walk(t->body, count_stmt, &n);
    return n;
}

static int distinct_ids(const uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if (ids[i] == ids[j])
                return 0;
    return 1;
}

#if PLUME_HAVE_OPT
/* Statements of b's task once optimized as the fused task would be (a clone), or UINT32_MAX. */
static uint32_t optimized_size(const passes_bound *b)
{
    ir_task *c = pass_clone(b->task);
    char err[256];
    uint32_t n = UINT32_MAX;
    if (c) {
        c->distinct_slots = (uint8_t)distinct_ids(b->field_id, b->nfields);
        if (opt_run(c, 0, NULL, NULL, err, sizeof err) == 0)
            n = task_size(c);
    }
    ir_task_free(c);
    return n;
}
#endif

/* Optimizes the fused task t in place with its slots taken as distinct memory when ids are
 * (loads of one field survive the other body's stores), and tells whether it came out at most
 * PASSES_FUSE_SHARED percent of a and b optimized alone the same way: the bodies shared that
 * much work. The caller drops t otherwise, so among heavy pairs the flag stays only on tasks
 * that share (ir.h says why single kernels do not get it). */
static int shares_work(ir_task *t, const uint32_t *ids, uint32_t nf, const passes_bound *a,
                       const passes_bound *b)
{
#if PLUME_HAVE_OPT
    if (!distinct_ids(ids, nf))
        return 0;
    uint32_t sa = optimized_size(a), sb = optimized_size(b);
    if (sa == UINT32_MAX || sb == UINT32_MAX)
        return 0;
    char err[256];
    t->distinct_slots = 1;
    return opt_run(t, 0, NULL, NULL, err, sizeof err) == 0 &&
           (uint64_t)task_size(t) * 100u <= ((uint64_t)sa + sb) * PASSES_FUSE_SHARED;
#else
    (void)t, (void)ids, (void)nf, (void)a, (void)b;
    return 0;
#endif
}

passes_bound *passes_fuse(const passes_bound *a, const passes_bound *b, const sfg_arg_match *m)
{
    if (!a || !b || !compatible(a, b))
        return NULL;
    ir_task *ta = a->task, *tb = b->task;
    /* two heavy bodies run slower interleaved per iteration than one after the other, unless
     * they share work (checked once the fused task exists) */
    int heavy = task_size(ta) > PASSES_FUSE_HEAVY && task_size(tb) > PASSES_FUSE_HEAVY;
    int ua = pass_uses_gtmp(ta), ub = pass_uses_gtmp(tb);
    /* the binding names one gtmp state: two kernels' buffers cannot both be described */
    if (ua && ub && a->gtmp_state != b->gtmp_state)
        return NULL;
    ir_field_info fields[PASSES_MAX_SLOTS];
    uint32_t ids[PASSES_MAX_SLOTS], nf = a->nfields;
    remap r;
    memset(&r, 0, sizeof r);
    memcpy(fields, ta->fields, nf * sizeof *fields);
    memcpy(ids, a->field_id, nf * sizeof *ids);
    /* b's slots: merged into a's slot bound to the same field (so the code generator sees one
     * field, not two aliasing slots), else appended */
    for (uint32_t j = 0; j < b->nfields; j++) {
        uint32_t i = 0;
        while (i < nf && !(ids[i] == b->field_id[j] && same_field(&fields[i], &tb->fields[j])))
            i++;
        if (i == nf) {
            if (nf == PASSES_MAX_SLOTS)
                return NULL;
            fields[nf] = tb->fields[j];
            ids[nf++] = b->field_id[j];
        }
        r.slot[j] = i;
    }
    uint32_t na = ta->nargs, nargs = ta->nargs + tb->nargs;
    ir_type *args = malloc((nargs ? nargs : 1) * sizeof *args);
    if (!args)
        return NULL;
    if (na)
        memcpy(args, ta->arg_types, na * sizeof *args);
    if (tb->nargs)
        memcpy(args + na, tb->arg_types, tb->nargs * sizeof *args);
    char name[IR_NAME_MAX];
    snprintf(name, sizeof name, "%.31s+%.31s", ta->name, tb->name);
    ir_task *t = ir_task_new(ta->kind, name, fields, nf, args, nargs);
    free(args);
    if (!t)
        return NULL;
    t->field = ta->field;
    t->level = ta->level;
    t->gtmp_bytes = ta->gtmp_bytes > tb->gtmp_bytes ? ta->gtmp_bytes : tb->gtmp_bytes;
    ir_block *scratch = ir_block_new(t, NULL);
    if (!scratch || ir_block_clone_into(t, t->body, ta, ta->body, NULL, NULL) != 0 ||
        ir_block_clone_into(t, scratch, tb, tb->body, NULL, NULL) != 0)
        goto fail;
    r.arg_shift = na;
    /* equal bytes stand for equal values only between arguments of one type; a pattern for
     * other argument lists than these tasks' (cannot happen) is ignored */
    int32_t *same = NULL;
    sfg_arg_match typed = {0, NULL};
    if (m && m->n && m->n == tb->nargs && (same = malloc(m->n * sizeof *same)) != NULL) {
        for (uint32_t i = 0; i < m->n; i++) {
            int32_t j = m->same[i];
            same[i] = j >= 0 && (uint32_t)j < na && ta->arg_types[j] == tb->arg_types[i] ? j : -1;
        }
        typed = (sfg_arg_match){m->n, same};
        r.same = &typed;
    }
    ir_stmt *loop = ta->kind == IR_TASK_SERIAL ? NULL : t->body->last;
    if (loop) {
        r.from_loop = scratch->last;
        r.to_loop = loop;
    }
    ir_walk(scratch, renumber, &r);
    free(same);
    if (!loop) {
        for (ir_stmt *s = scratch->first, *next; s; s = next) {
            next = s->next;
            ir_unlink(s);
            ir_append(t->body, s);
        }
    } else {
        ir_stmt *lb = scratch->last;
        for (ir_stmt *s = scratch->first, *next; s != lb; s = next) {
            next = s->next;
            ir_unlink(s);
            ir_insert_before(loop, s);
        }
        for (ir_stmt *s = lb->body->first, *next; s; s = next) {
            next = s->next;
            ir_unlink(s);
            ir_append(loop->body, s);
        }
    }
    /* b's bounds and other prologue values its body did not need */
    pass_drop_dead(t);
    if (heavy && !shares_work(t, ids, nf, a, b))
        goto fail;
    /* a light pair always fuses; with its slots bound to distinct fields, loads of one field
     * outlive the other body's stores, so a chain such as b = stencil(a) repeated shares its
     * loads of a (heavy pairs got the flag from the sharing check) */
    if (!heavy)
        t->distinct_slots = (uint8_t)distinct_ids(ids, nf);
    char err[256];
    if (ir_verify(t, err, sizeof err) != 0 || pass_compute_meta(t) != 0)
        goto fail;
    return passes_bound_adopt(t, ids, nf, ua ? a->gtmp_state : b->gtmp_state);
fail:
    ir_task_free(t);
    return NULL;
}
