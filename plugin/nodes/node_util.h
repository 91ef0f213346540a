/* Helpers for describing built-in node types compactly. */
#ifndef PLUME_NODE_UTIL_H
#define PLUME_NODE_UTIL_H

#include "plume/plume.h"

#define P_BASE(id_, label_, help_) .struct_size = sizeof(plume_param_desc), .id = id_, .label = label_, .help = help_

#define PARAM_FLOAT(id_, label_, help_, def, lo, hi, ulo, uhi)                                   \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_FLOAT,                                        \
     .flags = PLUME_PARAM_FLAG_ANIMATABLE | PLUME_PARAM_FLAG_HAS_HARD_RANGE | PLUME_PARAM_FLAG_HAS_UI_RANGE, \
     .default_number = def, .default_string = "", .hard_min = lo, .hard_max = hi, .ui_min = ulo, .ui_max = uhi}
#define PARAM_INT(id_, label_, help_, def, lo, hi, ulo, uhi)                                     \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_INT,                                          \
     .flags = PLUME_PARAM_FLAG_HAS_HARD_RANGE | PLUME_PARAM_FLAG_HAS_UI_RANGE,                     \
     .default_number = def, .default_string = "", .hard_min = lo, .hard_max = hi, .ui_min = ulo, .ui_max = uhi}
#define PARAM_BOOL(id_, label_, help_, def)                                                      \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_BOOL, .default_number = def, .default_string = ""}
#define PARAM_VEC3(id_, label_, help_, x, y, z, lo, hi, ulo, uhi)                               \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_VEC3,                                         \
     .flags = PLUME_PARAM_FLAG_ANIMATABLE | PLUME_PARAM_FLAG_HAS_HARD_RANGE | PLUME_PARAM_FLAG_HAS_UI_RANGE, \
     .default_vec3 = {x, y, z}, .default_string = "", .hard_min = lo, .hard_max = hi, .ui_min = ulo, .ui_max = uhi}
#define PARAM_ENUM(id_, label_, help_, def, items)                                               \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_ENUM, .default_string = def,                 \
     .enum_count = sizeof(items) / sizeof(items[0]), .enum_items = items}
#define PARAM_STRING(id_, label_, help_, def)                                                    \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_STRING, .default_string = def}
#define PARAM_FILE(id_, label_, help_, def, flags_)                                              \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_FILE_PATH, .flags = flags_, .default_string = def}
#define PARAM_CODE(id_, label_, help_, def)                                                      \
    {P_BASE(id_, label_, help_), .type = PLUME_PARAM_CODE, .default_string = def}

#define PORT(id_, label_, help_, vt, dir, def, opt)                                              \
    {.struct_size = sizeof(plume_port_desc), .id = id_, .label = label_, .help = help_,           \
     .value_type = vt, .direction = dir, .default_field = def, .optional = opt}

#define COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* At least how many voxels of the box lo..hi (hi exclusive; voxel i's centre at
 * o + (i + 0.5) h) a sphere of centre c and radius r covers, by a cheap bound: half its volume
 * when its own box lies in the field (clipped 0: the discrete count is near the volume), or the
 * whole box when every voxel of the box lies inside it; 0 when neither holds (the budget is then
 * enforced as the voxels are activated). For refusing at once a sphere the memory budget cannot
 * hold, which would otherwise run until it filled the budget. */
static inline double sphere_voxels_at_least(const double c[3], double r, double h, const double o[3],
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

#endif
