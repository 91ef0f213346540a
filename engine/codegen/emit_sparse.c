/* The lowered sparse operations (sn_root, sn_child, sn_index, sn_lookup, sn_field_ptr,
 * sn_is_active, sn_activate, sn_deactivate) against the sparse runtime (sparse/runtime/).
 *
 * Geometry (offsets, shifts, strides) is read from the bound runtime with invariant loads in
 * the entry block: it never changes while a task runs, and loading it once keeps it out of the
 * loops, where stores to field values (which may alias the arena for all LLVM knows) would
 * otherwise force reloads. The SNode kind of each level is known from the IR, so dense levels
 * are plain address arithmetic and other kinds call their plm_rt_<kind>_* function directly
 * (linked from the runtime bitcode and inlined).
 *
 * Every operation is null-propagating (ir.h), and an index of -1 (outside the field's range,
 * from sn_index) is treated like an inactive cell: reads see nothing active, writes record
 * PLM_RT_ERR_RANGE and go to the runtime's value sink. The struct layouts read here are those
 * of runtime.h on a 64-bit target; x86_64 and nvptx64 lay them out alike. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"
#include "sparse/runtime/runtime.h"

uint64_t cg_off_snode_list(void) { return offsetof(plm_rt_snode, list); }
uint64_t cg_off_snode_offset_in_parent(void) { return offsetof(plm_rt_snode, offset_in_parent); }
uint64_t cg_off_snode_index_shift(int a)
{
    return offsetof(plm_rt_snode, index_shift) + 4u * (uint64_t)a;
}
uint64_t cg_off_snode_axis_shift(int a)
{
    return offsetof(plm_rt_snode, axis_shift) + 4u * (uint64_t)a;
}
uint64_t cg_off_snode_axis_bits(int a)
{
    return offsetof(plm_rt_snode, axis_bits) + 4u * (uint64_t)a;
}
uint64_t cg_off_snode_coord_offset(int a)
{
    return offsetof(plm_rt_snode, coord_offset) + 4u * (uint64_t)a;
}
uint64_t cg_sizeof_elem(void) { return sizeof(plm_rt_elem); }
uint64_t cg_off_elem_cell(void) { return offsetof(plm_rt_elem, cell); }
uint64_t cg_off_elem_coord(int a) { return offsetof(plm_rt_elem, coord) + 4u * (uint64_t)a; }

static void set_invariant(cg_fn *f, LLVMValueRef load)
{
    unsigned kind = LLVMGetMDKindIDInContext(f->ctx, "invariant.load", 14);
    LLVMSetMetadata(load, kind, LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, NULL, 0)));
}

static LLVMValueRef byte_gep(cg_fn *f, LLVMBuilderRef b, LLVMValueRef p, LLVMValueRef off)
{
    return LLVMBuildGEP2(b, f->t_i8, p, &off, 1, "");
}

LLVMValueRef cg_runtime(cg_fn *f, int slot)
{
    if (!f->rt[slot]) {
        LLVMValueRef i = LLVMConstInt(f->t_i64, (unsigned long long)slot, 0);
        LLVMValueRef p = LLVMBuildGEP2(f->eb, f->t_ptr, f->rt_arr, &i, 1, "rtp");
        f->rt[slot] = LLVMBuildLoad2(f->eb, f->t_ptr, p, "rt");
        set_invariant(f, f->rt[slot]);
    }
    return f->rt[slot];
}

LLVMValueRef cg_field_id(cg_fn *f, int slot)
{
    if (!f->fid[slot]) {
        LLVMValueRef i = LLVMConstInt(f->t_i64, (unsigned long long)slot, 0);
        LLVMValueRef p = LLVMBuildGEP2(f->eb, f->t_i32, f->fid_arr, &i, 1, "fidp");
        f->fid[slot] = LLVMBuildLoad2(f->eb, f->t_i32, p, "fid");
        set_invariant(f, f->fid[slot]);
    }
    return f->fid[slot];
}

/* A geometry member the task's field info knows (ir_geom): its value, so the code folds it
 * instead of loading it from the runtime. 1 when known. */
