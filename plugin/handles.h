/* Generational handle table: what the host holds as plume_context*, plume_node* and
 * plume_volume* are encoded (kind, slot, generation) values, never raw pointers. A destroyed or
 * foreign handle therefore fails its lookup instead of being dereferenced. Thread-safe (one
 * process-wide mutex; lookups are not on any hot path). */
#ifndef PLUME_PLUGIN_HANDLES_H
#define PLUME_PLUGIN_HANDLES_H

#include <stdint.h>

typedef enum handle_kind { HK_CONTEXT = 1, HK_NODE = 2, HK_VOLUME = 3 } handle_kind;

/* Registers `obj`; returns the opaque handle value, or 0 when out of memory. */
uintptr_t handle_new(handle_kind kind, void *obj);
/* The object, or NULL when h is 0, stale or of another kind. */
void *handle_get(uintptr_t h, handle_kind kind);
/* Forgets h; later lookups of h return NULL. */
void handle_drop(uintptr_t h);
/* A live handle of that kind, or 0 when there is none (the last deinit's clean-up). */
uintptr_t handle_any(handle_kind kind);
/* Frees the table when nothing is registered (called at the last deinit). */
void handle_table_release(void);

#endif
