/* Rows in vectors: the fast copy of a CPU struct_for runs the W cells of one leaf row (the
 * innermost axis; 8 in the default layout) as a single pass of the body over W-lane vectors,
 * where the scalar fast copy loops over them one cell at a time. Most of a stencil's or an
 * element-wise kernel's work is arithmetic on values that sit side by side in memory along
 * that axis; LLVM's own loop vectorizer cannot take these loops (a block lookup may sit in
 * the body, neighbours along the row may lie in the next block, an `if` guards the store).
 *
 * Which bodies. Statements this file does as vectors: constants, arguments, the loop index,
 * arithmetic, casts, selects, fma, locals, `if`/`else`, loads and stores through the fast
 * copy's recognized accesses (stores only at the cell itself), is_active the fast copy
 * answers (a recognized query), and the corners of samples that cached_read.c serves from
 * its table of neighbouring blocks (cg_cread_row_ok). Statements with no vector form run lane
 * by lane through the scalar emitter (lanes_stmt): integer division, modulo and shifts (their
 * emitters build scalar constants), tan and atan2 (libm calls by name), the sparse
 * operations (lookups, is_active, activation), and loads, stores and atomics through
 * pointers neither the fast copy nor the cached reads serve. Loops, `continue` and the cached
 * reads' other sites (their scalar paths keep per-block state) leave the body to the scalar
 * copy.
 *
 * How. Every value is a W-lane vector (uniform ones splatted; LLVM hoists them). An `if`
 * narrows a lane mask: both branches run for every lane (loads are always safe here: an
 * inactive block reads the background), a store writes only the mask's lanes, a local keeps
 * its old value in the others, and a branch none of the row's lanes takes is skipped. A
 * load of an f32 field (vec3 too) of a dense leaf whose elements follow each other (the
 * stride known when compiling, or tested at run time: fields interleaved in one tree do not)
 * is a vector load of the row's run of elements, a component picked by a shuffle; an
 * inactive block reads the leaf's block of background values at the same place. A neighbour
 * along the row takes its lanes inside the row's block from the row's run shifted, the
 * others one at a time. Other loads are W scalar loads (the scalar emitter at each lane's
 * position). Stores likewise: masked vector stores, or per lane. A write's block (the fast
 * copy's lazy, activating lookup) is looked up only when some lane of the row stores, as the
 * scalar copy would.
 *
 * Why the results are the same bits. Each lane does the scalar copy's operations on the same
 * operands (LLVM's vector float operations, fma, minnum/maxnum, floor and saturating casts
 * are lane-wise the scalar ones). What changes is the order of cells within a row, and the
 * order of the rows (task_entry.c runs them interleaved), which a struct_for leaves
 * unspecified (language.md: iterations run in parallel, in no particular order; the GPU runs
 * them at once): a body that reads, along the row, an element another cell of the row writes
 * races, and its lanes see the writes in statement order; a float sum into a reduction rounds
 * in the order the cells come in.
 *
 * Only reads the IR. Called by task_entry.c's fast copy on the CPU, on the compiling thread. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"
#include "sparse/runtime/runtime.h"

#define ROWVEC_MIN 4
#define ROWVEC_MAX 16

typedef struct rowvec {
    cg_fn *f;
    const ir_stmt *loop;
    int W, dim;
    LLVMValueRef coord[IR_MAX_DIM];
} rowvec;

static LLVMValueRef c32(cg_fn *f, long long v)
{
    return LLVMConstInt(f->t_i32, (unsigned long long)v, 1);
}

/* ---- which bodies ---- */

/* s lies in loop's body, at any depth. */
static int inside(const ir_stmt *s, const ir_stmt *loop)
{
    for (const ir_block *b = s->parent; b; b = b->owner ? b->owner->parent : NULL)
        if (b->owner == loop)
            return 1;
    return 0;
}

static int ok_block(const cg_fn *f, const ir_stmt *loop, const ir_block *b);

/* Every user of sn_field_ptr p is a global_load (a gathered address serves nothing else). */
static int only_loaded_in(const ir_block *b, const ir_stmt *p)
{
    for (const ir_stmt *s = b->first; s; s = s->next) {
        for (int i = 0; i < s->nargs; i++)
            if (s->arg[i] == p && s->op != IR_GLOBAL_LOAD)
                return 0;
        if ((s->body && !only_loaded_in(s->body, p)) || (s->els && !only_loaded_in(s->els, p)))
            return 0;
    }
    return 1;
}

static int only_loaded(const ir_stmt *p)
{
    const ir_block *b = p->parent;
    while (b->owner && b->owner->op != IR_STRUCT_FOR)
        b = b->owner->parent;
    return only_loaded_in(b, p);
}

/* A pointer the cached reads do not serve and the fast copy does not recognize: its chain
 * and the loads, stores and atomics through it run lane by lane (lanes_stmt). */
static int lane_ptr(const cg_fn *f, const ir_stmt *p)
{
    return !cg_fast_access(f->fast, p) && !cg_cread_serves(f, p);
}

