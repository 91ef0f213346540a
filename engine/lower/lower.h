/* lower.h — from the checked AST of one kernel (engine/lang/ast.h) to one IR_TASK_KERNEL
 * (engine/ir/ir.h), the input of passes_offload (engine/passes/passes.h).
 *
 * What the kernel task looks like:
 *  - Field slots: the kernel's field parameters in parameter order; fields[i] describes the
 *    i-th field parameter (the caller builds it with ir_field_info_from_layout). Its elem and
 *    components must match the parameter's declared element type (f32 -> f32 x1, vec3 -> f32
 *    x3, i32 -> i32 x1, ...), its dim the declared dimension; otherwise an error.
 *  - Scalar arguments (IR_ARG index): first the kernel's non-field parameters in parameter
 *    order, each split into its components (bool/i32/i64/u32/f32/f64: one; vecN: N f32;
 *    ivecN: N i32; mat3: 9 f32, column-major); then one f32 per field slot, in slot order:
 *    that field's voxel size (what voxel_size(f) reads). task->nargs and task->arg_types say
 *    so. A launch fills the slots in exactly this order (engine/launch.c).
 *  - The IR is scalar: vectors and matrices are split into components; locals become one
 *    alloca per component; functions are inlined; static loops are unrolled.
 *  - A top-level (outermost) parallel range loop becomes an IR_RANGE_FOR with parallel = 1
 *    (an ivec2/ivec3 box becomes one linear range decomposed into x, y, z, the last axis
 *    fastest); a struct-for becomes an IR_STRUCT_FOR over the field's slot. Every other loop is serial.
 *  - `f[i] op= v` marked atomic becomes IR_ATOMIC (per component); in serial code a plain
 *    load/op/store. Reads of inactive elements give the background (global_load semantics).
 *  - Integer / and % are floored (IR_DIV/IR_MOD); && || and ?: evaluate only what the language
 *    says they evaluate: a side without a user-function call has no effect and cannot fault
 *    (field reads give the background outside the active set or the range), so it is
 *    evaluated unconditionally (IR_AND/IR_OR, IR_SELECT); a side with a call runs under an
 *    IR_IF and hands its value over through allocas.
 *  - A variable never assigned after its declaration (loop variables, parameters, most locals)
 *    is the SSA value of its initializer; an assigned one is one alloca per component.
 *  - Components: v[i] with a constant i (static loop variables included) picks the component;
 *    a dynamic read is a select chain (an index out of range reads the last component), a
 *    dynamic write an if-chain with one branch per component (out of range writes nothing).
 *  - Loops: `while (c) s` is IR_WHILE { if (!c) break; s }; a serial ivec box is a nest of
 *    serial range loops, z outermost, x innermost; a parallel ivec box is one i64 range over
 *    the extents (clamped at 0, folded when constant), x = lo.x + i % ex, and so on. Leaving
 *    several IR loops at once (break of a box, return from inside loops) sets a bool flag
 *    alloca placed before the loop being left and breaks level by level.
 *  - Calls are inlined. A function whose only return is its last statement leaves its value
 *    in SSA; any other runs in a one-shot IR_WHILE whose returns store the value and break.
 *    Static loops are unrolled; code after a break, continue or return is not emitted.
 * The result is verified (ir_verify) and has no metadata (offload computes it).
 *
 * Ownership: *out belongs to the caller (ir_task_free). prog and fields are only read.
 * Threads: no global state; different kernels may be lowered on different threads at once
 * (a checked program is read-only).
 * Errors: 0, or -1 with a message in err ("file:line:col: error: kernel 'k': ...") — a field descriptor
 * that does not match, an unsupported construct, out of memory. Nothing aborts. */
#ifndef PLUME_ENGINE_LOWER_H
#define PLUME_ENGINE_LOWER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/ir/ir.h"
#include "engine/lang/ast.h"

int lower_kernel(const pk_program *prog, const pk_func *kernel, const ir_field_info *fields,
                 uint32_t nfields, ir_task **out, char *err, size_t n);

/* Number of IR scalar arguments of the kernel's non-field parameters (before the per-field
 * voxel sizes). */
uint32_t lower_scalar_arg_count(const pk_func *kernel);

#endif
