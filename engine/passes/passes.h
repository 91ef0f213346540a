/* passes.h — the IR passes between the kernel lowering (engine/lower) and the code generator
 * (engine/codegen), and the IR operations the state-flow graph (engine/sfg) calls on tasks.
 *
 * Pipeline, per kernel and field layout set (engine/launch.c):
 *   lower_kernel -> [opt_run] -> passes_offload  -> tasks (ir_task, unlowered, with metadata)
 *   per launch binding: passes_bound_create(task, field ids, gtmp state) -> sfg_bank_intern
 *   at a flush the SFG calls passes_sfg_ops() on bound tasks (fuse, demote, remove stores)
 *   per surviving task: passes_prepare_codegen -> cg_task_request (engine/codegen/task.h)
 *
 * Ownership. Functions never take ownership of their inputs unless they say so; every task or
 * bound task they return belongs to the caller (ir_task_free / passes_bound_free). The SFG bank
 * owns the bound tasks handed to it and frees them through the ops' free_ir.
 *
 * Threads. No global state: different tasks may be processed on different threads at once; a
 * task or bound task is used by one thread at a time (the SFG calls its ops on the engine's
 * context thread).
 *
 * Errors. 0 on success, -1 with a message naming the place ("offload 'k' $7 (load): ...") in
 * the caller's buffer. Nothing here aborts. */
#ifndef PLUME_ENGINE_PASSES_H
#define PLUME_ENGINE_PASSES_H

#include <stddef.h>
#include <stdint.h>

#include "engine/ir/ir.h"
#include "engine/sfg/sfg.h"
#include "sparse/layout.h"

/* ---- field descriptors ---------------------------------------------------------------- */

/* The IR's view of field `field` of a parsed layout: the SNode chain from the root down to the
 * field's leaf (kinds, log2 cells per axis, runtime SNode ids), elem f32, the field's
 * components, and dim = 1 + the highest axis any level of the chain splits (0 for a chain of
 * one-cell nodes: a 0-D field). -1 with a message for a bad id or a chain deeper than
 * IR_MAX_LEVELS. */
int ir_field_info_from_layout(const plm_layout *layout, int field, ir_field_info *out,
                              char *err, size_t n);

/* Copies into out (whose levels' rt_snode ids are set) the geometry of those SNodes and the
 * placement of field `field` from cfg, marking it known (see ir_geom in ir.h). */
void ir_field_info_set_geometry(ir_field_info *out, const plm_rt_config *cfg, int field);

/* ---- offload --------------------------------------------------------------------------- */

/* Splits an IR_TASK_KERNEL (left unchanged) into the tasks that run it, in launch order:
 *  - consecutive top-level statements other than parallel loops -> one serial task (dropped
 *    when it has no effect: pure code whose values later tasks recompute);
 *  - a top-level parallel range_for -> a range_for task whose prologue computes the bounds;
 *  - a top-level struct_for over slot f -> clear_list + listgen for each level 1..leaf-1 of
 *    f's chain (root down), then the struct_for task (field f, level leaf-1);
 *    Accesses to f[I] at exactly its loop index get every sparse level `demoted` (the loop
 *    visits active elements only) unless the task deactivates cells of f;
 *  - after a task that deactivates cells of a pointer or dynamic level: a gc task for it.
 * Values crossing tasks: pure expressions of constants and arguments are recomputed where
 * used; any other SSA value is stored by its producer into the kernel's global temporaries and
 * loaded (in the prologue of loop tasks) by its consumers; a top-level alloca used by several
 * tasks becomes a zeroed gtmp slot. When temporaries are used every task gets one more trailing
 * i64 argument (the buffer's address; IR_GTMP_PTR.index names it) and gtmp_bytes = the buffer
 * size. Every task is named "<kernel>#<i>", verified and has its metadata computed.
 * *tasks is a malloc'd array (free it, and each task with ir_task_free). */
int passes_offload(ir_task *kernel, ir_task ***tasks, uint32_t *ntasks, char *err, size_t n);

/* ---- access lowering ------------------------------------------------------------------- */

/* Rewrites t in place: global_ptr, is_active, activate and deactivate become per-level chains
 * sn_root -> (sn_child, sn_index, sn_lookup)* -> sn_child, sn_index -> sn_field_ptr /
 * sn_is_active / sn_activate / sn_deactivate (the shape the code generator's fast paths
 * recognize). A global_ptr used by a store or an atomic activates the sparse levels on its way
 * (except levels whose `demoted` bit is set); one only read does not (NULL propagates and the
 * load gives the background). Metadata is left as it was (computed on unlowered IR). */
