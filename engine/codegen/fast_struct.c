/* The fast copy of a struct_for: accesses f[I + c] (c constant, |c| at most a block) of
 * fields whose leaf blocks line up with the iterated field's take their leaf container from
 * a few per-entry lookups instead of walking the tree per voxel: I + c lies in the entry's
 * own block or in the next one along each axis where c is not 0, so per entry the code looks
 * up (at most 2^axes) containers, and per voxel it picks one by comparing the cell's position
 * plus c with the block size, and computes the cell index with constant shifts.
 *
 * The per-call check: every slot involved (the iterated one included) has a leaf of the same
 * size as the iterated field's, its cells ordered x-major (index_shift of axis a = bits of the
 * axes after a, as the IR's sizes give it; axis_shift 0), and a coord_offset equal to the
 * iterated field's modulo the block size, so blocks of all of them cover the same voxels.
 *
 * Which accesses. A chain that never activates, of a field the task never activates or
 * deactivates, is looked up when the entry starts (the tree does not change under the task).
 * A chain that activates (a write, f[I] = v) at c = 0, of a field the task never deactivates,
 * is looked up at its first use in each entry and kept: activation is permanent and gives the
 * same container for every voxel of the block, and no block is activated that the generic
 * code would not have activated. is_active of a dense leaf at I + c is a query served like a
 * read at I + c (whether that block is there) where the task leaves the tree as it is.
 * Anything else keeps the generic chain. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"
#include "sparse/runtime/runtime.h"

typedef struct slot_use {
    uint8_t act[64], deact[64], query[64];
    uint8_t act_call[64];        /* activate() itself, not a write chain */
    int act_stmts[64];           /* activating sn_lookup / sn_field_ptr statements */
    int has_continue;
} slot_use;

static int note_use(ir_stmt *s, void *ud)
{
    slot_use *u = ud;
    if (s->field >= 64)
        return 0;
    if ((s->op == IR_SN_LOOKUP || s->op == IR_SN_FIELD_PTR) && s->activate) {
        u->act[s->field] = 1;
        u->act_stmts[s->field]++;
    }
    if (s->op == IR_SN_ACTIVATE || s->op == IR_ACTIVATE)
        u->act_call[s->field] = 1;
    if (s->op == IR_SN_ACTIVATE || s->op == IR_ACTIVATE || s->op == IR_GLOBAL_STORE ||
        s->op == IR_ATOMIC)
        u->act[s->field] |= s->op == IR_SN_ACTIVATE || s->op == IR_ACTIVATE;
    if (s->op == IR_SN_DEACTIVATE || s->op == IR_DEACTIVATE)
        u->deact[s->field] = 1;
    if (s->op == IR_SN_IS_ACTIVE || s->op == IR_IS_ACTIVE)
        u->query[s->field] = 1;
    if (s->op == IR_CONTINUE)
        u->has_continue = 1;
    return 0;
}

static const ir_level *leaf_of(cg_fn *f, int slot)
{
    const ir_field_info *fi = &f->task->fields[slot];
    return &fi->levels[fi->nlevels - 1];
}

/* Where axis a's cell coordinate sits in the leaf's cell index, cells ordered x-major. */
static unsigned canon_ish(const ir_level *leaf, int dim, int a)
{
    unsigned s = 0;
    for (int b = a + 1; b < dim; b++)
        s += leaf->log2_size[b];
    return s;
}

static LLVMValueRef c32(cg_fn *f, long long v)
{
    return LLVMConstInt(f->t_i32, (unsigned long long)v, 1);
}

