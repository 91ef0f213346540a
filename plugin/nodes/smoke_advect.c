/* org.plume.smoke.advect: moves density, temperature and the staggered velocity with the
 * velocity field (semi-Lagrangian or MacCormack with clamping; RK1/2/3 backtrace) and applies
 * dissipation. Every scalar is advected with the old velocity, the velocity itself last.
 * Kernels in smoke.pk: center_velocity; advect_scalar(_ranged)_rkN and advect_velocity(_ranged,
 * _back)_rkN for backtrace order N; maccormack_scalar, store_scalar, maccormack_velocity,
 * store_velocity. Scratch: forward, backward, lower and upper bound fields per advected field. */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/smoke_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const schemes[] = {"maccormack", "semi-lagrangian"};
static const char *const traces[] = {"rk2", "rk1", "rk3"};

static const plume_param_desc params[] = {
    PARAM_ENUM("scheme", "Scheme",
               "maccormack (second order, a forward and a backward step and a correction) or "
               "semi-lagrangian (one step, more numerical diffusion).",
               "maccormack", schemes),
    PARAM_ENUM("backtrace", "Backtrace",
               "Integration of the departure point: rk1 (Euler), rk2 (midpoint), rk3 (Ralston).",
               "rk2", traces),
    PARAM_BOOL("clamp", "Clamp",
               "MacCormack only: clamp each result to the values the forward step interpolated, "
               "so no new extrema (and no overshoot) appear.",
               1),
    PARAM_BOOL("advect_velocity", "Advect Velocity", "Move the velocity with itself.", 1),
    PARAM_FLOAT("density_dissipation", "Density Dissipation",
                "Rate at which density decays: it is multiplied by exp(-rate dt) each step, so "
                "0.5 loses 39% a second and 0.69 half.", 0, 0, 1e6, 0, 5),
    PARAM_FLOAT("temperature_dissipation", "Temperature Dissipation",
                "Rate per second at which temperature relaxes to the ambient temperature.", 0, 0,
                1e6, 0, 5),
    PARAM_FLOAT("velocity_dissipation", "Velocity Dissipation",
                "Rate at which velocity decays, also when it is not advected: multiplied by "
                "exp(-rate dt) each step.", 0, 0, 1e6, 0, 5),
    PARAM_FLOAT("ambient_temperature", "Ambient Temperature",
                "What temperature relaxes to under dissipation.", 0, -1e9, 1e9, -10, 10),
};

static const plume_port_desc ports[] = {
    PORT("vel", "Velocity",
         "Staggered velocity: moves the other fields and, with Advect Velocity, itself. Its "
         "active blocks are the domain.",
         PLUME_VALUE_VEC3, PLUME_PORT_INOUT, "vel", 0),
    PORT("density", "Density", "Advected scalar; skipped when unbound and not declared.",
         PLUME_VALUE_F32, PLUME_PORT_INOUT, "density", 1),
    PORT("temperature", "Temperature", "Advected scalar; skipped when unbound and not declared.",
         PLUME_VALUE_F32, PLUME_PORT_INOUT, "temperature", 1),
};

typedef struct plan {
    double s;      /* dt / voxel size */
    int order;     /* 1..3 */
    int mac;       /* MacCormack */
    int clamped;
    eng_field *vel, *vc; /* the velocity and its cell-centred copy */
} plan;

/* Scratch slots: per advected field (base 0 density, 4 temperature, 8 velocity) its forward,
 * backward, lower and upper bound fields; 12 the cell-centred velocity. */
enum { SLOT_DENSITY = 0, SLOT_TEMPERATURE = 4, SLOT_VELOCITY = 8, SLOT_VC = 12 };

static plume_status scratch_set(pl_node *n, pl_cook_env *env, const plan *pl, int base,
                                const char *name, eng_field *like, eng_field **out)
{
    static const char *const what[4] = {"fwd", "bwd", "lo", "hi"};
    eng_type t = eng_field_components(like) == 3 ? ENG_VEC3 : ENG_F32;
    for (int i = 0; i < (pl->mac ? 4 : 1); i++) {
        char sfx[64];
        snprintf(sfx, sizeof sfx, "%s.%s", name, what[i]);
        plume_status st =
            smoke_scratch(n, env, base + i, sfx, like, t, 3, SMOKE_PER_COOK, &out[i]);
        if (st != PLUME_OK)
            return st;
    }
    /* the backward step samples fwd around the domain's edge: no stale blocks there */
    return pl->mac ? smoke_prune(n, env, pl->vel, out[0]) : PLUME_OK;
}

/* The advection kernels come one per backtrace order (smoke.pk says why): base "_rk" order. */
static plume_status launch_order(pl_node *n, pl_cook_env *env, const plan *pl, const char *base,
                                 const eng_arg *args, uint32_t nargs)
{
    char name[64];
    snprintf(name, sizeof name, "%s_rk%d", base, pl->order);
    return smoke_launch(n, env, name, args, nargs);
}

