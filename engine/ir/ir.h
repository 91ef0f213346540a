/* ir.h — Plume's intermediate representation: hierarchical SSA in the style of Taichi's CHI IR.
 * This header is the contract between the front end's lowering, the passes (engine/passes/),
 * the state-flow-graph optimizer (engine/sfg/) and the LLVM code generator (engine/codegen/).
 * docs/ir.md describes every statement, the printed form, the pass order and the metadata.
 *
 * Shape. A task (ir_task) owns one block of statements (its body). A statement (ir_stmt) is
 * one SSA value (or an effect, of type IR_VOID); `if`, `range_for`, `struct_for` and `while`
 * statements own nested blocks. A statement may use (as an operand) any statement defined
 * before it in its own block or before its enclosing statement in an enclosing block — that is
 * the dominance rule the verifier checks. Blocks are doubly linked lists, so passes insert and
 * unlink in O(1).
 *
 * Vectors. The IR is scalar: the AST lowering splits vectors and matrices into components, and
 * a field of vec3 is accessed one component at a time (`global_ptr` names the component). Every
 * type is therefore a scalar, a pointer to a scalar, or an opaque sparse-runtime pointer.
 *
 * Fields. A task refers to fields by slot: the index of the kernel's field parameter in
 * ir_task.fields. Each slot has a descriptor (ir_field_info: element type, dimension and the
 * SNode chain of its layout). Launches bind slots to real fields; the engine maps slot/level
 * pairs to its own field and SNode ids (each field lives in its own SNode tree, so an SNode is
 * named by (field slot, level)). A launch may bind two slots to one field (a kernel given the
 * same field twice), so passes assume slots may alias unless ir_task.distinct_slots says not.
 *
 * Memory. Everything reachable from an ir_task (statements, blocks, field descriptors,
 * metadata, names) lives in the task's own arena and is freed at once by ir_task_free(). A
 * statement unlinked from its block stays allocated until then. Clones have their own arena.
 *
 * Threads. There is no global mutable state. A task is used by one thread at a time; different
 * tasks may be built, printed, verified, hashed and transformed on different threads at once.
 *
 * Errors. Functions that can fail return 0 on success or non-zero and write a message naming
 * the place ("task 'k' $12 (global_store): ...") into a caller buffer. Nothing here aborts.
 */
#ifndef PLUME_IR_IR_H
#define PLUME_IR_IR_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------------ types */

/* A type is one byte: a scalar kind, or IR_PTR_BIT | scalar kind for a pointer to a scalar
 * (alloca, global_ptr, gtmp_ptr, sn_field_ptr), or IR_CELL for a sparse-runtime pointer to a
 * container or a cell's content (sn_* statements). */
typedef uint8_t ir_type;
enum {
    IR_VOID = 0,
    IR_BOOL = 1,
    IR_I32 = 2,
    IR_I64 = 3,
    IR_U32 = 4,
    IR_F32 = 5,
    IR_F64 = 6,
    IR_CELL = 7,     /* uint8_t * into the sparse runtime's arena; may be NULL (see sn_lookup) */
    IR_TYPE_INFER = 0x7f, /* "not known yet": the typecheck pass fills it in */
    IR_PTR_BIT = 0x80
};
#define IR_PTR(t) ((ir_type)((t) | IR_PTR_BIT))
#define IR_IS_PTR(t) (((t) & IR_PTR_BIT) != 0)
#define IR_POINTEE(t) ((ir_type)((t) & 0x7f))
int ir_type_is_int(ir_type t);   /* i32, i64, u32 */
int ir_type_is_float(ir_type t); /* f32, f64 */
int ir_type_is_signed(ir_type t);/* i32, i64 */
int ir_type_size(ir_type t);     /* bytes of a scalar (bool: 1), pointers 8, void 0 */
/* "i32", "ptr<f32>", "cell"; static storage. */
const char *ir_type_name(ir_type t);

/* ------------------------------------------------------------------------------ fields */

