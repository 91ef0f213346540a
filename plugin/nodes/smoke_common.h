/* smoke_common.h — what the smoke solver's nodes (smoke_*.c) share: the embedded kernels of
 * plugin/kernels/smoke.pk compiled once per node, scratch fields a node owns, launches by
 * kernel name, and the checks that the fields of one solver share one grid.
 *
 * Threads: the context's thread only, as for every cook. Ownership: the program and the
 * scratch fields belong to the engine context (they live until it is destroyed); the state
 * below belongs to the node and is freed with it. */
#ifndef PLUME_NODES_SMOKE_COMMON_H
#define PLUME_NODES_SMOKE_COMMON_H

#include "engine/kernel.h"
#include "plugin/plugin.h"

#define SMOKE_MAX_SCRATCH 16

typedef struct smoke_state {
    eng_context *eng;  /* where prog was compiled */
    eng_program *prog; /* smoke.pk, compiled at the first cook; released when the node goes */
    eng_field *scratch[SMOKE_MAX_SCRATCH];
    char *loaded; /* what a node that reads a file last read into its scratch (malloc'd) */
    int warned_band; /* an emitter said once that its falloff is wider than its level set's band */
} smoke_state;

/* The node's state, created on first use (NULL only when out of host memory). */
smoke_state *smoke_state_of(pl_node *n);
/* Frees what a smoke_state holds (not s itself): its programs go back to the engine, so that a
 * host rebuilding its graph does not keep every destroyed node's compiled kernels. */
void smoke_state_release(smoke_state *s);

/* Launches kernel `name` of smoke.pk with one argument per kernel parameter. */
plume_status smoke_launch(pl_node *n, pl_cook_env *env, const char *name, const eng_arg *args,
                          uint32_t nargs);

/* How long a scratch field's values matter. SMOKE_PER_COOK: within one cook of the node only
 * (each cook writes, or prunes to the background, whatever it reads before reading it), so a
 * checkpoint keeps the field's declaration and not its blocks (eng_field_set_transient);
 * SMOKE_KEPT: from one cook to the next (the pressure that warm-starts the next solve, an
 * emitter shape read from a file once), or read before written and relying on the last cook
 * to have emptied it (the topology marks). tests/cli/ckpt_poison.c fills the per-cook ones
 * of a checkpoint with garbage, and a bake resumed from it must not change. */
typedef enum smoke_life { SMOKE_PER_COOK, SMOKE_KEPT } smoke_life;

/* Scratch field `slot` of the node, named "<node>:<suffix>", on the same grid as `like`
 * (voxel size, origin), background 0; dim 0 gives a 0-D scalar. Declared at first use. */
plume_status smoke_scratch(pl_node *n, pl_cook_env *env, int slot, const char *suffix,
                           const eng_field *like, eng_type type, int dim, smoke_life life,
                           eng_field **out);

/* The same with `scale` times `like`'s voxel size (same origin): voxel J of the scratch field
 * stands for voxels scale * J .. scale * J + scale - 1 of `like` along each axis. */
plume_status smoke_scratch_scaled(pl_node *n, pl_cook_env *env, int slot, const char *suffix,
                                  const eng_field *like, int scale, eng_type type, int dim,
                                  smoke_life life, eng_field **out);

/* Fails unless every non-NULL field of `fields` has the voxel size and origin of the first. */
plume_status smoke_same_grid(pl_node *n, pl_cook_env *env, eng_field *const *fields,
                             uint32_t count);

/* Keeps scratch field q free of blocks outside vel's domain (stencils at the domain's edge
 * would read stale values there). */
plume_status smoke_prune(pl_node *n, pl_cook_env *env, eng_field *vel, eng_field *q);

static inline eng_arg smoke_field_arg(eng_field *f)
{
    eng_arg a = {0};
    a.field = f;
    return a;
}

static inline eng_arg smoke_num(double v)
{
    eng_arg a = {0};
    a.f[0] = v;
    a.i[0] = (int64_t)v;
    return a;
}

static inline eng_arg smoke_vec(double x, double y, double z)
{
    eng_arg a = {0};
    a.f[0] = x, a.f[1] = y, a.f[2] = z;
    a.i[0] = (int64_t)x, a.i[1] = (int64_t)y, a.i[2] = (int64_t)z;
    return a;
}

#endif
