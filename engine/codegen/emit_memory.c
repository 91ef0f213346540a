/* Field and temporary memory: gtmp_ptr, global_load (inactive elements read the background),
 * global_store and atomics (atomicrmw, or a compare-and-swap loop where no instruction exists:
 * mul, div, float min/max). */
#define _GNU_SOURCE
#include <stddef.h>

#include "engine/codegen/cg_internal.h"
#include "sparse/runtime/runtime.h"

/* The kernel's global temporaries: scalar argument `index` holds the buffer's address. */
LLVMValueRef cg_emit_gtmp_ptr(cg_fn *f, const ir_stmt *s)
{
    if (s->index >= f->task->nargs) {
        cg_fail(f, "gtmp_ptr: argument %u (the buffer's address) out of range (%u arguments)",
                s->index, f->task->nargs);
        return NULL;
    }
    LLVMValueRef base = LLVMBuildIntToPtr(f->eb, cg_arg(f, IR_I64, s->index), f->t_ptr, "gtmp");
    LLVMValueRef off = LLVMConstInt(f->t_i64, (unsigned long long)s->ival, 1);
    return LLVMBuildGEP2(f->b, f->t_i8, base, &off, 1, "gtmp.at");
}

/* A field pointer that may be NULL: an sn_field_ptr without activation (unless a fast copy
 * knows its address is valid). */
static int may_be_null_in(cg_fn *f, const ir_stmt *ptr)
{
    if (f->fast && f->fast->nonnull && cg_fast_access(f->fast, ptr))
        return 0;
    if (cg_cread_nonnull(f, ptr))
        return 0;
    return ptr->op == IR_SN_FIELD_PTR && !ptr->activate;
}
#define may_be_null(ptr) may_be_null_in(f, ptr)

static int check_ptr(cg_fn *f, const ir_stmt *ptr)
{
    if (ptr && (ptr->op == IR_SN_FIELD_PTR || ptr->op == IR_GTMP_PTR))
        return 0;
    return cg_fail(f, "pointer operand is %s, not sn_field_ptr or gtmp_ptr",
                   ptr ? ir_op_name(ptr->op) : "missing");
}

/* The background of the field behind an sn_field_ptr, as the element type. */
static LLVMValueRef background(cg_fn *f, const ir_stmt *ptr, LLVMBuilderRef b)
{
    const ir_field_info *fi = &f->task->fields[ptr->field];
    LLVMValueRef bg = cg_rt_load(f, ptr->field, CG_AT_FIELD, 0,
                                 offsetof(plm_rt_field, background) + 4u * ptr->comp, f->t_f32);
    LLVMValueRef v;
    LLVMBuilderRef saved = f->b;
    f->b = b;
    v = cg_emit_cast(f, fi->elem, IR_F32, bg);
    f->b = saved;
    return v;
}

LLVMValueRef cg_emit_global_load(cg_fn *f, const ir_stmt *s)
{
    const ir_stmt *ptr = s->arg[0];
    if (check_ptr(f, ptr) != 0)
        return NULL;
    LLVMValueRef p = cg_val(f, ptr);
    if (!p)
        return NULL;
    LLVMTypeRef mt = cg_mem_type(f, s->ty);
    if (!may_be_null(ptr)) {
        LLVMValueRef v = LLVMBuildLoad2(f->b, mt, p, "gld");
        cg_fast_mark_alias(f, v, ptr);
        return s->ty == IR_BOOL ? LLVMBuildTrunc(f->b, v, f->t_i1, "") : v;
    }
    const ir_field_info *fi = &f->task->fields[ptr->field];
    LLVMValueRef known_null = cg_fast_isnull(f, ptr);
    if (fi->elem == IR_F32 && s->ty == IR_F32) {
        /* No branch: read the background where it is stored, in the runtime */
        LLVMValueRef bgp = LLVMBuildGEP2(
            f->eb, f->t_i8, cg_runtime(f, ptr->field),
            (LLVMValueRef[]){LLVMBuildAdd(
                f->eb,
                LLVMBuildMul(f->eb, LLVMBuildZExt(f->eb, cg_field_id(f, ptr->field), f->t_i64, ""),
                             LLVMConstInt(f->t_i64, sizeof(plm_rt_field), 0), ""),
                LLVMConstInt(f->t_i64,
                             offsetof(plm_runtime, fields) + offsetof(plm_rt_field, background) +
                                 4u * ptr->comp,
                             0),
                "")},
            1, "bgp");
        LLVMValueRef at = LLVMBuildSelect(
            f->b, known_null ? known_null : LLVMBuildIsNull(f->b, p, ""), bgp, p, "");
        LLVMValueRef v = LLVMBuildLoad2(f->b, mt, at, "gld");
        cg_fast_mark_alias(f, v, ptr);
        return v;
    }
    LLVMValueRef bg = background(f, ptr, f->eb);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef ld = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "gld.active");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "gld.done");
    LLVMBuildCondBr(f->b, known_null ? known_null : LLVMBuildIsNull(f->b, p, ""), done, ld);
    LLVMPositionBuilderAtEnd(f->b, ld);
    LLVMValueRef v = LLVMBuildLoad2(f->b, mt, p, "gld");
    cg_fast_mark_alias(f, v, ptr);
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, done);
    return cg_phi2(f, mt, bg, pre, v, ld, "gld");
}

/* Runs the rest of the statement only when p is not NULL; returns the block to join. */
static LLVMBasicBlockRef skip_if_null(cg_fn *f, LLVMValueRef p, LLVMBasicBlockRef *pre)
{
    *pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "mem.nonnull");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "mem.done");
    LLVMBuildCondBr(f->b, LLVMBuildIsNull(f->b, p, ""), done, go);
    LLVMPositionBuilderAtEnd(f->b, go);
    return done;
}

