/* org.plume.smoke.project: pressure projection of the staggered velocity. Classifies the cells
 * (fluid unknowns, Neumann walls and solids, Dirichlet open cells: smoke.pk's projection
 * section), gives the faces of walls and solids the solid's velocity (0), solves
 * A p = -h^2 div(vel) on the fluid cells and subtracts grad(p), so the fluid keeps no
 * divergence. Solvers: multigrid-preconditioned conjugate gradients (smoke_mgpcg.h, kernels in
 * mgpcg3.pk; the default) or red-black Gauss-Seidel with over-relaxation (project_rbgs, kept
 * for comparison). Both stop once max |div| left in the fluid is at most the tolerance, read
 * back every `check_every` iterations, or at the iteration cap. The pressure is kept between
 * cooks as the next solve's first guess. */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/smoke_common.h"
#include "plugin/nodes/smoke_mgpcg.h"

#include <stdlib.h>
#include <string.h>

/* plugin/kernels/mgpcg3.pk, embedded by plugin/CMakeLists.txt */
extern const unsigned char pk_mgpcg3_bytes[];
extern const size_t pk_mgpcg3_size;

static const char *const solvers[] = {"mgpcg", "rbgs"};
static const char *const boundaries[] = {"open", "closed"};

static const plume_param_desc params[] = {
    PARAM_ENUM("solver", "Solver",
               "mgpcg: conjugate gradients preconditioned by a multigrid V-cycle over the sparse "
               "block hierarchy (iterations barely grow with the domain's size); rbgs: red-black "
               "Gauss-Seidel with over-relaxation (simple; iterations grow with the size).",
               "mgpcg", solvers),
    PARAM_ENUM("boundary", "Boundary",
               "open: pressure 0 outside the fluid, smoke leaves the domain freely; closed: the "
               "edge of the active domain is a wall (no velocity through its faces).",
               "open", boundaries),
    PARAM_INT("iterations", "Max Iterations",
              "Most iterations per solve: CG iterations (mgpcg) or red-black sweeps, each "
              "updating both colours (rbgs).",
              200, 1, 100000, 10, 1000),
    PARAM_FLOAT("tolerance", "Tolerance",
                "Stop when the largest divergence left in a fluid voxel (1/s) is at most this; "
                "0 runs every iteration without reading back. mgpcg also stops when the divergence "
                "has not fallen for max(30, 3 x check_every) iterations (a tolerance below what f32 "
                "reaches); the first solve that misses the tolerance is a warning.",
                0.01, 0, 1e9, 0, 1),
    PARAM_INT("check_every", "Check Every",
              "Iterations between residual checks (each check waits for the queued work): a "
              "few for mgpcg, tens for rbgs.",
              2, 1, 100000, 1, 100),
    PARAM_FLOAT("sor", "Over-relaxation",
                "rbgs: successive over-relaxation factor: 1 is plain Gauss-Seidel; near 2 "
                "converges faster on large domains.",
                1.8, 0.1, 1.99, 1, 1.99),
    PARAM_INT("levels", "Multigrid Levels",
              "mgpcg: levels of the hierarchy, the finest included (each halves the "
              "resolution); 4-5 suit domains of 64-256 voxels across.",
              5, 1, MGPCG_MAX_LEVELS, 1, MGPCG_MAX_LEVELS),
    PARAM_BOOL("warm_start", "Warm Start",
               "mgpcg: start from the previous solve's pressure instead of 0 (rbgs always "
               "does).",
               1),
};

enum { PORT_VEL, PORT_COLLIDER, PORT_DENSITY, PORT_TEMPERATURE, PORT_COUNT };

