/* Reductions into a 0-D field from a parallel loop (`sum[] += a[I] * b[I]`), accumulated per
 * call of the task function and written with one atomic at its end.
 *
 * Why. Every iteration's atomic on the one shared element makes the threads take turns on its
 * cache line; a dot product over 300k voxels spent ~9 ns per voxel in it on 2 cores. A call
 * runs one chunk of the loop, so the shared element now sees one atomic per chunk.
 *
 * Which atomics. In a CPU range_for or struct_for task, a slot whose field has no axes (one
 * element) qualifies when everything the task does to it is atomics of one operation (add,
 * sub, min or max), one type and one component inside the parallel loop whose old value
 * nothing uses (a vector's components in one loop keep their atomics): no
 * load, store, activation query or change, nor an atomic in the prologue. Then its atomics add
 * into an accumulator (an alloca starting at the operation's identity) and remember the
 * element's address; the end of the function applies the accumulator there with the atomic
 * the loop would have used, once, if an iteration reached it. The element's activation is
 * unchanged: the address still comes from the same (activating) chain, per iteration.
 *
 * Results. Integer sums and min/max are exact. A float sum adds the chunk's terms in loop
 * order before one atomic, which rounds differently from one atomic per term; with threads
 * the terms were in no fixed order before either. Deterministic mode runs such a task as one
 * chunk (exec.c), so its result is still the same from run to run. */
#define _GNU_SOURCE
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"

typedef struct reduce_slot {
    int state;          /* 0 unseen, 1 qualifies so far, -1 does not */
    uint8_t sub;        /* the atomic operation */
    uint8_t comp;       /* the component (one element, but a vector has several) */
    ir_type ty;
    LLVMValueRef acc;   /* alloca of the element type */
    LLVMValueRef where; /* alloca ptr: the element's address, NULL until an iteration adds */
} reduce_slot;

struct cg_reduce {
    uint32_t nslots;
    reduce_slot slot[];
};

typedef struct scan {
    const ir_task *t;
    reduce_slot *slot;
    const ir_stmt *loop;
} scan;

static int qualifying_op(int sub)
{
    return sub == IR_ATOMIC_ADD || sub == IR_ATOMIC_SUB || sub == IR_ATOMIC_MIN ||
           sub == IR_ATOMIC_MAX;
}

static void disqualify(scan *sc, unsigned field)
{
    if (field < sc->t->nfields)
        sc->slot[field].state = -1;
}

static int inside(const ir_stmt *s, const ir_stmt *loop)
{
    for (const ir_block *b = s->parent; b && b->owner; b = b->owner->parent)
        if (b->owner == loop)
            return 1;
    return 0;
}

/* Every use of a slot's elements and activation; and any use of an atomic's old value. */
static int look(ir_stmt *s, void *ud)
{
    scan *sc = ud;
    for (unsigned i = 0; i < s->nargs; i++)
        if (s->arg[i] && s->arg[i]->op == IR_ATOMIC && s->arg[i]->arg[0] &&
            s->arg[i]->arg[0]->op == IR_SN_FIELD_PTR)
            disqualify(sc, s->arg[i]->arg[0]->field);
    switch (s->op) {
    case IR_SN_IS_ACTIVE:
    case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
    case IR_IS_ACTIVE:
    case IR_ACTIVATE:
    case IR_DEACTIVATE:
        disqualify(sc, s->field);
        break;
    case IR_GLOBAL_LOAD:
    case IR_GLOBAL_STORE:
        if (s->arg[0] && s->arg[0]->op == IR_SN_FIELD_PTR)
            disqualify(sc, s->arg[0]->field);
        break;
    case IR_ATOMIC: {
        const ir_stmt *p = s->arg[0];
        if (!p || p->op != IR_SN_FIELD_PTR || p->field >= sc->t->nfields)
            break;
        reduce_slot *r = &sc->slot[p->field];
        int ok = qualifying_op(s->sub) && inside(s, sc->loop) &&
                 (ir_type_is_float(s->ty) || ir_type_is_int(s->ty));
        if (r->state == 0 && ok) {
            r->state = 1;
            r->sub = s->sub;
            r->comp = p->comp;
            r->ty = s->ty;
        } else if (!ok || r->sub != s->sub || r->ty != s->ty || r->comp != p->comp) {
            r->state = -1;
        }
        break;
    }
    default: break;
    }
    return 0;
}

/* The value x with x op v = v for every v. */
static LLVMValueRef identity(cg_fn *f, int sub, ir_type ty)
{
    LLVMTypeRef lt = cg_type(f, ty);
    int fl = ir_type_is_float(ty), sg = ir_type_is_signed(ty);
    unsigned bits = ir_type_size(ty) * 8u;
    if (sub == IR_ATOMIC_ADD || sub == IR_ATOMIC_SUB)
        return fl ? LLVMConstReal(lt, -0.0) : LLVMConstInt(lt, 0, 0); /* -0 + -0 stays -0 */
    int lowest = sub == IR_ATOMIC_MAX;
    if (fl)
        return LLVMConstReal(lt, lowest ? -INFINITY : INFINITY);
    unsigned long long all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    if (!sg)
        return LLVMConstInt(lt, lowest ? 0 : all, 0);
    unsigned long long top = 1ull << (bits - 1);
    return LLVMConstInt(lt, lowest ? top : (all >> 1), 0);
}

