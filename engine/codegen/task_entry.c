/* The entry points of a task (task_abi.h) for the CPU and NVPTX: the function shells, the
 * parallel loop of range_for and struct_for tasks around the IR body, and the JIT glue. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "engine/codegen/cg_internal.h"
#include "engine/codegen/ptx.h"
#include "engine/codegen/toolchain.h"

/* ---- function state ---- */

int cg_fn_begin(cg_fn *f, const ir_task *t, cg_target_kind target, LLVMContextRef ctx,
                LLVMModuleRef mod, LLVMValueRef fn, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    f->task = t;
    f->target = target;
    f->ctx = ctx;
    f->mod = mod;
    f->fn = fn;
    f->err = err;
    f->err_size = err_size;
    f->t_void = LLVMVoidTypeInContext(ctx);
    f->t_i1 = LLVMInt1TypeInContext(ctx);
    f->t_i8 = LLVMInt8TypeInContext(ctx);
    f->t_i32 = LLVMInt32TypeInContext(ctx);
    f->t_i64 = LLVMInt64TypeInContext(ctx);
    f->t_f32 = LLVMFloatTypeInContext(ctx);
    f->t_f64 = LLVMDoubleTypeInContext(ctx);
    f->t_ptr = LLVMPointerTypeInContext(ctx, 0);
    size_t n = t->nfields ? t->nfields : 1;
    f->rt = calloc(n, sizeof *f->rt);
    f->fid = calloc(n, sizeof *f->fid);
    f->range_flag = calloc(n, sizeof *f->range_flag);
    if (!f->rt || !f->fid || !f->range_flag) {
        cg_fn_free(f);
        return cg_fail(f, "out of memory");
    }
    f->entry = LLVMAppendBasicBlockInContext(ctx, fn, "entry");
    f->eb = LLVMCreateBuilderInContext(ctx);
    f->b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(f->eb, f->entry);
    f->task_ctx = LLVMGetParam(fn, 0);
    /* plm_task_ctx is three pointers: rt, rt_field, args */
    LLVMValueRef *dst[3] = {&f->rt_arr, &f->fid_arr, &f->args_arr};
    static const char *const names[3] = {"ctx.rt", "ctx.rt_field", "ctx.args"};
    for (int i = 0; i < 3; i++) {
        LLVMValueRef off = LLVMConstInt(f->t_i64, 8u * (unsigned)i, 0);
        LLVMValueRef p = LLVMBuildGEP2(f->eb, f->t_i8, f->task_ctx, &off, 1, "");
        *dst[i] = LLVMBuildLoad2(f->eb, f->t_ptr, p, names[i]);
    }
    return 0;
}

void cg_fn_free(cg_fn *f)
{
    cg_cread_free(f->cread);
    f->cread = NULL;
    cg_reduce_free(f->reduce);
    f->reduce = NULL;
    cg_lanes_free(f->lanes);
    f->lanes = NULL;
    free(f->rt);
    free(f->fid);
    free(f->range_flag);
    f->range_flag = NULL;
    cg_map_free(&f->vals);
    if (f->eb)
        LLVMDisposeBuilder(f->eb);
    if (f->b)
        LLVMDisposeBuilder(f->b);
    f->rt = f->fid = NULL;
    f->eb = f->b = NULL;
}

void cg_fn_finish(cg_fn *f, LLVMBasicBlockRef first)
{
    LLVMPositionBuilderAtEnd(f->eb, f->entry);
    LLVMBuildBr(f->eb, first);
    cg_fn_free(f);
}

/* ---- pieces of the shells ---- */

static LLVMValueRef nvvm_sreg(cg_fn *f, const char *reg)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", reg);
    LLVMTypeRef fty = LLVMFunctionType(f->t_i32, NULL, 0, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(f->mod, name);
    if (!fn)
        fn = LLVMAddFunction(f->mod, name, fty);
    return LLVMBuildCall2(f->b, fty, fn, NULL, 0, reg);
}

/* NVPTX: the rest of the function runs on thread 0 of block 0 only; returns the exit block. */
static LLVMBasicBlockRef single_thread(cg_fn *f)
{
    LLVMValueRef first = LLVMBuildAnd(
        f->b, LLVMBuildICmp(f->b, LLVMIntEQ, nvvm_sreg(f, "tid.x"), LLVMConstInt(f->t_i32, 0, 0), ""),
        LLVMBuildICmp(f->b, LLVMIntEQ, nvvm_sreg(f, "ctaid.x"), LLVMConstInt(f->t_i32, 0, 0), ""),
        "first");
    LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "single");
    LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "exit");
    LLVMBuildCondBr(f->b, first, run, out);
    LLVMPositionBuilderAtEnd(f->b, run);
    return out;
}

/* Emits every statement of the task body but the last (the prologue of a parallel task). */
static int emit_prologue(cg_fn *f, const ir_stmt **loop_out)
{
    const ir_block *body = f->task->body;
    const ir_stmt *last = body->last;
    for (const ir_stmt *s = body->first; s && s != last; s = s->next) {
        f->stmt_no = f->next_no++;
        if (cg_emit_stmt(f, s) != 0)
            return -1;
    }
    f->stmt_no = f->next_no++;
    f->cur = last;
    *loop_out = last;
    return 0;
}

/* A counted loop `for (i = start; i < end; i += step)` (signed compare). Leaves the builder in
 * the body; *latch is where continue goes; call loop_close after the body. */
typedef struct counted {
    LLVMBasicBlockRef head, body, latch, done;
    LLVMValueRef ctr, step;
    LLVMTypeRef ty;
} counted;