LLVMValueRef cg_fast_struct_check(cg_fn *f, cg_fast *fast)
{
    const ir_task *t = f->task;
    int it = t->field, dim = t->fields[it].dim;
    const ir_level *lit = leaf_of(f, it);
    if (dim < 1)
        return NULL;
    slot_use u;
    memset(&u, 0, sizeof u);
    ir_walk(t->body, note_use, &u);
    /* Slots placed in one tree share its cells: a deactivation or an activity query through one
     * concerns them all. (Activation does not: a cell a sibling activates holds this slot's
     * background, as an inactive one reads.) */
    for (uint32_t s = 0; s < t->nfields && s < 64; s++)
        for (uint32_t j = 0; j < t->nfields && j < 64; j++)
            if (j != s && ir_same_tree(t, s, j)) {
                u.deact[s] |= u.deact[j];
                u.query[s] |= u.query[j];
            }
    /* A read of a field the task also writes qualifies when every access to that field is at
     * c = 0 and one of them is a write chain (not an activate() call): it then shares that
     * write's block, so it sees what earlier statements of the same cell wrote. */
    uint8_t shared_ok[64] = {0};
    for (int i = 0; i < fast->nacc; i++) {
        const cg_access *a = &fast->acc[i];
        if (a->activates && a->slot < 64)
            shared_ok[a->slot] = 1;
    }
    for (int i = 0; i < fast->nacc; i++) {
        const cg_access *a = &fast->acc[i];
        for (int x = 0; x < dim && a->slot < 64; x++)
            if (a->c[x] != 0)
                shared_ok[a->slot] = 0;
    }
    for (int s = 0; s < 64; s++)
        if (u.query[s])
            shared_ok[s] = 0;
    /* Writes first: whether a read qualifies may depend on which writes do. */
    uint8_t keep[fast->nacc > 0 ? fast->nacc : 1];
    /* the distinct activating statements of the qualifying writes' chains, per slot: writes
     * share lookups, so counting chain by chain could match act_stmts with one uncovered */
    int write_stmts[64] = {0};
    cg_smap covered = {0};
    for (int i = 0; i < fast->nacc; i++) {
        const cg_access *a = &fast->acc[i];
        const ir_level *l = leaf_of(f, a->slot);
        int ok = !u.deact[a->slot];
        for (int x = 0; x < IR_MAX_DIM; x++) {
            ok &= l->log2_size[x] == lit->log2_size[x];
            if (x < dim) {
                int32_t size = 1 << lit->log2_size[x];
                ok &= a->c[x] >= -size && a->c[x] <= size;
                ok &= !a->activates || a->c[x] == 0;
            }
        }
        /* a read of the other grid (scale != 0): only of a field nothing in the task changes,
         * and no activity query (its blocks are not the loop's own) */
        if (a->scale)
            ok &= !a->activates && !u.act[a->slot] && !u.deact[a->slot] &&
                  a->fptr->op == IR_SN_FIELD_PTR;
        keep[i] = (uint8_t)ok;
        if (ok && a->activates && a->slot < 64)
            for (int k = 0; k < a->nchain + 1; k++) {
                const ir_stmt *c = k < a->nchain ? a->chain[k] : a->fptr;
                if (!((c->op == IR_SN_LOOKUP || c->op == IR_SN_FIELD_PTR) && c->activate &&
                      c->field == (uint32_t)a->slot) ||
                    cg_smap_get(&covered, c))
                    continue;
                if (cg_smap_put(&covered, c, 1) != 0) {
                    cg_smap_free(&covered);
                    cg_fail(f, "out of memory");
                    return NULL;
                }
                write_stmts[a->slot]++;
            }
    }
    cg_smap_free(&covered);
    /* A read at c != 0 of a field the task writes in place (a red-black Gauss-Seidel sweep
     * reads the neighbours of the cell it updates) qualifies when every activation of the
     * field is a qualifying write at c = 0 and nothing else in its tree activates. Its blocks,
     * its own included, are then looked up when the entry starts, like any read's. That is
     * exact for every program whose cells read no cell another cell writes (a block that
     * becomes active later holds the background, which is what the read saw); a program that
     * does read other cells' writes races in a parallel loop, in the generic code too. A block
     * active at the start never moves, so its values are read live. */
    /* A tree the task leaves as it is: nothing deactivates in it, and its only activations
     * are such writes at c = 0 in the iterated field's own tree, which land in the entry's
     * block (active: it came from the list). Activity queries into it are then answered by
     * the blocks looked up as the entry starts, and do not stop its stencil reads. */
    uint8_t static_tree[64] = {0};
    for (uint32_t s = 0; s < t->nfields && s < 64; s++) {
        int ok = 1;
        for (uint32_t j = 0; j < t->nfields && j < 64 && ok; j++)
            if (ir_same_tree(t, s, j))
                ok = !u.deact[j] && !u.act_call[j] &&
                     (!u.act[j] || (ir_same_tree(t, j, (uint32_t)it) && write_stmts[j] == u.act_stmts[j]));
        static_tree[s] = (uint8_t)ok;
    }
    uint8_t stencil_ok[64] = {0};
    for (uint32_t s = 0; s < t->nfields && s < 64; s++) {
        int ok = u.act[s] && !u.act_call[s] && !u.deact[s] && (!u.query[s] || static_tree[s]) &&
                 write_stmts[s] == u.act_stmts[s];
        for (uint32_t j = 0; j < t->nfields && j < 64 && ok; j++)
            if (j != s && ir_same_tree(t, s, j))
                ok = !u.act[j];
        stencil_ok[s] = (uint8_t)ok;
    }
    /* is_active at a cell is whether its block is there (cg_fast_is_active), when its leaf
     * is dense and its tree static */
    uint8_t query_ok[64] = {0};
    for (uint32_t s = 0; s < t->nfields && s < 64; s++)
        query_ok[s] = leaf_of(f, (int)s)->kind == IR_KIND_DENSE && static_tree[s];
    int n = 0;
    for (int i = 0; i < fast->nacc; i++) {
        cg_access *a = &fast->acc[i];
        if (!keep[i])
            continue;
        if (a->fptr->op == IR_SN_IS_ACTIVE && !query_ok[a->slot])
            continue;
        if (!a->activates && u.act[a->slot] && !shared_ok[a->slot] && !stencil_ok[a->slot])
            continue;
        fast->acc[n++] = *a;
    }
    fast->nacc = n;
    if (n == 0)
        return NULL;
    fast->blocks = calloc((size_t)n, sizeof *fast->blocks);
    fast->lazy = calloc((size_t)n, 1);
    fast->isnull = calloc((size_t)n, sizeof *fast->isnull);
    fast->share = malloc((size_t)n * sizeof *fast->share);
    if (!fast->blocks || !fast->lazy || !fast->isnull || !fast->share) {
        cg_fail(f, "out of memory");
        return NULL;
    }
    /* A write at c = 0 activates its block at the entry's start, not at first use, when the
     * body surely stores there for the first cell already: every cell of a dense leaf runs the
     * body, the store sits in the body's top level, nothing continues past it, and nothing
     * asks whether the block is active (values read from a new block are the background
     * either way). Then the cell loops have no branch left and LLVM unrolls them. */
    for (int i = 0; i < n; i++) {
        cg_access *a = &fast->acc[i];
        if (!a->activates)
            continue;
        int top = 0;
        for (const ir_stmt *s = fast->loop->body->first; s; s = s->next)
            top |= (s->op == IR_GLOBAL_STORE || s->op == IR_ATOMIC) && s->arg[0] == a->fptr;
        fast->lazy[i] = !(top && lit->kind == IR_KIND_DENSE && !u.has_continue &&
                          !u.query[a->slot]);
    }
    for (int i = 0; i < n; i++) {
        const cg_access *a = &fast->acc[i];
        fast->share[i] = -1;
        int at0 = 1;
        for (int x = 0; x < dim; x++)
            at0 &= a->c[x] == 0;
        for (int j = 0; j < n && !a->activates && u.act[a->slot] && at0; j++)
            if (fast->acc[j].activates && fast->acc[j].slot == a->slot) {
                fast->share[i] = j;
                break;
            }
    }
    uint8_t check[64] = {0}, writes[64] = {0}, scaled = 0;
    check[it] = 1;
    for (int i = 0; i < n; i++) {
        check[fast->acc[i].slot] = 1;
        writes[fast->acc[i].slot] |= fast->acc[i].activates;
        scaled |= fast->acc[i].scale != 0;
    }
    int32_t it_sid = cg_snode_id(f, it, t->fields[it].nlevels - 1);
    if (it_sid < 0)
        return NULL;
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    for (int s = 0; s < t->nfields && s < 64; s++) {
        if (!check[s])
            continue;
        int32_t sid = cg_snode_id(f, s, t->fields[s].nlevels - 1);
        if (sid < 0)
            return NULL;
        for (int a = 0; a < dim; a++) {
            LLVMValueRef ish = cg_rt_load(f, s, CG_AT_SNODE, sid, cg_off_snode_index_shift(a), f->t_i32);
            LLVMValueRef ash = cg_rt_load(f, s, CG_AT_SNODE, sid, cg_off_snode_axis_shift(a), f->t_i32);
            LLVMValueRef bits = cg_rt_load(f, s, CG_AT_SNODE, sid, cg_off_snode_axis_bits(a), f->t_i32);
            LLVMValueRef off = cg_rt_load(f, s, CG_AT_SNODE, sid,
                                          offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)a, f->t_i32);
            LLVMValueRef off_it = cg_rt_load(f, it, CG_AT_SNODE, it_sid,
                                             offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)a, f->t_i32);
            LLVMValueRef mask = c32(f, (1 << lit->log2_size[a]) - 1);
            LLVMValueRef good = LLVMBuildAnd(
                f->b, LLVMBuildICmp(f->b, LLVMIntEQ, ish, c32(f, canon_ish(lit, dim, a)), ""),
                LLVMBuildICmp(f->b, LLVMIntEQ, ash, c32(f, 0), ""), "");
            good = LLVMBuildAnd(f->b, good,
                                LLVMBuildICmp(f->b, LLVMIntEQ, bits, c32(f, lit->log2_size[a]), ""), "");
            LLVMValueRef d = LLVMBuildAnd(f->b, LLVMBuildSub(f->b, off, off_it, ""), mask, "");
            good = LLVMBuildAnd(f->b, good, LLVMBuildICmp(f->b, LLVMIntEQ, d, c32(f, 0), ""), "");
            /* reads of the other grid: blocks start at multiples of the block size in both,
             * so a fine block's cells halved lie in one coarse block, and a coarse block's
             * doubled in two fine ones per axis */
            if (scaled)
                good = LLVMBuildAnd(f->b, good,
                                    LLVMBuildICmp(f->b, LLVMIntEQ, LLVMBuildAnd(f->b, off_it, mask, ""),
                                                  c32(f, 0), ""), "");
            /* a field written at the entry's cells holds every cell the loop visits: the
             * writes' blocks are looked up without a range check (they are not at an offset),
             * so a loop reaching outside it is left to the generic code, which reports it:
             * off <= off_it and off_it + 2^ext_it <= off + 2^ext, in 64 bits */
            if (writes[s] && s != it) {
                LLVMValueRef ext = cg_rt_load(f, s, CG_AT_SNODE, sid, offsetof(plm_rt_snode, extent_bits) + 4u * (unsigned)a,
                                              f->t_i32);
                LLVMValueRef ext_it = cg_rt_load(f, it, CG_AT_SNODE, it_sid,
                                                 offsetof(plm_rt_snode, extent_bits) + 4u * (unsigned)a, f->t_i32);
                LLVMValueRef o64 = LLVMBuildSExt(f->b, off, f->t_i64, ""), oi64 = LLVMBuildSExt(f->b, off_it, f->t_i64, "");
                LLVMValueRef one = LLVMConstInt(f->t_i64, 1, 0);
                LLVMValueRef end = LLVMBuildAdd(f->b, o64, LLVMBuildShl(f->b, one, LLVMBuildZExt(f->b, ext, f->t_i64, ""), ""), "");
                LLVMValueRef end_it = LLVMBuildAdd(f->b, oi64, LLVMBuildShl(f->b, one, LLVMBuildZExt(f->b, ext_it, f->t_i64, ""), ""), "");
                good = LLVMBuildAnd(f->b, good, LLVMBuildICmp(f->b, LLVMIntSLE, o64, oi64, ""), "");
                good = LLVMBuildAnd(f->b, good, LLVMBuildICmp(f->b, LLVMIntSLE, end_it, end, ""), "");
            }
            ok = LLVMBuildAnd(f->b, ok, good, "fast.ok");
        }
    }
    return ok;
}

