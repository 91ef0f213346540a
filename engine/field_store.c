/* A field's storage: a sparse SNode tree (sparse/tree.h) of its own, so each field has its own
 * topology as each grid of a VDB file does, or one tree shared by a group of fields declared
 * together (eng_field_declare_group), which then share their topology as Taichi's place(a, b)
 * does. This file is the host's view of it: block copies in and out, voxel reads, statistics. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"
#include "sparse/tree.h"
#if PLUME_HAVE_KERNELS
#include "engine/exec_cuda.h"
#include "engine/passes/passes.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct eng_field {
    eng_field_desc desc;
    char *name;
    char *layout;    /* the layout as declared ("" = default) */
    int comps;
    plm_tree *tree;  /* destroyed by the field that owns it (the group's first) */
    int owns_tree;
    int group_n;     /* fields placed in the tree (1: the field alone) */
    int group_first; /* ctx->fields index of the tree's first field */
    int fid;         /* the field's id inside its tree */
    int leaf;        /* leaf SNode (its cells are voxels) */
    int leaf_kind;   /* PLM_RT_DENSE or PLM_RT_BITMASKED: per-voxel activity only for the latter */
    int blocks_ok;   /* leaf blocks are 8^3 voxels: host block access allowed */
    int stride;      /* floats from one voxel's value to the next in a block (comps unless
                      * interleaved with other fields per voxel) */
    plm_block_shape shape;
    eng_context *ctx; /* for the host hooks that order host access with queued tasks */
    int id;           /* index in ctx->fields */
    void *arena;      /* the tree's arena when the context owns it (a GPU pool slice), else NULL */
    int scratch;      /* eng_field_set_scratch */
    int transient;    /* eng_field_set_transient */
#if PLUME_HAVE_KERNELS
    int info_ok;
    ir_field_info info;
#endif
};

#if PLUME_HAVE_KERNELS
/* The chain from the root to the field's leaf, as the IR describes fields. */
static int make_ir_info(eng_field *f)
{
    const plm_layout *lay = plm_tree_layout(f->tree);
    int32_t path[PLM_RT_MAX_DEPTH + 1];
    int n = 0;
    for (int32_t s = f->leaf; s >= 0 && n <= PLM_RT_MAX_DEPTH; s = lay->cfg.snodes[s].parent)
        path[n++] = s;
    if (n > IR_MAX_LEVELS)
        return -1;
    ir_field_info *in = &f->info;
    memset(in, 0, sizeof *in);
    snprintf(in->name, sizeof in->name, "%s", f->name);
    in->elem = IR_F32;
    in->components = (uint8_t)f->comps;
    in->nlevels = (uint8_t)n;
    int dim = 0;
    for (int l = 0; l < n; l++) {
        const plm_rt_snode *sn = &lay->cfg.snodes[path[n - 1 - l]];
        ir_level *lv = &in->levels[l];
        lv->kind = (uint8_t)sn->kind;
        lv->rt_snode = sn->id;
        for (int a = 0; a < 3; a++) {
            lv->log2_size[a] = (uint8_t)sn->axis_bits[a];
            if (sn->axis_bits[a] && a + 1 > dim)
                dim = a + 1;
        }
    }
    in->dim = (uint8_t)dim;
    in->tree_key = f->group_n > 1 ? (uint32_t)f->group_first + 1u : 0u;
    ir_field_info_set_geometry(in, &lay->cfg, f->fid);
    return 0;
}
#else
/* Without kernels nothing is queued: host access needs no ordering. */
int eng_host_read(eng_context *ctx)
{
    (void)ctx;
    return ENG_OK;
}
int eng_host_write(eng_context *ctx, eng_field *f)
{
    (void)ctx;
    (void)f;
    return ENG_OK;
}
#endif

const char *eng_default_layout(int dim)
{
    switch (dim) {
    case 0: return "dense(i,1)";
    case 1: return "pointer(i,4096).dense(i,512)";
    case 2: return "offset(-2048,-2048,0).pointer(ij,32).pointer(ij,16).dense(ij,8)";
    case 3: return PLM_LAYOUT_DEFAULT;
    default: return NULL;
    }
}

