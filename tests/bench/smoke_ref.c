/* The dense-array C reference of the smoke advection step (smoke_ref.h). Built twice by
 * tests/bench/CMakeLists.txt with clang -O3 -march=native: REF_VECTOR=1 (the x loops carry
 * clang's vectorize(assume_safety), their voxels being independent as a struct-for's are) and
 * REF_VECTOR=0 with -fno-vectorize -fno-slp-vectorize. REF_ENTRY names the entry point.
 *
 * The arithmetic follows plugin/kernels/smoke.pk line for line: center_velocity, the forward
 * steps (advect_scalar_ranged_rk2 for density and temperature sharing one trace,
 * advect_velocity_ranged_rk2), the backward steps (advect_scalar_rk2 with -s,
 * advect_velocity_back_rk2) and the corrections (maccormack_scalar, maccormack_velocity with
 * clamping and dissipation). Where the solver reads a sparse field, this reads a dense array;
 * sample positions are clamped into the array (the margin holds the background, 0), which
 * costs what the generated code's test of which block a corner lies in costs, or less. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/bench/smoke_ref.h"

#ifndef REF_ENTRY
#error "REF_ENTRY names the entry point"
#endif
#if REF_VECTOR
#define X_LOOP _Pragma("clang loop vectorize(assume_safety) interleave(disable)")
#else
#define X_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#endif

/* Every helper is inlined into the x loops: a call left in one keeps it scalar. */
#define INLINE static inline __attribute__((always_inline))
/* Loops over components are unrolled first, so that the x loop is the innermost one. */
#define C_LOOP _Pragma("clang loop unroll(full)")

#define MARGIN 6 /* background voxels around the box: a CFL-2 RK2 trace plus a corner */

enum { D, T, UX, UY, UZ, VCX, VCY, VCZ, DF, TF, UXF, UYF, UZF, DB, TB, UXB, UYB, UZB,
       DLO, DHI, TLO, THI, UXLO, UYLO, UZLO, UXHI, UYHI, UZHI, NARR };

typedef struct ref {
    int n, S, threads;
    float s, keep_d, keep_t, keep_u, rest_t;
    int used;   /* threads the last timed() ran on */
    int err;    /* the pthread error of the last timed() that failed */
    float *a[NARR];
    pthread_barrier_t bar;
} ref;

INLINE float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }
INLINE float lerp(float a, float b, float t) { return fmaf(b - a, t, a); }

/* The trilinear sample of a at array position (px, py, pz), and the smallest and largest of
 * its 8 corners. */
INLINE float sample_r(const float *restrict a, int S, float px, float py, float pz,
                             float *lo, float *hi)
{
    float lim = (float)(S - 3);
    px = clampf(px, 1.0f, lim);
    py = clampf(py, 1.0f, lim);
    pz = clampf(pz, 1.0f, lim);
    float fx = floorf(px), fy = floorf(py), fz = floorf(pz);
    float tx = px - fx, ty = py - fy, tz = pz - fz;
    int i = ((int)fz * S + (int)fy) * S + (int)fx, SS = S * S;
    float c000 = a[i], c100 = a[i + 1], c010 = a[i + S], c110 = a[i + S + 1];
    float c001 = a[i + SS], c101 = a[i + SS + 1], c011 = a[i + SS + S], c111 = a[i + SS + S + 1];
    float c00 = lerp(c000, c100, tx), c10 = lerp(c010, c110, tx);
    float c01 = lerp(c001, c101, tx), c11 = lerp(c011, c111, tx);
    float m = fminf(fminf(fminf(c000, c100), fminf(c010, c110)),
                    fminf(fminf(c001, c101), fminf(c011, c111)));
    float M = fmaxf(fmaxf(fmaxf(c000, c100), fmaxf(c010, c110)),
                    fmaxf(fmaxf(c001, c101), fmaxf(c011, c111)));
    *lo = m;
    *hi = M;
    return lerp(lerp(c00, c10, ty), lerp(c01, c11, ty), tz);
}

