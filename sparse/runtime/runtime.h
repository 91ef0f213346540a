/* The sparse runtime: SNode containers, node allocators, list generation, memory accounting.
 *
 * This C is written once and built three ways: natively into plume_sparse (unit tests, host-side
 * upload and download), and by clang-16 to LLVM bitcode for x86_64 and for nvptx64, which the JIT
 * links into every kernel module (plume_sparse_bitcode, sparse/bitcode.h). So the runtime is
 * freestanding: no libc, no malloc, no static or global state. Everything lives in plain structs
 * inside one arena and is reached from a single plm_runtime pointer, which sits at the start of
 * that arena.
 *
 * Entry points are plain C functions named plm_rt_*; PLM_RT_ENTRY_POINTS lists them (the bitcode
 * test checks that each is defined in the bitcode). Naming and ids:
 *  - an SNode is named by its id (index into rt->snodes); id 0 is the root;
 *  - a field by its id (index into rt->fields);
 *  - a "container" is the memory of one instance of an SNode (all its cells); a "cell" of an SNode
 *    holds the containers of its children (or, for a leaf, the placed field values);
 *  - coordinates passed as x, y, z are the user's index coordinates, offset included (a field
 *    whose layout says offset(-2048,...) accepts x = -2048).
 *
 * Memory: the host reserves the arena (mmap MAP_NORESERVE on the CPU, a device allocation on the
 * GPU), zero-filled, and calls plm_rt_init. The runtime bump-allocates chunks from it with an
 * atomic cursor; bytes in use = that cursor. When an allocation would pass the budget (the arena
 * size), the runtime records PLM_RT_ERR_BUDGET once (first error wins, atomically) and hands out
 * a zeroed per-SNode sink block instead, so running code neither crashes nor writes out of
 * bounds; the host reads the error at its next sync (plm_rt_error / plm_rt_format_error) and
 * clears it (plm_rt_clear_error). After an error, every further allocation gets a sink until the
 * error is cleared: the tree's structure never points into a sink.
 *
 * Threading (same rules on the GPU, where "thread" is a lane):
 *  - activate / lookup_element(activate=1) / access / field_ptr / dynamic append / node allocation:
 *    any number of threads at once. Reads take a lock-free path; a missing pointer cell is created
 *    under a per-cell spin lock (double-checked), and on the GPU only one lane per warp and cell
 *    takes the lock while the others wait at a warp barrier.
 *  - listgen_item: any number of threads at once for one SNode (atomic append to its list), as
 *    long as nothing activates or deactivates cells of that SNode meanwhile.
 *  - deactivate: concurrent calls on different cells are safe; a deactivation must not race with
 *    any access to the same cell or its subtree (the engine orders such tasks).
 *  - gc_begin, prune, list_clear, clear_error, init: one thread, with nothing else running on the
 *    tree. gc_item: any number of threads after gc_begin.
 */
#ifndef PLUME_SPARSE_RUNTIME_H
#define PLUME_SPARSE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#define PLM_RT_MAGIC 0x504c4d52544d3031ull /* "PLMRTM01" */
#define PLM_RT_MAX_SNODES 64
#define PLM_RT_MAX_FIELDS 64
#define PLM_RT_MAX_DEPTH 16
/* A parallel list-generation work item covers at most this many cells of one container. */
#define PLM_RT_LISTGEN_CHUNK 4096

typedef enum plm_rt_kind {
    PLM_RT_ROOT = 0,
    PLM_RT_DENSE = 1,
    PLM_RT_POINTER = 2,
    PLM_RT_BITMASKED = 3,
    PLM_RT_DYNAMIC = 4
} plm_rt_kind;

typedef enum plm_rt_error_code {
    PLM_RT_OK = 0,
    PLM_RT_ERR_BUDGET = 1,  /* an allocation would have passed the byte budget */
    PLM_RT_ERR_RANGE = 2,   /* a write (or activation) outside the index range of a field */
    PLM_RT_ERR_DYNAMIC = 3  /* append to a full dynamic SNode */
} plm_rt_error_code;

/* A growable list of fixed-size elements in chunks taken from the arena on demand; indices are
 * stable, chunks are never moved or returned (clearing keeps them for reuse). */