static int ok_stmt(const cg_fn *f, const ir_stmt *loop, const ir_stmt *s)
{
    const cg_fast *fast = f->fast;
    switch (s->op) {
    case IR_CONST:
    case IR_ARG:
    case IR_SELECT:
    case IR_FMA:
    case IR_CAST:
    case IR_UNARY:  /* tan lane by lane */
    case IR_BINARY: /* atan2, integer division, modulo and shifts lane by lane */
        return 1;
    case IR_LOAD:
    case IR_STORE: return s->arg[0]->op == IR_ALLOCA && inside(s->arg[0], loop);
    case IR_ALLOCA: return !IR_IS_PTR(IR_POINTEE(s->ty));
    case IR_LOOP_INDEX: return s->loop == loop && s->index < f->task->fields[f->task->field].dim;
    case IR_IF: return ok_block(f, loop, s->body) && (!s->els || ok_block(f, loop, s->els));
    case IR_GLOBAL_LOAD: {
        const cg_access *a = cg_fast_access(fast, s->arg[0]);
        if (!a)
            return (s->ty == IR_F32 && cg_cread_row_ok(f, s->arg[0])) || lane_ptr(f, s->arg[0]);
        /* a load through an activating pointer (x[I] += v) of a bitmasked leaf activates its
         * cell: lanes the mask leaves out must not */
        const ir_field_info *fi = &f->task->fields[a->slot];
        return !a->fptr->activate || fi->levels[fi->nlevels - 1].kind == IR_KIND_DENSE;
    }
    case IR_GLOBAL_STORE: {
        const cg_access *a = cg_fast_access(fast, s->arg[0]);
        if (!a)
            return lane_ptr(f, s->arg[0]);
        for (int x = 0; x < IR_MAX_DIM; x++)
            if (a->c[x] != 0)
                return 0;
        return 1;
    }
    case IR_ATOMIC: return lane_ptr(f, s->arg[0]);
    case IR_SN_ROOT:
    case IR_SN_CHILD:
    case IR_SN_INDEX:
    case IR_SN_LOOKUP:
    case IR_SN_IS_ACTIVE:
    case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
        return cg_fast_skips(fast, s) || cg_cread_skips(f, s) || !cg_cread_serves(f, s);
    case IR_SN_FIELD_PTR:
        return cg_fast_skips(fast, s) || cg_cread_skips(f, s) || cg_fast_access(fast, s) ||
               (cg_cread_row_ok(f, s) && only_loaded(s)) || !cg_cread_serves(f, s);
    default: return 0;
    }
}

static int ok_block(const cg_fn *f, const ir_stmt *loop, const ir_block *b)
{
    for (const ir_stmt *s = b->first; s; s = s->next)
        if (!ok_stmt(f, loop, s))
            return 0;
    return 1;
}

/* Atomics run lane by lane in statement order, so the terms two atomic statements give one
 * element arrive in another order than cell by cell: a float sum would round differently, an
 * integer floored division differ, old values (append indices) come in another order. Such
 * bodies stay scalar; min and max do not care. */
typedef struct atomic_count {
    const ir_task *t;
    uint8_t seen[64];
    int twice;
} atomic_count;

static int count_atomic(ir_stmt *s, void *ud)
{
    atomic_count *n = ud;
    if (s->op != IR_ATOMIC || s->sub == IR_ATOMIC_MIN || s->sub == IR_ATOMIC_MAX)
        return 0;
    /* other pointers (the global temporaries) share the last counter */
    uint32_t slot = s->arg[0]->op == IR_SN_FIELD_PTR && s->arg[0]->field < 63 ? s->arg[0]->field : 63;
    if (n->seen[slot]++)
        n->twice = 1;
    return 0;
}

int cg_rowvec_width(cg_fn *f, const ir_stmt *loop)
{
    const char *e = getenv("PLUME_ROWVEC");
    if (e && !strcmp(e, "0"))
        return 0;
    if (f->target != CG_TARGET_CPU || !f->fast)
        return 0;
    const ir_field_info *fi = &f->task->fields[f->task->field];
    if (fi->dim < 2)
        return 0;
    int W = 1 << fi->levels[fi->nlevels - 1].log2_size[fi->dim - 1];
    if (W < ROWVEC_MIN || W > ROWVEC_MAX)
        return 0;
    atomic_count n = {.t = f->task};
    ir_walk(loop->body, count_atomic, &n);
    return !n.twice && ok_block(f, loop, loop->body) ? W : 0;
}

/* ---- values ---- */

static LLVMTypeRef vtype(rowvec *r, LLVMTypeRef scalar)
{
    return LLVMVectorType(scalar, (unsigned)r->W);
}

static LLVMValueRef splat(rowvec *r, LLVMValueRef s)
{
    cg_fn *f = r->f;
    if (LLVMIsConstant(s)) {
        LLVMValueRef e[ROWVEC_MAX];
        for (int l = 0; l < r->W; l++)
            e[l] = s;
        return LLVMConstVector(e, (unsigned)r->W);
    }
    LLVMTypeRef t = vtype(r, LLVMTypeOf(s));
    LLVMValueRef u = LLVMBuildInsertElement(f->b, LLVMGetUndef(t), s, c32(f, 0), "");
    return LLVMBuildShuffleVector(f->b, u, LLVMGetUndef(t),
                                  LLVMConstNull(vtype(r, f->t_i32)), "splat");
}

/* i1: some lane of mask is set. */
static LLVMValueRef any_lane(rowvec *r, LLVMValueRef mask)
{
    cg_fn *f = r->f;
    char name[48];
    snprintf(name, sizeof name, "llvm.vector.reduce.or.v%di1", r->W);
    LLVMTypeRef mt = LLVMTypeOf(mask);
    return cg_call_rt(f, name, f->t_i1, &mt, &mask, 1);
}

/* The value of operand s: a statement outside the loop's body (an argument or constant at
 * the task's top) is one scalar, splatted. */
static LLVMValueRef vval(rowvec *r, const ir_stmt *s)
{
    LLVMValueRef v = cg_val(r->f, s);
    if (v && LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind &&
        LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMPointerTypeKind)
        v = splat(r, v);
    return v;
}

/* A float vector to integers, saturating as the scalar cast (emit_arith.c): NaN gives 0 and
 * values past either end give the type's end. Written as selects around a plain conversion of
 * in-range values because LLVM 16's x86 backend takes the llvm.fpto*i.sat vector intrinsics
 * apart lane by lane (a convert, two compares and two moves per lane), which cost a sixth of
 * the fused advection's time; this form is a handful of vector instructions. */