/* SNode kinds of a level (the root is level 0 and has kind IR_KIND_ROOT). */
typedef enum ir_snode_kind {
    IR_KIND_ROOT = 0,
    IR_KIND_DENSE = 1,
    IR_KIND_POINTER = 2,
    IR_KIND_BITMASKED = 3,
    IR_KIND_DYNAMIC = 4
} ir_snode_kind;

#define IR_MAX_LEVELS 16
#define IR_MAX_DIM 3
#define IR_NAME_MAX 64

/* The runtime geometry of one level (the plm_rt_snode members generated code reads), when
 * the field it came from is known. Code generation then folds these values into the code
 * instead of loading them from the bound runtime at every call; they are part of the task's
 * hash, so code made for one geometry only runs on trees of that geometry. known = 0 (tests
 * that build fields by hand, listings): everything is read from the runtime. */
typedef struct ir_geom {
    uint8_t known;
    uint8_t axis_shift[IR_MAX_DIM], index_shift[IR_MAX_DIM], extent_bits[IR_MAX_DIM];
    int32_t coord_offset[IR_MAX_DIM];
    int32_t num_cells;
    uint64_t header_bytes, cell_bytes, offset_in_parent;
} ir_geom;

/* One level of a field's SNode chain. */
typedef struct ir_level {
    uint8_t kind;               /* ir_snode_kind */
    uint8_t log2_size[IR_MAX_DIM]; /* cells per container along x, y, z, as log2 (0: 1 cell) */
    int32_t rt_snode;           /* the SNode's id in the field's runtime tree (plm_rt_snode.id);
                                 * informational for codegen; -1 when unknown */
    ir_geom geom;
} ir_level;

/* A field parameter as the IR sees it. Filled by the caller of ir_compile_kernel (from the
 * sparse layout: see ir_field_info_from_layout in engine/passes/passes.h) — or by tests by
 * hand. Level 0 is the root (kind IR_KIND_ROOT, one cell), levels 1..nlevels-1 the chain from
 * the root down; the last level is the leaf, whose cells are the field's elements (voxels).
 * A level is "sparse" when its kind is pointer, bitmasked or dynamic: only sparse levels have a
 * mask state; only pointer and dynamic levels have an allocator state; every level below the
 * root has a list state. A 0-D field has dim 0 and is typically one dense level of one cell. */
typedef struct ir_field_info {
    char name[IR_NAME_MAX];
    ir_type elem;        /* scalar type of one component: f32, f64 or i32 */
    uint8_t components;  /* 1..4 (vec3 fields: 3) */
    uint8_t dim;         /* 0..3 */
    uint8_t nlevels;     /* 1..IR_MAX_LEVELS, root included */
    uint8_t place_known; /* place_offset and place_stride hold the runtime's plm_rt_field values */
    uint64_t place_offset, place_stride;
    /* 0: the field has an SNode tree of its own. Otherwise fields with the same tree_key are
     * placed in one tree (place(a, b, ...)): they share every level's cells, hence masks,
     * lists and allocators, and differ only in place_offset. The key is the engine's; the IR
     * compares keys only (the hash sees which slots share, not the key). */
    uint32_t tree_key;
    ir_level levels[IR_MAX_LEVELS];
} ir_field_info;

int ir_level_is_sparse(const ir_level *l);     /* pointer, bitmasked, dynamic */
int ir_level_has_alloc(const ir_level *l);     /* pointer, dynamic */
/* "dense", "pointer", ...; static storage. */
const char *ir_snode_kind_name(int kind);

/* ------------------------------------------------------------------------------ statements */