/* The container of a's field holding voxel J: a's chain emitted with its index statements
 * standing for J (the generic emitters, so every level kind and activation works as in the
 * generic copy). Values the chain had before are put back afterwards. */
static LLVMValueRef chain_at(cg_fn *f, const cg_access *a, LLVMValueRef J[IR_MAX_DIM])
{
    int dim = f->task->fields[a->slot].dim;
    LLVMValueRef saved_idx[IR_MAX_DIM], saved[3 * IR_MAX_LEVELS + 2];
    const ir_stmt *const *idx = (const ir_stmt *const *)a->leaf_index->arg;
    for (int x = 0; x < dim; x++)
        saved_idx[x] = cg_vmap_get(&f->vals, idx[x]);
    for (int k = 0; k < a->nchain; k++)
        saved[k] = cg_vmap_get(&f->vals, a->chain[k]);
    int rc = 0;
    for (int x = 0; x < dim; x++)
        rc |= cg_vmap_put(&f->vals, idx[x], J[x]);
    cg_fast *fast = f->fast;
    cg_cread *cread = f->cread; /* its skip set may hold this chain too */
    f->fast = NULL;
    f->cread = NULL;
    const ir_stmt *cur = f->cur;
    for (int k = 0; k + 1 < a->nchain && rc == 0; k++)
        rc = cg_emit_stmt(f, a->chain[k]);
    f->cur = cur;
    f->fast = fast;
    f->cread = cread;
    LLVMValueRef c = rc == 0 ? cg_vmap_get(&f->vals, a->leaf_child) : NULL;
    for (int k = 0; k < a->nchain; k++)
        cg_vmap_put(&f->vals, a->chain[k], saved[k]);
    for (int x = 0; x < dim; x++)
        cg_vmap_put(&f->vals, idx[x], saved_idx[x]);
    if (!c && rc == 0)
        cg_fail(f, "fast struct_for: the chain of an access gave no container");
    return c;
}