INLINE float sample(const float *restrict a, int S, float px, float py, float pz)
{
    float lo, hi;
    return sample_r(a, S, px, py, pz, &lo, &hi); /* the unused range folds away */
}

/* An RK2 backtrace from (x, y, z) with first velocity k through the cell-centred velocity. */
typedef struct vel {
    const float *restrict vc[3]; /* cell-centred */
    const float *restrict u[3];  /* staggered */
} vel;

INLINE void trace(const vel *v, int S, float s, float x, float y, float z, float kx,
                         float ky, float kz, float *px, float *py, float *pz)
{
    float mx = x - 0.5f * s * kx, my = y - 0.5f * s * ky, mz = z - 0.5f * s * kz;
    float k2x = sample(v->vc[0], S, mx, my, mz);
    float k2y = sample(v->vc[1], S, mx, my, mz);
    float k2z = sample(v->vc[2], S, mx, my, mz);
    *px = x - s * k2x;
    *py = y - s * k2y;
    *pz = z - s * k2z;
}

/* The departure point of face c of the voxel at index i, position (x, y, z). */
INLINE void face_trace(const vel *v, int S, float s, int c, int i, float x, float y,
                              float z, float *px, float *py, float *pz)
{
    int e = c == 0 ? 1 : c == 1 ? S : S * S;
    float k[3] = {0.5f * (v->vc[0][i] + v->vc[0][i - e]), 0.5f * (v->vc[1][i] + v->vc[1][i - e]),
                  0.5f * (v->vc[2][i] + v->vc[2][i - e])};
    k[c] = v->u[c][i];
    float p[3] = {x, y, z};
    p[c] -= 0.5f;
    trace(v, S, s, p[0], p[1], p[2], k[0], k[1], k[2], px, py, pz);
}

/* Where face c's value is sampled after its trace: face_sample's shift of +0.5 on axis c
 * (the staggered component c of voxel I sits at vec3(I) - 0.5 e_c). */
INLINE void face_point(const vel *v, int S, float s, int c, int i, float x, float y, float z,
                       float q[3])
{
    face_trace(v, S, s, c, i, x, y, z, &q[0], &q[1], &q[2]);
    q[c] += 0.5f;
}

static void phase_center(ref *r, int y, int z)
{
    int S = r->S, base = (z * S + y) * S;
    const float *restrict ux = r->a[UX], *restrict uy = r->a[UY], *restrict uz = r->a[UZ];
    float *restrict vx = r->a[VCX], *restrict vy = r->a[VCY], *restrict vz = r->a[VCZ];
    X_LOOP
    for (int x = MARGIN; x < MARGIN + r->n; x++) {
        int i = base + x;
        vx[i] = 0.5f * (ux[i] + ux[i + 1]);
        vy[i] = 0.5f * (uy[i] + uy[i + S]);
        vz[i] = 0.5f * (uz[i] + uz[i + S * S]);
    }
}

/* The arrays a phase reads and writes are loaded into restrict pointers before its loop, so
 * that the loop's stores are not taken to change them. */
static vel vel_of(const ref *r)
{
    vel v = {{r->a[VCX], r->a[VCY], r->a[VCZ]}, {r->a[UX], r->a[UY], r->a[UZ]}};
    return v;
}

