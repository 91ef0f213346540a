/* The checkerboard of blocks the lanes and rows tests share: blocks 0..3 on each axis of
 * 8^3 voxels, every other one active, values a pattern per field number, so that a voxel's
 * neighbours across a block face are inactive (they read the background). */
#ifndef PLUME_TESTS_ENGINE_CHECKER_H
#define PLUME_TESTS_ENGINE_CHECKER_H

#include "engine_test.h"

#include <stdint.h>

static inline int on(int x, int y, int z)
{
    if (x < 0 || y < 0 || z < 0 || x >= 32 || y >= 32 || z >= 32)
        return 0;
    return ((x / 8 + y / 8 + z / 8) & 1) == 0;
}

static inline float pat(int f, int x, int y, int z)
{
    return (float)((x * 7 + y * 3 + z * 5 + f * 11) % 17) * 0.25f - 2.0f;
}

/* What a read of field pattern f at (x, y, z) gives: the pattern, or bg where inactive. */
static inline float at_bg(int f, int x, int y, int z, float bg)
{
    return on(x, y, z) ? pat(f, x, y, z) : bg;
}

/* Writes the active blocks of fld, k components per voxel: component c of voxel (x, y, z) is
 * value(x, y, z, c, user). */
static inline void checker_fill_with(eng_context *ctx, eng_field *fld, int k,
                                     float (*value)(int, int, int, int, const void *),
                                     const void *user)
{
    float v[4 * 512];
    for (int bx = 0; bx < 4; bx++)
        for (int by = 0; by < 4; by++)
            for (int bz = 0; bz < 4; bz++) {
                int32_t o[3] = {bx * 8, by * 8, bz * 8};
                if (!on(o[0], o[1], o[2]))
                    continue;
                for (int n = 0; n < 512; n++)
                    for (int c = 0; c < k; c++)
                        v[k * n + c] = value(o[0] + n / 64, o[1] + (n / 8) % 8, o[2] + n % 8, c, user);
                CHECK_OK(ctx, eng_field_write_block(ctx, fld, o, v, NULL));
            }
}

static inline float checker_pat_value(int x, int y, int z, int c, const void *f)
{
    return pat(*(const int *)f + c, x, y, z);
}

/* Writes the active blocks of fld: component c of the k per voxel follows pattern f + c. */
static inline void checker_fill(eng_context *ctx, eng_field *fld, int f, int k)
{
    checker_fill_with(ctx, fld, k, checker_pat_value, &f);
}

typedef float (*checker_voxel_fn)(int, int, int);

static inline float checker_fn_value(int x, int y, int z, int c, const void *fn)
{
    (void)c;
    return (*(const checker_voxel_fn *)fn)(x, y, z);
}

/* Writes the active blocks of fld (one component) with value(x, y, z) at each voxel. */
static inline void checker_fill_fn(eng_context *ctx, eng_field *fld, checker_voxel_fn value)
{
    checker_fill_with(ctx, fld, 1, checker_fn_value, &value);
}

/* Every active voxel of the pattern, x outermost. */
#define FOR_ACTIVE(x, y, z)                                                                    \
    for (int x = 0; x < 32; x++)                                                               \
        for (int y = 0; y < 32; y++)                                                           \
            for (int z = 0; z < 32; z++)                                                       \
                if (on(x, y, z))

#endif
