/* org.plume.smoke.forces: buoyancy (a temperature term and a density term along `up`, relative
 * to an ambient temperature) and vorticity confinement, added to the staggered velocity.
 * Kernels: vorticity, confinement, apply_forces in smoke.pk. Scratch: the vorticity and the
 * confinement force per voxel (only when confinement is on). */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/smoke_common.h"

#include <math.h>

static const plume_param_desc params[] = {
    PARAM_VEC3("up", "Up", "Direction buoyancy pushes hot smoke (any length: normalized; not [0, 0, 0]).", 0, 1, 0,
               -1, 1, -1, 1),
    PARAM_FLOAT("temperature_lift", "Temperature Lift",
                "Buoyancy per degree above ambient, world units per second squared.", 1, -1e6,
                1e6, 0, 10),
    PARAM_FLOAT("density_weight", "Density Weight",
                "Downward pull per unit density, world units per second squared.", 0.1, -1e6,
                1e6, 0, 10),
    PARAM_FLOAT("ambient_temperature", "Ambient Temperature",
                "Temperature at which smoke neither rises nor sinks.", 0, -1e9, 1e9, -10, 10),
    PARAM_FLOAT("vorticity", "Vorticity Confinement",
                "Strength of vorticity confinement (0: off), dimensionless.", 0, 0, 1e3, 0, 2),
};

static const plume_port_desc ports[] = {
    PORT("vel", "Velocity", "Staggered velocity the forces accelerate; its blocks are the domain.",
         PLUME_VALUE_VEC3, PLUME_PORT_INOUT, "vel", 0),
    PORT("density", "Density", "Smoke density (its weight pulls down).", PLUME_VALUE_F32,
         PLUME_PORT_IN, "density", 0),
    PORT("temperature", "Temperature", "Temperature (heat rises).", PLUME_VALUE_F32,
         PLUME_PORT_IN, "temperature", 0),
};

static double up_length(pl_node *n)
{
    const double *u = pl_param_vec3(n, "up");
    return sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
}

static plume_status validate(pl_node *n, eng_field *const *fields)
{
    (void)fields;
    const double *u = pl_param_vec3(n, "up");
    if (!(up_length(n) > 1e-6))
        return pl_fail(n->ctx, PLUME_ERR_OUT_OF_RANGE,
                       "node '%s': 'up' (%g, %g, %g) has no direction; give one such as [0, 1, 0] (a "
                       "temperature_lift and density_weight of 0 turn buoyancy off)",
                       n->name, u[0], u[1], u[2]);
    return PLUME_OK;
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    eng_field *vel = env->port_fields[0];
    plume_status st = smoke_same_grid(n, env, env->port_fields, 3);
    if (st != PLUME_OK)
        return st;
    double eps = pl_param_num(n, "vorticity");
    eng_field *omega = NULL, *force = NULL;
    /* the force field is always passed (kernel fields never alias) but read only when eps > 0 */
    if ((st = smoke_scratch(n, env, 1, "force", vel, ENG_VEC3, 3, SMOKE_PER_COOK, &force)))
        return st;
    if (eps > 0) {
        if ((st = smoke_scratch(n, env, 0, "omega", vel, ENG_VEC3, 3, SMOKE_PER_COOK, &omega)) ||
            (st = smoke_prune(n, env, vel, omega)) != PLUME_OK ||
            (st = smoke_prune(n, env, vel, force)) != PLUME_OK)
            return st;
        eng_arg va[2] = {smoke_field_arg(vel), smoke_field_arg(omega)};
        eng_arg ca[4] = {smoke_field_arg(vel), smoke_field_arg(omega), smoke_field_arg(force),
                         smoke_num(eps)};
        if ((st = smoke_launch(n, env, "vorticity", va, 2)) != PLUME_OK ||
            (st = smoke_launch(n, env, "confinement", ca, 4)) != PLUME_OK)
            return st;
    }
    /* a direction: its length would scale buoyancy behind the lift's back (validate refused 0) */
    const double *raw = pl_param_vec3(n, "up");
    double len = up_length(n);
    const double up[3] = {raw[0] / len, raw[1] / len, raw[2] / len};
    eng_arg a[10] = {smoke_field_arg(vel),
                     smoke_field_arg(env->port_fields[1]),
                     smoke_field_arg(env->port_fields[2]),
                     smoke_field_arg(force),
                     smoke_vec(up[0], up[1], up[2]),
                     smoke_num(pl_param_num(n, "density_weight")),
                     smoke_num(pl_param_num(n, "temperature_lift")),
                     smoke_num(pl_param_num(n, "ambient_temperature")),
                     smoke_num(env->info->dt),
                     smoke_num(eps > 0)};
    return smoke_launch(n, env, "apply_forces", a, 10);
}

const pl_node_type pl_node_smoke_forces = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.forces",
             .label = "Smoke Forces",
             .category = "Smoke",
             .help = "Adds buoyancy (hot smoke rises, dense smoke sinks) and vorticity "
                     "confinement to the staggered velocity.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
    .validate = validate,
};