static LLVMValueRef loop_open(cg_fn *f, counted *c, LLVMTypeRef ty, LLVMValueRef start,
                              LLVMValueRef end, LLVMValueRef step, const char *name)
{
    c->ty = ty;
    c->step = step;
    c->ctr = cg_entry_alloca(f, ty, name);
    LLVMBuildStore(f->b, start, c->ctr);
    c->head = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "loop.head");
    c->body = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "loop.body");
    c->latch = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "loop.latch");
    c->done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "loop.end");
    LLVMBuildBr(f->b, c->head);
    LLVMPositionBuilderAtEnd(f->b, c->head);
    LLVMValueRef i = LLVMBuildLoad2(f->b, ty, c->ctr, name);
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, i, end, ""), c->body, c->done);
    LLVMPositionBuilderAtEnd(f->b, c->body);
    return i;
}

/* Returns the back edge's branch. */
static LLVMValueRef loop_close(cg_fn *f, counted *c)
{
    LLVMBuildBr(f->b, c->latch);
    LLVMPositionBuilderAtEnd(f->b, c->latch);
    LLVMValueRef i = LLVMBuildLoad2(f->b, c->ty, c->ctr, "");
    /* nsw: the counter never passes `end`, which fits the type */
    LLVMBuildStore(f->b, LLVMBuildNSWAdd(f->b, i, c->step, ""), c->ctr);
    LLVMValueRef br = LLVMBuildBr(f->b, c->head);
    LLVMPositionBuilderAtEnd(f->b, c->done);
    return br;
}

#define FAST_UNROLL_MAX 400 /* IR statements of a fast copy's body whose cell loop is unrolled */
/* The same for the loop over a slab's rows, with rows in vectors: each row's copy is several
 * times the LLVM code of a scalar cell's, and compile time grows with it. Unrolled, the
 * default scene's smoother (114 statements) ran 56-58 us a call instead of 76-78; every
 * stencil body up to 400 statements unrolled added 3.3 s of compile (CPU) to the scene's
 * first cook, up to 135 statements 0.6 s for 7 ms more over 24 frames, up to 120 0.2 s. */
#define FAST_ROW_UNROLL_MAX 120
/* ...and only for short cell loops: on a long leaf row (dense(i, 1024), the default 1-D
 * layout's 512 cells) only the first and last cells cross into a neighbour block, unrolling
 * gains little, and LLVM took 28 s for five neighbour reads on 1024 cells (a kernel on the
 * 512-cell rows ran past 600 s and 5.7 GB). */
#define FAST_UNROLL_LOG2_CELLS 4

void cg_loop_hint(cg_fn *f, LLVMValueRef br, const char *hint)
{
    LLVMMetadataRef self = LLVMTemporaryMDNode(f->ctx, NULL, 0);
    LLVMMetadataRef name = LLVMMDStringInContext2(f->ctx, hint, strlen(hint));
    LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(f->ctx, &name, 1)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(f->ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(self, id);
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(f->ctx, "llvm.loop", 9),
                    LLVMMetadataAsValue(f->ctx, id));
}

static int count_stmts(const ir_block *b)
{
    int n = 0;
    for (const ir_stmt *s = b ? b->first : NULL; s; s = s->next)
        n += 1 + count_stmts(s->body) + count_stmts(s->els);
    return n;
}

static LLVMValueRef add_fn(cg_fn *tmp, LLVMModuleRef mod, const char *name, LLVMTypeRef *params,
                           unsigned n)
{
    LLVMTypeRef fty = LLVMFunctionType(tmp->t_void, params, n, 0);
    LLVMValueRef fn = LLVMAddFunction(mod, name, fty);
    LLVMSetLinkage(fn, LLVMExternalLinkage);
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(LLVMGetModuleContext(mod), kind, 0));
    return fn;
}

static int finish_fn(cg_fn *f, LLVMBasicBlockRef first, int ok)
{
    if (!ok) {
        cg_fn_free(f);
        return -1;
    }
    if (cg_reduce_finish(f) != 0) {
        cg_fn_free(f);
        return -1;
    }
    cg_emit_range_errors(f);
    LLVMBuildRetVoid(f->b);
    cg_fn_finish(f, first);
    if (f->target == CG_TARGET_NVPTX && ptx_mark_kernel(f->mod, f->fn) != 0)
        return -1;
    return 0;
}

/* ---- serial ---- */

static int emit_serial(const ir_task *t, LLVMContextRef ctx, LLVMModuleRef mod,
                       const char *symbol, cg_target_kind target, char *err, size_t n)
{
    cg_fn f;
    LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
    f.t_void = LLVMVoidTypeInContext(ctx);
    LLVMValueRef fn = add_fn(&f, mod, symbol, &ptr, 1);
    if (cg_fn_begin(&f, t, target, ctx, mod, fn, err, n) != 0)
        return -1;
    if (cg_cread_setup(&f) != 0) {
        cg_fn_free(&f);
        return -1;
    }
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(ctx, fn, "body");
    LLVMPositionBuilderAtEnd(f.b, first);
    LLVMBasicBlockRef exit = target == CG_TARGET_NVPTX ? single_thread(&f) : NULL;
    int ok = cg_emit_block(&f, t->body) == 0;
    if (ok && exit) {
        LLVMBuildBr(f.b, exit);
        LLVMPositionBuilderAtEnd(f.b, exit);
    }
    return finish_fn(&f, first, ok);
}

/* ---- range_for ---- */

