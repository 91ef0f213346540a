/* cg_internal.h — internal to engine/codegen: the state of one LLVM function being emitted from
 * an ir_task, shared by the files that emit statements (emit_block.c: control flow and locals;
 * emit_arith.c: values; emit_sparse.c: sn_* operations and runtime geometry; emit_memory.c:
 * field loads, stores and atomics) and the entry points (task_entry.c).
 *
 * The task is only read: statement -> LLVM value lives in our own map (cg_vmap), never in the
 * statements' scratch fields, so the same task may be compiled for two targets at once.
 *
 * The function's entry block stays open while the body is emitted: allocas, the loads of
 * plm_task_ctx and the runtime's geometry (invariant for the whole task) are put there, so they
 * dominate every use and never sit inside a loop. cg_fn_finish closes it. */
#ifndef PLUME_ENGINE_CODEGEN_CG_INTERNAL_H
#define PLUME_ENGINE_CODEGEN_CG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "engine/codegen/task.h"
#include "engine/ir/ir.h"

/* Statement -> word (stmt_map.c); 0 where absent. cg_vmap holds LLVM values, cg_smap ints. */
typedef struct cg_map {
    const ir_stmt **keys;
    intptr_t *vals;
    size_t cap, used;
} cg_map;
int cg_map_put(cg_map *m, const ir_stmt *s, intptr_t v);
intptr_t cg_map_get(const cg_map *m, const ir_stmt *s);
void cg_map_free(cg_map *m);
typedef cg_map cg_vmap;
typedef cg_map cg_smap;

/* A loop being emitted: where break and continue go, and its index values. */
typedef struct cg_loop {
    const ir_stmt *stmt;
    LLVMBasicBlockRef brk, cont;
    LLVMValueRef index[IR_MAX_DIM];
} cg_loop;

/* One cached load from the runtime of a field slot (geometry) or from plm_task_ctx. */
typedef struct cg_cached {
    int slot;
    int what;        /* CG_AT_* */
    uint64_t offset;
    LLVMValueRef v;
} cg_cached;

enum { CG_AT_SNODE = 0, CG_AT_FIELD = 1, CG_AT_RUNTIME = 2 };

#define CG_MAX_LOOPS 64
#define CG_MAX_CACHED 256

struct cg_fast;
typedef struct cg_cread cg_cread;
typedef struct cg_reduce cg_reduce;
typedef struct cg_lanes cg_lanes;

typedef struct cg_fn {
    const ir_task *task;
    cg_target_kind target;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;     /* the body */
    LLVMBuilderRef eb;    /* the entry block */
    LLVMValueRef fn;
    LLVMBasicBlockRef entry;
    LLVMValueRef task_ctx; /* const plm_task_ctx * */
    LLVMValueRef rt_arr, fid_arr, args_arr;
    LLVMValueRef *rt, *fid; /* per slot, loaded on first use; NULL until then */
    LLVMValueRef *range_flag; /* per slot: i8 alloca, set when an activation was out of range */
    cg_vmap vals;
    cg_loop loops[CG_MAX_LOOPS];
    int nloops;
    cg_cached cache[CG_MAX_CACHED];
    int ncached;
    uint32_t stmt_no;     /* pre-order number of the statement being emitted (as printed) */
    uint32_t next_no;
    const ir_stmt *cur;
    /* Set while the fast copy of a parallel loop's body is emitted (fast_*.c): recognized
     * field accesses take their addresses from it and their chains are not emitted. */
    struct cg_fast *fast;
    /* Reads at any index served through a per-call cache of leaf blocks (cached_read.c);
     * NULL when the function has none. */
    cg_cread *cread;
    /* Reductions into one-element fields accumulated per call (local_reduce.c); NULL: none. */
    cg_reduce *reduce;
    /* Float arithmetic of several stores done in vectors, one lane per store, in the fast
     * copy (lanes.c); NULL: none. */
    cg_lanes *lanes;
    LLVMTypeRef t_void, t_i1, t_i8, t_i32, t_i64, t_f32, t_f64, t_ptr;
    char *err;
    size_t err_size;
} cg_fn;