typedef enum ir_op {
    /* values */
    IR_CONST = 0,    /* ty; ival (bool, ints) or fval (floats, f32 values exactly representable) */
    IR_ARG,          /* ty; index = scalar kernel parameter number (after scalarization) */
    IR_UNARY,        /* ty; sub = ir_unop; arg[0] */
    IR_BINARY,       /* ty; sub = ir_binop; arg[0], arg[1] (comparisons give bool) */
    IR_SELECT,       /* ty; arg[0] (bool) ? arg[1] : arg[2]; both sides already evaluated */
    IR_CAST,         /* ty; arg[0] converted (float->int truncates, int->bool is != 0) */
    IR_FMA,          /* ty (f32 or f64); arg[0] * arg[1] + arg[2] rounded once (lerp: the
                      * product and the sum of a blend in one step, same bits on CPU and GPU) */
    /* local variables: one scalar each, zero-initialized */
    IR_ALLOCA,       /* ty = ptr<T> */
    IR_LOAD,         /* ty = T; arg[0] an alloca */
    IR_STORE,        /* void; arg[0] an alloca, arg[1] the value */
    /* fields and global temporaries (before access lowering) */
    IR_GLOBAL_PTR,   /* ty = ptr<elem>; field, comp; arg[0..dim) the i32 index per axis (x,y,z);
                      * `demoted`: bit l set = level l's cells are known to be active (an
                      * activation there may be a plain lookup). Pure: no effect by itself. */
    IR_GTMP_PTR,     /* ty = ptr<T>; ival = byte offset into the kernel's global temporaries,
                      * the buffer through which offloaded tasks hand values to each other */
    IR_GLOBAL_LOAD,  /* ty = T; arg[0] a global_ptr, gtmp_ptr or sn_field_ptr. From a
                      * global_ptr: an inactive element reads as the field's background */
    IR_GLOBAL_STORE, /* void; arg[0] pointer as above, arg[1] value. Activates the element */
    IR_ATOMIC,       /* ty = T (the old value); sub = ir_atomic_op; arg[0] pointer, arg[1]
                      * value. Activates the element */
    IR_IS_ACTIVE,    /* bool; field; arg[0..dim) index: every level of the element's path is
                      * active */
    IR_ACTIVATE,     /* void; field; arg[0..dim): activates the path down to the element;
                      * `demoted` as in global_ptr */
    IR_DEACTIVATE,   /* void; field; arg[0..dim): deactivates the element's cell at the deepest
                      * sparse level (no effect on a field without sparse levels) */
    /* control flow */
    IR_IF,           /* void; arg[0] bool; body (then), els (may be empty, never NULL) */
    IR_RANGE_FOR,    /* void; arg[0] begin, arg[1] end (one integer type: i32, i64 or u32); body
                      * runs for begin <= i < end; `parallel`: iterations run in parallel (only
                      * at a kernel's top level, or as the loop of a range_for task) */
    IR_STRUCT_FOR,   /* void; field; body runs for each active element of `field` (parallel) */
    IR_WHILE,        /* void; body repeats until a break */
    IR_LOOP_INDEX,   /* ty (range_for: the bounds' type; struct_for: i32); loop = enclosing
                      * range_for or struct_for; index = axis (struct_for: 0..dim-1) */
    IR_BREAK,        /* void; loop = the innermost enclosing loop (never a parallel one) */
    IR_CONTINUE,     /* void; loop = the innermost enclosing loop */
    /* sparse runtime operations (after access lowering; field + level name the SNode).
     * With activate = 0 every one of them is "null-propagating": a NULL container operand
     * gives NULL (sn_lookup, sn_field_ptr), false (sn_is_active) or nothing (sn_deactivate),
     * and global_load of a NULL sn_field_ptr reads the field's background. */
    IR_SN_ROOT,      /* cell; field: the content of the root's single cell */
    IR_SN_CHILD,     /* cell; field, level: the container of `level` inside arg[0], a cell
                      * content of level-1 (plm_rt_snode.offset_in_parent) */
    IR_SN_INDEX,     /* i32; field, level; arg[0..dim) the element index (x, y, z): the cell
                      * index at `level` inside its container (plm_rt_cell_index) */
    IR_SN_LOOKUP,    /* cell; field, level, activate; arg[0] container, arg[1] cell index:
                      * the cell's content (plm_rt_lookup_element); NULL when inactive and
                      * activate = 0 */
    IR_SN_FIELD_PTR, /* ptr<elem>; field, comp, activate; arg[0] leaf container, arg[1] cell
                      * index (plm_rt_field_ptr, then + comp * sizeof(elem)) */
    IR_SN_IS_ACTIVE, /* bool; field, level; arg[0] container, arg[1] index */
    IR_SN_ACTIVATE,  /* void; field, level; arg[0] container, arg[1] index (on a dense level,
                      * as for an all-dense field: only records an index outside the field) */
    IR_SN_DEACTIVATE,/* void; field, level; arg[0] container, arg[1] index */
    IR_OP_COUNT
} ir_op;