static LLVMValueRef to_i64(cg_fn *f, LLVMValueRef v, ir_type ty)
{
    if (ty == IR_I64)
        return v;
    return ir_type_is_signed(ty) ? LLVMBuildSExt(f->b, v, f->t_i64, "")
                                 : LLVMBuildZExt(f->b, v, f->t_i64, "");
}

static int emit_range_bounds(const ir_task *t, LLVMContextRef ctx, LLVMModuleRef mod,
                             const char *symbol, cg_target_kind target, char *err, size_t n)
{
    cg_fn f;
    LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
    LLVMTypeRef params[2] = {ptr, ptr};
    f.t_void = LLVMVoidTypeInContext(ctx);
    char name[256];
    snprintf(name, sizeof name, "%s%s", symbol, PLM_TASK_BOUNDS_SUFFIX);
    LLVMValueRef fn = add_fn(&f, mod, name, params, 2);
    if (cg_fn_begin(&f, t, target, ctx, mod, fn, err, n) != 0)
        return -1;
    if (cg_cread_setup(&f) != 0) {
        cg_fn_free(&f);
        return -1;
    }
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(ctx, fn, "body");
    LLVMPositionBuilderAtEnd(f.b, first);
    LLVMBasicBlockRef exit = target == CG_TARGET_NVPTX ? single_thread(&f) : NULL;
    const ir_stmt *loop;
    int ok = emit_prologue(&f, &loop) == 0;
    LLVMValueRef lo = NULL, hi = NULL;
    if (ok) {
        lo = cg_val(&f, loop->arg[0]);
        hi = lo ? cg_val(&f, loop->arg[1]) : NULL;
        ok = hi != NULL;
    }
    if (ok) {
        LLVMValueRef out = LLVMGetParam(fn, 1);
        LLVMValueRef one = LLVMConstInt(f.t_i64, 1, 0);
        LLVMBuildStore(f.b, to_i64(&f, lo, loop->arg[0]->ty), out);
        LLVMBuildStore(f.b, to_i64(&f, hi, loop->arg[1]->ty),
                       LLVMBuildGEP2(f.b, f.t_i64, out, &one, 1, ""));
        if (exit) {
            LLVMBuildBr(f.b, exit);
            LLVMPositionBuilderAtEnd(f.b, exit);
        }
    }
    return finish_fn(&f, first, ok);
}

/* The loop of a range_for task over [start, hi) by step around its body; *counter (when not
 * NULL) receives the i64 counter. */
static int emit_range_loop(cg_fn *f, const ir_stmt *loop, LLVMValueRef start, LLVMValueRef hi,
                           LLVMValueRef step, LLVMValueRef *counter)
{
    counted c;
    LLVMValueRef i = loop_open(f, &c, f->t_i64, start, hi, step, "i");
    if (counter)
        *counter = i;
    if (f->target == CG_TARGET_CPU && loop->arg[1]->op == IR_CONST) {
        /* i < the constant end, stated where LLVM's known-bits reasoning finds it (the
         * clamped hi alone does not reach it): the range checks of a box loop's stores, which
         * instcombine turns into bit tests of i, fold away */
        LLVMTypeRef aty = LLVMFunctionType(f->t_void, &f->t_i1, 1, 0);
        LLVMValueRef fn = LLVMGetNamedFunction(f->mod, "llvm.assume");
        if (!fn)
            fn = LLVMAddFunction(f->mod, "llvm.assume", aty);
        LLVMValueRef lt = LLVMBuildICmp(f->b, LLVMIntSLT, i,
                                        LLVMConstInt(f->t_i64, (unsigned long long)loop->arg[1]->ival, 1), "");
        LLVMBuildCall2(f->b, aty, fn, &lt, 1, "");
    }
    LLVMTypeRef ity = cg_type(f, loop->arg[0]->ty);
    LLVMValueRef idx = ity == f->t_i64 ? i : LLVMBuildTrunc(f->b, i, ity, "idx");
    if (cg_push_loop(f, loop, NULL, c.latch) != 0)
        return -1;
    f->loops[f->nloops - 1].index[0] = idx;
    int rc = cg_emit_block(f, loop->body);
    cg_pop_loop(f);
    if (rc == 0)
        loop_close(f, &c);
    return rc;
}

/* The start shared by a range_for and a struct_for task's function: its signature (the task's
 * arguments, then the bounds of its share in idx's type), setup, and the code before the loop.
 * 0 with *first (the entry block) and *loop set; -1 (f freed) when it failed. */
static int begin_loop_fn(cg_fn *f, const ir_task *t, LLVMContextRef ctx, LLVMModuleRef mod,
                         const char *symbol, cg_target_kind target, LLVMTypeRef idx,
                         LLVMBasicBlockRef *first, const ir_stmt **loop, char *err, size_t n)
{
    LLVMTypeRef params[3] = {LLVMPointerTypeInContext(ctx, 0), idx, idx};
    f->t_void = LLVMVoidTypeInContext(ctx);
    LLVMValueRef fn = add_fn(f, mod, symbol, params, 3);
    if (cg_fn_begin(f, t, target, ctx, mod, fn, err, n) != 0)
        return -1;
    if (cg_cread_setup(f) != 0) {
        cg_fn_free(f);
        return -1;
    }
    *first = LLVMAppendBasicBlockInContext(ctx, fn, "body");
    LLVMPositionBuilderAtEnd(f->b, *first);
    if (emit_prologue(f, loop) != 0 || cg_reduce_setup(f, *loop) != 0)
        return finish_fn(f, *first, 0);
    return 0;
}

