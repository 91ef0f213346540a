/* Helpers shared by the pass files of engine/passes (not part of the module's contract). */
#ifndef PLUME_ENGINE_PASSES_INTERNAL_H
#define PLUME_ENGINE_PASSES_INTERNAL_H

#include "engine/passes/passes.h"

/* gtmp_ptr of `elem` at byte `offset` of the buffer whose address is scalar argument `arg`.
 * Built field by field so that it does not depend on the builder's signature. */
ir_stmt *pass_gtmp_ptr(ir_builder *b, ir_type elem, uint32_t arg, uint32_t offset);

/* 1 when the statement changes memory outside the task's own locals (fields, masks, gtmp). */
int pass_global_effect(const ir_stmt *s);
/* 1 when something in the block (nested blocks included) has a global effect. */
int pass_block_has_effect(ir_block *b);

/* Removes statements without effects whose values nobody uses, until none is left: what a
 * pass that deletes stores leaves behind would otherwise keep reads in the metadata. */
void pass_drop_dead(ir_task *t);

/* ir_task_compute_meta, except for a task that touches no state at all, whose (empty)
 * metadata is filled here: engine/ir/meta.c hands qsort a NULL array then, which UBSan
 * rejects. 0, or -1 when out of memory. */
int pass_compute_meta(ir_task *t);

/* 1 when the task reads or writes its kernel's global temporaries. */
int pass_uses_gtmp(const ir_task *t);

/* Atomic updates of fields the task accesses only at its loop's own index become load, op,
 * store (demote_atomics.c). Unlowered IR; metadata computed when missing. 0 or -1 (memory). */
int pass_demote_atomics(ir_task *t, uint32_t *demoted);

/* The tree a bound slot's field lives in, as the SFG names trees (engine/sfg/sfg_ir_meta.h):
 * tree_key - 1 for fields placed together (the engine keys a tree by its first field's id
 * plus one), else the field's own id. */
uint32_t pass_tree_id(const passes_bound *b, uint32_t slot);

/* Copies t (metadata included) or returns NULL. */
ir_task *pass_clone(const ir_task *t);

#endif