typedef struct plm_rt_list {
    uint64_t elem_bytes;
    uint32_t log2_chunk_elems;
    uint32_t max_chunks;
    int32_t count;    /* elements reserved so far; atomic */
    uint32_t lock;    /* guards chunk creation */
    uint8_t **chunks; /* max_chunks slots in the arena; NULL until touched */
} plm_rt_list;

/* Per-SNode node allocator (pointer and dynamic SNodes): cells of cell_alloc_bytes each, carved
 * from data chunks; deactivated cells go to the recycled list; gc zero-fills them and moves them
 * to the free list, from which allocation takes first. free and recycled hold cell pointers. */
typedef struct plm_rt_allocator {
    plm_rt_list data;     /* elements are cells */
    plm_rt_list free;     /* elements are uint8_t* */
    plm_rt_list recycled; /* elements are uint8_t* */
    int32_t free_used;    /* cursor into free; atomic */
    int32_t gc_pending;   /* recycled count captured by gc_begin */
    int64_t live;         /* cells handed out and not recycled; atomic */
    uint8_t *sink;        /* zeroed cell handed out when the budget is exceeded */
} plm_rt_allocator;

typedef struct plm_rt_snode {
    /* Geometry: filled by the host (sparse/layout.c), copied by plm_rt_init. */
    int32_t id, kind, parent, depth;
    int32_t first_child, next_sibling; /* -1 when none */
    int32_t num_axes;
    int32_t axis_order[3];  /* axes of this node, first = slowest varying in the cell index */
    uint32_t axis_bits[3];  /* log2 of the size along x, y, z (0 where the axis is absent) */
    uint32_t axis_shift[3]; /* bits of the index along x, y, z that lie below this level */
    uint32_t index_shift[3];/* where axis a's cell coordinate sits inside the linear cell index */
    uint32_t extent_bits[3];/* total bits of the chain along x, y, z: index range is 2^bits */
    int32_t coord_offset[3];/* the chain's index offset (user index = offset + internal index) */
    int32_t num_cells;      /* capacity of one container */
    int32_t is_leaf;        /* fields are placed in this node's cells */
    int32_t soa;            /* leaf: fields stored as one array each (else one struct per cell) */
    int32_t inline_data;    /* this node's container embeds placed values (no pointer between) */
    int32_t has_sparse;     /* this node or a descendant is pointer, bitmasked or dynamic */
    int32_t dyn_log2_chunk; /* dynamic: cells per chunk (log2) */
    uint64_t cell_bytes;    /* bytes of one cell's content */
    uint64_t header_bytes;  /* offset of the cell array (pointer: of the pointer array) */
    uint64_t container_bytes;
    uint64_t offset_in_parent; /* where this node's container sits inside its parent's cell */
    uint64_t alloc_bytes;   /* pointer: cell_bytes; dynamic: 8 + chunk cells * cell_bytes */
    uint64_t leaf_data_bytes; /* leaf dense/bitmasked: bytes of placed values in a container */
    /* State: set up by plm_rt_init. */
    plm_rt_allocator alloc;
    plm_rt_list list; /* active cells (plm_rt_elem) from the last list generation */
    /* Dense leaf: one container holding the placed fields' background values in every cell.
     * Generated reads use it in place of an inactive block, so a read's address is the same
     * arithmetic wherever the voxel lies (no per-field test; neighbouring fields' loads stay
     * adjacent). Read-only for tasks; plm_rt_refill_background keeps it in step with the
     * fields' backgrounds. NULL for other kinds. */
    uint8_t *bg_container;
} plm_rt_snode;

typedef struct plm_rt_field {
    int32_t snode;      /* leaf SNode whose cells hold this field */
    int32_t components; /* 1 (f32) or 3 (vec3 of f32) */
    /* Value of cell i of a dense/bitmasked leaf container c: c + header + offset + i * stride.
     * For pointer/dynamic leaves: cell + offset. */
    uint64_t offset;
    uint64_t stride;
    float background[4]; /* value of inactive voxels (components used) */
} plm_rt_field;

/* The host fills this (plm_layout_parse does) and hands it to plm_rt_init. */
typedef struct plm_rt_config {
    int32_t num_snodes;
    int32_t num_fields;
    plm_rt_snode snodes[PLM_RT_MAX_SNODES];
    plm_rt_field fields[PLM_RT_MAX_FIELDS];
} plm_rt_config;