static int geom_const(const cg_fn *f, int slot, int what, int32_t snode, uint64_t member,
                      uint64_t *v)
{
    const ir_field_info *fi = &f->task->fields[slot];
    if (what == CG_AT_FIELD) {
        if (!fi->place_known)
            return 0;
        if (member == offsetof(plm_rt_field, offset))
            *v = fi->place_offset;
        else if (member == offsetof(plm_rt_field, stride))
            *v = fi->place_stride;
        else
            return 0;
        return 1;
    }
    if (what != CG_AT_SNODE)
        return 0;
    const ir_level *lv = NULL;
    for (int l = 0; l < fi->nlevels && !lv; l++)
        if (fi->levels[l].rt_snode == snode && fi->levels[l].geom.known)
            lv = &fi->levels[l];
    if (!lv)
        return 0;
    const ir_geom *g = &lv->geom;
    for (unsigned a = 0; a < IR_MAX_DIM; a++) {
        if (member == offsetof(plm_rt_snode, axis_bits) + 4 * a)
            return *v = lv->log2_size[a], 1;
        if (member == offsetof(plm_rt_snode, axis_shift) + 4 * a)
            return *v = g->axis_shift[a], 1;
        if (member == offsetof(plm_rt_snode, index_shift) + 4 * a)
            return *v = g->index_shift[a], 1;
        if (member == offsetof(plm_rt_snode, extent_bits) + 4 * a)
            return *v = g->extent_bits[a], 1;
        if (member == offsetof(plm_rt_snode, coord_offset) + 4 * a)
            return *v = (uint64_t)(int64_t)g->coord_offset[a], 1;
    }
    if (member == offsetof(plm_rt_snode, num_cells))
        return *v = (uint64_t)(int64_t)g->num_cells, 1;
    if (member == offsetof(plm_rt_snode, header_bytes))
        return *v = g->header_bytes, 1;
    if (member == offsetof(plm_rt_snode, cell_bytes))
        return *v = g->cell_bytes, 1;
    if (member == offsetof(plm_rt_snode, offset_in_parent))
        return *v = g->offset_in_parent, 1;
    return 0;
}

LLVMValueRef cg_rt_load(cg_fn *f, int slot, int what, int32_t snode, uint64_t member,
                        LLVMTypeRef ty)
{
    uint64_t known;
    if (geom_const(f, slot, what, snode, member, &known))
        return LLVMConstInt(ty, known, 0);
    uint64_t off = member;
    if (what == CG_AT_SNODE)
        off += offsetof(plm_runtime, snodes) + (uint64_t)snode * sizeof(plm_rt_snode);
    for (int i = 0; i < f->ncached; i++) {
        cg_cached *c = &f->cache[i];
        if (c->slot == slot && c->what == what && c->offset == off &&
            LLVMTypeOf(c->v) == ty)
            return c->v;
    }
    LLVMValueRef rt = cg_runtime(f, slot);
    LLVMValueRef addr;
    if (what == CG_AT_FIELD) {
        LLVMValueRef fid = LLVMBuildZExt(f->eb, cg_field_id(f, slot), f->t_i64, "");
        LLVMValueRef o = LLVMBuildAdd(
            f->eb, LLVMBuildMul(f->eb, fid, LLVMConstInt(f->t_i64, sizeof(plm_rt_field), 0), ""),
            LLVMConstInt(f->t_i64, offsetof(plm_runtime, fields) + off, 0), "");
        addr = byte_gep(f, f->eb, rt, o);
    } else {
        addr = byte_gep(f, f->eb, rt, LLVMConstInt(f->t_i64, off, 0));
    }
    LLVMValueRef v = LLVMBuildLoad2(f->eb, ty, addr, "geo");
    set_invariant(f, v);
    if (f->ncached < CG_MAX_CACHED)
        f->cache[f->ncached++] = (cg_cached){slot, what, off, v};
    return v;
}