static const char *base_layout(const eng_field_desc *d)
{
    return d->layout && d->layout[0] ? d->layout : PLM_LAYOUT_DEFAULT;
}

/* One tree with the fields placed v0, v1, ... in declaration order: struct of arrays, so each
 * field's block is one contiguous run a VDB leaf copies into, or (aos) one struct of all fields
 * per voxel, Taichi's place(). */
static int make_tree(eng_context *ctx, const eng_field_desc *d, int n, int aos, plm_tree **tree,
                     void **arena)
{
    const char *base = base_layout(&d[0]);
    size_t len = strlen(base) + 16 + (size_t)n * 12;
    char *text = malloc(len);
    if (!text)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    size_t at = (size_t)snprintf(text, len, "%s.%s(", base, aos ? "place_aos" : "place");
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(text + at, len - at, "%sv%d%s", i ? ", " : "", i,
                               d[i].type == ENG_VEC3 ? ":vec3" : "");
    snprintf(text + at, len - at, ")");
    char err[512];
    int made;
    *arena = NULL;
#if PLUME_HAVE_KERNELS
    if (ctx->cuda) {
        /* On a GPU the tree lives in a slice of the device pool, which both sides address. */
        uint64_t bytes = 0;
        uint32_t *flag = NULL;
        if (eng_cuda_arena_take(ctx->cuda, arena, &bytes, &flag, err, sizeof err) != 0) {
            free(text);
            return eng_fail(ctx, ENG_ENOMEM, "field '%s': %s", d[0].name, err);
        }
        made = plm_tree_create_in(text, *arena, bytes < ctx->budget ? bytes : ctx->budget, tree,
                                  err, sizeof err);
        /* list(root) is made once, here: GPU tasks never rewrite it (cuda_rt_kernels.c). The
         * host polls errors through the flag after every batch (eng_check_runtime_errors). */
        if (made == 0) {
            plm_rt_listgen_root(plm_tree_runtime(*tree));
            plm_tree_set_error_flag(*tree, flag);
        } else
            eng_cuda_arena_give(ctx->cuda, *arena);
    } else
#endif
        made = plm_tree_create(text, ctx->budget, tree, err, sizeof err);
    free(text);
    if (made != 0)
        /* Columns count in the text as declared: the appended place() comes after it. */
        return eng_fail(ctx, ENG_EINVAL, "field '%s': layout \"%s\": %s", d[0].name, base, err);
    if (!*arena) {
        plm_runtime *rt = plm_tree_runtime(*tree);
        uint64_t total = __atomic_add_fetch(&ctx->mem_used, rt->used, __ATOMIC_ACQ_REL);
        rt->shared_used = &ctx->mem_used;
        rt->shared_budget = ctx->budget;
        if (total > ctx->budget) {
            __atomic_sub_fetch(&ctx->mem_used, rt->used, __ATOMIC_ACQ_REL);
            plm_tree_destroy(*tree);
            *tree = NULL;
            return eng_fail(ctx, ENG_ENOMEM,
                            "field '%s': memory budget exceeded: needed %llu bytes with the "
                            "fields before it, budget %llu bytes", d[0].name,
                            (unsigned long long)total, (unsigned long long)ctx->budget);
        }
    }
    return ENG_OK;
}