typedef enum ir_unop {
    IR_NEG = 0, IR_NOT, IR_BITNOT,
    IR_SQRT, IR_EXP, IR_LOG, IR_SIN, IR_COS, IR_TAN,
    IR_FLOOR, IR_CEIL, IR_ROUND, IR_TRUNC, IR_ABS,
    IR_UNOP_COUNT
} ir_unop;

typedef enum ir_binop {
    IR_ADD = 0, IR_SUB, IR_MUL,
    IR_DIV,     /* floats: IEEE; integers: floored (rounds toward -inf), x / 0 = 0 */
    IR_MOD,     /* integers: floored (sign of the divisor), x % 0 = 0; floats: x - y*floor(x/y) */
    IR_MIN, IR_MAX, IR_POW, IR_ATAN2,
    IR_AND, IR_OR, IR_XOR, /* bitwise on integers, logical (both evaluated) on bool */
    IR_SHL, IR_SHR,        /* shift count taken modulo the bit width; shr arithmetic on signed */
    IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE, /* bool result */
    IR_BINOP_COUNT
} ir_binop;

/* mul and div have no hardware atomic: the code generator uses a compare-and-swap loop. */
typedef enum ir_atomic_op { IR_ATOMIC_ADD = 0, IR_ATOMIC_SUB, IR_ATOMIC_MIN, IR_ATOMIC_MAX,
                            IR_ATOMIC_MUL, IR_ATOMIC_DIV, IR_ATOMIC_COUNT } ir_atomic_op;

#define IR_MAX_ARGS 4

typedef struct ir_stmt ir_stmt;
typedef struct ir_block ir_block;
typedef struct ir_task ir_task;

struct ir_block {
    ir_stmt *first, *last;
    ir_stmt *owner;     /* the statement owning this block; NULL for a task's body */
};

struct ir_stmt {
    uint8_t op;         /* ir_op */
    ir_type ty;
    uint8_t sub;        /* ir_unop / ir_binop / ir_atomic_op */
    uint8_t nargs;
    uint8_t comp;       /* global_ptr, sn_field_ptr: component of a vector element */
    uint8_t level;      /* sn_*: level in the field's chain */
    uint8_t activate;   /* sn_lookup, sn_field_ptr */
    uint8_t parallel;   /* range_for */
    uint16_t field;     /* field slot */
    uint32_t index;     /* arg: parameter number; loop_index: axis */
    uint32_t demoted;   /* global_ptr, activate: levels known active (bit l = level l) */
    int64_t ival;       /* const (ints, bool), gtmp_ptr offset */
    double fval;        /* const (floats) */
    ir_stmt *arg[IR_MAX_ARGS];
    ir_stmt *loop;      /* loop_index, break, continue */
    ir_block *body;     /* if (then), range_for, struct_for, while */
    ir_block *els;      /* if */
    ir_stmt *prev, *next;
    ir_block *parent;   /* the block holding this statement */
    /* Scratch for passes and tools; meaningless between calls. `id` is the number the printer
     * shows ($id) after ir_task_number(). */
    uint32_t id;
    uint32_t mark;
    ir_stmt *repl;      /* replacement set by a pass; resolved by ir_task_replace_uses() */
};

/* ------------------------------------------------------------------------------ tasks */

typedef enum ir_task_kind {
    /* same order as sfg_task_type (engine/sfg/sfg.h) */
    IR_TASK_SERIAL = 0,
    IR_TASK_RANGE_FOR = 1,  /* body = serial prologue (bounds) + one parallel range_for */
    IR_TASK_STRUCT_FOR = 2, /* body = serial prologue + one struct_for */
    IR_TASK_CLEAR_LIST = 3, /* empties list(field, level); empty body */
    IR_TASK_LISTGEN = 4,    /* list(field, level) = active cells of `level` inside the
                             * containers of list(field, level-1) (level 1: the root's); empty */
    IR_TASK_GC = 5,         /* returns the recycled cells of (field, level) to its allocator */
    IR_TASK_KERNEL = 6      /* a whole kernel before offload: serial code + parallel loops */
} ir_task_kind;

