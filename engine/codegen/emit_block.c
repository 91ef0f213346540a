/* Statements to LLVM: the dispatch, control flow (if, serial loops, while, break, continue),
 * locals, scalar arguments, and the statement -> value map. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"
#include "engine/codegen/toolchain.h"

int cg_fail(cg_fn *f, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (f->cur)
        cg_set_err(f->err, f->err_size, "task '%s' $%u (%s): %s", f->task->name, f->stmt_no,
                   ir_op_name(f->cur->op), msg);
    else
        cg_set_err(f->err, f->err_size, "task '%s': %s", f->task->name, msg);
    return -1;
}

LLVMValueRef cg_val(cg_fn *f, const ir_stmt *s)
{
    LLVMValueRef v = s ? cg_vmap_get(&f->vals, s) : NULL;
    if (!v)
        cg_fail(f, "an operand (%s) has no value: not emitted before its use",
                s ? ir_op_name(s->op) : "missing");
    return v;
}

LLVMTypeRef cg_type(cg_fn *f, ir_type t)
{
    if (IR_IS_PTR(t) || t == IR_CELL)
        return f->t_ptr;
    switch (t) {
    case IR_BOOL: return f->t_i1;
    case IR_I32:
    case IR_U32: return f->t_i32;
    case IR_I64: return f->t_i64;
    case IR_F32: return f->t_f32;
    case IR_F64: return f->t_f64;
    default: return f->t_void;
    }
}

LLVMTypeRef cg_mem_type(cg_fn *f, ir_type t)
{
    return t == IR_BOOL ? f->t_i8 : cg_type(f, t);
}

/* ---- blocks and loops ---- */

void cg_new_block_after_jump(cg_fn *f, const char *name)
{
    LLVMPositionBuilderAtEnd(f->b, LLVMAppendBasicBlockInContext(f->ctx, f->fn, name));
}

LLVMValueRef cg_phi2(cg_fn *f, LLVMTypeRef ty, LLVMValueRef a, LLVMBasicBlockRef from_a,
                     LLVMValueRef b, LLVMBasicBlockRef from_b, const char *name)
{
    LLVMValueRef phi = LLVMBuildPhi(f->b, ty, name);
    LLVMValueRef in[2] = {a, b};
    LLVMBasicBlockRef from[2] = {from_a, from_b};
    LLVMAddIncoming(phi, in, from, 2);
    return phi;
}

LLVMValueRef cg_entry_alloca(cg_fn *f, LLVMTypeRef ty, const char *name)
{
    return LLVMBuildAlloca(f->eb, ty, name);
}

int cg_push_loop(cg_fn *f, const ir_stmt *s, LLVMBasicBlockRef brk, LLVMBasicBlockRef cont)
{
    if (f->nloops == CG_MAX_LOOPS)
        return cg_fail(f, "loops nested deeper than %d", CG_MAX_LOOPS);
    cg_loop *l = &f->loops[f->nloops++];
    memset(l, 0, sizeof *l);
    l->stmt = s;
    l->brk = brk;
    l->cont = cont;
    return 0;
}

void cg_pop_loop(cg_fn *f)
{
    f->nloops--;
}

cg_loop *cg_find_loop(cg_fn *f, const ir_stmt *s)
{
    for (int i = f->nloops - 1; i >= 0; i--)
        if (f->loops[i].stmt == s)
            return &f->loops[i];
    return NULL;
}

/* Scalar argument n: an 8-byte slot read back by truncation (task_abi.h). */
LLVMValueRef cg_arg(cg_fn *f, ir_type ty, uint32_t index)
{
    LLVMValueRef idx = LLVMConstInt(f->t_i64, index, 0);
    LLVMValueRef p = LLVMBuildGEP2(f->eb, f->t_i64, f->args_arr, &idx, 1, "argp");
    LLVMValueRef raw = LLVMBuildLoad2(f->eb, f->t_i64, p, "arg");
    switch (ty) {
    case IR_BOOL: return LLVMBuildTrunc(f->eb, raw, f->t_i1, "argb");
    case IR_I32:
    case IR_U32: return LLVMBuildTrunc(f->eb, raw, f->t_i32, "argi");
    case IR_I64: return raw;
    case IR_F32:
        return LLVMBuildBitCast(f->eb, LLVMBuildTrunc(f->eb, raw, f->t_i32, ""), f->t_f32,
                                "argf");
    case IR_F64: return LLVMBuildBitCast(f->eb, raw, f->t_f64, "argd");
    default: return NULL;
    }
}

static int emit_if(cg_fn *f, const ir_stmt *s)
{
    LLVMValueRef c = cg_val(f, s->arg[0]);
    if (!c)
        return -1;
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "then");
    LLVMBasicBlockRef els = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "else");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "endif");
    LLVMBuildCondBr(f->b, c, then, els);
    LLVMPositionBuilderAtEnd(f->b, then);
    if (cg_emit_block(f, s->body) != 0)
        return -1;
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, els);
    if (s->els && cg_emit_block(f, s->els) != 0)
        return -1;
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, done);
    return 0;
}

