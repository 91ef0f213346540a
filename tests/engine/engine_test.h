/* Helpers of the engine's kernel tests: a context, fields, compile-or-fail, launches, and
 * checks that count failures. Each check names the source line that failed. */
#ifndef PLUME_TESTS_ENGINE_TEST_H
#define PLUME_TESTS_ENGINE_TEST_H

#include "engine/engine.h"
#include "engine/kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

/* Relative tolerance for values computed by libm on both sides (the JIT may use a different
 * but correctly rounded-enough implementation). */
#define CHECK_NEAR(got, want, tol)                                                             \
    do {                                                                                       \
        double g_ = (got), w_ = (want);                                                        \
        if (!(fabs(g_ - w_) <= (tol) * (1.0 + fabs(w_)))) {                                    \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g\n", __FILE__, __LINE__, #got, g_,  \
                    w_);                                                                       \
            check_failures++;                                                                     \
        }                                                                                      \
    } while (0)

#define CHECK_OK(ctx, call)                                                                    \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != ENG_OK) {                                                                   \
            fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, rc_,             \
                    eng_error(ctx));                                                           \
            check_failures++;                                                                     \
        }                                                                                      \
    } while (0)

static inline eng_context *et_context(int threads)
{
    eng_options o = {threads, 0};
    eng_context *ctx = eng_create(&o);
    if (!ctx) {
        fprintf(stderr, "eng_create: %s\n", eng_create_error());
        exit(1);
    }
    return ctx;
}

/* A field description: voxel size `voxel`, background bg in every component. */
static inline eng_field_desc et_desc(const char *name, eng_type type, const char *layout,
                                     double voxel, float bg)
{
    eng_field_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.type = type;
    d.layout = layout;
    d.voxel_size = voxel;
    d.background[0] = d.background[1] = d.background[2] = bg;
    return d;
}

/* A field with the given layout ("" = the default volume layout); exits when declaring fails. */
static inline eng_field *et_field_layout(eng_context *ctx, const char *name, const char *layout,
                                         eng_type type, float bg)
{
    eng_field_desc d = et_desc(name, type, layout, 0.5, bg);
    eng_field *f = NULL;
    if (eng_field_declare(ctx, &d, &f) != ENG_OK) {
        fprintf(stderr, "declaring field %s: %s\n", name, eng_error(ctx));
        exit(1);
    }
    return f;
}

static inline eng_field *et_field(eng_context *ctx, const char *name, int dim, eng_type type,
                                  float bg)
{
    return et_field_layout(ctx, name, dim == 3 ? "" : eng_default_layout(dim), type, bg);
}

static inline eng_program *et_compile(eng_context *ctx, const char *src)
{
    eng_program *p = NULL;
    if (eng_program_compile(ctx, "test.pk", src, strlen(src), &p) != ENG_OK) {
        fprintf(stderr, "compile failed:\n%s\n", eng_error(ctx));
        check_failures++;
        return NULL;
    }
    return p;
}

/* Launches kernel `name` and syncs; 0 or the engine's code (message printed). */
static inline int et_run(eng_context *ctx, eng_program *p, const char *name, const eng_arg *args,
                         uint32_t nargs)
{
    eng_kernel *k = p ? eng_program_find(p, name) : NULL;
    if (!k) {
        fprintf(stderr, "no kernel %s\n", name);
        check_failures++;
        return -1;
    }
    int rc = eng_launch(ctx, k, args, nargs);
    if (rc == ENG_OK)
        rc = eng_sync(ctx);
    if (rc != ENG_OK) {
        fprintf(stderr, "running %s: %s\n", name, eng_error(ctx));
        check_failures++;
    }
    return rc;
}

static inline eng_arg et_f(eng_field *f)
{
    eng_arg a;
    memset(&a, 0, sizeof a);
    a.field = f;
    return a;
}

static inline eng_arg et_s(double v)
{
    eng_arg a;
    memset(&a, 0, sizeof a);
    a.f[0] = v;
    a.i[0] = (int64_t)v;
    return a;
}

static inline float et_at(eng_field *f, int x, int y, int z, int c)
{
    int32_t ijk[3] = {x, y, z};
    return eng_field_read(f, ijk, c);
}

/* n (at most 16) kernels k0 .. k<n-1> that share nothing, kernel k writing field f<k> (made
 * here, into f[k]) with (k + 1) + sin(P.x * (k + 2)) over 0 .. 4 + k on every axis: launched
 * together with fusion off, a batch of n new tasks to compile. NULL when they do not compile. */
static inline eng_program *et_distinct_kernels(eng_context *ctx, int n, eng_field **f)
{
    char src[16 * 128];
    size_t at = 0;
    for (int k = 0; k < n && k < 16; k++) {
        char name[8];
        snprintf(name, sizeof name, "f%d", k);
        f[k] = et_field(ctx, name, 3, ENG_F32, 0.0f);
        at += (size_t)snprintf(src + at, sizeof src - at,
                               "kernel k%d(field<f32> x) {\n"
                               "    for (P in ivec3(0) .. ivec3(%d)) { x[P] = %d.0 + sin(f32(P.x * %d)); }\n"
                               "}\n", k, 4 + k, k + 1, k + 2);
    }
    return et_compile(ctx, src);
}

/* Queues kernel k of et_distinct_kernels on f[k], for every k, without a sync. */
static inline void et_launch_distinct(eng_context *ctx, eng_program *p, int n, eng_field **f)
{
    for (int k = 0; k < n; k++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", k);
        eng_arg a[1];
        memset(a, 0, sizeof a);
        a[0].field = f[k];
        int rc = eng_launch(ctx, eng_program_find(p, name), a, 1);
        if (rc != ENG_OK) {
            fprintf(stderr, "launching %s: %s\n", name, eng_error(ctx));
            check_failures++;
        }
    }
}

static inline void et_put(eng_context *ctx, eng_field *f, int x, int y, int z, float v)
{
    int32_t ijk[3] = {x, y, z};
    float val[3] = {v, v, v};
    if (eng_field_write(ctx, f, ijk, val) != ENG_OK) {
        fprintf(stderr, "write: %s\n", eng_error(ctx));
        check_failures++;
    }
}

#endif