static LLVMValueRef sat_fptoi(rowvec *r, ir_type to, LLVMValueRef a, LLVMTypeRef tt,
                              LLVMTypeRef ft)
{
    LLVMBuilderRef b = r->f->b;
    int sg = ir_type_is_signed(to);
    unsigned bits = to == IR_I64 ? 64 : 32;
    /* the range's ends as floats: -2^(bits-1) or 0 is exact, and 2^(bits-1) or 2^bits is the
     * first value past the top */
    double lo = sg ? -ldexp(1.0, (int)bits - 1) : 0.0;
    double top = ldexp(1.0, sg ? (int)bits - 1 : (int)bits);
    LLVMValueRef zero = LLVMConstNull(ft);
    LLVMValueRef vlo = splat(r, LLVMConstReal(LLVMGetElementType(ft), lo));
    LLVMValueRef vtop = splat(r, LLVMConstReal(LLVMGetElementType(ft), top));
    LLVMValueRef num = LLVMBuildFCmp(b, LLVMRealORD, a, a, "sat.num");
    LLVMValueRef x = LLVMBuildSelect(b, num, a, zero, "sat.nonan");
    LLVMValueRef below = LLVMBuildFCmp(b, LLVMRealOLT, x, vlo, "sat.below");
    x = LLVMBuildSelect(b, below, vlo, x, "sat.lo");
    LLVMValueRef above = LLVMBuildFCmp(b, LLVMRealOGE, x, vtop, "sat.above");
    x = LLVMBuildSelect(b, above, zero, x, "sat.in");
    LLVMValueRef v = sg ? LLVMBuildFPToSI(b, x, tt, "sat.cvt") : LLVMBuildFPToUI(b, x, tt, "sat.cvt");
    LLVMValueRef max = LLVMConstInt(LLVMGetElementType(tt),
                                    sg ? (bits == 64 ? (unsigned long long)INT64_MAX : INT32_MAX)
                                       : (bits == 64 ? UINT64_MAX : UINT32_MAX),
                                    0);
    return LLVMBuildSelect(b, above, splat(r, max), v, "sat");
}

static LLVMValueRef vcast(rowvec *r, ir_type to, ir_type from, LLVMValueRef a)
{
    cg_fn *f = r->f;
    LLVMBuilderRef b = f->b;
    if (to == from)
        return a;
    LLVMTypeRef tt = vtype(r, cg_type(f, to)), ft = vtype(r, cg_type(f, from));
    if (to == IR_BOOL) {
        if (ir_type_is_float(from))
            return LLVMBuildFCmp(b, LLVMRealUNE, a, LLVMConstNull(ft), "tobool");
        return LLVMBuildICmp(b, LLVMIntNE, a, LLVMConstNull(ft), "tobool");
    }
    if (ir_type_is_int(to)) {
        if (from == IR_BOOL)
            return LLVMBuildZExt(b, a, tt, "cast");
        if (ir_type_is_int(from))
            return LLVMBuildIntCast2(b, a, tt, ir_type_is_signed(from), "cast");
        return sat_fptoi(r, to, a, tt, ft);
    }
    if (from == IR_BOOL)
        return LLVMBuildUIToFP(b, a, tt, "cast");
    if (ir_type_is_int(from))
        return ir_type_is_signed(from) ? LLVMBuildSIToFP(b, a, tt, "cast")
                                       : LLVMBuildUIToFP(b, a, tt, "cast");
    return LLVMBuildFPCast(b, a, tt, "cast");
}

static int put(rowvec *r, const ir_stmt *s, LLVMValueRef v)
{
    if (!v)
        return -1;
    if (cg_vmap_put(&r->f->vals, s, v) != 0)
        return cg_fail(r->f, "out of memory");
    return 0;
}

/* ---- loads and stores ---- */

static LLVMBasicBlockRef new_bb(cg_fn *f, const char *name)
{
    return LLVMAppendBasicBlockInContext(f->ctx, f->fn, name);
}

/* i1 per call: the cells of a's field are `size` bytes apart (its own element, not
 * interleaved with fields placed beside it). */
static LLVMValueRef contiguous(rowvec *r, const cg_access *a, unsigned size)
{
    cg_fn *f = r->f;
    LLVMValueRef stride =
        cg_rt_load(f, a->slot, CG_AT_FIELD, 0, offsetof(plm_rt_field, stride), f->t_i64);
    return LLVMBuildICmp(f->b, LLVMIntEQ, stride, LLVMConstInt(f->t_i64, size, 0), "contig");
}

/* A vector load or store of a's field can serve the row: f32 components, at the row's own
 * position along it (the W cells' elements are then one run of memory when nothing else is
 * placed between them). */
static int row_contiguous(rowvec *r, const cg_access *a, ir_type ty)
{
    const ir_field_info *fi = &r->f->task->fields[a->slot];
    /* a bitmasked leaf's inactive cells read the background and activate one by one */
    int c = a->c[r->dim - 1];
    return a->scale == 0 && c > -r->W && c < r->W && fi->components >= 1 && fi->components <= 4 &&
           fi->elem == IR_F32 && ty == IR_F32 &&
           fi->levels[fi->nlevels - 1].kind == IR_KIND_DENSE;
}

/* The lanes of component comp in a run of W elements of k components: a shuffle mask
 * picking comp, comp + k, ... (load), or placing lane l at l * k + comp (store). */
static LLVMValueRef pick_mask(rowvec *r, int k, int comp)
{
    LLVMValueRef e[4 * ROWVEC_MAX];
    for (int l = 0; l < r->W; l++)
        e[l] = c32(r->f, l * k + comp);
    return LLVMConstVector(e, (unsigned)r->W);
}

static LLVMValueRef place_mask(rowvec *r, int k, int comp)
{
    LLVMValueRef e[4 * ROWVEC_MAX];
    for (int j = 0; j < r->W * k; j++)
        e[j] = j % k == comp ? c32(r->f, j / k) : LLVMGetUndef(r->f->t_i32);
    return LLVMConstVector(e, (unsigned)(r->W * k));
}

/* The first element's component 0 of the row run that holds access a's lane 0: its address
 * less the component's offset. An inactive block (isnull) reads the leaf's block of
 * background values at the same place, so the load needs no branch. */