int32_t cg_snode_id(cg_fn *f, int slot, int level)
{
    const ir_task *t = f->task;
    if (slot < 0 || slot >= t->nfields) {
        cg_fail(f, "field slot %d out of range (%u fields)", slot, t->nfields);
        return -1;
    }
    const ir_field_info *fi = &t->fields[slot];
    if (level < 0 || level >= fi->nlevels) {
        cg_fail(f, "field '%s' has no level %d", fi->name, level);
        return -1;
    }
    int32_t id = fi->levels[level].rt_snode;
    if (id < 0 || id >= PLM_RT_MAX_SNODES) {
        cg_fail(f, "field '%s' level %d has no runtime SNode id (rt_snode %d)", fi->name, level,
                id);
        return -1;
    }
    return id;
}

LLVMValueRef cg_call_rt(cg_fn *f, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                        LLVMValueRef *args, unsigned n)
{
    LLVMTypeRef fty = LLVMFunctionType(ret, params, n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(f->mod, name);
    if (!fn)
        fn = LLVMAddFunction(f->mod, name, fty);
    return LLVMBuildCall2(f->b, fty, fn, args, n, "");
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case IR_KIND_POINTER: return "pointer";
    case IR_KIND_BITMASKED: return "bitmasked";
    case IR_KIND_DYNAMIC: return "dynamic";
    default: return "dense";
    }
}

/* ---- guarded runtime calls: the call runs only when the container and index are valid ---- */

typedef struct guard {
    LLVMBasicBlockRef done;
} guard;

/* Branches to a new block when ok; otherwise to the end, after recording PLM_RT_ERR_RANGE
 * when record_range is set and the container exists (so the index was out of range). */
static void guard_begin(cg_fn *f, guard *g, LLVMValueRef ok, LLVMValueRef c, LLVMValueRef rt,
                        int32_t sid, int record_range)
{
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "sn.ok");
    g->done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "sn.done");
    if (!record_range) {
        LLVMBuildCondBr(f->b, ok, then, g->done);
        LLVMPositionBuilderAtEnd(f->b, then);
        return;
    }
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "sn.bad");
    LLVMBasicBlockRef rec = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "sn.range");
    LLVMBuildCondBr(f->b, ok, then, bad);
    LLVMPositionBuilderAtEnd(f->b, bad);
    LLVMBuildCondBr(f->b, LLVMBuildIsNotNull(f->b, c, ""), rec, g->done);
    LLVMPositionBuilderAtEnd(f->b, rec);
    LLVMTypeRef p[4] = {f->t_ptr, f->t_i32, f->t_i32, f->t_i64};
    LLVMValueRef a[4] = {rt, LLVMConstInt(f->t_i32, PLM_RT_ERR_RANGE, 0),
                         LLVMConstInt(f->t_i32, (unsigned long long)sid, 0),
                         LLVMConstInt(f->t_i64, 0, 0)};
    cg_call_rt(f, "plm_rt_set_error", f->t_void, p, a, 4);
    LLVMBuildBr(f->b, g->done);
    LLVMPositionBuilderAtEnd(f->b, then);
}

/* Ends the guarded region; the result is v on the ok path and `other` on every other path
 * (every other predecessor of the end block is a not-ok path). */
static LLVMValueRef guard_end(cg_fn *f, guard *g, LLVMValueRef v, LLVMValueRef other)
{
    LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, g->done);
    LLVMPositionBuilderAtEnd(f->b, g->done);
    if (!v)
        return NULL;
    LLVMValueRef phi = LLVMBuildPhi(f->b, LLVMTypeOf(v), "sn");
    LLVMValueRef ins[4];
    LLVMBasicBlockRef blocks[4];
    unsigned n = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(g->done)); u && n < 4;
         u = LLVMGetNextUse(u)) {
        LLVMBasicBlockRef pb = LLVMGetInstructionParent(LLVMGetUser(u));
        ins[n] = pb == from ? v : other;
        blocks[n++] = pb;
    }
    LLVMAddIncoming(phi, ins, blocks, n);
    return phi;
}

