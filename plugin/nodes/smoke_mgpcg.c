/* The MGPCG solver's host side (smoke_mgpcg.h): launches of mgpcg3.pk / mgpcg2.pk kernels. */
#include "plugin/nodes/smoke_mgpcg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int mgp_fail(mgpcg *s, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    s->error_names_node = 0;
    return rc;
}

/* The engine's message as it is, and whether it starts with a kernel's node. */
static int mgp_engine_named(mgpcg *s, int rc)
{
    mgp_fail(s, rc, "%s", eng_error(s->ctx));
    s->error_names_node = eng_error_origin(s->ctx) > 0;
    return rc;
}

static eng_arg mgp_fa(eng_field *f)
{
    eng_arg a;
    memset(&a, 0, sizeof a);
    a.field = f;
    return a;
}

static eng_arg mgp_ia(int64_t v)
{
    eng_arg a;
    memset(&a, 0, sizeof a);
    a.i[0] = v;
    a.f[0] = (double)v;
    return a;
}

static int mgp_launch(mgpcg *s, const char *name, const eng_arg *args, uint32_t n)
{
    eng_kernel *k = eng_program_find(s->prog, name);
    if (!k)
        return mgp_fail(s, ENG_ENOTFOUND, "mgpcg: the program has no kernel '%s'", name);
    int rc = eng_launch(s->ctx, k, args, n);
    if (rc && eng_error_origin(s->ctx)) /* a flush found another node's kernel's error */
        return mgp_engine_named(s, rc);
    if (rc)
        return mgp_fail(s, rc, "mgpcg: launching %s: %s", name, eng_error(s->ctx));
    return ENG_OK;
}

/* Launches kernel `name` with the arguments listed; returns from the caller on failure. */
#define MGP_K(s, name, ...)                                                                        \
    do {                                                                                       \
        const eng_arg args_[] = {__VA_ARGS__};                                                 \
        int rc_ = mgp_launch(s, name, args_, (uint32_t)(sizeof args_ / sizeof args_[0]));          \
        if (rc_)                                                                               \
            return rc_;                                                                        \
    } while (0)

/* A solver field on dom0's grid, coarsened `level` times; dim 0 for a scalar. */
static int mgp_field(mgpcg *s, const char *prefix, const char *what, int level, int dim,
                 int masked, eng_field **out)
{
    char name[512], layout[160];
    if (level >= 0)
        snprintf(name, sizeof name, "%s:mg%d.%s", prefix, level, what);
    else
        snprintf(name, sizeof name, "%s:mg.%s", prefix, what);
    eng_field *f = eng_field_find(s->ctx, name);
    if (f) {
        if (eng_field_info(f)->type != ENG_F32)
            return mgp_fail(s, ENG_ETYPE, "mgpcg: field '%s' exists and is not a scalar field", name);
        eng_field_set_scratch(f); /* declared by a checkpoint's restore */
        *out = f;
        return ENG_OK;
    }
    snprintf(layout, sizeof layout, "%s", eng_default_layout(dim));
    char *leaf = masked ? strstr(layout, "dense(") : NULL;
    if (leaf) { /* per-voxel activity: the leaf becomes bitmasked */
        char rest[64];
        snprintf(rest, sizeof rest, "%s", leaf + 5);
        snprintf(leaf, sizeof layout - (size_t)(leaf - layout), "bitmasked%s", rest);
    }
    const eng_field_desc *fine = eng_field_info(s->dom[0]);
    eng_field_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.type = ENG_F32;
    d.layout = layout;
    d.voxel_size = fine->voxel_size * (double)(1 << (level > 0 ? level : 0));
    memcpy(d.origin, fine->origin, sizeof d.origin);
    int rc = eng_field_declare(s->ctx, &d, out);
    if (rc)
        return mgp_fail(s, rc, "mgpcg: declaring '%s': %s", name, eng_error(s->ctx));
    eng_field_set_scratch(*out);
    return ENG_OK;
}

