/* The launch thread (engine/launcher.h): batches flushed without a sync run there, and what
 * goes wrong there reaches the caller at its next sync.
 *  - Values: a chain of dependent kernels, each flushed on its own (so each batch runs on the
 *    launch thread while the next is queued), then read back: the same as on a context
 *    without the thread, and every batch but the synced last one went to the thread.
 *  - Errors: a kernel that overruns the memory budget, flushed; then a kernel that marks a
 *    field, flushed. The sync reports the budget error (code and message), and the mark never
 *    ran: batches queued behind a failed one are dropped. Once memory is freed, the mark runs
 *    when launched again. */
#include "engine_test.h"

#include <stdlib.h>

static const char *src =
    "kernel seed(field<f32> x, i32 n) {\n"
    "    for (P in ivec3(0) .. ivec3(n)) { x[P] = f32(P.x + 2 * P.y + 3 * P.z); }\n"
    "}\n"
    "kernel step(field<f32> x, field<f32> y, f32 k) {\n"
    "    for (I in x) { y[I] = x[I] * k + x[I + ivec3(1, 0, 0)]; }\n"
    "}\n"
    "kernel mark(field<f32> g) {\n"
    "    for (P in ivec3(0) .. ivec3(1)) { g[P] = 1.0; }\n"
    "}\n";

#define N 24
#define STEPS 12

static eng_context *open_ctx(int launch, uint64_t budget)
{
    eng_options o = {2, budget};
    eng_context *ctx = eng_create(&o);
    if (!ctx) {
        fprintf(stderr, "eng_create: %s\n", eng_create_error());
        exit(1);
    }
    eng_mode m = {0, 0, 0, launch};
    CHECK_OK(ctx, eng_set_mode(ctx, &m));
    return ctx;
}

/* The chain's result at the probes, and the batches that ran on the launch thread. */
static void chain(int launch, float *out, uint64_t *async)
{
    eng_context *ctx = open_ctx(launch, 0);
    eng_field *f[2] = {et_field(ctx, "a", 3, ENG_F32, 0.0f), et_field(ctx, "b", 3, ENG_F32, 0.0f)};
    eng_program *p = et_compile(ctx, src);
    if (!p)
        exit(1);
    eng_arg a[3];
    memset(a, 0, sizeof a);
    a[0].field = f[0];
    a[1].i[0] = N;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "seed"), a, 2));
    CHECK_OK(ctx, eng_flush(ctx));
    for (int s = 0; s < STEPS; s++) {
        a[0].field = f[s % 2];
        a[1].field = f[(s + 1) % 2];
        a[2].f[0] = 0.5f;
        CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "step"), a, 3));
        CHECK_OK(ctx, eng_flush(ctx));
    }
    for (int i = 0; i < N; i++) {
        int32_t ijk[3] = {i, (3 * i) % N, (7 * i) % N};
        out[i] = eng_field_read(f[STEPS % 2], ijk, 0);
    }
    eng_stats st;
    eng_get_stats(ctx, &st);
    *async = st.batches_async;
    eng_destroy(ctx);
}

static void test_chain(void)
{
    float with[N], without[N];
    uint64_t n_with, n_without;
    chain(1, with, &n_with);
    chain(0, without, &n_without);
    for (int i = 0; i < N; i++)
        CHECK(memcmp(&with[i], &without[i], sizeof with[i]) == 0);
    /* the seed and every step were flushed without a sync */
    CHECK(n_with == STEPS + 1);
    CHECK(n_without == 0);
    /* the values are the chain's, not the seed's: x * 0.5 + next, STEPS times */
    CHECK(with[1] != 0.0f && with[1] != (float)(1 + 2 * 3 + 3 * 7));
}

static void test_error(void)
{
    eng_context *ctx = open_ctx(1, 2u << 20);
    eng_field *x = et_field(ctx, "x", 3, ENG_F32, 0.0f), *g = et_field(ctx, "g", 3, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx, src);
    if (!p)
        exit(1);
    eng_arg a[2];
    memset(a, 0, sizeof a);
    /* g's block made and freed first: the budget is the context's, so after x spends it only
     * a block g already had can hold g's value again */
    int32_t z[3] = {0, 0, 0};
    a[0].field = g;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "mark"), a, 1));
    CHECK_OK(ctx, eng_sync(ctx));
    eng_field_clear(ctx, g);
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK(eng_field_read(g, z, 0) == 0.0f);
    a[0].field = x;
    a[1].i[0] = 96; /* 96^3 voxels of 4 bytes: 3.4 MiB against 2 MiB */
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "seed"), a, 2));
    CHECK_OK(ctx, eng_flush(ctx));
    a[0].field = g;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "mark"), a, 1));
    /* this flush may already hear of the failure, or the sync after it does */
    int rc = eng_flush(ctx);
    if (rc == ENG_OK)
        rc = eng_sync(ctx);
    CHECK(rc == ENG_ENOMEM);
    CHECK(strstr(eng_error(ctx), "budget") != NULL);
    /* reported once: the context answers again */
    CHECK(eng_sync(ctx) == ENG_OK);
    CHECK(eng_field_read(g, z, 0) == 0.0f);
    /* the dropped kernel runs when launched again (g's tree has its freed block): its code was made
     * although its batch was dropped (a later batch finds the entry made and would not
     * compile it) */
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "mark"), a, 1));
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK(eng_field_read(g, z, 0) == 1.0f);
    eng_destroy(ctx);
}

int main(void)
{
    /* the contexts here choose through their mode; the variable would override it */
    unsetenv("PLUME_LAUNCH_THREAD");
    test_chain();
    test_error();
    if (!check_failures)
        printf("launch thread: values as without it, a failed batch reported at the sync\n");
    return check_failures ? 1 : 0;
}
