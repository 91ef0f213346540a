/* Offload: a whole kernel (IR_TASK_KERNEL) becomes the sequence of tasks the engine launches.
 *
 * The kernel's top level alternates serial code and parallel loops; each run of serial code is
 * one serial task, each parallel loop one loop task (with list generation before a struct_for
 * and gc after deactivations). Work happens on a private clone of the kernel in three phases:
 *   A. analysis: which values and allocas are used by a task other than the one defining them;
 *   B. carrying: those that cannot simply be recomputed go through the global temporaries
 *      (offload_carry.c);
 *   C. building: each segment is moved into a scratch block and cloned into its own task; the
 *      operands it takes from earlier segments are resolved by the clone's outer-map callback,
 *      which recomputes pure expressions or loads carried values into a prologue block that is
 *      finally put in front of the task's body. */
#include "engine/passes/offload_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int off_fail(off_ctx *o, const ir_stmt *s, const char *msg)
{
    if (s)
        snprintf(o->err, o->n, "offload '%s' $%u (%s): %s", o->k->name, s->id,
                 ir_op_name(s->op), msg);
    else
        snprintf(o->err, o->n, "offload '%s': %s", o->k->name, msg);
    return -1;
}

static int is_parallel_loop(const ir_stmt *s)
{
    return (s->op == IR_RANGE_FOR && s->parallel) || s->op == IR_STRUCT_FOR;
}

/* ---- phase A: segments and values crossing them ---- */

typedef struct seg_walk {
    off_ctx *o;
    uint32_t seg;
} seg_walk;

static int set_seg(ir_stmt *s, void *ud)
{
    seg_walk *w = ud;
    w->o->seg[s->id] = w->seg;
    return 0;
}

/* Recomputing is cheaper than a trip through memory and keeps loop tasks free of a gtmp
 * dependency (which would stop the SFG from fusing them): pure expressions of constants and
 * arguments are recomputed wherever they are used. */
int off_remat(off_ctx *o, const ir_stmt *s, int depth)
{
    if (depth > 32)
        return 0;
    uint8_t *memo = &o->remat[s->id];
    if (*memo)
        return *memo == 1;
    int ok;
    switch (s->op) {
    case IR_CONST: case IR_ARG:
        ok = 1;
        break;
    case IR_UNARY: case IR_BINARY: case IR_SELECT: case IR_CAST: case IR_FMA: case IR_GLOBAL_PTR:
        ok = 1;
        for (int i = 0; i < s->nargs && ok; i++)
            ok = off_remat(o, s->arg[i], depth + 1);
        break;
    default:
        ok = 0;
    }
    *memo = ok ? 1 : 2;
    return ok;
}

static int find_crossing(ir_stmt *s, void *ud)
{
    off_ctx *o = ud;
    for (int i = 0; i < s->nargs; i++) {
        ir_stmt *a = s->arg[i];
        if (!a || o->seg[a->id] == o->seg[s->id])
            continue;
        if (a->op == IR_ALLOCA || !off_remat(o, a, 0))
            o->carry[a->id] = 1;
    }
    return 0;
}

static int analyze(off_ctx *o)
{
    /* a segment is a run of serial statements or one parallel loop */
    uint32_t seg = 0;
    int in_serial = 0;
    for (ir_stmt *s = o->k->body->first; s; s = s->next) {
        int loop = is_parallel_loop(s);
        if (loop || !in_serial)
            seg += s != o->k->body->first;
        in_serial = !loop;
        seg_walk w = {o, seg};
        set_seg(s, &w);
        if (s->body)
            ir_walk(s->body, set_seg, &w);
        if (s->els)
            ir_walk(s->els, set_seg, &w);
    }
    ir_walk(o->k->body, find_crossing, o);
    return 0;
}

/* ---- phase C: building tasks ---- */

static ir_task *new_task(off_ctx *o, int kind)
{
    char name[IR_NAME_MAX];
    snprintf(name, sizeof name, "%.*s#%u", IR_NAME_MAX - 12, o->k->name, o->ntasks);
    ir_task *t = ir_task_new(kind, name, o->k->fields, o->k->nfields, o->arg_types, o->nargs);
    if (t)
        t->gtmp_bytes = o->gtmp_bytes;
    return t;
}

static int push(off_ctx *o, ir_task *t)
{
    if (!t)
        return off_fail(o, NULL, "out of memory");
    if (o->ntasks == o->cap) {
        uint32_t cap = o->cap ? 2 * o->cap : 8;
        ir_task **g = realloc(o->tasks, cap * sizeof *g);
        if (!g) {
            ir_task_free(t);
            return off_fail(o, NULL, "out of memory");
        }
        o->tasks = g;
        o->cap = cap;
    }
    /* a serial segment is cloned whole: values only later tasks used are dead here */
    pass_drop_dead(t);
    char msg[512];
    if (ir_verify(t, msg, sizeof msg) != 0) {
        snprintf(o->err, o->n, "offload '%s': produced an invalid task: %s", o->k->name, msg);
        ir_task_free(t);
        return -1;
    }
    if (pass_compute_meta(t) != 0) {
        ir_task_free(t);
        return off_fail(o, NULL, "out of memory");
    }
    o->tasks[o->ntasks++] = t;
    return 0;
}

