/* Reads at any index (f[p] with p not the loop index plus a constant: the corners of a
 * trilinear sample, a backtrace) through a per-call cache of leaf containers instead of a tree
 * walk inlined per read.
 *
 * Which reads. An sn_field_ptr that does not activate, whose chain is the whole lowered one
 * (sn_root, then per level sn_child, sn_index, sn_lookup, then the leaf's sn_child and
 * sn_index), none of it activating, every sn_index on the same index statements, with a sparse
 * level above the leaf (over dense levels the walk is cheap arithmetic already). Not when the
 * task deactivates anything (a cached container could be freed under it).
 *
 * What is emitted. Each such read (a "site") keeps, in allocas of the task function (so per
 * call on the CPU, per thread on the GPU), the key of the leaf block it last looked up and that
 * block's container. Per read: the key of the wanted voxel, one compare per axis; on a hit the
 * cached container, on a miss a call to one out-of-line function per field slot that walks the
 * tree without activating (the generic emitters, so every level kind works as in the generic
 * code) and returns the leaf container or NULL. The leaf's cell index and element address are
 * then emitted inline as in the generic code. So a read is a few dozen instructions instead of
 * the walk's few hundred, and neighbouring reads mostly skip the walk. Reads at one base plus
 * constants (a group) look the base's block up once where that lookup dominates them all.
 *
 * Why it is exact. The key of voxel x along axis a is (x - coord_offset) >> K, K = the leaf's
 * axis_shift + axis_bits: the bits of the index the levels above the leaf see. A per-call check
 * (in the entry block; the geometry is read from the bound runtime, never assumed) makes sure
 * the levels above the leaf use only those bits: same coord_offset as the leaf, axis_shift >= K
 * (or no bits on that axis), extent_bits >= K (so being in range is decided by the key too).
 * Two voxels with the same key then walk to the same container. When the check fails nothing is
 * ever cached (every read walks). Containers stay valid while the task runs: reads do not
 * change the tree, activation never moves or frees a container, and the task deactivates
 * nothing. A NULL result (an inactive block) is cached only when no slot that activates
 * is bound to the same field (another cell of the task could activate that block). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/cg_internal.h"
#include "engine/codegen/cread_internal.h"
#include "sparse/runtime/runtime.h"

/* ---- recognition ---- */

static int is_int_const(const ir_stmt *s)
{
    return s->op == IR_CONST && s->ty == IR_I32;
}

static int32_t int_const(const ir_stmt *s) { return (int32_t)s->ival; }

/* v without a constant added or subtracted (v itself otherwise); *c = that constant. */
static const ir_stmt *strip_const(const ir_stmt *v, int32_t *c)
{
    *c = 0;
    if (v->op != IR_BINARY || v->nargs < 2)
        return v;
    if (v->sub == IR_ADD && is_int_const(v->arg[1]) && v->arg[0]->ty == IR_I32)
        return *c = int_const(v->arg[1]), v->arg[0];
    if (v->sub == IR_ADD && is_int_const(v->arg[0]) && v->arg[1]->ty == IR_I32)
        return *c = int_const(v->arg[0]), v->arg[1];
    if (v->sub == IR_SUB && is_int_const(v->arg[1]) && v->arg[0]->ty == IR_I32)
        return *c = -int_const(v->arg[1]), v->arg[0];
    return v;
}

/* s = sn_child of a leaf below at least one lookup, whose chain up to sn_root never activates
 * and indexes every level with the same statements. */
static int recognize(const ir_task *t, const ir_stmt *s, cread_site *site)
{
    if (s->op != IR_SN_CHILD || s->field >= t->nfields || s->field >= 64)
        return 0;
    const ir_field_info *fi = &t->fields[s->field];
    int leaf = fi->nlevels - 1, dim = fi->dim;
    if (dim < 1 || dim > IR_MAX_DIM || leaf < 2 || s->level != leaf)
        return 0;
    /* Over dense levels only the walk is index arithmetic the optimizer already hoists and
     * folds: a cache would only add a call. */
    int sparse = 0;
    for (int l = 1; l < leaf; l++)
        sparse |= ir_level_is_sparse(&fi->levels[l]);
    if (!sparse)
        return 0;
    const ir_stmt *idx = NULL;
    const ir_stmt *rev[3 * IR_MAX_LEVELS];
    int act = 0, n = cg_chain_up(s, s->field, leaf, dim, &idx, rev, &act);
    if (n == 0 || act || !idx)
        return 0;
    for (int x = 0; x < dim; x++)
        if (idx->arg[x]->ty != IR_I32)
            return 0;
    /* The out-of-line walk (make_helper) stands its parameters in for the index statements,
     * one per axis: one statement on two axes (f[ivec3(k, k, k)]) would take a single
     * parameter for both, and the walk went to (z, z, z) for any (x, y, z) asked. */
    for (int x = 0; x < dim; x++)
        for (int y = x + 1; y < dim; y++)
            if (idx->arg[x] == idx->arg[y])
                return 0;
    memset(site, 0, sizeof *site);
    site->child = s;
    site->idx = idx;
    for (int x = 0; x < dim; x++)
        site->base[x] = strip_const(idx->arg[x], &site->delta[x]);
    for (int i = 0; i < n; i++)
        site->chain[i] = rev[n - 1 - i];
    site->nchain = n;
    return 1;
}

typedef struct scan {
    const ir_task *t;
    cg_cread *cr;
    cg_smap uses;
    int deactivates, oom;
} scan;

static int visit(ir_stmt *s, void *ud)
{
    scan *w = ud;
    for (int i = 0; i < s->nargs && i < IR_MAX_ARGS; i++)
        if (s->arg[i] && cg_smap_put(&w->uses, s->arg[i], cg_smap_get(&w->uses, s->arg[i]) + 1))
            return w->oom = 1;
    if (s->op == IR_SN_DEACTIVATE || s->op == IR_DEACTIVATE)
        w->deactivates = 1;
    if (s->field < 64 && ((s->op == IR_SN_LOOKUP || s->op == IR_SN_FIELD_PTR) && s->activate))
        w->cr->activates[s->field] = 1;
    if (s->field < 64 && (s->op == IR_SN_ACTIVATE || s->op == IR_ACTIVATE))
        w->cr->activates[s->field] = 1;
    cg_cread *cr = w->cr;
    if (cr->nsite == cr->cap) {
        int cap = cr->cap ? 2 * cr->cap : 16;
        cread_site *g = realloc(cr->site, (size_t)cap * sizeof *g);
        if (!g)
            return w->oom = 1;
        cr->site = g;
        cr->cap = cap;
    }
    if (recognize(w->t, s, &cr->site[cr->nsite]))
        cr->nsite++;
    return 0;
}

void cg_cread_free(cg_cread *cr)
{
    if (!cr)
        return;
    free(cr->site);
    free(cr->group);
    cg_smap_free(&cr->which);
    cg_smap_free(&cr->skip);
    cg_smap_free(&cr->leaf_idx);
    cg_smap_free(&cr->stored);
    cg_smap_free(&cr->bg_read);
    cg_smap_free(&cr->halo_reads);
    free(cr->halo_read);
    free(cr);
}

/* The skip set: chain statements above the sites all of whose uses are sites or other skipped
 * statements (a shared prefix used elsewhere stays). */
static int find_skips(cg_cread *cr, const cg_smap *uses)
{
    for (int i = 0; i < cr->nsite; i++)
        for (int k = 0; k + 1 < cr->site[i].nchain; k++)
            if (cg_smap_put(&cr->skip, cr->site[i].chain[k], 1))
                return -1;
    /* internal uses: from sites' pointers and skipped statements; a statement with more uses
     * leaves the set, and its operands lose one internal use each, until nothing changes */
    cg_smap internal = {0};
    for (size_t j = 0; j < cr->skip.cap; j++) {
        const ir_stmt *u = cr->skip.keys[j];
        for (int x = 0; u && x < u->nargs && x < IR_MAX_ARGS; x++)
            if (u->arg[x] && cg_smap_get(&cr->skip, u->arg[x]) &&
                cg_smap_put(&internal, u->arg[x], cg_smap_get(&internal, u->arg[x]) + 1))
                goto oom;
    }
    for (int i = 0; i < cr->nsite; i++) {
        const ir_stmt *a = cr->site[i].child->arg[0];
        if (cg_smap_put(&internal, a, cg_smap_get(&internal, a) + 1))
            goto oom;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t j = 0; j < cr->skip.cap; j++) {
            const ir_stmt *s = cr->skip.keys[j];
            if (!s || !cr->skip.vals[j] || cg_smap_get(uses, s) <= cg_smap_get(&internal, s))
                continue;
            cr->skip.vals[j] = 0;
            changed = 1;
            for (int x = 0; x < s->nargs && x < IR_MAX_ARGS; x++)
                if (s->arg[x] && cg_smap_get(&cr->skip, s->arg[x]) &&
                    cg_smap_put(&internal, s->arg[x], cg_smap_get(&internal, s->arg[x]) - 1))
                    goto oom;
        }
    }
    cg_smap_free(&internal);
    return 0;
oom:
    cg_smap_free(&internal);
    return -1;
}

/* Sites of one slot with the same bases on every axis form a group (two or more members). */
static int make_groups(const ir_task *t, cg_cread *cr)
{
    cr->group = calloc((size_t)cr->nsite, sizeof *cr->group);
    if (!cr->group)
        return -1;
    for (int i = 0; i < cr->nsite; i++) {
        cread_site *si = &cr->site[i];
        int slot = si->child->field, dim = t->fields[slot].dim, g = 0;
        for (int k = 0; k < cr->ngroup && !g; k++) {
            cread_group *gr = &cr->group[k];
            if (gr->slot == slot && !memcmp(gr->base, si->base, (size_t)dim * sizeof si->base[0]))
                g = k + 1;
        }
        if (!g) {
            cread_group *gr = &cr->group[cr->ngroup++];
            gr->slot = slot;
            memcpy(gr->base, si->base, (size_t)dim * sizeof si->base[0]);
            g = cr->ngroup;
        }
        cr->group[g - 1].members++;
        si->group = g;
    }
    for (int i = 0; i < cr->nsite; i++) {
        cread_site *si = &cr->site[i];
        cread_group *gr = &cr->group[si->group - 1];
        if (gr->members < 2) {
            si->group = 0;
            continue;
        }
        for (int a = 0; a < IR_MAX_DIM; a++) {
            gr->dmin[a] = si->delta[a] < gr->dmin[a] ? si->delta[a] : gr->dmin[a];
            gr->dmax[a] = si->delta[a] > gr->dmax[a] ? si->delta[a] : gr->dmax[a];
        }
    }
    return 0;
}