int mgpcg_init(mgpcg *s, eng_context *ctx, eng_program *prog, const mgpcg_config *cfg,
               eng_field *dom0, const char *prefix)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->prog = prog;
    s->cfg = *cfg;
    s->dom[0] = dom0;
    snprintf(s->prefix, sizeof s->prefix, "%s", prefix);
    if (cfg->dim != 2 && cfg->dim != 3)
        return mgp_fail(s, ENG_EINVAL, "mgpcg: dimension %d (2 or 3)", cfg->dim);
    if (cfg->levels < 1 || cfg->levels > MGPCG_MAX_LEVELS)
        return mgp_fail(s, ENG_EINVAL, "mgpcg: %d levels (1..%d)", cfg->levels, MGPCG_MAX_LEVELS);
    if (cfg->sweeps < 0 || cfg->bottom_sweeps < 0)
        return mgp_fail(s, ENG_EINVAL, "mgpcg: negative sweep count");
    int d = cfg->dim, rc;
    for (int l = 0; l < cfg->levels; l++) {
        if ((l > 0 && (rc = mgp_field(s, prefix, "dom", l, d, cfg->masked, &s->dom[l]))) ||
            (rc = mgp_field(s, prefix, "r", l, d, 0, &s->r[l])) ||
            (rc = mgp_field(s, prefix, "z", l, d, 0, &s->z[l])) ||
            (rc = mgp_field(s, prefix, "t", l, d, 0, &s->t[l])))
            return rc;
    }
    struct {
        const char *what;
        int dim;
        eng_field **f;
    } own[] = {{"p", d, &s->p},       {"q", d, &s->q},       {"rr0", 0, &s->rr0},
               {"rr", 0, &s->rr},     {"rz", 0, &s->rz},     {"rz_new", 0, &s->rzn},
               {"pq", 0, &s->pq},     {"rmax", 0, &s->rmax}, {"sum", 0, &s->msum},
               {"count", 0, &s->mcount}};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if ((rc = mgp_field(s, prefix, own[i].what, -1, own[i].dim, 0, own[i].f)))
            return rc;
    return ENG_OK;
}

int mgpcg_build_open(mgpcg *s)
{
    s->singular = 0;
    for (int l = 0; l + 1 < s->cfg.levels; l++)
        MGP_K(s, "mg_coarsen", mgp_fa(s->dom[l]), mgp_fa(s->dom[l + 1]));
    return ENG_OK;
}

int mgpcg_build(mgpcg *s, int closed)
{
    if (s->cfg.dim != 3 || s->cfg.masked)
        return mgp_fail(s, ENG_EINVAL, "mgpcg: rebuilt hierarchies need 3-D fields with 8^3 blocks");
    s->singular = closed != 0;
    /* Rebuilt like this before every solve, the hierarchy and the vectors keep nothing from
     * the last one (x is the caller's): transient, unlike mgpcg_build_open's, whose coarse
     * domains and vectors carry over. */
    eng_field *own[] = {s->p, s->q, s->rr0, s->rr, s->rz, s->rzn, s->pq, s->rmax, s->msum, s->mcount};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        eng_field_set_transient(own[i]);
    for (int l = 0; l < s->cfg.levels; l++) {
        if (l > 0)
            eng_field_set_transient(s->dom[l]);
        eng_field_set_transient(s->r[l]);
        eng_field_set_transient(s->z[l]);
        eng_field_set_transient(s->t[l]);
    }
    /* level 0: the caller keeps dom[0]'s blocks; the solver's fields lose blocks outside them
     * (cells there must read 0 again) */
    eng_field *fine[] = {s->r[0], s->z[0], s->t[0], s->p, s->q};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
        MGP_K(s, "mg_prune", mgp_fa(s->dom[0]), mgp_fa(fine[i]));
    for (int l = 0; l + 1 < s->cfg.levels; l++) {
        eng_field *df = s->dom[l], *dc = s->dom[l + 1];
        MGP_K(s, "mg_coarse_prune", mgp_fa(df), mgp_fa(dc));
        MGP_K(s, "mg_coarse_blocks", mgp_fa(df), mgp_fa(dc));
        MGP_K(s, "mg_prune", mgp_fa(dc), mgp_fa(s->r[l + 1]));
        MGP_K(s, "mg_prune", mgp_fa(dc), mgp_fa(s->z[l + 1]));
        MGP_K(s, "mg_prune", mgp_fa(dc), mgp_fa(s->t[l + 1]));
        /* t of the coarse level holds the kinds until the first V-cycle overwrites it */
        MGP_K(s, "mg_coarse_kind", mgp_fa(df), mgp_fa(dc), mgp_fa(s->t[l + 1]), mgp_ia(closed != 0));
        MGP_K(s, "mg_coarse_diag", mgp_fa(dc), mgp_fa(s->t[l + 1]), mgp_ia(closed != 0));
    }
    return ENG_OK;
}

