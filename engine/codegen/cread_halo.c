/* Halos: the corners of a row's samples read from a dense copy of the blocks around the list
 * entry instead of through the entry's table of blocks (cached_read.c).
 *
 * Why. Through the table, each corner of a trilinear sample costs two dependent gathers per
 * row: the lanes' block pointers from the table, then the values at 64-bit addresses spread
 * over up to eight blocks of each field. Stop 40 measured that this, not the arithmetic, is
 * what the smoke solver's advection waits on. Copying, once per entry, the entry's block and
 * a margin of CREAD_HALO voxels around it from the 27 blocks into one box on the stack turns
 * each corner into one gather with 32-bit offsets into a few kilobytes that stay in L1. The
 * three fused advection tasks of the default scene ran 22-23% faster (docs/benchmarks.md,
 * stop 41); a margin of 2 voxels was slower than 1 (its copy costs more than the rows it
 * saves from the table's way: 0.3% of rows with a margin of 1).
 *
 * Which reads. Direct row reads (cg_cread_row_ok) of a group whose members lie within one
 * voxel of its base on each axis (a sample's corners), of a slot that has an entry table,
 * whose leaf is 8^3 cells ordered x-major with an element stride known while compiling, and
 * that the task never changes. A row whose lanes do not all lie in the halo takes the walk of
 * the table's way (cached_read.c) lane by lane, so any displacement still reads the right
 * block.
 *
 * Why the copy cannot be stale. Nothing the task does changes a slot with a halo (checked
 * statically), and a per-entry test (halo_ok) makes sure no slot bound to the same field is
 * changed either; otherwise every row takes the table's way. The table's blocks are never
 * NULL (an inactive or out-of-range block is the leaf's block of background values), so the
 * halo holds what the table's way would read, and rows give the same bits either way.
 *
 * State lives in the cg_cread (cread_internal.h); the halos are allocas of the task function,
 * so each thread running it has its own. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/codegen/cread_internal.h"
#include "sparse/runtime/runtime.h"

#define CREAD_HALO 1            /* voxels copied on each side of the entry's block */
#define HALO_W (8 + 2 * CREAD_HALO)
#define HALO_MAX_BYTES (96 * 1024) /* stack a task's halos may take in all */

static LLVMValueRef c64(cg_fn *f, long long v)
{
    return LLVMConstInt(f->t_i64, (unsigned long long)v, 1);
}

/* Whether slot s's sampled row reads may come from a halo (see the top); decided once. */
static int halo_decide(cg_fn *f, int s, const uint8_t changed[64], long long *bytes)
{
    cg_cread *cr = f->cread;
    if (cr->halo[s])
        return cr->halo[s] > 0;
    cr->halo[s] = -1;
    const ir_task *t = f->task;
    const ir_field_info *fi = &t->fields[s];
    cg_cr_leaf_geom lg;
    if (fi->dim != 3 || fi->elem != IR_F32 || changed[s] || !cr->table[s] || !cr->table_bg[s] ||
        cg_cr_leaf_geometry(f, s, &lg) != 0)
        return 0;
    for (int a = 0; a < 3; a++)
        if (lg.bits[a] != 3 || lg.ish[a] != 3u * (2u - (unsigned)a))
            return 0;
    int any = 0;
    for (int i = 0; i < cr->nsite && !any; i++) {
        const cread_site *site = &cr->site[i];
        if ((int)site->child->field != s || !site->direct || !site->group)
            continue;
        const cread_group *g = &cr->group[site->group - 1];
        int narrow = 1;
        for (int a = 0; a < 3; a++)
            narrow &= g->dmax[a] - g->dmin[a] <= 1;
        any = narrow && g->tab > 0 && cg_cr_sampled(g, 3);
    }
    int32_t lsid = cg_snode_id(f, s, fi->nlevels - 1);
    if (!any || lsid < 0)
        return 0;
    LLVMValueRef stride = cg_rt_load(f, s, CG_AT_FIELD, 0, offsetof(plm_rt_field, stride), f->t_i64);
    LLVMValueRef hdr = cg_rt_load(f, s, CG_AT_SNODE, lsid, offsetof(plm_rt_snode, header_bytes), f->t_i64);
    LLVMValueRef foff = cg_rt_load(f, s, CG_AT_FIELD, 0, offsetof(plm_rt_field, offset), f->t_i64);
    if (!LLVMIsAConstantInt(stride) || !LLVMIsAConstantInt(hdr) || !LLVMIsAConstantInt(foff))
        return 0;
    long long st = LLVMConstIntGetSExtValue(stride);
    long long size = (long long)HALO_W * HALO_W * HALO_W * st;
    if (st < 4 || st > 64 || st % 4 || *bytes + size > HALO_MAX_BYTES)
        return 0;
    *bytes += size;
    cr->halo_stride[s] = st;
    cr->halo_first[s] = LLVMConstIntGetSExtValue(hdr) + LLVMConstIntGetSExtValue(foff);
    cr->halo[s] = 1;
    return 1;
}