/* A read of a site the direct way: sn_field_ptr(child, leaf sn_index on idx's operands),
 * not activating, of a dense leaf. */
static int direct_read(const ir_task *t, const cread_site *site, const ir_stmt *s)
{
    const ir_field_info *fi = &t->fields[s->field];
    const ir_stmt *li = s->nargs >= 2 ? s->arg[1] : NULL;
    if (s->op != IR_SN_FIELD_PTR || s->activate || s->arg[0] != site->child || !li ||
        li->op != IR_SN_INDEX || li->field != site->child->field || li->level != site->child->level ||
        fi->levels[fi->nlevels - 1].kind != IR_KIND_DENSE || !site->group)
        return 0;
    for (int x = 0; x < fi->dim; x++)
        if (li->arg[x] != site->idx->arg[x])
            return 0;
    return 1;
}

typedef struct direct_scan {
    const ir_task *t;
    cg_cread *cr;
    int oom;
} direct_scan;

/* Pass 1: sites whose child has a user that is not a direct read lose `direct`; the leaf
 * indices of direct reads are collected. */
static int visit_users(ir_stmt *s, void *ud)
{
    direct_scan *w = ud;
    cg_cread *cr = w->cr;
    for (int i = 0; i < s->nargs && i < IR_MAX_ARGS; i++) {
        int k = s->arg[i] ? cg_smap_get(&cr->which, s->arg[i]) : 0;
        if (!k)
            continue;
        cread_site *site = &cr->site[k - 1];
        if (i == 0 && direct_read(w->t, site, s)) {
            if (cg_smap_put(&cr->leaf_idx, s->arg[1], k))
                return w->oom = 1;
        } else {
            site->direct = 0;
        }
    }
    return 0;
}

/* Pass 2: a leaf index with a user other than a direct read of its site, or one another
 * site's reads share, is emitted as it is; its site loses `direct`. */
static int visit_index_users(ir_stmt *s, void *ud)
{
    direct_scan *w = ud;
    cg_cread *cr = w->cr;
    for (int i = 0; i < s->nargs && i < IR_MAX_ARGS; i++) {
        int k = s->arg[i] ? cg_smap_get(&cr->leaf_idx, s->arg[i]) : 0;
        if (!k)
            continue;
        cread_site *site = &cr->site[k - 1];
        if (!(i == 1 && direct_read(w->t, site, s)))
            site->direct = 0;
    }
    return 0;
}

/* Pass 3: direct reads' pointers that something other than a load uses (a store whose
 * activation was demoted) go in `stored`. */
static int visit_ptr_users(ir_stmt *s, void *ud)
{
    direct_scan *w = ud;
    cg_cread *cr = w->cr;
    for (int i = 0; i < s->nargs && i < IR_MAX_ARGS; i++) {
        const ir_stmt *p = s->arg[i];
        if (!p || p->op != IR_SN_FIELD_PTR || p->nargs < 1 || (s->op == IR_GLOBAL_LOAD && i == 0))
            continue;
        int k = cg_smap_get(&cr->which, p->arg[0]);
        if (k && cr->site[k - 1].direct && direct_read(w->t, &cr->site[k - 1], p) &&
            cg_smap_put(&cr->stored, p, 1))
            return w->oom = 1;
    }
    return 0;
}

static int find_direct(const ir_task *t, cg_cread *cr)
{
    for (int i = 0; i < cr->nsite; i++)
        cr->site[i].direct = cr->site[i].group != 0;
    direct_scan w = {t, cr, 0};
    ir_walk(t->body, visit_users, &w);
    if (!w.oom)
        ir_walk(t->body, visit_index_users, &w);
    if (w.oom)
        return -1;
    /* a leaf index shared by reads of two sites (same voxel, two sn_child statements) stays
     * with the first; the other site keeps its own way */
    for (size_t j = 0; j < cr->leaf_idx.cap; j++) {
        const ir_stmt *li = cr->leaf_idx.keys[j];
        if (!li || !cr->leaf_idx.vals[j])
            continue;
        if (!cr->site[cr->leaf_idx.vals[j] - 1].direct)
            cr->leaf_idx.vals[j] = 0;
    }
    for (int i = 0; i < cr->nsite; i++)
        if (cr->site[i].direct)
            cr->group[cr->site[i].group - 1].direct = 1;
    ir_walk(t->body, visit_ptr_users, &w);
    return w.oom ? -1 : 0;
}

/* Whether direct read s is to take a never-NULL address (read_base). */
static int bg_readable(const cg_cread *cr, const ir_stmt *s)
{
    int k = cg_smap_get(&cr->which, s->arg[0]);
    return k && cr->site[k - 1].direct && !cg_smap_get(&cr->stored, s);
}

int cg_cread_nonnull(const cg_fn *f, const ir_stmt *ptr)
{
    return f->cread && cg_smap_get(&f->cread->bg_read, ptr);
}

int cg_cread_setup(cg_fn *f)
{
    const ir_task *t = f->task;
    f->cread = NULL;
    if (!t->body || t->nfields > 64)
        return 0;
    cg_cread *cr = calloc(1, sizeof *cr);
    if (!cr)
        return cg_fail(f, "out of memory");
    scan w = {t, cr, {0}, 0, 0};
    ir_walk(t->body, visit, &w);
    if (w.oom)
        goto oom;
    if (w.deactivates || cr->nsite == 0) {
        cg_smap_free(&w.uses);
        cg_cread_free(cr);
        return 0;
    }
    for (int i = 0; i < cr->nsite; i++)
        if (cg_smap_put(&cr->which, cr->site[i].child, i + 1))
            goto oom;
    if (make_groups(t, cr))
        goto oom;
    if (find_direct(t, cr))
        goto oom;
    if (find_skips(cr, &w.uses))
        goto oom;
    cg_smap_free(&w.uses);
    f->cread = cr;
    return 0;
oom:
    cg_smap_free(&w.uses);
    cg_cread_free(cr);
    return cg_fail(f, "out of memory");
}

int cg_cread_skips(const cg_fn *f, const ir_stmt *s)
{
    const cg_cread *cr = f->cread;
    if (!cr)
        return 0;
    if (cg_smap_get(&cr->skip, s) || cg_smap_get(&cr->leaf_idx, s))
        return 1;
    int k = s->op == IR_SN_CHILD ? cg_smap_get(&cr->which, s) : 0;
    return k && cr->site[k - 1].direct;
}

int cg_cread_serves(const cg_fn *f, const ir_stmt *s)
{
    const cg_cread *cr = f->cread;
    if (!cr)
        return 0;
    if (cg_cread_skips(f, s))
        return 1;
    if (s->op == IR_SN_CHILD)
        return cg_smap_get(&cr->which, s) != 0;
    return s->op == IR_SN_FIELD_PTR && s->nargs >= 2 && cg_smap_get(&cr->which, s->arg[0]) != 0;
}

/* ---- per slot: the check, and the out-of-line walk ---- */

static LLVMValueRef snode_u32(cg_fn *f, int slot, int32_t sid, uint64_t member)
{
    return cg_rt_load(f, slot, CG_AT_SNODE, sid, member, f->t_i32);
}

/* In the entry block: K per axis, whether caching is sound for this runtime (enabled), and
 * whether a NULL container may be cached (null_ok). */
static int slot_setup(cg_fn *f, int slot)
{
    cg_cread *cr = f->cread;
    const ir_task *t = f->task;
    const ir_field_info *fi = &t->fields[slot];
    int leaf = fi->nlevels - 1, dim = fi->dim;
    int32_t lsid = cg_snode_id(f, slot, leaf);
    if (lsid < 0)
        return -1;
    LLVMBuilderRef b = f->eb;
    LLVMValueRef ok = LLVMConstInt(f->t_i1, 1, 0);
    for (int a = 0; a < dim; a++) {
        LLVMValueRef k = LLVMBuildAdd(b, snode_u32(f, slot, lsid, cg_off_snode_axis_shift(a)),
                                      snode_u32(f, slot, lsid, cg_off_snode_axis_bits(a)), "");
        ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntULT, k, cg_cr_c32(f, 63), ""), "");
        /* masked so the shift is defined whatever the runtime holds; ok says whether it counts */
        cr->shift[slot][a] = LLVMBuildZExt(b, LLVMBuildAnd(b, k, cg_cr_c32(f, 63), ""), f->t_i64, "key.sh");
        LLVMValueRef off = snode_u32(f, slot, lsid,
                                     offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)a);
        for (int l = 1; l < leaf; l++) {
            int32_t sid = cg_snode_id(f, slot, l);
            if (sid < 0)
                return -1;
            LLVMValueRef loff = snode_u32(f, slot, sid,
                                          offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)a);
            LLVMValueRef ext = snode_u32(f, slot, sid,
                                         offsetof(plm_rt_snode, extent_bits) + 4u * (unsigned)a);
            LLVMValueRef ash = snode_u32(f, slot, sid, cg_off_snode_axis_shift(a));
            LLVMValueRef bits = snode_u32(f, slot, sid, cg_off_snode_axis_bits(a));
            LLVMValueRef good = LLVMBuildICmp(b, LLVMIntEQ, loff, off, "");
            good = LLVMBuildAnd(b, good, LLVMBuildICmp(b, LLVMIntUGE, ext, k, ""), "");
            good = LLVMBuildAnd(
                b, good,
                LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntUGE, ash, k, ""),
                            LLVMBuildICmp(b, LLVMIntEQ, bits, cg_cr_c32(f, 0), ""), ""),
                "");
            ok = LLVMBuildAnd(b, ok, good, "");
        }
    }
    cr->enabled[slot] = ok;
    LLVMValueRef nok = LLVMConstInt(f->t_i1, 1, 0);
    for (int s = 0; s < t->nfields && s < 64; s++) {
        if (!cr->activates[s])
            continue;
        if (s == slot) {
            nok = LLVMConstInt(f->t_i1, 0, 0);
            break;
        }
        LLVMValueRef same = LLVMBuildAnd(
            b, LLVMBuildICmp(b, LLVMIntEQ, cg_runtime(f, s), cg_runtime(f, slot), ""),
            LLVMBuildICmp(b, LLVMIntEQ, cg_field_id(f, s), cg_field_id(f, slot), ""), "");
        nok = LLVMBuildAnd(b, nok, LLVMBuildNot(b, same, ""), "");
    }
    cr->null_ok[slot] = nok;
    return 0;
}