static int mgp_smooth(mgpcg *s, int l, int color)
{
    MGP_K(s, "mg_smooth", mgp_fa(s->dom[l]), mgp_fa(s->r[l]), mgp_fa(s->z[l]), mgp_ia(color));
    return ENG_OK;
}

/* Both colours in the order given, `count` times. */
static int mgp_sweeps(mgpcg *s, int l, int count, int first)
{
    for (int k = 0; k < count; k++) {
        int rc;
        if ((rc = mgp_smooth(s, l, first)) || (rc = mgp_smooth(s, l, 1 - first)))
            return rc;
    }
    return ENG_OK;
}

/* z[0] = M^-1 r[0]: one V-cycle (mgpcg3.pk's header). Pre-smoothing runs red then black,
 * post-smoothing black then red, so the cycle is symmetric. */
static int mgp_vcycle(mgpcg *s)
{
    int L = s->cfg.levels, rc;
    for (int l = 0; l < L - 1; l++) {
        MGP_K(s, "mg_zero", mgp_fa(s->dom[l]), mgp_fa(s->z[l]));
        if ((rc = mgp_sweeps(s, l, s->cfg.sweeps, 0)))
            return rc;
        MGP_K(s, "mg_residual", mgp_fa(s->dom[l]), mgp_fa(s->r[l]), mgp_fa(s->z[l]), mgp_fa(s->t[l]));
        MGP_K(s, "mg_restrict", mgp_fa(s->dom[l + 1]), mgp_fa(s->t[l]), mgp_fa(s->r[l + 1]));
    }
    MGP_K(s, "mg_zero", mgp_fa(s->dom[L - 1]), mgp_fa(s->z[L - 1]));
    if ((rc = mgp_sweeps(s, L - 1, s->cfg.bottom_sweeps, 0)) ||
        (rc = mgp_sweeps(s, L - 1, s->cfg.bottom_sweeps, 1)))
        return rc;
    for (int l = L - 2; l >= 0; l--) {
        MGP_K(s, "mg_prolong", mgp_fa(s->dom[l]), mgp_fa(s->z[l + 1]), mgp_fa(s->z[l]));
        if ((rc = mgp_sweeps(s, l, s->cfg.sweeps, 1)))
            return rc;
    }
    /* constants are A's null space when nothing is Dirichlet: keep z orthogonal to them */
    if (s->singular) {
        MGP_K(s, "mg_mean", mgp_fa(s->dom[0]), mgp_fa(s->z[0]), mgp_fa(s->msum), mgp_fa(s->mcount));
        MGP_K(s, "mg_remove_mean", mgp_fa(s->dom[0]), mgp_fa(s->z[0]), mgp_fa(s->msum), mgp_fa(s->mcount));
    }
    return ENG_OK;
}

static int mgp_start(mgpcg *s, eng_field *b, eng_field *x, int warm)
{
    eng_field *d = s->dom[0];
    int rc;
    if (s->singular) {
        MGP_K(s, "mg_mean", mgp_fa(d), mgp_fa(b), mgp_fa(s->msum), mgp_fa(s->mcount));
        MGP_K(s, "mg_remove_mean", mgp_fa(d), mgp_fa(b), mgp_fa(s->msum), mgp_fa(s->mcount));
    }
    MGP_K(s, warm ? "cg_start_warm" : "cg_start", mgp_fa(d), mgp_fa(b), mgp_fa(x), mgp_fa(s->r[0]), mgp_fa(s->rr0));
    if ((rc = mgp_vcycle(s)))
        return rc;
    MGP_K(s, "cg_dot", mgp_fa(d), mgp_fa(s->r[0]), mgp_fa(s->z[0]), mgp_fa(s->rz));
    MGP_K(s, "cg_copy", mgp_fa(d), mgp_fa(s->z[0]), mgp_fa(s->p));
    return ENG_OK;
}