int cg_emit_global_store(cg_fn *f, const ir_stmt *s)
{
    const ir_stmt *ptr = s->arg[0];
    if (check_ptr(f, ptr) != 0)
        return -1;
    LLVMValueRef p = cg_val(f, ptr), v = p ? cg_val(f, s->arg[1]) : NULL;
    if (!v)
        return -1;
    if (s->arg[1]->ty == IR_BOOL)
        v = LLVMBuildZExt(f->b, v, f->t_i8, "");
    LLVMBasicBlockRef pre, done = may_be_null(ptr) ? skip_if_null(f, p, &pre) : NULL;
    cg_fast_mark_alias(f, LLVMBuildStore(f->b, v, p), ptr);
    if (done) {
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
    }
    return 0;
}

/* old = *p; *p = old op v, retried until no other thread changed *p in between. */
static LLVMValueRef cas_loop(cg_fn *f, int sub, ir_type ty, LLVMValueRef p, LLVMValueRef v)
{
    LLVMBuilderRef b = f->b;
    int fl = ir_type_is_float(ty);
    LLVMTypeRef lt = cg_type(f, ty);
    LLVMTypeRef it = ty == IR_F64 || ty == IR_I64 ? f->t_i64 : f->t_i32;
    static const int binop[] = {[IR_ATOMIC_MIN] = IR_MIN, [IR_ATOMIC_MAX] = IR_MAX,
                                [IR_ATOMIC_MUL] = IR_MUL, [IR_ATOMIC_DIV] = IR_DIV};
    LLVMValueRef init = LLVMBuildLoad2(b, it, p, "cas.init");
    LLVMSetOrdering(init, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(init, (unsigned)ir_type_size(ty));
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "cas.loop");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "cas.done");
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef cur = LLVMBuildPhi(b, it, "cas.cur");
    LLVMValueRef curv = fl ? LLVMBuildBitCast(b, cur, lt, "") : cur;
    LLVMValueRef nv = cg_emit_binary(f, binop[sub], ty, curv, v);
    if (!nv)
        return NULL;
    LLVMValueRef nbits = fl ? LLVMBuildBitCast(f->b, nv, it, "") : nv;
    LLVMValueRef pair = LLVMBuildAtomicCmpXchg(f->b, p, cur, nbits, LLVMAtomicOrderingMonotonic,
                                               LLVMAtomicOrderingMonotonic, 0);
    LLVMValueRef got = LLVMBuildExtractValue(f->b, pair, 0, "cas.got");
    LLVMValueRef ok = LLVMBuildExtractValue(f->b, pair, 1, "cas.ok");
    LLVMBasicBlockRef end = LLVMGetInsertBlock(f->b); /* int div adds no blocks, pow would */
    LLVMBuildCondBr(f->b, ok, done, loop);
    LLVMValueRef ins[2] = {init, got};
    LLVMBasicBlockRef from[2] = {pre, end};
    LLVMAddIncoming(cur, ins, from, 2);
    LLVMPositionBuilderAtEnd(f->b, done);
    return fl ? LLVMBuildBitCast(f->b, cur, lt, "old") : cur;
}

LLVMValueRef cg_atomic_rmw(cg_fn *f, int sub, ir_type ty, LLVMValueRef p, LLVMValueRef v)
{
    int fl = ir_type_is_float(ty), sg = ir_type_is_signed(ty);
    LLVMAtomicRMWBinOp op;
    int direct = 1;
    switch (sub) {
    case IR_ATOMIC_ADD: op = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; break;
    case IR_ATOMIC_SUB: op = fl ? LLVMAtomicRMWBinOpFSub : LLVMAtomicRMWBinOpSub; break;
    case IR_ATOMIC_MIN:
        op = sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin;
        direct = !fl;
        break;
    case IR_ATOMIC_MAX:
        op = sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax;
        direct = !fl;
        break;
    case IR_ATOMIC_MUL:
    case IR_ATOMIC_DIV:
        op = LLVMAtomicRMWBinOpXchg;
        direct = 0;
        break;
    default: cg_fail(f, "unknown atomic op %d", sub); return NULL;
    }
    if (direct)
        return LLVMBuildAtomicRMW(f->b, op, p, v, LLVMAtomicOrderingMonotonic, 0);
    return cas_loop(f, sub, ty, p, v);
}

LLVMValueRef cg_emit_atomic(cg_fn *f, const ir_stmt *s)
{
    const ir_stmt *ptr = s->arg[0];
    if (check_ptr(f, ptr) != 0)
        return NULL;
    LLVMValueRef p = cg_val(f, ptr), v = p ? cg_val(f, s->arg[1]) : NULL;
    if (!v)
        return NULL;
    ir_type ty = s->ty;
    if (!ir_type_is_float(ty) && !ir_type_is_int(ty)) {
        cg_fail(f, "atomic %s on %s", ir_atomic_name(s->sub), ir_type_name(ty));
        return NULL;
    }
    LLVMBasicBlockRef pre = NULL, done = may_be_null(ptr) ? skip_if_null(f, p, &pre) : NULL;
    LLVMValueRef old = cg_reduce_takes(f, s) ? cg_reduce_emit(f, s, p, v)
                                             : cg_atomic_rmw(f, s->sub, ty, p, v);
    if (!old)
        return NULL;
    if (done) {
        LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
        LLVMValueRef phi = LLVMBuildPhi(f->b, cg_type(f, ty), "old");
        LLVMValueRef ins[2] = {LLVMConstNull(cg_type(f, ty)), old};
        LLVMBasicBlockRef bl[2] = {pre, from};
        LLVMAddIncoming(phi, ins, bl, 2);
        old = phi;
    }
    return old;
}