static int emit_range_body(const ir_task *t, LLVMContextRef ctx, LLVMModuleRef mod,
                           const char *symbol, cg_target_kind target, char *err, size_t n)
{
    cg_fn f;
    LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
    LLVMBasicBlockRef first;
    const ir_stmt *loop;
    if (begin_loop_fn(&f, t, ctx, mod, symbol, target, i64, &first, &loop, err, n) != 0)
        return -1;
    LLVMValueRef fn = f.fn;
    LLVMValueRef lo = LLVMGetParam(fn, 1), hi = LLVMGetParam(fn, 2);
    LLVMValueRef start = lo, step = LLVMConstInt(i64, 1, 0);
    if (target == CG_TARGET_NVPTX) {
        /* [lo, hi) is cut to the task's own bounds, evaluated here by every thread, so the
         * executor can launch the whole loop without reading its bounds back (task_abi.h). */
        LLVMValueRef b0 = cg_val(&f, loop->arg[0]);
        LLVMValueRef b1 = b0 ? cg_val(&f, loop->arg[1]) : NULL;
        if (!b1)
            return finish_fn(&f, first, 0);
        b0 = to_i64(&f, b0, loop->arg[0]->ty);
        b1 = to_i64(&f, b1, loop->arg[1]->ty);
        lo = LLVMBuildSelect(f.b, LLVMBuildICmp(f.b, LLVMIntSGT, lo, b0, ""), lo, b0, "lo");
        hi = LLVMBuildSelect(f.b, LLVMBuildICmp(f.b, LLVMIntSLT, hi, b1, ""), hi, b1, "hi");
        /* grid-stride: thread g of the grid runs lo + g, lo + g + gridsize, ... */
        LLVMValueRef ntid = LLVMBuildZExt(f.b, nvvm_sreg(&f, "ntid.x"), i64, "");
        LLVMValueRef g = LLVMBuildAdd(
            f.b, LLVMBuildMul(f.b, LLVMBuildZExt(f.b, nvvm_sreg(&f, "ctaid.x"), i64, ""), ntid, ""),
            LLVMBuildZExt(f.b, nvvm_sreg(&f, "tid.x"), i64, ""), "gtid");
        start = LLVMBuildAdd(f.b, lo, g, "start");
        step = LLVMBuildMul(f.b, LLVMBuildZExt(f.b, nvvm_sreg(&f, "nctaid.x"), i64, ""), ntid,
                            "stride");
    }
    if (target == CG_TARGET_CPU && loop->arg[0]->op == IR_CONST) {
        /* The executor's chunks lie inside the task's bounds, so lo >= a constant start
         * already; saying so (lo = max(lo, start)) tells LLVM the index is never below it. A
         * loop over an n-D box from 0 indexes by i % n and i / n (floor division, lowered
         * with sign fix-ups): on a known non-negative i those become a mask and a shift. */
        LLVMValueRef b = cg_val(&f, loop->arg[0]);
        if (!b)
            return finish_fn(&f, first, 0);
        b = to_i64(&f, b, loop->arg[0]->ty);
        lo = start = LLVMBuildSelect(f.b, LLVMBuildICmp(f.b, LLVMIntSGT, lo, b, ""), lo, b, "lo");
    }
    if (target == CG_TARGET_CPU && loop->arg[1]->op == IR_CONST) {
        /* Likewise hi <= a constant end: a box loop's indices are then known to lie inside a
         * field of that box's size, so the range checks of its stores fold away and a loop of
         * plain stores (a fused clear of several fields) vectorizes. */
        LLVMValueRef e = cg_val(&f, loop->arg[1]);
        if (!e)
            return finish_fn(&f, first, 0);
        e = to_i64(&f, e, loop->arg[1]->ty);
        hi = LLVMBuildSelect(f.b, LLVMBuildICmp(f.b, LLVMIntSLT, hi, e, ""), hi, e, "hi");
    }
    if (target == CG_TARGET_CPU) {
        /* a fast copy when the check passes (fast_range.c), the generic loop otherwise */
        cg_fast fast;
        if (cg_fast_analyze(&f, loop, &fast) != 0)
            return finish_fn(&f, first, 0);
        LLVMValueRef chk = fast.nacc ? cg_fast_range_check(&f, &fast, lo, hi) : NULL;
        if (chk)
            chk = LLVMBuildAnd(f.b, chk, cg_fast_distinct_fields(&f, &fast), "fast");
        if (chk && cg_lanes_setup(&f, loop) != 0) {
            cg_fast_free(&fast);
            return finish_fn(&f, first, 0);
        }
        if (chk && f.lanes)
            chk = LLVMBuildAnd(f.b, chk, cg_lanes_distinct(&f), "fast");
        if (chk && cg_fast_index(&f, &fast) != 0) {
            cg_fast_free(&fast);
            return finish_fn(&f, first, 0);
        }
        if (chk) {
            LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(ctx, fn, "fast");
            LLVMBasicBlockRef gb = LLVMAppendBasicBlockInContext(ctx, fn, "generic");
            LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(ctx, fn, "join");
            LLVMBuildCondBr(f.b, chk, fb, gb);
            LLVMPositionBuilderAtEnd(f.b, fb);
            uint32_t no = f.next_no;
            f.fast = &fast;
            int ok = emit_range_loop(&f, loop, start, hi, step, &fast.counter) == 0;
            f.fast = NULL;
            cg_fast_free(&fast);
            if (!ok)
                return finish_fn(&f, first, 0);
            LLVMBuildBr(f.b, join);
            LLVMPositionBuilderAtEnd(f.b, gb);
            f.next_no = no;
            ok = emit_range_loop(&f, loop, start, hi, step, NULL) == 0;
            if (ok) {
                LLVMBuildBr(f.b, join);
                LLVMPositionBuilderAtEnd(f.b, join);
            }
            return finish_fn(&f, first, ok);
        }
        cg_fast_free(&fast);
    }
    return finish_fn(&f, first, emit_range_loop(&f, loop, start, hi, step, NULL) == 0);
}