static int list_tasks(off_ctx *o, uint32_t slot)
{
    const ir_field_info *f = &o->k->fields[slot];
    for (int l = 1; l < f->nlevels - 1; l++) {
        ir_task *c = new_task(o, IR_TASK_CLEAR_LIST);
        if (c) {
            c->field = (uint16_t)slot;
            c->level = (uint8_t)l;
        }
        if (push(o, c))
            return -1;
        ir_task *g = new_task(o, IR_TASK_LISTGEN);
        if (g) {
            g->field = (uint16_t)slot;
            g->level = (uint8_t)l;
        }
        if (push(o, g))
            return -1;
    }
    return 0;
}

/* The (slot, level) pairs whose allocator a deactivation in the block feeds. */
typedef struct gc_need {
    off_ctx *o;
    uint32_t n;
    uint16_t slot[32];
    uint8_t level[32];
} gc_need;

static void need_gc(gc_need *g, uint32_t slot, uint32_t level)
{
    for (uint32_t i = 0; i < g->n; i++)
        if (g->slot[i] == slot && g->level[i] == level)
            return;
    if (g->n < 32) {
        g->slot[g->n] = (uint16_t)slot;
        g->level[g->n++] = (uint8_t)level;
    }
}

static int find_gc(ir_stmt *s, void *ud)
{
    gc_need *g = ud;
    const ir_task *k = g->o->k;
    if (s->op != IR_DEACTIVATE && s->op != IR_SN_DEACTIVATE)
        return 0;
    if (s->field >= k->nfields)
        return 0;
    const ir_field_info *f = &k->fields[s->field];
    int level = s->level;
    if (s->op == IR_DEACTIVATE)
        for (level = f->nlevels - 1; level >= 1 && !ir_level_is_sparse(&f->levels[level]);)
            level--;
    if (level >= 1 && level < f->nlevels && ir_level_has_alloc(&f->levels[level]))
        need_gc(g, s->field, (uint32_t)level);
    return 0;
}

/* Inside a struct_for over slot f, the element f[I] at exactly the loop index is active: the
 * loop visits active elements only. Writing it needs no activation on any level, which keeps
 * masks out of the task's writes (the SFG can then keep lists and fuse). The same holds for
 * g[I] when g is placed in f's tree (its cells are f's). Not when the task deactivates cells of
 * that tree: another iteration could free the block under the write. */
typedef struct own_ctx {
    const ir_task *t;
    const ir_stmt *loop;
    uint32_t bits;
    int deactivates;
} own_ctx;

static int find_deactivate(ir_stmt *s, void *ud)
{
    own_ctx *c = ud;
    if ((s->op == IR_DEACTIVATE || s->op == IR_SN_DEACTIVATE) &&
        ir_same_tree(c->t, s->field, c->loop->field))
        c->deactivates = 1;
    return 0;
}

static int demote_own(ir_stmt *s, void *ud)
{
    own_ctx *c = ud;
    if ((s->op != IR_GLOBAL_PTR && s->op != IR_ACTIVATE) ||
        !ir_same_tree(c->t, s->field, c->loop->field))
        return 0;
    for (int i = 0; i < s->nargs; i++) {
        const ir_stmt *a = s->arg[i];
        if (a->op != IR_LOOP_INDEX || a->loop != c->loop || a->index != (uint32_t)i)
            return 0;
    }
    s->demoted |= c->bits;
    return 0;
}

static void demote_own_elements(ir_task *t)
{
    ir_stmt *loop = t->body->last;
    const ir_field_info *f = &t->fields[loop->field];
    own_ctx c = {t, loop, 0, 0};
    for (int l = 1; l < f->nlevels; l++)
        if (ir_level_is_sparse(&f->levels[l]))
            c.bits |= 1u << l;
    ir_walk(loop->body, find_deactivate, &c);
    if (c.bits && !c.deactivates && f->dim > 0)
        ir_walk(loop->body, demote_own, &c);
}

static int segment_task(off_ctx *o, ir_block *scratch, int kind)
{
    ir_task *t = new_task(o, kind);
    if (!t)
        return off_fail(o, NULL, "out of memory");
    o->cur = t;
    o->prologue = ir_block_new(t, NULL);
    o->nmemo = 0;
    int rc = o->prologue ? ir_block_clone_into(t, t->body, o->k, scratch, off_outer, o) : -1;
    for (uint32_t i = 0; i < o->nmemo; i++)
        o->memo_src[i]->mark = 0;
    if (rc != 0) {
        ir_task_free(t);
        if (!o->err[0])
            off_fail(o, NULL, "out of memory");
        return -1;
    }
    for (ir_stmt *s = o->prologue->last, *prev; s; s = prev) {
        prev = s->prev;
        ir_unlink(s);
        ir_prepend(t->body, s);
    }
    if (kind == IR_TASK_STRUCT_FOR) {
        ir_stmt *loop = t->body->last;
        t->field = loop->field;
        t->level = (uint8_t)(t->fields[loop->field].nlevels - 2);
        demote_own_elements(t);
    }
    return push(o, t);
}

