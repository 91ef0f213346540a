/* Whether a sphere source can fit the memory budget, decided before it loops over its voxels:
 * a sphere far larger than the budget (or than the domain) would otherwise run until the budget
 * failed it, past the host's cancel. Called from a node's cook (the context's thread). */
#ifndef PLUME_SPHERE_BUDGET_H
#define PLUME_SPHERE_BUDGET_H

#include "plugin/plugin.h"

/* The sphere: centre c, radius r (world units), on a grid of voxel size h and origin o (voxel
 * i's centre at o + (i + 0.5) h); lo..hi (hi exclusive) the voxel box the source will visit,
 * already cut to what the field can hold, and clipped whether it was cut. Each voxel it sets
 * holds bytes_per_voxel at least. PLUME_OK, or PLUME_ERR_MEMORY_BUDGET (recorded on the
 * context) when even a lower bound of what it needs passes the budget. */
plume_status sphere_fits_budget(pl_node *n, const double c[3], double r, double h,
                                const double o[3], const double lo[3], const double hi[3],
                                int clipped, double bytes_per_voxel);

#endif
