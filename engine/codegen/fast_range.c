/* The fast copy of a range_for over 1-D fields whose chains are all dense: there the element
 * at index x is at one address plus (x - offset) * stride, so the loop body addresses
 * field[i + c] as addr0 + i * stride, with addr0 computed once per call. That is a plain
 * strided loop LLVM vectorizes for the host CPU, instead of per-level shifts, masks, range
 * checks and selects per element.
 *
 * When the address is linear. The generic code (emit_sparse.c) computes, per dense level l,
 * cell = ((u >> axis_shift_l) & mask_l) and adds offset_in_parent + header + cell * cell_bytes,
 * with u = x - coord_offset. The sum equals u * stride (plus constant offsets) when every
 * level has the same coord_offset and extent, the levels' bit fields are contiguous from the
 * leaf up (axis_shift_leaf = 0, axis_shift_l = axis_shift_{l+1} + axis_bits_{l+1}, the top
 * covering all extent bits), cell_bytes_l = stride << axis_shift_l, and u is in range, so no
 * mask cuts it: 0 <= lo + c - offset and hi - 1 + c - offset < 2^extent. The per-call check
 * tests exactly that on the runtime's geometry, and that stride is the element size (unit
 * stride). Out-of-range or activating accesses need nothing else: dense levels activate
 * nothing, and a range error cannot happen when u is in range. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>

#include "engine/codegen/cg_internal.h"
#include "sparse/runtime/runtime.h"

static int all_dense(const ir_field_info *fi)
{
    for (int l = 1; l < fi->nlevels; l++)
        if (fi->levels[l].kind != IR_KIND_DENSE)
            return 0;
    return fi->nlevels >= 2 && fi->dim == 1 && ir_type_size(fi->elem) > 0;
}

static LLVMValueRef geo32(cg_fn *f, int slot, int32_t sid, uint64_t member)
{
    return cg_rt_load(f, slot, CG_AT_SNODE, sid, member, f->t_i32);
}

static LLVMValueRef geo64(cg_fn *f, int slot, int32_t sid, uint64_t member)
{
    return cg_rt_load(f, slot, CG_AT_SNODE, sid, member, f->t_i64);
}

static LLVMValueRef and2(cg_fn *f, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildAnd(f->b, a, b, "fast.ok");
}

static LLVMValueRef eq(cg_fn *f, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildICmp(f->b, LLVMIntEQ, a, b, "");
}

/* The per-call check of access a, and its addr0. */
static LLVMValueRef check_one(cg_fn *f, const cg_access *a, LLVMValueRef lo, LLVMValueRef hi,
                              LLVMValueRef *addr0)
{
    const ir_field_info *fi = &f->task->fields[a->slot];
    int leaf = fi->nlevels - 1, slot = a->slot;
    LLVMTypeRef i64 = f->t_i64, i32 = f->t_i32;
    int32_t lsid = cg_snode_id(f, slot, leaf);
    if (lsid < 0)
        return NULL;
    LLVMValueRef off = geo32(f, slot, lsid, offsetof(plm_rt_snode, coord_offset));
    LLVMValueRef ext = geo32(f, slot, lsid, offsetof(plm_rt_snode, extent_bits));
    LLVMValueRef stride = cg_rt_load(f, slot, CG_AT_FIELD, 0, offsetof(plm_rt_field, stride), i64);
    LLVMValueRef foff = cg_rt_load(f, slot, CG_AT_FIELD, 0, offsetof(plm_rt_field, offset), i64);
    uint64_t esz = (uint64_t)ir_type_size(fi->elem);
    LLVMValueRef ok = eq(f, stride, LLVMConstInt(i64, esz, 0));
    LLVMValueRef shift = LLVMConstInt(i32, 0, 0); /* bits below level l */
    LLVMValueRef bytes = LLVMBuildAdd(f->b, foff, LLVMConstInt(i64, a->fptr->comp * esz, 0), "");
    for (int l = leaf; l >= 1; l--) {
        int32_t sid = cg_snode_id(f, slot, l);
        if (sid < 0)
            return NULL;
        ok = and2(f, ok, eq(f, geo32(f, slot, sid, offsetof(plm_rt_snode, coord_offset)), off));
        ok = and2(f, ok, eq(f, geo32(f, slot, sid, offsetof(plm_rt_snode, extent_bits)), ext));
        ok = and2(f, ok, eq(f, geo32(f, slot, sid, cg_off_snode_index_shift(0)),
                            LLVMConstInt(i32, 0, 0)));
        ok = and2(f, ok, eq(f, geo32(f, slot, sid, cg_off_snode_axis_shift(0)), shift));
        if (l < leaf) {
            LLVMValueRef want = LLVMBuildShl(f->b, stride, LLVMBuildZExt(f->b, shift, i64, ""), "");
            ok = and2(f, ok, eq(f, geo64(f, slot, sid, offsetof(plm_rt_snode, cell_bytes)), want));
        }
        shift = LLVMBuildAdd(f->b, shift, geo32(f, slot, sid, cg_off_snode_axis_bits(0)), "");
        bytes = LLVMBuildAdd(f->b, bytes, geo64(f, slot, sid, cg_off_snode_offset_in_parent()), "");
        bytes = LLVMBuildAdd(f->b, bytes, geo64(f, slot, sid, offsetof(plm_rt_snode, header_bytes)), "");
    }
    ok = and2(f, ok, eq(f, shift, ext));
    /* u at loop counter i is i + c - offset: in [0, 2^ext) for i in [lo, hi) */
    LLVMValueRef u0 = LLVMBuildSub(f->b, LLVMConstInt(i64, (uint64_t)(int64_t)a->c[0], 1),
                                   LLVMBuildSExt(f->b, off, i64, ""), "u0");
    LLVMValueRef first = LLVMBuildAdd(f->b, lo, u0, "");
    LLVMValueRef last = LLVMBuildAdd(f->b, LLVMBuildSub(f->b, hi, LLVMConstInt(i64, 1, 0), ""),
                                     u0, "");
    LLVMValueRef lim = LLVMBuildShl(f->b, LLVMConstInt(i64, 1, 0), LLVMBuildZExt(f->b, ext, i64, ""), "");
    LLVMValueRef inr = and2(f, LLVMBuildICmp(f->b, LLVMIntSGE, first, LLVMConstInt(i64, 0, 0), ""),
                            LLVMBuildICmp(f->b, LLVMIntSLT, last, lim, ""));
    /* ext is at most 30 (layout.h): the shift above is defined */
    ok = and2(f, ok, LLVMBuildICmp(f->b, LLVMIntULE, ext, LLVMConstInt(i32, 30, 0), ""));
    ok = and2(f, ok, LLVMBuildOr(f->b, LLVMBuildICmp(f->b, LLVMIntSGE, lo, hi, ""), inr, ""));
    bytes = LLVMBuildAdd(f->b, bytes, LLVMBuildMul(f->b, u0, stride, ""), "");
    LLVMValueRef root = cg_rt_load(f, slot, CG_AT_RUNTIME, 0, offsetof(plm_runtime, root), f->t_ptr);
    *addr0 = LLVMBuildGEP2(f->b, f->t_i8, root, &bytes, 1, "addr0");
    return ok;
}

LLVMValueRef cg_fast_range_check(cg_fn *f, cg_fast *fast, LLVMValueRef lo, LLVMValueRef hi)
{
    int n = 0;
    for (int i = 0; i < fast->nacc; i++)
        if (all_dense(&f->task->fields[fast->acc[i].slot]))
            fast->acc[n++] = fast->acc[i];
    fast->nacc = n;
    if (n == 0)
        return NULL;
    fast->addr0 = calloc((size_t)n, sizeof *fast->addr0);
    if (!fast->addr0) {
        cg_fail(f, "out of memory");
        return NULL;
    }
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    for (int i = 0; i < n; i++) {
        LLVMValueRef c = check_one(f, &fast->acc[i], lo, hi, &fast->addr0[i]);
        if (!c)
            return NULL;
        ok = and2(f, ok, c);
    }
    fast->nonnull = 1;
    return ok;
}

LLVMValueRef cg_fast_range_ptr(cg_fn *f, const cg_access *a, LLVMValueRef i)
{
    int k = (int)(a - f->fast->acc);
    LLVMTypeRef et = cg_mem_type(f, f->task->fields[a->slot].elem);
    return LLVMBuildGEP2(f->b, et, f->fast->addr0[k], &i, 1, "fast.ptr");
}
