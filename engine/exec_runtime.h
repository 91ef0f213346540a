/* exec_runtime.h — the runtime's own tasks (clear_list, listgen, gc) run on the CPU pool.
 *
 * These tasks have no generated code (engine/codegen/task_abi.h): the executor calls the sparse
 * runtime's host entry points directly, splitting list generation and garbage collection into
 * work items that the pool's threads take in parallel.
 *
 * Threads: the engine's context thread calls these with nothing else running on the tree (the
 * executor runs one task at a time; inside a task the pool's workers run the items). Errors of
 * the runtime (budget) are recorded in the tree and read at the next sync. */
#ifndef PLUME_ENGINE_EXEC_RUNTIME_H
#define PLUME_ENGINE_EXEC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "engine/backend/cpu_pool.h"
#include "sparse/runtime/runtime.h"

/* Empties list(snode). */
void exec_clear_list(plm_runtime *rt, int32_t snode);
/* Appends to list(snode) the active cells found in the containers of list(parent(snode));
 * for a child of the root, list(root) is (re)made first. With `ordered` the work items run one
 * after the other on the calling thread, so the list's order is that of list(parent) and the
 * cells' index (the parallel appends race for slots). Returns 0, or -1 with err filled when
 * the pool fails. */
int exec_listgen(cpu_pool *pool, plm_runtime *rt, int32_t snode, int ordered, char *err,
                 size_t err_size);
/* Returns the cells recycled since the last collection of snode to its free list, zero-filled. */
int exec_gc(cpu_pool *pool, plm_runtime *rt, int32_t snode, char *err, size_t err_size);

#endif
