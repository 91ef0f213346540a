/* Internals of libplume.so shared by the plugin's files: contexts, nodes, node types.
 * Everything here runs on the thread that called into the ABI for that context. */
#ifndef PLUME_PLUGIN_INTERNAL_H
#define PLUME_PLUGIN_INTERNAL_H

#include "engine/engine.h"
#include "engine/kernel.h"

/* Tasks queued before the optimizer runs on its own (plume_context_options.flush_every = 0). */
#define PL_DEFAULT_FLUSH_EVERY 1024
#include "plume/plume.h"

#include <stdint.h>

#define PLUME_VERSION_STRING "0.1.0"

typedef struct pl_node pl_node;
typedef struct pl_context pl_context;

/* What a node's cook sees: its context, the time, and its ports resolved to fields
 * (NULL for an optional port left unbound). */
typedef struct pl_cook_env {
    pl_context *ctx;
    const plume_cook_info *info;
    eng_field **port_fields; /* one per instance port */
} pl_cook_env;

typedef struct pl_node_type {
    plume_node_desc desc;
    /* Enqueue (or do) the node's work; returns a plume_status, after pl_fail on error. */
    plume_status (*cook)(pl_node *node, pl_cook_env *env);
    /* Optional: called after parameter `index` got a new value (the kernel node compiles its
     * code here, so errors show where the TD sets the code). An error keeps the new value. */
    plume_status (*param_changed)(pl_node *node, uint32_t index);
    /* Optional: a setter for a parameter the type does not declare (the kernel node's scalar
     * parameters come from its code). num has 3 entries (bool/int/float use num[0]). */
    plume_status (*set_extra)(pl_node *node, const char *id, plume_param_type type,
                              const double *num, const char *str);
    /* Optional: the type's own checks before any work, after the ports' (fields[i] is port i's
     * field, NULL when unbound): what its cook would refuse at once. Changes nothing. */
    plume_status (*validate)(pl_node *node, eng_field *const *fields);
} pl_node_type;

/* Replaces an instance's ports (the type's static ones unless set): bindings of ports whose id
 * stays are kept. `ports` must outlive the node or the next call. */
plume_status pl_node_set_ports(pl_node *n, const plume_port_desc *ports, uint32_t count);

/* A parameter's current value; which member counts follows the parameter's type. */
typedef struct pl_value {
    double num;
    double vec[3];
    char *str;
} pl_value;

struct pl_node {
    uintptr_t handle;
    pl_context *ctx;
    const pl_node_type *type;
    char *name;
    pl_value *values;   /* one per type param */
    char **bindings;    /* one per instance port; NULL = unbound (use the default field) */
    uint32_t nports;
    const plume_port_desc *ports; /* the type's static ports unless the node adds its own */
    void *state;        /* node-type-owned */
    void (*free_state)(void *state);
    unsigned warned;    /* node-type-owned bits: warnings given once per node */
};

struct pl_context {
    uintptr_t handle;
    eng_context *eng;
    plume_host host;
    plume_context_options opts;
    plume_device device;
    char device_name[256];
    char device_note[256];
    pl_node **nodes;
    uint32_t nnodes, capnodes;
    /* names of nodes destroyed since the last checkpoint load (malloc'd): a node made under one
     * of them clears the scratch fields its predecessor left; fields a checkpoint restored are
     * no predecessor's */
    char **retired;
    uint32_t nretired;
    struct pl_volume *volumes; /* open volume views, a list */
    char err[16384]; /* 20 diagnostics with their source lines fit */
    /* err starts with the node to fix, another than the one cooking: a kernel's runtime error
     * that the cooking node's sync found (pl_fail_naming_node). The node's own name is not put
     * in front of it. */
    int err_names_node;
    plume_stats stats;
    struct ckpt_job *ckpt_pending; /* save_begin's write in flight (ext_checkpoint.c) */
    /* files written on a thread while the host cooks on (ext_deferred.c, write_queue.h): the
     * queue, made at the first set(1) and kept until the context goes; whether nodes use it */
    struct pl_write_queue *writes;
    int deferred_writes;
    /* progress: where the current cook is ("frame 3, substep 2/4"), for the engine's reports
     * during it and the sync after; when the host was last told (pl_progress throttles) */
    char progress_at[96];
    double progress_last;
    /* err as it was before a call refused inside one of this context's host callbacks
     * (pl_refuse_in_callback); put back when the callback returns, so the outer call's own
     * message survives. NULL otherwise. */
    char *err_saved;
    int err_saved_names_node;
    int callback_depth; /* host callbacks of this context under way (context.c) */
    /* while a node cooks, failures are logged once it returns, with the node's name in front
     * (pl_node_cook): held = a failure came meanwhile */
    int hold_error_log, error_log_held;
};

/* Waits for the context's pending checkpoint write (save_begin), if any: its failure is
 * returned when `report`, else logged. Context thread (ext_checkpoint.c). */
plume_status pl_checkpoint_wait(pl_context *ctx, int report);

/* Host callbacks may not call back into their own context (it is in the middle of a call):
 * only last_error, context_info, get_stats and discovery may. pl_in_callback says whether this
 * thread is inside one of ctx's callbacks; pl_refuse_in_callback then fails the call `fn`
 * (PLUME_ERR_INVALID_ARGUMENT) without logging, which would call the host again. */
int pl_in_callback(const pl_context *ctx);
int pl_in_any_callback(void); /* of any context: deinit is refused there */
plume_status pl_refuse_in_callback(pl_context *ctx, const char *fn);

/* Records the context's last error (also sent to the host's log at ERROR level) and returns
 * `status`. ctx may be NULL: the message then goes to the thread's context-less slot. */
