/* A lower bound on a sphere source's voxels against the memory budget (sphere_budget.h). */
#include "plugin/nodes/sphere_budget.h"

#include "engine/engine.h"

/* At least how many voxels of the box the sphere covers, by a cheap bound: half its volume when
 * its own box lies in the field (not clipped: the discrete count is near the volume), or the
 * whole box when every voxel of the box lies inside it; 0 when neither holds (the budget is
 * then enforced as the voxels are activated). */
static double voxels_at_least(const double c[3], double r, double h, const double o[3],
                              const double lo[3], const double hi[3], int clipped)
{
    if (!clipped)
        return 0.5 * 4.0 / 3.0 * 3.14159265358979 * (r / h) * (r / h) * (r / h);
    double far2 = 0;
    for (int k = 0; k < 3; k++) {
        double a = o[k] + (lo[k] + 0.5) * h - c[k], b = o[k] + (hi[k] - 0.5) * h - c[k];
        a = a < 0 ? -a : a;
        b = b < 0 ? -b : b;
        far2 += (a > b ? a : b) * (a > b ? a : b);
    }
    return far2 <= r * r ? (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]) : 0;
}

plume_status sphere_fits_budget(pl_node *n, const double c[3], double r, double h,
                                const double o[3], const double lo[3], const double hi[3],
                                int clipped, double bytes_per_voxel)
{
    double voxels = voxels_at_least(c, r, h, o, lo, hi, clipped);
    double need = voxels * bytes_per_voxel;
    double budget = (double)eng_memory_budget(n->ctx->eng);
    if (need <= budget)
        return PLUME_OK;
    return pl_fail(n->ctx, PLUME_ERR_MEMORY_BUDGET,
                   "node '%s': memory budget exceeded: the sphere (radius %g, %.3g voxels of size "
                   "%g) needs at least %.3g bytes, more than the memory budget of %.3g bytes "
                   "(plume cook --memory-budget)", n->name, r, voxels, h, need, budget);
}