/* ---- struct_for ---- */

/* The fast copy's cells of a dense leaf: one loop per axis, x outermost, so that what depends
 * only on the outer axes (which neighbour block a row reads from) is hoisted out of the inner
 * loop and the innermost loop (8 cells in the default layout) is short and constant: unrolled
 * (by LLVM's own measure, or asked for where the body is a stencil along that axis), its
 * block-crossing tests fold away. The rows of each slab run in an interleaved order
 * (below). The check (fast_struct.c) has made sure cells are ordered x-major. Closes the
 * entry loop ck. */
static int fast_cells(cg_fn *f, const ir_stmt *loop, cg_fast *fast, LLVMValueRef coord[],
                      counted *ck)
{
    const ir_field_info *fi = &f->task->fields[f->task->field];
    const ir_level *leaf = &fi->levels[fi->nlevels - 1];
    int dim = fi->dim;
    counted c[IR_MAX_DIM];
    int32_t hmask[IR_MAX_DIM];
    int head = cg_block_head(loop, hmask);
    /* rows in vectors (row_vector.c): the innermost loop's cells at once; not where only a
     * block's first cell along that axis acts */
    int W = (head >> (dim - 1) & 1) ? 0 : cg_rowvec_width(f, loop);
    if (W && cg_cread_halo_fill(f) != 0)
        return -1;
    LLVMValueRef cell = LLVMConstInt(f->t_i32, 0, 0);
    for (int a = 0; a < dim; a++) {
        if (W && a == dim - 1) {
            fast->pos[a] = LLVMConstInt(f->t_i32, 0, 0);
            break;
        }
        unsigned sh = 0;
        for (int b = a + 1; b < dim; b++)
            sh += leaf->log2_size[b];
        int32_t size = (int32_t)(1u << leaf->log2_size[a]);
        LLVMValueRef end = LLVMConstInt(f->t_i32, (unsigned)size, 0);
        if ((head >> a & 1) && (hmask[a] & (size - 1)) == size - 1 && size > 1) {
            /* a block starting at a multiple of its size along a: only its first cell can
             * pass the body's block-head test (block_head.c) */
            LLVMValueRef low = LLVMBuildAnd(f->b, coord[a], LLVMConstInt(f->t_i32, (unsigned)(size - 1), 0), "");
            end = LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntEQ, low, LLVMConstInt(f->t_i32, 0, 0), ""),
                                  LLVMConstInt(f->t_i32, 1, 0), end, "head.end");
        }
        fast->pos[a] = loop_open(f, &c[a], f->t_i32, LLVMConstInt(f->t_i32, 0, 0), end,
                                 LLVMConstInt(f->t_i32, 1, 0), "pos");
        if (a == dim - 2 && size >= 4) {
            /* Rows in the order 0, 2, 4, ..., 1, 3, ...: with rows in vectors, a row's masked
             * store is not yet in the cache when the next row's loads reach the same lines
             * (its neighbour row, and the row's own neighbours along it, which share memory
             * with the row before), and a load that overlaps a pending masked store waits for
             * it to be written. In this order the rows written just before are two apart. The
             * default scene's finest smoothing sweep ran 104-110 us a call in row order, 83 in
             * this one. The scalar copy takes the same order, so that the two give the same
             * bits (a reduction's float sum rounds in the order the cells come in). */
            LLVMValueRef i = fast->pos[a];
            LLVMValueRef twice = LLVMBuildShl(f->b, i, LLVMConstInt(f->t_i32, 1, 0), "");
            LLVMValueRef even =
                LLVMBuildAnd(f->b, twice, LLVMConstInt(f->t_i32, (unsigned)(size - 1), 0), "");
            LLVMValueRef odd =
                LLVMBuildLShr(f->b, i, LLVMConstInt(f->t_i32, leaf->log2_size[a] - 1, 0), "");
            fast->pos[a] = LLVMBuildOr(f->b, even, odd, "pos.perm");
        }
        cell = LLVMBuildOr(f->b, cell,
                           LLVMBuildShl(f->b, fast->pos[a], LLVMConstInt(f->t_i32, sh, 0), ""),
                           "cell");
    }
    (void)cell;
    int ok = cg_push_loop(f, loop, NULL, c[W ? dim - 2 : dim - 1].latch) == 0;
    if (ok) {
        for (int a = 0; a < dim; a++)
            f->loops[f->nloops - 1].index[a] = LLVMBuildAdd(f->b, coord[a], fast->pos[a], "I");
        ok = (W ? cg_rowvec_emit(f, loop, coord, W) : cg_emit_block(f, loop->body)) == 0;
        cg_pop_loop(f);
    }
    f->fast = NULL;
    if (!ok)
        return -1;
    /* A stencil along the innermost loop's axis (f[I +- e_z]; with rows in vectors, the
     * rows' axis: f[I +- e_y]) tests per cell or row which block the neighbour lies in;
     * unrolled, each test is a constant. LLVM's own limit leaves bodies of a few dozen
     * statements rolled (the smoother's 8 cells with their colour test and six neighbours).
     * Unrolled, the default scene's smoother ran 13% faster, its residual 10% (scalar
     * cells); past FAST_UNROLL_MAX statements (the advection bodies are thousands), and for
     * loops without such a neighbour, the gain did not pay for the longer compile. */
    int inner = W ? dim - 2 : dim - 1;
    int stencil = 0;
    for (int i = 0; i < fast->nacc; i++)
        stencil |= inner >= 0 && fast->acc[i].c[inner] != 0;
    int most = W ? FAST_ROW_UNROLL_MAX : FAST_UNROLL_MAX;
    int small = stencil && inner >= 0 && leaf->log2_size[inner] <= FAST_UNROLL_LOG2_CELLS &&
                count_stmts(loop->body) <= most;
    for (int a = inner; a >= 0; a--) {
        LLVMValueRef br = loop_close(f, &c[a]);
        if (a == inner && small)
            cg_loop_hint(f, br, "llvm.loop.unroll.full");
    }
    loop_close(f, ck);
    return 0;
}