int eng_field_new_group(eng_context *ctx, const eng_field_desc *descs, int n, int aos,
                        eng_field **out)
{
    if (n < 1 || n > PLM_RT_MAX_FIELDS)
        return eng_fail(ctx, ENG_EINVAL, "a group places 1 to %d fields, not %d", PLM_RT_MAX_FIELDS, n);
    for (int i = 0; i < n; i++) {
        if (strstr(base_layout(&descs[i]), "place"))
            return eng_fail(ctx, ENG_EINVAL,
                            "field '%s': the layout names SNodes only; Plume places the field itself "
                            "(remove 'place(...)')", descs[i].name);
        if (strcmp(base_layout(&descs[i]), base_layout(&descs[0])))
            return eng_fail(ctx, ENG_EINVAL,
                            "field '%s': fields placed in one tree need one layout; '%s' has \"%s\", "
                            "this one \"%s\"", descs[i].name, descs[0].name, base_layout(&descs[0]),
                            base_layout(&descs[i]));
    }
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    plm_tree *tree = NULL;
    void *arena = NULL;
    int rc = make_tree(ctx, descs, n, aos, &tree, &arena);
    if (rc)
        return rc;
    int first = ctx->nfields;
    for (int i = 0; i < n; i++) {
        const eng_field_desc *desc = &descs[i];
        eng_field *f = calloc(1, sizeof *f);
        if (!f) {
            rc = eng_fail(ctx, ENG_ENOMEM, "out of host memory");
            break;
        }
        out[i] = f;
        f->desc = *desc;
        f->name = strdup(desc->name);
        f->layout = strdup(desc->layout ? desc->layout : "");
        f->desc.name = f->name;
        f->desc.layout = f->layout;
        f->ctx = ctx;
        f->tree = tree;
        f->owns_tree = i == 0;
        f->arena = i == 0 ? arena : NULL;
        f->group_n = n;
        f->group_first = first;
        f->id = first + i;
        if (!f->name || !f->layout) {
            rc = eng_fail(ctx, ENG_ENOMEM, "out of host memory");
            break;
        }
        f->comps = desc->type == ENG_VEC3 ? 3 : 1;
        char vname[16];
        snprintf(vname, sizeof vname, "v%d", i);
        f->fid = plm_tree_field(tree, vname);
        const plm_layout *lay = plm_tree_layout(tree);
        f->leaf = lay->cfg.fields[f->fid].snode;
        f->leaf_kind = lay->cfg.snodes[f->leaf].kind;
        /* Host block access (and a VDB leaf per block) needs blocks of 8^3 at multiples of 8;
         * other layouts take the voxel-by-voxel paths below ("Other layouts"). */
        const int32_t *off = lay->cfg.snodes[f->leaf].coord_offset;
        /* ...and cells in VDB's order, x slowest: a leaf with other axes (dense(jki,8)) stores
         * its 512 values in its own order, which a block copy would scramble */
        const plm_rt_snode *ln = &lay->cfg.snodes[f->leaf];
        f->blocks_ok = plm_tree_block_shape(tree, f->fid, &f->shape) == 0 && f->shape.dims[0] == 8 &&
                       f->shape.dims[1] == 8 && f->shape.dims[2] == 8 && off[0] % 8 == 0 &&
                       off[1] % 8 == 0 && off[2] % 8 == 0 && ln->index_shift[0] == 6 &&
                       ln->index_shift[1] == 3 && ln->index_shift[2] == 0;
        f->stride = f->blocks_ok ? f->shape.stride : f->comps;
        plm_tree_set_background(tree, f->fid, desc->background);
#if PLUME_HAVE_KERNELS
        f->info_ok = make_ir_info(f) == 0;
#endif
    }
    if (rc) {
        /* the first field owns the tree: free the others first */
        int owner_made = out[0] != NULL;
        for (int i = n - 1; i >= 0; i--) {
            eng_field_free(out[i]);
            out[i] = NULL;
        }
        if (!owner_made) {
            plm_runtime *rt = plm_tree_runtime(tree);
            if (rt->shared_used)
                __atomic_sub_fetch(rt->shared_used, rt->used, __ATOMIC_ACQ_REL);
            plm_tree_destroy(tree);
#if PLUME_HAVE_KERNELS
            if (arena)
                eng_cuda_arena_give(ctx->cuda, arena);
#endif
        }
    }
    return rc;
}

int eng_field_new(eng_context *ctx, const eng_field_desc *desc, eng_field **out)
{
    *out = NULL;
    return eng_field_new_group(ctx, desc, 1, 0, out);
}

void eng_field_free(eng_field *f)
{
    if (!f)
        return;
    if (f->tree && f->owns_tree) {
        plm_runtime *rt = plm_tree_runtime(f->tree);
        if (rt->shared_used) /* hand the tree's bytes back to the context's budget */
            __atomic_sub_fetch(rt->shared_used, rt->used, __ATOMIC_ACQ_REL);
        plm_tree_destroy(f->tree);
    }
#if PLUME_HAVE_KERNELS
    if (f->owns_tree && f->arena && f->ctx && f->ctx->cuda)
        eng_cuda_arena_give(f->ctx->cuda, f->arena);
#endif
    free(f->name);
    free(f->layout);
    free(f);
}