/* One active cell in a generated list. */
typedef struct plm_rt_elem {
    uint8_t *cell;    /* the cell's content: its children's containers or its placed values. For a
                         SoA leaf, the start of the container's value arrays (use index). */
    int32_t coord[3]; /* user index of the cell's first voxel (offset included) */
    int32_t index;    /* cell index inside its container */
} plm_rt_elem;

typedef struct plm_runtime {
    uint64_t magic;
    uint8_t *arena;
    uint64_t budget;       /* arena bytes */
    uint64_t used;         /* bump cursor = bytes in use; atomic */
    uint32_t error;        /* plm_rt_error_code; first error wins */
    int32_t error_snode;
    uint64_t error_needed; /* budget error: bytes in use the failed allocation would have made */
    int64_t error_count;   /* failed operations since the last clear; atomic */
    int32_t num_snodes;
    int32_t num_fields;
    uint8_t *root;         /* the root container (one cell) */
    uint8_t *value_sink;   /* 64 zeroed bytes: target of failed field writes */
    plm_rt_snode snodes[PLM_RT_MAX_SNODES];
    plm_rt_field fields[PLM_RT_MAX_FIELDS];
    /* NULL, or a word outside the arena that the first error recorded after a clear raises
     * (to 1) and plm_rt_clear_error zeroes: up exactly while an error is pending. Where the
     * arena's pages live on a GPU, the host polls this word after each batch
     * (plm_tree_set_error_flag): reading `error` itself would move the page that every kernel
     * uses to the host, and every kernel after would fault it back. */
    uint32_t *error_flag;
    /* NULL, or a word outside the arena shared by every tree of one engine context (on the
     * CPU): the bytes in use over all of them, each tree adding what its cursor advances. An
     * allocation that takes it past shared_budget fails as one past `budget` does, so one budget
     * holds for the whole context however many trees it has. */
    uint64_t *shared_used;
    uint64_t shared_budget;
    uint64_t error_budget; /* budget error: the budget it passed (budget or shared_budget) */
} plm_runtime;

/* ---- setup, memory, errors ---- */

/* Lays the runtime out at the start of the zero-filled arena. Returns NULL when the budget cannot
 * hold the fixed part (runtime struct, root container, sinks, chunk tables); *needed then holds
 * the bytes required. */
plm_runtime *plm_rt_init(void *arena, uint64_t arena_bytes, const plm_rt_config *cfg,
                         uint64_t *needed);
/* Bump allocation from the arena, zeroed; NULL (and PLM_RT_ERR_BUDGET recorded) past the budget
 * (the arena's, or the context's shared one). align must be a power of two. */
void *plm_rt_arena_alloc(plm_runtime *rt, uint64_t bytes, uint64_t align, int32_t snode);
uint64_t plm_rt_bytes_in_use(const plm_runtime *rt);
uint32_t plm_rt_error(const plm_runtime *rt);
void plm_rt_set_error(plm_runtime *rt, uint32_t code, int32_t snode, uint64_t needed);
/* Writes field's background into every cell of its leaf's bg_container (after the host
 * changed fields[field].background). Host only, with no task running. */
void plm_rt_refill_background(plm_runtime *rt, int32_t field);
/* Writes field's background into its cells that are not active when its chain holds no pointer
 * or dynamic node (the tree's memory holds all of them from the start, so no allocation fills
 * them later; in an all-dense chain that is every cell); returns 1 then, 0 for other chains
 * (their new cells are filled when allocated). Host only, with no task running. */
int32_t plm_rt_fill_field_inline(plm_runtime *rt, int32_t field);
/* Deactivates every cell of the chain holding field (below the root) and hands what it allocated
 * back to the allocators (plm_rt_gc reuses it): other fields placed in the same chain lose their
 * cells too. In an all-dense chain nothing can be deactivated: field's cells take its
 * background, other fields' keep their values. Host only, with no task running. */
void plm_rt_clear_chain(plm_runtime *rt, int32_t field);
/* Clears the error and re-zeroes the sinks (running code may have written into them). */
void plm_rt_clear_error(plm_runtime *rt);
/* Writes a NUL-terminated message for the current error into buf (at most len bytes); returns
 * the error code. E.g. "memory budget exceeded: needed 5242880 bytes, budget 4194304 bytes". */
uint32_t plm_rt_format_error(const plm_runtime *rt, char *buf, uint64_t len);

/* ---- lists ---- */
/* Reserves n consecutive elements; returns the first index (-1 past 2^31 elements). A chunk the
 * budget cannot pay for is left missing (error recorded): write through plm_rt_list_slot. */