static LLVMValueRef row_base(rowvec *r, const cg_access *a, LLVMValueRef p0, LLVMValueRef isnull)
{
    cg_fn *f = r->f;
    const ir_field_info *fi = &f->task->fields[a->slot];
    if (isnull && !(LLVMIsConstant(isnull) && LLVMConstIntGetZExtValue(isnull) == 0)) {
        int32_t lsid = cg_snode_id(f, a->slot, fi->nlevels - 1);
        if (lsid < 0)
            return NULL;
        /* p0 is the NULL container plus the element's offset (a plain GEP, emit_sparse.c) */
        LLVMValueRef bg = cg_rt_load(f, a->slot, CG_AT_SNODE, lsid,
                                     offsetof(plm_rt_snode, bg_container), f->t_ptr);
        LLVMValueRef off = LLVMBuildPtrToInt(f->b, p0, f->t_i64, "");
        p0 = LLVMBuildSelect(f->b, isnull, LLVMBuildGEP2(f->b, f->t_i8, bg, &off, 1, ""), p0,
                             "row.at");
    }
    LLVMValueRef back = LLVMConstInt(f->t_i64, (unsigned long long)(-4ll * a->fptr->comp), 1);
    return LLVMBuildGEP2(f->b, f->t_i8, p0, &back, 1, "row.run");
}

/* Load s at each lane's cell with the scalar emitter, into v (NULL: every lane, into a new
 * vector; else only the lanes whose cell lies outside the row's block, neighbour offset c). */
static LLVMValueRef lanes_load(rowvec *r, const ir_stmt *s, const cg_access *a, LLVMValueRef v,
                               int c)
{
    cg_fn *f = r->f;
    const ir_stmt *ptr = s->arg[0];
    LLVMValueRef saved = cg_vmap_get(&f->vals, ptr);
    int all = v == NULL;
    if (all)
        v = LLVMGetUndef(vtype(r, cg_type(f, s->ty)));
    for (int l = 0; l < r->W; l++) {
        if (!all && l + c >= 0 && l + c < r->W)
            continue;
        f->fast->pos[r->dim - 1] = c32(f, l);
        LLVMValueRef p = cg_fast_struct_ptr(f, a);
        if (!p || cg_vmap_put(&f->vals, ptr, p) != 0)
            return NULL;
        LLVMValueRef x = cg_emit_global_load(f, s);
        if (!x)
            return NULL;
        v = LLVMBuildInsertElement(f->b, v, x, c32(f, l), "");
    }
    cg_vmap_put(&f->vals, ptr, saved);
    return v;
}

/* Ends the vector path of a load (its value v, the current block) at join, where it meets the
 * lanes' path, which block `one` begins: the load lane by lane there. */
static LLVMValueRef or_lanes(rowvec *r, const ir_stmt *s, const cg_access *a, LLVMValueRef v,
                             LLVMBasicBlockRef one, LLVMBasicBlockRef join)
{
    cg_fn *f = r->f;
    LLVMBasicBlockRef vend = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, one);
    LLVMValueRef w = lanes_load(r, s, a, NULL, 0);
    if (!w)
        return NULL;
    LLVMBasicBlockRef lend = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMValueRef phi = LLVMBuildPhi(f->b, LLVMTypeOf(v), "row.ld");
    LLVMValueRef ins[2] = {v, w};
    LLVMBasicBlockRef from[2] = {vend, lend};
    LLVMAddIncoming(phi, ins, from, 2);
    return phi;
}

/* The row's run of a's field at once, where the layout allows. */
static LLVMValueRef vload_run(rowvec *r, const ir_stmt *s, const cg_access *a)
{
    cg_fn *f = r->f;
    cg_fast *fast = f->fast;
    const ir_stmt *ptr = s->arg[0];
    int k = f->task->fields[a->slot].components;
    LLVMTypeRef rt = LLVMVectorType(f->t_f32, (unsigned)(r->W * k));
    /* the stride is a constant where the layout is known when compiling (the usual case) */
    LLVMValueRef contig = contiguous(r, a, 4u * (unsigned)k);
    int known = LLVMIsConstant(contig);
    if (known && !LLVMConstIntGetZExtValue(contig))
        return lanes_load(r, s, a, NULL, 0);
    LLVMBasicBlockRef vec = NULL, one = NULL, join = NULL;
    if (!known) {
        vec = new_bb(f, "row.vld");
        one = new_bb(f, "row.lld");
        join = new_bb(f, "row.ld");
        LLVMBuildCondBr(f->b, contig, vec, one);
        LLVMPositionBuilderAtEnd(f->b, vec);
    }
    /* a neighbour along the row (c != 0): the lanes whose cell stays in the row's block come
     * from the row's own run, loaded whole and shifted by c lanes, the others one at a time.
     * (A masked load at the shifted address, as this did before, reads across the row's
     * start or end: a cache-line split every other row, and it waits on a pending masked
     * store of the row before; the shift took the default scene's vorticity task from 651-699
     * to 580-596 us a call, the finest smoothing sweep about 2%.) */
    int c = a->c[r->dim - 1], at = c < 0 ? r->W - 1 : 0;
    fast->pos[r->dim - 1] = c32(f, at);
    LLVMValueRef p0 = cg_fast_struct_ptr(f, a);
    LLVMValueRef base = p0 ? row_base(r, a, p0, fast->isnull[a - fast->acc]) : NULL;
    if (!base)
        return NULL;
    LLVMValueRef v;
    if (c == 0) {
        v = LLVMBuildLoad2(f->b, rt, base, "row.gld");
        LLVMSetAlignment(v, 4);
        cg_fast_mark_alias(f, v, ptr);
    } else {
        long long to_start = -4ll * k * (at + c);
        LLVMValueRef back = LLVMConstInt(f->t_i64, (unsigned long long)to_start, 1);
        LLVMValueRef start = LLVMBuildGEP2(f->b, f->t_i8, base, &back, 1, "row.start");
        LLVMValueRef whole = LLVMBuildLoad2(f->b, rt, start, "row.whole");
        LLVMSetAlignment(whole, 4);
        cg_fast_mark_alias(f, whole, ptr);
        LLVMValueRef m[4 * ROWVEC_MAX];
        for (int j = 0; j < r->W * k; j++) {
            int l = j / k;
            int in = l + c >= 0 && l + c < r->W;
            m[j] = in ? c32(f, (l + c) * k + j % k) : LLVMGetUndef(f->t_i32);
        }
        LLVMValueRef shift = LLVMConstVector(m, (unsigned)(r->W * k));
        v = LLVMBuildShuffleVector(f->b, whole, LLVMGetUndef(rt), shift, "row.shifted");
    }
    if (k > 1)
        v = LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(rt), pick_mask(r, k, ptr->comp), "row.comp");
    if (c != 0 && !(v = lanes_load(r, s, a, v, c)))
        return NULL;
    return known ? v : or_lanes(r, s, a, v, one, join);
}