const eng_field_desc *eng_field_info(const eng_field *f) { return &f->desc; }
int eng_field_components(const eng_field *f) { return f->comps; }
int eng_field_voxel_masks(const eng_field *f) { return f->leaf_kind == PLM_RT_BITMASKED; }
void eng_field_set_scratch(eng_field *f) { f->scratch = 1; }
void eng_field_set_transient(eng_field *f) { f->transient = 1; }
int eng_field_is_transient(const eng_field *f) { return f->transient; }

void eng_field_index_range(const eng_field *f, int64_t lo[3], int64_t hi[3])
{
    const plm_rt_snode *leaf = &plm_tree_layout(f->tree)->cfg.snodes[f->leaf];
    for (int a = 0; a < 3; a++) {
        lo[a] = leaf->coord_offset[a];
        hi[a] = lo[a] + ((int64_t)1 << leaf->extent_bits[a]);
    }
}
int eng_field_is_scratch(const eng_field *f) { return f->scratch; }
plm_tree *eng_field_tree(eng_field *f) { return f->tree; }

/* blocks_ok (8^3 at multiples of 8, so each is one VDB leaf), holding only this field */
int eng_field_has_blocks(const eng_field *f) { return f->blocks_ok && f->stride == f->comps; }
int eng_field_id(const eng_field *f) { return f->id; }
int eng_field_tree_id(const eng_field *f) { return f->fid; }
#if PLUME_HAVE_KERNELS
const ir_field_info *eng_field_ir_info(const eng_field *f) { return f->info_ok ? &f->info : NULL; }
#endif

uint64_t eng_field_bytes(eng_field *f)
{
    if (!f->owns_tree)
        return 0; /* the group's first field counts the tree */
    plm_tree_stats s;
    plm_tree_stats_get(f->tree, &s);
    return s.bytes_in_use;
}

static int aligned_origin(const int32_t o[3])
{
    return (o[0] & 7) == 0 && (o[1] & 7) == 0 && (o[2] & 7) == 0;
}

static void full_mask(uint64_t m[8]) { memset(m, 0xff, 8 * sizeof *m); }

/* Per-voxel activity of an active block. */
static void block_mask(eng_field *f, const int32_t o[3], uint64_t m[8])
{
    if (f->leaf_kind != PLM_RT_BITMASKED) {
        full_mask(m);
        return;
    }
    memset(m, 0, 8 * sizeof *m);
    for (int n = 0; n < 512; n++)
        if (plm_tree_is_active(f->tree, f->leaf, o[0] + (n >> 6), o[1] + ((n >> 3) & 7), o[2] + (n & 7)))
            m[n >> 6] |= 1ull << (n & 63);
}

static int popcount8(const uint64_t m[8])
{
    int n = 0;
    for (int i = 0; i < 8; i++)
        n += __builtin_popcountll(m[i]);
    return n;
}

typedef struct count_ctx {
    eng_field *f;
    uint64_t blocks, voxels;
} count_ctx;

static int count_block(void *user, const int32_t origin[3], float *data)
{
    (void)data;
    count_ctx *c = user;
    uint64_t m[8];
    c->blocks++;
    block_mask(c->f, origin, m);
    c->voxels += (uint64_t)popcount8(m);
    return 0;
}

/* ---- Other layouts ----
 * A field whose leaf blocks are not 8^3 voxels at multiples of 8 (a scene's own layout: other
 * leaf sizes, an offset that is not a multiple of 8, fewer dimensions) is seen by the host as
 * the 8^3 blocks at multiples of 8 that hold its active cells, the blocks a VDB file stores.
 * Everything goes cell by cell through eng_field_foreach_cell: slower than the block paths,
 * but exports, checkpoints, statistics and clears see every cell of any layout. */

typedef struct cells_ctx {
    int op; /* -1: counts and origins only, else ENG_REDUCE_* */
    int comps;
    uint64_t voxels;
    double acc;
    int32_t *o; /* the 8^3 block of each cell, deduplicated afterwards */
    size_t n, cap;
    int want_origins, failed;
} cells_ctx;

