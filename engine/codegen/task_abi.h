/* task_abi.h — how compiled task code and the engine's executor call each other.
 *
 * This header is the contract between the code generator (engine/codegen/, which emits LLVM
 * functions for lowered IR tasks) and the executor (engine/, which runs them on the CPU pool
 * or, later, on a GPU). Both sides include it; nothing here is a function.
 *
 * Inputs of a task. A task (ir_task after offload and access lowering, engine/ir/ir.h) names
 * fields by slot and scalar parameters by argument number. At launch the executor fills one
 * plm_task_ctx:
 *   - rt[slot]: the sparse runtime (plm_runtime *, sparse/runtime/runtime.h) of the tree that
 *     holds the field bound to that slot. Every field lives in its own tree, so two slots
 *     never share a runtime unless they are bound to the same field.
 *   - rt_field[slot]: that field's id inside its runtime (plm_rt_field index).
 *   - args[n]: scalar argument n in an 8-byte slot: bool, i32 and u32 zero- or sign-extended
 *     into the low bits (read back by truncation), i64 as is, f32 as its bit pattern in the
 *     low 32 bits, f64 as its bit pattern. An argument that carries the address of a kernel's
 *     global temporaries (IR_GTMP_PTR's `index`) holds that address as a u64.
 * SNode ids inside each runtime come from the task's field descriptors
 * (ir_field_info.levels[l].rt_snode) and are compiled in as constants: they are part of the
 * task's IR hash.
 *
 * Entry points. For a task compiled under symbol S the code generator defines, by task kind:
 *   serial       void S(const plm_task_ctx *ctx)
 *                  runs the whole body once, on one thread.
 *   range_for    void S_bounds(const plm_task_ctx *ctx, int64_t out[2])
 *                  evaluates the serial prologue and writes [begin, end) of the loop;
 *                void S(const plm_task_ctx *ctx, int64_t lo, int64_t hi)
 *                  runs the iterations i with lo <= i < hi (the executor passes sub-ranges of
 *                  [begin, end) to many threads at once; the prologue is re-evaluated by each
 *                  call, so offload keeps it free of effects).
 *   struct_for   void S(const plm_task_ctx *ctx, int32_t lo, int32_t hi)
 *                  runs the body for every active element in the containers listed by list
 *                  entries lo <= k < hi of the list of (task field slot, task level): each list
 *                  entry (plm_rt_elem) is a cell of that level whose content holds one leaf
 *                  container; the body runs for each active cell of that container with the
 *                  loop indices set to the cell's coordinates. The executor passes sub-ranges
 *                  of [0, list size) to many threads at once.
 *   clear_list, listgen, gc: no code; the executor calls the sparse runtime's host entry
 *                  points (plm_rt_list_clear, plm_rt_listgen_root/_item, plm_rt_gc_begin/_item).
 *
 * On NVPTX (engine/codegen/task.h, cg_task_build_nvptx) the same functions are kernels
 * (!nvvm.annotations) with the same parameters, every pointer a device pointer (ctx, the
 * arrays it points to, out): serial and S_bounds run on thread 0 of block 0 only (launch them
 * with any grid); range_for S is a grid-stride loop over the intersection of [lo, hi) with
 * the task's bounds, which every thread evaluates itself (so lo = INT64_MIN, hi = INT64_MAX runs
 * the whole loop without a bounds read-back; any grid); struct_for S gives list entry lo + b to
 * block b, striding by the grid, stopping at min(hi, the list's size read on the device), and
 * the block's threads share the entry's cells (any block size).
 *
 * Errors inside tasks never trap: the runtime records them (budget, range) and the executor
 * reads them at the next sync (plm_rt_error). Out-of-range array-free code (division by zero
 * and the like) follows the IR's defined semantics (engine/ir/ir.h). */
#ifndef PLUME_ENGINE_CODEGEN_TASK_ABI_H
#define PLUME_ENGINE_CODEGEN_TASK_ABI_H

#include <stdint.h>

struct plm_runtime;

typedef struct plm_task_ctx {
    struct plm_runtime *const *rt; /* per field slot */
    const int32_t *rt_field;       /* per field slot */
    const uint64_t *args;          /* per scalar argument */
} plm_task_ctx;

typedef void (*plm_task_serial_fn)(const plm_task_ctx *ctx);
typedef void (*plm_task_bounds_fn)(const plm_task_ctx *ctx, int64_t out[2]);
typedef void (*plm_task_range_fn)(const plm_task_ctx *ctx, int64_t lo, int64_t hi);
typedef void (*plm_task_struct_fn)(const plm_task_ctx *ctx, int32_t lo, int32_t hi);

/* The suffix of the bounds function of a range_for task. */
#define PLM_TASK_BOUNDS_SUFFIX "_bounds"

#endif