/* A loop i = 0 .. n-1 around what is emitted between open and close. */
typedef struct halo_loop {
    LLVMBasicBlockRef body, pre;
    LLVMValueRef i;
} halo_loop;

static LLVMValueRef loop_open(cg_fn *f, halo_loop *l, const char *name)
{
    l->pre = LLVMGetInsertBlock(f->b);
    l->body = LLVMAppendBasicBlockInContext(f->ctx, f->fn, name);
    LLVMBuildBr(f->b, l->body);
    LLVMPositionBuilderAtEnd(f->b, l->body);
    l->i = LLVMBuildPhi(f->b, f->t_i32, name);
    return l->i;
}

static void loop_close(cg_fn *f, halo_loop *l, int n)
{
    LLVMValueRef next = LLVMBuildAdd(f->b, l->i, cg_cr_c32(f, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "halo.done");
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, next, cg_cr_c32(f, n), ""), l->body, after);
    LLVMValueRef in[2] = {cg_cr_c32(f, 0), next};
    LLVMBasicBlockRef from[2] = {l->pre, latch};
    LLVMAddIncoming(l->i, in, from, 2);
    LLVMPositionBuilderAtEnd(f->b, after);
}

/* Which of the table's blocks along one axis (0, 1, 2 for -1, 0, +1) and which cell in it
 * hold voxel h - CREAD_HALO of the halo (relative to the entry's first voxel). */
static void halo_axis(cg_fn *f, LLVMValueRef h, LLVMValueRef *blk, LLVMValueRef *cell)
{
    LLVMValueRef x = LLVMBuildSub(f->b, h, cg_cr_c32(f, CREAD_HALO), "");
    *blk = LLVMBuildAdd(f->b, LLVMBuildAShr(f->b, x, cg_cr_c32(f, 3), ""), cg_cr_c32(f, 1), "");
    *cell = LLVMBuildAnd(f->b, x, cg_cr_c32(f, 7), "");
}

/* Copies slot s's blocks around the entry (its table) into its halo: the element of voxel
 * (x, y, z) relative to the entry's first voxel, each in [-H, 8 + H), at element index
 * ((x + H) HALO_W + y + H) HALO_W + z + H. Per (x, y) the z run is three copies: the last H
 * cells of the row in the block before, the row in the entry's block, the first H after. */
