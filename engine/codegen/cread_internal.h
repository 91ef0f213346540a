/* The cached reads' shared state (cached_read.c) and what its halos (cread_halo.c) use of it.
 * Private to those two files: the rest of the code generator goes through cg_internal.h.
 * Everything here belongs to the cg_fn being emitted and is used on its thread only. */
#ifndef PLUME_ENGINE_CODEGEN_CREAD_INTERNAL_H
#define PLUME_ENGINE_CODEGEN_CREAD_INTERNAL_H

#include "engine/codegen/cg_internal.h"

/* The widest spread of a group's deltas along one axis whose table terms are made once. */
#define CREAD_TAB_SPAN 4

typedef struct cread_site {
    const ir_stmt *child;                      /* the leaf container (sn_child of the leaf) */
    const ir_stmt *chain[3 * IR_MAX_LEVELS];   /* sn_root ... the leaf's sn_child */
    int nchain;
    const ir_stmt *idx;                        /* the sn_index above it: the voxel */
    const ir_stmt *base[IR_MAX_DIM];           /* idx's operands less a constant added */
    int32_t delta[IR_MAX_DIM];                 /* the constant: idx = base + delta */
    int group;                                 /* cread_group + 1, or 0 */
    int direct;   /* every user is a read through a leaf sn_index on idx's operands: its
                   * address is made at the read (cg_cread_field_ptr), the container and the
                   * leaf index only on the path that needs them */
    LLVMValueRef key[IR_MAX_DIM], cont;        /* allocas, made at first emission */
    /* Direct reads: the voxel's leaf container (NULL where inactive or out of range) and cell
     * index from the site's first direct read, and the IR block of that read. Reads of
     * other fields placed in the same tree share the site (one sn_child): the fields of a
     * fused task's samples at one point. A later read that block holds takes the place as it
     * is and only adds its field's offset: no second branch on where the voxel lies. Like the
     * group's `last`, it is forgotten once the task activates anything of the field
     * (cg_cread_activated): a block that was NULL may hold what the task just wrote
     * (engine_kernels_sparse, test_read_after_write). */
    LLVMValueRef place_c, place_cell;
    const ir_block *place_blk;
    int place_bg; /* place_c is never NULL: the background block where inactive (table_bg) */
} cread_site;

/* Reads of one slot at a common base plus constants (the 8 corners of a trilinear sample,
 * a stencil at a computed point): one cache of the base voxel's leaf block serves every
 * member whose own voxel lies in that block, which is most of them; a member whose voxel
 * crosses into the next block falls back to its own cache. */
typedef struct cread_group {
    int slot;
    const ir_stmt *base[IR_MAX_DIM];
    int members;
    LLVMValueRef key[IR_MAX_DIM], cont;        /* allocas, made at first emission */
    /* The container from the group's last lookup and the IR block of the read that made it:
     * a later member whose read that block holds (at any depth) is dominated by the lookup
     * and takes its result as it is, since the base voxel and the tree are the same. */
    LLVMValueRef last;
    const ir_block *last_blk;
    /* Made with `last`: whether every member's voxel lies in the base voxel's block, which
     * is active (interior; NULL when the layout gives no such test), and the base voxel's
     * cell index there. Then a member's cell index is cell + a constant. */
    LLVMValueRef interior, cell;
    int32_t dmin[IR_MAX_DIM], dmax[IR_MAX_DIM]; /* members' deltas, per axis */
    int direct;                                 /* some member is direct: interior is used */
    /* Direct reads through the slot's table of the blocks around the list entry (tab > 0;
     * 0 undecided, < 0 not): tab_ok says every member lies in one of those blocks, u is the
     * base voxel less the entry's first voxel; both made once where that dominates, like
     * `last`. */
    int tab;
    LLVMValueRef tab_ok, u[IR_MAX_DIM];
    const ir_block *tab_blk;
    /* Made with tab_ok, per axis and member delta d (dmin + j): the member's term of the
     * table index and of its cell index. The 8 corners of a trilinear sample then share 6
     * shift-and-mask pairs instead of making 24 on their own paths, where no one dominates the
     * next and so nothing was shared. NULL where the deltas span more than CREAD_TAB_SPAN. */
    LLVMValueRef tab_idx[IR_MAX_DIM][CREAD_TAB_SPAN], tab_cell[IR_MAX_DIM][CREAD_TAB_SPAN];
    /* The same for rows in vectors (cg_cread_row_ptr), as row_w-lane vectors, made at the
     * group's first member in a row body and kept for members that row_blk holds: row_ok
     * says a lane's members all lie among the table's blocks, row_all that every lane's do.
     * The 8 corners of a sample then share one range test and one branch condition. */
    LLVMValueRef row_ok, row_all, row_u[IR_MAX_DIM], row_u64[IR_MAX_DIM];
    int row_wide; /* deltas span more than 1 on some axis: each member tests its own range */
    LLVMValueRef row_idx[IR_MAX_DIM][CREAD_TAB_SPAN], row_cell[IR_MAX_DIM][CREAD_TAB_SPAN];
    const ir_block *row_blk;
    unsigned row_w;
    /* With a halo (cread_halo.c): whether every lane's members lie in it, and the base
     * voxel's byte offset there, as row_w-lane vectors made with row_u. */
    LLVMValueRef row_hall, row_hbase;
} cread_group;