static int mgp_iteration(mgpcg *s, eng_field *x)
{
    eng_field *d = s->dom[0], *r = s->r[0];
    int rc;
    MGP_K(s, "cg_apply", mgp_fa(d), mgp_fa(s->p), mgp_fa(s->q), mgp_fa(s->pq));
    MGP_K(s, "cg_update", mgp_fa(d), mgp_fa(s->p), mgp_fa(s->q), mgp_fa(x), mgp_fa(r), mgp_fa(s->rz), mgp_fa(s->pq), mgp_fa(s->rr));
    if ((rc = mgp_vcycle(s)))
        return rc;
    MGP_K(s, "cg_dot", mgp_fa(d), mgp_fa(r), mgp_fa(s->z[0]), mgp_fa(s->rzn));
    MGP_K(s, "cg_direction", mgp_fa(d), mgp_fa(s->z[0]), mgp_fa(s->p), mgp_fa(s->rz), mgp_fa(s->rzn));
    return ENG_OK;
}

int mgpcg_solve_queued(mgpcg *s, eng_field *b, eng_field *x, int iterations, int warm)
{
    int rc = mgp_start(s, b, x, warm);
    for (int i = 0; i < iterations && !rc; i++)
        rc = mgp_iteration(s, x);
    return rc;
}

/* max |b - A x| over the unknowns, read back (a sync). */
static int mgp_check(mgpcg *s, eng_field *b, eng_field *x, double *out)
{
    MGP_K(s, "cg_residual_max", mgp_fa(s->dom[0]), mgp_fa(b), mgp_fa(x), mgp_fa(s->rmax));
    int rc = eng_sync(s->ctx);
    if (rc) /* what failed is whatever ran before this sync, maybe another node's kernel */
        return mgp_engine_named(s, rc);
    int32_t o[3] = {0, 0, 0};
    *out = eng_field_read(s->rmax, o, 0);
    return ENG_OK;
}

int mgpcg_solve(mgpcg *s, eng_field *b, eng_field *x, const mgpcg_solve_opts *o,
                mgpcg_result *out)
{
    out->iterations = 0;
    out->residual = -1;
    out->converged = 0;
    out->stalled = 0;
    int every = o->check_every > 0 ? o->check_every : 1, rc;
    double tol = o->tolerance;
    if ((rc = mgp_start(s, b, x, o->warm)))
        return rc;
    if (tol > 0 && (rc = mgp_check(s, b, x, &out->residual)))
        return rc;
    /* In f32 the residual stops falling somewhere (sooner on a singular, closed problem); CG
     * run on past that point drifts, and 5,000 iterations left 100x the divergence of 12. So
     * the solve also stops once the residual has not reached a new low for a while (CG's max
     * residual may rise for a few iterations on the way down: the wait is generous). A
     * singular problem can blow up within that wait (p nearly in A's null space, a huge step):
     * its best iterate is kept and is the answer when the last one is worse. Open problems
     * were seen to level off, not blow up, and skip the copies. */
    double best = out->residual;
    int best_at = 0, wait = 3 * every > 30 ? 3 * every : 30;
    int keep = s->singular && tol > 0 && !(out->residual <= tol);
    if (keep) {
        if (!s->best && (rc = mgp_field(s, s->prefix, "best", -1, s->cfg.dim, 0, &s->best)))
            return rc;
        eng_field_set_transient(s->best); /* written over the domain first, read only there */
        MGP_K(s, "cg_copy", mgp_fa(s->dom[0]), mgp_fa(x), mgp_fa(s->best));
    }
    while (out->iterations < o->max_iterations && !(tol > 0 && out->residual <= tol)) {
        int left = o->max_iterations - out->iterations;
        int batch = tol > 0 && every < left ? every : left;
        for (int i = 0; i < batch; i++)
            if ((rc = mgp_iteration(s, x)))
                return rc;
        out->iterations += batch;
        if (tol > 0 && (rc = mgp_check(s, b, x, &out->residual)))
            return rc;
        if (tol > 0 && out->residual < best) {
            best = out->residual;
            best_at = out->iterations;
            if (keep && out->residual > tol)
                MGP_K(s, "cg_copy", mgp_fa(s->dom[0]), mgp_fa(x), mgp_fa(s->best));
        } else if (tol > 0 && out->iterations - best_at >= wait) {
            out->stalled = 1;
            break;
        }
    }
    if (keep && out->residual > best) {
        MGP_K(s, "cg_copy", mgp_fa(s->dom[0]), mgp_fa(s->best), mgp_fa(x));
        out->residual = best;
    }
    out->converged = tol > 0 && out->residual <= tol;
    return ENG_OK;
}
