/* A hand-written C version of the smoke solver's advection step over dense arrays: the bound
 * the generated code is compared with in `plume-bench smoke`.
 *
 * It does the arithmetic of the default scene's advect node (plugin/kernels/smoke.pk:
 * MacCormack with clamping, RK2 backtraces through the cell-centred velocity, density and
 * temperature cell-centred, the velocity staggered and advected face by face) over a dense box
 * of n^3 voxels with a margin of background voxels around it, on `threads` threads. Dense
 * arrays need no sparse lookups, and tests/bench/CMakeLists.txt builds this file with clang
 * -O3 -march=native twice: once vectorized (the x loops, 8 or 16 voxels per instruction) and
 * once scalar. So the vectorized figure is what a code generator could at best reach on this
 * machine for this step, the scalar one what plain C reaches without vectors.
 *
 * Everything is allocated and freed inside each call; the call is reentrant. */
#ifndef PLUME_BENCH_SMOKE_REF_H
#define PLUME_BENCH_SMOKE_REF_H

typedef struct smoke_ref_result {
    double seconds;       /* the median of `reps` timed steps (the arrays are set up once) */
    double voxels;        /* n^3: the voxels each step updates */
    int vectorized;       /* 1 for the vectorized build */
    int threads;          /* threads the steps ran on (fewer than asked if some failed to start) */
    double check_error;   /* the self-check's largest error (0 when it passed exactly) */
    int check_ok;         /* a uniform flow by whole voxels moves the fields exactly */
} smoke_ref_result;

/* n: 16 .. ; reps: 1 .. 64. Returns 0, or -1 with errno set (EINVAL for bad arguments, ENOMEM,
 * or the error of the pthread call that failed). */
int smoke_ref_advect_vec(int n, int threads, int reps, smoke_ref_result *out);
int smoke_ref_advect_scalar(int n, int threads, int reps, smoke_ref_result *out);

#endif