static int nonzero_axes(const cg_access *a, int dim, int axes[IR_MAX_DIM])
{
    int n = 0;
    for (int x = 0; x < dim; x++)
        if (a->c[x] != 0)
            axes[n++] = x;
    return n;
}

static LLVMValueRef sentinel(cg_fn *f)
{
    return LLVMConstIntToPtr(LLVMConstAllOnes(f->t_i64), f->t_ptr);
}

/* The block of a's field holding voxel J, NULL when J lies outside the field. chain_at walks
 * only the levels above the leaf, and where the leaf is the first level under the root (one
 * dense level: dense(i, 16)) nothing there sees the index at all: J past the field's end gave
 * the block at its other end, so a neighbour read wrapped around. */
static LLVMValueRef block_at(cg_fn *f, const cg_access *a, LLVMValueRef J[IR_MAX_DIM])
{
    LLVMValueRef c = chain_at(f, a, J);
    if (!c)
        return NULL;
    int dim = f->task->fields[a->slot].dim;
    int32_t sid = cg_snode_id(f, a->slot, f->task->fields[a->slot].nlevels - 1);
    if (sid < 0)
        return NULL;
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    for (int x = 0; x < dim; x++) {
        LLVMValueRef off = cg_rt_load(f, a->slot, CG_AT_SNODE, sid,
                                      offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)x, f->t_i32);
        LLVMValueRef ext = cg_rt_load(f, a->slot, CG_AT_SNODE, sid,
                                      offsetof(plm_rt_snode, extent_bits) + 4u * (unsigned)x, f->t_i32);
        /* 0 <= J - offset < 2^extent, in 64 bits (one unsigned compare) */
        LLVMValueRef u = LLVMBuildSub(f->b, LLVMBuildSExt(f->b, J[x], f->t_i64, ""),
                                      LLVMBuildSExt(f->b, off, f->t_i64, ""), "");
        LLVMValueRef lim = LLVMBuildShl(f->b, LLVMConstInt(f->t_i64, 1, 0), LLVMBuildZExt(f->b, ext, f->t_i64, ""), "");
        ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntULT, u, lim, ""), "");
    }
    return LLVMBuildSelect(f->b, ok, c, LLVMConstPointerNull(f->t_ptr), "fast.inside");
}