/* ptr <fn>.read<slot>(ptr task_ctx, i32 x[, i32 y[, i32 z]]): the leaf container holding the
 * voxel, or NULL; never activates. Kept out of line: one copy per slot, however many reads. */
static LLVMValueRef make_helper(cg_fn *f, const cread_site *site)
{
    const ir_task *t = f->task;
    int slot = site->child->field, dim = t->fields[slot].dim;
    size_t len = 0;
    const char *base = LLVMGetValueName2(f->fn, &len);
    char name[300];
    snprintf(name, sizeof name, "%.*s.read%d", (int)(len < 200 ? len : 200), base, slot);
    LLVMTypeRef params[1 + IR_MAX_DIM] = {f->t_ptr, f->t_i32, f->t_i32, f->t_i32};
    LLVMTypeRef fty = LLVMFunctionType(f->t_ptr, params, (unsigned)(1 + dim), 0);
    LLVMValueRef fn = LLVMAddFunction(f->mod, name, fty);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    static const char *const attrs[] = {"noinline", "nounwind"};
    for (int i = 0; i < 2; i++) {
        unsigned kind = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(f->ctx, kind, 0));
    }
    cg_fn h;
    h.t_void = f->t_void;
    if (cg_fn_begin(&h, t, f->target, f->ctx, f->mod, fn, f->err, f->err_size) != 0)
        return NULL;
    LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(f->ctx, fn, "walk");
    LLVMPositionBuilderAtEnd(h.b, first);
    const ir_stmt *idx = site->idx;
    int rc = 0;
    for (int a = 0; a < dim && rc == 0; a++)
        rc = cg_vmap_put(&h.vals, idx->arg[a], LLVMGetParam(fn, (unsigned)(1 + a)));
    h.next_no = f->stmt_no;
    for (int k = 0; k < site->nchain && rc == 0; k++) {
        h.stmt_no = f->stmt_no;
        rc = cg_emit_stmt(&h, site->chain[k]);
    }
    LLVMValueRef c = rc == 0 ? cg_vmap_get(&h.vals, site->child) : NULL;
    if (!c) {
        if (rc == 0)
            cg_fail(&h, "cached read: the chain gave no container");
        cg_fn_free(&h);
        return NULL;
    }
    LLVMBuildRet(h.b, c);
    cg_fn_finish(&h, first);
    return fn;
}

/* ---- per leaf container ---- */

/* The key of voxel coordinate x along axis a: the index bits above the leaf block. */
static LLVMValueRef leaf_key(cg_fn *f, int slot, int32_t lsid, int a, LLVMValueRef x)
{
    LLVMValueRef off = snode_u32(f, slot, lsid,
                                 offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)a);
    LLVMValueRef u = LLVMBuildSub(f->b, LLVMBuildSExt(f->b, x, f->t_i64, ""),
                                  LLVMBuildSExt(f->b, off, f->t_i64, ""), "");
    return LLVMBuildAShr(f->b, u, f->cread->shift[slot][a], "rd.k");
}

/* Keeps a cache slot's load or store in memory on the CPU (volatile, which SROA and mem2reg
 * leave alone). Promoted to registers, every read site's key and block became values carried
 * around the cell loop: a fused advection task had about 60 of them, which the register
 * allocator spilled and reloaded on every cell, although most reads take the table path and
 * never look at the cache. In memory, only the reads that use the cache pay for it, with a
 * load that hits the L1. On the GPU the cache stays in registers (local memory is slow). */
static LLVMValueRef in_memory(cg_fn *f, LLVMValueRef inst)
{
    if (f->target == CG_TARGET_CPU)
        LLVMSetVolatile(inst, 1);
    return inst;
}

/* The leaf container of voxel x (keys `key`) through the cache in allocas keys[] / *cont
 * (made in the entry block at first use): a compare per axis on a hit, the out-of-line walk
 * on a miss. Leaves the builder after the lookup. */
static LLVMValueRef cached_lookup(cg_fn *f, int slot, int dim, LLVMValueRef keys[],
                                  LLVMValueRef *cont, LLVMValueRef x[], LLVMValueRef key[])
{
    cg_cread *cr = f->cread;
    LLVMValueRef sentinel = LLVMConstInt(f->t_i64, 1ull << 63, 0);
    if (!*cont) {
        for (int a = 0; a < dim; a++) {
            keys[a] = cg_entry_alloca(f, f->t_i64, "rd.key");
            LLVMBuildStore(f->eb, sentinel, keys[a]);
        }
        *cont = cg_entry_alloca(f, f->t_ptr, "rd.block");
        LLVMBuildStore(f->eb, LLVMConstPointerNull(f->t_ptr), *cont);
    }
    LLVMValueRef hit = LLVMConstInt(f->t_i1, 1, 0);
    for (int a = 0; a < dim; a++) {
        LLVMValueRef was = in_memory(f, LLVMBuildLoad2(f->b, f->t_i64, keys[a], ""));
        hit = LLVMBuildAnd(f->b, hit, LLVMBuildICmp(f->b, LLVMIntEQ, key[a], was, ""), "rd.hit");
    }
    LLVMBasicBlockRef miss = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.miss");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.join");
    LLVMBuildCondBr(f->b, hit, join, miss);
    LLVMPositionBuilderAtEnd(f->b, miss);
    LLVMValueRef args[1 + IR_MAX_DIM] = {f->task_ctx};
    for (int a = 0; a < dim; a++)
        args[1 + a] = x[a];
    LLVMValueRef c = LLVMBuildCall2(f->b, LLVMGlobalGetValueType(cr->helper[slot]),
                                    cr->helper[slot], args, (unsigned)(1 + dim), "rd.walk");
    LLVMValueRef keep = LLVMBuildAnd(
        f->b, cr->enabled[slot],
        LLVMBuildOr(f->b, LLVMBuildIsNotNull(f->b, c, ""), cr->null_ok[slot], ""), "rd.keep");
    in_memory(f, LLVMBuildStore(f->b, LLVMBuildSelect(f->b, keep, key[0], sentinel, ""), keys[0]));
    for (int a = 1; a < dim; a++)
        in_memory(f, LLVMBuildStore(f->b, key[a], keys[a]));
    in_memory(f, LLVMBuildStore(f->b, c, *cont));
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    return in_memory(f, LLVMBuildLoad2(f->b, f->t_ptr, *cont, "rd.block"));
}

/* Whether block inner is blk or nested in it. */
static int nested_in(const ir_block *inner, const ir_block *blk)
{
    for (const ir_block *b = inner; b; b = b->owner ? b->owner->parent : NULL)
        if (b == blk)
            return 1;
    return 0;
}

/* Whether statement s lies in blk or in a block nested in it. */
int cg_cr_encloses(const ir_block *blk, const ir_stmt *s) { return nested_in(s->parent, blk); }

/* Forgets the places and looked-up blocks of reads of `slot`'s tree: the fields placed in one
 * tree share their lookups (and their sites), so an activation through one of them may have
 * made any of their blocks. */
static void forget_slot(const ir_task *t, cg_cread *cr, int slot)
{
    uint32_t tree = ir_tree_slot(t, (uint32_t)slot);
    for (int k = 0; k < cr->nsite; k++)
        if (ir_tree_slot(t, cr->site[k].child->field) == tree)
            cr->site[k].place_c = NULL;
    for (int k = 0; k < cr->ngroup; k++)
        if (ir_tree_slot(t, (uint32_t)cr->group[k].slot) == tree) {
            cr->group[k].last = NULL;
            cr->group[k].tab_ok = NULL;
            cr->group[k].row_ok = NULL;
        }
}

void cg_cread_block_start(cg_fn *f, const ir_block *blk)
{
    cg_cread *cr = f->cread;
    for (int k = 0; k < cr->nsite; k++)
        if (cr->site[k].place_c && nested_in(cr->site[k].place_blk, blk))
            cr->site[k].place_c = NULL;
    for (int k = 0; k < cr->ngroup; k++) {
        if (cr->group[k].last && nested_in(cr->group[k].last_blk, blk))
            cr->group[k].last = NULL;
        if (cr->group[k].tab_ok && nested_in(cr->group[k].tab_blk, blk))
            cr->group[k].tab_ok = NULL;
        if ((cr->group[k].row_ok || cr->group[k].row_hall) && nested_in(cr->group[k].row_blk, blk))
            cr->group[k].row_ok = cr->group[k].row_hall = NULL;
    }
    /* a loop's next iteration runs after whatever its body activates */
    if (blk->owner && ir_op_is_loop(blk->owner->op))
        for (int slot = 0; slot < 64; slot++)
            if (cr->activates[slot])
                forget_slot(f->task, cr, slot);
}

void cg_cread_activated(cg_fn *f, const ir_stmt *s)
{
    cg_cread *cr = f->cread;
    int act = (s->op == IR_SN_LOOKUP || s->op == IR_SN_FIELD_PTR) ? s->activate
                                                                  : s->op == IR_SN_ACTIVATE;
    if (cr && act && s->field < 64)
        forget_slot(f->task, cr, (int)s->field);
}

