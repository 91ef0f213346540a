/* Cancelling while a batch's kernels compile (eng_set_cancel): the first frame of a scene spends
 * seconds compiling, and a host's Ctrl-C used to wait for all of it.
 *  - With the callback answering "stop", a batch of 8 new tasks fails with ENG_ECANCELLED
 *    after the first compile ends, without running any task, and the compiles not yet started
 *    are dropped (fewer than 8 compile).
 *  - Without the callback the same launches then run, their dropped tasks compiled at last,
 *    and every field holds its kernel's value.
 *  - The callback is called on the context's thread only. */
#include "engine_test.h"

#include <pthread.h>

#define NK 8

typedef struct poll {
    int calls, other_thread;
    pthread_t thread;
} poll;

static int stop_now(void *user)
{
    poll *p = user;
    p->calls++;
    if (!pthread_equal(pthread_self(), p->thread))
        p->other_thread++;
    return 1;
}

int main(void)
{
    setenv("PLUME_KERNEL_CACHE", "off", 1); /* every task compiles here */
    eng_context *ctx = et_context(2);
    eng_mode m = {0, 1u << 2 /* fusion off (SFG_PASS_FUSION) */, 0, 0};
    CHECK_OK(ctx, eng_set_mode(ctx, &m));
    char src[4096];
    size_t at = 0;
    eng_field *f[NK];
    for (int k = 0; k < NK; k++) {
        char name[8];
        snprintf(name, sizeof name, "f%d", k);
        f[k] = et_field(ctx, name, 3, ENG_F32, 0.0f);
        /* different bodies and ranges: eight tasks, none shared */
        at += (size_t)snprintf(src + at, sizeof src - at,
                               "kernel k%d(field<f32> x) {\n"
                               "    for (P in ivec3(0) .. ivec3(%d)) { x[P] = %d.0 + sin(f32(P.x * %d)); }\n"
                               "}\n", k, 4 + k, k + 1, k + 2);
    }
    eng_program *p = et_compile(ctx, src);
    if (!p)
        return 1;
    poll pl = {0, 0, pthread_self()};
    eng_set_cancel(ctx, stop_now, &pl);
    for (int k = 0; k < NK; k++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", k);
        eng_arg a[1] = {et_f(f[k])};
        CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, name), a, 1)); /* one batch */
    }
    int rc = eng_sync(ctx);
    CHECK(rc == ENG_ECANCELLED);
    CHECK(strstr(eng_error(ctx), "cancelled while compiling kernels") != NULL);
    eng_stats st;
    eng_get_stats(ctx, &st);
    printf("cancelled: %s; %llu of %d tasks compiled, %d polls\n", eng_error(ctx),
           (unsigned long long)st.tasks_compiled, NK, pl.calls);
    CHECK(st.tasks_compiled < NK);
    CHECK(pl.calls >= 1 && pl.other_thread == 0);
    for (int k = 0; k < NK; k++)
        CHECK(et_at(f[k], 0, 0, 0, 0) == 0.0f); /* nothing ran */

    eng_set_cancel(ctx, NULL, NULL);
    for (int k = 0; k < NK; k++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", k);
        eng_arg a[1] = {et_f(f[k])};
        CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, name), a, 1)); /* one batch */
    }
    CHECK_OK(ctx, eng_sync(ctx));
    for (int k = 0; k < NK; k++) {
        CHECK_NEAR(et_at(f[k], 1, 0, 0, 0), (k + 1) + sin((double)(k + 2)), 1e-5);
        CHECK(et_at(f[k], 4 + k, 0, 0, 0) == 0.0f); /* outside its range */
    }
    eng_destroy(ctx);
    CHECK_DONE();
}