int cg_reduce_setup(cg_fn *f, const ir_stmt *loop)
{
    const ir_task *t = f->task;
    if (f->target != CG_TARGET_CPU || !loop || !t->nfields)
        return 0;
    cg_reduce *r = calloc(1, sizeof *r + t->nfields * sizeof r->slot[0]);
    if (!r)
        return cg_fail(f, "out of memory");
    r->nslots = t->nfields;
    scan sc = {t, r->slot, loop};
    ir_walk(t->body, look, &sc);
    int any = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        reduce_slot *s = &r->slot[i];
        if (s->state != 1 || t->fields[i].dim != 0) {
            s->state = -1;
            continue;
        }
        any = 1;
        s->acc = cg_entry_alloca(f, cg_type(f, s->ty), "red.acc");
        s->where = cg_entry_alloca(f, f->t_ptr, "red.at");
        LLVMBuildStore(f->eb, identity(f, s->sub, s->ty), s->acc);
        LLVMBuildStore(f->eb, LLVMConstNull(f->t_ptr), s->where);
    }
    if (!any) {
        free(r);
        return 0;
    }
    f->reduce = r;
    return 0;
}

void cg_reduce_free(cg_reduce *r)
{
    free(r);
}

int cg_reduce_takes(const cg_fn *f, const ir_stmt *s)
{
    const cg_reduce *r = f->reduce;
    return r && s->op == IR_ATOMIC && s->arg[0] && s->arg[0]->op == IR_SN_FIELD_PTR &&
           s->arg[0]->field < r->nslots && r->slot[s->arg[0]->field].state == 1;
}

/* Min and max through the IR's own operations (their NaN rules); sums as additions (a
 * subtraction's terms add up, and the end subtracts the total). */
static LLVMValueRef combine(cg_fn *f, int sub, ir_type ty, LLVMValueRef acc, LLVMValueRef v)
{
    int op = sub == IR_ATOMIC_MIN ? IR_MIN : sub == IR_ATOMIC_MAX ? IR_MAX : IR_ADD;
    return cg_emit_binary(f, op, ty, acc, v);
}

LLVMValueRef cg_reduce_emit(cg_fn *f, const ir_stmt *s, LLVMValueRef p, LLVMValueRef v)
{
    reduce_slot *r = &f->reduce->slot[s->arg[0]->field];
    LLVMValueRef acc = LLVMBuildLoad2(f->b, cg_type(f, r->ty), r->acc, "red.cur");
    LLVMValueRef nv = combine(f, r->sub, r->ty, acc, v);
    if (!nv)
        return NULL;
    LLVMBuildStore(f->b, nv, r->acc);
    LLVMBuildStore(f->b, p, r->where);
    /* nothing reads the old value (cg_reduce_setup checked) */
    return LLVMGetUndef(cg_type(f, s->ty));
}

LLVMValueRef cg_reduce_emit_if(cg_fn *f, const ir_stmt *s, LLVMValueRef p, LLVMValueRef v,
                               LLVMValueRef cond)
{
    reduce_slot *r = &f->reduce->slot[s->arg[0]->field];
    LLVMValueRef acc = LLVMBuildLoad2(f->b, cg_type(f, r->ty), r->acc, "red.cur");
    LLVMValueRef nv = combine(f, r->sub, r->ty, acc, v);
    if (!nv)
        return NULL;
    LLVMBuildStore(f->b, LLVMBuildSelect(f->b, cond, nv, acc, ""), r->acc);
    LLVMValueRef at = LLVMBuildLoad2(f->b, f->t_ptr, r->where, "");
    LLVMBuildStore(f->b, LLVMBuildSelect(f->b, cond, p, at, ""), r->where);
    return LLVMGetUndef(cg_type(f, s->ty));
}

int cg_reduce_finish(cg_fn *f)
{
    cg_reduce *r = f->reduce;
    if (!r)
        return 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        reduce_slot *s = &r->slot[i];
        if (s->state != 1)
            continue;
        LLVMValueRef at = LLVMBuildLoad2(f->b, f->t_ptr, s->where, "red.where");
        LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "red.flush");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "red.done");
        LLVMBuildCondBr(f->b, LLVMBuildIsNull(f->b, at, ""), done, go);
        LLVMPositionBuilderAtEnd(f->b, go);
        LLVMValueRef acc = LLVMBuildLoad2(f->b, cg_type(f, s->ty), s->acc, "red.total");
        if (!cg_atomic_rmw(f, s->sub, s->ty, at, acc))
            return -1;
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
    }
    return 0;
}