static int32_t floor8(int32_t v) { return (int32_t)((uint32_t)v & ~7u); }

static int cell_visit(void *user, const int32_t ijk[3], const float *v)
{
    cells_ctx *c = user;
    c->voxels++;
    if (c->op == ENG_REDUCE_SUM) {
        c->acc += v[0];
    } else if (c->op == ENG_REDUCE_MAX_ABS) {
        double m2 = 0;
        for (int k = 0; k < c->comps; k++)
            m2 += (double)v[k] * v[k];
        double a = sqrt(m2);
        if (!isnan(c->acc) && (isnan(a) || a > c->acc)) /* a NaN anywhere is the answer */
            c->acc = a;
    }
    if (!c->want_origins)
        return 0;
    int32_t b[3] = {floor8(ijk[0]), floor8(ijk[1]), floor8(ijk[2])};
    if (c->n && !memcmp(c->o + 3 * (c->n - 1), b, sizeof b))
        return 0; /* cells come block by block: most repeats are the last block again */
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        int32_t *g = realloc(c->o, cap * 3 * sizeof *g);
        if (!g)
            return c->failed = 1;
        c->o = g;
        c->cap = cap;
    }
    memcpy(c->o + 3 * c->n++, b, sizeof b);
    return 0;
}

static int cmp_origin(const void *pa, const void *pb);

/* The walk; with want_origins, c->o ends sorted (z, y, x) without repeats. 0 or -1. */
static int cells_walk(eng_field *f, cells_ctx *c)
{
    c->comps = f->comps;
    if (eng_field_foreach_cell(f->ctx, f, cell_visit, c) != ENG_OK || c->failed)
        return -1;
    if (c->want_origins && c->n > 1) {
        qsort(c->o, c->n, 3 * sizeof *c->o, cmp_origin);
        size_t k = 1;
        for (size_t i = 1; i < c->n; i++)
            if (memcmp(c->o + 3 * i, c->o + 3 * (k - 1), 3 * sizeof *c->o))
                memcpy(c->o + 3 * k++, c->o + 3 * i, 3 * sizeof *c->o);
        c->n = k;
    }
    return 0;
}

uint64_t eng_field_block_count(eng_field *f)
{
    eng_host_read(f->ctx);
    if (!f->blocks_ok) {
        cells_ctx c = {.op = -1, .want_origins = 1};
        uint64_t n = cells_walk(f, &c) == 0 ? c.n : 0;
        free(c.o);
        return n;
    }
    count_ctx c = {f, 0, 0};
    plm_tree_foreach_block(f->tree, f->fid, count_block, &c);
    return c.blocks;
}

uint64_t eng_field_active_voxels(eng_field *f)
{
    eng_host_read(f->ctx);
    if (!f->blocks_ok) {
        cells_ctx c = {.op = -1};
        return cells_walk(f, &c) == 0 ? c.voxels : 0;
    }
    count_ctx c = {f, 0, 0};
    plm_tree_foreach_block(f->tree, f->fid, count_block, &c);
    return c.voxels;
}

/* ENG_OK when the 8^3 block at origin lies within the voxels the field can hold; otherwise the
 * error in the user's terms (the tree would only say an activation failed). */
static int block_in_range(eng_context *ctx, const eng_field *f, const int32_t origin[3])
{
    int64_t lo[3], hi[3];
    eng_field_index_range(f, lo, hi);
    for (int a = 0; a < 3; a++)
        if (origin[a] + 7 < lo[a] || origin[a] >= hi[a])
            return eng_fail(ctx, ENG_EINVAL,
                            "field '%s': voxels at (%d, %d, %d) lie outside the voxels the field "
                            "can hold (%lld..%lld, %lld..%lld, %lld..%lld); give the field a larger "
                            "layout or move the data", f->name, origin[0], origin[1], origin[2],
                            (long long)lo[0], (long long)hi[0] - 1, (long long)lo[1],
                            (long long)hi[1] - 1, (long long)lo[2], (long long)hi[2] - 1);
    return ENG_OK;
}