static LLVMValueRef vload(rowvec *r, const ir_stmt *s)
{
    cg_fn *f = r->f;
    const ir_stmt *ptr = s->arg[0];
    const cg_access *a = cg_fast_access(f->fast, ptr);
    if (!row_contiguous(r, a, s->ty) || (ptr->activate && a->c[r->dim - 1] != 0))
        return lanes_load(r, s, a, NULL, 0);
    if (!ptr->activate)
        return vload_run(r, s, a);
    /* Through an activating pointer (a read of the cell the task writes): the row's block,
     * the same for the whole row, or, where the cell lies outside the field's range, the
     * runtime's value sink (64 bytes), which the lanes read one by one as the scalar copy
     * does. (An activation that found no room hands out a zeroed sink block, read as any.) */
    f->fast->pos[r->dim - 1] = c32(f, 0);
    LLVMValueRef p0 = cg_fast_struct_ptr(f, a);
    if (!p0)
        return NULL;
    LLVMValueRef sink = cg_rt_load(f, a->slot, CG_AT_RUNTIME, 0, offsetof(plm_runtime, value_sink),
                                   f->t_ptr);
    LLVMBasicBlockRef run = new_bb(f, "row.act"), one = new_bb(f, "row.sink"),
                      join = new_bb(f, "row.actld");
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntEQ, p0, sink, "row.insink"), one, run);
    LLVMPositionBuilderAtEnd(f->b, run);
    LLVMValueRef v = vload_run(r, s, a);
    return v ? or_lanes(r, s, a, v, one, join) : NULL;
}

/* Store s's value at each lane's cell with the scalar emitter, lanes outside mask skipped. */
static int lanes_store(rowvec *r, const ir_stmt *s, const cg_access *a, LLVMValueRef vec,
                       LLVMValueRef mask)
{
    cg_fn *f = r->f;
    const ir_stmt *ptr = s->arg[0], *val = s->arg[1];
    LLVMValueRef sp = cg_vmap_get(&f->vals, ptr), sv = cg_vmap_get(&f->vals, val);
    for (int l = 0; l < r->W; l++) {
        LLVMBasicBlockRef next = NULL;
        if (mask) {
            LLVMBasicBlockRef go = new_bb(f, "row.lst");
            next = new_bb(f, "row.lnext");
            LLVMBuildCondBr(f->b, LLVMBuildExtractElement(f->b, mask, c32(f, l), ""), go, next);
            LLVMPositionBuilderAtEnd(f->b, go);
        }
        f->fast->pos[r->dim - 1] = c32(f, l);
        LLVMValueRef p = cg_fast_struct_ptr(f, a);
        if (!p || cg_vmap_put(&f->vals, ptr, p) != 0 ||
            cg_vmap_put(&f->vals, val, LLVMBuildExtractElement(f->b, vec, c32(f, l), "")) != 0)
            return -1;
        if (cg_emit_global_store(f, s) != 0)
            return -1;
        if (next) {
            LLVMBuildBr(f->b, next);
            LLVMPositionBuilderAtEnd(f->b, next);
        }
    }
    cg_vmap_put(&f->vals, ptr, sp);
    cg_vmap_put(&f->vals, val, sv);
    return 0;
}

