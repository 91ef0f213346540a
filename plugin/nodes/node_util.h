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

#endif