/* The loops of a struct_for task: list entries [lo, hi), and the cells of each entry's leaf
 * container. With fast, the fast copy (fast_struct.c) is told each entry and cell, and the
 * body's recognized accesses use it. */
static int struct_loops(cg_fn *f, const ir_stmt *loop, cg_fast *fast)
{
    const ir_task *t = f->task;
    LLVMContextRef ctx = f->ctx;
    LLVMValueRef fn = f->fn;
    LLVMTypeRef ptr = f->t_ptr, i32 = f->t_i32;
    cg_target_kind target = f->target;
    int slot = t->field;
    const ir_field_info *fi = &t->fields[slot];
    int leaf = fi->nlevels - 1;
    int32_t list_sid = cg_snode_id(f, slot, t->level), leaf_sid = cg_snode_id(f, slot, leaf);
    LLVMValueRef rt = cg_runtime(f, slot);
    int leaf_kind = fi->levels[leaf].kind;
    int ncells = 1;
    for (int a = 0; a < IR_MAX_DIM; a++)
        ncells <<= fi->levels[leaf].log2_size[a];
    LLVMValueRef lo = LLVMGetParam(fn, 1), hi = LLVMGetParam(fn, 2);
    LLVMValueRef kstart = lo, kstep = LLVMConstInt(i32, 1, 0);
    LLVMValueRef cstart = LLVMConstInt(i32, 0, 0), cstep = LLVMConstInt(i32, 1, 0);
    if (target == CG_TARGET_NVPTX) {
        /* entries past the list's size, read here on the device, are not run (task_abi.h) */
        LLVMTypeRef sp[2] = {ptr, i32};
        LLVMValueRef sa[2] = {rt, LLVMConstInt(i32, (unsigned long long)list_sid, 0)};
        LLVMValueRef size = cg_call_rt(f, "plm_rt_list_size", i32, sp, sa, 2);
        hi = LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, hi, size, ""), hi, size, "hi");
        /* one block per list entry; the block's threads share its cells */
        kstart = LLVMBuildAdd(f->b, lo, nvvm_sreg(f, "ctaid.x"), "k0");
        kstep = nvvm_sreg(f, "nctaid.x");
        cstart = nvvm_sreg(f, "tid.x");
        cstep = nvvm_sreg(f, "ntid.x");
    }
    counted ck, cc;
    LLVMValueRef k = loop_open(f, &ck, i32, kstart, hi, kstep, "k");
    LLVMTypeRef gp[3] = {ptr, i32, i32};
    LLVMValueRef ga[3] = {rt, LLVMConstInt(i32, (unsigned long long)list_sid, 0), k};
    LLVMValueRef elem = cg_call_rt(f, "plm_rt_list_get", ptr, gp, ga, 3);
    LLVMValueRef off = LLVMConstInt(f->t_i64, cg_off_elem_cell(), 0);
    LLVMValueRef cell =
        LLVMBuildLoad2(f->b, ptr, LLVMBuildGEP2(f->b, f->t_i8, elem, &off, 1, ""), "elem.cell");
    LLVMValueRef pin = cg_rt_load(f, slot, CG_AT_SNODE, leaf_sid, cg_off_snode_offset_in_parent(),
                                  f->t_i64);
    LLVMValueRef container = LLVMBuildGEP2(f->b, f->t_i8, cell, &pin, 1, "leaf");
    LLVMValueRef coord[IR_MAX_DIM], ish[IR_MAX_DIM], ash[IR_MAX_DIM], mask[IR_MAX_DIM];
    for (int a = 0; a < fi->dim && a < IR_MAX_DIM; a++) {
        LLVMValueRef o = LLVMConstInt(f->t_i64, cg_off_elem_coord(a), 0);
        coord[a] = LLVMBuildLoad2(f->b, i32, LLVMBuildGEP2(f->b, f->t_i8, elem, &o, 1, ""), "coord");
        /* A leaf straight under the root: the root's one entry is at 0 for every chain, and the
         * chain's offset (offset(-8).dense(i,16)) is the leaf's own; deeper chains carry it in
         * their entries (listgen adds it below the root). */
        if (t->level == 0)
            coord[a] = LLVMBuildAdd(f->b, coord[a],
                                    cg_rt_load(f, slot, CG_AT_SNODE, leaf_sid,
                                               cg_off_snode_coord_offset(a), i32), "coord.off");
        ish[a] = cg_rt_load(f, slot, CG_AT_SNODE, leaf_sid, cg_off_snode_index_shift(a), i32);
        ash[a] = cg_rt_load(f, slot, CG_AT_SNODE, leaf_sid, cg_off_snode_axis_shift(a), i32);
        LLVMValueRef bits =
            cg_rt_load(f, slot, CG_AT_SNODE, leaf_sid, cg_off_snode_axis_bits(a), i32);
        mask[a] = LLVMBuildSub(f->b, LLVMBuildShl(f->b, LLVMConstInt(i32, 1, 0), bits, ""),
                               LLVMConstInt(i32, 1, 0), "mask");
    }
    if (target == CG_TARGET_CPU && cg_cread_entry(f, coord) != 0)
        return -1;
    f->fast = fast;
    if (fast && cg_fast_struct_entry(f, coord, container) != 0) {
        f->fast = NULL;
        return -1;
    }
    if (fast && leaf_kind == IR_KIND_DENSE && target == CG_TARGET_CPU && fi->dim >= 1) {
        int rc = fast_cells(f, loop, fast, coord, &ck);
        cg_cread_entry(f, NULL);
        return rc;
    }
    LLVMValueRef cend = LLVMConstInt(i32, (unsigned)ncells, 0);
    int32_t hmask[IR_MAX_DIM];
    int head = target == CG_TARGET_CPU ? cg_block_head(loop, hmask) : 0;
    if (fi->dim >= 1 && fi->dim <= IR_MAX_DIM && head == (1 << fi->dim) - 1) {
        /* every axis tested (block_head.c): in a block whose first voxel is a multiple of its
         * size on every axis, whose cells are single voxels (axis_shift 0) and whose cell bits
         * the tests' masks cover, only cell 0 can pass */
        LLVMValueRef one = LLVMConstInt(i32, 1, 0), zero = LLVMConstInt(i32, 0, 0);
        LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
        for (int a = 0; a < fi->dim; a++) {
            LLVMValueRef hm = LLVMConstInt(i32, (unsigned)hmask[a], 0);
            ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntEQ, ash[a], zero, ""), "");
            ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntEQ, LLVMBuildAnd(f->b, coord[a], mask[a], ""), zero, ""), "");
            ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntEQ, LLVMBuildAnd(f->b, mask[a], LLVMBuildNot(f->b, hm, ""), ""), zero, ""), "head");
        }
        cend = LLVMBuildSelect(f->b, ok, one, cend, "head.end");
    }
    LLVMValueRef i = loop_open(f, &cc, i32, cstart, cend, cstep, "cell");
    if (leaf_kind != IR_KIND_DENSE) {
        /* skip inactive cells of a sparse leaf */
        static const char *const names[] = {[IR_KIND_POINTER] = "plm_rt_pointer_is_active",
                                            [IR_KIND_BITMASKED] = "plm_rt_bitmasked_is_active",
                                            [IR_KIND_DYNAMIC] = "plm_rt_dynamic_is_active"};
        LLVMTypeRef p[4] = {ptr, i32, ptr, i32};
        LLVMValueRef a[4] = {rt, LLVMConstInt(i32, (unsigned long long)leaf_sid, 0), container, i};
        LLVMValueRef act = cg_call_rt(f, names[leaf_kind], i32, p, a, 4);
        LLVMBasicBlockRef run = LLVMAppendBasicBlockInContext(ctx, fn, "cell.active");
        LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntNE, act, LLVMConstInt(i32, 0, 0), ""), run,
                        cc.latch);
        LLVMPositionBuilderAtEnd(f->b, run);
    }
    int ok = cg_push_loop(f, loop, NULL, cc.latch) == 0;
    if (ok) {
        /* voxel = the entry's first voxel + the cell's position in the leaf container */
        if (fast)
            cg_fast_struct_cell(f, i);
        for (int a = 0; a < fi->dim && a < IR_MAX_DIM && fast; a++)
            f->loops[f->nloops - 1].index[a] = LLVMBuildAdd(f->b, coord[a], fast->pos[a], "I");
        for (int a = 0; a < fi->dim && a < IR_MAX_DIM && !fast; a++) {
            LLVMValueRef pos = LLVMBuildAnd(f->b, LLVMBuildLShr(f->b, i, ish[a], ""), mask[a], "");
            f->loops[f->nloops - 1].index[a] =
                LLVMBuildAdd(f->b, coord[a], LLVMBuildShl(f->b, pos, ash[a], ""), "I");
        }
        ok = cg_emit_block(f, loop->body) == 0;
        cg_pop_loop(f);
    }
    f->fast = NULL;
    cg_cread_entry(f, NULL);
    if (ok) {
        loop_close(f, &cc);
        loop_close(f, &ck);
    }
    return ok ? 0 : -1;
}

