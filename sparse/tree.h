/* Host-side API over one sparse SNode tree: creation from a layout with a byte budget, voxel and
 * block access, list generation, deactivation, garbage collection, statistics and errors.
 *
 * Ownership: plm_tree_create allocates the tree; plm_tree_destroy frees it and every pointer it
 * handed out (block data, runtime, layout). All tree memory comes from one arena of exactly
 * budget_bytes of address space (mmap MAP_NORESERVE: pages cost memory only once touched);
 * nothing grows past it.
 *
 * Threading:
 *  - "access" calls may run on any number of threads at once: plm_tree_read, plm_tree_write,
 *    plm_tree_block (with or without activate), plm_tree_activate, plm_tree_is_active,
 *    plm_tree_block_at and the readers (field, layout, background, runtime).
 *  - "exclusive" calls need the tree to themselves (no other call on it meanwhile):
 *    plm_tree_deactivate, plm_tree_deactivate_block, plm_tree_clear, plm_tree_gc, plm_tree_listgen,
 *    plm_tree_list_blocks, plm_tree_foreach_block, plm_tree_set_background,
 *    plm_tree_check_error, plm_tree_stats, plm_tree_destroy. (plm_tree_listgen and
 *    plm_tree_list_blocks use nthreads threads of their own inside.)
 *  Different trees are independent.
 *
 * Errors: running out of budget never crashes and never kills the process: the failing
 * activation writes into a zeroed sink, the runtime records the error, and plm_tree_check_error
 * reports "memory budget exceeded: needed N bytes, budget M bytes" at the next sync. */
#ifndef PLUME_SPARSE_TREE_H
#define PLUME_SPARSE_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "sparse/layout.h"
#include "sparse/runtime/runtime.h"

typedef struct plm_tree plm_tree;

/* Parses the layout and reserves the arena. Returns 0, or -1 with a message in err (layout
 * errors name their column; a budget too small for the layout's fixed part says so). */
int plm_tree_create(const char *layout, uint64_t budget_bytes, plm_tree **out, char *err,
                    size_t errlen);
/* The same over an arena the caller owns (a GPU's managed memory, say): arena_bytes of
 * zero-filled memory that both the host and the code running the tree can address. The tree
 * never frees it: the caller does, after plm_tree_destroy. */
int plm_tree_create_in(const char *layout, void *arena, uint64_t arena_bytes, plm_tree **out,
                       char *err, size_t errlen);
void plm_tree_destroy(plm_tree *t);

const plm_layout *plm_tree_layout(const plm_tree *t);
/* The runtime state the JIT's kernels receive; owned by the tree. */
plm_runtime *plm_tree_runtime(plm_tree *t);
/* Field id by name, or -1. */
int plm_tree_field(const plm_tree *t, const char *name);
/* Components of the field (1 or 3), or 0 for a bad id. */
int plm_tree_field_components(const plm_tree *t, int field);

/* Background value of a field (components floats): what reads of inactive voxels return and what
 * cells activated afterwards start with. Default 0. Set it before writing: cells already active
 * keep their values, except on an all-dense layout, where every voxel is active and all take
 * the new background. Returns -1 for a bad field id. */
int plm_tree_set_background(plm_tree *t, int field, const float *value);
void plm_tree_background(const plm_tree *t, int field, float *value);

/* ---- voxels (x, y, z are index coordinates, offset included) ---- */

/* Reads the field at a voxel into value (components floats). Returns 1 when the voxel is
 * active, 0 when it is not (value = background; nothing is allocated), -1 for a bad field. */
int plm_tree_read(plm_tree *t, int field, int32_t x, int32_t y, int32_t z, float *value);
/* Writes a voxel, activating what is needed. Returns 0, or -1 for a bad field. A write outside
 * the layout's index range or past the budget is dropped and reported by plm_tree_check_error. */
int plm_tree_write(plm_tree *t, int field, int32_t x, int32_t y, int32_t z, const float *value);
/* Activity of the cell of SNode `snode` holding voxel (x, y, z). */
int plm_tree_is_active(plm_tree *t, int snode, int32_t x, int32_t y, int32_t z);
void plm_tree_activate(plm_tree *t, int snode, int32_t x, int32_t y, int32_t z);
/* Deactivates that cell (pointer: frees its subtree; bitmasked: resets it; dynamic: truncates
 * the list there; dense: nothing). */
void plm_tree_deactivate(plm_tree *t, int snode, int32_t x, int32_t y, int32_t z);

/* ---- blocks: the leaf containers of a field (for the default layout, 8^3 voxels) ---- */

typedef struct plm_block_shape {
    int32_t dims[3];      /* voxels per axis */
    int32_t voxels;       /* dims[0] * dims[1] * dims[2] */
    int32_t components;   /* floats per voxel value */
    int32_t stride;       /* floats from one voxel's value to the next (components when SoA) */
    int32_t snode;        /* the SNode whose cells are the blocks (the leaf's parent) */
} plm_block_shape;