void cg_note_range(cg_fn *f, int slot, LLVMValueRef c, LLVMValueRef i)
{
    if (!f->range_flag[slot]) {
        f->range_flag[slot] = cg_entry_alloca(f, f->t_i8, "range.err");
        LLVMBuildStore(f->eb, LLVMConstInt(f->t_i8, 0, 0), f->range_flag[slot]);
    }
    LLVMValueRef bad = LLVMBuildAnd(
        f->b, LLVMBuildIsNotNull(f->b, c, ""),
        LLVMBuildICmp(f->b, LLVMIntSLT, i, LLVMConstInt(f->t_i32, 0, 0), ""), "");
    LLVMValueRef v = LLVMBuildLoad2(f->b, f->t_i8, f->range_flag[slot], "");
    LLVMBuildStore(f->b, LLVMBuildOr(f->b, v, LLVMBuildZExt(f->b, bad, f->t_i8, ""), ""),
                   f->range_flag[slot]);
}

void cg_emit_range_errors(cg_fn *f)
{
    for (int slot = 0; slot < f->task->nfields; slot++) {
        if (!f->range_flag[slot])
            continue;
        const ir_field_info *fi = &f->task->fields[slot];
        LLVMValueRef set = LLVMBuildICmp(f->b, LLVMIntNE,
                                         LLVMBuildLoad2(f->b, f->t_i8, f->range_flag[slot], ""),
                                         LLVMConstInt(f->t_i8, 0, 0), "");
        LLVMBasicBlockRef rec = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "range.rec");
        LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "range.next");
        LLVMBuildCondBr(f->b, set, rec, next);
        LLVMPositionBuilderAtEnd(f->b, rec);
        LLVMTypeRef p[4] = {f->t_ptr, f->t_i32, f->t_i32, f->t_i64};
        LLVMValueRef a[4] = {cg_runtime(f, slot), LLVMConstInt(f->t_i32, PLM_RT_ERR_RANGE, 0),
                             LLVMConstInt(f->t_i32, (uint64_t)fi->levels[fi->nlevels - 1].rt_snode, 0),
                             LLVMConstInt(f->t_i64, 0, 0)};
        cg_call_rt(f, "plm_rt_set_error", f->t_void, p, a, 4);
        LLVMBuildBr(f->b, next);
        LLVMPositionBuilderAtEnd(f->b, next);
    }
}

/* ---- the operations ---- */

