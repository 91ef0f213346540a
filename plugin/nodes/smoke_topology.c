/* org.plume.smoke.topology: the sparse domain follows the smoke. Blocks within `margin` voxels
 * of a voxel whose density exceeds `threshold` are kept or activated in density, temperature
 * and vel; every other block of those fields is deactivated (and collected by the runtime).
 * Kernels: topology_mark_x/y/z, scratch_clear, topology_prune(_vec3), topology_grow in
 * smoke.pk. Scratch: the marks (empty between cooks). */
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
    eng_field *keep = NULL, *mx = NULL, *my = NULL;
    plume_status st = smoke_same_grid(n, env, env->port_fields, 3);
    /* Not transient: a cook reads the marks it did not write (a mark left from before would
     * keep its blocks); each cook empties them at its end, so what is kept is nothing, and a
     * checkpoint stores them empty all the same. */
    smoke_life kept = SMOKE_KEPT;
    if (st != PLUME_OK || (st = smoke_scratch(n, env, 0, "keep", dens, ENG_F32, 3, kept, &keep)) ||
        (st = smoke_scratch(n, env, 1, "mark_x", dens, ENG_F32, 3, kept, &mx)) ||
        (st = smoke_scratch(n, env, 2, "mark_y", dens, ENG_F32, 3, kept, &my)))
        return st;
    eng_arg margin = smoke_num(pl_param_num(n, "margin"));
    eng_arg m1[4] = {smoke_field_arg(dens), smoke_field_arg(mx),
                     smoke_num(pl_param_num(n, "threshold")), margin};
    eng_arg m2[3] = {smoke_field_arg(mx), smoke_field_arg(my), margin};
    eng_arg m3[3] = {smoke_field_arg(my), smoke_field_arg(keep), margin};
    eng_arg cx[1] = {smoke_field_arg(mx)}, cy[1] = {smoke_field_arg(my)};
    eng_arg pd[2] = {smoke_field_arg(keep), smoke_field_arg(dens)};
    eng_arg pt[2] = {smoke_field_arg(keep), smoke_field_arg(temp)};
    eng_arg pv[2] = {smoke_field_arg(keep), smoke_field_arg(vel)};
    eng_arg g[4] = {smoke_field_arg(keep), smoke_field_arg(dens), smoke_field_arg(temp),
                    smoke_field_arg(vel)};
    if ((st = smoke_launch(n, env, "topology_mark_x", m1, 4)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_mark_y", m2, 3)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_mark_z", m3, 3)) != PLUME_OK ||
        (st = smoke_launch(n, env, "scratch_clear", cx, 1)) != PLUME_OK ||
        (st = smoke_launch(n, env, "scratch_clear", cy, 1)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_prune", pd, 2)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_prune", pt, 2)) != PLUME_OK ||
        (st = smoke_launch(n, env, "topology_prune_vec3", pv, 2)) != PLUME_OK)
        return st;
    return smoke_launch(n, env, "topology_grow", g, 4);
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