static int emit_struct_for(const ir_task *t, LLVMContextRef ctx, LLVMModuleRef mod,
                           const char *symbol, cg_target_kind target, char *err, size_t n)
{
    cg_fn f;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMBasicBlockRef first;
    const ir_stmt *loop;
    if (begin_loop_fn(&f, t, ctx, mod, symbol, target, i32, &first, &loop, err, n) != 0)
        return -1;
    LLVMValueRef fn = f.fn;

    int slot = t->field;
    if (slot >= t->nfields || loop->field != slot) {
        cg_fail(&f, "struct_for over field slot %u, task list of slot %u", loop->field, slot);
        return finish_fn(&f, first, 0);
    }
    const ir_field_info *fi = &t->fields[slot];
    int leaf = fi->nlevels - 1;
    if (t->level != leaf - 1) {
        cg_fail(&f, "struct_for over the list of level %u of '%s': the leaf's parent (level %d) "
                    "is the only one supported",
                t->level, fi->name, leaf - 1);
        return finish_fn(&f, first, 0);
    }
    int32_t list_sid = cg_snode_id(&f, slot, t->level), leaf_sid = cg_snode_id(&f, slot, leaf);
    if (list_sid < 0 || leaf_sid < 0)
        return finish_fn(&f, first, 0);
    if (target == CG_TARGET_CPU) {
        /* a fast copy when the check passes (fast_struct.c), the generic loops otherwise */
        cg_fast fast;
        if (cg_fast_analyze(&f, loop, &fast) != 0)
            return finish_fn(&f, first, 0);
        LLVMValueRef chk = fast.nacc ? cg_fast_struct_check(&f, &fast) : NULL;
        if (chk)
            chk = LLVMBuildAnd(f.b, chk, cg_fast_distinct_fields(&f, &fast), "fast");
        if (chk && cg_lanes_setup(&f, loop) != 0) {
            cg_fast_free(&fast);
            return finish_fn(&f, first, 0);
        }
        if (chk && f.lanes)
            chk = LLVMBuildAnd(f.b, chk, cg_lanes_distinct(&f), "fast");
        if (chk && cg_fast_index(&f, &fast) != 0) {
            cg_fast_free(&fast);
            return finish_fn(&f, first, 0);
        }
        if (chk) {
            LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(ctx, fn, "fast");
            LLVMBasicBlockRef gb = LLVMAppendBasicBlockInContext(ctx, fn, "generic");
            LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(ctx, fn, "join");
            LLVMBuildCondBr(f.b, chk, fb, gb);
            LLVMPositionBuilderAtEnd(f.b, fb);
            uint32_t no = f.next_no;
            int ok = struct_loops(&f, loop, &fast) == 0;
            cg_fast_free(&fast);
            if (!ok)
                return finish_fn(&f, first, 0);
            LLVMBuildBr(f.b, join);
            LLVMPositionBuilderAtEnd(f.b, gb);
            f.next_no = no;
            ok = struct_loops(&f, loop, NULL) == 0;
            if (ok) {
                LLVMBuildBr(f.b, join);
                LLVMPositionBuilderAtEnd(f.b, join);
            }
            return finish_fn(&f, first, ok);
        }
        cg_fast_free(&fast);
    }
    return finish_fn(&f, first, struct_loops(&f, loop, NULL) == 0);
}

