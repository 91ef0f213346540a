/* engine.h — the engine's internal API for plugin/ (never seen by hosts).
 *
 * An eng_context owns the fields of one simulation object and, later, the kernels, the task
 * queue and the backend that runs them. Every function here is called by one thread at a time
 * per context (the plugin's context thread); different contexts are independent.
 *
 * Errors: functions return 0 on success or an ENG_E* code and write a message into the
 * context's error buffer (eng_error()). Nothing here aborts.
 */
#ifndef PLUME_ENGINE_H
#define PLUME_ENGINE_H

#include <stddef.h>
#include <stdint.h>

enum {
    ENG_OK = 0,
    ENG_EINVAL = 1,   /* bad argument */
    ENG_ENOTFOUND = 2,
    ENG_EEXIST = 3,
    ENG_ETYPE = 4,
    ENG_ENOMEM = 5,   /* memory budget exceeded */
    ENG_EINTERNAL = 6,
    ENG_ECOMPILE = 7, /* kernel source with errors (kernel.h) */
    ENG_ECANCELLED = 8 /* eng_set_cancel's callback asked to stop */
};

typedef enum eng_type { ENG_F32 = 0, ENG_VEC3 = 1 } eng_type;

typedef struct eng_options {
    int threads;               /* 0: one per core */
    uint64_t memory_budget;    /* bytes; 0: default */
} eng_options;

typedef struct eng_context eng_context;
typedef struct eng_field eng_field;

typedef struct eng_field_desc {
    const char *name;
    eng_type type;
    const char *layout;        /* NULL/"" for the default volume layout */
    double voxel_size;
    double origin[3];
    float background[3];
} eng_field_desc;

/* Creates a context; NULL when out of host memory, or when PLUME_DEVICE=cuda asks for a GPU
 * that cannot be used; eng_create_error() then says which (this thread's last eng_create). */
eng_context *eng_create(const eng_options *opt);
const char *eng_create_error(void);
void eng_destroy(eng_context *ctx);
const char *eng_error(const eng_context *ctx);
/* The ENG_E* code that came with eng_error's message (for calls that return only NULL). */
int eng_error_code(const eng_context *ctx);
uint64_t eng_memory_bytes(const eng_context *ctx);
uint64_t eng_memory_budget(const eng_context *ctx);
int eng_threads(const eng_context *ctx);
/* Runs the context's kernels and keeps its fields on CUDA device 0 (engine/exec_cuda.h). Only
 * before the first field is declared. ENG_EINVAL with the reason in eng_error() when no usable
 * GPU exists ("no CUDA driver: libcuda.so.1 not found (...)"); the context stays on the CPU.
 * eng_create does this itself when the environment says PLUME_DEVICE=cuda. */
int eng_use_cuda(eng_context *ctx);
/* Whether the context runs on a GPU, and a line naming what it runs on ("CPU (2 threads)",
 * "CUDA: NVIDIA H100 80GB HBM3 (sm_90, ...)"); the string lives as long as the context. */
int eng_on_cuda(const eng_context *ctx);
const char *eng_device_name(eng_context *ctx);
/* On a GPU: 1 launches each batch as a CUDA graph (the default), 0 kernel by kernel on a
 * stream. Ignored on the CPU. */
void eng_set_cuda_graphs(eng_context *ctx, int on);

/* Long work inside a call, for a progress display: compiling a batch's new tasks reports
 * ("compiling kernels", done, total) as they finish (0 of total first). Called on the context's
 * thread only: work on the launch thread reports nothing. fn NULL: none. */
typedef void (*eng_progress_fn)(void *user, const char *stage, uint32_t done, uint32_t total);
void eng_set_progress(eng_context *ctx, eng_progress_fn fn, void *user);

/* Polled, on the context's thread, while a batch's new tasks compile (the first frame's long
 * wait; on a GPU, between the tasks that thread compiles itself): when it answers non-zero,
 * compiles not yet started are dropped and the batch fails with ENG_ECANCELLED without running
 * (its tasks compile when next needed). On the CPU it is also polled while a batch runs on the
 * context's thread (the default), at most every 20 ms: between its tasks and between the
 * chunks of a task's loop that thread takes. A "stop" then ends the batch at once with
 * ENG_ECANCELLED: the chunks under way finish, the rest of the batch does not run, so the
 * fields hold a state part-way through it (what the host does next, e.g. reloading a
 * checkpoint, is its choice). fn NULL: never. */