int32_t plm_rt_list_reserve(plm_runtime *rt, plm_rt_list *l, int32_t n, int32_t snode);
/* Element i, whose chunk must exist. */
uint8_t *plm_rt_list_elem(const plm_rt_list *l, int32_t i);
/* Element i, or NULL when its chunk is missing. */
uint8_t *plm_rt_list_slot(const plm_rt_list *l, int32_t i);
/* How many leading elements can be read: the count, cut at the first missing chunk. */
int32_t plm_rt_list_readable(const plm_rt_list *l);

/* ---- node allocator ---- */
uint8_t *plm_rt_node_alloc(plm_runtime *rt, int32_t snode);
void plm_rt_node_recycle(plm_runtime *rt, int32_t snode, uint8_t *cell);
/* Garbage collection in two steps so a GPU can run the second in parallel: gc_begin (one thread)
 * compacts the unused tail of the free list and returns how many recycled cells are pending;
 * gc_item(i) for each i below that zero-fills one recycled cell and appends it to the free list.
 * plm_rt_gc does both serially. */
int32_t plm_rt_gc_begin(plm_runtime *rt, int32_t snode);
void plm_rt_gc_item(plm_runtime *rt, int32_t snode, int32_t i);
void plm_rt_gc(plm_runtime *rt, int32_t snode);
/* Deactivates pointer cells whose content is a sparse container with nothing active in it, from
 * the leaves up (one thread). gc afterwards returns their memory. */
void plm_rt_prune(plm_runtime *rt);

/* ---- per SNode type: container-level operations (i = cell index in the container) ---- */
#define PLM_RT_KIND_OPS(K)                                                                   \
    int32_t plm_rt_##K##_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c);      \
    void plm_rt_##K##_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i);      \
    void plm_rt_##K##_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i);    \
    int32_t plm_rt_##K##_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i);  \
    uint8_t *plm_rt_##K##_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i, \
                                         int32_t activate);
PLM_RT_KIND_OPS(dense)
PLM_RT_KIND_OPS(pointer)
PLM_RT_KIND_OPS(bitmasked)
PLM_RT_KIND_OPS(dynamic)
#undef PLM_RT_KIND_OPS
/* Appends one cell to a dynamic container; returns its content (a sink on failure) and stores its
 * index in *index (-1 on failure). */
uint8_t *plm_rt_dynamic_append(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t *index);
int32_t plm_rt_dynamic_length(plm_runtime *rt, int32_t snode, uint8_t *c);

/* Dispatch on the SNode's kind. lookup_element returns the cell's content, NULL for an inactive
 * cell when activate is 0, never NULL when activate is 1 (a sink on failure). For a SoA leaf it
 * returns the start of the value arrays (use plm_rt_field_ptr). get_num_elements is the capacity,
 * the number of cells of a container (dynamic: its capacity, not its length). */
int32_t plm_rt_get_num_elements(plm_runtime *rt, int32_t snode, uint8_t *c);
void plm_rt_activate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i);
void plm_rt_deactivate(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i);
int32_t plm_rt_is_active(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i);
uint8_t *plm_rt_lookup_element(plm_runtime *rt, int32_t snode, uint8_t *c, int32_t i,
                               int32_t activate);

/* ---- coordinates and access paths ---- */
/* Cell index at this SNode's level of the voxel (x, y, z); -1 outside the index range. */
int32_t plm_rt_cell_index(const plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z);
/* The container of `snode` holding voxel (x, y, z), walking from the root and activating the
 * cells on the way when activate is set. NULL when a cell on the way is inactive (reads) or the
 * voxel is outside the range; with activate, a sink on failure (error recorded). */
uint8_t *plm_rt_container_of(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z,
                             int32_t activate);
/* Address of field `field` of cell i of leaf container c; NULL when inactive and !activate. */
uint8_t *plm_rt_field_ptr(plm_runtime *rt, int32_t field, uint8_t *c, int32_t i, int32_t activate);
/* Address of field `field` at voxel (x, y, z): the whole path. Reads (activate = 0) of inactive
 * voxels get NULL: the caller uses the field's background. Writes (activate = 1) activate and
 * never get NULL (value_sink on failure, error recorded). */
uint8_t *plm_rt_access(plm_runtime *rt, int32_t field, int32_t x, int32_t y, int32_t z,
                       int32_t activate);
