/* plume-bench lang, source cases: the same measurements as bench_lang.c's hand-built tasks,
 * but from kernel source through the whole engine (front end, lowering, offload, JIT, the
 * executor) in eager mode, so the figures include everything a node's launch costs.
 *   saxpy_source    y[i] = a*x[i] + y[i] over 64M f32 on 2 threads, launch + sync, vs a plain
 *                   C triad over malloc'd arrays on a pool of 2 threads (issue 4: >= 0.7)
 *   compile_source  a program of 20 distinct kernels, each launched once on a fresh context:
 *                   median and total ms per kernel from launch to finished run (lowering,
 *                   offload, code generation, JIT, a run over 4096 elements), and the JIT's
 *                   own compile time per task (issue 4 goal: median <= 40 ms per task) */
#define _GNU_SOURCE
#include "bench.h"

#if defined(PLUME_HAVE_KERNELS)

#include "engine/backend/cpu_pool.h"
#include "engine/engine.h"
#include "engine/kernel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_lang_source(bench_ctx *ctx, int reps);

typedef struct triad {
    const float *x;
    float *y;
    float a;
} triad;

static void triad_range(void *ud, int64_t lo, int64_t hi, int worker)
{
    (void)worker;
    triad *t = ud;
    for (int64_t i = lo; i < hi; i++)
        t->y[i] = t->a * t->x[i] + t->y[i];
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static eng_field *field(eng_context *c, const char *name, const char *layout)
{
    eng_field_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.type = ENG_F32;
    d.layout = layout;
    d.voxel_size = 1;
    eng_field *f = NULL;
    if (eng_field_declare(c, &d, &f) != ENG_OK)
        fprintf(stderr, "bench lang: %s\n", eng_error(c));
    return f;
}

static int saxpy_source(bench_ctx *ctx, int reps)
{
    int64_t n = ctx->quick ? (1 << 20) : (1 << 26);
    eng_options o = {2, 0};
    eng_context *c = eng_create(&o);
    char layout[64], src[512];
    /* the hand-built case's layout: two dense levels, so blocks line up with the C arrays */
    snprintf(layout, sizeof layout, "dense(i,%d).dense(i,16384)", (int)(n / 16384));
    snprintf(src, sizeof src,
             "kernel saxpy(field<f32, 1> x, field<f32, 1> y, f32 a) {\n"
             "    for (i in 0 .. %lld) { y[i] = a * x[i] + y[i]; }\n"
             "}\n"
             "kernel init(field<f32, 1> x) { for (i in 0 .. %lld) { x[i] = f32(i %% 7); } }\n",
             (long long)n, (long long)n);
    eng_field *x = field(c, "x", layout), *y = field(c, "y", layout);
    eng_program *p = NULL;
    eng_mode m = {1, 0, 0, 0};
    int rc = 1;
    if (!x || !y || eng_set_mode(c, &m) != ENG_OK ||
        eng_program_compile(c, "saxpy.pk", src, strlen(src), &p) != ENG_OK) {
        fprintf(stderr, "bench lang: %s\n", eng_error(c));
        eng_destroy(c);
        return 1;
    }
    eng_kernel *k = eng_program_find(p, "saxpy");
    eng_arg args[3];
    memset(args, 0, sizeof args);
    args[0].field = x;
    args[1].field = y;
    args[2].f[0] = 0.5;
    float *cx = malloc((size_t)n * sizeof *cx), *cy = malloc((size_t)n * sizeof *cy);
    cpu_pool *pool = NULL;
    char err[256];
    if (!cx || !cy || cpu_pool_create(2, &pool, err, sizeof err) != 0)
        goto out;
    for (int64_t i = 0; i < n; i++) {
        cx[i] = (float)(i % 7);
        cy[i] = 1.0f;
    }
    /* first launches: compile, and write every element */
    if (eng_launch(c, eng_program_find(p, "init"), args, 1) != ENG_OK ||
        eng_launch(c, k, args, 3) != ENG_OK || eng_sync(c) != ENG_OK)
        goto fail;
    double best_e = 1e30, best_c = 1e30;
    triad t = {cx, cy, 0.5f};
    for (int r = 0; r < reps; r++) {
        double a = bench_now();
        if (eng_launch(c, k, args, 3) != ENG_OK || eng_sync(c) != ENG_OK)
            goto fail;
        double e = bench_now() - a;
        a = bench_now();
        cpu_pool_parallel_for(pool, n, 0, triad_range, &t, err, sizeof err);
        double cc = bench_now() - a;
        best_e = e < best_e ? e : best_e;
        best_c = cc < best_c ? cc : best_c;
    }
    /* y = 1 + (reps + 1) * 0.5 * x after reps + 1 launches on y = 0: check one element */
    int32_t at[3] = {12345, 0, 0};
    float want = 0.0f;
    for (int r = 0; r < reps + 1; r++)
        want = 0.5f * (float)(12345 % 7) + want;
    float got = eng_field_read(y, at, 0);
    double gb = 12.0 * (double)n / 1e9;
    printf("%-22s %8s %10s %10s %10s %10s %8s\n", "case", "threads", "engine ms", "eng GB/s",
           "C ms", "C GB/s", "ratio");
    printf("%-22s %8d %10.2f %10.2f %10.2f %10.2f %8.3f %s\n", "saxpy_source", 2, best_e * 1e3,
           gb / best_e, best_c * 1e3, gb / best_c, best_c / best_e,
           got == want ? "" : "WRONG RESULT");
    json_array_append_new(ctx->cases,
                          json_pack("{s:s, s:i, s:I, s:f, s:f, s:f, s:b}", "name", "saxpy_source",
                                    "threads", 2, "elements", (json_int_t)n, "engine_ms",
                                    best_e * 1e3, "c_ms", best_c * 1e3, "ratio", best_c / best_e,
                                    "correct", got == want));
    rc = got == want ? 0 : 1;
    goto out;
fail:
    fprintf(stderr, "bench lang: saxpy_source: %s\n", eng_error(c));
out:
    cpu_pool_destroy(pool);
    free(cx);
    free(cy);
    eng_destroy(c);
    return rc;
}

#define NKERNELS 20

/* Kernel k of the 20: small, all different, the kinds of bodies nodes have. */
static void kernel_source(int k, char *buf, size_t n)
{
    static const char *bodies[] = {
        "b[i] = a[i] * s + 1.0;",
        "b[i] = sqrt(abs(a[i])) + s;",
        "b[i] = a[i] > s ? a[i] : s * 2.0;",
        "b[i] = a[i + 1] - a[i - 1];",
        "f32 t = 0.0; for (j in 0 .. 4) { t += a[i + j]; } b[i] = t * 0.25;",
        "b[i] = sin(a[i]) * cos(s);",
        "b[i] = clamp(a[i], -s, s);",
        "b[i] = lerp(a[i], b[i], 0.5);",
        "b[i] += a[i] * a[i];",
        "vec3 v = vec3(a[i], s, 1.0); b[i] = length(v);",
    };
    int nb = (int)(sizeof bodies / sizeof bodies[0]);
    snprintf(buf, n,
             "kernel k%d(field<f32, 1> a, field<f32, 1> b, f32 s) {\n"
             "    for (i in 0 .. 4096) { %s b[i] = b[i] + %d.0; }\n"
             "}\n", k, bodies[k % nb], k);
}

static int compile_source(bench_ctx *ctx)
{
    char src[NKERNELS * 256], one[256];
    size_t len = 0;
    for (int k = 0; k < NKERNELS; k++) {
        kernel_source(k, one, sizeof one);
        len += (size_t)snprintf(src + len, sizeof src - len, "%s", one);
    }
    double ms[NKERNELS], jit_ms[NKERNELS], total = 0;
    int rc = 0;
    for (int k = 0; k < NKERNELS && !rc; k++) {
        /* a fresh context per kernel: nothing cached, one compile thread busy */
        eng_options o = {2, 0};
        eng_context *c = eng_create(&o);
        eng_field *a = field(c, "a", "dense(i,8192)"), *b = field(c, "b", "dense(i,8192)");
        eng_program *p = NULL;
        eng_mode m = {1, 0, 0, 0};
        char name[16];
        snprintf(name, sizeof name, "k%d", k);
        eng_arg args[3];
        memset(args, 0, sizeof args);
        args[0].field = a;
        args[1].field = b;
        args[2].f[0] = 0.25;
        double t0 = bench_now();
        if (!a || !b || eng_set_mode(c, &m) != ENG_OK ||
            eng_program_compile(c, "kernels.pk", src, len, &p) != ENG_OK ||
            eng_launch(c, eng_program_find(p, name), args, 3) != ENG_OK || eng_sync(c) != ENG_OK) {
            fprintf(stderr, "bench lang: compile_source %s: %s\n", name, eng_error(c));
            rc = 1;
        }
        ms[k] = (bench_now() - t0) * 1e3;
        eng_stats st;
        eng_get_stats(c, &st);
        jit_ms[k] = st.tasks_compiled ? st.compile_s * 1e3 / (double)st.tasks_compiled : 0;
        total += ms[k];
        eng_destroy(c);
    }
    if (rc)
        return rc;
    qsort(ms, NKERNELS, sizeof ms[0], cmp_d);
    qsort(jit_ms, NKERNELS, sizeof jit_ms[0], cmp_d);
    double med = 0.5 * (ms[NKERNELS / 2 - 1] + ms[NKERNELS / 2]);
    double jmed = 0.5 * (jit_ms[NKERNELS / 2 - 1] + jit_ms[NKERNELS / 2]);
    printf("%-22s %8s %10s %10s %10s %14s\n", "case", "kernels", "median ms", "max ms",
           "total ms", "JIT median ms");
    printf("%-22s %8d %10.2f %10.2f %10.2f %14.2f\n", "compile_source", NKERNELS, med,
           ms[NKERNELS - 1], total, jmed);
    json_array_append_new(ctx->cases,
                          json_pack("{s:s, s:i, s:f, s:f, s:f, s:f}", "name", "compile_source",
                                    "kernels", NKERNELS, "median_ms", med, "max_ms",
                                    ms[NKERNELS - 1], "total_ms", total, "jit_median_ms", jmed));
    return 0;
}

int bench_lang_source(bench_ctx *ctx, int reps)
{
    printf("\nfrom kernel source through the engine (eager):\n");
    int rc = saxpy_source(ctx, reps);
    printf("\n");
    rc |= compile_source(ctx);
    return rc;
}

#endif