static void phase_forward(ref *r, int y, int z)
{
    int S = r->S, base = (z * S + y) * S;
    float s = r->s;
    const vel v = vel_of(r);
    const float *restrict d = r->a[D], *restrict t = r->a[T];
    float *restrict df = r->a[DF], *restrict tf = r->a[TF];
    float *restrict dlo = r->a[DLO], *restrict dhi = r->a[DHI];
    float *restrict tlo = r->a[TLO], *restrict thi = r->a[THI];
    float *restrict uf[3] = {r->a[UXF], r->a[UYF], r->a[UZF]};
    float *restrict ulo[3] = {r->a[UXLO], r->a[UYLO], r->a[UZLO]};
    float *restrict uhi[3] = {r->a[UXHI], r->a[UYHI], r->a[UZHI]};
    X_LOOP
    for (int x = MARGIN; x < MARGIN + r->n; x++) {
        int i = base + x;
        float px, py, pz;
        trace(&v, S, s, (float)x, (float)y, (float)z, v.vc[0][i], v.vc[1][i], v.vc[2][i], &px,
              &py, &pz);
        float lo, hi;
        df[i] = sample_r(d, S, px, py, pz, &lo, &hi);
        dlo[i] = lo;
        dhi[i] = hi;
        tf[i] = sample_r(t, S, px, py, pz, &lo, &hi);
        tlo[i] = lo;
        thi[i] = hi;
        C_LOOP
        for (int c = 0; c < 3; c++) {
            float q[3];
            face_point(&v, S, s, c, i, (float)x, (float)y, (float)z, q);
            uf[c][i] = sample_r(v.u[c], S, q[0], q[1], q[2], &lo, &hi);
            ulo[c][i] = lo;
            uhi[c][i] = hi;
        }
    }
}

static void phase_backward(ref *r, int y, int z)
{
    int S = r->S, base = (z * S + y) * S;
    float s = -r->s;
    const vel v = vel_of(r);
    const float *restrict df = r->a[DF], *restrict tf = r->a[TF];
    const float *restrict uf[3] = {r->a[UXF], r->a[UYF], r->a[UZF]};
    float *restrict db = r->a[DB], *restrict tb = r->a[TB];
    float *restrict ub[3] = {r->a[UXB], r->a[UYB], r->a[UZB]};
    X_LOOP
    for (int x = MARGIN; x < MARGIN + r->n; x++) {
        int i = base + x;
        float px, py, pz;
        trace(&v, S, s, (float)x, (float)y, (float)z, v.vc[0][i], v.vc[1][i], v.vc[2][i], &px,
              &py, &pz);
        db[i] = sample(df, S, px, py, pz);
        tb[i] = sample(tf, S, px, py, pz);
        C_LOOP
        for (int c = 0; c < 3; c++) {
            float q[3];
            face_point(&v, S, s, c, i, (float)x, (float)y, (float)z, q);
            ub[c][i] = sample(uf[c], S, q[0], q[1], q[2]);
        }
    }
}

static void phase_correct(ref *r, int y, int z)
{
    int S = r->S, base = (z * S + y) * S;
    float kd = r->keep_d, kt = r->keep_t, ku = r->keep_u, rest_t = r->rest_t;
    float *restrict q[5] = {r->a[D], r->a[T], r->a[UX], r->a[UY], r->a[UZ]};
    const float *restrict fw[5] = {r->a[DF], r->a[TF], r->a[UXF], r->a[UYF], r->a[UZF]};
    const float *restrict bw[5] = {r->a[DB], r->a[TB], r->a[UXB], r->a[UYB], r->a[UZB]};
    const float *restrict lo[5] = {r->a[DLO], r->a[TLO], r->a[UXLO], r->a[UYLO], r->a[UZLO]};
    const float *restrict hi[5] = {r->a[DHI], r->a[THI], r->a[UXHI], r->a[UYHI], r->a[UZHI]};
    X_LOOP
    for (int x = MARGIN; x < MARGIN + r->n; x++) {
        int i = base + x;
        C_LOOP
        for (int k = 0; k < 5; k++) {
            /* maccormack_scalar relaxes towards `rest` (0 for density, the ambient
             * temperature), maccormack_velocity towards 0 */
            float keep = k == 0 ? kd : k == 1 ? kt : ku, rest = k == 1 ? rest_t : 0.0f;
            float v = clampf(fw[k][i] + 0.5f * (q[k][i] - bw[k][i]), lo[k][i], hi[k][i]);
            q[k][i] = rest + (v - rest) * keep;
        }
    }
}

typedef struct worker {
    ref *r;
    int id, steps;
} worker;

/* Workers wait at this gate until the main thread knows how many of them started, so the
 * barrier counts only threads that exist. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
} gate;

typedef struct worker_arg {
    worker w;
    gate *g;
} worker_arg;

/* One step: the four phases over this thread's slabs of z, a barrier after each (the tasks of
 * the solver end the same way). */