/* ---- function setup (task_entry.c) ---- */
int cg_fn_begin(cg_fn *f, const ir_task *t, cg_target_kind target, LLVMContextRef ctx,
                LLVMModuleRef mod, LLVMValueRef fn, char *err, size_t err_size);
/* Branches from the entry block to `first` and frees f's memory. */
void cg_fn_finish(cg_fn *f, LLVMBasicBlockRef first);
void cg_fn_free(cg_fn *f);

/* ---- errors: a message naming the task and the statement ("$12 (sn_lookup)") ---- */
int cg_fail(cg_fn *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- values ---- */
static inline int cg_vmap_put(cg_vmap *m, const ir_stmt *s, LLVMValueRef v)
{
    return cg_map_put(m, s, (intptr_t)v);
}
static inline LLVMValueRef cg_vmap_get(const cg_vmap *m, const ir_stmt *s)
{
    return (LLVMValueRef)cg_map_get(m, s);
}
/* The value of an operand, or NULL (and an error) when it was never emitted. */
LLVMValueRef cg_val(cg_fn *f, const ir_stmt *s);
/* The LLVM type of a scalar IR type in registers (bool: i1), pointers and cells: ptr. */
LLVMTypeRef cg_type(cg_fn *f, ir_type t);
/* The LLVM type of a scalar in memory (bool: i8). */
LLVMTypeRef cg_mem_type(cg_fn *f, ir_type t);

/* ---- statements (emit_block.c) ---- */
int cg_emit_block(cg_fn *f, const ir_block *blk);
int cg_emit_stmt(cg_fn *f, const ir_stmt *s);
/* Starts a new basic block after an unconditional jump, so that (dead) statements after a
 * break or continue still have a block to go in. */
void cg_new_block_after_jump(cg_fn *f, const char *name);
/* An alloca in the entry block. */
/* At the builder's position (a join): a phi of a from from_a and b from from_b. */
LLVMValueRef cg_phi2(cg_fn *f, LLVMTypeRef ty, LLVMValueRef a, LLVMBasicBlockRef from_a,
                     LLVMValueRef b, LLVMBasicBlockRef from_b, const char *name);
LLVMValueRef cg_entry_alloca(cg_fn *f, LLVMTypeRef ty, const char *name);
int cg_push_loop(cg_fn *f, const ir_stmt *s, LLVMBasicBlockRef brk, LLVMBasicBlockRef cont);
/* Marks the loop whose back edge is br with a llvm.loop hint ("llvm.loop.unroll.full": short
 * constant loops past LLVM's own size limit; "llvm.loop.unroll.disable"). (task_entry.c) */
void cg_loop_hint(cg_fn *f, LLVMValueRef br, const char *hint);
void cg_pop_loop(cg_fn *f);
cg_loop *cg_find_loop(cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_arg(cg_fn *f, ir_type ty, uint32_t index);

/* ---- values (emit_arith.c) ---- */
LLVMValueRef cg_emit_const(cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_emit_unary(cg_fn *f, int op, ir_type ty, LLVMValueRef a);
LLVMValueRef cg_emit_binary(cg_fn *f, int op, ir_type ty, LLVMValueRef x, LLVMValueRef y);
LLVMValueRef cg_emit_cast(cg_fn *f, ir_type to, ir_type from, LLVMValueRef a);
/* An LLVM intrinsic call overloaded on `ty`: llvm.<name>.<ty>. */
LLVMValueRef cg_intrinsic(cg_fn *f, const char *name, LLVMTypeRef ty, LLVMValueRef *args,
                          unsigned n);

/* ---- the sparse runtime (emit_sparse.c) ---- */
LLVMValueRef cg_runtime(cg_fn *f, int slot);  /* plm_runtime * of a field slot */
LLVMValueRef cg_field_id(cg_fn *f, int slot); /* rt_field[slot] (i32) */
/* An invariant load from the runtime of `slot`, at a member of SNode `snode` (CG_AT_SNODE),
 * of the slot's field (CG_AT_FIELD) or of plm_runtime itself (CG_AT_RUNTIME). */
LLVMValueRef cg_rt_load(cg_fn *f, int slot, int what, int32_t snode, uint64_t member,
                        LLVMTypeRef ty);
/* Notes (branch-free) that an activation at container c, index i was out of range when c is
 * not NULL and i < 0; cg_emit_range_errors records it in the runtime at the function's end. */
void cg_note_range(cg_fn *f, int slot, LLVMValueRef c, LLVMValueRef i);
void cg_emit_range_errors(cg_fn *f);
/* The SNode id of (slot, level) in its runtime, or -1 with an error. */
int32_t cg_snode_id(cg_fn *f, int slot, int level);
LLVMValueRef cg_emit_sn(cg_fn *f, const ir_stmt *s);
/* The cell index of sn_index s (its operands already emitted); -1 where out of range. */
LLVMValueRef cg_emit_sn_index(cg_fn *f, const ir_stmt *s, int32_t sid);
/* sn_field_ptr s with its container and cell index given (the fast copies compute them). */
LLVMValueRef cg_emit_field_ptr_at(cg_fn *f, const ir_stmt *s, LLVMValueRef c, LLVMValueRef i);
/* The element address of sn_field_ptr fptr in dense leaf container c at cell `cell` (i64):
 * c + header + the field's offset + component * element size + cell * stride (NULL: the
 * field's stride, loaded). No NULL or range handling. */
LLVMValueRef cg_dense_elem(cg_fn *f, const ir_stmt *fptr, LLVMValueRef c, LLVMValueRef cell,
                           LLVMValueRef stride);
/* Calls a function of the module by name: a runtime function or an intrinsic of any
 * overload (declared on first use). */
LLVMValueRef cg_call_rt(cg_fn *f, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                        LLVMValueRef *args, unsigned n);
/* Member offsets of the runtime's structs, for the struct-for entry. */
uint64_t cg_off_snode_list(void);       /* plm_rt_snode.list */
uint64_t cg_off_snode_offset_in_parent(void);
uint64_t cg_off_snode_index_shift(int axis);
uint64_t cg_off_snode_axis_shift(int axis);
uint64_t cg_off_snode_axis_bits(int axis);
uint64_t cg_off_snode_coord_offset(int axis);
uint64_t cg_sizeof_elem(void);          /* plm_rt_elem */
uint64_t cg_off_elem_cell(void);
uint64_t cg_off_elem_coord(int axis);

/* ---- fields and temporaries (emit_memory.c) ---- */
LLVMValueRef cg_emit_gtmp_ptr(cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_emit_global_load(cg_fn *f, const ir_stmt *s);
int cg_emit_global_store(cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_emit_atomic(cg_fn *f, const ir_stmt *s);

/* ---- fast paths for field accesses at the loop index (access_chain.c, fast_range.c,
 * fast_struct.c, alias_scope.c) ----
 * A parallel loop whose body reaches fields through whole lowered chains (sn_root, then
 * sn_child/sn_index/sn_lookup per level, then sn_child and sn_index of the leaf and
 * sn_field_ptr) at "loop index + constant" is emitted twice: a generic copy (the chains as
 * they are) and a fast copy, and a check made once per call picks one. The check tests what
 * the fast copy assumes about the runtime geometry of the bound fields (read at run time, so
 * any layout with the IR's chain stays correct) and that slots with accesses are bound to
 * different fields (so their memory can be marked noalias). */

/* One recognized access: fptr = sn_field_ptr(sn_child(leaf, ...), sn_index(leaf, idx)), the
 * chain above it complete up to sn_root, every sn_index of it on the same index statements,
 * each of which is loop index `a` (of the task's parallel loop) plus the constant c[a]. */
typedef struct cg_access {
    const ir_stmt *fptr;       /* sn_field_ptr; or, in a struct_for, an sn_is_active of the
                                * leaf (a query: nothing is loaded or stored through it) */
    const ir_stmt *leaf_child; /* the leaf container */
    const ir_stmt *leaf_index;
    int slot;
    int32_t c[IR_MAX_DIM];
    /* struct_for, reads between grids a factor 2 apart (multigrid): 0 = I + c; -1 = the
     * coarse cell I / 2 of a fine loop (c 0); +1 = a fine cell 2 I + c of a coarse loop
     * (c 0 or 1 per axis) */
    int scale;
    int activates;             /* some statement of the chain activates */
    const ir_stmt *chain[3 * IR_MAX_LEVELS + 2];
    int nchain;                /* chain[0..nchain): sn_root ... leaf sn_index, in order */
} cg_access;

typedef struct cg_fast {
    const ir_stmt *loop;
    cg_access *acc;
    int nacc;
    cg_smap which;   /* fptr -> access number + 1 */
    cg_smap skip;    /* chain statements used by recognized accesses only: not emitted */
    cg_smap uses;    /* statement -> operand uses in the whole task */
    int nonnull;     /* every recognized address is valid (range_for) */
    LLVMValueRef counter; /* range_for: the i64 loop counter of the fast copy */
    /* filled by the emitters, per access */
    LLVMValueRef *addr0;     /* range_for: address of the element at loop counter 0 */
    LLVMValueRef *container; /* struct_for: alloca holding the container per block delta */
    int slot_used[64];       /* slots with recognized accesses (alias scopes); 64 > slots */
    LLVMMetadataRef scope[64];
    LLVMValueRef scope_md[64], noalias_md[64];
    /* struct_for: per access, the containers of the blocks it may reach (combination k of
     * per-axis steps: bit a set = one block towards sign(c[a])), values or, when lazy,
     * allocas filled on first use in each entry */
    LLVMValueRef (*blocks)[8];
    uint8_t *lazy;   /* 1: a write's block, looked up (activating) at its first use in each
                      * entry; 2: a read sharing a lazy write's block (share) */
    int *share;      /* per access: for a read at c = 0 of a field the task also writes,
                      * the write access whose block it uses; else -1 */
    LLVMValueRef *isnull; /* per access, at its latest emission: its container is NULL (a read
                           * then sees the background); NULL when unknown */
    /* struct_for: per cell of the current entry */
    LLVMValueRef pos[IR_MAX_DIM];
    LLVMValueRef entry_coord[IR_MAX_DIM];
    LLVMValueRef entry_container;
} cg_fast;

static inline int cg_smap_put(cg_smap *m, const ir_stmt *s, int v) { return cg_map_put(m, s, v); }
static inline int cg_smap_get(const cg_smap *m, const ir_stmt *s) { return (int)cg_map_get(m, s); }
static inline void cg_smap_free(cg_smap *m) { cg_map_free(m); }

/* Finds the recognized accesses of the parallel loop `loop` (dims: 1 for range_for, the
 * iterated field's for struct_for). 0 with fast->nacc possibly 0; -1 when out of memory.
 * The emitter then drops from fast->acc what it cannot serve and calls cg_fast_index, which
 * maps field pointers to accesses and finds the statements the fast copy need not emit. */
int cg_fast_analyze(cg_fn *f, const ir_stmt *loop, cg_fast *fast);
int cg_fast_index(cg_fn *f, cg_fast *fast);
void cg_fast_free(cg_fast *fast);
/* The recognized access whose sn_field_ptr is s, or NULL. */
const cg_access *cg_fast_access(const cg_fast *fast, const ir_stmt *s);
int cg_fast_skips(const cg_fast *fast, const ir_stmt *s);

/* range_for (fast_range.c): drops the accesses the fast copy cannot serve, then emits, at the
 * builder, the per-call check for the rest (lo, hi: the i64 bounds of this call). NULL when
 * no access is left (no fast copy). */
LLVMValueRef cg_fast_range_check(cg_fn *f, cg_fast *fast, LLVMValueRef lo, LLVMValueRef hi);
/* The address of a recognized access in the fast copy at i64 loop counter i. */
LLVMValueRef cg_fast_range_ptr(cg_fn *f, const cg_access *a, LLVMValueRef i);

/* struct_for (fast_struct.c). check: per call; entry: at the start of each list entry (its
 * first voxel's coordinates and leaf container); cell: per cell (its index in the leaf). */
LLVMValueRef cg_fast_struct_check(cg_fn *f, cg_fast *fast);
int cg_fast_struct_entry(cg_fn *f, LLVMValueRef coord[IR_MAX_DIM], LLVMValueRef container);
void cg_fast_struct_cell(cg_fn *f, LLVMValueRef cell);
LLVMValueRef cg_fast_struct_ptr(cg_fn *f, const cg_access *a);
/* i1: the cell of a recognized sn_is_active (an access whose fptr is that statement) is
 * active, at the current cell (fast->pos). */
LLVMValueRef cg_fast_is_active(cg_fn *f, const cg_access *a);

/* A struct_for whose body acts only where `loop index a & mask[a] == 0` on some axes
 * (block_head.c): the bit set of those axes (0: none), their masks in mask[]. Only reads the
 * IR; the caller shortens the cell loops of aligned blocks. */
int cg_block_head(const ir_stmt *loop, int32_t mask[IR_MAX_DIM]);

/* Both: scopes per slot, and the per-call test that slots with accesses are bound to
 * different fields (alias_scope.c). */
LLVMValueRef cg_fast_distinct_fields(cg_fn *f, cg_fast *fast);
/* i1: slots s and t are bound to different fields (or runtimes) in this call. */
LLVMValueRef cg_slots_differ(cg_fn *f, int s, int t);
/* ch[slot] = 1 for every slot whose field the task changes anywhere (stores, atomics,
 * activation, deactivation). */
void cg_changed_slots(const ir_task *t, uint8_t ch[64]);
void cg_fast_mark_alias(cg_fn *f, LLVMValueRef mem_inst, const ir_stmt *ptr);
/* For a read through sn_field_ptr ptr in a fast copy: an i1 that is true exactly when the
 * pointer's element is inactive (NULL pointer), or NULL when the fast copy does not know. */
LLVMValueRef cg_fast_isnull(cg_fn *f, const ir_stmt *ptr);
/* The fast copy's address of sn_field_ptr s (NULL: not a recognized access). */
LLVMValueRef cg_fast_field_ptr(cg_fn *f, const ir_stmt *s, int *handled);

/* Walks an access chain up from child, the sn_child of level `leaf` of `field`: child(l) <-
 * sn_lookup(l-1) <- sn_index(l-1) ... <- sn_root. Every sn_index must have the operands of
 * *index (when *index is NULL, the first one met is taken and stored there). Writes the
 * statements met, child first, root last, into rev (room for 3 * IR_MAX_LEVELS) and returns
 * their count, or 0 when the chain has another shape; sets *activates when a lookup activates. */
int cg_chain_up(const ir_stmt *child, int field, int leaf, int dim, const ir_stmt **index,
                const ir_stmt **rev, int *activates);

/* ---- leaf containers of reads at any index through a per-call cache (cached_read.c) ----
 * cg_cread_setup (after cg_fn_begin) finds the leaf sn_child statements it serves and the
 * chain statements above them that only they use; cg_fn_free frees it. cg_cread_container
 * emits such a container (handled = 0: not one of them); cg_cread_skips says a chain statement
 * need not be emitted. */
int cg_cread_setup(cg_fn *f);
void cg_cread_free(cg_cread *cr);
int cg_cread_skips(const cg_fn *f, const ir_stmt *s);
/* Whether s is one of the statements the cached reads emit their own way (a skipped chain
 * statement, a site's container, a read at a site): their scalar paths keep per-block state,
 * so other emitters must not run them lane by lane. */
int cg_cread_serves(const cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_cread_container(cg_fn *f, const ir_stmt *s, int *handled);
/* The address of a read at a cached site that groups with others at one base (the corners of
 * a trilinear sample); handled = 0: not such a read. The site's sn_child and leaf sn_index are
 * then among the statements cg_cread_skips names. */
LLVMValueRef cg_cread_field_ptr(cg_fn *f, const ir_stmt *s, int *handled);
/* Whether the address cg_cread_field_ptr gives ptr is never NULL: an inactive block's voxel
 * then reads the leaf's bg_container (runtime.h), so the load needs no test. */
int cg_cread_nonnull(const cg_fn *f, const ir_stmt *ptr);
/* struct_for on the CPU: called as each list entry starts (coord: its first voxel), before
 * its cells, and with coord NULL after the entry loop. Fills the tables of blocks around the
 * entry that direct reads use (cached_read.c). 0, or -1 with the error set. */
int cg_cread_entry(cg_fn *f, LLVMValueRef coord[IR_MAX_DIM]);
/* Called as the emission of blk starts: a loop body may be emitted twice (a fast and a generic
 * copy), and lookups emitted in the earlier copy of blk dominate nothing in the later one. */
void cg_cread_block_start(cg_fn *f, const ir_block *blk);
/* Called after s is emitted: an activation of s's field ends the reuse of its reads' blocks
 * and places made before (a block that was inactive may now hold what the task wrote). */
void cg_cread_activated(cg_fn *f, const ir_stmt *s);

/* ---- reductions into one-element fields, per call (local_reduce.c) ----
 * cg_reduce_setup (CPU parallel tasks, after cg_fn_begin; loop: the parallel loop) decides
 * which slots' atomics accumulate locally and makes their allocas; cg_reduce_takes says an
 * atomic is one of them and cg_reduce_emit adds it (p: the element's address; returns a value
 * nothing uses); cg_reduce_finish, at the function's end, applies each total once. */
int cg_reduce_setup(cg_fn *f, const ir_stmt *loop);
void cg_reduce_free(cg_reduce *r);
int cg_reduce_takes(const cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_reduce_emit(cg_fn *f, const ir_stmt *s, LLVMValueRef p, LLVMValueRef v);
/* The same where i1 cond holds, without a branch (a lane of a row under a mask). */
LLVMValueRef cg_reduce_emit_if(cg_fn *f, const ir_stmt *s, LLVMValueRef p, LLVMValueRef v,
                               LLVMValueRef cond);
int cg_reduce_finish(cg_fn *f);
/* old = *p; *p = old op v, atomically (emit_memory.c); NULL and an error on failure. */
LLVMValueRef cg_atomic_rmw(cg_fn *f, int sub, ir_type ty, LLVMValueRef p, LLVMValueRef v);

/* ---- lanes: isomorphic arithmetic of several stores in vectors (lanes.c) ----
 * cg_lanes_setup (CPU, after cg_fast_analyze, only when the loop has a fast copy) finds sets
 * of stores in the loop body whose values are the same float expression over different
 * operands (the per-sibling copies a fusion leaves) and sets f->lanes when there are any; the
 * fast copy's check must then also pass cg_lanes_distinct (the stored slots bound to fields
 * other than those the moved stores pass). During the fast copy cg_lanes_stmt takes each
 * grouped statement: 1 when it skipped or emitted it (the set's vector code and stores go where
 * its last store was), 0 when s is not grouped, -1 on error. cg_lanes_block_start forgets the
 * vectors of an earlier emission of the body. cg_fn_free frees it. */
int cg_lanes_setup(cg_fn *f, const ir_stmt *loop);
void cg_lanes_free(cg_lanes *l);
LLVMValueRef cg_lanes_distinct(cg_fn *f);
int cg_lanes_stmt(cg_fn *f, const ir_stmt *s);
void cg_lanes_block_start(cg_fn *f, const ir_block *blk);

/* Rows in vectors: whether direct read s (its sn_field_ptr) can be made for a row's lanes at
 * once (a table group's f32 read whose table holds background blocks in place of NULL); its
 * lanes' addresses when the site's index operands are W-lane vectors; and the gather of f32
 * values from them. */
int cg_cread_row_ok(const cg_fn *f, const ir_stmt *s);
LLVMValueRef cg_cread_row_ptr(cg_fn *f, const ir_stmt *s, unsigned W);
/* In a list entry of rows in vectors, before the rows: copies the blocks around the entry of
 * each slot whose sampled reads may come from a halo. */
int cg_cread_halo_fill(cg_fn *f);
LLVMValueRef cg_cread_row_load(cg_fn *f, const ir_stmt *ptr, LLVMValueRef ptrs, unsigned W);

/* ---- rows in vectors (row_vector.c) ----
 * cg_rowvec_width (the CPU fast copy of a struct_for, f->fast set): W, the leaf's cells along
 * the innermost axis, when every statement of the loop's body can run for W cells at once
 * in vectors; 0 otherwise (or PLUME_ROWVEC=0). cg_rowvec_emit then emits the body once for
 * the row at fast->pos of the outer axes (coord: the entry's first voxel), in place of the
 * innermost cell loop. */
int cg_rowvec_width(cg_fn *f, const ir_stmt *loop);
int cg_rowvec_emit(cg_fn *f, const ir_stmt *loop, LLVMValueRef coord[IR_MAX_DIM], int width);

#endif