/* Fails (-1) when the field's leaf is not dense or bitmasked, i.e. has no blocks. */
int plm_tree_block_shape(const plm_tree *t, int field, plm_block_shape *shape);
/* The field's values in the block holding voxel (x, y, z): voxel (x, y, z) of the block is at
 * data[((x * dims[1] + y) * dims[2] + z) * stride] (for 8^3 f32: VDB's leaf order, 512
 * contiguous floats). That formula holds for leaves with axes ijk; other axis orders store
 * voxels in their own order (layout.h). With activate, the block is created if needed (a new block holds the
 * background); without, NULL for an inactive block. origin (may be NULL) receives the index of
 * the block's first voxel. The pointer stays valid until the block is deactivated. */
float *plm_tree_block(plm_tree *t, int field, int32_t x, int32_t y, int32_t z, int activate,
                      int32_t origin[3]);
/* Deactivates the block holding voxel (x, y, z) when the node above the leaf is sparse; with a
 * dense node or the root above, nothing happens (use plm_tree_clear). */
void plm_tree_deactivate_block(plm_tree *t, int field, int32_t x, int32_t y, int32_t z);
/* Every voxel of field (and of the fields placed in its chain) inactive, its blocks handed back
 * (plm_tree_gc reuses them); on an all-dense layout every voxel holds the background. Later
 * activations start from the background whatever the layout. */
void plm_tree_clear(plm_tree *t, int field);
/* Lists the field's active blocks (list generation with nthreads threads); returns their number
 * or -1 on a runtime error. plm_tree_block_at then reads entry i (0 <= i < number); the list is
 * valid until the next exclusive call. */
int64_t plm_tree_list_blocks(plm_tree *t, int field, int nthreads);
int plm_tree_block_at(plm_tree *t, int field, int64_t i, int32_t origin[3], float **data);
/* Calls fn for each active block, in the order a serial list generation gives; stops early
 * when fn returns nonzero and returns that value; -1 when the field has no blocks. Needs no
 * memory (it walks the containers, no list: sparse/walk.h), so it works with the budget spent,
 * which is when a host clears fields to recover. fn must not activate or deactivate. */
typedef int (*plm_block_fn)(void *user, const int32_t origin[3], float *data);
int plm_tree_foreach_block(plm_tree *t, int field, plm_block_fn fn, void *user);
/* The same walk over the containers of the field's leaf of any kind (a pointer or dynamic leaf
 * included, whose cells are allocated one by one): fn gets each container's first voxel and a
 * NULL data pointer; dims receives the voxels a container spans per axis. Its active cells are
 * those plm_tree_read finds active. */
int plm_tree_foreach_container(plm_tree *t, int field, plm_block_fn fn, void *user, int32_t dims[3]);

/* ---- lists, maintenance, statistics, errors ---- */

/* Generates the lists from the root down to snode with nthreads threads; returns the number of
 * active cells of snode, or -1 on a runtime error (see plm_tree_check_error). */
int64_t plm_tree_listgen(plm_tree *t, int snode, int nthreads);
/* Prunes empty interior cells, then zero-fills every recycled block and returns it to its
 * allocator's free list: later activations reuse that memory instead of growing. */
void plm_tree_gc(plm_tree *t);

typedef struct plm_tree_snode_stats {
    int kind;
    int64_t live_cells;    /* pointer: allocated cells; dynamic: allocated chunks; else 0 */
    int64_t carved_cells;  /* cells ever carved from the allocator's chunks */
    int64_t data_chunks;   /* chunks the allocator holds */
    int64_t free_cells;    /* waiting in the free list */
    int64_t recycled_cells;/* deactivated, waiting for gc */
    uint64_t chunk_bytes;
    int64_t list_size;     /* from the last list generation */
} plm_tree_snode_stats;

typedef struct plm_tree_stats {
    uint64_t bytes_in_use;     /* arena bytes handed out (runtime, containers, chunks, lists) */
    uint64_t budget;
    uint64_t leaf_value_bytes; /* placed values in live leaf blocks under pointer cells */
    int num_snodes;
    plm_tree_snode_stats snode[PLM_RT_MAX_SNODES];
} plm_tree_stats;

void plm_tree_stats_get(plm_tree *t, plm_tree_stats *s);

/* Returns 0 when no error is pending; otherwise writes the message into msg, clears the error
 * (and the sinks) and returns the plm_rt_error_code. With an error flag set, a call that finds
 * the flag 0 returns 0 having read nothing but the flag. */
int plm_tree_check_error(plm_tree *t, char *msg, size_t len);

/* Gives the tree an error flag (see plm_runtime.error_flag): a zeroed word the caller owns,
 * outside the arena, addressable wherever the tree's code runs (pinned host memory for a tree
 * on a GPU), that must outlive the tree. An error already pending raises it. Exclusive. */
void plm_tree_set_error_flag(plm_tree *t, uint32_t *flag);

#endif
