/* sfg_ir_meta.h — the one adapter between the IR's offload metadata (ir_task_meta,
 * engine/ir/ir.h) and the SFG's (sfg_task_meta). For the engine glue's `meta` op.
 *
 * The IR names fields by kernel slot and SNodes by (field, level); the SFG needs global states,
 * so the mapping takes the launch's binding of slots to the engine's field ids and tree ids. A
 * tree is named by the id of its first field (a field alone in its tree: its own id), and its
 * SNodes by SNode id = tree id * 16 + level, so fields placed in one tree share their mask,
 * list and allocator states. Pure function, any thread. */
#ifndef PLUME_ENGINE_SFG_IR_META_H
#define PLUME_ENGINE_SFG_IR_META_H

#include "engine/ir/ir.h"
#include "engine/sfg/sfg.h"

#define SFG_SNODE_ID(tree_id, level) ((uint32_t)(tree_id) * 16u + (uint32_t)(level))

typedef struct sfg_ir_binding {
    const uint32_t *field_id;  /* per field slot: the engine's field id (< 2^26) */
    uint32_t n_fields;
    uint32_t gtmp_state;       /* value-state id standing for the kernel's global temporaries;
                                * must not collide with a field id */
    const uint32_t *tree_id;   /* per field slot: the tree's id; NULL: each field its own tree */
} sfg_ir_binding;

/* Fills *out from *im; out->access points into buf (cap entries, >= im->naccess suffices).
 * Two slots bound to the same field become one access (READ/WRITE or-ed, the other flags kept
 * only when both have them). SFG_EINVAL when the task kind has no SFG type (a whole kernel), a
 * slot is unbound, a level is >= 16 or buf is too small. */
int sfg_meta_from_ir(const ir_task_meta *im, const sfg_ir_binding *b, sfg_access *buf,
                     uint32_t cap, sfg_task_meta *out);

#endif
