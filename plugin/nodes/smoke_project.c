/* org.plume.smoke.project: pressure projection of the staggered velocity. Solves
 * laplacian(p) = div(vel) on the fluid voxels by red-black Gauss-Seidel with over-relaxation
 * (a fixed maximum of sweeps; every `check_every` sweeps the residual is read back and the solve
 * stops once max |residual| <= tolerance), then subtracts grad(p). Open boundaries: p = 0
 * outside the fluid. The pressure is kept between cooks as the next solve's first guess.
 * Kernels: project_setup, project_rbgs, project_residual, project_subtract in smoke.pk.
 * plugin/kernels/mgpcg3.pk (multigrid-preconditioned CG) is meant to replace the smoother. */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/smoke_common.h"

static const plume_param_desc params[] = {
    PARAM_INT("iterations", "Max Iterations",
              "Most red-black Gauss-Seidel sweeps per solve (each updates both colours).", 200, 1,
              100000, 10, 1000),
    PARAM_FLOAT("tolerance", "Tolerance",
                "Stop when the largest divergence left in a fluid voxel (1/s) is at most this; "
                "0 runs every iteration without reading back.",
                0.01, 0, 1e9, 0, 1),
    PARAM_INT("check_every", "Check Every",
              "Sweeps between residual checks (each check waits for the queued work).", 10, 1,
              100000, 1, 100),
    PARAM_FLOAT("sor", "Over-relaxation",
                "Successive over-relaxation factor: 1 is plain Gauss-Seidel; near 2 converges "
                "faster on large domains.",
                1.8, 0.1, 1.99, 1, 1.99),
};

static const plume_port_desc ports[] = {
    PORT("vel", "Velocity", "Staggered velocity made divergence-free; its blocks are the domain.",
         PLUME_VALUE_VEC3, PLUME_PORT_INOUT, "vel", 0),
};

static plume_status residual(pl_node *n, pl_cook_env *env, eng_arg *fields, eng_field *rmax,
                             double *out)
{
    eng_arg a[5] = {fields[0], fields[1], fields[2], fields[3], smoke_field_arg(rmax)};
    plume_status st = smoke_launch(n, env, "project_residual", a, 5);
    if (st != PLUME_OK)
        return st;
    int rc = eng_sync(env->ctx->eng);
    if (rc)
        return pl_from_engine(env->ctx, rc);
    int32_t origin[3] = {0, 0, 0};
    *out = eng_field_read(rmax, origin, 0);
    return PLUME_OK;
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    eng_field *vel = env->port_fields[0], *p = NULL, *div = NULL, *mask = NULL, *rmax = NULL;
    plume_status st;
    if ((st = smoke_scratch(n, env, 0, "pressure", vel, ENG_F32, 3, &p)) != PLUME_OK ||
        (st = smoke_scratch(n, env, 1, "div", vel, ENG_F32, 3, &div)) != PLUME_OK ||
        (st = smoke_scratch(n, env, 2, "mask", vel, ENG_F32, 3, &mask)) != PLUME_OK ||
        (st = smoke_scratch(n, env, 3, "residual", vel, ENG_F32, 0, &rmax)) != PLUME_OK)
        return st;
    /* pressure outside the domain must read 0: the stencil looks one voxel beyond it */
    if ((st = smoke_prune(n, env, vel, p)) != PLUME_OK)
        return st;
    eng_arg f[4] = {smoke_field_arg(vel), smoke_field_arg(p), smoke_field_arg(div),
                    smoke_field_arg(mask)};
    if ((st = smoke_launch(n, env, "project_setup", f, 4)) != PLUME_OK)
        return st;
    int64_t iters = (int64_t)pl_param_num(n, "iterations");
    int64_t every = (int64_t)pl_param_num(n, "check_every");
    double tol = pl_param_num(n, "tolerance"), sor = pl_param_num(n, "sor"), r = -1;
    int64_t done = 0;
    if (tol > 0 && (st = residual(n, env, f, rmax, &r)) != PLUME_OK)
        return st;
    while (done < iters && !(tol > 0 && r <= tol)) {
        int64_t batch = tol > 0 && every < iters - done ? every : iters - done;
        for (int64_t i = 0; i < batch; i++) {
            for (int color = 0; color < 2; color++) {
                eng_arg a[6] = {f[0], f[1], f[2], f[3], smoke_num(color), smoke_num(sor)};
                if ((st = smoke_launch(n, env, "project_rbgs", a, 6)) != PLUME_OK)
                    return st;
            }
        }
        done += batch;
        if (tol > 0 && (st = residual(n, env, f, rmax, &r)) != PLUME_OK)
            return st;
    }
    if (tol > 0 && r > tol)
        pl_log(env->ctx, PLUME_LOG_DEBUG,
               "node '%s': pressure solve stopped at %lld iterations with max |div| %.3g "
               "(tolerance %.3g)",
               n->name, (long long)done, r, tol);
    eng_arg s[2] = {smoke_field_arg(vel), smoke_field_arg(p)};
    return smoke_launch(n, env, "project_subtract", s, 2);
}

const pl_node_type pl_node_smoke_project = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.project",
             .label = "Smoke Project",
             .category = "Smoke",
             .help = "Makes the staggered velocity divergence-free: a pressure Poisson solve "
                     "(red-black Gauss-Seidel, tolerance and iteration cap) and the pressure "
                     "gradient subtracted. Open boundaries around the active domain.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
};