static const plume_port_desc ports[] = {
    PORT("vel", "Velocity", "Staggered velocity made divergence-free; its blocks are the domain.",
         PLUME_VALUE_VEC3, PLUME_PORT_INOUT, "vel", 0),
    PORT("collider", "Collider",
         "Level set of static solids (negative inside, on the velocity's grid), e.g. a "
         "level-set VDB imported in replace mode.",
         PLUME_VALUE_F32, PLUME_PORT_IN, "collider", 1),
    PORT("density", "Density", "Set to 0 inside solids (only with a collider).", PLUME_VALUE_F32,
         PLUME_PORT_INOUT, "density", 1),
    PORT("temperature", "Temperature", "Set to 0 inside solids (only with a collider).",
         PLUME_VALUE_F32, PLUME_PORT_INOUT, "temperature", 1),
};

enum { SLOT_PRESSURE, SLOT_RHS, SLOT_DOM, SLOT_RMAX, SLOT_NO_COLLIDER, SLOT_SUM, SLOT_COUNT };

/* The node's state: smoke_common's first (smoke_state_of hands it out as such), then the
 * MGPCG program and solver. */
typedef struct project_state {
    smoke_state base;
    eng_program *mg_prog; /* mgpcg3.pk, compiled at the first mgpcg solve; released with the node */
    eng_context *mg_eng;  /* where mg_prog was compiled */
    mgpcg mg;
    int warned; /* a solve that missed its tolerance was reported once as a warning */
} project_state;

static void state_free(void *p)
{
    project_state *ps = p;
    if (ps) {
        if (ps->mg_prog)
            eng_program_release(ps->mg_eng, ps->mg_prog);
        smoke_state_release(&ps->base);
    }
    free(ps);
}

static project_state *state_of(pl_node *n)
{
    if (!n->state) {
        n->state = calloc(1, sizeof(project_state));
        n->free_state = state_free;
    }
    return n->state;
}

/* What one cook works on. */
typedef struct job {
    eng_field *vel, *collider, *p, *rhs, *dom, *rmax;
    int closed, colliders;
    double h, tol;
} job;

static eng_arg F(eng_field *f) { return smoke_field_arg(f); }

static plume_status rbgs_residual(pl_node *n, pl_cook_env *env, const job *j, double *out)
{
    eng_arg a[4] = {F(j->dom), F(j->rhs), F(j->p), F(j->rmax)};
    plume_status st = smoke_launch(n, env, "project_residual", a, 4);
    if (st != PLUME_OK)
        return st;
    int rc = eng_sync(env->ctx->eng);
    if (rc)
        return pl_from_engine(env->ctx, rc);
    int32_t origin[3] = {0, 0, 0};
    *out = eng_field_read(j->rmax, origin, 0);
    return PLUME_OK;
}

static plume_status solve_rbgs(pl_node *n, pl_cook_env *env, const job *j)
{
    int64_t iters = (int64_t)pl_param_num(n, "iterations");
    int64_t every = (int64_t)pl_param_num(n, "check_every");
    double sor = pl_param_num(n, "sor"), r = -1;
    int64_t done = 0;
    plume_status st;
    if (j->closed) {
        eng_field *sum = NULL, *count = NULL;
        smoke_life once = SMOKE_PER_COOK;
        if ((st = smoke_scratch(n, env, SLOT_SUM, "sum", j->vel, ENG_F32, 0, once, &sum)) ||
            (st = smoke_scratch(n, env, SLOT_COUNT, "count", j->vel, ENG_F32, 0, once, &count)))
            return st;
        eng_arg m[4] = {F(j->dom), F(j->rhs), F(sum), F(count)};
        if ((st = smoke_launch(n, env, "project_mean", m, 4)) ||
            (st = smoke_launch(n, env, "project_remove_mean", m, 4)))
            return st;
    }
    if (j->tol > 0 && (st = rbgs_residual(n, env, j, &r)) != PLUME_OK)
        return st;
    while (done < iters && !(j->tol > 0 && r <= j->tol)) {
        int64_t batch = j->tol > 0 && every < iters - done ? every : iters - done;
        for (int64_t i = 0; i < batch; i++) {
            for (int color = 0; color < 2; color++) {
                eng_arg a[5] = {F(j->dom), F(j->rhs), F(j->p), smoke_num(color), smoke_num(sor)};
                if ((st = smoke_launch(n, env, "project_rbgs", a, 5)) != PLUME_OK)
                    return st;
            }
        }
        done += batch;
        if (j->tol > 0 && (st = rbgs_residual(n, env, j, &r)) != PLUME_OK)
            return st;
    }
    pl_log(env->ctx, PLUME_LOG_DEBUG,
           "node '%s': rbgs pressure solve: %lld iterations, max |div| %.3g (tolerance %.3g)%s",
           n->name, (long long)done, r, j->tol,
           j->tol > 0 && r > j->tol ? ": stopped at the iteration cap" : "");
    return PLUME_OK;
}