static LLVMValueRef const_u32(cg_fn *f, int slot, int32_t sid, uint64_t member, int *known)
{
    LLVMValueRef v = snode_u32(f, slot, sid, member);
    *known &= LLVMIsAConstantInt(v) != NULL;
    return v;
}

/* A dense leaf's geometry where the compiler knows it (the bound layout's constants), its
 * cells single voxels and its extent covering its cells: 0, else -1. */

int cg_cr_leaf_geometry(cg_fn *f, int slot, cg_cr_leaf_geom *lg)
{
    const ir_field_info *fi = &f->task->fields[slot];
    int leaf = fi->nlevels - 1, known = 1;
    int32_t lsid = cg_snode_id(f, slot, leaf);
    if (lsid < 0 || fi->levels[leaf].kind != IR_KIND_DENSE)
        return -1;
    for (int a = 0; a < fi->dim; a++) {
        LLVMValueRef off = const_u32(f, slot, lsid, offsetof(plm_rt_snode, coord_offset) + 4u * (unsigned)a, &known);
        LLVMValueRef ext = const_u32(f, slot, lsid, offsetof(plm_rt_snode, extent_bits) + 4u * (unsigned)a, &known);
        LLVMValueRef ash = const_u32(f, slot, lsid, cg_off_snode_axis_shift(a), &known);
        LLVMValueRef bits = const_u32(f, slot, lsid, cg_off_snode_axis_bits(a), &known);
        LLVMValueRef ish = const_u32(f, slot, lsid, cg_off_snode_index_shift(a), &known);
        if (!known || LLVMConstIntGetZExtValue(ash) != 0 ||
            LLVMConstIntGetZExtValue(ext) < LLVMConstIntGetZExtValue(bits) ||
            LLVMConstIntGetZExtValue(ext) > 62 || LLVMConstIntGetZExtValue(bits) > 30 ||
            LLVMConstIntGetZExtValue(ish) > 30)
            return -1;
        lg->off[a] = LLVMConstIntGetSExtValue(off);
        lg->ext[a] = (unsigned)LLVMConstIntGetZExtValue(ext);
        lg->bits[a] = (unsigned)LLVMConstIntGetZExtValue(bits);
        lg->ish[a] = (unsigned)LLVMConstIntGetZExtValue(ish);
    }
    return 0;
}

/* Whether every member of g lies in the base voxel's block, and the base's cell index there
 * (g->interior, g->cell; interior stays NULL when the geometry is not known at compile time
 * or the leaf's cells are not single voxels). c is the block's container. */
static void group_interior(cg_fn *f, cread_group *g, LLVMValueRef bx[], LLVMValueRef c)
{
    cg_cread *cr = f->cread;
    int dim = f->task->fields[g->slot].dim;
    cg_cr_leaf_geom lg;
    g->interior = g->cell = NULL;
    if (cg_cr_leaf_geometry(f, g->slot, &lg) != 0)
        return;
    LLVMValueRef in = LLVMBuildAnd(f->b, cr->enabled[g->slot], LLVMBuildIsNotNull(f->b, c, ""), "");
    LLVMValueRef cell = cg_cr_c32(f, 0);
    for (int a = 0; a < dim; a++) {
        int32_t size = (int32_t)1 << lg.bits[a];
        /* in range, as the leaf's sn_index decides it, and the cell along this axis */
        LLVMValueRef u = LLVMBuildSub(f->b, LLVMBuildSExt(f->b, bx[a], f->t_i64, ""),
                                      LLVMConstInt(f->t_i64, (unsigned long long)lg.off[a], 1), "");
        LLVMValueRef lim = LLVMConstInt(f->t_i64, 1ull << lg.ext[a], 0);
        in = LLVMBuildAnd(f->b, in, LLVMBuildICmp(f->b, LLVMIntULT, u, lim, ""), "");
        LLVMValueRef p = LLVMBuildAnd(f->b, LLVMBuildTrunc(f->b, u, f->t_i32, ""), cg_cr_c32(f, size - 1), "");
        /* every member's p + delta in [0, size) */
        in = LLVMBuildAnd(f->b, in, LLVMBuildICmp(f->b, LLVMIntSGE, p, cg_cr_c32(f, -(long long)g->dmin[a]), ""), "");
        in = LLVMBuildAnd(f->b, in, LLVMBuildICmp(f->b, LLVMIntSLT, p, cg_cr_c32(f, size - (long long)g->dmax[a]), ""), "rd.interior");
        cell = LLVMBuildOr(f->b, cell, LLVMBuildShl(f->b, p, cg_cr_c32(f, lg.ish[a]), ""), "");
    }
    g->interior = in;
    g->cell = cell;
}

/* The group's block (the base voxel's) for a read at s, looked up once where that dominates. */
static LLVMValueRef group_block(cg_fn *f, cread_group *g, const ir_stmt *s, LLVMValueRef bx[],
                                LLVMValueRef bkey[])
{
    if (g->last && cg_cr_encloses(g->last_blk, s))
        return g->last;
    int dim = f->task->fields[g->slot].dim;
    g->last = cached_lookup(f, g->slot, dim, g->key, &g->cont, bx, bkey);
    g->last_blk = s->parent;
    g->interior = g->cell = NULL;
    if (g->direct) /* only direct reads test it */
        group_interior(f, g, bx, g->last);
    return g->last;
}

/* The container of site's voxel; for a member of a group, gc is the group's block when the
 * caller already has it (NULL: looked up here, for a read at s). */
static LLVMValueRef site_container(cg_fn *f, cread_site *site, const ir_stmt *s, LLVMValueRef gc)
{
    cg_cread *cr = f->cread;
    const ir_task *t = f->task;
    int slot = site->child->field, dim = t->fields[slot].dim, leaf = t->fields[slot].nlevels - 1;
    int32_t lsid = cg_snode_id(f, slot, leaf);
    if (lsid < 0)
        return NULL;
    if (!cr->enabled[slot] && slot_setup(f, slot) != 0)
        return NULL;
    if (!cr->helper[slot] && !(cr->helper[slot] = make_helper(f, site)))
        return NULL;
    LLVMValueRef x[IR_MAX_DIM], key[IR_MAX_DIM];
    for (int a = 0; a < dim; a++) {
        if (!(x[a] = cg_val(f, site->idx->arg[a])))
            return NULL;
        key[a] = leaf_key(f, slot, lsid, a, x[a]);
    }
    if (!site->group)
        return cached_lookup(f, slot, dim, site->key, &site->cont, x, key);
    /* the group's block (the base voxel's), then this read's own when it lies elsewhere */
    cread_group *g = &cr->group[site->group - 1];
    LLVMValueRef bx[IR_MAX_DIM], bkey[IR_MAX_DIM];
    for (int a = 0; a < dim; a++) {
        if (!(bx[a] = cg_val(f, g->base[a])))
            return NULL;
        bkey[a] = leaf_key(f, slot, lsid, a, bx[a]);
    }
    if (!gc)
        gc = group_block(f, g, s, bx, bkey);
    /* keys name blocks only where the cache is sound for this runtime (enabled) */
    LLVMValueRef same = cr->enabled[slot];
    for (int a = 0; a < dim; a++)
        same = LLVMBuildAnd(f->b, same, LLVMBuildICmp(f->b, LLVMIntEQ, key[a], bkey[a], ""),
                            "rd.same");
    LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef own = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.own");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.done");
    LLVMBuildCondBr(f->b, same, done, own);
    LLVMPositionBuilderAtEnd(f->b, own);
    LLVMValueRef oc = cached_lookup(f, slot, dim, site->key, &site->cont, x, key);
    LLVMBasicBlockRef own_end = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, done);
    LLVMValueRef phi = LLVMBuildPhi(f->b, f->t_ptr, "rd.block");
    LLVMValueRef in[2] = {gc, oc};
    LLVMBasicBlockRef from[2] = {here, own_end};
    LLVMAddIncoming(phi, in, from, 2);
    return phi;
}

LLVMValueRef cg_cread_container(cg_fn *f, const ir_stmt *s, int *handled)
{
    cg_cread *cr = f->cread;
    int k = cr ? cg_smap_get(&cr->which, s) : 0;
    *handled = k > 0;
    return k ? site_container(f, &cr->site[k - 1], s, NULL) : NULL;
}

/* ---- per list entry: the blocks around it (struct_for on the CPU) ----
 * A struct_for runs over one leaf block of the iterated field per list entry, and a sample
 * near one of its voxels reads from that block or one next to it. So where a slot's leaf
 * blocks line up with the iterated field's, the 3^dim blocks around the entry's are looked up
 * as the entry starts (one walk each: the container, or NULL where inactive or out of range),
 * and a direct read whose group lies among them takes its member's block from that table by
 * arithmetic: no compare with a cached key, and no branch on whether the sample straddles a
 * block boundary, which at data-dependent points (a backtrace) is a coin toss per sample.
 * A NULL in the table is only kept where nothing the task does can activate that block
 * (null_ok); elsewhere every read takes the cached way. */

/* Whether group g's direct reads go through the table; decided at the first entry. */
static int table_decide(cg_fn *f, cread_group *g)
{
    if (g->tab)
        return g->tab > 0;
    cg_cread *cr = f->cread;
    const ir_task *t = f->task;
    int it = t->field, dim = t->fields[g->slot].dim;
    cg_cr_leaf_geom lg, li;
    g->tab = -1;
    if (f->target != CG_TARGET_CPU || t->kind != IR_TASK_STRUCT_FOR || !g->direct ||
        cr->activates[g->slot] || it >= t->nfields || dim != t->fields[it].dim ||
        cg_cr_leaf_geometry(f, g->slot, &lg) != 0 || cg_cr_leaf_geometry(f, it, &li) != 0)
        return 0;
    for (int a = 0; a < dim; a++)
        if (lg.bits[a] != li.bits[a] || ((lg.off[a] - li.off[a]) & ((1 << lg.bits[a]) - 1)) != 0)
            return 0;
    g->tab = 1;
    return 1;
}

/* The slot's table for the entry whose first voxel is coord: 3^dim walks, block (d_0, ..)
 * (each d in -1..1) at index sum (d_a + 1) 3^(dim-1-a). */