static void run_steps(ref *r, int id, int steps)
{
    void (*const phase[4])(ref *, int, int) = {phase_center, phase_forward, phase_backward,
                                               phase_correct};
    int n = r->n, z0 = MARGIN + n * id / r->threads, z1 = MARGIN + n * (id + 1) / r->threads;
    for (int k = 0; k < steps; k++)
        for (int p = 0; p < 4; p++) {
            for (int z = z0; z < z1; z++)
                for (int y = MARGIN; y < MARGIN + n; y++)
                    phase[p](r, y, z);
            pthread_barrier_wait(&r->bar);
        }
}

static void *worker_main(void *arg)
{
    worker_arg *a = arg;
    pthread_mutex_lock(&a->g->mu);
    while (!a->g->open)
        pthread_cond_wait(&a->g->cv, &a->g->mu);
    pthread_mutex_unlock(&a->g->mu);
    if (a->w.id < a->w.r->threads) {
        pthread_barrier_wait(&a->w.r->bar); /* start */
        run_steps(a->w.r, a->w.id, a->w.steps);
    }
    return NULL;
}

/* Runs `steps` steps on r->threads threads (fewer if some cannot be started); returns the
 * wall time, or -1. */
static double timed(ref *r, int steps)
{
    pthread_t th[64];
    worker_arg w[64];
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int want = r->threads, started = 1;
    for (int t = 1; t < want; t++) {
        w[t] = (worker_arg){{r, t, steps}, &g};
        if (pthread_create(&th[t], NULL, worker_main, &w[t]) != 0)
            break;
        started++;
    }
    r->threads = started;
    r->used = started;
    int e = pthread_barrier_init(&r->bar, NULL, (unsigned)started), ok = e == 0;
    if (!ok) {
        r->threads = 0; /* the workers return at once */
        r->err = e;
    }
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    struct timespec t0, t1;
    if (ok) {
        pthread_barrier_wait(&r->bar);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        run_steps(r, 0, steps);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    }
    for (int t = 1; t < started; t++)
        pthread_join(th[t], NULL);
    r->threads = want;
    if (!ok)
        return -1;
    pthread_barrier_destroy(&r->bar);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

static int ref_alloc(ref *r, int n, int threads)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->S = n + 2 * MARGIN;
    r->threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    size_t cells = (size_t)r->S * (size_t)r->S * (size_t)r->S;
    for (int k = 0; k < NARR; k++) {
        r->a[k] = calloc(cells, sizeof(float));
        if (!r->a[k])
            return -1;
    }
    return 0;
}

static void ref_free(ref *r)
{
    for (int k = 0; k < NARR; k++)
        free(r->a[k]);
}

/* A blob of density and heat in a swirl whose fastest voxel moves 2 voxels a step (CFL 2, the
 * default scene's), so traces cross cells and blocks as the solver's do. */
static void fill_swirl(ref *r)
{
    int S = r->S, n = r->n;
    float c = MARGIN + 0.5f * (float)n, rad = 0.3f * (float)n;
    r->s = 1.0f;
    r->keep_d = 0.99f;
    r->keep_t = 0.98f;
    r->keep_u = 1.0f;
    r->rest_t = 0.0f;
    for (int z = MARGIN; z < MARGIN + n; z++)
        for (int y = MARGIN; y < MARGIN + n; y++)
            for (int x = MARGIN; x < MARGIN + n; x++) {
                int i = (z * S + y) * S + x;
                float dx = ((float)x - c) / rad, dy = ((float)y - c) / rad, dz = ((float)z - c) / rad;
                float q = dx * dx + dy * dy + dz * dz;
                r->a[D][i] = q < 1 ? 1 - q : 0;
                r->a[T][i] = q < 1 ? 2 * (1 - q) : 0;
                r->a[UX][i] = 2.0f * sinf(0.2f * (float)y) * cosf(0.1f * (float)z);
                r->a[UY][i] = 1.5f * cosf(0.2f * (float)x) + 0.5f;
                r->a[UZ][i] = 1.5f * sinf(0.15f * (float)x + 0.1f * (float)y);
            }
}

