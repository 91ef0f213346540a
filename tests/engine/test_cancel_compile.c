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
    eng_field *f[NK];
    eng_program *p = et_distinct_kernels(ctx, NK, f);
    if (!p)
        return 1;
    poll pl = {0, 0, pthread_self()};
    eng_set_cancel(ctx, stop_now, &pl);
    et_launch_distinct(ctx, p, NK, f); /* one batch */
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
    et_launch_distinct(ctx, p, NK, f); /* one batch */
    CHECK_OK(ctx, eng_sync(ctx));
    for (int k = 0; k < NK; k++) {
        CHECK_NEAR(et_at(f[k], 1, 0, 0, 0), (k + 1) + sin((double)(k + 2)), 1e-5);
        CHECK(et_at(f[k], 4 + k, 0, 0, 0) == 0.0f); /* outside its range */
    }
    eng_destroy(ctx);
    CHECK_DONE();
}
