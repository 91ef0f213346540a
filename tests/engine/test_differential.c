/* Randomized differential test of the optimizer: random sequences of kernel launches over
 * three shared sparse fields and a 0-D scalar — stencils, copies, scaling, activations,
 * deactivations, max-reductions, values read back by the host in between — run eager and
 * optimized (on fresh contexts), then every field is compared voxel by voxel, activity
 * included. Nothing here reorders float additions (reductions use max=), so the results must
 * be bitwise equal. Runs seeds until the time budget is spent; a failure prints its seed, and
 * `test_engine_differential --seed N` replays one. */
#include "engine_test.h"

#include <stdint.h>
#include <time.h>

static const char *diff_src =
    "kernel fill(field<f32> x, i32 ox, f32 k) {\n"
    "    for (P in ivec3(0) .. ivec3(16)) {\n"
    "        ivec3 Q = P + ivec3(ox, 0, 0);\n"
    "        if ((P.x + P.y + P.z) % 5 != 0) { x[Q] = f32((P.x * 3 + P.y + P.z * 7) % 11) * k; }\n"
    "    }\n"
    "}\n"
    "kernel stencil(field<f32> x, field<f32> y, f32 k) {\n"
    "    for (I in x) { y[I] = x[I] + k * (x[I + ivec3(1, 0, 0)] - x[I - ivec3(0, 1, 0)]); }\n"
    "}\n"
    "kernel scale(field<f32> x, f32 k) { for (I in x) { x[I] = x[I] * k + 0.25; } }\n"
    "kernel copy(field<f32> x, field<f32> y) { for (I in x) { y[I] = x[I]; } }\n"
    "kernel grow(field<f32> x, field<f32> y, f32 t) {\n"
    "    for (I in x) { if (x[I] > t && I.x < 40) { activate(y, I + ivec3(8, 0, 0)); } }\n"
    "}\n"
    "kernel prune(field<f32> x, i32 t) {\n"
    "    for (I in x) { if (I.x >= t) { deactivate(x, I); } }\n"
    "}\n"
    "kernel peak(field<f32> x, field<f32, 0> s) {\n"
    "    s[] = 0.0;\n"
    "    for (I in x) { s[] max= abs(x[I]); }\n"
    "}\n"
    "kernel damp(field<f32> x, field<f32, 0> s) {\n"
    "    f32 m = s[];\n"
    "    for (I in x) { x[I] = x[I] - m * 0.01; }\n"
    "}\n"
    "kernel bump(field<f32> x, field<f32> y) { for (I in y) { x[I] += y[I]; } }\n";

enum { NF = 3, OPS = 24 };

typedef struct op {
    int kind, a, b;
    double k;
    int i;
} op;

static uint64_t rng;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void make_ops(uint64_t seed, op *ops)
{
    rng = seed * 0x9E3779B97F4A7C15ull | 1;
    for (int n = 0; n < OPS; n++) {
        op *o = &ops[n];
        o->kind = (int)(next() % 10);
        o->a = (int)(next() % NF);
        o->b = (int)((o->a + 1 + next() % (NF - 1)) % NF);
        o->k = 0.125 * (double)(1 + next() % 8);
        o->i = 8 * (int)(next() % 6);
    }
}

static const char *op_name(int k)
{
    static const char *n[] = {"fill", "stencil", "scale", "copy", "grow", "prune", "peak",
                              "damp", "bump", "read"};
    return n[k];
}

/* Runs the sequence; fills vals (each field's values over [-8,56)x[-8,24)^2), act (per field
 * its block count and a byte per active block's origin) and the host reads of the scalar.
 * 0 or 1. */
typedef struct mode_ctx {
    eng_context *ctx;
    eng_field *f[NF], *s;
    eng_program *p;
} mode_ctx;

/* A context per mode lives across seeds, so code compiled for one sequence serves the next.
 * launch: batches flushed every two launches run on the launch thread (engine/launcher.h)
 * while the test's thread queues the next ones, so host reads and launches meet batches in
 * flight. */
static int mode_open(mode_ctx *mc, int eager, int launch)
{
    mc->ctx = et_context(2);
    eng_mode m = {eager, 0, launch ? 2 : 0, launch};
    CHECK_OK(mc->ctx, eng_set_mode(mc->ctx, &m));
    const char *names[NF] = {"a", "b", "c"};
    for (int i = 0; i < NF; i++)
        mc->f[i] = et_field(mc->ctx, names[i], 3, ENG_F32, 0.0f);
    mc->s = et_field(mc->ctx, "s", 0, ENG_F32, 0.0f);
    mc->p = et_compile(mc->ctx, diff_src);
    return mc->p ? 0 : 1;
}