/* A uniform flow of (1, 2, -1) voxels per step moves density and temperature by exactly that,
 * and leaves the velocity as it was, away from the box's faces: every trace (the cells' and
 * the faces') lands on a voxel, every blend weight is 0 or blends equal values, MacCormack's
 * correction is 0, and the dissipation factors are powers of two. Run on `threads` threads.
 * It catches a wrong axis, sign or index and a wrong correction or dissipation; it cannot see
 * the half-voxel offsets of the faces nor a trace that skips its midpoint (in a uniform flow
 * every point samples the same velocity). */
static int self_check(int n, int threads, double *err)
{
    ref r;
    if (ref_alloc(&r, n, threads) != 0) {
        ref_free(&r);
        return -1;
    }
    int S = r.S;
    float c = MARGIN + 0.5f * (float)n, rad = 0.25f * (float)n;
    r.s = 1.0f;
    r.keep_d = 0.5f;
    r.keep_t = 0.25f;
    r.keep_u = 1.0f;
    r.rest_t = 1.0f;
    for (int z = 0; z < S; z++)
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++) {
                int i = (z * S + y) * S + x;
                float dx = ((float)x - c) / rad, dy = ((float)y - c) / rad, dz = ((float)z - c) / rad;
                float q = dx * dx + dy * dy + dz * dz;
                r.a[D][i] = q < 1 ? 1 - q : 0;
                r.a[T][i] = q < 1 ? 3 - 2 * q : 1;
                r.a[UX][i] = 1.0f;
                r.a[UY][i] = 2.0f;
                r.a[UZ][i] = -1.0f;
            }
    size_t cells = (size_t)S * S * S;
    float *before = malloc(2 * cells * sizeof(float));
    if (!before) {
        ref_free(&r);
        return -1;
    }
    memcpy(before, r.a[D], cells * sizeof(float));
    memcpy(before + cells, r.a[T], cells * sizeof(float));
    if (timed(&r, 1) < 0) {
        errno = r.err;
        free(before);
        ref_free(&r);
        return -1;
    }
    double e = 0;
    int back = -S * S + 2 * S + 1; /* the voxel at -(1, 2, -1) */
    for (int z = MARGIN + 3; z < MARGIN + n - 3; z++)
        for (int y = MARGIN + 3; y < MARGIN + n - 3; y++)
            for (int x = MARGIN + 3; x < MARGIN + n - 3; x++) {
                int i = (z * S + y) * S + x;
                /* rest + (v - rest) * keep in float, as maccormack_scalar rounds it */
                float tw = 1.0f + (before[cells + (size_t)(i - back)] - 1.0f) * 0.25f;
                double want[5] = {0.5 * before[i - back], tw, 1, 2, -1};
                for (int k = 0; k < 5; k++) {
                    double d = fabs((double)r.a[D + k][i] - want[k]);
                    e = d > e ? d : e;
                }
            }
    *err = e;
    free(before);
    ref_free(&r);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int REF_ENTRY(int n, int threads, int reps, smoke_ref_result *out)
{
    memset(out, 0, sizeof *out);
    out->vectorized = REF_VECTOR;
    out->voxels = (double)n * n * n;
    if (n < 16 || reps < 1 || reps > 64) {
        errno = EINVAL;
        return -1;
    }
    if (self_check(n, threads, &out->check_error) != 0)
        return -1;
    out->check_ok = out->check_error == 0;
    ref r;
    if (ref_alloc(&r, n, threads) != 0) {
        ref_free(&r);
        errno = ENOMEM;
        return -1;
    }
    fill_swirl(&r);
    double t[64];
    int ok = timed(&r, 1) >= 0; /* warm-up: pages touched, caches filled */
    for (int k = 0; k < reps && ok; k++)
        ok = (t[k] = timed(&r, 1)) >= 0;
    out->threads = r.used;
    if (!ok)
        errno = r.err;
    ref_free(&r);
    if (!ok)
        return -1;
    /* the median, as the solver's steps are reported */
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    out->seconds = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    return 0;
}
