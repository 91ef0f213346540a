/* org.plume.smoke.source: an analytic sphere emitter for the smoke solver. Writes density and
 * temperature (and optionally velocity) inside a soft-edged sphere and activates the blocks it
 * touches in all three fields: the domain starts here. Kernel: source_sphere in smoke.pk. */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/smoke_common.h"

#include <math.h>
#include <string.h>

static const char *const modes[] = {"max", "set", "add"};

static const plume_param_desc params[] = {
    PARAM_VEC3("center", "Center", "Centre of the sphere in world units.", 0, 0.15, 0, -1e6, 1e6, -10, 10),
    PARAM_FLOAT("radius", "Radius", "Radius in world units.", 0.08, 0, 1e6, 0, 10),
    PARAM_FLOAT("falloff", "Edge Falloff",
                "Width of the soft edge in voxels, beyond the radius; 0 gives a hard edge.", 1.5,
                0, 64, 0, 8),
    PARAM_FLOAT("density", "Density", "Density written inside the sphere.", 1, -1e9, 1e9, 0, 10),
    PARAM_FLOAT("temperature", "Temperature",
                "Temperature written inside the sphere (the same units as the forces node's "
                "ambient temperature).",
                2, -1e9, 1e9, 0, 10),
    PARAM_ENUM("mode", "Mode",
               "How density and temperature combine with what the fields hold: max, set (blend "
               "towards the value by the edge weight) or add (the value per second, times dt).",
               "max", modes),
    PARAM_BOOL("set_velocity", "Set Velocity",
               "Blend the velocity inside the sphere towards Velocity (by the edge weight).", 0),
    PARAM_VEC3("velocity", "Velocity", "Velocity of the emitted smoke, world units per second.", 0,
               0, 0, -1e6, 1e6, -10, 10),
};

static const plume_port_desc ports[] = {
    PORT("density", "Density", "Smoke density (scalar).", PLUME_VALUE_F32, PLUME_PORT_INOUT,
         "density", 0),
    PORT("temperature", "Temperature", "Temperature (scalar).", PLUME_VALUE_F32, PLUME_PORT_INOUT,
         "temperature", 0),
    PORT("vel", "Velocity", "Staggered velocity; its active blocks are the solver's domain.",
         PLUME_VALUE_VEC3, PLUME_PORT_INOUT, "vel", 0),
};

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    plume_status st = smoke_same_grid(n, env, env->port_fields, 3);
    if (st != PLUME_OK)
        return st;
    const eng_field_desc *d = eng_field_info(env->port_fields[0]);
    const double *c = pl_param_vec3(n, "center");
    const double *v = pl_param_vec3(n, "velocity");
    double h = d->voxel_size, r = pl_param_num(n, "radius");
    double fall = pl_param_num(n, "falloff") * h, reach = r + fall;
    const char *mode = pl_param_str(n, "mode");
    int m = !strcmp(mode, "set") ? 1 : !strcmp(mode, "add") ? 2 : 0;
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        /* voxel i's centre is origin + (i + 0.5) h */
        lo[k] = floor((c[k] - reach - d->origin[k]) / h - 0.5);
        hi[k] = ceil((c[k] + reach - d->origin[k]) / h - 0.5) + 1;
        if (lo[k] < -1e8 || hi[k] > 1e8)
            return pl_fail(env->ctx, PLUME_ERR_OUT_OF_RANGE,
                           "node '%s': the sphere lies outside the field's index range", n->name);
    }
    eng_arg a[15] = {
        smoke_field_arg(env->port_fields[0]),
        smoke_field_arg(env->port_fields[1]),
        smoke_field_arg(env->port_fields[2]),
        smoke_vec(lo[0], lo[1], lo[2]),
        smoke_vec(hi[0], hi[1], hi[2]),
        smoke_vec(d->origin[0], d->origin[1], d->origin[2]),
        smoke_vec(c[0], c[1], c[2]),
        smoke_num(r),
        smoke_num(fall),
        smoke_num(pl_param_num(n, "density")),
        smoke_num(pl_param_num(n, "temperature")),
        smoke_vec(v[0], v[1], v[2]),
        smoke_num(pl_param_num(n, "set_velocity") != 0),
        smoke_num(m),
        smoke_num(env->info->dt),
    };
    return smoke_launch(n, env, "source_sphere", a, 15);
}

const pl_node_type pl_node_smoke_source = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.source",
             .label = "Smoke Source",
             .category = "Smoke",
             .help = "Emits smoke from an analytic sphere: density, temperature and optionally "
                     "velocity, activating the blocks it touches in the solver's fields.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
};