/* A serial range_for (nested, or at the top of a serial task): the counter lives in an alloca
 * that mem2reg turns into a phi. */
static int emit_serial_range_for(cg_fn *f, const ir_stmt *s)
{
    LLVMValueRef begin = cg_val(f, s->arg[0]), end = cg_val(f, s->arg[1]);
    if (!begin || !end)
        return -1;
    ir_type ty = s->arg[0]->ty;
    LLVMTypeRef lty = cg_type(f, ty);
    LLVMValueRef ctr = cg_entry_alloca(f, lty, "i.addr");
    LLVMBuildStore(f->b, begin, ctr);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "for.head");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "for.body");
    LLVMBasicBlockRef latch = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "for.latch");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "for.end");
    LLVMBuildBr(f->b, head);
    LLVMPositionBuilderAtEnd(f->b, head);
    LLVMValueRef i = LLVMBuildLoad2(f->b, lty, ctr, "i");
    LLVMIntPredicate lt = ir_type_is_signed(ty) ? LLVMIntSLT : LLVMIntULT;
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, lt, i, end, "more"), body, done);
    LLVMPositionBuilderAtEnd(f->b, body);
    if (cg_push_loop(f, s, done, latch) != 0)
        return -1;
    f->loops[f->nloops - 1].index[0] = i;
    int rc = cg_emit_block(f, s->body);
    cg_pop_loop(f);
    if (rc != 0)
        return -1;
    LLVMBuildBr(f->b, latch);
    LLVMPositionBuilderAtEnd(f->b, latch);
    LLVMValueRef next = LLVMBuildAdd(f->b, LLVMBuildLoad2(f->b, lty, ctr, "i"),
                                     LLVMConstInt(lty, 1, 0), "i.next");
    LLVMBuildStore(f->b, next, ctr);
    LLVMBuildBr(f->b, head);
    LLVMPositionBuilderAtEnd(f->b, done);
    return 0;
}

static int emit_while(cg_fn *f, const ir_stmt *s)
{
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "while.body");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "while.end");
    LLVMBuildBr(f->b, body);
    LLVMPositionBuilderAtEnd(f->b, body);
    if (cg_push_loop(f, s, done, body) != 0)
        return -1;
    int rc = cg_emit_block(f, s->body);
    cg_pop_loop(f);
    if (rc != 0)
        return -1;
    LLVMBuildBr(f->b, body);
    LLVMPositionBuilderAtEnd(f->b, done);
    return 0;
}

static int emit_jump(cg_fn *f, const ir_stmt *s)
{
    cg_loop *l = cg_find_loop(f, s->loop);
    if (!l)
        return cg_fail(f, "%s outside its loop", ir_op_name(s->op));
    if (s->op == IR_BREAK && !l->brk)
        return cg_fail(f, "break out of a parallel loop");
    LLVMBuildBr(f->b, s->op == IR_BREAK ? l->brk : l->cont);
    cg_new_block_after_jump(f, "after.jump");
    return 0;
}

static LLVMValueRef emit_loop_index(cg_fn *f, const ir_stmt *s)
{
    cg_loop *l = cg_find_loop(f, s->loop);
    if (!l || s->index >= IR_MAX_DIM || !l->index[s->index]) {
        cg_fail(f, "loop index %u outside its loop", s->index);
        return NULL;
    }
    return l->index[s->index];
}

static int put(cg_fn *f, const ir_stmt *s, LLVMValueRef v)
{
    if (!v)
        return -1; /* the emitter said why */
    if (cg_vmap_put(&f->vals, s, v) != 0)
        return cg_fail(f, "out of memory");
    return 0;
}

