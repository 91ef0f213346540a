/* The GPU executor's conversation with the driver, on a fake driver that runs no kernel but
 * keeps the order of what is queued (fake_cuda_exec.c, found as libcuda.so.1 through
 * LD_LIBRARY_PATH, set by ctest). A GPU context opens, compiles (PTX, which the fake accepts)
 * and launches eager and optimized work; the test then checks, from the fake's counters:
 *  - nothing read too early: no staging buffer of task parameters overwritten before its copy
 *    completed, no elapsed time asked of an unfinished event, no memory freed under pending
 *    work;
 *  - a host read of a field, and statistics, find the stream drained;
 *  - a runtime error of a batch left running reaches the next sync;
 *  - a cancel during a batch's compile (eng_set_cancel) skips the compiles not started, fails
 *    the batch, and the next batch compiles what was skipped;
 *  - a kernel launched for the first time while batches are queued zeroes its global
 *    temporaries in stream order, not with the host's hands on managed memory (the fake's
 *    guard faults on that);
 *  - with the watchdog on (PLUME_CUDA_WATCHDOG), a wait for a GPU that stays busy says so on
 *    stderr, naming the batch it waits for;
 *  - how often the host waits: with PLUME_CUDA_ASYNC=0 after every batch; by default only at
 *    syncs, so eager launches queue on the stream as Taichi's do, and a run of batches longer
 *    than the staging ring reuses its buffers only after their copies finished.
 * Values are not checked: the fake computes nothing. */
#define _GNU_SOURCE
#include "engine_test.h"
#include "engine/engine_internal.h" /* eng_field_tree: the test plays a kernel */
#include "sparse/runtime/runtime.h"
#include "sparse/tree.h"

#include <dlfcn.h>
#include <unistd.h>

typedef struct fake_exec_stats_t {
    unsigned long long kernels, graph_launches, graphs_instantiated, copies_async;
    unsigned long long stream_syncs, event_syncs, ctx_syncs;
    unsigned long long pending;
    unsigned long long violations;
    unsigned long long elapsed_queries;
    unsigned long long events_recorded;
} fake_exec_stats_t;

static const fake_exec_stats_t *(*fake_stats)(void);
static void (*kernel_side)(int on);

static const char *src =
    "kernel seed(field<f32> x, i32 n) {\n"
    "    for (P in ivec3(0) .. ivec3(n)) { x[P] = f32(P.x + 2 * P.y + 3 * P.z); }\n"
    "}\n"
    "kernel step(field<f32> x, field<f32> y, f32 k) {\n"
    "    for (I in x) { y[I] = x[I] * k + x[I + ivec3(1, 0, 0)]; }\n"
    "}\n"
    "kernel shift(field<f32> x, field<f32> y) {\n"
    "    f32 c = y[ivec3(1, 2, 3)] * 0.5;\n"
    "    for (I in x) { x[I] = x[I] + c; }\n"
    "}\n";

#define STEPS 40

/* A context on the fake GPU, eager or optimized, with fields a and b and the program above;
 * exits when any of it fails (nothing below could run). */
static eng_context *open_gpu(int eager, eng_field *f[2], eng_program **p)
{
    eng_context *ctx = et_context(1);
    eng_mode m = {eager, 0, 0, 0};
    CHECK_OK(ctx, eng_set_mode(ctx, &m));
    if (eng_use_cuda(ctx) != ENG_OK) {
        fprintf(stderr, "the fake driver did not open: %s\n", eng_error(ctx));
        exit(1);
    }
    f[0] = et_field(ctx, "a", 3, ENG_F32, 0.0f);
    f[1] = et_field(ctx, "b", 3, ENG_F32, 0.0f);
    if (!(*p = et_compile(ctx, src)))
        exit(1);
    return ctx;
}

/* Eager or optimized (flushing after every launch, so each launch is a batch of its own):
 * the counters' change over the launches, and over the sync and read after them. */
static void run(int eager, fake_exec_stats_t *launches, fake_exec_stats_t *after)
{
    eng_field *f[2];
    eng_program *p;
    eng_context *ctx = open_gpu(eager, f, &p);
    eng_arg a[3];
    memset(a, 0, sizeof a);
    a[0].field = f[0];
    a[1].i[0] = 16;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "seed"), a, 2));
    CHECK_OK(ctx, eng_sync(ctx));
    /* compiled, seeded and drained: count from here */
    fake_exec_stats_t s0 = *fake_stats();
    CHECK_EQ(s0.pending, 0);
    for (int s = 0; s < STEPS; s++) {
        a[0].field = f[s % 2];
        a[1].field = f[(s + 1) % 2];
        a[2].f[0] = 0.5f + (float)s; /* each batch's parameters differ from the others' */
        CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "step"), a, 3));
        CHECK_OK(ctx, eng_flush(ctx));
    }
    fake_exec_stats_t s1 = *fake_stats();
    int32_t ijk[3] = {1, 2, 3};
    (void)eng_field_read(f[STEPS % 2], ijk, 0);
    /* the read waited for everything queued */
    CHECK_EQ(fake_stats()->pending, 0);
    eng_stats es;
    eng_get_stats(ctx, &es);
    CHECK(es.kernel_s > 0);
    fake_exec_stats_t s2 = *fake_stats();
    eng_destroy(ctx);
    CHECK_EQ(fake_stats()->violations, 0);
