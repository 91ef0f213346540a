/* Shared machinery of the smoke solver's nodes (smoke_common.h). */
#include "plugin/nodes/smoke_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* plugin/kernels/smoke.pk, embedded by plugin/CMakeLists.txt */
extern const unsigned char pk_smoke_bytes[];
extern const size_t pk_smoke_size;

void smoke_state_release(smoke_state *s)
{
    if (!s)
        return;
    free(s->loaded);
    s->loaded = NULL;
    if (s->prog)
        eng_program_release(s->eng, s->prog);
    s->prog = NULL;
}

static void state_free(void *p)
{
    smoke_state_release(p);
    free(p);
}

smoke_state *smoke_state_of(pl_node *n)
{
    if (!n->state) {
        n->state = calloc(1, sizeof(smoke_state));
        n->free_state = state_free;
    }
    return n->state;
}

static plume_status program(pl_node *n, pl_cook_env *env, eng_program **out)
{
    smoke_state *s = smoke_state_of(n);
    if (!s)
        return pl_fail(env->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    if (!s->prog) {
        s->eng = env->ctx->eng;
        int rc = eng_program_compile(env->ctx->eng, "plugin/kernels/smoke.pk",
                                     (const char *)pk_smoke_bytes, pk_smoke_size, &s->prog);
        if (rc)
            return pl_from_engine(env->ctx, rc);
        pl_node_owns_program(n, s->prog);
    }
    *out = s->prog;
    return PLUME_OK;
}

plume_status smoke_launch(pl_node *n, pl_cook_env *env, const char *name, const eng_arg *args,
                          uint32_t nargs)
{
    eng_program *p = NULL;
    plume_status st = program(n, env, &p);
    if (st != PLUME_OK)
        return st;
    eng_kernel *k = eng_program_find(p, name);
    if (!k)
        return pl_fail(env->ctx, PLUME_ERR_INTERNAL, "node '%s': smoke.pk has no kernel '%s'",
                       n->name, name);
    if (eng_kernel_param_count(k) != nargs)
        return pl_fail(env->ctx, PLUME_ERR_INTERNAL,
                       "node '%s': kernel '%s' takes %u arguments, the node passes %u", n->name,
                       name, eng_kernel_param_count(k), nargs);
    int rc = eng_launch(env->ctx->eng, k, args, nargs);
    return rc ? pl_from_engine(env->ctx, rc) : PLUME_OK;
}

plume_status smoke_scratch(pl_node *n, pl_cook_env *env, int slot, const char *suffix,
                           const eng_field *like, eng_type type, int dim, smoke_life life,
                           eng_field **out)
{
    return smoke_scratch_scaled(n, env, slot, suffix, like, 1, type, dim, life, out);
}

plume_status smoke_scratch_scaled(pl_node *n, pl_cook_env *env, int slot, const char *suffix,
                                  const eng_field *like, int scale, eng_type type, int dim,
                                  smoke_life life, eng_field **out)
{
    smoke_state *s = smoke_state_of(n);
    if (!s)
        return pl_fail(env->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    if (slot < 0 || slot >= SMOKE_MAX_SCRATCH)
        return pl_fail(env->ctx, PLUME_ERR_INTERNAL, "node '%s': scratch slot %d", n->name, slot);
    if (s->scratch[slot]) {
        *out = s->scratch[slot];
        return PLUME_OK;
    }
    char name[512];
    snprintf(name, sizeof name, "%s:%s", n->name, suffix);
    const eng_field_desc *ld = eng_field_info(like);
    eng_field *f = eng_field_find(env->ctx->eng, name);
    if (f) {
        /* A node of the same name made it earlier in this context: reuse it if it fits. */
        const eng_field_desc *d = eng_field_info(f);
        if (d->type != type || d->voxel_size != ld->voxel_size * scale)
            return pl_fail(env->ctx, PLUME_ERR_TYPE_MISMATCH,
                           "node '%s': field '%s' exists but is not this node's scratch field",
                           n->name, name);
    } else {
        eng_field_desc d = {0};
        d.name = name;
        d.type = type;
        d.layout = dim == 3 ? NULL : eng_default_layout(dim);
        d.voxel_size = ld->voxel_size * scale;
        memcpy(d.origin, ld->origin, sizeof d.origin);
        int rc = eng_field_declare(env->ctx->eng, &d, &f);
        if (rc)
            return pl_from_engine(env->ctx, rc);
    }
    eng_field_set_scratch(f);
    if (life == SMOKE_PER_COOK)
        eng_field_set_transient(f);
    s->scratch[slot] = f;
    *out = f;
    return PLUME_OK;
}

plume_status smoke_same_grid(pl_node *n, pl_cook_env *env, eng_field *const *fields,
                             uint32_t count)
{
    const eng_field_desc *first = NULL;
    for (uint32_t i = 0; i < count; i++) {
        if (!fields[i])
            continue;
        const eng_field_desc *d = eng_field_info(fields[i]);
        if (!first) {
            first = d;
            continue;
        }
        int same = fabs(d->voxel_size - first->voxel_size) <= 1e-9 * first->voxel_size;
        for (int k = 0; k < 3; k++)
            same &= fabs(d->origin[k] - first->origin[k]) <= 1e-6 * first->voxel_size;
        if (!same)
            return pl_fail(env->ctx, PLUME_ERR_INVALID_ARGUMENT,
                           "node '%s': fields '%s' and '%s' must share one grid (voxel size "
                           "and origin)",
                           n->name, first->name, d->name);
    }
    return PLUME_OK;
}

plume_status smoke_prune(pl_node *n, pl_cook_env *env, eng_field *vel, eng_field *q)
{
    eng_arg a[2] = {smoke_field_arg(vel), smoke_field_arg(q)};
    return smoke_launch(n, env, eng_field_components(q) == 3 ? "scratch_prune_vec3" : "scratch_prune",
                        a, 2);
}