int32_t plm_rt_is_active_at(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z);
void plm_rt_activate_at(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z);
void plm_rt_deactivate_at(plm_runtime *rt, int32_t snode, int32_t x, int32_t y, int32_t z);

/* ---- list generation ---- */
/* list(root) is one element: the root container. list(S) = the active cells of S found in the
 * containers listed by list(parent(S)). Work is split into items of at most
 * PLM_RT_LISTGEN_CHUNK cells of one container; items of one SNode may run in parallel. */
void plm_rt_list_clear(plm_runtime *rt, int32_t snode);
int32_t plm_rt_list_size(plm_runtime *rt, int32_t snode);
plm_rt_elem *plm_rt_list_get(plm_runtime *rt, int32_t snode, int32_t i);
void plm_rt_listgen_root(plm_runtime *rt);
int32_t plm_rt_listgen_num_items(plm_runtime *rt, int32_t snode);
void plm_rt_listgen_item(plm_runtime *rt, int32_t snode, int32_t item);
/* The same work one cell at a time, for wide machines (a GPU thread per cell): cells are
 * numbered entry * num_cells + i over the parent's list, and plm_rt_listgen_cell appends cell
 * idx when it is active (one atomic reservation each; the list's order is then any). Not for
 * dynamic SNodes (their cells are reached through a chunk chain): use the items there, and
 * plm_rt_listgen_cell does nothing for them. */
int64_t plm_rt_listgen_num_cells(plm_runtime *rt, int32_t snode);
void plm_rt_listgen_cell(plm_runtime *rt, int32_t snode, int64_t idx);
/* Clears list(snode) and fills it from list(parent) on one thread. */
void plm_rt_listgen(plm_runtime *rt, int32_t snode);

/* Every entry point, for tools and tests: X(name). */
#define PLM_RT_ENTRY_POINTS(X)                                                               \
    X(plm_rt_init) X(plm_rt_arena_alloc) X(plm_rt_bytes_in_use) X(plm_rt_error)              \
    X(plm_rt_set_error) X(plm_rt_clear_error) X(plm_rt_format_error)                         \
    X(plm_rt_list_reserve) X(plm_rt_list_elem) X(plm_rt_list_slot) X(plm_rt_list_readable)                                               \
    X(plm_rt_node_alloc) X(plm_rt_node_recycle) X(plm_rt_gc_begin) X(plm_rt_gc_item)         \
    X(plm_rt_gc) X(plm_rt_prune)                                                             \
    X(plm_rt_dense_get_num_elements) X(plm_rt_dense_activate) X(plm_rt_dense_deactivate)     \
    X(plm_rt_dense_is_active) X(plm_rt_dense_lookup_element)                                 \
    X(plm_rt_pointer_get_num_elements) X(plm_rt_pointer_activate)                            \
    X(plm_rt_pointer_deactivate) X(plm_rt_pointer_is_active) X(plm_rt_pointer_lookup_element)\
    X(plm_rt_bitmasked_get_num_elements) X(plm_rt_bitmasked_activate)                        \
    X(plm_rt_bitmasked_deactivate) X(plm_rt_bitmasked_is_active)                             \
    X(plm_rt_bitmasked_lookup_element)                                                       \
    X(plm_rt_dynamic_get_num_elements) X(plm_rt_dynamic_activate)                            \
    X(plm_rt_dynamic_deactivate) X(plm_rt_dynamic_is_active) X(plm_rt_dynamic_lookup_element)\
    X(plm_rt_dynamic_append) X(plm_rt_dynamic_length)                                        \
    X(plm_rt_get_num_elements) X(plm_rt_activate) X(plm_rt_deactivate) X(plm_rt_is_active)   \
    X(plm_rt_lookup_element) X(plm_rt_cell_index) X(plm_rt_container_of) X(plm_rt_field_ptr) \
    X(plm_rt_access) X(plm_rt_is_active_at) X(plm_rt_activate_at) X(plm_rt_deactivate_at)    \
    X(plm_rt_list_clear) X(plm_rt_list_size) X(plm_rt_list_get) X(plm_rt_listgen_root)       \
    X(plm_rt_listgen_num_items) X(plm_rt_listgen_item) X(plm_rt_listgen)                     \
    X(plm_rt_listgen_num_cells) X(plm_rt_listgen_cell)

#endif
