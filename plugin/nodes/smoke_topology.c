/* org.plume.smoke.topology: the sparse domain follows the smoke. Blocks within `margin` voxels
 * of a voxel whose density exceeds `threshold` are kept or activated in density, temperature
 * and vel; every other block of those fields is deactivated (and collected by the runtime).
 * Kernels: topology_classify, topology_near, topology_prune(_vec3), topology_grow,
 * scratch_clear in smoke.pk. Scratch: the marks, per block (empty between cooks). */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/smoke_common.h"

static const plume_param_desc params[] = {
    PARAM_FLOAT("threshold", "Threshold",
                "Density above which a voxel keeps its neighbourhood in the domain.", 1e-3, 0,
                1e9, 0, 0.1),
    PARAM_INT("margin", "Margin",
              "Voxels around the smoke kept active (0..8), room for it to move before the "
              "next update.",
              4, 0, 8, 0, 8),
};

static const plume_port_desc ports[] = {
    PORT("density", "Density", "Decides the domain; pruned and grown with it.", PLUME_VALUE_F32,
         PLUME_PORT_INOUT, "density", 0),
    PORT("temperature", "Temperature", "Pruned and grown with the domain.", PLUME_VALUE_F32,
         PLUME_PORT_INOUT, "temperature", 0),
    PORT("vel", "Velocity", "Its active blocks are the solver's domain.", PLUME_VALUE_VEC3,
         PLUME_PORT_INOUT, "vel", 0),
};

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    eng_field *dens = env->port_fields[0], *temp = env->port_fields[1], *vel = env->port_fields[2];
    eng_field *kinds = NULL, *near = NULL;
    plume_status st = smoke_same_grid(n, env, env->port_fields, 3);
    /* Per block, not per voxel (smoke.pk): kinds has 4 voxels per block per axis (which
     * classes of hot voxels a block holds), near one (the blocks to keep). Not transient: a
     * cook reads marks it did not write (one left from before would keep its block); each
     * cook empties them at its end, so what is kept is nothing, and a checkpoint stores them
     * empty all the same. */
    if (st != PLUME_OK ||
        (st = smoke_scratch_scaled(n, env, 0, "kinds", dens, 2, ENG_F32, 3, SMOKE_KEPT, &kinds)) ||
        (st = smoke_scratch_scaled(n, env, 1, "near", dens, 8, ENG_F32, 3, SMOKE_KEPT, &near)))
        return st;
    eng_arg m[4] = {smoke_field_arg(dens), smoke_field_arg(kinds),
                    smoke_num(pl_param_num(n, "threshold")), smoke_num(pl_param_num(n, "margin"))};
    eng_arg k[2] = {smoke_field_arg(kinds), smoke_field_arg(near)};
    eng_arg pd[2] = {smoke_field_arg(near), smoke_field_arg(dens)};
    eng_arg pt[2] = {smoke_field_arg(near), smoke_field_arg(temp)};
    eng_arg pv[2] = {smoke_field_arg(near), smoke_field_arg(vel)};
    eng_arg g[4] = {smoke_field_arg(near), smoke_field_arg(dens), smoke_field_arg(temp),
                    smoke_field_arg(vel)};
    eng_arg ck[1] = {smoke_field_arg(kinds)}, cn[1] = {smoke_field_arg(near)};
    if ((st = smoke_launch(n, env, "topology_classify", m, 4)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_near", k, 2)) != PLUME_OK ||
        (st = smoke_launch(n, env, "scratch_clear", ck, 1)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_prune", pd, 2)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_prune", pt, 2)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_prune_vec3", pv, 2)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_grow", g, 4)) != PLUME_OK)
        return st;
    return smoke_launch(n, env, "scratch_clear", cn, 1);
}

const pl_node_type pl_node_smoke_topology = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.topology",
             .label = "Smoke Topology",
             .category = "Smoke",
             .help = "Keeps the sparse domain around the smoke: activates blocks within a margin "
                     "of voxels above a density threshold and deactivates the empty ones.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
};