/* ---- metadata (the optimizer trusts it: every flag is conservative) ---- */

/* States (docs/ir.md, "Metadata"): per field a value state; per SNode (field, level) a mask
 * (sparse levels), a list (levels >= 1) and an allocator (pointer/dynamic levels) state; and
 * the kernel's global temporaries as one more value-like state. */
typedef enum ir_state_kind {
    IR_STATE_VALUE = 0,
    IR_STATE_MASK = 1,
    IR_STATE_LIST = 2,
    IR_STATE_ALLOC = 3,
    IR_STATE_GTMP = 4
} ir_state_kind;

enum {
    IR_ACC_READ = 1u << 0,  /* the task's result may depend on the state (loads, atomics,
                             * activity queries, activations that test the mask) */
    IR_ACC_WRITE = 1u << 1, /* the task may change the state */
    /* Value states of range_for/struct_for tasks: every access of the task to the field is
     * f[I] at exactly the loop index (all axes, same order, no offset). */
    IR_ACC_ELEMENTWISE = 1u << 2,
    /* No two iterations access the same element of the state. Set only together with
     * ELEMENTWISE (the loop index is distinct per iteration); never for 0-D fields, serial
     * tasks, or masks/allocators of levels above the leaf. */
    IR_ACC_UNIQUE = 1u << 3,
    /* Every access is an atomic update with op `atomic_op` whose old value is unused, and the
     * task does not otherwise read or write the state. Masks/allocators: every access is an
     * activation (atomic_op = IR_ATOMIC_ACTIVATE) and nothing queries the mask. */
    IR_ACC_ATOMIC = 1u << 4,
    /* Value states with WRITE, ELEMENTWISE, UNIQUE: each iteration stores to its own element
     * unconditionally (a store in the loop body's top-level block, no continue before it). */
    IR_ACC_COVER = 1u << 5,
    /* Value states with WRITE: after the task the state does not depend on its earlier value:
     * a serial task storing a 0-D field unconditionally and never reading it. */
    IR_ACC_FULL = 1u << 6,
    /* Mask states with WRITE: the cells activated depend only on the loop index and constants
     * (activations unconditional or under `if`s whose conditions are computed from loop
     * indices and constants only, and so are their indices). */
    IR_ACC_INDEX_ONLY = 1u << 7,
    /* Mask states: nothing queries activity or deactivates. The task reads the mask only to
     * look values up (an inactive cell reads as its field's background, and so does a cell
     * activated but not yet written: new blocks start at the background) and changes it only
     * by activating. Whether another such task's activations came first then changes no
     * value this task computes. */
    IR_ACC_LOOKUP = 1u << 8,
    /* Mask states with WRITE: every activation is of the cell holding f[I] at exactly the
     * loop index I (every axis in order, no offset), conditional or not. The task activates a
     * subset of its iteration set's cells. */
    IR_ACC_AT_INDEX = 1u << 9,
    /* With IR_ACC_AT_INDEX: one of those activations runs in every iteration, so the task
     * activates exactly the cells holding its iteration set's indices. */
    IR_ACC_AT_EVERY_INDEX = 1u << 10
};
#define IR_ATOMIC_ACTIVATE 16 /* atomic_op of mask/alloc accesses made only by activations */

typedef struct ir_access {
    uint8_t kind;       /* ir_state_kind */
    uint8_t level;      /* mask/list/alloc: the SNode's level */
    uint8_t atomic_op;  /* with IR_ACC_ATOMIC: ir_atomic_op or IR_ATOMIC_ACTIVATE */
    uint16_t field;     /* field slot (ignored for gtmp) */
    uint32_t flags;     /* IR_ACC_* */
} ir_access;

enum {
    IR_TASKF_DYNAMIC_RANGE = 1u << 0 /* range_for whose bounds are not both constants */
};