float *eng_field_block_data(eng_context *ctx, eng_field *f, const int32_t origin[3], int create)
{
    /* The caller may write through the pointer. */
    if (eng_host_write(ctx, f) != ENG_OK)
        return NULL;
    if (!f->blocks_ok || f->stride != f->comps || !aligned_origin(origin))
        return NULL; /* a field interleaved per voxel has no run of its own to hand out */
    float *data = plm_tree_block(f->tree, f->fid, origin[0], origin[1], origin[2], 0, NULL);
    if (data || !create)
        return data;
    if (block_in_range(ctx, f, origin) != ENG_OK)
        return NULL;
    data = plm_tree_block(f->tree, f->fid, origin[0], origin[1], origin[2], 1, NULL);
    char msg[512];
    if (plm_tree_check_error(f->tree, msg, sizeof msg) != 0) {
        eng_fail(ctx, ENG_ENOMEM, "field '%s': %s", f->name, msg);
        return NULL;
    }
    if (data && f->leaf_kind == PLM_RT_BITMASKED)
        for (int n = 0; n < 512; n++)
            plm_tree_activate(f->tree, f->leaf, origin[0] + (n >> 6), origin[1] + ((n >> 3) & 7),
                              origin[2] + (n & 7));
    return data;
}

/* Other layouts ("Other layouts" above): the 8^3 block's cells one by one. The cells of the
 * mask are written (activated as their layout needs); the others, where active, are
 * deactivated when the leaf has per-voxel activity and set to the background when not. */
static int write_cells(eng_context *ctx, eng_field *f, const int32_t origin[3],
                       const float *values, const uint64_t *mask)
{
    const float *bg = f->desc.background;
    for (int n = 0; n < 512; n++) {
        int32_t x = origin[0] + (n >> 6), y = origin[1] + ((n >> 3) & 7), z = origin[2] + (n & 7);
        float v[3];
        if (!mask || (mask[n >> 6] >> (n & 63) & 1)) {
            plm_tree_write(f->tree, f->fid, x, y, z, values + n * f->comps);
        } else if (plm_tree_read(f->tree, f->fid, x, y, z, v) == 1) {
            plm_tree_write(f->tree, f->fid, x, y, z, bg);
            if (f->leaf_kind == PLM_RT_BITMASKED)
                plm_tree_deactivate(f->tree, f->leaf, x, y, z);
        }
    }
    char msg[512];
    if (plm_tree_check_error(f->tree, msg, sizeof msg) != 0)
        return eng_fail(ctx, ENG_ENOMEM, "field '%s': %s", f->name, msg);
    return ENG_OK;
}

int eng_field_write_block(eng_context *ctx, eng_field *f, const int32_t origin[3],
                          const float *values, const uint64_t *mask)
{
    int rc = eng_host_write(ctx, f);
    if (rc)
        return rc;
    if (!aligned_origin(origin))
        return eng_fail(ctx, ENG_EINVAL, "block origin (%d,%d,%d) is not a multiple of 8", origin[0],
                        origin[1], origin[2]);
    if ((rc = block_in_range(ctx, f, origin)) != ENG_OK)
        return rc;
    if (!f->blocks_ok)
        return write_cells(ctx, f, origin, values, mask);
    float *data = plm_tree_block(f->tree, f->fid, origin[0], origin[1], origin[2], 1, NULL);
    char msg[512];
    if (plm_tree_check_error(f->tree, msg, sizeof msg) != 0 || !data)
        return eng_fail(ctx, ENG_ENOMEM, "field '%s': %s", f->name, data ? msg : "block activation failed");
    const float *bg = f->desc.background;
    for (int n = 0; n < 512; n++) {
        int on = !mask || (mask[n >> 6] >> (n & 63) & 1);
        for (int c = 0; c < f->comps; c++)
            data[n * f->stride + c] = on ? values[n * f->comps + c] : bg[c];
        if (f->leaf_kind == PLM_RT_BITMASKED) {
            int32_t x = origin[0] + (n >> 6), y = origin[1] + ((n >> 3) & 7), z = origin[2] + (n & 7);
            if (on)
                plm_tree_activate(f->tree, f->leaf, x, y, z);
            else
                plm_tree_deactivate(f->tree, f->leaf, x, y, z);
        }
    }
    return ENG_OK;
}