int passes_lower_access(ir_task *t, char *err, size_t n);

/* ---- what the code generator consumes --------------------------------------------------- */

/* *out = a lowered copy of t: clone -> access lowering -> the scalar optimizer (engine/opt)
 * when it is part of the build -> ir_verify. t is not changed. */
int passes_prepare_codegen(const ir_task *t, ir_task **out, char *err, size_t n);

/* ---- bound tasks: the IR objects the SFG bank holds ------------------------------------ */

/* Most field slots a bound task may have (the executor's per-task tables are this long). */
#define PASSES_MAX_SLOTS 64

/* An offloaded task plus the launch's binding of its field slots to the engine's fields (SNode
 * id = field id * 16 + level, engine/sfg/sfg_ir_meta.h) and the SFG value-state id standing
 * for its kernel's global temporaries. Owns task and field_id. */
typedef struct passes_bound {
    ir_task *task;
    uint32_t nfields;
    uint32_t *field_id;   /* engine field id per slot */
    uint32_t gtmp_state;
    /* private: sfg_access buffer the meta op fills (valid until the next op call) */
    void *meta_buf;
    uint32_t meta_cap;
} passes_bound;

/* A bound task holding a clone of `task` (which stays the caller's); nfields must equal
 * task->nfields and be at most PASSES_MAX_SLOTS. Computes the clone's metadata when it has
 * none. NULL when out of memory or the arguments do not match. */
passes_bound *passes_bound_create(const ir_task *task, const uint32_t *field_id,
                                  uint32_t nfields, uint32_t gtmp_state);
/* Takes ownership of task (freed on failure too). */
passes_bound *passes_bound_adopt(ir_task *task, const uint32_t *field_id, uint32_t nfields,
                                 uint32_t gtmp_state);
void passes_bound_free(passes_bound *b);
passes_bound *passes_bound_clone(const passes_bound *b);
/* ir_task_hash mixed with the binding and the gtmp argument numbers. */
uint64_t passes_bound_hash(const passes_bound *b);

/* ---- the SFG's IR operations on bound tasks (sfg.h, sfg_ir_ops) ------------------------- */

/* The fused task (see sfg_ir_ops.fuse): a and b of the same kind and iteration set (both
 * serial; range_for over the same constant range and bound type; struct_for over the same
 * engine field and level). The result runs a's body then b's per iteration; its slots are a's,
 * then b's slots not bound to a field a already has; b's scalar arguments (IR_ARG and
 * IR_GTMP_PTR indices) follow a's, except those m (may be NULL) says equal one of a's: b's
 * body reads a's instead, so what both compute from them is computed once. NULL (declined)
 * for anything else: different kinds or ranges, more than PASSES_MAX_SLOTS slots, two kernels'
 * global temporaries, two heavy bodies sharing no work (below). */
passes_bound *passes_fuse(const passes_bound *a, const passes_bound *b, const sfg_arg_match *m);
/* Fusion of two tasks that both have more statements than PASSES_FUSE_HEAVY is declined unless
 * the fused body, optimized, has at most PASSES_FUSE_SHARED percent of their statements
 * together: the bodies share work the optimizer now does once (advection kernels of several
 * fields tracing the same paths through one velocity). Measured (2-core CPU,
 * one process, the smoke solver's kernels on a frame-12 state): the two scalar backward steps
 * (~390 statements each) and the velocity's forward step (~1250) took 47.6 ms as three tasks
 * and 63.0 ms as one loop running the three bodies per voxel. A small body joining a large one
 * (a correction after its step, a copy) keeps what fusion gives: no launch, no second pass over
 * the list, values forwarded in registers. */
#define PASSES_FUSE_HEAVY 300u
#define PASSES_FUSE_SHARED 80u
/* Sets the `demoted` bit of `level` of SNode (field id * 16 + level) on every global_ptr and
 * activate of slots bound to that field. NULL when nothing changed. */
passes_bound *passes_demote(const passes_bound *b, uint32_t snode);
/* Without its stores (and atomics, whose old value then comes from a load) to value state
 * `state` (a field id, or the gtmp state); the activations they implied stay as activate
 * statements. *empty = 1 when the result has no effect left. NULL when nothing changed. */
passes_bound *passes_remove_stores(const passes_bound *b, sfg_state state, int *empty);

/* The table for sfg_bank_create: ud unused, ir = passes_bound *. */
sfg_ir_ops passes_sfg_ops(void);

#endif