#define DIFF(out, x, y)                                                                       \
    do {                                                                                      \
        (out)->kernels = (y).kernels - (x).kernels;                                           \
        (out)->graph_launches = (y).graph_launches - (x).graph_launches;                      \
        (out)->copies_async = (y).copies_async - (x).copies_async;                            \
        (out)->stream_syncs = (y).stream_syncs - (x).stream_syncs;                            \
        (out)->event_syncs = (y).event_syncs - (x).event_syncs;                               \
        (out)->pending = (y).pending;                                                         \
        (out)->violations = (y).violations - (x).violations;                                  \
        (out)->events_recorded = (y).events_recorded - (x).events_recorded;                   \
    } while (0)
    DIFF(launches, s0, s1);
    DIFF(after, s1, s2);
#undef DIFF
}

/* A runtime error a batch left running raises (the fake runs no kernel: the test raises it in
 * the tree's runtime, as a kernel overrunning the budget would) is reported by the next sync,
 * even when a statistics call waited for the stream in between without reporting. */
static void test_late_error(void)
{
    eng_context *ctx = et_context(1);
    eng_mode m = {1, 0, 0, 0};
    CHECK_OK(ctx, eng_set_mode(ctx, &m));
    if (eng_use_cuda(ctx) != ENG_OK) {
        fprintf(stderr, "the fake driver did not open: %s\n", eng_error(ctx));
        exit(1);
    }
    eng_field *x = et_field(ctx, "x", 3, ENG_F32, 0.0f);
    eng_program *p = et_compile(ctx, src);
    if (!p)
        exit(1);
    eng_arg a[2];
    memset(a, 0, sizeof a);
    a[0].field = x;
    a[1].i[0] = 8;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "seed"), a, 2));
    CHECK(fake_stats()->pending > 0); /* left running */
    kernel_side(1);
    plm_rt_set_error(plm_tree_runtime(eng_field_tree(x)), PLM_RT_ERR_BUDGET, 0, 1u << 30);
    kernel_side(0);
    (void)eng_memory_bytes(ctx); /* waits for the stream, reports nothing */
    CHECK_EQ(fake_stats()->pending, 0);
    CHECK_EQ(eng_sync(ctx), ENG_ENOMEM);
    CHECK(strstr(eng_error(ctx), "budget") != NULL);
    /* reported once: the next sync is clean */
    CHECK_OK(ctx, eng_sync(ctx));
    eng_destroy(ctx);
}

/* A kernel whose tasks share a value through global temporaries, launched for the first time
 * (its buffer made then) while eager batches are still queued: the buffer is zeroed on the
 * stream. Zeroed by the host, it was written while the device owned managed memory (the fake
 * faults; on a GPU without concurrent managed access that is an error, with it a race). */
static void test_gtmp_while_queued(void)
{
    eng_field *f[2];
    eng_program *p;
    eng_context *ctx = open_gpu(1, f, &p);
    eng_arg a[3];
    memset(a, 0, sizeof a);
    a[0].field = f[0];
    a[1].i[0] = 8;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "seed"), a, 2));
    CHECK_OK(ctx, eng_sync(ctx));
    a[1].field = f[1];
    a[2].f[0] = 0.5f;
    for (int s = 0; s < 4; s++)
        CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "step"), a, 3));
    CHECK(fake_stats()->pending > 0);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "shift"), a, 2));
    CHECK_OK(ctx, eng_sync(ctx));
    CHECK_EQ(fake_stats()->pending, 0);
    eng_destroy(ctx);
    CHECK_EQ(fake_stats()->violations, 0);
}

/* The watchdog: the fake device stays busy 700 ms; with reports every 0.2 s the sync's wait
 * says at least twice which batch it waits for. Only the sync runs with stderr in a file, so a
 * failure elsewhere still shows. */
static void test_watchdog(void)
{
    eng_field *f[2];
    eng_program *p;
    setenv("PLUME_CUDA_WATCHDOG", "0.2", 1);
    eng_context *ctx = open_gpu(1, f, &p); /* the GPU reads the watchdog's setting */
    unsetenv("PLUME_CUDA_WATCHDOG");
    eng_arg a[3];
    memset(a, 0, sizeof a);
    a[0].field = f[0];
    a[1].field = f[1];
    a[2].f[0] = 2.0f;
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "step"), a, 3));
    char path[] = "/tmp/plume-watchdog-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    char buf[4096] = {0};
    if (fd >= 0) {
        fflush(stderr);
        int saved = dup(2);
        dup2(fd, 2);
        setenv("FAKE_CUDA_BUSY_MS", "700", 1);
        int rc = eng_sync(ctx);
        unsetenv("FAKE_CUDA_BUSY_MS");
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        CHECK_EQ(rc, ENG_OK);
        ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
        close(fd);
        unlink(path);
        printf("watchdog said:\n%s", got > 0 ? buf : "(nothing)\n");
    }
    eng_destroy(ctx);
    const char *first = strstr(buf, "waited");
    CHECK(first != NULL);
    CHECK(first && strstr(first + 1, "waited") != NULL);
    CHECK(strstr(buf, "oldest batch not finished: step") != NULL);
}