int eng_field_read_block(eng_field *f, const int32_t origin[3], float *values, uint64_t *mask)
{
    eng_host_read(f->ctx);
    if (!f->blocks_ok && aligned_origin(origin)) {
        /* other layouts: the cells of this 8^3 block one by one */
        int any = 0;
        uint64_t m[8] = {0};
        for (int n = 0; n < 512; n++) {
            float v[3];
            int on = plm_tree_read(f->tree, f->fid, origin[0] + (n >> 6), origin[1] + ((n >> 3) & 7),
                                   origin[2] + (n & 7), v) == 1;
            for (int c = 0; c < f->comps; c++)
                values[n * f->comps + c] = on ? v[c] : f->desc.background[c];
            if (on)
                m[n >> 6] |= 1ull << (n & 63);
            any |= on;
        }
        if (mask)
            memcpy(mask, m, sizeof m);
        return any;
    }
    float *data = f->blocks_ok && aligned_origin(origin)
                      ? plm_tree_block(f->tree, f->fid, origin[0], origin[1], origin[2], 0, NULL)
                      : NULL;
    if (data) {
        if (f->stride == f->comps)
            memcpy(values, data, (size_t)f->comps * 512 * sizeof(float));
        else
            for (int n = 0; n < 512; n++)
                for (int c = 0; c < f->comps; c++)
                    values[n * f->comps + c] = data[n * f->stride + c];
        if (mask)
            block_mask(f, origin, mask);
        return 1;
    }
    for (int n = 0; n < 512; n++)
        for (int c = 0; c < f->comps; c++)
            values[n * f->comps + c] = f->desc.background[c];
    if (mask)
        memset(mask, 0, 8 * sizeof *mask);
    return 0;
}

/* ijk with a 0 on an axis the field does not have (a 1-D or 2-D field's) moved to the one
 * coordinate that axis holds, the layout's offset: voxel i of a 1-D field is (i, 0, 0) to the
 * host whatever the offset, as f[i] is to a kernel. Other coordinates there stay, and are
 * outside the field. */
static void host_cell(const eng_field *f, const int32_t ijk[3], int32_t out[3])
{
    int64_t lo[3], hi[3];
    eng_field_index_range(f, lo, hi);
    for (int a = 0; a < 3; a++)
        out[a] = hi[a] - lo[a] == 1 && ijk[a] == 0 ? (int32_t)lo[a] : ijk[a];
}

float eng_field_read(eng_field *f, const int32_t ijk[3], int c)
{
    eng_host_read(f->ctx);
    float v[3];
    int32_t at[3];
    host_cell(f, ijk, at);
    plm_tree_read(f->tree, f->fid, at[0], at[1], at[2], v);
    return v[c];
}

int eng_field_write(eng_context *ctx, eng_field *f, const int32_t ijk[3], const float *value)
{
    int rc = eng_host_write(ctx, f);
    if (rc)
        return rc;
    /* A write out of range or past the budget is dropped and recorded in the tree. */
    int32_t at[3];
    host_cell(f, ijk, at);
    plm_tree_write(f->tree, f->fid, at[0], at[1], at[2], value);
    char msg[512];
    if (plm_tree_check_error(f->tree, msg, sizeof msg) != 0)
        return eng_fail(ctx, strstr(msg, "budget") ? ENG_ENOMEM : ENG_EINVAL,
                        "field '%s': voxel (%d, %d, %d): %s", f->name, ijk[0], ijk[1], ijk[2], msg);
    return ENG_OK;
}