int cg_fast_struct_entry(cg_fn *f, LLVMValueRef coord[IR_MAX_DIM], LLVMValueRef container)
{
    cg_fast *fast = f->fast;
    const ir_task *t = f->task;
    int it = t->field, dim = t->fields[it].dim;
    const ir_level *lit = leaf_of(f, it);
    for (int x = 0; x < dim; x++)
        fast->entry_coord[x] = coord[x];
    fast->entry_container = container;
    /* eager lookups shared by accesses to the same field and block */
    struct { int slot, d[IR_MAX_DIM]; LLVMValueRef c; } seen[64];
    int nseen = 0;
    for (int i = 0; i < fast->nacc; i++) {
        const cg_access *a = &fast->acc[i];
        if (fast->share[i] >= 0)
            continue; /* after the writes, below */
        if (a->scale) {
            /* the coarse block holding entry / 2, or the 2^dim fine blocks from 2 entry */
            int nb = a->scale < 0 ? 1 : 1 << dim;
            for (int k = 0; k < nb; k++) {
                LLVMValueRef J[IR_MAX_DIM];
                for (int x = 0; x < dim; x++)
                    J[x] = a->scale < 0
                               ? LLVMBuildAShr(f->b, coord[x], c32(f, 1), "J")
                               : LLVMBuildAdd(f->b, LLVMBuildShl(f->b, coord[x], c32(f, 1), ""),
                                              c32(f, (k >> x & 1) << lit->log2_size[x]), "J");
                if (!(fast->blocks[i][k] = block_at(f, a, J)))
                    return -1;
            }
            continue;
        }
        int axes[IR_MAX_DIM], nz = nonzero_axes(a, dim, axes);
        for (int k = 0; k < (1 << nz); k++) {
            int d[IR_MAX_DIM] = {0, 0, 0};
            for (int j = 0; j < nz; j++)
                if (k >> j & 1)
                    d[axes[j]] = a->c[axes[j]] > 0 ? 1 : -1;
            int zero = !d[0] && !d[1] && !d[2];
            if (zero && a->slot == it) {
                fast->lazy[i] = 0;
                fast->blocks[i][k] = container; /* the entry's own block */
                continue;
            }
            if (fast->lazy[i]) { /* c = 0 here: one block, looked up at first use */
                LLVMValueRef p = cg_entry_alloca(f, f->t_ptr, "fast.block");
                LLVMBuildStore(f->b, sentinel(f), p);
                fast->blocks[i][k] = p;
                continue;
            }
            LLVMValueRef c = NULL;
            for (int s = 0; s < nseen && !c && !a->activates; s++)
                if (seen[s].slot == a->slot && !memcmp(seen[s].d, d, sizeof d))
                    c = seen[s].c;
            if (!c) {
                LLVMValueRef J[IR_MAX_DIM];
                for (int x = 0; x < dim; x++)
                    J[x] = LLVMBuildAdd(f->b, coord[x], c32(f, (long long)d[x] * (1LL << lit->log2_size[x])), "J");
                /* at d = 0 too: another field's blocks may start a block further on */
                if (!(c = a->activates ? chain_at(f, a, J) : block_at(f, a, J)))
                    return -1;
                if (nseen < 64 && !a->activates)
                    seen[nseen++] = (typeof(seen[0])){a->slot, {d[0], d[1], d[2]}, c};
            }
            fast->blocks[i][k] = c;
        }
    }
    for (int i = 0; i < fast->nacc; i++) {
        int j = fast->share[i];
        if (j < 0)
            continue;
        fast->blocks[i][0] = fast->blocks[j][0];
        fast->lazy[i] = fast->lazy[j] ? 2 : 0;
    }
    return 0;
}