static int fill_table(cg_fn *f, int slot, LLVMValueRef coord[])
{
    cg_cread *cr = f->cread;
    int dim = f->task->fields[slot].dim, n = 1;
    cg_cr_leaf_geom lg;
    if (cg_cr_leaf_geometry(f, slot, &lg) != 0)
        return cg_fail(f, "cached read: the table's geometry changed");
    for (int a = 0; a < dim; a++)
        n *= 3;
    const cread_site *site = NULL;
    for (int i = 0; i < cr->nsite && !site; i++)
        if ((int)cr->site[i].child->field == slot)
            site = &cr->site[i];
    if (!site)
        return cg_fail(f, "cached read: a table for a slot with no reads");
    if (!cr->enabled[slot] && slot_setup(f, slot) != 0)
        return -1;
    if (!cr->helper[slot] && !(cr->helper[slot] = make_helper(f, site)))
        return -1;
    if (!cr->table[slot])
        cr->table[slot] = cg_entry_alloca(f, LLVMArrayType(f->t_ptr, (unsigned)n), "rd.table");
    LLVMValueRef bg = NULL;
    cr->table_bg[slot] = 0;
    if (cr->stored.used == 0) {
        int32_t lsid = cg_snode_id(f, slot, f->task->fields[slot].nlevels - 1);
        if (lsid >= 0) {
            bg = cg_rt_load(f, slot, CG_AT_SNODE, lsid, offsetof(plm_rt_snode, bg_container),
                            f->t_ptr);
            cr->table_bg[slot] = 1;
        }
    }
    for (int k = 0; k < n; k++) {
        LLVMValueRef args[1 + IR_MAX_DIM] = {f->task_ctx};
        for (int a = dim - 1, r = k; a >= 0; a--, r /= 3)
            args[1 + a] = LLVMBuildAdd(f->b, coord[a], cg_cr_c32(f, (long long)(r % 3 - 1) * (1ll << lg.bits[a])), "");
        LLVMValueRef c = LLVMBuildCall2(f->b, LLVMGlobalGetValueType(cr->helper[slot]),
                                        cr->helper[slot], args, (unsigned)(1 + dim), "rd.nb");
        if (bg)
            c = LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, c, ""), bg, c, "rd.nbg");
        LLVMValueRef at = LLVMConstInt(f->t_i64, (unsigned long long)k, 0);
        LLVMBuildStore(f->b, c, LLVMBuildGEP2(f->b, f->t_ptr, cr->table[slot], &at, 1, ""));
    }
    return 0;
}

int cg_cread_entry(cg_fn *f, LLVMValueRef coord[IR_MAX_DIM])
{
    cg_cread *cr = f->cread;
    if (!cr)
        return 0;
    cr->have_ent = coord != NULL;
    cr->halo_ok = NULL; /* made again by cg_cread_halo_fill in this entry's rows */
    if (!coord)
        return 0;
    const ir_task *t = f->task;
    for (int a = 0; a < t->fields[t->field].dim && a < IR_MAX_DIM; a++)
        cr->ent[a] = coord[a];
    uint8_t want[64] = {0};
    for (int k = 0; k < cr->ngroup; k++)
        if (table_decide(f, &cr->group[k]))
            want[cr->group[k].slot] = 1;
    for (int s = 0; s < 64; s++)
        if (want[s] && fill_table(f, s, coord) != 0)
            return -1;
    return 0;
}


/* The container a direct read at place c takes its value from: c, or where c is NULL (an
 * inactive block, a voxel out of range) the leaf's block of background values. Every field of
 * a tree then reads at c + its offset + cell * stride, one select per place instead of one per
 * field, and a fused task's fields interleaved per voxel load from adjacent addresses. */
static LLVMValueRef read_base(cg_fn *f, const ir_stmt *s, LLVMValueRef c)
{
    /* The background block is the leaf SNode's, with every field placed there in its place: it
     * is taken through the slot whose walk made the container, so that the reads of fields
     * that share the container (a fused task's samples of fields side by side in one tree)
     * share one select of the block and keep their addresses a constant apart. */
    const ir_stmt *ch = s->arg[0];
    int slot = ch && ch->op == IR_SN_CHILD && ch->field < f->task->nfields ? ch->field : s->field;
    int32_t lsid = cg_snode_id(f, slot, f->task->fields[slot].nlevels - 1);
    if (lsid < 0)
        return NULL;
    LLVMValueRef bg = cg_rt_load(f, slot, CG_AT_SNODE, lsid,
                                 offsetof(plm_rt_snode, bg_container), f->t_ptr);
    return LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, c, ""), bg, c, "rd.base");
}

/* The address of direct read s at place (c, cell), where the cell index is valid whether or
 * not c is NULL: NULL where the block is inactive (as the generic code's dense leaf gives
 * it), or with cg_cread_nonnull the background block's cell. */
static LLVMValueRef place_elem(cg_fn *f, const ir_stmt *s, LLVMValueRef c, LLVMValueRef cell)
{
    LLVMValueRef cell64 = LLVMBuildSExt(f->b, cell, f->t_i64, "");
    if (bg_readable(f->cread, s)) {
        LLVMValueRef base = read_base(f, s, c);
        return base ? cg_dense_elem(f, s, base, cell64, NULL) : NULL;
    }
    LLVMValueRef at = cg_dense_elem(f, s, c, cell64, NULL);
    if (!at)
        return NULL;
    return LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, c, ""), LLVMConstPointerNull(f->t_ptr),
                           at, "rd.ptr");
}

/* A slow path's leaf index as the place keeps it: 0 where out of range (the container is
 * NULL there), so that it indexes the background block. */
static LLVMValueRef slow_cell(cg_fn *f, LLVMValueRef i)
{
    return LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSGE, i, cg_cr_c32(f, 0), ""), i, cg_cr_c32(f, 0),
                           "rd.cell");
}

/* A slow path's container as the place keeps it: NULL where the voxel is out of range (leaf
 * index < 0), so that reuses test the container alone. */
static LLVMValueRef slow_place(cg_fn *f, LLVMValueRef c, LLVMValueRef i)
{
    return LLVMBuildSelect(f->b, LLVMBuildICmp(f->b, LLVMIntSGE, i, cg_cr_c32(f, 0), ""), c,
                           LLVMConstPointerNull(f->t_ptr), "rd.inrange");
}

/* Axis a's terms of a table read at delta d from u (the base less the entry's first voxel):
 * of the table index, (block offset + 1) * stride, and of the cell index, the position in the
 * block shifted into place. */
static void table_terms(cg_fn *f, LLVMValueRef u, int32_t d, int bits, int ish, long long stride,
                        LLVMValueRef *idx, LLVMValueRef *cell)
{
    LLVMValueRef v = LLVMBuildTrunc(
        f->b, LLVMBuildAdd(f->b, u, LLVMConstInt(f->t_i64, (unsigned long long)(long long)d, 1), ""),
        f->t_i32, "");
    LLVMValueRef nb = LLVMBuildAdd(f->b, LLVMBuildAShr(f->b, v, cg_cr_c32(f, bits), ""), cg_cr_c32(f, 1), "");
    *idx = LLVMBuildMul(f->b, LLVMBuildZExt(f->b, nb, f->t_i64, ""),
                        LLVMConstInt(f->t_i64, (unsigned long long)stride, 0), "rd.ti");
    LLVMValueRef p = LLVMBuildAnd(f->b, v, cg_cr_c32(f, (1ll << bits) - 1), "");
    *cell = LLVMBuildShl(f->b, p, cg_cr_c32(f, ish), "rd.tc");
}

/* The place (container, cell) of a direct read of a table group: its block from the table
 * where the group lies among the entry's neighbours, through its own cache elsewhere. */
