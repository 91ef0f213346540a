/* Progress of the engine's long work (eng_set_progress): a batch with new tasks reports
 * "compiling kernels" as each task's code is ready, from 0 of N to N of N in order, on the
 * context's thread; a batch whose tasks are all compiled reports nothing. */
#include "engine_test.h"

#include <pthread.h>

static const char *src =
    "kernel fill(field<f32> x, f32 v) {\n"
    "    for (P in ivec3(0) .. ivec3(16)) { x[P] = v; }\n"
    "}\n"
    "kernel twice(field<f32> x, field<f32> y) {\n"
    "    for (P in x) { y[P] = 2.0 * x[P]; }\n"
    "}\n";

typedef struct seen {
    int calls, bad_stage, bad_order, other_thread;
    uint32_t last_done, total;
    pthread_t thread;
} seen;

static void on_progress(void *user, const char *stage, uint32_t done, uint32_t total)
{
    seen *s = user;
    if (!pthread_equal(pthread_self(), s->thread))
        s->other_thread++;
    if (strcmp(stage, "compiling kernels") != 0)
        s->bad_stage++;
    /* a batch starts at 0 of its total and counts up by one */
    if (done == 0)
        s->total = total;
    else if (done != s->last_done + 1 || total != s->total || done > total)
        s->bad_order++;
    s->last_done = done;
    s->calls++;
}

int main(void)
{
    eng_context *ctx = et_context(2);
    eng_field *x = et_field(ctx, "x", 3, ENG_F32, 0.0f);
    eng_field *y = et_field(ctx, "y", 3, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx, src);
    if (!p)
        return 1;
    seen s = {0};
    s.thread = pthread_self();
    eng_set_progress(ctx, on_progress, &s);
    eng_arg a[2] = {et_f(x), et_s(3.0)};
    CHECK_OK(ctx, et_run(ctx, p, "fill", a, 2));
    eng_arg b[2] = {et_f(x), et_f(y)};
    CHECK_OK(ctx, et_run(ctx, p, "twice", b, 2));
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK(et_at(y, 5, 6, 7, 0) == 6.0f);
    /* at least one batch compiled something: its start and its end were reported */
    CHECK(s.calls >= 2 && s.total >= 1 && s.last_done == s.total);
    CHECK(s.bad_stage == 0 && s.bad_order == 0 && s.other_thread == 0);
    /* the same launches again: the optimizer may make other tasks of them once (the fields'
     * blocks exist now), then everything is compiled and nothing is reported */
    int calls[3];
    for (int round = 0; round < 3; round++) {
        CHECK_OK(ctx, et_run(ctx, p, "fill", a, 2));
        CHECK_OK(ctx, et_run(ctx, p, "twice", b, 2));
        CHECK_OK(ctx, eng_sync(ctx));
        calls[round] = s.calls;
    }
    printf("progress calls after each round: %d %d %d\n", calls[0], calls[1], calls[2]);
    CHECK(calls[2] == calls[1]);
    CHECK(s.bad_stage == 0 && s.bad_order == 0 && s.other_thread == 0);
    /* without a callback nothing is called */
    eng_set_progress(ctx, NULL, NULL);
    eng_destroy(ctx);
    CHECK_DONE();
}