static plume_status scalar(pl_node *n, pl_cook_env *env, const plan *pl, eng_field *q, int base,
                           const char *name, double keep, double rest)
{
    eng_field *t[4] = {0};
    plume_status st = scratch_set(n, env, pl, base, name, q, t);
    if (st != PLUME_OK)
        return st;
    eng_arg vel = smoke_field_arg(pl->vel), vc = smoke_field_arg(pl->vc);
    eng_arg s = smoke_num(pl->s);
    if (!pl->mac) {
        eng_arg fa[5] = {vel, vc, smoke_field_arg(q), smoke_field_arg(t[0]), s};
        eng_arg sa[5] = {vel, smoke_field_arg(t[0]), smoke_field_arg(q), smoke_num(keep),
                         smoke_num(rest)};
        if ((st = launch_order(n, env, pl, "advect_scalar", fa, 5)) != PLUME_OK)
            return st;
        return smoke_launch(n, env, "store_scalar", sa, 5);
    }
    eng_arg fa[7] = {vel, vc, smoke_field_arg(q), smoke_field_arg(t[0]), smoke_field_arg(t[2]),
                     smoke_field_arg(t[3]), s};
    eng_arg ba[5] = {vel, vc, smoke_field_arg(t[0]), smoke_field_arg(t[1]), smoke_num(-pl->s)};
    eng_arg ma[9] = {vel, smoke_field_arg(q), smoke_field_arg(t[0]), smoke_field_arg(t[1]),
                     smoke_field_arg(t[2]), smoke_field_arg(t[3]), smoke_num(keep),
                     smoke_num(rest), smoke_num(pl->clamped)};
    if ((st = launch_order(n, env, pl, "advect_scalar_ranged", fa, 7)) != PLUME_OK ||
        (st = launch_order(n, env, pl, "advect_scalar", ba, 5)) != PLUME_OK)
        return st;
    return smoke_launch(n, env, "maccormack_scalar", ma, 9);
}

static plume_status velocity(pl_node *n, pl_cook_env *env, const plan *pl, double keep)
{
    eng_field *t[4] = {0};
    plume_status st = scratch_set(n, env, pl, SLOT_VELOCITY, "vel", pl->vel, t);
    if (st != PLUME_OK)
        return st;
    eng_arg vel = smoke_field_arg(pl->vel), vc = smoke_field_arg(pl->vc);
    eng_arg s = smoke_num(pl->s);
    if (!pl->mac) {
        eng_arg fa[4] = {vel, vc, smoke_field_arg(t[0]), s};
        eng_arg sa[3] = {vel, smoke_field_arg(t[0]), smoke_num(keep)};
        if ((st = launch_order(n, env, pl, "advect_velocity", fa, 4)) != PLUME_OK)
            return st;
        return smoke_launch(n, env, "store_velocity", sa, 3);
    }
    eng_arg fa[6] = {vel, vc, smoke_field_arg(t[0]), smoke_field_arg(t[2]), smoke_field_arg(t[3]),
                     s};
    eng_arg ba[5] = {vel, vc, smoke_field_arg(t[0]), smoke_field_arg(t[1]), smoke_num(-pl->s)};
    eng_arg ma[7] = {vel, smoke_field_arg(t[0]), smoke_field_arg(t[1]), smoke_field_arg(t[2]),
                     smoke_field_arg(t[3]), smoke_num(keep), smoke_num(pl->clamped)};
    if ((st = launch_order(n, env, pl, "advect_velocity_ranged", fa, 6)) != PLUME_OK ||
        (st = launch_order(n, env, pl, "advect_velocity_back", ba, 5)) != PLUME_OK)
        return st;
    return smoke_launch(n, env, "maccormack_velocity", ma, 7);
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    eng_field *vel = env->port_fields[0], *dens = env->port_fields[1], *temp = env->port_fields[2];
    plume_status st = smoke_same_grid(n, env, env->port_fields, 3);
    if (st != PLUME_OK)
        return st;
    double dt = env->info->dt;
    const char *tr = pl_param_str(n, "backtrace");
    plan pl = {
        .s = dt / eng_field_info(vel)->voxel_size,
        .order = !strcmp(tr, "rk1") ? 1 : !strcmp(tr, "rk3") ? 3 : 2,
        .mac = strcmp(pl_param_str(n, "scheme"), "semi-lagrangian") != 0,
        .clamped = pl_param_num(n, "clamp") != 0,
        .vel = vel,
    };
    /* backtraces sample vc beyond the domain's edge, where it must read 0 */
    if ((st = smoke_scratch(n, env, SLOT_VC, "vc", vel, ENG_VEC3, 3, SMOKE_PER_COOK, &pl.vc)) ||
        (st = smoke_prune(n, env, vel, pl.vc)) != PLUME_OK)
        return st;
    eng_arg ca[2] = {smoke_field_arg(vel), smoke_field_arg(pl.vc)};
    if ((st = smoke_launch(n, env, "center_velocity", ca, 2)) != PLUME_OK)
        return st;
    if (dens)
        st = scalar(n, env, &pl, dens, SLOT_DENSITY, "density",
                    exp(-pl_param_num(n, "density_dissipation") * dt), 0.0);
    if (st == PLUME_OK && temp)
        st = scalar(n, env, &pl, temp, SLOT_TEMPERATURE, "temperature",
                    exp(-pl_param_num(n, "temperature_dissipation") * dt),
                    pl_param_num(n, "ambient_temperature"));
    double vkeep = exp(-pl_param_num(n, "velocity_dissipation") * dt);
    if (st == PLUME_OK && pl_param_num(n, "advect_velocity") != 0) {
        st = velocity(n, env, &pl, vkeep);
    } else if (st == PLUME_OK && vkeep != 1.0) {
        /* the velocity stays put but still dissipates, as the parameter says */
        eng_arg sa[2] = {smoke_field_arg(vel), smoke_num(vkeep)};
        st = smoke_launch(n, env, "scale_velocity", sa, 2);
    }
    return st;
}

const pl_node_type pl_node_smoke_advect = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.advect",
             .label = "Smoke Advect",
             .category = "Smoke",
             .help = "Advects density, temperature and the staggered velocity through the "
                     "velocity field (MacCormack with clamping or semi-Lagrangian) and applies "
                     "dissipation.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
};