int cg_emit_stmt(cg_fn *f, const ir_stmt *s)
{
    f->cur = s;
    LLVMValueRef a = NULL, b = NULL;
    if (f->lanes) {
        int r = cg_lanes_stmt(f, s);
        if (r)
            return r < 0 ? -1 : 0;
    }
    if (f->fast && cg_fast_skips(f->fast, s))
        return 0; /* a chain statement only recognized accesses used: they do without it */
    if (f->fast && s->op == IR_SN_IS_ACTIVE && cg_fast_access(f->fast, s)) {
        LLVMValueRef v = cg_fast_is_active(f, cg_fast_access(f->fast, s));
        return v ? put(f, s, v) : -1;
    }
    if (f->fast && s->op == IR_SN_FIELD_PTR) {
        int handled;
        LLVMValueRef p = cg_fast_field_ptr(f, s, &handled);
        if (handled)
            return p ? put(f, s, p) : -1;
    }
    if (f->cread) {
        if (cg_cread_skips(f, s))
            return 0; /* a chain statement only cached containers used: they walk out of line */
        if (s->op == IR_SN_CHILD) {
            int handled;
            LLVMValueRef p = cg_cread_container(f, s, &handled);
            if (handled)
                return p ? put(f, s, p) : -1;
        }
        if (s->op == IR_SN_FIELD_PTR) {
            int handled;
            LLVMValueRef p = cg_cread_field_ptr(f, s, &handled);
            if (handled)
                return p ? put(f, s, p) : -1;
        }
    }
    switch (s->op) {
    case IR_CONST: return put(f, s, cg_emit_const(f, s));
    case IR_ARG: {
        LLVMValueRef v = cg_arg(f, s->ty, s->index);
        if (!v)
            return cg_fail(f, "argument of type %s", ir_type_name(s->ty));
        return put(f, s, v);
    }
    case IR_UNARY:
        if (!(a = cg_val(f, s->arg[0])))
            return -1;
        return put(f, s, cg_emit_unary(f, s->sub, s->ty, a));
    case IR_BINARY:
        if (!(a = cg_val(f, s->arg[0])) || !(b = cg_val(f, s->arg[1])))
            return -1;
        /* comparisons: the operands' type decides signedness and float-ness */
        return put(f, s, cg_emit_binary(f, s->sub, s->arg[0]->ty, a, b));
    case IR_SELECT: {
        LLVMValueRef c = cg_val(f, s->arg[0]);
        if (!c || !(a = cg_val(f, s->arg[1])) || !(b = cg_val(f, s->arg[2])))
            return -1;
        return put(f, s, LLVMBuildSelect(f->b, c, a, b, "sel"));
    }
    case IR_FMA: {
        LLVMValueRef v[3];
        for (int i = 0; i < 3; i++)
            if (!(v[i] = cg_val(f, s->arg[i])))
                return -1;
        return put(f, s, cg_intrinsic(f, "fma", LLVMTypeOf(v[0]), v, 3));
    }
    case IR_CAST:
        if (!(a = cg_val(f, s->arg[0])))
            return -1;
        return put(f, s, cg_emit_cast(f, s->ty, s->arg[0]->ty, a));
    case IR_ALLOCA: {
        ir_type elem = IR_POINTEE(s->ty);
        LLVMTypeRef mt = cg_mem_type(f, elem);
        LLVMValueRef p = cg_entry_alloca(f, mt, "local");
        /* zero each time the declaration runs (it may sit in a loop body) */
        LLVMBuildStore(f->b, LLVMConstNull(mt), p);
        return put(f, s, p);
    }
    case IR_LOAD: {
        if (!(a = cg_val(f, s->arg[0])))
            return -1;
        LLVMValueRef v = LLVMBuildLoad2(f->b, cg_mem_type(f, s->ty), a, "ld");
        if (s->ty == IR_BOOL)
            v = LLVMBuildTrunc(f->b, v, f->t_i1, "ldb");
        return put(f, s, v);
    }
    case IR_STORE: {
        if (!(a = cg_val(f, s->arg[0])) || !(b = cg_val(f, s->arg[1])))
            return -1;
        if (s->arg[1]->ty == IR_BOOL)
            b = LLVMBuildZExt(f->b, b, f->t_i8, "stb");
        LLVMBuildStore(f->b, b, a);
        return 0;
    }
    case IR_GTMP_PTR: return put(f, s, cg_emit_gtmp_ptr(f, s));
    case IR_GLOBAL_LOAD: return put(f, s, cg_emit_global_load(f, s));
    case IR_GLOBAL_STORE: return cg_emit_global_store(f, s);
    case IR_ATOMIC: return put(f, s, cg_emit_atomic(f, s));
    case IR_IF: return emit_if(f, s);
    case IR_RANGE_FOR:
        if (s->parallel)
            return cg_fail(f, "a parallel range_for inside a task body (offload runs only the "
                              "task's own loop in parallel)");
        return emit_serial_range_for(f, s);
    case IR_WHILE: return emit_while(f, s);
    case IR_BREAK:
    case IR_CONTINUE: return emit_jump(f, s);
    case IR_LOOP_INDEX: return put(f, s, emit_loop_index(f, s));
    case IR_SN_ROOT:
    case IR_SN_CHILD:
    case IR_SN_INDEX:
    case IR_SN_LOOKUP:
    case IR_SN_FIELD_PTR:
    case IR_SN_IS_ACTIVE: return put(f, s, cg_emit_sn(f, s));
    case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE: return cg_emit_sn(f, s) ? 0 : -1;
    case IR_GLOBAL_PTR:
    case IR_IS_ACTIVE:
    case IR_ACTIVATE:
    case IR_DEACTIVATE:
        return cg_fail(f, "not lowered: run access lowering before code generation");
    case IR_STRUCT_FOR:
        return cg_fail(f, "a struct_for inside a task body (only a struct_for task's own loop "
                          "is supported)");
    default: return cg_fail(f, "unknown op %d", s->op);
    }
}

int cg_emit_block(cg_fn *f, const ir_block *blk)
{
    if (f->cread)
        cg_cread_block_start(f, blk);
    if (f->lanes)
        cg_lanes_block_start(f, blk);
    for (const ir_stmt *s = blk->first; s; s = s->next) {
        f->stmt_no = f->next_no++;
        if (cg_emit_stmt(f, s) != 0)
            return -1;
        if (f->cread)
            cg_cread_activated(f, s);
    }
    return 0;
}