plume_status pl_fail(pl_context *ctx, plume_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends the context's current message to the host's log, as pl_fail does (ERROR, or INFO
 * for a cancel). */
void pl_log_error(pl_context *ctx, plume_status status);
/* Logs `text` as it is (any length, several lines; trailing newlines dropped). */
void pl_log_text(pl_context *ctx, plume_log_level level, const char *text);
void pl_log(pl_context *ctx, plume_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Tells the host's progress callback, at most ten times a second (calls in between are
 * dropped); "STAGE" becomes "PROGRESS_AT: STAGE" while a cook's place is known. */
void pl_progress(pl_context *ctx, double fraction, const char *stage);
int pl_cancelled(pl_context *ctx);
/* The engine's message and its status; a runtime error that names its kernel's node
 * (eng_error_origin) is recorded as pl_fail_naming_node does. */
plume_status pl_from_engine(pl_context *ctx, int eng_rc);
/* pl_fail with `text` as it is, a message that starts with the node to fix (err_names_node). */
plume_status pl_fail_naming_node(pl_context *ctx, plume_status status, const char *text);
/* The longest node name node_create takes (bytes): its scratch fields' names add to it. */
#define PL_NODE_NAME_MAX 200

/* The status an engine code stands for (pl_from_engine's, without reporting anything). */
plume_status pl_status_of_engine(int eng_rc);
/* Marks p's kernels as n's ("node 'NAME' (TYPE)"), so a kernel's write outside its field or
 * past the budget, found at whichever node syncs next, names n (eng_program_set_origin). Call
 * before any of p's kernels is launched. */
void pl_node_owns_program(pl_node *n, eng_program *p);

/* Parameter lookups for cooks (the parameter must exist on the node's type). */
double pl_param_num(const pl_node *n, const char *id);
const double *pl_param_vec3(const pl_node *n, const char *id);
const char *pl_param_str(const pl_node *n, const char *id);

/* The registry of built-in node types. */
uint32_t pl_registry_count(void);
const pl_node_type *pl_registry_get(uint32_t i);
const pl_node_type *pl_registry_find(const char *id);

/* ABI entry points implemented in context.c, node.c, volume.c (named like the table). */
const char *pl_last_error(const plume_context *ctx);
plume_status pl_context_create(const plume_context_options *o, const plume_host *h,
                               plume_context **out);
void pl_context_destroy(plume_context *ctx);
plume_status pl_context_info(plume_context *ctx, plume_context_info *out);
plume_status pl_field_declare(plume_context *ctx, const plume_field_desc *d);
plume_status pl_field_stat(plume_context *ctx, const char *field, plume_field_stat stat,
                           double *out);
plume_status pl_cook(plume_context *ctx, plume_node *const *nodes, uint32_t count,
                     const plume_cook_info *info);
plume_status pl_sync(plume_context *ctx);
plume_status pl_get_stats(plume_context *ctx, plume_stats *out);
pl_context *pl_context_get(const plume_context *ctx);

plume_status pl_node_create(plume_context *ctx, const char *type_id, const char *name,
                            plume_node **out);
void pl_node_destroy(plume_node *node);
void pl_node_free(pl_node *n);
/* Empties ctx->retired (a checkpoint was loaded, or the context goes). */
void pl_context_forget_retired(pl_context *ctx);
pl_node *pl_node_get(const plume_node *node);
plume_status pl_node_set_bool(plume_node *node, const char *param, int32_t v);
plume_status pl_node_set_int(plume_node *node, const char *param, int64_t v);
plume_status pl_node_set_float(plume_node *node, const char *param, double v);
plume_status pl_node_set_vec3(plume_node *node, const char *param, const double v[3]);
plume_status pl_node_set_string(plume_node *node, const char *param, const char *v);
plume_status pl_node_bind(plume_node *node, const char *port, const char *field);
plume_status pl_node_port_count(plume_node *node, uint32_t *out);
plume_status pl_node_port(plume_node *node, uint32_t i, const plume_port_desc **out);
plume_status pl_node_cook(pl_node *n, const plume_cook_info *info);
/* plume.validate/1: the checks pl_node_cook makes before any work, without cooking. */
plume_status pl_node_validate(plume_node *node);

plume_status pl_volume_open(plume_context *ctx, const char *field, plume_volume **out);
void pl_volume_close(plume_volume *vol);
void pl_volumes_close_all(pl_context *ctx);
plume_status pl_volume_info(plume_volume *vol, plume_volume_info *out);
plume_status pl_volume_block_origins(plume_volume *vol, uint64_t first, uint32_t count,
                                     int32_t *origins);
plume_status pl_volume_read_block(plume_volume *vol, const int32_t origin[3], float *values,
                                  uint64_t *mask);
plume_status pl_volume_write_block(plume_volume *vol, const int32_t origin[3],
                                   const float *values, const uint64_t *mask);
plume_status pl_volume_clear(plume_volume *vol);

const void *pl_get_extension(const char *id);
/* "plume.checkpoint/1" (ext_checkpoint.c), "plume.deterministic/1" (ext_deterministic.c) and
 * "plume.deferred_writes/1" (ext_deferred.c); entry.c serves them besides pl_get_extension's. */
extern const plume_ext_checkpoint pl_ext_checkpoint;
extern const plume_ext_deterministic pl_ext_deterministic;
/* "plume.deferred_writes/1" (ext_deferred.c) */
extern const plume_ext_deferred_writes pl_ext_deferred_writes;
/* "plume.validate/1" (node.c) */
extern const plume_ext_validate pl_ext_validate;

#endif