typedef struct ir_task_meta {
    uint8_t kind;          /* ir_task_kind */
    uint32_t flags;        /* IR_TASKF_* */
    uint16_t field;        /* struct_for: field iterated; clear_list/listgen/gc: the SNode's */
    uint8_t level;         /* struct_for: level whose list it iterates (the leaf's parent);
                            * clear_list/listgen/gc: the SNode's level */
    int64_t begin, end;    /* range_for with constant bounds */
    uint32_t naccess;
    ir_access *access;     /* each state at most once, sorted by (kind, field, level) */
} ir_task_meta;

typedef struct ir_arena ir_arena;

struct ir_task {
    ir_arena *arena;
    uint8_t kind;           /* ir_task_kind */
    char name[IR_NAME_MAX]; /* "kernel" or "kernel#3" after offload */
    ir_block *body;
    /* struct_for, clear_list, listgen, gc: the SNode (clear/listgen/gc) or the field looped
     * over (struct_for: level is the list's level) */
    uint16_t field;
    uint8_t level;
    uint16_t nfields;
    ir_field_info *fields;  /* slot -> descriptor; arena-owned copy */
    uint32_t nargs;
    ir_type *arg_types;     /* scalar kernel parameters after scalarization */
    uint32_t gtmp_bytes;    /* size of the kernel's global temporaries buffer */
    int has_meta;
    ir_task_meta meta;      /* filled by ir_task_compute_meta (offload calls it) */
    /* Every slot is bound to a field of its own, so a store through one slot leaves what
     * another slot reads unchanged: the optimizer keeps loaded values across it and forwards
     * stored ones. Set by fusion (engine/passes/fuse.c) on fused tasks over distinct fields
     * (heavy pairs only when their bodies share work that way); zero elsewhere, which is
     * always safe — and measured faster on single kernels:
     * values kept across a large body live long (the smoke solver's advection step took 113-126
     * ms with this on every bound task against 87-91 ms without). Not part of ir_task_hash: the
     * bound task's hash covers the binding. */
    uint8_t distinct_slots;
};

/* ------------------------------------------------------------------------------ core API */

/* A new empty task (body empty) with copies of the field descriptors and argument types.
 * NULL when out of memory. */
ir_task *ir_task_new(int kind, const char *name, const ir_field_info *fields, uint32_t nfields,
                     const ir_type *arg_types, uint32_t nargs);
void ir_task_free(ir_task *t);
/* 1 when slots a and b name the same SNode tree (the same slot, or equal non-zero tree_key):
 * their cells at one index are the same cells. */
int ir_same_tree(const ir_task *t, uint32_t a, uint32_t b);
/* The lowest slot in the same tree as `slot` (slot itself when it has a tree of its own): the
 * one slot that names what the fields of a tree share. */
uint32_t ir_tree_slot(const ir_task *t, uint32_t slot);
/* Bytes held by the task's arena. */
size_t ir_task_bytes(const ir_task *t);

/* Arena allocation (zeroed); NULL when out of memory. */
void *ir_alloc(ir_task *t, size_t bytes);
ir_block *ir_block_new(ir_task *t, ir_stmt *owner);
/* A new statement, not linked anywhere, with op and type set and everything else zero;
 * blocks of if/loops are created empty. */
ir_stmt *ir_stmt_new(ir_task *t, int op, ir_type ty);

/* Linking. */
void ir_insert_before(ir_stmt *pos, ir_stmt *s);
void ir_insert_after(ir_stmt *pos, ir_stmt *s);
void ir_append(ir_block *b, ir_stmt *s);
void ir_prepend(ir_block *b, ir_stmt *s);
void ir_unlink(ir_stmt *s);      /* s stays allocated; its nested blocks stay attached to it */
/* Moves the statements after `pos` (exclusive) to the end of `to`. */
void ir_move_after(ir_stmt *pos, ir_block *to);

/* Static properties of an op. */
const char *ir_op_name(int op);        /* "global_store" */
const char *ir_unop_name(int u);       /* "neg" */
const char *ir_binop_name(int b);      /* "add" */
const char *ir_atomic_name(int a);     /* "add" */
int ir_op_has_effect(const ir_stmt *s);/* stores, atomics, activation, control flow */
int ir_op_is_loop(int op);             /* range_for, struct_for, while */
int ir_binop_is_cmp(int b);

