/* The "plume.deferred_writes/1" extension (ABI 1.7) through the ABI alone. Files written by the
 * plugin's thread have the same bytes as the ones written during cook; finish, set(0) and
 * context_destroy leave every queued file in place; a failed write is reported once, by the
 * next finish (or cook, or sync), naming the node, frame and file; a write queued after a
 * failed one is dropped and counted; a checkpoint taken after a failed file is refused and the
 * previous one stays; the "wrote" log lines reach the host on its own thread; a host that
 * cancels while the queue is full (a slow disk) gets its cook back without waiting for the
 * disk, and the files queued before are still written. */
#define _GNU_SOURCE
#include "check.h"
#include "load.h"
#include "plume/plume.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const plume_plugin *api;
static const plume_ext_deferred_writes *dw;
static const plume_ext_checkpoint *ck;
static char dir[256];

/* What the host's log callback saw. */
static pthread_t host_thread;
static int logs_off_thread, wrote_lines;
static char last_error_log[1024];

static void on_log(void *user, plume_log_level level, const char *message)
{
    (void)user;
    if (!pthread_equal(pthread_self(), host_thread))
        logs_off_thread++;
    if (level == PLUME_LOG_INFO && !strncmp(message, "wrote ", 6))
        wrote_lines++;
    if (level == PLUME_LOG_ERROR)
        snprintf(last_error_log, sizeof last_error_log, "%s", message);
}

/* A slow disk: while the gate is closed, renames onto files under a "slow" folder (the last
 * step of every atomic write) wait. The plugin's rename resolves to this one (the test is
 * linked with -rdynamic); all others pass through. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_closed, renames_held;

__attribute__((visibility("default"))) int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    pthread_mutex_lock(&gate_mu);
    if (strstr(to, "/slow/")) {
        renames_held++;
        pthread_cond_broadcast(&gate_cv);
        while (gate_closed)
            pthread_cond_wait(&gate_cv, &gate_mu);
    }
    pthread_mutex_unlock(&gate_mu);
    return real ? real(from, to) : -1;
}

static void gate_set(int closed)
{
    pthread_mutex_lock(&gate_mu);
    gate_closed = closed;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The host cancels once cancel_at has passed (0: never). */
static double cancel_at;
static int32_t is_cancelled(void *user)
{
    (void)user;
    return cancel_at > 0 && now_s() >= cancel_at;
}

static plume_context *context(int deferred)
{
    plume_host h = {sizeof h, NULL, on_log, NULL, is_cancelled};
    plume_context *ctx = NULL;
    CHECK_STATUS(api->context_create(NULL, &h, &ctx), PLUME_OK);
    plume_field_desc d = {sizeof d, "density", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &d), PLUME_OK);
    plume_volume *v = NULL;
    CHECK_STATUS(api->volume_open(ctx, "density", &v), PLUME_OK);
    float vals[512];
    for (int n = 0; n < 512; n++)
        vals[n] = (float)n * 0.25f + 1.0f;
    const int32_t origins[2][3] = {{0, 0, 0}, {-8, 16, 8}};
    for (int b = 0; b < 2; b++)
        CHECK_STATUS(api->volume_write_block(v, origins[b], vals, NULL), PLUME_OK);
    api->volume_close(v);
    if (deferred)
        CHECK_STATUS(dw->set(ctx, 1), PLUME_OK);
    return ctx;
}

static plume_node *exporter(plume_context *ctx, const char *name, const char *file)
{
    plume_node *n = NULL;
    CHECK_STATUS(api->node_create(ctx, "org.plume.vdb.export", name, &n), PLUME_OK);
    CHECK_STATUS(api->node_set_string(n, "file", file), PLUME_OK);
    return n;
}