static int table_place(cg_fn *f, cread_site *site, cread_group *g, const ir_stmt *s,
                       int32_t lsid, LLVMValueRef bx[], LLVMValueRef *c_out,
                       LLVMValueRef *cell_out, LLVMValueRef *at_out)
{
    cg_cread *cr = f->cread;
    int slot = g->slot, dim = f->task->fields[slot].dim;
    cg_cr_leaf_geom lg;
    if (cg_cr_leaf_geometry(f, slot, &lg) != 0)
        return cg_fail(f, "cached read: the table's geometry changed");
    if (!(g->tab_ok && cg_cr_encloses(g->tab_blk, s))) {
        /* the base less the entry's first voxel, and whether every member's voxel is within
         * one block of the entry's along each axis */
        LLVMValueRef ok = cr->null_ok[slot];
        for (int a = 0; a < dim; a++) {
            long long size = 1ll << lg.bits[a];
            LLVMValueRef u = LLVMBuildSub(f->b, LLVMBuildSExt(f->b, bx[a], f->t_i64, ""),
                                          LLVMBuildSExt(f->b, cr->ent[a], f->t_i64, ""), "rd.u");
            ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntSGE, u,
                              LLVMConstInt(f->t_i64, (unsigned long long)(-size - g->dmin[a]), 1), ""), "");
            ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntSLT, u,
                              LLVMConstInt(f->t_i64, (unsigned long long)(2 * size - g->dmax[a]), 1), ""), "rd.near");
            g->u[a] = u;
        }
        g->tab_ok = ok;
        g->tab_blk = s->parent;
        long long stride = 1;
        for (int a = dim - 1; a >= 0; a--) {
            int span = g->dmax[a] - g->dmin[a] + 1;
            for (int j = 0; j < CREAD_TAB_SPAN; j++)
                g->tab_idx[a][j] = g->tab_cell[a][j] = NULL;
            for (int j = 0; span <= CREAD_TAB_SPAN && j < span; j++)
                table_terms(f, g->u[a], g->dmin[a] + j, lg.bits[a], lg.ish[a], stride,
                            &g->tab_idx[a][j], &g->tab_cell[a][j]);
            stride *= 3;
        }
    }
    LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.tab");
    LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.far");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.addr");
    cg_cr_likely_first(f, LLVMBuildCondBr(f->b, g->tab_ok, tb, slow));
    LLVMPositionBuilderAtEnd(f->b, tb);
    LLVMValueRef index = NULL, cell = NULL;
    long long stride = 1;
    for (int a = dim - 1; a >= 0; a--) {
        int j = site->delta[a] - g->dmin[a];
        LLVMValueRef ti, tc;
        if (j >= 0 && j < CREAD_TAB_SPAN && g->tab_idx[a][j]) {
            ti = g->tab_idx[a][j];
            tc = g->tab_cell[a][j];
        } else {
            table_terms(f, g->u[a], site->delta[a], lg.bits[a], lg.ish[a], stride, &ti, &tc);
        }
        index = index ? LLVMBuildAdd(f->b, index, ti, "") : ti;
        cell = cell ? LLVMBuildOr(f->b, cell, tc, "") : tc;
        stride *= 3;
    }
    LLVMValueRef c = LLVMBuildLoad2(f->b, f->t_ptr,
                                    LLVMBuildGEP2(f->b, f->t_ptr, cr->table[slot], &index, 1, ""), "rd.nbk");
    int bg = cr->table_bg[slot] && bg_readable(cr, s);
    LLVMValueRef tab_at = bg ? cg_dense_elem(f, s, c, LLVMBuildSExt(f->b, cell, f->t_i64, ""), NULL)
                             : place_elem(f, s, c, cell);
    if (!tab_at)
        return -1;
    LLVMBasicBlockRef tab_end = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, slow);
    LLVMValueRef x[IR_MAX_DIM], key[IR_MAX_DIM];
    for (int a = 0; a < dim; a++) {
        if (!(x[a] = cg_val(f, site->idx->arg[a])))
            return -1;
        key[a] = leaf_key(f, slot, lsid, a, x[a]);
    }
    LLVMValueRef oc = cached_lookup(f, slot, dim, site->key, &site->cont, x, key);
    LLVMValueRef i = cg_emit_sn_index(f, s->arg[1], lsid);
    if (!i)
        return -1;
    oc = slow_place(f, oc, i);
    i = slow_cell(f, i);
    /* with the table's background blocks, the place is never NULL on this path either */
    if (bg && !(oc = read_base(f, s, oc)))
        return -1;
    LLVMValueRef slow_at = bg ? cg_dense_elem(f, s, oc, LLVMBuildSExt(f->b, i, f->t_i64, ""), NULL)
                              : place_elem(f, s, oc, i);
    if (!slow_at)
        return -1;
    site->place_bg = bg;
    LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, done);
    LLVMPositionBuilderAtEnd(f->b, done);
    LLVMValueRef in_c[2] = {c, oc}, in_i[2] = {cell, i}, in_at[2] = {tab_at, slow_at};
    LLVMBasicBlockRef from[2] = {tab_end, slow_end};
    *c_out = LLVMBuildPhi(f->b, f->t_ptr, "rd.blk");
    LLVMAddIncoming(*c_out, in_c, from, 2);
    *cell_out = LLVMBuildPhi(f->b, f->t_i32, "rd.cell");
    LLVMAddIncoming(*cell_out, in_i, from, 2);
    *at_out = LLVMBuildPhi(f->b, f->t_ptr, "rd.ptr");
    LLVMAddIncoming(*at_out, in_at, from, 2);
    return 0;
}

/* Branch weights saying the first successor is the usual one, so the other is laid out away
 * from the hot code. */
void cg_cr_likely_first(cg_fn *f, LLVMValueRef br)
{
    LLVMMetadataRef ops[3] = {
        LLVMMDStringInContext2(f->ctx, "branch_weights", 14),
        LLVMValueAsMetadata(LLVMConstInt(f->t_i32, 2000, 0)),
        LLVMValueAsMetadata(LLVMConstInt(f->t_i32, 1, 0)),
    };
    unsigned kind = LLVMGetMDKindIDInContext(f->ctx, "prof", 4);
    LLVMSetMetadata(br, kind, LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, ops, 3)));
}

/* A direct read (find_direct): where the group's members all lie in its active base block,
 * the place is that block and the base's cell index plus a constant; elsewhere the container
 * and the leaf index are made as for any site, on that path only. The place is kept for the
 * site's later reads (place_c). */
LLVMValueRef cg_cread_field_ptr(cg_fn *f, const ir_stmt *s, int *handled)
{
    cg_cread *cr = f->cread;
    *handled = 0;
    if (!cr || s->op != IR_SN_FIELD_PTR || s->nargs < 2)
        return NULL;
    int k = cg_smap_get(&cr->which, s->arg[0]);
    if (!k || !cr->site[k - 1].direct)
        return NULL;
    *handled = 1;
    cread_site *site = &cr->site[k - 1];
    if (bg_readable(cr, s) && cg_smap_put(&cr->bg_read, s, 1)) {
        cg_fail(f, "out of memory");
        return NULL;
    }
    if (site->place_c && cg_cr_encloses(site->place_blk, s)) {
        if (site->place_bg && bg_readable(cr, s))
            return cg_dense_elem(f, s, site->place_c,
                                 LLVMBuildSExt(f->b, site->place_cell, f->t_i64, ""), NULL);
        return place_elem(f, s, site->place_c, site->place_cell);
    }
    cread_group *g = &cr->group[site->group - 1];
    const ir_task *t = f->task;
    const ir_field_info *fi = &t->fields[g->slot];
    int dim = fi->dim, leaf = fi->nlevels - 1;
    int32_t lsid = cg_snode_id(f, g->slot, leaf);
    if (lsid < 0)
        return NULL;
    if (!cr->enabled[g->slot] && slot_setup(f, g->slot) != 0)
        return NULL;
    if (!cr->helper[g->slot] && !(cr->helper[g->slot] = make_helper(f, site)))
        return NULL;
    LLVMValueRef bx[IR_MAX_DIM], bkey[IR_MAX_DIM];
    for (int a = 0; a < dim; a++) {
        if (!(bx[a] = cg_val(f, g->base[a])))
            return NULL;
        bkey[a] = leaf_key(f, g->slot, lsid, a, bx[a]);
    }
    LLVMValueRef pc = NULL, pcell = NULL, pat = NULL;
    site->place_bg = 0;
    if (cr->have_ent && g->tab > 0) {
        if (table_place(f, site, g, s, lsid, bx, &pc, &pcell, &pat) != 0)
            return NULL;
    } else {
        LLVMValueRef gc = group_block(f, g, s, bx, bkey);
        LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.edge");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.addr");
        LLVMValueRef fast_cell = NULL, fast_at = NULL;
        LLVMBasicBlockRef fast_end = NULL;
        if (g->interior) {
            LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "rd.inner");
            LLVMValueRef br = LLVMBuildCondBr(f->b, g->interior, fast, slow);
            cg_cr_likely_first(f, br);
            LLVMPositionBuilderAtEnd(f->b, fast);
            int64_t dcell = 0;
            for (int a = 0; a < dim; a++) {
                LLVMValueRef ish = snode_u32(f, g->slot, lsid, cg_off_snode_index_shift(a));
                dcell += (int64_t)site->delta[a] * ((int64_t)1 << LLVMConstIntGetZExtValue(ish));
            }
            fast_cell = LLVMBuildAdd(f->b, g->cell, cg_cr_c32(f, dcell), "");
            if (!(fast_at = cg_dense_elem(f, s, gc, LLVMBuildSExt(f->b, fast_cell, f->t_i64, ""), NULL)))
                return NULL;
            fast_end = LLVMGetInsertBlock(f->b);
            LLVMBuildBr(f->b, done);
        } else {
            LLVMBuildBr(f->b, slow);
        }
        LLVMPositionBuilderAtEnd(f->b, slow);
        LLVMValueRef c = site_container(f, site, s, gc);
        LLVMValueRef i = c ? cg_emit_sn_index(f, s->arg[1], lsid) : NULL;
        if (!i)
            return NULL;
        c = slow_place(f, c, i);
        i = slow_cell(f, i);
        LLVMValueRef slow_at = place_elem(f, s, c, i);
        if (!slow_at)
            return NULL;
        LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(f->b);
        LLVMBuildBr(f->b, done);
        LLVMPositionBuilderAtEnd(f->b, done);
        LLVMValueRef in_c[2] = {c, gc}, in_i[2] = {i, fast_cell}, in_at[2] = {slow_at, fast_at};
        LLVMBasicBlockRef from[2] = {slow_end, fast_end};
        int n = fast_cell ? 2 : 1;
        pc = LLVMBuildPhi(f->b, f->t_ptr, "rd.blk");
        LLVMAddIncoming(pc, in_c, from, n);
        pcell = LLVMBuildPhi(f->b, f->t_i32, "rd.cell");
        LLVMAddIncoming(pcell, in_i, from, n);
        pat = LLVMBuildPhi(f->b, f->t_ptr, "rd.ptr");
        LLVMAddIncoming(pat, in_at, from, n);
    }
    /* this read takes its address as made on each path (no test after the join); later
     * reads of the site, from the place */
    site->place_c = pc;
    site->place_cell = pcell;
    site->place_blk = s->parent;
    return pat;
}

/* ---- rows in vectors (row_vector.c) ---- */

/* Whether value v comes (within `depth` steps) from something loaded: a sample's point does,
 * a regular stencil's (2 J + c of a restriction) does not. Deeper than that: assumed so. */
static int from_load(const ir_stmt *v, int depth, cg_smap *seen)
{
    if (v->op == IR_GLOBAL_LOAD || v->op == IR_LOAD)
        return 1;
    if (depth == 0)
        return 1;
    int k = cg_smap_get(seen, v);
    if (k)
        return k - 1; /* each statement once: a body's values share operands widely */
    int r = 0;
    for (int i = 0; i < v->nargs && !r; i++)
        r = v->arg[i] && from_load(v->arg[i], depth - 1, seen);
    if (cg_smap_put(seen, v, r + 1) != 0)
        return 1;
    return r;
}

int cg_cr_sampled(const cread_group *g, int dim)
{
    int sampled = 0;
    cg_smap seen = {0};
    for (int a = 0; a < dim; a++)
        sampled |= from_load(g->base[a], 12, &seen);
    cg_smap_free(&seen);
    return sampled;
}