static int vstore(rowvec *r, const ir_stmt *s, LLVMValueRef mask)
{
    cg_fn *f = r->f;
    cg_fast *fast = f->fast;
    const ir_stmt *ptr = s->arg[0];
    const cg_access *a = cg_fast_access(fast, ptr);
    LLVMValueRef v = vval(r, s->arg[1]), v0 = v;
    if (!v)
        return -1;
    LLVMBasicBlockRef done = new_bb(f, "row.stored");
    if (mask) { /* the write's block is looked up only when some lane stores */
        LLVMBasicBlockRef go = new_bb(f, "row.st");
        LLVMBuildCondBr(f->b, any_lane(r, mask), go, done);
        LLVMPositionBuilderAtEnd(f->b, go);
    }
    int k = f->task->fields[a->slot].components;
    LLVMValueRef contig = row_contiguous(r, a, s->arg[1]->ty) ? contiguous(r, a, 4u * (unsigned)k)
                                                               : LLVMConstInt(f->t_i1, 0, 0);
    int known = LLVMIsConstant(contig);
    if (known && !LLVMConstIntGetZExtValue(contig)) {
        if (lanes_store(r, s, a, v, mask) != 0)
            return -1;
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
        return 0;
    }
    LLVMBasicBlockRef one = NULL;
    if (!known) {
        LLVMBasicBlockRef vec = new_bb(f, "row.vst");
        one = new_bb(f, "row.lst");
        LLVMBuildCondBr(f->b, contig, vec, one);
        LLVMPositionBuilderAtEnd(f->b, vec);
    }
    fast->pos[r->dim - 1] = c32(f, 0);
    LLVMValueRef p0 = cg_fast_struct_ptr(f, a);
    if (!p0)
        return -1;
    /* no block (out of range): the scalar copy's writes go to the one-element sink, or
     * nowhere; here nowhere */
    LLVMValueRef bad;
    if (ptr->activate) {
        LLVMValueRef sink = cg_rt_load(f, a->slot, CG_AT_RUNTIME, 0,
                                       offsetof(plm_runtime, value_sink), f->t_ptr);
        bad = LLVMBuildICmp(f->b, LLVMIntEQ, p0, sink, "");
    } else {
        LLVMValueRef isnull = fast->isnull[a - fast->acc];
        bad = isnull ? isnull : LLVMBuildIsNull(f->b, p0, "");
    }
    LLVMBasicBlockRef st = new_bb(f, "row.vst.go");
    LLVMBuildCondBr(f->b, bad, done, st);
    LLVMPositionBuilderAtEnd(f->b, st);
    LLVMValueRef back = LLVMConstInt(f->t_i64, (unsigned long long)(-4ll * ptr->comp), 1);
    LLVMValueRef base = LLVMBuildGEP2(f->b, f->t_i8, p0, &back, 1, "row.run");
    LLVMValueRef inst;
    if (mask || k > 1) {
        /* lane l at element l's component: the other components' floats are left alone */
        LLVMValueRef m = mask ? mask : LLVMConstAllOnes(vtype(r, f->t_i1));
        if (k > 1) {
            LLVMValueRef pm = place_mask(r, k, ptr->comp);
            v = LLVMBuildShuffleVector(f->b, v, LLVMGetUndef(LLVMTypeOf(v)), pm, "row.put");
            LLVMValueRef e[4 * ROWVEC_MAX];
            for (int j2 = 0; j2 < r->W * k; j2++)
                e[j2] = c32(f, j2 % k == (int)ptr->comp ? j2 / k : r->W);
            /* lanes of other components read a false lane appended to the mask */
            LLVMValueRef wide = LLVMBuildShuffleVector(
                f->b, m, LLVMConstNull(LLVMTypeOf(m)), LLVMConstVector(e, (unsigned)(r->W * k)),
                "row.putmask");
            m = wide;
        }
        char name[48];
        snprintf(name, sizeof name, "llvm.masked.store.v%df32.p0", r->W * k);
        LLVMTypeRef ps[4] = {LLVMTypeOf(v), f->t_ptr, f->t_i32, LLVMTypeOf(m)};
        LLVMValueRef args[4] = {v, base, c32(f, 4), m};
        inst = cg_call_rt(f, name, f->t_void, ps, args, 4);
    } else {
        inst = LLVMBuildStore(f->b, v, base);
        LLVMSetAlignment(inst, 4);
    }
    cg_fast_mark_alias(f, inst, ptr);
    LLVMBuildBr(f->b, done);
    if (one) {
        LLVMPositionBuilderAtEnd(f->b, one);
        if (lanes_store(r, s, a, v0, mask) != 0)
            return -1;
        LLVMBuildBr(f->b, done);
    }
    LLVMPositionBuilderAtEnd(f->b, done);
    return 0;
}

/* is_active at a recognized read's cell: whether each lane's block is there. Along the row
 * only a neighbour's lanes can lie in the next block. */
static LLVMValueRef row_is_active(rowvec *r, const ir_stmt *s)
{
    cg_fn *f = r->f;
    const cg_access *a = cg_fast_access(f->fast, s);
    if (a->c[r->dim - 1] == 0) {
        f->fast->pos[r->dim - 1] = c32(f, 0);
        LLVMValueRef v = cg_fast_is_active(f, a);
        return v ? splat(r, v) : NULL;
    }
    LLVMValueRef v = LLVMGetUndef(vtype(r, f->t_i1));
    for (int l = 0; l < r->W; l++) {
        f->fast->pos[r->dim - 1] = c32(f, l);
        LLVMValueRef x = cg_fast_is_active(f, a);
        if (!x)
            return NULL;
        v = LLVMBuildInsertElement(f->b, v, x, c32(f, l), "");
    }
    return v;
}

/* ---- statements the scalar emitter runs lane by lane ---- */

static int lane_effect(const ir_stmt *s)
{
    switch (s->op) {
    case IR_SN_LOOKUP:
    case IR_SN_FIELD_PTR: return s->activate;
    /* through an activating pointer (x[I] += v demoted): the scalar code never tests it for
     * NULL, and a lane the mask leaves out holds NULL (its activation did not run) */
    case IR_GLOBAL_LOAD: return s->arg[0]->op == IR_SN_FIELD_PTR && s->arg[0]->activate;
    case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
    case IR_GLOBAL_STORE:
    case IR_ATOMIC: return 1;
    default: return 0;
    }
}

/* s by the scalar emitter once for the whole row, inside a branch some lane of mask takes;
 * its value (a scalar) is zero where none does. */
static int once(rowvec *r, const ir_stmt *s, LLVMValueRef mask)
{
    cg_fn *f = r->f;
    if (!mask) {
        if (cg_emit_stmt(f, s) != 0)
            return -1;
        cg_cread_activated(f, s);
        return 0;
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef go = new_bb(f, "row.once"), done = new_bb(f, "row.once.done");
    LLVMBuildCondBr(f->b, any_lane(r, mask), go, done);
    LLVMPositionBuilderAtEnd(f->b, go);
    if (cg_emit_stmt(f, s) != 0)
        return -1;
    cg_cread_activated(f, s);
    LLVMValueRef x = s->ty != IR_VOID ? cg_vmap_get(&f->vals, s) : NULL;
    LLVMBasicBlockRef end = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, done);
    if (!x)
        return 0;
    LLVMValueRef phi = LLVMBuildPhi(f->b, LLVMTypeOf(x), "row.once.v");
    LLVMValueRef in[2] = {x, LLVMConstNull(LLVMTypeOf(x))};
    LLVMBasicBlockRef bb[2] = {end, from};
    LLVMAddIncoming(phi, in, bb, 2);
    return put(r, s, phi);
}

/* s by the scalar emitter once per lane, each operand's lane standing in for it (is_active
 * and the lookups before it, integer division, tan, loads and atomics at computed places).
 * Pure statements run in every lane: the sparse operations are null-propagating and treat an
 * index out of range as inactive, integer division by zero gives 0, so a lane the mask
 * leaves out computes something harmless. An effect runs only in the mask's lanes, in lane
 * order; its value is zero (a NULL cell) in the others, so what follows from it stays
 * harmless too. A pure statement whose operands are the same for every lane runs once. */