static plume_status mg_fail(pl_cook_env *env, pl_node *n, int rc, const mgpcg *mg)
{
    /* a cancel (during a compile or the solve's batches) or a budget is the host's news, not a
     * fault of the solver */
    plume_status st = rc == ENG_ENOMEM       ? PLUME_ERR_MEMORY_BUDGET
                      : rc == ENG_ECANCELLED ? PLUME_ERR_CANCELLED
                                             : PLUME_ERR_INTERNAL;
    /* another node's kernel failed and the solve's sync found it: the engine's message names
     * that node first (eng_program_set_origin); it is passed on as it is, with its status */
    if (mg->error_names_node)
        return pl_fail_naming_node(env->ctx, pl_status_of_engine(rc), mg->error);
    return pl_fail(env->ctx, st, "node '%s': %s", n->name, mg->error);
}

static plume_status solve_mgpcg(pl_node *n, pl_cook_env *env, const job *j)
{
    project_state *ps = state_of(n);
    eng_context *eng = env->ctx->eng;
    if (!ps->mg_prog) {
        ps->mg_eng = eng;
        int rc = eng_program_compile(eng, "plugin/kernels/mgpcg3.pk",
                                     (const char *)pk_mgpcg3_bytes, pk_mgpcg3_size, &ps->mg_prog);
        if (rc)
            return pl_from_engine(env->ctx, rc);
        pl_node_owns_program(n, ps->mg_prog);
    }
    mgpcg_config cfg = {.dim = 3,
                        .levels = (int)pl_param_num(n, "levels"),
                        .sweeps = 2,
                        .bottom_sweeps = 16,
                        .masked = 0};
    int rc;
    if ((rc = mgpcg_init(&ps->mg, eng, ps->mg_prog, &cfg, j->dom, n->name)) ||
        (rc = mgpcg_build(&ps->mg, j->closed)))
        return mg_fail(env, n, rc, &ps->mg);
    /* the solver's residual is in units of the right-hand side, -h^2 div */
    double h2 = j->h * j->h;
    mgpcg_solve_opts o = {.max_iterations = (int)pl_param_num(n, "iterations"),
                          .tolerance = j->tol * h2,
                          .check_every = (int)pl_param_num(n, "check_every"),
                          .warm = pl_param_num(n, "warm_start") != 0};
    mgpcg_result res;
    if ((rc = mgpcg_solve(&ps->mg, j->rhs, j->p, &o, &res)))
        return mg_fail(env, n, rc, &ps->mg);
    double r = res.residual >= 0 ? res.residual / h2 : -1;
    const char *why = res.stalled ? ": stopped, the residual no longer falling (f32 reaches no lower here)"
                      : j->tol > 0 && !res.converged ? ": stopped at the iteration cap"
                                                      : "";
    /* the first miss is worth an artist's attention; every later one goes to the debug log */
    int warn = why[0] && !ps->warned;
    ps->warned |= warn;
    pl_log(env->ctx, warn ? PLUME_LOG_WARNING : PLUME_LOG_DEBUG,
           "node '%s': mgpcg pressure solve: %d iterations, max |div| %.3g (tolerance %.3g)%s%s", n->name,
           res.iterations, r, j->tol, why,
           warn ? "; later misses of this node are logged at debug level (PLUME_VERBOSE=2)" : "");
    return PLUME_OK;
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    if (!state_of(n))
        return pl_fail(env->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    job j = {.vel = env->port_fields[PORT_VEL], .collider = env->port_fields[PORT_COLLIDER]};
    plume_status st = smoke_same_grid(n, env, env->port_fields, PORT_COUNT);
    eng_field *none = NULL;
    smoke_life once = SMOKE_PER_COOK; /* all but the pressure, the next solve's first guess */
    if (st != PLUME_OK ||
        (st = smoke_scratch(n, env, SLOT_PRESSURE, "pressure", j.vel, ENG_F32, 3, SMOKE_KEPT, &j.p)) ||
        (st = smoke_scratch(n, env, SLOT_RHS, "rhs", j.vel, ENG_F32, 3, once, &j.rhs)) ||
        (st = smoke_scratch(n, env, SLOT_DOM, "dom", j.vel, ENG_F32, 3, once, &j.dom)) ||
        (st = smoke_scratch(n, env, SLOT_RMAX, "residual", j.vel, ENG_F32, 0, once, &j.rmax)) ||
        (st = smoke_scratch(n, env, SLOT_NO_COLLIDER, "no_collider", j.vel, ENG_F32, 3, once, &none)))
        return st;
    j.closed = !strcmp(pl_param_str(n, "boundary"), "closed");
    j.colliders = j.collider != NULL;
    j.h = eng_field_info(j.vel)->voxel_size;
    j.tol = pl_param_num(n, "tolerance");
    /* an empty stand-in keeps the kernels' collider parameter bound when there is none */
    eng_field *col = j.colliders ? j.collider : none;
    /* stencils look one voxel beyond the domain, where the scratch fields must read 0 */
    eng_field *scratch[3] = {j.p, j.rhs, j.dom};
    for (int i = 0; i < 3; i++)
        if ((st = smoke_prune(n, env, j.vel, scratch[i])) != PLUME_OK)
            return st;
    eng_arg flags[2] = {smoke_num(j.closed), smoke_num(j.colliders)};
    eng_arg da[6] = {F(j.vel), F(col), F(j.dom), F(j.p), flags[0], flags[1]};
    eng_arg wa[5] = {F(j.vel), F(j.dom), F(col), flags[0], flags[1]};
    eng_arg ra[3] = {F(j.vel), F(j.dom), F(j.rhs)};
    if ((st = smoke_launch(n, env, "project_domain", da, 6)) != PLUME_OK ||
        (st = smoke_launch(n, env, "project_walls", wa, 5)) != PLUME_OK ||
        (st = smoke_launch(n, env, "project_rhs", ra, 3)) != PLUME_OK)
        return st;
    st = strcmp(pl_param_str(n, "solver"), "rbgs") ? solve_mgpcg(n, env, &j)
                                                    : solve_rbgs(n, env, &j);
    if (st != PLUME_OK)
        return st;
    eng_arg sa[6] = {F(j.vel), F(j.p), F(j.dom), F(col), flags[0], flags[1]};
    if ((st = smoke_launch(n, env, "project_subtract", sa, 6)) != PLUME_OK)
        return st;
    for (int k = PORT_DENSITY; j.colliders && k <= PORT_TEMPERATURE; k++) {
        if (!env->port_fields[k])
            continue;
        eng_arg ca[4] = {F(j.vel), F(j.dom), F(col), F(env->port_fields[k])};
        if ((st = smoke_launch(n, env, "project_clear_solid", ca, 4)) != PLUME_OK)
            return st;
    }
    return PLUME_OK;
}

const pl_node_type pl_node_smoke_project = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.project",
             .label = "Smoke Project",
             .category = "Smoke",
             .help = "Makes the staggered velocity divergence-free: a pressure Poisson solve "
                     "(multigrid-preconditioned conjugate gradients, or red-black Gauss-Seidel; "
                     "tolerance and iteration cap) and the pressure gradient subtracted. Open "
                     "or closed boundaries at the edge of the active domain; static solids "
                     "from an optional collider level set.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
};