int cg_cread_row_ok(const cg_fn *f, const ir_stmt *s)
{
    const cg_cread *cr = f->cread;
    if (!cr || !cr->have_ent || s->op != IR_SN_FIELD_PTR || s->nargs < 2)
        return 0;
    int k = cg_smap_get(&cr->which, s->arg[0]);
    if (!k || !cr->site[k - 1].direct || !cr->site[k - 1].group)
        return 0;
    const cread_group *g = &cr->group[cr->site[k - 1].group - 1];
    const ir_field_info *fi = &f->task->fields[s->field];
    /* reads at points made from the loop index alone keep the scalar group path, whose base
     * lookup serves all members at once: a coarse grid's reads of the fine one lie blocks
     * away from the entry, where the vector path would walk lane by lane */
    int sampled = cg_cr_sampled(g, fi->dim);
    return sampled && g->tab > 0 && cr->table_bg[g->slot] && bg_readable(cr, s) && fi->elem == IR_F32 &&
           fi->dim == f->task->fields[g->slot].dim;
}

LLVMValueRef cg_cr_splat(cg_fn *f, LLVMValueRef v, unsigned W)
{
    if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind)
        return v;
    LLVMTypeRef t = LLVMVectorType(LLVMTypeOf(v), W);
    LLVMValueRef u = LLVMBuildInsertElement(f->b, LLVMGetUndef(t), v, cg_cr_c32(f, 0), "");
    return LLVMBuildShuffleVector(f->b, u, LLVMGetUndef(t),
                                  LLVMConstNull(LLVMVectorType(f->t_i32, W)), "");
}

LLVMValueRef cg_cr_gather(cg_fn *f, LLVMTypeRef vt, LLVMValueRef ptrs, unsigned align,
                               LLVMValueRef mask, LLVMValueRef pass, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.masked.gather.%s", suffix);
    LLVMTypeRef ps[4] = {LLVMTypeOf(ptrs), f->t_i32, LLVMTypeOf(mask), vt};
    LLVMValueRef args[4] = {ptrs, cg_cr_c32(f, align), mask, pass};
    return cg_call_rt(f, name, vt, ps, args, 4);
}

/* ok and, lane by lane, lo <= u < hi (u: W lanes of i64). */
LLVMValueRef cg_cr_near(cg_fn *f, LLVMValueRef ok, LLVMValueRef u, long long lo, long long hi,
                             unsigned W)
{
    ok = LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntSGE, u,
                      cg_cr_splat(f, LLVMConstInt(f->t_i64, (unsigned long long)lo, 1), W), ""), "");
    return LLVMBuildAnd(f->b, ok, LLVMBuildICmp(f->b, LLVMIntSLT, u,
                        cg_cr_splat(f, LLVMConstInt(f->t_i64, (unsigned long long)hi, 1), W), ""), "row.near");
}

/* Whether every lane of ok is set. */
LLVMValueRef cg_cr_all_of(cg_fn *f, LLVMValueRef ok, unsigned W)
{
    LLVMTypeRef v1 = LLVMVectorType(f->t_i1, W);
    char rname[48];
    snprintf(rname, sizeof rname, "llvm.vector.reduce.and.v%ui1", W);
    return cg_call_rt(f, rname, f->t_i1, &v1, &ok, 1);
}

/* Axis a's terms of a row's table read at delta d from u (the base less the entry's first
 * voxel, W lanes of i32): as table_terms, lane by lane. */
static void row_axis_terms(cg_fn *f, LLVMValueRef u, int32_t d, int bits, int ish, int stride,
                           unsigned W, LLVMValueRef *idx, LLVMValueRef *cell)
{
    LLVMValueRef v = LLVMBuildAdd(f->b, u, cg_cr_splat(f, cg_cr_c32(f, d), W), "");
    LLVMValueRef nb = LLVMBuildAdd(f->b, LLVMBuildAShr(f->b, v, cg_cr_splat(f, cg_cr_c32(f, bits), W), ""),
                                   cg_cr_splat(f, cg_cr_c32(f, 1), W), "");
    *idx = LLVMBuildMul(f->b, nb, cg_cr_splat(f, cg_cr_c32(f, stride), W), "row.ti");
    LLVMValueRef p = LLVMBuildAnd(f->b, v, cg_cr_splat(f, cg_cr_c32(f, (1 << bits) - 1), W), "");
    *cell = LLVMBuildShl(f->b, p, cg_cr_splat(f, cg_cr_c32(f, ish), W), "row.tc");
}

/* Group g's shared terms for rows of W lanes at the current point (see cread_group): per
 * axis, u = base - the entry's first voxel in 64 bits (a coordinate near the i32 limits, from
 * a saturated cast, must not wrap into the table's range), whether every member's voxel lies
 * within one block of the entry's, and each member delta's table-index and cell terms. */
static int row_terms(cg_fn *f, cread_group *g, const ir_stmt *s, const cg_cr_leaf_geom *lg, unsigned W,
                     int table)
{
    cg_cread *cr = f->cread;
    int dim = f->task->fields[g->slot].dim;
    LLVMTypeRef v32 = LLVMVectorType(f->t_i32, W), v64 = LLVMVectorType(f->t_i64, W);
    LLVMValueRef ok = cg_cr_splat(f, cr->null_ok[g->slot], W);
    long long stride3 = 1;
    for (int a = dim - 1; a >= 0; a--) {
        LLVMValueRef b = cg_val(f, g->base[a]);
        if (!b)
            return -1;
        long long size = 1ll << lg->bits[a];
        LLVMValueRef u = LLVMBuildSub(f->b, LLVMBuildSExt(f->b, cg_cr_splat(f, b, W), v64, ""),
                                      cg_cr_splat(f, LLVMBuildSExt(f->b, cr->ent[a], f->t_i64, ""), W),
                                      "row.u");
        g->row_u64[a] = u;
        g->row_u[a] = LLVMBuildTrunc(f->b, u, v32, "");
        for (int j = 0; j < CREAD_TAB_SPAN; j++) {
            g->row_idx[a][j] = g->row_cell[a][j] = NULL;
            if (table && g->dmin[a] + j <= g->dmax[a])
                row_axis_terms(f, g->row_u[a], g->dmin[a] + j, lg->bits[a], lg->ish[a], (int)stride3,
                               W, &g->row_idx[a][j], &g->row_cell[a][j]);
        }
        if (table)
            ok = cg_cr_near(f, ok, u, -size - g->dmin[a], 2 * size - g->dmax[a], W);
        stride3 *= 3;
    }
    g->row_ok = table ? ok : NULL;
    g->row_all = table ? cg_cr_all_of(f, ok, W) : NULL;
    g->row_hall = g->row_hbase = NULL;
    if (!table)
        cg_cr_halo_terms(f, g, W);
    g->row_wide = 0;
    for (int a = 0; a < dim; a++)
        g->row_wide |= g->dmax[a] - g->dmin[a] > 1;
    g->row_w = W;
    g->row_blk = s->parent;
    return 0;
}

/* The W lanes' addresses of direct read s, the operands of its site's index being W-lane
 * vectors: each lane's block from the entry's table where the voxel lies among the entry's
 * neighbours (a gather), through the out-of-line walk elsewhere (a loop over those lanes);
 * an inactive block's lanes point into the leaf's block of background values, as
 * table_place's addresses do. The cell index comes from the voxel's low bits (the table's
 * geometry is the iterated field's, checked by table_decide). */
static LLVMValueRef table_row_ptr(cg_fn *f, const ir_stmt *s, unsigned W);


LLVMValueRef cg_cread_row_ptr(cg_fn *f, const ir_stmt *s, unsigned W)
{
    cg_cread *cr = f->cread;
    cread_site *site = &cr->site[cg_smap_get(&cr->which, s->arg[0]) - 1];
    cread_group *g = &cr->group[site->group - 1];
    int slot = g->slot;
    if (cg_cr_halo_forget(f, s) != 0)
        return NULL;
    if (!cg_cr_halo_serves(f, slot, s))
        return table_row_ptr(f, s, W);
    cg_cr_leaf_geom lg;
    if (cg_cr_leaf_geometry(f, slot, &lg) != 0) {
        cg_fail(f, "cached read: the table's geometry changed");
        return NULL;
    }
    /* the halo's terms only: the table's are made where a row needs them (a rare branch) */
    if (!(g->row_hall && g->row_w == W && cg_cr_encloses(g->row_blk, s)) &&
        row_terms(f, g, s, &lg, W, 0) != 0)
        return NULL;
    return cg_cr_halo_offset(f, site, g, s, W);
}

