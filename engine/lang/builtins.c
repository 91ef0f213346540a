/* builtins.c — the names of the builtin functions (their typing is in check_builtin.c). */
#include <string.h>

#include "engine/lang/lang_internal.h"

static const char *const names[PK_B_COUNT] = {
    [PK_B_NONE] = "?",
    [PK_B_SQRT] = "sqrt",         [PK_B_EXP] = "exp",           [PK_B_LOG] = "log",
    [PK_B_SIN] = "sin",           [PK_B_COS] = "cos",           [PK_B_TAN] = "tan",
    [PK_B_FLOOR] = "floor",       [PK_B_CEIL] = "ceil",         [PK_B_FRACT] = "fract",
    [PK_B_ROUND] = "round",       [PK_B_TRUNC] = "trunc",       [PK_B_POW] = "pow",
    [PK_B_ATAN2] = "atan2",       [PK_B_ABS] = "abs",           [PK_B_SIGN] = "sign",
    [PK_B_MIN] = "min",           [PK_B_MAX] = "max",           [PK_B_CLAMP] = "clamp",
    [PK_B_LERP] = "lerp",         [PK_B_DOT] = "dot",           [PK_B_CROSS] = "cross",
    [PK_B_LENGTH] = "length",     [PK_B_NORMALIZE] = "normalize",
    [PK_B_TRANSPOSE] = "transpose", [PK_B_DETERMINANT] = "determinant",
    [PK_B_IS_ACTIVE] = "is_active", [PK_B_ACTIVATE] = "activate",
    [PK_B_DEACTIVATE] = "deactivate", [PK_B_VOXEL_SIZE] = "voxel_size",
};

const char *pk_builtin_name(int b) { return b > 0 && b < PK_B_COUNT ? names[b] : "?"; }

int pk_builtin_lookup(const char *name) {
    for (int b = 1; b < PK_B_COUNT; b++)
        if (strcmp(names[b], name) == 0)
            return b;
    return 0;
}