typedef int (*eng_cancel_fn)(void *user);
void eng_set_cancel(eng_context *ctx, eng_cancel_fn fn, void *user);

/* The layout (SNodes only, no place()) of a field of dimension dim (0..3) whose declaration
 * names none: 3 is PLM_LAYOUT_DEFAULT (OpenVDB's tree); 2 the same tree in x, y; 1 a pointer
 * array of 512-cell blocks over [0, 2^21); 0 one cell (a scalar kept with the fields).
 * Static storage; NULL for another dim. */
const char *eng_default_layout(int dim);

/* Fields are owned by the context; pointers stay valid until eng_destroy. */
int eng_field_declare(eng_context *ctx, const eng_field_desc *desc, eng_field **out);
/* Declares n fields placed in one SNode tree (Taichi's place(a, b, ...)): one layout for all
 * (every desc names the same layout, or none), so they share their cells. Activating a cell
 * through one activates it for all (the others read their background there), a kernel's
 * deactivation deactivates it for all, and a struct-for over one visits the cells of all
 * (cells its body activates in the tree may be visited too: docs/language.md, "Which cells a
 * struct-for visits").
 * Kernels that touch several of them at one index then share lookups and lists, and the
 * optimizer sees one mask, one list and one allocator per SNode of the tree. Clearing one field
 * of a group (eng_field_clear, eng_field_clear_cells) resets its values to the background and
 * leaves the cells active. The tree's memory is counted once. out receives n fields in order;
 * on failure nothing is declared. */
int eng_field_declare_group(eng_context *ctx, const eng_field_desc *descs, int n, eng_field **out);
/* The same, with the fields interleaved per voxel (one struct of all n fields per voxel, as
 * Taichi's place() stores them): a kernel reading several of them at one voxel touches one
 * cache line, one reading a single field wastes the rest of the line. Block reads and writes
 * work (they copy with the stride); eng_field_block_data returns NULL for such fields (their
 * values are not one run) and checkpoints store them cell by cell. */
int eng_field_declare_interleaved(eng_context *ctx, const eng_field_desc *descs, int n,
                                  eng_field **out);
eng_field *eng_field_find(eng_context *ctx, const char *name);
const eng_field_desc *eng_field_info(const eng_field *f);
int eng_field_components(const eng_field *f);
/* 1 when the field keeps activity per voxel (bitmasked leaves), 0 when per block. */
int eng_field_voxel_masks(const eng_field *f);
/* Marks a field as a node's scratch (the solver's temporaries, multigrid levels): the host's
 * statistics leave it out. A field declared again (a checkpoint restored) is not marked until
 * its node marks it. */
void eng_field_set_scratch(eng_field *f);
/* The voxel indices the field can hold: lo[a] <= i[a] < hi[a] on each axis (its layout's
 * offset and extent). */
void eng_field_index_range(const eng_field *f, int64_t lo[3], int64_t hi[3]);
int eng_field_is_scratch(const eng_field *f);
/* Marks a field whose values do not outlive one cook of the node that owns it: every cook
 * writes whatever it will read before reading it (cells outside what it writes read the
 * background because it prunes those blocks first). Saving its contents is pointless, so a
 * checkpoint stores its declaration only (plugin/ext_checkpoint.c). Wrongly marked, a resumed
 * bake differs from an uninterrupted one: tests/cli/resume_smoke_test.sh compares them. As
 * with scratch, a field declared again (a checkpoint restored) is not marked until its node
 * marks it. */
void eng_field_set_transient(eng_field *f);
int eng_field_is_transient(const eng_field *f);

/* Host-side block access. Block data is components*512 floats, voxel index n = x*64+y*8+z,
 * vec3 interleaved (components of voxel n at 3n..3n+2); masks are 8 uint64 words. Origins are
 * multiples of 8. A field of another layout (leaf blocks of another size, or not starting at
 * multiples of 8) is read as the 8^3 blocks at multiples of 8 that hold its active cells,
 * cell by cell (slower), and written the same way; counts, reductions and eng_field_clear see
 * all of it; eng_field_block_data, which hands out the block's memory, returns NULL for it. */
