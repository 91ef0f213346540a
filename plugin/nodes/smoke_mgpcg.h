/* smoke_mgpcg.h — the host side of the multigrid-preconditioned conjugate gradient (MGPCG)
 * Poisson solver whose kernels are plugin/kernels/mgpcg3.pk (3-D) and mgpcg2.pk (2-D): the
 * launch order of a solve and of a V-cycle, the level hierarchy, the mean removal of singular
 * (all-Neumann) problems and the tolerance checks. The launch sequence exists only here:
 * org.plume.smoke.project (smoke_project.c) solves its pressure with it, and the engine test
 * and the benchmark of the kernels (tests/engine/test_mgpcg.c, tests/bench/bench_mgpcg.c)
 * build this file too. It needs the engine's kernel API only (engine/kernel.h), nothing of the
 * plugin.
 *
 * The problem is A x = b with A = h^2 (-laplacian) over the cells of a domain field; the value
 * of the domain field at a cell says what it is (mgpcg3.pk's header): > 0 an unknown, the value
 * being A's diagonal; 0 Dirichlet (x = 0); < 0 Neumann. Every field of the solver (x, b and the
 * solver's own) must read 0 at cells that are no unknowns.
 *
 * Ownership: the caller owns the program (compiled from mgpcg3.pk or mgpcg2.pk), the finest
 * domain, b and x; the solver's own fields are declared in the engine context by mgpcg_init
 * (named "<prefix>:mg.<what>"; a field of that name that already exists is reused) and belong
 * to the context; mgpcg_build marks them transient (engine.h: a checkpoint keeps their
 * declarations only, as no solve after that build reads what an earlier one left in them).
 * The mgpcg struct holds pointers only: it needs no freeing.
 *
 * Threads: the engine context's thread only. Nothing here reads fields back except the
 * tolerance checks of mgpcg_solve (each one a sync); everything else only queues launches.
 *
 * Errors: functions return ENG_OK or an ENG_E* code; the message is in s->error (the kernel
 * or field concerned, with eng_error()'s text when the engine failed). */
#ifndef PLUME_NODES_SMOKE_MGPCG_H
#define PLUME_NODES_SMOKE_MGPCG_H

#include "engine/kernel.h"

#define MGPCG_MAX_LEVELS 8

typedef struct mgpcg_config {
    int dim;           /* 2 or 3: the dimension of the fields and of the program's kernels */
    int levels;        /* 1..MGPCG_MAX_LEVELS, level 0 the finest */
    int sweeps;        /* red-black sweeps before each restriction and after each prolongation */
    int bottom_sweeps; /* on the coarsest level, then as many in the mirrored colour order */
    int masked;        /* coarse domains keep activity per voxel (bitmasked leaves): for
                        * mgpcg_build_open's domains of unknowns only; 0 for mgpcg_build's */
} mgpcg_config;

typedef struct mgpcg {
    eng_context *ctx;
    eng_program *prog;
    mgpcg_config cfg;
    eng_field *dom[MGPCG_MAX_LEVELS]; /* dom[0] is the caller's */
    eng_field *r[MGPCG_MAX_LEVELS], *z[MGPCG_MAX_LEVELS], *t[MGPCG_MAX_LEVELS];
    eng_field *p, *q;                                     /* CG vectors on level 0 */
    eng_field *rr0, *rr, *rz, *rzn, *pq, *rmax, *msum, *mcount; /* 0-D scalars */
    eng_field *best; /* a singular solve's best iterate so far; declared by its first solve */
    char prefix[200]; /* the fields' names start with it */
    int singular; /* set by the last mgpcg_build: no Dirichlet cell anywhere */
    char error[512];
    /* error starts with the node whose kernel failed (eng_error_origin): another node's kernel
     * whose fault this solve's sync found; passed on as it is */
    int error_names_node;
} mgpcg;

/* Sets s up for the finest domain dom0 and declares (or finds) the solver's fields, on dom0's
 * grid, with cfg->levels levels. May be called again with another configuration. */
int mgpcg_init(mgpcg *s, eng_context *ctx, eng_program *prog, const mgpcg_config *cfg,
               eng_field *dom0, const char *prefix);

/* The coarse levels of a domain of unknowns only, with Dirichlet cells all around (every
 * coarse unknown gets diagonal 2 * dim): one mg_coarsen per level. For a domain built once. */
int mgpcg_build_open(mgpcg *s);

/* The coarse levels of a 3-D domain with 8^3 blocks whose cells may be of any kind, rebuilt
 * from dom[0] as it is now: blocks left from an earlier domain are deactivated in every level
 * field, coarse kinds and diagonals follow mgpcg3.pk's rule. `closed`: every cell outside the
 * domain's unknowns is Neumann, so the problem is singular and mgpcg_solve removes the mean of
 * b and of each preconditioned residual. Also empties the level-0 fields of cells left from an
 * earlier domain (x is the caller's to keep at 0 outside the unknowns). */
int mgpcg_build(mgpcg *s, int closed);

typedef struct mgpcg_solve_opts {
    int max_iterations; /* CG iterations at most */
    double tolerance;   /* stop once max |b - A x| over the unknowns is at most this (units of
                         * b); 0: run max_iterations without reading anything back */
    int check_every;    /* CG iterations between checks (each check syncs) */
    int warm;           /* x holds a first guess (0 at cells that are no unknowns); else x = 0 */
} mgpcg_solve_opts;

typedef struct mgpcg_result {
    int iterations;  /* CG iterations run */
    double residual; /* max |b - A x| at the last check; -1 when tolerance was 0 */
    int converged;   /* residual <= tolerance (0 when tolerance was 0) */
    int stalled;     /* stopped before the cap: the residual had not fallen for a while (f32's
                      * floor above the tolerance) */
} mgpcg_result;

/* Solves A x = b (for a singular problem b's mean is removed first, in place). With a
 * tolerance, it stops at the tolerance, the cap, or a stall (out->stalled); a singular solve
 * that ends worse than its best check leaves that best iterate in x (kept in the transient
 * field "<prefix>:mg.best", declared by its first solve). */
int mgpcg_solve(mgpcg *s, eng_field *b, eng_field *x, const mgpcg_solve_opts *o,
                mgpcg_result *out);

/* Launches only: one CG solve of `iterations` iterations with no check (the benchmark's timed
 * unit: one flush, no host read-back). cold: from x = 0; else warm from x. */
int mgpcg_solve_queued(mgpcg *s, eng_field *b, eng_field *x, int iterations, int warm);

#endif