static int lanes_stmt(rowvec *r, const ir_stmt *s, LLVMValueRef mask)
{
    cg_fn *f = r->f;
    int effect = lane_effect(s), varying = 0;
    LLVMValueRef saved[IR_MAX_ARGS];
    for (int i = 0; i < s->nargs; i++) {
        saved[i] = cg_val(f, s->arg[i]);
        if (!saved[i])
            return -1;
        varying |= LLVMGetTypeKind(LLVMTypeOf(saved[i])) == LLVMVectorTypeKind;
    }
    cg_lanes *lanes = f->lanes; /* lanes.c's groups belong to the scalar copy */
    f->lanes = NULL;
    int rc = 0;
    if (!varying && !effect) {
        rc = cg_emit_stmt(f, s);
        f->lanes = lanes;
        return rc;
    }
    if (!varying && s->op != IR_SN_DEACTIVATE && s->op != IR_GLOBAL_STORE && s->op != IR_ATOMIC) {
        /* an activation, or a read through an activating pointer, the same in every lane (a
         * reduction's 0-D target): once, when some lane of the mask asks for it */
        rc = once(r, s, mask);
        f->lanes = lanes;
        return rc;
    }
    if (s->op == IR_ATOMIC && mask && cg_reduce_takes(f, s) &&
        LLVMGetTypeKind(LLVMTypeOf(saved[0])) != LLVMVectorTypeKind) {
        /* into a per-call accumulator: each lane's term in lane order, kept or not by its
         * mask lane without a branch */
        LLVMValueRef v = vval(r, s->arg[1]);
        for (int l = 0; l < r->W && v; l++)
            if (!cg_reduce_emit_if(f, s, saved[0], LLVMBuildExtractElement(f->b, v, c32(f, l), ""),
                                   LLVMBuildExtractElement(f->b, mask, c32(f, l), "")))
                v = NULL;
        f->lanes = lanes;
        return v ? put(r, s, LLVMGetUndef(vtype(r, cg_type(f, s->ty)))) : -1;
    }
    LLVMTypeRef et = s->ty != IR_VOID ? cg_type(f, s->ty) : NULL;
    LLVMValueRef v = et ? LLVMConstNull(vtype(r, et)) : NULL;
    for (int l = 0; l < r->W && rc == 0; l++) {
        LLVMBasicBlockRef from = NULL, next = NULL;
        if (effect && mask) {
            LLVMBasicBlockRef go = new_bb(f, "row.lane");
            next = new_bb(f, "row.lane.next");
            from = LLVMGetInsertBlock(f->b);
            LLVMBuildCondBr(f->b, LLVMBuildExtractElement(f->b, mask, c32(f, l), ""), go, next);
            LLVMPositionBuilderAtEnd(f->b, go);
        }
        for (int i = 0; i < s->nargs && rc == 0; i++)
            if (LLVMGetTypeKind(LLVMTypeOf(saved[i])) == LLVMVectorTypeKind)
                rc = put(r, s->arg[i], LLVMBuildExtractElement(f->b, saved[i], c32(f, l), ""));
        if (rc == 0)
            rc = cg_emit_stmt(f, s);
        if (rc != 0)
            break;
        cg_cread_activated(f, s);
        LLVMValueRef nv = et ? LLVMBuildInsertElement(f->b, v, cg_vmap_get(&f->vals, s), c32(f, l), "")
                             : NULL;
        if (next) {
            LLVMBasicBlockRef done = LLVMGetInsertBlock(f->b);
            LLVMBuildBr(f->b, next);
            LLVMPositionBuilderAtEnd(f->b, next);
            if (et) {
                LLVMValueRef phi = LLVMBuildPhi(f->b, LLVMTypeOf(v), "row.lane.v");
                LLVMValueRef ins[2] = {nv, v};
                LLVMBasicBlockRef bbs[2] = {done, from};
                LLVMAddIncoming(phi, ins, bbs, 2);
                nv = phi;
            }
        }
        v = nv;
    }
    for (int i = 0; i < s->nargs; i++)
        cg_vmap_put(&f->vals, s->arg[i], saved[i]);
    f->lanes = lanes;
    if (rc != 0)
        return -1;
    return et ? put(r, s, v) : 0;
}

/* ---- statements ---- */

static int emit_block(rowvec *r, const ir_block *b, LLVMValueRef mask);

/* The lanes of an `if` branch: skipped when none of the row takes it. */
static int emit_branch(rowvec *r, const ir_block *b, LLVMValueRef mask)
{
    cg_fn *f = r->f;
    LLVMBasicBlockRef go = new_bb(f, "row.then"), done = new_bb(f, "row.endif");
    LLVMBuildCondBr(f->b, any_lane(r, mask), go, done);
    LLVMPositionBuilderAtEnd(f->b, go);
    if (emit_block(r, b, mask) != 0)
        return -1;
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, done);
    return 0;
}