static int cmp_origin(const void *pa, const void *pb)
{
    const int32_t *a = pa, *b = pb;
    for (int k = 2; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

typedef struct collect_ctx {
    int32_t *o;
    uint64_t n, cap;
} collect_ctx;

static int collect_block(void *user, const int32_t origin[3], float *data)
{
    (void)data;
    collect_ctx *c = user;
    if (c->n == c->cap) {
        uint64_t ncap = c->cap ? c->cap * 2 : 256;
        int32_t *g = realloc(c->o, (size_t)ncap * 3 * sizeof *g);
        if (!g)
            return 1;
        c->o = g;
        c->cap = ncap;
    }
    memcpy(c->o + 3 * c->n, origin, 3 * sizeof *origin);
    c->n++;
    return 0;
}

uint64_t eng_field_block_origins(eng_field *f, int32_t *origins, uint64_t cap)
{
    eng_host_read(f->ctx);
    if (!f->blocks_ok) {
        cells_ctx a = {.op = -1, .want_origins = 1};
        uint64_t k = 0;
        if (cells_walk(f, &a) == 0) {
            k = a.n < cap ? a.n : cap;
            if (k)
                memcpy(origins, a.o, (size_t)k * 3 * sizeof *a.o);
        }
        free(a.o);
        return k;
    }
    collect_ctx c = {NULL, 0, 0};
    plm_tree_foreach_block(f->tree, f->fid, collect_block, &c);
    if (c.n > 1)
        qsort(c.o, c.n, 3 * sizeof *c.o, cmp_origin);
    uint64_t k = c.n < cap ? c.n : cap;
    if (k)
        memcpy(origins, c.o, (size_t)k * 3 * sizeof *c.o);
    free(c.o);
    return k;
}

typedef struct fill_ctx {
    const eng_field *f;
    plm_block_shape sh;
} fill_ctx;

static int fill_block(void *user, const int32_t origin[3], float *data)
{
    (void)origin;
    const fill_ctx *c = user;
    for (int32_t n = 0; n < c->sh.voxels; n++)
        for (int k = 0; k < c->f->comps; k++)
            data[(size_t)n * (size_t)c->sh.stride + (size_t)k] = c->f->desc.background[k];
    return 0;
}

int eng_field_shares_tree(const eng_field *f) { return f->group_n > 1; }

void eng_field_fill_background(eng_context *ctx, eng_field *f)
{
    if (eng_host_write(ctx, f) != ENG_OK)
        return;
    fill_ctx c = {f, {{0, 0, 0}, 0, 0, 0, 0}};
    if (plm_tree_block_shape(f->tree, f->fid, &c.sh) == 0)
        plm_tree_foreach_block(f->tree, f->fid, fill_block, &c);
}

void eng_field_clear(eng_context *ctx, eng_field *f)
{
    if (f->group_n > 1) {
        eng_field_fill_background(ctx, f);
        return;
    }
    if (eng_host_write(ctx, f) != ENG_OK)
        return;
    plm_tree_clear(f->tree, f->fid);
    plm_tree_gc(f->tree);
}

typedef struct reduce_ctx {
    eng_field *f;
    int op;
    double acc;
} reduce_ctx;

static int reduce_block(void *user, const int32_t origin[3], float *data)
{
    reduce_ctx *r = user;
    uint64_t m[8];
    block_mask(r->f, origin, m);
    int k = r->f->comps, st = r->f->stride;
    for (int n = 0; n < 512; n++) {
        if (!(m[n >> 6] >> (n & 63) & 1))
            continue;
        if (r->op == ENG_REDUCE_SUM) {
            r->acc += data[n * st];
        } else {
            double m2 = 0;
            for (int c = 0; c < k; c++)
                m2 += (double)data[n * st + c] * data[n * st + c];
            double a = sqrt(m2);
            if (!isnan(r->acc) && (isnan(a) || a > r->acc)) /* a NaN anywhere is the answer */
                r->acc = a;
        }
    }
    return 0;
}

double eng_field_reduce(eng_field *f, int op)
{
    eng_host_read(f->ctx);
    if (!f->blocks_ok) {
        cells_ctx c = {.op = op};
        cells_walk(f, &c);
        return c.acc;
    }
    reduce_ctx r = {f, op, 0};
    plm_tree_foreach_block(f->tree, f->fid, reduce_block, &r);
    return r.acc;
}

void eng_field_set_background(eng_field *f, const float bg[3])
{
    eng_host_write(f->ctx, f);
    for (int c = 0; c < 3; c++)
        f->desc.background[c] = f->comps == 1 ? bg[0] : bg[c];
    plm_tree_set_background(f->tree, f->fid, f->desc.background);
}