/* Walk: calls fn on every statement in pre-order (a statement before its blocks), `then`
 * block before `else`. Returns the first non-zero fn result (and stops), else 0. */
typedef int (*ir_visit_fn)(ir_stmt *s, void *ud);
int ir_walk(ir_block *b, ir_visit_fn fn, void *ud);

/* Numbers every statement in pre-order from 0 (stmt->id) and returns the count. */
uint32_t ir_task_number(ir_task *t);
/* Replaces every operand (and loop reference) o that has o->repl set by the end of its repl
 * chain, then clears every repl. Passes set repl on the statements they drop. */
void ir_task_replace_uses(ir_task *t);
/* Follows repl links. */
ir_stmt *ir_resolve(ir_stmt *s);
/* Counts uses of each statement into stmt->mark (operands and loop references). */
void ir_task_count_uses(ir_task *t);

/* ------------------------------------------------------------------------------ builder */

/* A cursor: new statements go at the end of `block` (or before `before` when set). The builder
 * fills types from operands where the op defines them. Builder functions return NULL when out
 * of memory; a NULL operand makes them return NULL too, so a sequence can be checked once. */
typedef struct ir_builder {
    ir_task *task;
    ir_block *block;
    ir_stmt *before;
} ir_builder;

void ir_builder_init(ir_builder *b, ir_task *t);   /* at the end of t->body */
void ir_builder_at_end(ir_builder *b, ir_block *block);
void ir_builder_before(ir_builder *b, ir_stmt *pos);
ir_stmt *ir_emit(ir_builder *b, ir_stmt *s);        /* links s at the cursor; returns s */

ir_stmt *ir_const_i32(ir_builder *b, int32_t v);
ir_stmt *ir_const_int(ir_builder *b, ir_type ty, int64_t v); /* bool, i32, i64, u32 */
ir_stmt *ir_const_float(ir_builder *b, ir_type ty, double v); /* f32 (rounded), f64 */
ir_stmt *ir_arg(ir_builder *b, ir_type ty, uint32_t index);
ir_stmt *ir_unary(ir_builder *b, int op, ir_stmt *a);
ir_stmt *ir_binary(ir_builder *b, int op, ir_stmt *x, ir_stmt *y);
ir_stmt *ir_select(ir_builder *b, ir_stmt *c, ir_stmt *x, ir_stmt *y);
ir_stmt *ir_fma(ir_builder *b, ir_stmt *x, ir_stmt *y, ir_stmt *z); /* x * y + z */
ir_stmt *ir_cast(ir_builder *b, ir_type to, ir_stmt *a);
ir_stmt *ir_alloca(ir_builder *b, ir_type elem);
ir_stmt *ir_load(ir_builder *b, ir_stmt *ptr);
ir_stmt *ir_store(ir_builder *b, ir_stmt *ptr, ir_stmt *v);
/* idx has t->fields[field].dim entries (may be NULL for a 0-D field). */
ir_stmt *ir_global_ptr(ir_builder *b, uint32_t field, uint32_t comp, ir_stmt *const *idx);
ir_stmt *ir_gtmp_ptr(ir_builder *b, ir_type elem, uint32_t offset);
ir_stmt *ir_global_load(ir_builder *b, ir_stmt *ptr);
ir_stmt *ir_global_store(ir_builder *b, ir_stmt *ptr, ir_stmt *v);
ir_stmt *ir_atomic(ir_builder *b, int op, ir_stmt *ptr, ir_stmt *v);
ir_stmt *ir_field_op(ir_builder *b, int op /* IR_IS_ACTIVE, IR_ACTIVATE, IR_DEACTIVATE */,
                     uint32_t field, ir_stmt *const *idx);