static LLVMValueRef table_row_ptr(cg_fn *f, const ir_stmt *s, unsigned W)
{
    cg_cread *cr = f->cread;
    cread_site *site = &cr->site[cg_smap_get(&cr->which, s->arg[0]) - 1];
    cread_group *g = &cr->group[site->group - 1];
    int slot = g->slot, dim = f->task->fields[slot].dim;
    int32_t lsid = cg_snode_id(f, slot, f->task->fields[slot].nlevels - 1);
    cg_cr_leaf_geom lg;
    if (lsid < 0 || cg_cr_leaf_geometry(f, slot, &lg) != 0) {
        cg_fail(f, "cached read: the table's geometry changed");
        return NULL;
    }
    if (!cr->enabled[slot] && slot_setup(f, slot) != 0)
        return NULL;
    LLVMTypeRef v32 = LLVMVectorType(f->t_i32, W), v64 = LLVMVectorType(f->t_i64, W);
    LLVMTypeRef vp = LLVMVectorType(f->t_ptr, W);
    LLVMValueRef x[IR_MAX_DIM];
    for (int a = 0; a < dim; a++) {
        LLVMValueRef v = cg_val(f, site->idx->arg[a]);
        if (!v)
            return NULL;
        x[a] = cg_cr_splat(f, v, W);
    }
    if (!(g->row_ok && g->row_w == W && cg_cr_encloses(g->row_blk, s)) && row_terms(f, g, s, &lg, W, 1) != 0)
        return NULL;
    LLVMValueRef ok = g->row_ok, all = g->row_all, idx = NULL, cell = NULL;
    if (g->row_wide) {
        /* Members further apart than a sample's corners: the group's range narrows by their
         * span (a span of 3 blocks would leave none), so each member tests its own voxel and
         * one far member does not send the others' lanes down the walk. */
        ok = cg_cr_splat(f, cr->null_ok[slot], W);
        for (int a = 0; a < dim; a++) {
            long long size = 1ll << lg.bits[a];
            LLVMValueRef u = LLVMBuildAdd(f->b, g->row_u64[a],
                                          cg_cr_splat(f, LLVMConstInt(f->t_i64, (unsigned long long)(long long)site->delta[a], 1), W), "");
            ok = cg_cr_near(f, ok, u, -size, 2 * size, W);
        }
        all = cg_cr_all_of(f, ok, W);
    }
    if (cr->walk_all) {
        /* a row that left its halo (0.3% of the default scene's): every lane walks, which
         * keeps the table's gathers out of the code (3% fewer instructions, 0.5 s less
         * compiling on a cold cache; the same time per frame) */
        ok = LLVMConstNull(LLVMVectorType(f->t_i1, W));
        all = LLVMConstInt(f->t_i1, 0, 0);
    }
    int stride3 = 1;
    for (int a = dim - 1; a >= 0; a--) {
        int j = site->delta[a] - g->dmin[a];
        LLVMValueRef ti, tc;
        if (j >= 0 && j < CREAD_TAB_SPAN && g->row_idx[a][j]) {
            ti = g->row_idx[a][j];
            tc = g->row_cell[a][j];
        } else { /* deltas spanning more than CREAD_TAB_SPAN */
            row_axis_terms(f, g->row_u[a], site->delta[a], lg.bits[a], lg.ish[a], stride3, W, &ti, &tc);
        }
        idx = idx ? LLVMBuildAdd(f->b, idx, ti, "") : ti;
        cell = cell ? LLVMBuildOr(f->b, cell, tc, "row.cell") : tc;
        stride3 *= 3;
    }
    idx = LLVMBuildSelect(f->b, ok, idx, LLVMConstNull(v32), "");
    LLVMValueRef at = LLVMBuildGEP2(f->b, f->t_ptr, cr->table[slot], &idx, 1, "row.tab");
    char gname[32];
    snprintf(gname, sizeof gname, "v%up0.v%up0", W, W);
    LLVMValueRef blk = cg_cr_gather(f, vp, at, 8, ok, LLVMConstNull(vp), gname);
    /* lanes away from the entry: the walk, one lane at a time */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.far");
    LLVMBasicBlockRef walk = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.walk");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.farnext");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.blocks");
    cg_cr_likely_first(f, LLVMBuildCondBr(f->b, all, done, loop));
    LLVMPositionBuilderAtEnd(f->b, loop);
    LLVMValueRef l = LLVMBuildPhi(f->b, f->t_i32, "row.lane");
    LLVMValueRef cv = LLVMBuildPhi(f->b, vp, "row.blk");
    LLVMBuildCondBr(f->b, LLVMBuildExtractElement(f->b, ok, l, ""), next, walk);
    LLVMPositionBuilderAtEnd(f->b, walk);
    if (!cr->helper[slot] && !(cr->helper[slot] = make_helper(f, site)))
        return NULL;
    LLVMValueRef args[1 + IR_MAX_DIM] = {f->task_ctx}, saved[IR_MAX_DIM];
    /* all saved before any is replaced: one statement may index two axes (a[ivec3(k)]) */
    for (int a = 0; a < dim; a++)
        saved[a] = cg_vmap_get(&f->vals, site->idx->arg[a]);
    for (int a = 0; a < dim; a++) {
        args[1 + a] = LLVMBuildExtractElement(f->b, x[a], l, "");
        cg_vmap_put(&f->vals, site->idx->arg[a], args[1 + a]);
    }
    /* through the site's cache, as table_place's far path: lanes away from the entry are
     * mostly the same few blocks (a coarse grid's reads of the fine one) */
    LLVMValueRef key[IR_MAX_DIM];
    for (int a = 0; a < dim; a++)
        key[a] = leaf_key(f, slot, lsid, a, args[1 + a]);
    LLVMValueRef c = cached_lookup(f, slot, dim, site->key, &site->cont, args + 1, key);
    LLVMValueRef i = cg_emit_sn_index(f, s->arg[1], lsid);
    for (int a = dim - 1; a >= 0; a--)
        cg_vmap_put(&f->vals, site->idx->arg[a], saved[a]);
    if (!i)
        return NULL;
    /* NULL (an inactive block, a voxel out of range) reads the background block; the table's
     * blocks, which the gather takes, are never NULL (table_bg) */
    LLVMValueRef bg = cg_rt_load(f, slot, CG_AT_SNODE, lsid, offsetof(plm_rt_snode, bg_container),
                                 f->t_ptr);
    c = slow_place(f, c, i);
    c = LLVMBuildSelect(f->b, LLVMBuildIsNull(f->b, c, ""), bg, c, "row.walkbg");
    LLVMValueRef cv1 = LLVMBuildInsertElement(f->b, cv, c, l, "");
    LLVMBasicBlockRef walk_end = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, next);
    LLVMPositionBuilderAtEnd(f->b, next);
    LLVMValueRef cv2 = LLVMBuildPhi(f->b, vp, "row.blk");
    LLVMValueRef in2[2] = {cv, cv1};
    LLVMBasicBlockRef from2[2] = {loop, walk_end};
    LLVMAddIncoming(cv2, in2, from2, 2);
    LLVMValueRef l1 = LLVMBuildAdd(f->b, l, cg_cr_c32(f, 1), "");
    LLVMValueRef back =
        LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntULT, l1, cg_cr_c32(f, W), ""), loop, done);
    /* kept rolled: the walk is rare, and W copies of it per read made the fused advection
     * tasks' compile twice as long */
    cg_loop_hint(f, back, "llvm.loop.unroll.disable");
    LLVMValueRef inl[2] = {cg_cr_c32(f, 0), l1}, inc[2] = {blk, cv2};
    LLVMBasicBlockRef froml[2] = {pre, next};
    LLVMAddIncoming(l, inl, froml, 2);
    LLVMAddIncoming(cv, inc, froml, 2);
    LLVMPositionBuilderAtEnd(f->b, done);
    LLVMValueRef cf = LLVMBuildPhi(f->b, vp, "row.blk");
    LLVMValueRef inf[2] = {blk, cv2};
    LLVMBasicBlockRef fromf[2] = {pre, next};
    LLVMAddIncoming(cf, inf, fromf, 2);
    /* the element: as cg_dense_elem, lane-wise */
    const ir_field_info *fi = &f->task->fields[s->field];
    int32_t fsid = cg_snode_id(f, s->field, fi->nlevels - 1);
    if (fsid < 0)
        return NULL;
    LLVMValueRef stride = cg_rt_load(f, s->field, CG_AT_FIELD, 0, offsetof(plm_rt_field, stride), f->t_i64);
    LLVMValueRef hdr = cg_rt_load(f, s->field, CG_AT_SNODE, fsid, offsetof(plm_rt_snode, header_bytes), f->t_i64);
    LLVMValueRef foff = cg_rt_load(f, s->field, CG_AT_FIELD, 0, offsetof(plm_rt_field, offset), f->t_i64);
    LLVMValueRef o = LLVMBuildAdd(f->b, LLVMBuildAdd(f->b, hdr, foff, ""),
                                  LLVMConstInt(f->t_i64, (uint64_t)s->comp * 4u, 0), "");
    LLVMValueRef off = LLVMBuildAdd(f->b, cg_cr_splat(f, o, W),
                                    LLVMBuildMul(f->b, LLVMBuildSExt(f->b, cell, v64, ""),
                                                 cg_cr_splat(f, stride, W), ""), "");
    return LLVMBuildGEP2(f->b, f->t_i8, cf, &off, 1, "row.rd");
}

LLVMValueRef cg_cread_row_load(cg_fn *f, const ir_stmt *ptr, LLVMValueRef ptrs, unsigned W)
{
    cg_cread *cr = f->cread;
    LLVMTypeRef vt = LLVMVectorType(f->t_f32, W), v1 = LLVMVectorType(f->t_i1, W);
    char suffix[32];
    snprintf(suffix, sizeof suffix, "v%uf32.v%up0", W, W);
    LLVMValueRef in_halo = cg_cr_halo_cond(f, ptr);
    if (!in_halo)
        return cg_cr_gather(f, vt, ptrs, 4, LLVMConstAllOnes(v1), LLVMGetUndef(vt), suffix);
    /* ptrs is the read's offset in the halo (cg_cr_halo_offset): from there where every lane
     * lies in it, else through the table as without a halo */
    LLVMBasicBlockRef hb = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.halo");
    LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.table");
    LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(f->ctx, f->fn, "row.hjoin");
    cg_cr_likely_first(f, LLVMBuildCondBr(f->b, in_halo, hb, tb));
    LLVMPositionBuilderAtEnd(f->b, hb);
    LLVMValueRef hv = cg_cr_halo_read(f, ptr, ptrs, W);
    LLVMBuildBr(f->b, jb);
    LLVMPositionBuilderAtEnd(f->b, tb);
    /* the table's terms made here serve this branch only: the group's halo terms stay */
    cread_site *site = &cr->site[cg_smap_get(&cr->which, ptr->arg[0]) - 1];
    cread_group *g = &cr->group[site->group - 1], saved = *g;
    g->row_ok = NULL;
    cr->walk_all = 1;
    LLVMValueRef tp = table_row_ptr(f, ptr, W);
    cr->walk_all = 0;
    *g = saved;
    if (!tp || !hv)
        return NULL;
    LLVMValueRef tv = cg_cr_gather(f, vt, tp, 4, LLVMConstAllOnes(v1), LLVMGetUndef(vt), suffix);
    LLVMBasicBlockRef tend = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, jb);
    LLVMPositionBuilderAtEnd(f->b, jb);
    return cg_phi2(f, vt, hv, hb, tv, tend, "row.hv");
}