static LLVMValueRef sn_index(cg_fn *f, const ir_stmt *s, int32_t sid)
{
    int slot = s->field;
    int dim = f->task->fields[slot].dim;
    LLVMValueRef idx = LLVMConstInt(f->t_i32, 0, 0), ok = LLVMConstInt(f->t_i1, 1, 0);
    for (int a = 0; a < dim; a++) {
        LLVMValueRef x = cg_val(f, s->arg[a]);
        if (!x)
            return NULL;
        LLVMValueRef off = cg_rt_load(f, slot, CG_AT_SNODE, sid,
                                      offsetof(plm_rt_snode, coord_offset) + 4u * (uint64_t)a,
                                      f->t_i32);
        LLVMValueRef ext = cg_rt_load(f, slot, CG_AT_SNODE, sid,
                                      offsetof(plm_rt_snode, extent_bits) + 4u * (uint64_t)a,
                                      f->t_i32);
        LLVMValueRef ash = cg_rt_load(f, slot, CG_AT_SNODE, sid, cg_off_snode_axis_shift(a),
                                      f->t_i32);
        LLVMValueRef bits = cg_rt_load(f, slot, CG_AT_SNODE, sid, cg_off_snode_axis_bits(a),
                                       f->t_i32);
        LLVMValueRef ish = cg_rt_load(f, slot, CG_AT_SNODE, sid, cg_off_snode_index_shift(a),
                                      f->t_i32);
        /* u = x - offset in 64 bits; in range when 0 <= u < 2^extent (one unsigned compare) */
        LLVMValueRef u = LLVMBuildSub(f->b, LLVMBuildSExt(f->b, x, f->t_i64, ""),
                                      LLVMBuildSExt(f->b, off, f->t_i64, ""), "u");
        LLVMValueRef lim = LLVMBuildShl(f->b, LLVMConstInt(f->t_i64, 1, 0),
                                        LLVMBuildZExt(f->b, ext, f->t_i64, ""), "");
        ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntULT, u, lim, ""), "inrange");
        LLVMValueRef mask = LLVMBuildSub(
            f->b, LLVMBuildShl(f->b, LLVMConstInt(f->t_i32, 1, 0), bits, ""),
            LLVMConstInt(f->t_i32, 1, 0), "");
        LLVMValueRef cell = LLVMBuildAnd(
            f->b, LLVMBuildLShr(f->b, LLVMBuildTrunc(f->b, u, f->t_i32, ""), ash, ""), mask, "");
        idx = LLVMBuildOr(f->b, idx, LLVMBuildShl(f->b, cell, ish, ""), "");
    }
    return LLVMBuildSelect(f->b, ok, idx, LLVMConstAllOnes(f->t_i32), "cellidx");
}

static LLVMValueRef valid(cg_fn *f, LLVMValueRef c, LLVMValueRef i)
{
    return LLVMBuildAnd(f->b, LLVMBuildIsNotNull(f->b, c, ""),
                        LLVMBuildICmp(f->b, LLVMIntSGE, i, LLVMConstInt(f->t_i32, 0, 0), ""),
                        "valid");
}

static LLVMValueRef sn_lookup(cg_fn *f, const ir_stmt *s, int32_t sid, LLVMValueRef c,
                              LLVMValueRef i)
{
    const ir_field_info *fi = &f->task->fields[s->field];
    int kind = fi->levels[s->level].kind;
    LLVMValueRef rt = cg_runtime(f, s->field);
    LLVMValueRef null = LLVMConstPointerNull(f->t_ptr);
    if (kind == IR_KIND_ROOT)
        return c;
    LLVMValueRef ok = valid(f, c, i);
    if (kind == IR_KIND_DENSE && s->level + 1 < fi->nlevels) {
        LLVMValueRef hdr = cg_rt_load(f, s->field, CG_AT_SNODE, sid,
                                      offsetof(plm_rt_snode, header_bytes), f->t_i64);
        LLVMValueRef cb = cg_rt_load(f, s->field, CG_AT_SNODE, sid,
                                     offsetof(plm_rt_snode, cell_bytes), f->t_i64);
        LLVMValueRef o = LLVMBuildAdd(
            f->b, hdr, LLVMBuildMul(f->b, LLVMBuildSExt(f->b, i, f->t_i64, ""), cb, ""), "");
        if (s->activate)
            cg_note_range(f, s->field, c, i);
        return LLVMBuildSelect(f->b, ok, byte_gep(f, f->b, c, o), null, "cell");
    }
    char name[64];
    snprintf(name, sizeof name, "plm_rt_%s_lookup_element",
             kind == IR_KIND_DENSE ? "dense" : kind_name(kind));
    guard g;
    guard_begin(f, &g, ok, c, rt, sid, s->activate);
    LLVMTypeRef p[5] = {f->t_ptr, f->t_i32, f->t_ptr, f->t_i32, f->t_i32};
    LLVMValueRef a[5] = {rt, LLVMConstInt(f->t_i32, (unsigned long long)sid, 0), c, i,
                         LLVMConstInt(f->t_i32, s->activate, 0)};
    LLVMValueRef v = cg_call_rt(f, name, f->t_ptr, p, a, 5);
    return guard_end(f, &g, v, null);
}