static int emit_stmt(rowvec *r, const ir_stmt *s, LLVMValueRef mask)
{
    cg_fn *f = r->f;
    f->cur = s;
    LLVMValueRef a = NULL, b = NULL;
    switch (s->op) {
    case IR_SN_IS_ACTIVE:
        if (cg_fast_access(f->fast, s))
            return put(r, s, row_is_active(r, s));
        /* fall through */
    case IR_SN_ROOT:
    case IR_SN_CHILD:
    case IR_SN_INDEX:
    case IR_SN_LOOKUP:
    case IR_SN_ACTIVATE:
    case IR_SN_DEACTIVATE:
        if (cg_fast_skips(f->fast, s) || cg_cread_skips(f, s))
            return 0; /* chains the fast copy or the cached reads skip */
        return lanes_stmt(r, s, mask);
    case IR_SN_FIELD_PTR:
        if (cg_fast_access(f->fast, s) || cg_fast_skips(f->fast, s) || cg_cread_skips(f, s))
            return 0; /* chains the fast copy skips; accesses made at their use */
        if (cg_cread_row_ok(f, s))
            return put(r, s, cg_cread_row_ptr(f, s, (unsigned)r->W)); /* a sample's corner */
        return lanes_stmt(r, s, mask);
    case IR_CONST: {
        LLVMValueRef c = cg_emit_const(f, s);
        return c ? put(r, s, splat(r, c)) : -1;
    }
    case IR_ARG: {
        LLVMValueRef v = cg_arg(f, s->ty, s->index);
        if (!v)
            return cg_fail(f, "argument of type %s", ir_type_name(s->ty));
        return put(r, s, splat(r, v));
    }
    case IR_LOOP_INDEX: {
        int x = (int)s->index;
        if (x >= r->dim)
            return cg_fail(f, "loop index %d of a %d-D loop", x, r->dim);
        if (x < r->dim - 1)
            return put(r, s, splat(r, LLVMBuildAdd(f->b, r->coord[x], f->fast->pos[x], "I")));
        LLVMValueRef steps[ROWVEC_MAX];
        for (int l = 0; l < r->W; l++)
            steps[l] = c32(f, l);
        return put(r, s, LLVMBuildAdd(f->b, splat(r, r->coord[x]),
                                      LLVMConstVector(steps, (unsigned)r->W), "I"));
    }
    case IR_UNARY:
        if (s->sub == IR_TAN)
            return lanes_stmt(r, s, mask);
        if (!(a = vval(r, s->arg[0])))
            return -1;
        return put(r, s, cg_emit_unary(f, s->sub, s->ty, a));
    case IR_BINARY:
        if (s->sub == IR_ATAN2 ||
            (ir_type_is_int(s->arg[0]->ty) &&
             (s->sub == IR_DIV || s->sub == IR_MOD || s->sub == IR_SHL || s->sub == IR_SHR)))
            return lanes_stmt(r, s, mask); /* their emitters build scalar constants */
        if (!(a = vval(r, s->arg[0])) || !(b = vval(r, s->arg[1])))
            return -1;
        return put(r, s, cg_emit_binary(f, s->sub, s->arg[0]->ty, a, b));
    case IR_SELECT: {
        LLVMValueRef c = vval(r, s->arg[0]);
        if (!c || !(a = vval(r, s->arg[1])) || !(b = vval(r, s->arg[2])))
            return -1;
        return put(r, s, LLVMBuildSelect(f->b, c, a, b, "sel"));
    }
    case IR_FMA: {
        LLVMValueRef v[3];
        for (int i = 0; i < 3; i++)
            if (!(v[i] = vval(r, s->arg[i])))
                return -1;
        return put(r, s, cg_intrinsic(f, "fma", LLVMTypeOf(v[0]), v, 3));
    }
    case IR_CAST:
        if (!(a = vval(r, s->arg[0])))
            return -1;
        return put(r, s, vcast(r, s->ty, s->arg[0]->ty, a));
    case IR_ALLOCA: {
        LLVMTypeRef t = vtype(r, cg_type(f, IR_POINTEE(s->ty)));
        LLVMValueRef p = cg_entry_alloca(f, t, "row.local");
        LLVMBuildStore(f->b, LLVMConstNull(t), p);
        return put(r, s, p);
    }
    case IR_LOAD:
        if (!(a = vval(r, s->arg[0])))
            return -1;
        return put(r, s, LLVMBuildLoad2(f->b, vtype(r, cg_type(f, s->ty)), a, "row.ld"));
    case IR_STORE: {
        if (!(a = vval(r, s->arg[0])) || !(b = vval(r, s->arg[1])))
            return -1;
        if (mask) /* lanes outside the mask keep their value */
            b = LLVMBuildSelect(f->b, mask,  b,
                                LLVMBuildLoad2(f->b, LLVMTypeOf(b), a, "row.old"), "");
        LLVMBuildStore(f->b, b, a);
        return 0;
    }
    case IR_GLOBAL_LOAD:
        if (cg_fast_access(f->fast, s->arg[0]))
            return put(r, s, vload(r, s));
        if (cg_cread_row_ok(f, s->arg[0]))
            return put(r, s, cg_cread_row_load(f, s->arg[0], vval(r, s->arg[0]), (unsigned)r->W));
        return lanes_stmt(r, s, mask);
    case IR_GLOBAL_STORE:
        if (cg_fast_access(f->fast, s->arg[0]))
            return vstore(r, s, mask);
        return lanes_stmt(r, s, mask);
    case IR_ATOMIC: return lanes_stmt(r, s, mask);
    case IR_IF: {
        LLVMValueRef c = vval(r, s->arg[0]);
        if (!c)
            return -1;
        LLVMValueRef m = mask ? LLVMBuildAnd(f->b, mask, c, "") : c;
        if (emit_branch(r, s->body, m) != 0)
            return -1;
        if (!s->els || !s->els->first)
            return 0;
        LLVMValueRef nc = LLVMBuildNot(f->b, c, "");
        return emit_branch(r, s->els, mask ? LLVMBuildAnd(f->b, mask, nc, "") : nc);
    }
    default: return cg_fail(f, "rows in vectors: statement %s", ir_op_name(s->op));
    }
}

static int emit_block(rowvec *r, const ir_block *b, LLVMValueRef mask)
{
    for (const ir_stmt *s = b->first; s; s = s->next)
        if (emit_stmt(r, s, mask) != 0)
            return -1;
    return 0;
}

int cg_rowvec_emit(cg_fn *f, const ir_stmt *loop, LLVMValueRef coord[IR_MAX_DIM], int width)
{
    rowvec r;
    memset(&r, 0, sizeof r);
    r.f = f;
    r.loop = loop;
    r.W = width;
    r.dim = f->task->fields[f->task->field].dim;
    for (int x = 0; x < r.dim; x++)
        r.coord[x] = coord[x];
    int rc = emit_block(&r, loop->body, NULL);
    f->fast->pos[r.dim - 1] = c32(f, 0);
    return rc;
}