/* Control flow: the builder does not move into the new blocks; use ir_builder_at_end. */
ir_stmt *ir_if(ir_builder *b, ir_stmt *cond);
ir_stmt *ir_range_for(ir_builder *b, ir_stmt *begin, ir_stmt *end, int parallel);
ir_stmt *ir_struct_for(ir_builder *b, uint32_t field);
ir_stmt *ir_while(ir_builder *b);
ir_stmt *ir_loop_index(ir_builder *b, ir_stmt *loop, uint32_t axis);
ir_stmt *ir_break(ir_builder *b, ir_stmt *loop);
ir_stmt *ir_continue(ir_builder *b, ir_stmt *loop);
/* Lowered sparse operations. */
ir_stmt *ir_sn_root(ir_builder *b, uint32_t field);
ir_stmt *ir_sn_child(ir_builder *b, uint32_t field, uint32_t level, ir_stmt *cell);
ir_stmt *ir_sn_index(ir_builder *b, uint32_t field, uint32_t level, ir_stmt *const *idx);
ir_stmt *ir_sn_lookup(ir_builder *b, uint32_t field, uint32_t level, int activate,
                      ir_stmt *container, ir_stmt *index);
ir_stmt *ir_sn_field_ptr(ir_builder *b, uint32_t field, uint32_t comp, int activate,
                         ir_stmt *container, ir_stmt *index);
ir_stmt *ir_sn_op(ir_builder *b, int op /* IR_SN_IS_ACTIVE, IR_SN_ACTIVATE, IR_SN_DEACTIVATE */,
                  uint32_t field, uint32_t level, ir_stmt *container, ir_stmt *index);

/* ------------------------------------------------------------------------------ tools */

/* The stable textual form (docs/ir.md, "Printed form"): a header line, then one statement per
 * line indented by nesting, `$N` numbers in pre-order. Renumbers the task. Returns a malloc'd
 * string (free with free()) or NULL when out of memory. */
char *ir_print_task(ir_task *t);
/* The metadata, one access per line (docs/ir.md). malloc'd, or NULL. */
char *ir_print_meta(const ir_task *t);

/* Checks the structure (links, owners, block shapes, task shape), dominance of every operand,
 * loop references (loop_index inside its loop, break/continue to the innermost loop, never
 * breaking a parallel loop), field slots, levels and components, and types (every operand has
 * the type the op needs; no IR_TYPE_INFER left). Returns 0 or writes the first problem into err
 * (task name, $N as printed, op) and returns -1. */
int ir_verify(ir_task *t, char *err, size_t errlen);

/* A 64-bit structural hash of everything that defines the task's behaviour: kind, SNode/field
 * it serves, field descriptors, argument types, gtmp size and the body (ops, types,
 * immediates, operands by position). Equal tasks hash equal; the name does not count. */
uint64_t ir_task_hash(ir_task *t);
/* The same without where each field sits among the fields of its tree (place_offset): equal for
 * one kernel launched on different fields placed in one tree, which the SFG takes as one
 * family when it looks for fusion partners. */
uint64_t ir_task_family_hash(ir_task *t);
/* 1 when a and b are structurally identical (what the hash summarizes), else 0. */
int ir_task_equal(ir_task *a, ir_task *b);

/* A deep copy in a new arena (metadata included); NULL when out of memory. */
ir_task *ir_task_clone(ir_task *t);
/* Copies the statements of block `from` (of task `src`, which may be `dst`'s own) to the end
 * of `to` (a block of `dst`). Operands defined outside `from` are mapped through `outer`:
 * a callback returning the statement of dst to use for the outer statement o (NULL fails).
 * Returns 0, or -1 when out of memory or an outer operand could not be mapped. Field slots are
 * kept as they are. This is what fusion uses to concatenate loop bodies. */
typedef ir_stmt *(*ir_outer_map_fn)(ir_stmt *outer, void *ud);
int ir_block_clone_into(ir_task *dst, ir_block *to, ir_task *src, ir_block *from,
                        ir_outer_map_fn outer, void *ud);

/* Computes t->meta from the (unlowered) IR and sets has_meta. 0, or -1 when out of memory. */
int ir_task_compute_meta(ir_task *t);
/* The access to (kind, field, level) in t->meta, or NULL. */
const ir_access *ir_meta_find(const ir_task_meta *m, int kind, uint32_t field, uint32_t level);

#endif
