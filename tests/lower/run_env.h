/* Runs lowered kernels for real: lower -> offload -> prepare_codegen -> CPU JIT, on a sparse
 * tree whose layout has a sparse 3-D chain (the default volume layout), dense 1-D and 2-D
 * chains and 0-D fields. Field slots are bound by tree field name; i32 fields are stored in
 * the layout's 4-byte f32 cells and described to the IR as i32 (same size). */
#ifndef PLUME_TESTS_LOWER_RUN_ENV_H
#define PLUME_TESTS_LOWER_RUN_ENV_H

#include <stdint.h>

#include "engine/codegen/jit.h"
#include "sparse/tree.h"

#define RUN_LAYOUT                                                                           \
    PLM_LAYOUT_DEFAULT ".place(a, b, n, c:vec3);"                                            \
    "dense(i,1024).place(o1, o2, o3, o4, oi, oj);"                                           \
    "dense(ij,32).place(g2);"                                                                \
    "dense(1).place(s0, s1, si)"

#define RUN_VOXEL_SIZE 0.5f

typedef struct run_env {
    jit *j;
    plm_tree *tree;
} run_env;

/* 0, or 77 (skip) when the JIT cannot start, or -1 */
int run_init(run_env *e);
/* A fresh tree (the old one is destroyed). */
int run_reset(run_env *e);
void run_done(run_env *e);
/* Lowers `kernel` of src with its field parameters bound to the tree fields named in
 * `fields` (in parameter order), runs every task in order with the scalar arguments (8-byte
 * slots, lower.h order; voxel sizes are added). 0, or -1 with a message on stderr. */
int run_kernel(run_env *e, const char *src, const char *kernel, const char *const *fields,
               uint32_t nfields, const uint64_t *scalars, uint32_t nscalars);
/* The element of a tree field as raw 32-bit cells (3 for vec3); returns plm_tree_read's
 * activity (1 active, 0 not). */
int run_read(plm_tree *t, const char *field, int32_t x, int32_t y, int32_t z, uint32_t *cells);

static inline uint64_t run_f32(float f)
{
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    return u;
}

#endif