uint64_t eng_field_block_count(eng_field *f);
uint64_t eng_field_active_voxels(eng_field *f);
/* Writes up to `cap` origins (3 int32 each) in a deterministic order (sorted by z, y, x). */
uint64_t eng_field_block_origins(eng_field *f, int32_t *origins, uint64_t cap);
/* Returns 1 when the block is active (values and mask filled), 0 when inactive (background,
 * empty mask). */
int eng_field_read_block(eng_field *f, const int32_t origin[3], float *values, uint64_t *mask);
/* mask NULL: all active. Returns 0 or ENG_ENOMEM when the budget would be exceeded. */
int eng_field_write_block(eng_context *ctx, eng_field *f, const int32_t origin[3],
                          const float *values, const uint64_t *mask);
/* Direct access to an active block's data for host-side nodes; when `create`, an inactive block
 * is activated (all 512 voxels active, filled with background). NULL when inactive and not
 * created, when the budget is exceeded (eng_error says so), or for a field interleaved with
 * others per voxel (eng_field_declare_interleaved). */
float *eng_field_block_data(eng_context *ctx, eng_field *f, const int32_t origin[3], int create);
/* Every voxel of a field of any layout inactive (on an all-dense layout: at the background);
 * cells activated later start from the background. A field of a group: see above. */
void eng_field_clear(eng_context *ctx, eng_field *f);
/* Changes what inactive voxels read as; active voxels keep their values (on an all-dense layout
 * every voxel is active and all take it). */
void eng_field_set_background(eng_field *f, const float bg[3]);
/* Sum (first component) or max |v| over the active voxels (NaN when one holds a NaN). */
enum { ENG_REDUCE_SUM = 0, ENG_REDUCE_MAX_ABS = 1 };
double eng_field_reduce(eng_field *f, int op);
/* Value of one voxel (component c); background when inactive. */
float eng_field_read(eng_field *f, const int32_t ijk[3], int c);
/* Writes every component of one voxel (value holds eng_field_components floats), activating
 * it. Axes beyond the field's dimension are ignored. 0, ENG_ENOMEM (budget) or ENG_EINVAL
 * (outside the field's range). For small fields (0-D scalars, 1-D arrays); volumes go by block. */
int eng_field_write(eng_context *ctx, eng_field *f, const int32_t ijk[3], const float *value);

/* ---- the whole context, for checkpoints (plugin/ext_checkpoint.c) ---- */

/* Fields in declaration order (index 0 first); eng_field_at returns NULL out of range. */
int eng_field_count(const eng_context *ctx);
eng_field *eng_field_at(eng_context *ctx, int i);
/* 1 when the field's leaf blocks are 8x8x8 voxels each holding the field's values as one run
 * (eng_field_block_data works on it; not for fields interleaved with others per voxel). */
int eng_field_has_blocks(const eng_field *f);
/* Any layout whose leaves are dense or bitmasked (0-D scalars, 1-D arrays, 2-D grids too):
 * calls fn for every active cell, block by block in the order of eng_field_block_origins'
 * kind (deterministic), with the cell's index (axes beyond the field's dimension 0) and its
 * value (components floats). Stops at the first non-zero return of fn and returns it;
 * ENG_EINVAL when the layout has no blocks. A sync point like the other host reads. */
typedef int (*eng_cell_fn)(void *user, const int32_t ijk[3], const float *value);
int eng_field_foreach_cell(eng_context *ctx, eng_field *f, eng_cell_fn fn, void *user);
/* The same as eng_field_clear (kept for callers written when that took 8^3 blocks only). */
void eng_field_clear_cells(eng_context *ctx, eng_field *f);

/* Deterministic execution: with `on`, the same launches on the same field contents give the
 * same bits whatever the thread count and scheduling: tasks whose float atomic updates
 * (+=, -=, *=, /=) reach a destination shared by several iterations run on one thread, in
 * the order of their loop; list generation runs serially, so struct-for lists have one order.
 * min/max atomics and element-wise work stay parallel (their results do not depend on order).
 * Takes effect for tasks run from then on. Off by default. */
int eng_set_deterministic(eng_context *ctx, int on);
int eng_deterministic(const eng_context *ctx);

#endif
