/* Visiting the active cells of one SNode without a list.
 *
 * List generation (runtime.h) writes its lists into arena chunks, so once the budget is spent a
 * list can no longer be made, and host code that found blocks through lists (clearing a field,
 * filling it with its background, counting its blocks) silently saw nothing: the state after a
 * budget error, exactly when a host frees memory to recover. plm_rt_walk reaches the same cells
 * from the root through the containers themselves, allocating nothing.
 *
 * Order: the order a serial plm_rt_listgen gives (parents in their list's order, then cells in
 * container order), so callers that depended on a list's order see the same one.
 * Threading: host code, one thread, nothing changing the tree meanwhile. fn may read and write
 * cell values, and must not activate or deactivate anything while the walk runs. */
#ifndef PLUME_SPARSE_WALK_H
#define PLUME_SPARSE_WALK_H

#include "sparse/runtime/runtime.h"

/* e holds the cell as a list entry would (cell content, user coordinate of its first voxel,
 * index in its container); a non-zero return stops the walk and is returned. */
typedef int (*plm_rt_walk_fn)(void *user, const plm_rt_elem *e);

int plm_rt_walk(plm_runtime *rt, int32_t snode, plm_rt_walk_fn fn, void *user);

#endif