void cg_fast_struct_cell(cg_fn *f, LLVMValueRef cell)
{
    const ir_task *t = f->task;
    int dim = t->fields[t->field].dim;
    const ir_level *lit = leaf_of(f, t->field);
    for (int x = 0; x < dim; x++)
        f->fast->pos[x] = LLVMBuildAnd(
            f->b, LLVMBuildLShr(f->b, cell, c32(f, canon_ish(lit, dim, x)), ""),
            c32(f, (1 << lit->log2_size[x]) - 1), "pos");
}

/* The container holding a's cell at the current cell (fast->pos), and the cell's index in
 * it; NULL on error. */
static LLVMValueRef pick_block(cg_fn *f, const cg_access *a, LLVMValueRef *cellp)
{
    cg_fast *fast = f->fast;
    int i = (int)(a - fast->acc);
    const ir_task *t = f->task;
    int dim = t->fields[t->field].dim;
    const ir_level *lit = leaf_of(f, t->field);
    if (a->scale) {
        /* I / 2: entry / 2 + pos / 2 (the entry even); 2 I + c: block bit and cell of
         * 2 pos + c per axis */
        LLVMValueRef cell = c32(f, 0), pick[8];
        for (int k = 0; k < (a->scale < 0 ? 1 : 1 << dim); k++)
            pick[k] = fast->blocks[i][k];
        for (int x = dim - 1; x >= 0; x--) {
            LLVMValueRef q, m = c32(f, (1 << lit->log2_size[x]) - 1);
            if (a->scale < 0) {
                q = LLVMBuildAdd(f->b, LLVMBuildAShr(f->b, fast->entry_coord[x], c32(f, 1), ""),
                                 LLVMBuildLShr(f->b, fast->pos[x], c32(f, 1), ""), "");
            } else {
                LLVMValueRef p2 = LLVMBuildAdd(f->b, LLVMBuildShl(f->b, fast->pos[x], c32(f, 1), ""),
                                               c32(f, a->c[x]), "");
                LLVMValueRef out = LLVMBuildICmp(f->b, LLVMIntUGT, p2, m, "out");
                for (int k = 0; k < (1 << x); k++)
                    pick[k] = LLVMBuildSelect(f->b, out, pick[k | 1 << x], pick[k], "");
                q = p2;
            }
            q = LLVMBuildAnd(f->b, q, m, "");
            cell = LLVMBuildOr(f->b, cell, LLVMBuildShl(f->b, q, c32(f, canon_ish(lit, dim, x)), ""), "");
        }
        fast->isnull[i] = NULL;
        *cellp = cell;
        return pick[0];
    }
    /* the cell of I + c inside its block, and whether it left the block along each axis */
    LLVMValueRef cell = c32(f, 0), out[IR_MAX_DIM];
    for (int x = 0; x < dim; x++) {
        LLVMValueRef p = LLVMBuildAdd(f->b, fast->pos[x], c32(f, a->c[x]), "");
        LLVMValueRef size = c32(f, 1 << lit->log2_size[x]);
        out[x] = LLVMBuildICmp(f->b, LLVMIntUGE, p, size, "out");
        LLVMValueRef q = LLVMBuildAnd(f->b, p, c32(f, (1 << lit->log2_size[x]) - 1), "");
        cell = LLVMBuildOr(f->b, cell, LLVMBuildShl(f->b, q, c32(f, canon_ish(lit, dim, x)), ""), "");
    }
    LLVMValueRef c;
    fast->isnull[i] = NULL;
    if (fast->lazy[i] == 2) {
        /* a read sharing a lazy write's block: the block once some statement of this entry
         * looked it up; until then a lookup that does not activate (NULL: background), kept
         * only when it found the block */
        LLVMValueRef p = fast->blocks[i][0];
        LLVMValueRef v = LLVMBuildLoad2(f->b, f->t_ptr, p, "");
        LLVMValueRef have = LLVMBuildICmp(f->b, LLVMIntNE, v, sentinel(f), "");
        LLVMBasicBlockRef from = LLVMGetInsertBlock(f->b);
        LLVMBasicBlockRef get = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "fast.peek");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "fast.seen");
        LLVMBuildCondBr(f->b, have, done, get);
        LLVMPositionBuilderAtEnd(f->b, get);
        LLVMValueRef r = chain_at(f, a, fast->entry_coord);
        if (!r)
            return NULL;
        LLVMBuildStore(f->b, LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, r, ""), sentinel(f), r, ""), p);
        LLVMBasicBlockRef got = LLVMGetInsertBlock(f->b);
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
        c = LLVMBuildPhi(f->b, f->t_ptr, "fast.block");
        LLVMValueRef vals[2] = {v, r};
        LLVMBasicBlockRef bbs[2] = {from, got};
        LLVMAddIncoming(c, vals, bbs, 2);
    } else if (fast->lazy[i]) {
        LLVMValueRef p = fast->blocks[i][0];
        LLVMValueRef have = LLVMBuildICmp(f->b, LLVMIntNE, LLVMBuildLoad2(f->b, f->t_ptr, p, ""),
                                          sentinel(f), "");
        LLVMBasicBlockRef get = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "fast.lookup");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "fast.have");
        LLVMBuildCondBr(f->b, have, done, get);
        LLVMPositionBuilderAtEnd(f->b, get);
        LLVMValueRef v = chain_at(f, a, fast->entry_coord);
        if (!v)
            return NULL;
        LLVMBuildStore(f->b, v, p);
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
        c = LLVMBuildLoad2(f->b, f->t_ptr, p, "fast.block");
    } else {
        int axes[IR_MAX_DIM], nz = nonzero_axes(a, dim, axes);
        /* pick blocks[k], k's bit j = I + c left the block along axes[j] */
        LLVMValueRef pick[8];
        for (int k = 0; k < (1 << nz); k++)
            pick[k] = fast->blocks[i][k];
        for (int j = nz - 1; j >= 0; j--)
            for (int k = 0; k < (1 << j); k++)
                pick[k] = LLVMBuildSelect(f->b, out[axes[j]], pick[k | 1 << j], pick[k], "");
        c = pick[0];
    }
    *cellp = cell;
    return c;
}

