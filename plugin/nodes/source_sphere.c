/* org.plume.source.sphere: an analytic sphere emitter writing a value into a scalar field.
 * Host-side C for now; it becomes a kernel-language node once the kernel engine exists. */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/sphere_budget.h"
#include "plugin/plugin.h"

#include <math.h>
#include <string.h>

static const char *const modes[] = {"max", "set", "add"};

static const plume_param_desc params[] = {
    PARAM_VEC3("center", "Center", "Centre of the sphere in world units.", 0, 0, 0, -1e6, 1e6, -10, 10),
    PARAM_FLOAT("radius", "Radius", "Radius in world units.", 0.25, 0, 1e6, 0, 10),
    PARAM_FLOAT("value", "Value", "Value written inside the sphere (before the edge falloff).", 1, -1e9, 1e9, 0, 10),
    PARAM_FLOAT("falloff", "Edge Falloff", "Width of the soft edge in voxels; 0 gives a hard edge.", 1.5, 0, 64, 0, 8),
    PARAM_ENUM("mode", "Mode", "How the value combines with what the field holds: max, set or add.", "max", modes),
};

static const plume_port_desc ports[] = {
    PORT("target", "Target", "The scalar field the sphere is written into.", PLUME_VALUE_F32,
         PLUME_PORT_INOUT, "density", 0),
};

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    eng_field *f = env->port_fields[0];
    const eng_field_desc *d = eng_field_info(f);
    const double *c = pl_param_vec3(n, "center");
    double r = pl_param_num(n, "radius"), value = pl_param_num(n, "value");
    double fall = pl_param_num(n, "falloff") * d->voxel_size;
    const char *mode = pl_param_str(n, "mode");
    int m = !strcmp(mode, "set") ? 1 : !strcmp(mode, "add") ? 2 : 0;
    double h = d->voxel_size, reach = r + fall;
    int32_t lo[3], hi[3];
    int64_t can_lo[3], can_hi[3];
    eng_field_index_range(f, can_lo, can_hi);
    double vlo[3], vhi[3];
    int clipped = 0;
    for (int k = 0; k < 3; k++) {
        /* Voxel i covers [origin + i*h, origin + (i+1)*h); blocks are 8-aligned; only voxels
         * the field can hold are visited (a sphere larger than the domain would loop over
         * voxels no field keeps). */
        double a = floor((c[k] - reach - d->origin[k]) / h), b = floor((c[k] + reach - d->origin[k]) / h);
        clipped |= a < (double)can_lo[k] || b > (double)(can_hi[k] - 1);
        a = a < (double)can_lo[k] ? (double)can_lo[k] : a;
        b = b > (double)(can_hi[k] - 1) ? (double)(can_hi[k] - 1) : b;
        if (a > b)
            return pl_fail(env->ctx, PLUME_ERR_OUT_OF_RANGE,
                           "node '%s': the sphere lies outside the voxels field '%s' can hold "
                           "(%lld..%lld on axis %c)", n->name, d->name, (long long)can_lo[k],
                           (long long)can_hi[k] - 1, "xyz"[k]);
        lo[k] = (int32_t)a & ~7;
        hi[k] = (int32_t)b & ~7;
        vlo[k] = a;
        vhi[k] = b + 1;
    }
    int direct = eng_field_has_blocks(f);
    plume_status fits = sphere_fits_budget(n, c, r, h, d->origin, vlo, vhi, clipped, 4.0);
    if (fits != PLUME_OK) /* 4 bytes per voxel it sets, at least */
        return fits;
    for (int32_t bx = lo[0]; bx <= hi[0]; bx += 8)
        for (int32_t by = lo[1]; by <= hi[1]; by += 8)
            for (int32_t bz = lo[2]; bz <= hi[2]; bz += 8) {
                /* Skip blocks the sphere does not reach, so no empty blocks are activated. */
                double dist2 = 0;
                int32_t o[3] = {bx, by, bz};
                for (int k = 0; k < 3; k++) {
                    double b0 = d->origin[k] + o[k] * h, b1 = b0 + 8 * h;
                    double q = c[k] < b0 ? b0 - c[k] : c[k] > b1 ? c[k] - b1 : 0;
                    dist2 += q * q;
                }
                if (dist2 >= reach * reach)
                    continue;
                /* A field of another layout has no block memory to hand out: its cells of
                 * this 8^3 block are read, changed here, and written back. */
                float local[512];
                uint64_t mask[8] = {0};
                float *data = direct ? eng_field_block_data(env->ctx->eng, f, o, 1) : local;
                if (!data) /* the engine said why: past the field's voxels, or its budget */
                    return pl_from_engine(env->ctx, eng_error_code(env->ctx->eng));
                if (!direct)
                    eng_field_read_block(f, o, local, mask);
                for (int i = 0; i < 512; i++) {
                    double p[3] = {d->origin[0] + (bx + (i >> 6) + 0.5) * h,
                                   d->origin[1] + (by + ((i >> 3) & 7) + 0.5) * h,
                                   d->origin[2] + (bz + (i & 7) + 0.5) * h};
                    double dist = sqrt((p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]) +
                                       (p[2] - c[2]) * (p[2] - c[2]));
                    double w = fall > 0 ? (reach - dist) / fall : (dist <= r ? 1 : 0);
                    if (w <= 0)
                        continue;
                    double v = value * (w > 1 ? 1 : w);
                    float *dst = &data[i];
                    mask[i >> 6] |= 1ull << (i & 63);
                    if (m == 1)
                        *dst = (float)v;
                    else if (m == 2)
                        *dst += (float)v;
                    else if (v > *dst)
                        *dst = (float)v;
                }
                int rc = direct ? ENG_OK : eng_field_write_block(env->ctx->eng, f, o, local, mask);
                if (rc != ENG_OK)
                    return pl_from_engine(env->ctx, rc);
            }
    return PLUME_OK;
}

const pl_node_type pl_node_source_sphere = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.source.sphere",
             .label = "Sphere Source",
             .category = "Sources",
             .help = "Writes a soft-edged sphere into a scalar field (density, temperature, ...), "
                     "activating only the blocks it touches.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
};
