/* Values that cross tasks. A producer stores a carried SSA value into its gtmp slot right after
 * computing it; a carried alloca becomes its slot outright (zeroed where the alloca stood, as an
 * alloca starts at zero, since the buffer is reused by every launch). Consumers get, in their
 * prologue, either a recomputation of a pure expression or a load of the slot. */
#include "engine/passes/offload_internal.h"

#include <stdio.h>
#include <stdlib.h>

static int is_value_type(ir_type t)
{
    return t >= IR_BOOL && t <= IR_F64;
}

static ir_stmt *zero(ir_builder *b, ir_type t)
{
    return ir_type_is_float(t) ? ir_const_float(b, t, 0.0) : ir_const_int(b, t, 0);
}

typedef struct alloca_use {
    off_ctx *o;
    int failed;
} alloca_use;

/* load/store of a carried alloca -> global_load/global_store of its slot */
static int rewrite_use(ir_stmt *s, void *ud)
{
    alloca_use *u = ud;
    off_ctx *o = u->o;
    if ((s->op != IR_LOAD && s->op != IR_STORE) || !o->carry[s->arg[0]->id] ||
        s->arg[0]->op != IR_ALLOCA)
        return 0;
    ir_stmt *a = s->arg[0];
    ir_builder b;
    ir_builder_init(&b, o->k);
    ir_builder_before(&b, s);
    ir_stmt *p = pass_gtmp_ptr(&b, IR_POINTEE(a->ty), o->gtmp_arg, o->gtmp_off[a->id] - 1);
    if (s->op == IR_LOAD) {
        ir_stmt *l = ir_global_load(&b, p);
        if (!l)
            return u->failed = 1;
        s->repl = l;
    } else if (!ir_global_store(&b, p, s->arg[1])) {
        return u->failed = 1;
    }
    /* unlinking inside the walk is safe: the walk has read s->next and s has no blocks */
    return 0;
}

static void unlink_rewritten(ir_block *blk, off_ctx *o)
{
    for (ir_stmt *s = blk->first, *next; s; s = next) {
        next = s->next;
        if (s->body)
            unlink_rewritten(s->body, o);
        if (s->els)
            unlink_rewritten(s->els, o);
        if ((s->op == IR_LOAD || s->op == IR_STORE) && s->arg[0]->op == IR_ALLOCA &&
            o->carry[s->arg[0]->id])
            ir_unlink(s);
    }
}

typedef struct collect {
    off_ctx *o;
    ir_stmt **by_id;
} collect;

static int collect_carried(ir_stmt *s, void *ud)
{
    collect *c = ud;
    if (s->id < c->o->nstmt && c->o->carry[s->id])
        c->by_id[s->id] = s;
    return 0;
}

/* Gives s its slot and makes its producer fill it. */
static int place(off_ctx *o, ir_stmt *s)
{
    ir_type vt = s->op == IR_ALLOCA ? IR_POINTEE(s->ty) : s->ty;
    if (!is_value_type(vt))
        return off_fail(o, s, "a value of this type cannot be handed to a later task");
    o->gtmp_off[s->id] = o->gtmp_bytes + 1;
    uint32_t off = o->gtmp_bytes;
    o->gtmp_bytes += 8;
    ir_builder b;
    ir_builder_init(&b, o->k);
    if (s->next)
        ir_builder_before(&b, s->next);
    else
        ir_builder_at_end(&b, s->parent);
    ir_stmt *p = pass_gtmp_ptr(&b, vt, o->gtmp_arg, off);
    ir_stmt *v = s->op == IR_ALLOCA ? zero(&b, vt) : s;
    if (!ir_global_store(&b, p, v))
        return off_fail(o, s, "out of memory");
    return 0;
}

int off_carry(off_ctx *o)
{
    ir_stmt **by_id = calloc(o->nstmt + 1, sizeof *by_id);
    if (!by_id)
        return off_fail(o, NULL, "out of memory");
    collect c = {o, by_id};
    ir_walk(o->k->body, collect_carried, &c);
    int rc = 0;
    /* slots in statement order, so the layout is the same on every run */
    for (uint32_t id = 0; id < o->nstmt && !rc; id++)
        if (by_id[id])
            rc = place(o, by_id[id]);
    if (!rc) {
        alloca_use u = {o, 0};
        ir_walk(o->k->body, rewrite_use, &u);
        if (u.failed)
            rc = off_fail(o, NULL, "out of memory");
    }
    if (!rc) {
        ir_task_replace_uses(o->k);
        unlink_rewritten(o->k->body, o);
        for (uint32_t id = 0; id < o->nstmt; id++)
            if (by_id[id] && by_id[id]->op == IR_ALLOCA)
                ir_unlink(by_id[id]);
    }
    free(by_id);
    return rc;
}

/* ---- consumers ---- */

static ir_stmt *memo_get(off_ctx *o, const ir_stmt *s)
{
    return s->mark ? o->memo_dst[s->mark - 1] : NULL;
}

static void memo_put(off_ctx *o, ir_stmt *s, ir_stmt *d)
{
    if (o->nmemo < o->memo_cap) {
        o->memo_src[o->nmemo] = s;
        o->memo_dst[o->nmemo] = d;
        s->mark = ++o->nmemo;
    }
}

static ir_stmt *recompute(off_ctx *o, ir_stmt *s)
{
    ir_stmt *d = ir_stmt_new(o->cur, s->op, s->ty);
    if (!d)
        return NULL;
    d->sub = s->sub;
    d->nargs = s->nargs;
    d->comp = s->comp;
    d->field = s->field;
    d->index = s->index;
    d->demoted = s->demoted;
    d->ival = s->ival;
    d->fval = s->fval;
    for (int i = 0; i < s->nargs; i++)
        if (!(d->arg[i] = off_outer(s->arg[i], o)))
            return NULL;
    ir_append(o->prologue, d);
    return d;
}

ir_stmt *off_outer(ir_stmt *s, void *ud)
{
    off_ctx *o = ud;
    ir_stmt *d = memo_get(o, s);
    if (d)
        return d;
    if (s->id < o->nstmt && o->gtmp_off[s->id] && s->op != IR_ALLOCA) {
        ir_builder b;
        ir_builder_init(&b, o->cur);
        ir_builder_at_end(&b, o->prologue);
        ir_stmt *p = pass_gtmp_ptr(&b, s->ty, o->gtmp_arg, o->gtmp_off[s->id] - 1);
        d = ir_global_load(&b, p);
    } else if (s->id < o->nstmt && off_remat(o, s, 0)) {
        d = recompute(o, s);
    } else {
        off_fail(o, s, "value used by a later task was not handed over (offload bug)");
        return NULL;
    }
    if (d)
        memo_put(o, s, d);
    return d;
}