LLVMValueRef cg_fast_struct_ptr(cg_fn *f, const cg_access *a)
{
    cg_fast *fast = f->fast;
    int i = (int)(a - fast->acc);
    const ir_task *t = f->task;
    LLVMValueRef cell, c = pick_block(f, a, &cell);
    if (!c)
        return NULL;
    const ir_field_info *fi = &t->fields[a->slot];
    if (fi->levels[fi->nlevels - 1].kind != IR_KIND_DENSE)
        return cg_emit_field_ptr_at(f, a->fptr, c, cell);
    /* a dense leaf: container + header + field offset + component + cell * the field's
     * stride; a missing block reads as NULL (the background) and a write
     * to one (out of range: activation never leaves NULL otherwise) goes to the sink */
    /* the entry's own block is never NULL: it came from the list */
    LLVMValueRef isnull = c == fast->entry_container ? LLVMConstInt(f->t_i1, 0, 0)
                                                     : LLVMBuildIsNull(f->b, c, "");
    /* the field's stride: its element alone, or with the other fields placed beside it in
     * one tree (a constant where the layout is known when compiling) */
    LLVMValueRef at = cg_dense_elem(f, a->fptr, c, LLVMBuildZExt(f->b, cell, f->t_i64, ""), NULL);
    if (!at)
        return NULL;
    if (!a->fptr->activate) {
        /* a read: global_load picks the background on isnull; the address itself is only
         * loaded from when the block exists */
        fast->isnull[i] = isnull;
        return at;
    }
    LLVMValueRef other = a->fptr->activate
                             ? cg_rt_load(f, a->slot, CG_AT_RUNTIME, 0, offsetof(plm_runtime, value_sink), f->t_ptr)
                             : LLVMConstPointerNull(f->t_ptr);
    return LLVMBuildSelect(f->b, isnull, other, at, "fast.fptr");
}

LLVMValueRef cg_fast_is_active(cg_fn *f, const cg_access *a)
{
    LLVMValueRef cell, c = pick_block(f, a, &cell);
    /* a dense leaf's cells are active with their block, which lies inside the field's range
     * (extents are whole blocks); the entry's own block came from the list */
    return c == f->fast->entry_container ? LLVMConstInt(f->t_i1, 1, 0)
                                         : LLVMBuildIsNotNull(f->b, c, "active");
}