static int build(off_ctx *o)
{
    ir_stmt *s = o->k->body->first;
    while (s) {
        ir_block *scratch = ir_block_new(o->k, NULL);
        if (!scratch)
            return off_fail(o, NULL, "out of memory");
        int kind = IR_TASK_SERIAL;
        if (is_parallel_loop(s)) {
            kind = s->op == IR_STRUCT_FOR ? IR_TASK_STRUCT_FOR : IR_TASK_RANGE_FOR;
            ir_stmt *next = s->next;
            ir_unlink(s);
            ir_append(scratch, s);
            s = next;
        } else {
            while (s && !is_parallel_loop(s)) {
                ir_stmt *next = s->next;
                ir_unlink(s);
                ir_append(scratch, s);
                s = next;
            }
        }
        /* pure serial code whose values later tasks recompute or never use: nothing to run */
        if (kind == IR_TASK_SERIAL && !pass_block_has_effect(scratch))
            continue;
        if (kind == IR_TASK_STRUCT_FOR) {
            uint32_t slot = scratch->first->field;
            if (slot >= o->k->nfields || o->k->fields[slot].nlevels < 2)
                return off_fail(o, scratch->first, "struct_for over a field without levels");
            if (list_tasks(o, slot))
                return -1;
        }
        if (segment_task(o, scratch, kind))
            return -1;
        gc_need g = {.o = o};
        ir_walk(scratch, find_gc, &g);
        for (uint32_t i = 0; i < g.n; i++) {
            ir_task *gt = new_task(o, IR_TASK_GC);
            if (gt) {
                gt->field = g.slot[i];
                gt->level = g.level[i];
            }
            if (push(o, gt))
                return -1;
        }
    }
    return 0;
}

static void ctx_free(off_ctx *o)
{
    free(o->seg);
    free(o->remat);
    free(o->carry);
    free(o->gtmp_off);
    free(o->memo_src);
    free(o->memo_dst);
    free(o->arg_types);
    if (o->k)
        ir_task_free(o->k);
}

int passes_offload(ir_task *kernel, ir_task ***tasks, uint32_t *ntasks, char *err, size_t n)
{
    char dummy[8];
    if (!err || !n) {
        err = dummy;
        n = sizeof dummy;
    }
    err[0] = 0;
    if (!kernel || !tasks || !ntasks) {
        snprintf(err, n, "offload: no kernel or output");
        return -1;
    }
    *tasks = NULL;
    *ntasks = 0;
    if (kernel->kind != IR_TASK_KERNEL) {
        snprintf(err, n, "offload '%s': not a whole kernel (task kind %u)", kernel->name,
                 kernel->kind);
        return -1;
    }
    if (ir_verify(kernel, err, n) != 0)
        return -1;
    off_ctx o;
    memset(&o, 0, sizeof o);
    o.err = err;
    o.n = n;
    o.k = ir_task_clone(kernel);
    if (!o.k) {
        snprintf(err, n, "offload '%s': out of memory", kernel->name);
        return -1;
    }
    uint32_t ns = ir_task_number(o.k);
    o.nstmt = ns;
    o.seg = calloc(ns + 1, sizeof *o.seg);
    o.remat = calloc(ns + 1, 1);
    o.carry = calloc(ns + 1, 1);
    o.gtmp_off = calloc(ns + 1, sizeof *o.gtmp_off);
    o.memo_cap = ns + 1;
    o.memo_src = calloc(o.memo_cap, sizeof *o.memo_src);
    o.memo_dst = calloc(o.memo_cap, sizeof *o.memo_dst);
    o.arg_types = calloc(kernel->nargs + 1, sizeof *o.arg_types);
    int rc = -1;
    if (!o.seg || !o.remat || !o.carry || !o.gtmp_off || !o.memo_src || !o.memo_dst ||
        !o.arg_types) {
        off_fail(&o, NULL, "out of memory");
        goto done;
    }
    if (kernel->nargs)
        memcpy(o.arg_types, kernel->arg_types, kernel->nargs * sizeof *o.arg_types);
    o.nargs = kernel->nargs;
    o.gtmp_arg = kernel->nargs;
    if (analyze(&o) || off_carry(&o))
        goto done;
    if (o.gtmp_bytes)
        o.arg_types[o.nargs++] = IR_I64;
    rc = build(&o);
done:
    if (rc != 0) {
        for (uint32_t i = 0; i < o.ntasks; i++)
            ir_task_free(o.tasks[i]);
        free(o.tasks);
    } else {
        *tasks = o.tasks;
        *ntasks = o.ntasks;
    }
    ctx_free(&o);
    return rc;
}