/* ---- the public entry ---- */

static int body_ends_in(const ir_task *t, int op)
{
    return t->body && t->body->last && t->body->last->op == op &&
           (op != IR_RANGE_FOR || t->body->last->parallel);
}

int cg_emit_task(LLVMContextRef ctx, LLVMModuleRef mod, struct ir_task *t, const char *symbol,
                 cg_target_kind target, char *err, size_t n)
{
    if (!ctx || !mod || !t || !symbol || !symbol[0] || !t->body) {
        cg_set_err(err, n, "cg_emit_task: bad arguments");
        return -1;
    }
    if (target != CG_TARGET_CPU && target != CG_TARGET_NVPTX) {
        cg_set_err(err, n, "cg_emit_task: unknown target %d", (int)target);
        return -1;
    }
    switch (t->kind) {
    case IR_TASK_SERIAL: return emit_serial(t, ctx, mod, symbol, target, err, n);
    case IR_TASK_RANGE_FOR:
        if (!body_ends_in(t, IR_RANGE_FOR)) {
            cg_set_err(err, n, "task '%s': a range_for task must end in its parallel range_for",
                       t->name);
            return -1;
        }
        if (emit_range_bounds(t, ctx, mod, symbol, target, err, n) != 0)
            return -1;
        return emit_range_body(t, ctx, mod, symbol, target, err, n);
    case IR_TASK_STRUCT_FOR:
        if (!body_ends_in(t, IR_STRUCT_FOR)) {
            cg_set_err(err, n, "task '%s': a struct_for task must end in its struct_for",
                       t->name);
            return -1;
        }
        return emit_struct_for(t, ctx, mod, symbol, target, err, n);
    default:
        cg_set_err(err, n,
                   "task '%s': kind %d has no generated code (clear_list, listgen and gc run "
                   "the runtime's entry points; kernels must be offloaded first)",
                   t->name, t->kind);
        return -1;
    }
}

int cg_task_build(void *task, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    return cg_emit_task(ctx, mod, task, CG_TASK_SYMBOL, CG_TARGET_CPU, err, n);
}

int cg_task_build_nvptx(void *task, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    return cg_emit_task(ctx, mod, task, CG_TASK_SYMBOL, CG_TARGET_NVPTX, err, n);
}

int cg_task_request(struct ir_task *t, void *addrs[2], jit_result *result, jit_request *req,
                    char *err, size_t n)
{
    static const char *const syms[2] = {CG_TASK_SYMBOL, CG_TASK_BOUNDS_SYMBOL};
    if (!t || !addrs || !req) {
        cg_set_err(err, n, "cg_task_request: bad arguments");
        return -1;
    }
    if (t->kind != IR_TASK_SERIAL && t->kind != IR_TASK_RANGE_FOR &&
        t->kind != IR_TASK_STRUCT_FOR) {
        cg_set_err(err, n, "task '%s': kind %d has no generated code", t->name, t->kind);
        return -1;
    }
    memset(req, 0, sizeof *req);
    addrs[0] = addrs[1] = NULL;
    req->key = ir_task_hash(t);
    req->build = cg_task_build;
    req->user = t;
    req->symbols = syms;
    req->n_symbols = t->kind == IR_TASK_RANGE_FOR ? 2 : 1;
    req->addrs = addrs;
    req->result = result;
    return 0;
}