LLVMValueRef cg_dense_elem(cg_fn *f, const ir_stmt *fptr, LLVMValueRef c, LLVMValueRef cell,
                          LLVMValueRef stride)
{
    const ir_field_info *fi = &f->task->fields[fptr->field];
    int32_t sid = cg_snode_id(f, fptr->field, fi->nlevels - 1);
    if (sid < 0)
        return NULL;
    if (!stride)
        stride = cg_rt_load(f, fptr->field, CG_AT_FIELD, 0, offsetof(plm_rt_field, stride), f->t_i64);
    LLVMValueRef hdr = cg_rt_load(f, fptr->field, CG_AT_SNODE, sid,
                                  offsetof(plm_rt_snode, header_bytes), f->t_i64);
    LLVMValueRef foff = cg_rt_load(f, fptr->field, CG_AT_FIELD, 0,
                                   offsetof(plm_rt_field, offset), f->t_i64);
    LLVMValueRef comp_off =
        LLVMConstInt(f->t_i64, (uint64_t)fptr->comp * (uint64_t)ir_type_size(fi->elem), 0);
    LLVMValueRef o = LLVMBuildAdd(f->b, LLVMBuildAdd(f->b, hdr, foff, ""), comp_off, "");
    o = LLVMBuildAdd(f->b, o, LLVMBuildMul(f->b, cell, stride, ""), "");
    return byte_gep(f, f->b, c, o);
}

static LLVMValueRef sn_field_ptr(cg_fn *f, const ir_stmt *s, LLVMValueRef c, LLVMValueRef i)
{
    const ir_field_info *fi = &f->task->fields[s->field];
    int leaf = fi->nlevels - 1;
    int32_t sid = cg_snode_id(f, s->field, leaf);
    if (sid < 0)
        return NULL;
    if (s->comp >= fi->components) {
        cg_fail(f, "component %u of a field with %u", s->comp, fi->components);
        return NULL;
    }
    LLVMValueRef rt = cg_runtime(f, s->field);
    LLVMValueRef other = s->activate
                             ? cg_rt_load(f, s->field, CG_AT_RUNTIME, 0,
                                          offsetof(plm_runtime, value_sink), f->t_ptr)
                             : LLVMConstPointerNull(f->t_ptr);
    LLVMValueRef comp_off =
        LLVMConstInt(f->t_i64, (uint64_t)s->comp * (uint64_t)ir_type_size(fi->elem), 0);
    LLVMValueRef ok = valid(f, c, i);
    int kind = fi->levels[leaf].kind;
    if (kind == IR_KIND_DENSE) {
        LLVMValueRef at = cg_dense_elem(f, s, c, LLVMBuildSExt(f->b, i, f->t_i64, ""), NULL);
        if (s->activate)
            cg_note_range(f, s->field, c, i);
        return LLVMBuildSelect(f->b, ok, at, other, "fptr");
    }
    guard g;
    guard_begin(f, &g, ok, c, rt, sid, s->activate);
    LLVMTypeRef p[5] = {f->t_ptr, f->t_i32, f->t_ptr, f->t_i32, f->t_i32};
    LLVMValueRef a[5] = {rt, cg_field_id(f, s->field), c, i,
                         LLVMConstInt(f->t_i32, s->activate, 0)};
    LLVMValueRef v = cg_call_rt(f, "plm_rt_field_ptr", f->t_ptr, p, a, 5);
    /* NULL: inactive (reads); never NULL with activate */
    LLVMValueRef at = byte_gep(f, f->b, v, comp_off);
    at = LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, v, ""), other, at, "");
    return guard_end(f, &g, at, other);
}