static void halo_fill(cg_fn *f, int s)
{
    cg_cread *cr = f->cread;
    long long st = cr->halo_stride[s];
    if (!cr->halo_buf[s]) {
        LLVMTypeRef ty = LLVMArrayType(f->t_i8, (unsigned)(HALO_W * HALO_W * HALO_W * st));
        cr->halo_buf[s] = cg_entry_alloca(f, ty, "halo");
        LLVMSetAlignment(cr->halo_buf[s], 64);
    }
    halo_loop lx, ly;
    LLVMValueRef bx, cx, by, cy;
    LLVMValueRef hx = loop_open(f, &lx, "halo.x");
    halo_axis(f, hx, &bx, &cx);
    LLVMValueRef hy = loop_open(f, &ly, "halo.y");
    halo_axis(f, hy, &by, &cy);
    LLVMValueRef tb = LLVMBuildAdd(f->b, LLVMBuildMul(f->b, bx, cg_cr_c32(f, 9), ""),
                                   LLVMBuildMul(f->b, by, cg_cr_c32(f, 3), ""), "");
    LLVMValueRef row = LLVMBuildOr(f->b, LLVMBuildShl(f->b, cx, cg_cr_c32(f, 6), ""),
                                   LLVMBuildShl(f->b, cy, cg_cr_c32(f, 3), ""), "");
    LLVMValueRef at = LLVMBuildMul(f->b, LLVMBuildAdd(f->b, LLVMBuildMul(f->b, hx, cg_cr_c32(f, HALO_W), ""), hy, ""),
                                   cg_cr_c32(f, HALO_W), "");
    const int first[3] = {8 - CREAD_HALO, 0, 0}, count[3] = {CREAD_HALO, 8, CREAD_HALO};
    const int to[3] = {0, CREAD_HALO, CREAD_HALO + 8};
    for (int k = 0; k < 3; k++) {
        LLVMValueRef ti = LLVMBuildSExt(f->b, LLVMBuildAdd(f->b, tb, cg_cr_c32(f, k), ""), f->t_i64, "");
        LLVMValueRef blk = LLVMBuildLoad2(f->b, f->t_ptr, LLVMBuildGEP2(f->b, f->t_ptr, cr->table[s], &ti, 1, ""),
                                          "halo.blk");
        LLVMValueRef cell = LLVMBuildAdd(f->b, row, cg_cr_c32(f, first[k]), "");
        LLVMValueRef so = LLVMBuildAdd(f->b, LLVMBuildMul(f->b, LLVMBuildSExt(f->b, cell, f->t_i64, ""), c64(f, st), ""),
                                       c64(f, cr->halo_first[s]), "");
        LLVMValueRef src = LLVMBuildGEP2(f->b, f->t_i8, blk, &so, 1, "");
        LLVMValueRef e = LLVMBuildAdd(f->b, at, cg_cr_c32(f, to[k]), "");
        LLVMValueRef dof = LLVMBuildMul(f->b, LLVMBuildSExt(f->b, e, f->t_i64, ""), c64(f, st), "");
        LLVMValueRef dst = LLVMBuildGEP2(f->b, f->t_i8, cr->halo_buf[s], &dof, 1, "");
        LLVMBuildMemCpy(f->b, dst, 4, src, 4, c64(f, count[k] * st));
    }
    loop_close(f, &ly, HALO_W);
    loop_close(f, &lx, HALO_W);
}

int cg_cread_halo_fill(cg_fn *f)
{
    cg_cread *cr = f->cread;
    if (!cr || !cr->have_ent)
        return 0;
    const ir_task *t = f->task;
    int n = t->nfields < 64 ? (int)t->nfields : 64;
    uint8_t changed[64];
    cg_changed_slots(t, changed);
    long long bytes = 0;
    for (int s = 0; s < n; s++)
        if (cr->halo[s] > 0)
            bytes += HALO_W * HALO_W * HALO_W * cr->halo_stride[s];
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    for (int s = 0; s < n; s++) {
        if (!cr->table[s] || !halo_decide(f, s, changed, &bytes))
            continue;
        for (int u = 0; u < n; u++)
            if (changed[u])
                ok = LLVMBuildAnd(f->b, ok, cg_slots_differ(f, s, u), "halo.ok");
        halo_fill(f, s);
    }
    cr->halo_ok = ok;
    return 0;
}

int cg_cr_halo_serves(cg_fn *f, int slot, const ir_stmt *s)
{
    const cg_cread *cr = f->cread;
    return cr->halo[slot] > 0 && cr->halo_ok && (int)s->field == slot;
}