struct cg_cread {
    cread_site *site;
    int nsite, cap;
    cread_group *group;
    int ngroup;
    cg_smap which; /* leaf sn_child -> site + 1 */
    cg_smap skip;  /* chain statements only sites use: not emitted */
    cg_smap leaf_idx; /* leaf sn_index of a direct site's reads -> site + 1: not emitted */
    cg_smap stored;   /* direct reads' sn_field_ptrs with a user other than a global_load: their
                       * address must stay NULL where the block is inactive (a store skips it) */
    cg_smap bg_read;  /* sn_field_ptrs cg_cread_field_ptr gave a never-NULL address */
    uint8_t activates[64];
    /* per slot, made at first use */
    LLVMValueRef helper[64];
    LLVMValueRef enabled[64], null_ok[64], shift[64][IR_MAX_DIM];
    /* struct_for on the CPU: the list entry's first voxel (set per entry by cg_cread_entry),
     * and per slot read through a table the alloca of its 3^dim blocks around the entry */
    LLVMValueRef ent[IR_MAX_DIM];
    int have_ent;
    LLVMValueRef table[64];
    /* The slot's table holds the leaf's block of background values in place of NULL (an
     * inactive block or one out of range), so that a read from the table needs no select: only
     * where no direct read of the task is `stored`, since a store must see NULL there, and a
     * site's place (which reads of other fields take as it is) may come from the table. */
    uint8_t table_bg[64];
    /* Halos (cread_halo.c): per slot 0 undecided, 1 its sampled row reads may come from
     * halo_buf, the blocks around the entry copied into one dense box, -1 not; its elements'
     * stride and the offset of the slot's first element in a block, in bytes. halo_ok, made
     * per entry: no slot with a halo is bound to a field the task changes. */
    signed char halo[64];
    LLVMValueRef halo_buf[64];
    long long halo_stride[64], halo_first[64];
    LLVMValueRef halo_ok;
    cg_smap halo_reads; /* row reads whose value is an offset in a halo -> halo_read index + 1 */
    struct cread_halo_read { LLVMValueRef cond, buf; } *halo_read;
    int nhalo_read, halo_read_cap;
    int walk_all; /* the table's way for a row that left its halo: every lane walks */
};

typedef struct cg_cr_leaf_geom {
    int64_t off[IR_MAX_DIM];                        /* coord_offset */
    unsigned ext[IR_MAX_DIM], bits[IR_MAX_DIM], ish[IR_MAX_DIM];
} cg_cr_leaf_geom;

static inline LLVMValueRef cg_cr_c32(cg_fn *f, long long v)
{
    return LLVMConstInt(f->t_i32, (unsigned long long)v, 1);
}

/* cached_read.c */
/* The leaf's geometry when it is known while compiling (0), else -1. */
int cg_cr_leaf_geometry(cg_fn *f, int slot, cg_cr_leaf_geom *lg);
/* Whether group g's base comes from loaded values (a sample's point, not a regular stencil). */
int cg_cr_sampled(const cread_group *g, int dim);
int cg_cr_encloses(const ir_block *blk, const ir_stmt *s);
void cg_cr_likely_first(cg_fn *f, LLVMValueRef br);
/* W-lane helpers of rows in vectors: a splat; ok and lo <= u < hi lane by lane (u: i64);
 * whether all lanes of ok are set; a masked gather (suffix: the intrinsic's type suffix). */
LLVMValueRef cg_cr_splat(cg_fn *f, LLVMValueRef v, unsigned W);
LLVMValueRef cg_cr_near(cg_fn *f, LLVMValueRef ok, LLVMValueRef u, long long lo, long long hi,
                        unsigned W);
LLVMValueRef cg_cr_all_of(cg_fn *f, LLVMValueRef ok, unsigned W);
LLVMValueRef cg_cr_gather(cg_fn *f, LLVMTypeRef vt, LLVMValueRef ptrs, unsigned align,
                          LLVMValueRef mask, LLVMValueRef pass, const char *suffix);

/* cread_halo.c */
/* Whether direct row read s of group slot `slot` takes the halo's way in this entry. */
int cg_cr_halo_serves(cg_fn *f, int slot, const ir_stmt *s);
/* Group g's halo terms for rows of W lanes (row_hall, row_hbase), after its row_u terms. */
void cg_cr_halo_terms(cg_fn *f, cread_group *g, unsigned W);
/* Row read s's byte offsets in its halo (W lanes of i32), noted for cg_cr_halo_cond. */
LLVMValueRef cg_cr_halo_offset(cg_fn *f, cread_site *site, cread_group *g, const ir_stmt *s,
                               unsigned W);
/* s is emitted again: forget that its value was a halo offset (0, or -1 out of memory). */
int cg_cr_halo_forget(cg_fn *f, const ir_stmt *s);
/* For the load through row read s: NULL when its value is an address, else the condition
 * (every lane in the halo) under which cg_cr_halo_read gives its W values from the offsets. */
LLVMValueRef cg_cr_halo_cond(cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_cr_halo_read(cg_fn *f, const ir_stmt *s, LLVMValueRef off, unsigned W);

#endif