static int run(mode_ctx *mc, const op *ops, float *vals, unsigned char *act, float *reads)
{
    eng_context *ctx = mc->ctx;
    eng_field **f = mc->f, *s = mc->s;
    eng_program *p = mc->p;
    for (int i = 0; i < NF; i++)
        eng_field_clear(ctx, f[i]);
    eng_field_clear(ctx, s);
    int rc = 0;
    for (int n = 0; n < OPS && !rc; n++) {
        const op *o = &ops[n];
        eng_arg args[3];
        memset(args, 0, sizeof args);
        args[0].field = f[o->a];
        uint32_t na = 2;
        switch (o->kind) {
        case 0: args[1].i[0] = o->i; args[2].f[0] = o->k; na = 3; break;      /* fill */
        case 1: args[1].field = f[o->b]; args[2].f[0] = o->k; na = 3; break;  /* stencil */
        case 2: case 4: args[1].f[0] = o->k; break;                            /* scale, grow */
        case 5: args[1].i[0] = o->i + 8; break;                                /* prune */
        case 6: case 7: args[1].field = s; break;                              /* peak, damp */
        default: args[1].field = f[o->b]; break;                               /* copy, bump */
        }
        if (o->kind == 4) {
            args[1].field = f[o->b];
            args[2].f[0] = o->k;
            na = 3;
        }
        if (o->kind == 9) {
            int32_t z[3] = {0, 0, 0};
            reads[n] = eng_field_read(s, z, 0);
            continue;
        }
        eng_kernel *k = eng_program_find(p, op_name(o->kind));
        if (eng_launch(ctx, k, args, na) != ENG_OK) {
            fprintf(stderr, "op %d (%s): %s\n", n, op_name(o->kind), eng_error(ctx));
            rc = 1;
        }
    }
    if (!rc && eng_sync(ctx) != ENG_OK) {
        fprintf(stderr, "sync: %s\n", eng_error(ctx));
        rc = 1;
    }
    size_t v = 0;
    for (int i = 0; i < NF && !rc; i++)
        for (int x = -8; x < 56; x++)
            for (int y = -8; y < 24; y++)
                for (int z = -8; z < 24; z++, v++) {
                    int32_t ijk[3] = {x, y, z};
                    vals[v] = eng_field_read(f[i], ijk, 0);
                }
    /* activity per block: block origins of each field in order */
    for (int i = 0; i < NF && !rc; i++) {
        int32_t o[3 * 512];
        uint64_t nb = eng_field_block_origins(f[i], o, 512);
        act[i] = (unsigned char)(nb & 0xff);
        for (uint64_t b = 0; b < nb && b < 512; b++)
            act[NF + (size_t)i * 1536 + 3 * b] = (unsigned char)(o[3 * b] + 3 * o[3 * b + 1] + 7 * o[3 * b + 2]);
    }
    return rc;
}

int main(int argc, char **argv)
{
    double budget = 15.0;
    uint64_t only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            only = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            budget = atof(argv[++i]);
    }
    size_t nv = (size_t)NF * 64 * 32 * 32, na = NF + (size_t)NF * 1536;
    float *ve = calloc(nv, sizeof *ve), *vo = calloc(nv, sizeof *vo);
    unsigned char *ae = calloc(na + nv, 1), *ao = calloc(na + nv, 1);
    float re[OPS], ro[OPS];
    if (!ve || !vo || !ae || !ao)
        return 1;
    /* eager, optimized, optimized with the launch thread: each compared with eager */
    static const char *const mode_names[3] = {"eager", "optimized", "optimized on the launch thread"};
    mode_ctx mc[3];
    for (int m = 0; m < 3; m++)
        if (mode_open(&mc[m], m == 0, m == 2))
            return 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int seeds = 0;
    for (uint64_t seed = only ? only : 1;; seed++) {
        op ops[OPS];
        make_ops(seed, ops);
        memset(re, 0, sizeof re);
        memset(ae, 0, na + nv);
        if (run(&mc[0], ops, ve, ae, re)) {
            fprintf(stderr, "seed %llu: the eager run failed\n", (unsigned long long)seed);
            return 1;
        }
        for (int m = 1; m < 3; m++) {
            memset(ro, 0, sizeof ro);
            memset(ao, 0, na + nv);
            if (run(&mc[m], ops, vo, ao, ro)) {
                fprintf(stderr, "seed %llu: the run %s failed\n", (unsigned long long)seed, mode_names[m]);
                return 1;
            }
            size_t bad = nv;
            for (size_t i = 0; i < nv && bad == nv; i++)
                if (memcmp(&ve[i], &vo[i], sizeof *ve))
                    bad = i;
            if (bad != nv || memcmp(ae, ao, na) || memcmp(re, ro, sizeof re)) {
                fprintf(stderr, "seed %llu: eager and %s differ", (unsigned long long)seed, mode_names[m]);
                if (bad != nv)
                    fprintf(stderr, " (field %zu, value %g vs %g)", bad / (64 * 32 * 32), ve[bad], vo[bad]);
                fprintf(stderr, "\nsequence:");
                for (int n = 0; n < OPS; n++)
                    fprintf(stderr, " %s(%c,%c)", op_name(ops[n].kind), 'a' + ops[n].a, 'a' + ops[n].b);
                fprintf(stderr, "\nreplay: test_engine_differential --seed %llu\n", (unsigned long long)seed);
                return 1;
            }
        }
        seeds++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (only || el > budget)
            break;
    }
    /* the third context really ran batches on its launch thread */
    eng_stats st;
    eng_get_stats(mc[2].ctx, &st);
    CHECK(st.batches_async > 0);
    eng_get_stats(mc[1].ctx, &st);
    CHECK(st.batches_async == 0);
    for (int m = 0; m < 3; m++)
        eng_destroy(mc[m].ctx);
    printf("differential: %d random sequences of %d operations, eager == optimized == optimized "
           "on the launch thread\n", seeds, OPS);
    free(ve);
    free(vo);
    free(ae);
    free(ao);
    return check_failures ? 1 : 0;
}