void cg_cr_halo_terms(cg_fn *f, cread_group *g, unsigned W)
{
    cg_cread *cr = f->cread;
    long long st = cr->halo_stride[g->slot];
    const long long step[3] = {HALO_W * HALO_W * st, HALO_W * st, st};
    /* bytes, so that a member adds a constant: a multiply per member (vpmulld, 10 cycles)
     * was 6% of the largest advection task's samples */
    LLVMValueRef in = cg_cr_splat(f, cr->halo_ok, W), e = NULL;
    long long first = 0;
    for (int a = 0; a < 3; a++) {
        in = cg_cr_near(f, in, g->row_u64[a], -CREAD_HALO - g->dmin[a], 8 + CREAD_HALO - g->dmax[a], W);
        LLVMValueRef v = LLVMBuildMul(f->b, g->row_u[a], cg_cr_splat(f, cg_cr_c32(f, step[a]), W), "");
        e = e ? LLVMBuildAdd(f->b, e, v, "") : v;
        first += CREAD_HALO * step[a];
    }
    g->row_hall = cg_cr_all_of(f, in, W);
    g->row_hbase = LLVMBuildAdd(f->b, e, cg_cr_splat(f, cg_cr_c32(f, first), W), "row.hbase");
}

LLVMValueRef cg_cr_halo_offset(cg_fn *f, cread_site *site, cread_group *g, const ir_stmt *s,
                               unsigned W)
{
    cg_cread *cr = f->cread;
    int slot = g->slot;
    long long st = cr->halo_stride[slot];
    long long d = (((long long)site->delta[0] * HALO_W + site->delta[1]) * HALO_W + site->delta[2]) * st +
                  (long long)s->comp * 4;
    LLVMValueRef off = LLVMBuildAdd(f->b, g->row_hbase, cg_cr_splat(f, cg_cr_c32(f, d), W), "row.hoff");
    if (cr->nhalo_read == cr->halo_read_cap) {
        int cap = cr->halo_read_cap ? 2 * cr->halo_read_cap : 64;
        void *p = realloc(cr->halo_read, (size_t)cap * sizeof *cr->halo_read);
        if (!p) {
            cg_fail(f, "out of memory");
            return NULL;
        }
        cr->halo_read = p;
        cr->halo_read_cap = cap;
    }
    cr->halo_read[cr->nhalo_read] = (struct cread_halo_read){g->row_hall, cr->halo_buf[slot]};
    if (cg_smap_put(&cr->halo_reads, s, ++cr->nhalo_read) != 0) {
        cg_fail(f, "out of memory");
        return NULL;
    }
    return off;
}

int cg_cr_halo_forget(cg_fn *f, const ir_stmt *s)
{
    cg_cread *cr = f->cread;
    if (cg_smap_get(&cr->halo_reads, s) && cg_smap_put(&cr->halo_reads, s, 0) != 0)
        return cg_fail(f, "out of memory");
    return 0;
}

LLVMValueRef cg_cr_halo_cond(cg_fn *f, const ir_stmt *s)
{
    int k = cg_smap_get(&f->cread->halo_reads, s);
    return k ? f->cread->halo_read[k - 1].cond : NULL;
}

LLVMValueRef cg_cr_halo_read(cg_fn *f, const ir_stmt *s, LLVMValueRef off, unsigned W)
{
    int k = cg_smap_get(&f->cread->halo_reads, s);
    LLVMTypeRef vt = LLVMVectorType(f->t_f32, W), v1 = LLVMVectorType(f->t_i1, W);
    /* a splat base and sign-extended 32-bit offsets: one vgatherdps on AVX-512 */
    LLVMValueRef o = LLVMBuildSExt(f->b, off, LLVMVectorType(f->t_i64, W), "");
    LLVMValueRef p = LLVMBuildGEP2(f->b, f->t_i8, f->cread->halo_read[k - 1].buf, &o, 1, "row.hrd");
    char suffix[32];
    snprintf(suffix, sizeof suffix, "v%uf32.v%up0", W, W);
    return cg_cr_gather(f, vt, p, 4, LLVMConstAllOnes(v1), LLVMGetUndef(vt), suffix);
}
