/* task.h — from a lowered IR task (engine/ir/ir.h) to LLVM functions with the entry points of
 * task_abi.h, for the CPU JIT (jit.h) and for NVPTX (ptx.h).
 *
 * Input. A task of kind serial, range_for or struct_for after offload and access lowering:
 * fields are reached through sn_* statements (no global_ptr, is_active, activate or deactivate
 * is left; a task that never touched a field is accepted as it is). Field slot s at level l is
 * SNode task->fields[s].levels[l].rt_snode of the runtime the executor binds to slot s: those ids
 * are compiled in. Everything else about the geometry (offsets, strides, shifts) is read from
 * that runtime at run time, once per call, so code stays correct for any layout with the same
 * chain of kinds and sizes.
 *
 * Output (task_abi.h has the full contract), for symbol S:
 *   serial      void S(const plm_task_ctx *)
 *   range_for   void S_bounds(const plm_task_ctx *, int64_t out[2]) and
 *               void S(const plm_task_ctx *, int64_t lo, int64_t hi)
 *   struct_for  void S(const plm_task_ctx *, int32_t lo, int32_t hi) over list entries
 * On NVPTX the same functions are kernels (marked in !nvvm.annotations) with the same
 * parameters, all pointers being device pointers: serial and S_bounds run their body on thread 0
 * of block 0 only; range_for is a grid-stride loop over [lo, hi); struct_for gives each list
 * entry in [lo, hi) to one block (grid-stride over blocks), whose threads share its cells.
 *
 * Semantics follow ir.h: integers wrap; integer div/mod are floored and x/0 = x%0 = 0 (INT_MIN /
 * -1 = INT_MIN, no trap); shift counts are taken modulo the width; float min/max ignore a NaN
 * operand (minnum/maxnum); float->int casts saturate (NaN -> 0); pow/exp/log/sin/cos/tan/atan2
 * are LLVM intrinsics or libm calls on the CPU (the JIT resolves libm in the process) and
 * libdevice calls (__nv_*) on NVPTX; atomics are atomicrmw, with compare-and-swap loops for mul,
 * div and float min/max; a global_load through a NULL sn_field_ptr (inactive element) reads the
 * field's background (plm_rt_field.background, converted to the element type); an access whose
 * index is outside the field's range reads the background, and a write there goes to the
 * runtime's value sink with PLM_RT_ERR_RANGE recorded.
 *
 * Threads. cg_emit_task only reads the task; several threads may emit the same task into
 * different contexts at once. LLVM objects are used on the calling thread only.
 *
 * Errors. 0, or -1 with one message in err naming the task and the statement as printed
 * ("task 'k#1' $7 (sn_lookup): ..."). Nothing aborts. */
#ifndef PLUME_ENGINE_CODEGEN_TASK_H
#define PLUME_ENGINE_CODEGEN_TASK_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "engine/codegen/jit.h"
#include "engine/codegen/task_abi.h"

struct ir_task;

typedef enum cg_target_kind { CG_TARGET_CPU = 0, CG_TARGET_NVPTX = 1 } cg_target_kind;

/* Adds the task's entry points to mod (which has its triple and data layout set). */
int cg_emit_task(LLVMContextRef ctx, LLVMModuleRef mod, struct ir_task *t, const char *symbol,
                 cg_target_kind target, char *err, size_t n);

/* The symbol cg_task_build* use, and its bounds function for range_for tasks. */
#define CG_TASK_SYMBOL "plm_task"
#define CG_TASK_BOUNDS_SYMBOL "plm_task" PLM_TASK_BOUNDS_SUFFIX

/* jit_build_fn / ptx_emit builders: user is the ir_task; the entry points are named
 * CG_TASK_SYMBOL (and CG_TASK_BOUNDS_SYMBOL). */
int cg_task_build(void *task, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n);
int cg_task_build_nvptx(void *task, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n);

/* A JIT request for the task: key = ir_task_hash(t), build = cg_task_build, user = t, the
 * symbols its kind defines. After the wait, addrs[0] is S (plm_task_serial_fn,
 * plm_task_range_fn or plm_task_struct_fn by kind) and, for range_for, addrs[1] is S_bounds
 * (plm_task_bounds_fn). addrs (2 entries) and result must outlive the wait; t must not change
 * until then. -1 for a task kind that has no code (clear_list, listgen, gc, kernel). */
int cg_task_request(struct ir_task *t, void *addrs[2], jit_result *result, jit_request *req,
                    char *err, size_t n);

#endif
