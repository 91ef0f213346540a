/* Cancelling while a batch runs (eng_set_cancel on the CPU): a frame whose kernels run for
 * minutes used to finish before a host's cancel was even asked.
 *  - One long range loop (16 chunks on 2 threads): the callback says "stop" at its first call,
 *    before the context's thread runs its first chunk; the sync fails with ENG_ECANCELLED
 *    naming the task, and only the chunks the other thread had begun ran (elements left at 0
 *    elsewhere), far fewer than all, however fast the chunks are.
 *  - A batch of 8 short tasks: "stop" at the first poll leaves at most the first run.
 *  - The callback is called on the context's thread only, and without it the same work runs
 *    to the end. */
#include "engine_test.h"

#include <pthread.h>
#include <unistd.h>

#define N (1 << 20)

typedef struct poll {
    int calls, stop_at, other_thread;
    pthread_t thread;
} poll;

static int stop_later(void *user)
{
    poll *p = user;
    if (!pthread_equal(pthread_self(), p->thread))
        p->other_thread++;
    return ++p->calls >= p->stop_at;
}

static int count_written(eng_field *f)
{
    int n = 0;
    for (int i = 0; i < N; i += 64) /* one sample per 64 elements: chunks are 65536 long */
        n += et_at(f, i, 0, 0, 0) != 0.0f;
    return n;
}

int main(void)
{
    eng_context *ctx = et_context(2);
    eng_field *f = et_field(ctx, "f", 1, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx,
                                "kernel slow(field<f32, 1> f) {\n"
                                "    for (i in 0 .. 1048576) {\n"
                                "        f32 acc = 1.0;\n"
                                "        for (j in 0 .. 60) { acc = acc * 0.999 + 0.001 * sin(f32(i + j)); }\n"
                                "        f[i] = acc + 2.0;\n"
                                "    }\n"
                                "}\n"
                                "kernel oob(field<f32, 1> f) {\n"
                                "    for (i in 0 .. 1048576) {\n"
                                "        f32 acc = 1.0;\n"
                                "        for (j in 0 .. 60) { acc = acc * 0.999 + 0.001 * sin(f32(i + j)); }\n"
                                "        f[i + 4000000] = acc;\n"
                                "    }\n"
                                "}\n"
                                "kernel one(field<f32, 1> f) { for (i in 0 .. 1) { f[i] = 9.0; } }\n");
    if (!p)
        return 1;
    eng_arg a[1] = {et_f(f)};
    /* compiled first, so the cancel below meets the run and not the compile */
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "slow"), a, 1));
    CHECK_OK(ctx, eng_sync(ctx));
    int all = count_written(f);
    CHECK(all == N / 64);

    eng_field *g = et_field(ctx, "g", 1, ENG_F32, 0.0f);
    poll pl = {0, 1, 0, pthread_self()}; /* stop at the first poll: the context's first chunk */
    eng_set_cancel(ctx, stop_later, &pl);
    a[0] = et_f(g);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "slow"), a, 1));
    int rc = eng_sync(ctx);
    CHECK(rc == ENG_ECANCELLED);
    CHECK(strstr(eng_error(ctx), "cancelled while running task") != NULL);
    int some = count_written(g);
    printf("cancelled mid-loop: %s; %d of %d sampled elements written, %d polls\n", eng_error(ctx), some,
           N / 64, pl.calls);
    CHECK(some < all / 2);
    CHECK(pl.calls >= 1 && pl.other_thread == 0);

    /* A cancelled batch's chunks that ran wrote out of range: that error goes with the cancel,
     * and the host's next batch, a clean one, succeeds. */
    eng_set_cancel(ctx, NULL, NULL);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "one"), a, 1));
    CHECK_OK(ctx, eng_sync(ctx)); /* compiled before the cancel below */
    a[0] = et_f(f);
    eng_launch(ctx, eng_program_find(p, "oob"), a, 1);
    CHECK(eng_sync(ctx) == ENG_EINVAL); /* compiled, and its error seen once */
    poll once = {0, 2, 0, pthread_self()}; /* a few chunks run (and write out of range) first */
    eng_set_cancel(ctx, stop_later, &once);
    usleep(30000);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "oob"), a, 1));
    CHECK(eng_sync(ctx) == ENG_ECANCELLED);
    eng_set_cancel(ctx, NULL, NULL);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "one"), a, 1));
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK(et_at(f, 0, 0, 0, 0) == 9.0f);

    /* between tasks: 8 short kernels, fusion off, one batch */
    eng_mode m = {0, 1u << 2 /* fusion off */, 0, 0};
    CHECK_OK(ctx, eng_set_mode(ctx, &m));
    eng_field *k[8];
    eng_program *q = et_distinct_kernels(ctx, 8, k);
    if (!q)
        return 1;
    eng_set_cancel(ctx, NULL, NULL);
    et_launch_distinct(ctx, q, 8, k); /* compiles them */
    CHECK_OK(ctx, eng_sync(ctx));
    for (int i = 0; i < 8; i++)
        et_put(ctx, k[i], 1, 0, 0, -1.0f);
    poll stop = {0, 1, 0, pthread_self()};
    eng_set_cancel(ctx, stop_later, &stop);
    usleep(30000); /* past the 20 ms between polls */
    et_launch_distinct(ctx, q, 8, k);
    rc = eng_sync(ctx);
    printf("cancelled between tasks: %s\n", eng_error(ctx));
    CHECK(rc == ENG_ECANCELLED);
    CHECK(strstr(eng_error(ctx), "cancelled") != NULL);
    /* the stop came at the first poll: inside the first task's loop when the context's thread
     * took one of its chunks, else between the first task and the second */
    int ran = 0;
    for (int i = 0; i < 8; i++)
        ran += et_at(k[i], 1, 0, 0, 0) != -1.0f;
    CHECK(ran <= 1);
    CHECK(et_at(k[7], 1, 0, 0, 0) == -1.0f);

    /* no callback: everything runs */
    eng_set_cancel(ctx, NULL, NULL);
    a[0] = et_f(g);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "slow"), a, 1));
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK(count_written(g) == all);
    eng_destroy(ctx);
    CHECK_DONE();
}