static LLVMValueRef sn_cell_op(cg_fn *f, const ir_stmt *s, int32_t sid, LLVMValueRef c,
                               LLVMValueRef i)
{
    int kind = f->task->fields[s->field].levels[s->level].kind;
    LLVMValueRef rt = cg_runtime(f, s->field);
    LLVMValueRef ok = valid(f, c, i);
    if (s->op == IR_SN_IS_ACTIVE && (kind == IR_KIND_DENSE || kind == IR_KIND_ROOT))
        return ok;
    if (s->op != IR_SN_IS_ACTIVE && (kind == IR_KIND_DENSE || kind == IR_KIND_ROOT)) {
        if (s->op == IR_SN_ACTIVATE) /* nothing to activate, but a range error to record */
            cg_note_range(f, s->field, c, i);
        return LLVMConstInt(f->t_i1, 1, 0);
    }
    const char *what = s->op == IR_SN_IS_ACTIVE ? "is_active"
                       : s->op == IR_SN_ACTIVATE ? "activate"
                                                 : "deactivate";
    char name[64];
    snprintf(name, sizeof name, "plm_rt_%s_%s", kind_name(kind), what);
    guard g;
    guard_begin(f, &g, ok, c, rt, sid, s->op == IR_SN_ACTIVATE);
    LLVMTypeRef p[4] = {f->t_ptr, f->t_i32, f->t_ptr, f->t_i32};
    LLVMValueRef a[4] = {rt, LLVMConstInt(f->t_i32, (unsigned long long)sid, 0), c, i};
    if (s->op == IR_SN_IS_ACTIVE) {
        LLVMValueRef v = cg_call_rt(f, name, f->t_i32, p, a, 4);
        v = LLVMBuildICmp(f->b, LLVMIntNE, v, LLVMConstInt(f->t_i32, 0, 0), "active");
        return guard_end(f, &g, v, LLVMConstInt(f->t_i1, 0, 0));
    }
    cg_call_rt(f, name, f->t_void, p, a, 4);
    guard_end(f, &g, NULL, NULL);
    return LLVMConstInt(f->t_i1, 1, 0);
}

LLVMValueRef cg_emit_sn_index(cg_fn *f, const ir_stmt *s, int32_t sid)
{
    return sn_index(f, s, sid);
}

LLVMValueRef cg_emit_field_ptr_at(cg_fn *f, const ir_stmt *s, LLVMValueRef c, LLVMValueRef i)
{
    return sn_field_ptr(f, s, c, i);
}

LLVMValueRef cg_emit_sn(cg_fn *f, const ir_stmt *s)
{
    if (s->field >= f->task->nfields) {
        cg_fail(f, "field slot %u out of range", s->field);
        return NULL;
    }
    if (s->op == IR_SN_ROOT) {
        if (cg_snode_id(f, s->field, 0) < 0)
            return NULL;
        return cg_rt_load(f, s->field, CG_AT_RUNTIME, 0, offsetof(plm_runtime, root), f->t_ptr);
    }
    if (s->op == IR_SN_FIELD_PTR) {
        LLVMValueRef c = cg_val(f, s->arg[0]), i = c ? cg_val(f, s->arg[1]) : NULL;
        return i ? sn_field_ptr(f, s, c, i) : NULL;
    }
    int32_t sid = cg_snode_id(f, s->field, s->level);
    if (sid < 0)
        return NULL;
    if (s->op == IR_SN_INDEX)
        return sn_index(f, s, sid);
    LLVMValueRef c = cg_val(f, s->arg[0]);
    if (!c)
        return NULL;
    if (s->op == IR_SN_CHILD) {
        LLVMValueRef off = cg_rt_load(f, s->field, CG_AT_SNODE, sid,
                                      cg_off_snode_offset_in_parent(), f->t_i64);
        return LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, c, ""), LLVMConstPointerNull(f->t_ptr),
                               byte_gep(f, f->b, c, off), "child");
    }
    LLVMValueRef i = cg_val(f, s->arg[1]);
    if (!i)
        return NULL;
    if (s->op == IR_SN_LOOKUP)
        return sn_lookup(f, s, sid, c, i);
    return sn_cell_op(f, s, sid, c, i);
}