static plume_status cook(plume_context *ctx, plume_node *const *nodes, uint32_t count, int64_t frame)
{
    plume_cook_info info = {sizeof info, frame, (double)frame / 24.0, 1.0 / 24.0, 0, 1};
    return api->cook(ctx, nodes, count, &info);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* The same frames cooked with and without deferral give the same files. */
static void same_bytes(void)
{
    char sync_pat[512], def_pat[512], a[512], b[512];
    path_of(sync_pat, sizeof sync_pat, "sync/d_####.vdb");
    path_of(def_pat, sizeof def_pat, "def/d_####.vdb");
    plume_context *s = context(0);
    plume_node *ns = exporter(s, "export", sync_pat);
    plume_context *d = context(1);
    plume_node *nd = exporter(d, "export", def_pat);
    int32_t on = -1;
    CHECK_STATUS(dw->get(d, &on), PLUME_OK);
    CHECK(on == 1);
    wrote_lines = 0;
    for (int64_t f = 1; f <= 3; f++) {
        CHECK_STATUS(cook(s, &ns, 1, f), PLUME_OK);
        CHECK_STATUS(cook(d, &nd, 1, f), PLUME_OK);
    }
    CHECK_STATUS(dw->finish(d), PLUME_OK);
    CHECK(wrote_lines == 6); /* three from each context, the deferred ones by finish at the latest */
    for (int f = 1; f <= 3; f++) {
        snprintf(a, sizeof a, "%s/sync/d_%04d.vdb", dir, f);
        snprintf(b, sizeof b, "%s/def/d_%04d.vdb", dir, f);
        CHECK(exists(a) && exists(b));
        CHECK(files_equal(a, b));
    }
    /* set(0) waits for what is queued, then cooks write during cook again */
    CHECK_STATUS(cook(d, &nd, 1, 4), PLUME_OK);
    CHECK_STATUS(dw->set(d, 0), PLUME_OK);
    snprintf(b, sizeof b, "%s/def/d_0004.vdb", dir);
    CHECK(exists(b));
    CHECK_STATUS(cook(d, &nd, 1, 5), PLUME_OK);
    snprintf(b, sizeof b, "%s/def/d_0005.vdb", dir);
    CHECK(exists(b));
    /* context_destroy waits for the queue */
    CHECK_STATUS(dw->set(d, 1), PLUME_OK);
    CHECK_STATUS(cook(d, &nd, 1, 6), PLUME_OK);
    api->context_destroy(d);
    snprintf(b, sizeof b, "%s/def/d_0006.vdb", dir);
    CHECK(exists(b));
    api->context_destroy(s);
}

/* A file that cannot be written: reported once, later writes dropped, no checkpoint past it. */
static void failures(void)
{
    char blocker[512], bad_pat[512], good_pat[512], ckpt[512], p[512];
    path_of(blocker, sizeof blocker, "blocker");
    FILE *f = fopen(blocker, "w"); /* a file where the bad node wants a folder */
    CHECK(f != NULL);
    if (f)
        fclose(f);
    path_of(bad_pat, sizeof bad_pat, "blocker/x_####.vdb");
    path_of(good_pat, sizeof good_pat, "good/g_####.vdb");
    path_of(ckpt, sizeof ckpt, "ckpt.vdb");
    plume_context *ctx = context(1);
    plume_node *nodes[2] = {exporter(ctx, "bad", bad_pat), exporter(ctx, "good", good_pat)};
    CHECK_STATUS(ck->save(ctx, ckpt, 0, "k"), PLUME_OK);

    /* frame 1: the bad file is queued first, so the good one after it is dropped */
    CHECK_STATUS(cook(ctx, nodes, 2, 1), PLUME_OK);
    CHECK_STATUS(ck->save(ctx, ckpt, 1, "k"), PLUME_ERR_IO);
    CHECK(strstr(api->last_error(ctx), "not written") != NULL);
    CHECK(strstr(api->last_error(ctx), "node 'bad', frame 1") != NULL);
    int64_t frame = -1;
    CHECK_STATUS(ck->info(ctx, ckpt, &frame, NULL), PLUME_OK);
    CHECK(frame == 0);
    CHECK_STATUS(dw->finish(ctx), PLUME_ERR_IO);
    const char *e = api->last_error(ctx);
    CHECK(strstr(e, "node 'bad', frame 1") != NULL);
    CHECK(strstr(e, "x_0001.vdb") != NULL);
    CHECK(strstr(e, "1 write queued after it was dropped") != NULL);
    snprintf(p, sizeof p, "%s/good/g_0001.vdb", dir);
    CHECK(!exists(p));
    CHECK_STATUS(dw->finish(ctx), PLUME_OK); /* reported once */

    /* frame 2, good node alone: written, but frame 1's x file is still missing, so no
     * checkpoint may say frame 2 (a refused checkpoint does not use the failure up) */
    CHECK_STATUS(cook(ctx, nodes + 1, 1, 2), PLUME_OK);
    CHECK_STATUS(ck->save_begin(ctx, ckpt, 2, "k"), PLUME_OK);
    CHECK_STATUS(ck->save_finish(ctx), PLUME_ERR_IO);
    CHECK(strstr(api->last_error(ctx), "node 'bad', frame 1") != NULL);
    CHECK_STATUS(ck->save(ctx, ckpt, 2, "k"), PLUME_ERR_IO);
    CHECK_STATUS(ck->info(ctx, ckpt, &frame, NULL), PLUME_OK);
    CHECK(frame == 0);
    snprintf(p, sizeof p, "%s/good/g_0002.vdb", dir);
    CHECK(exists(p));

    /* loading the checkpoint rewinds the bake: frames cooked again after it may be saved */
    CHECK_STATUS(ck->load(ctx, ckpt, "k", &frame), PLUME_OK);
    CHECK(frame == 0);
    CHECK_STATUS(cook(ctx, nodes + 1, 1, 1), PLUME_OK);
    CHECK_STATUS(cook(ctx, nodes + 1, 1, 2), PLUME_OK);
    CHECK_STATUS(ck->save_begin(ctx, ckpt, 2, "k"), PLUME_OK);
    CHECK_STATUS(ck->save_finish(ctx), PLUME_OK);
    CHECK_STATUS(ck->info(ctx, ckpt, &frame, NULL), PLUME_OK);
    CHECK(frame == 2);

    /* frame 3, bad node alone: the next cook says so before cooking */
    CHECK_STATUS(cook(ctx, nodes, 1, 3), PLUME_OK);
    CHECK_STATUS(ck->save_begin(ctx, ckpt, 3, "k"), PLUME_OK);
    CHECK_STATUS(ck->save_finish(ctx), PLUME_ERR_IO);
    CHECK_STATUS(cook(ctx, nodes + 1, 1, 4), PLUME_ERR_IO);
    CHECK(strstr(api->last_error(ctx), "x_0003.vdb") != NULL);
    snprintf(p, sizeof p, "%s/good/g_0004.vdb", dir);
    CHECK(!exists(p)); /* that cook did nothing */
    CHECK_STATUS(ck->info(ctx, ckpt, &frame, NULL), PLUME_OK);
    CHECK(frame == 2);
    CHECK_STATUS(cook(ctx, nodes + 1, 1, 4), PLUME_OK);
    CHECK_STATUS(api->sync(ctx), PLUME_OK);
    CHECK_STATUS(dw->finish(ctx), PLUME_OK);
    CHECK(exists(p));
    CHECK_STATUS(ck->save(ctx, ckpt, 4, "k"), PLUME_ERR_IO); /* x_0003.vdb is missing */
    CHECK(strstr(api->last_error(ctx), "x_0003.vdb") != NULL);
    CHECK(strstr(api->last_error(ctx), "until one is loaded") != NULL);
    CHECK_STATUS(ck->info(ctx, ckpt, &frame, NULL), PLUME_OK);
    CHECK(frame == 2);

    /* switching deferral off and on does not forget the missing file either */
    CHECK_STATUS(dw->set(ctx, 0), PLUME_OK);
    CHECK_STATUS(ck->save(ctx, ckpt, 4, "k"), PLUME_ERR_IO);
    CHECK_STATUS(dw->set(ctx, 1), PLUME_OK);
    CHECK_STATUS(ck->save(ctx, ckpt, 4, "k"), PLUME_ERR_IO);

    /* a load while a failure is still unreported: the load discards that frame, so the
     * failure is logged and the next cook cooks (and writes, and may be saved) */
    CHECK_STATUS(cook(ctx, nodes, 1, 3), PLUME_OK);
    last_error_log[0] = 0;
    CHECK_STATUS(ck->load(ctx, ckpt, "k", &frame), PLUME_OK);
    CHECK(frame == 2);
    CHECK(strstr(last_error_log, "x_0003.vdb") != NULL);
    CHECK_STATUS(cook(ctx, nodes + 1, 1, 3), PLUME_OK);
    CHECK_STATUS(dw->finish(ctx), PLUME_OK);
    snprintf(p, sizeof p, "%s/good/g_0003.vdb", dir);
    CHECK(exists(p));
    CHECK_STATUS(ck->save(ctx, ckpt, 3, "k"), PLUME_OK);
    CHECK_STATUS(ck->info(ctx, ckpt, &frame, NULL), PLUME_OK);
    CHECK(frame == 3);
    api->context_destroy(ctx);
}

/* Opens the gate after a while, so that a plugin that does not look at the cancel still
 * finishes (and the test fails on the time it took instead of hanging). */
static void *gate_watchdog(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 4;
    pthread_mutex_lock(&gate_mu);
    int rc = 0;
    while (gate_closed && rc == 0)
        rc = pthread_cond_timedwait(&gate_cv, &gate_mu, &until);
    gate_closed = 0;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    return NULL;
}

/* The queue holds two files at most; a third push waits for the disk, and a cancel then
 * returns the cook at once, leaving the two queued files to be written. */
static void cancel_while_full(void)
{
    char pat[512], p[512];
    path_of(p, sizeof p, "slow");
    CHECK(mkdir(p, 0755) == 0);
    path_of(pat, sizeof pat, "slow/s_####.vdb");
    plume_context *ctx = context(1);
    plume_node *n = exporter(ctx, "export", pat);
    gate_set(1);
    CHECK_STATUS(cook(ctx, &n, 1, 1), PLUME_OK);
    CHECK_STATUS(cook(ctx, &n, 1, 2), PLUME_OK);
    pthread_t wd;
    int have_wd = pthread_create(&wd, NULL, gate_watchdog, NULL) == 0;
    CHECK(have_wd);
    double t0 = now_s();
    cancel_at = t0 + 0.3; /* after the cook reached the full queue */
    CHECK_STATUS(cook(ctx, &n, 1, 3), PLUME_ERR_CANCELLED);
    double waited = now_s() - t0;
    cancel_at = 0;
    if (waited > 2.0)
        fprintf(stderr, "cancel while the queue was full: the cook took %.2f s\n", waited);
    CHECK(waited < 2.0); /* 0.3 s and a poll; the watchdog opens the disk only at 4 s */
    pthread_mutex_lock(&gate_mu);
    int held = renames_held;
    int still_closed = gate_closed;
    pthread_mutex_unlock(&gate_mu);
    CHECK(held >= 1 && still_closed); /* frame 1's file was still being written */
    gate_set(0);
    CHECK_STATUS(dw->finish(ctx), PLUME_OK);
    for (int f = 1; f <= 3; f++) {
        snprintf(p, sizeof p, "%s/slow/s_%04d.vdb", dir, f);
        CHECK(exists(p) == (f < 3));
    }
    api->context_destroy(ctx);
    if (have_wd)
        pthread_join(wd, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s libplume.so\n", argv[0]);
        return 2;
    }
    void *dl;
    if (!(api = abi_load(argv[1], &dl)))
        return 1;
    host_thread = pthread_self();
    CHECK(api->abi_minor >= 7);
    dw = api->get_extension(PLUME_EXT_DEFERRED_WRITES);
    ck = api->get_extension(PLUME_EXT_CHECKPOINT);
    CHECK(dw && dw->struct_size >= sizeof *dw);
    CHECK(ck && ck->struct_size >= sizeof *ck);
    if (!dw || !ck)
        CHECK_DONE();
    CHECK_STATUS(dw->set(NULL, 1), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(dw->finish(NULL), PLUME_ERR_INVALID_HANDLE);
    snprintf(dir, sizeof dir, "/tmp/plume_deferred_%d", (int)getpid());
    CHECK(mkdir(dir, 0755) == 0);

    plume_context *off = context(0);
    int32_t on = -1;
    CHECK_STATUS(dw->get(off, &on), PLUME_OK);
    CHECK(on == 0); /* off unless the host asks */
    CHECK_STATUS(dw->finish(off), PLUME_OK); /* nothing queued */
    api->context_destroy(off);

    same_bytes();
    failures();
    cancel_while_full();
    CHECK(logs_off_thread == 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