static int stop_now(void *user)
{
    (*(int *)user)++;
    return 1;
}

static void test_cancel(void)
{
    eng_context *ctx = et_context(2);
    eng_mode m = {0, 1u << 2 /* fusion off: eight tasks */, 0, 0};
    CHECK_OK(ctx, eng_set_mode(ctx, &m));
    if (eng_use_cuda(ctx) != ENG_OK) {
        fprintf(stderr, "the fake driver did not open: %s\n", eng_error(ctx));
        exit(1);
    }
    eng_field *f[8];
    eng_program *p = et_distinct_kernels(ctx, 8, f);
    if (!p)
        exit(1);
    int polls = 0;
    eng_set_cancel(ctx, stop_now, &polls);
    for (int round = 0; round < 2; round++) {
        et_launch_distinct(ctx, p, 8, f);
        int rc = eng_sync(ctx);
        eng_stats es;
        eng_get_stats(ctx, &es);
        printf("cancel round %d: sync %d (%s), %llu tasks compiled, %d polls\n", round, rc,
               rc ? eng_error(ctx) : "ok", (unsigned long long)es.tasks_compiled, polls);
        if (round == 0) {
            CHECK_EQ(rc, ENG_ECANCELLED);
            CHECK(strstr(eng_error(ctx), "cancelled while compiling kernels") != NULL);
            CHECK(es.tasks_compiled < 8);
            CHECK(polls >= 1);
            eng_set_cancel(ctx, NULL, NULL);
        } else {
            CHECK_OK(ctx, rc);
            CHECK_EQ(es.tasks_compiled, 8); /* what was skipped compiled now, nothing twice */
        }
    }
    eng_destroy(ctx);
}

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || !(fake_stats = (const fake_exec_stats_t *(*)(void))dlsym(lib, "fake_exec_stats")) ||
        !(kernel_side = (void (*)(int))dlsym(lib, "fake_exec_kernel_side"))) {
        printf("skipped: libcuda.so.1 is not the fake driver (LD_LIBRARY_PATH): %s\n",
               lib ? "no fake_exec_stats" : dlerror());
        return 77;
    }
    /* compile nothing twice across runs, and keep the machine's caches out of it */
    setenv("PLUME_KERNEL_CACHE", "off", 1);
    unsetenv("PLUME_CUDA_WATCHDOG"); /* the counts of waits below assume plain ones */
    unsetenv("FAKE_CUDA_BUSY_MS");
    setenv("PLUME_PTXAS", "off", 1);
    test_cancel();
    test_gtmp_while_queued();
    test_watchdog();
    fake_exec_stats_t l, a;
    for (int eager = 1; eager >= 0; eager--) {
        const char *mode = eager ? "eager" : "optimized";
        setenv("PLUME_CUDA_ASYNC", "0", 1);
        run(eager, &l, &a);
        /* every batch records a pair of events around it */
        unsigned long long batches = l.events_recorded / 2;
        printf("%s, waiting after every batch: %llu batches (%llu kernels, %llu graph launches) "
               "over %d launches, %llu stream syncs; %llu at the read\n",
               mode, batches, l.kernels, l.graph_launches, STEPS, l.stream_syncs, a.stream_syncs);
        CHECK(l.kernels + l.graph_launches >= STEPS);
        CHECK(batches >= STEPS);
        CHECK_EQ(l.stream_syncs, batches);
        CHECK_EQ(l.event_syncs, 0);
        CHECK_EQ(l.violations + a.violations, 0);

        unsetenv("PLUME_CUDA_ASYNC");
        run(eager, &l, &a);
        batches = l.events_recorded / 2;
        printf("%s, by default: %llu batches, %llu stream syncs, %llu event syncs, %llu "
               "operations pending after them; %llu stream syncs at the read\n",
               mode, batches, l.stream_syncs, l.event_syncs, l.pending, a.stream_syncs);
        CHECK(batches >= STEPS);
        CHECK_EQ(l.stream_syncs, 0);
        /* a batch waits only for the one that used its staging buffer, 8 batches before */
        CHECK_EQ(l.event_syncs, batches - 8);
        CHECK(l.pending > 0);
        CHECK_EQ(a.stream_syncs, 1);
        CHECK_EQ(l.violations + a.violations, 0);
    }
    test_late_error();
    CHECK_DONE();
}
