/* plume cook SCENE: cook a scene frame by frame, with progress, Ctrl-C and statistics. */
#define _GNU_SOURCE
#include "cli.h"
#include "out_dir.h"
#include "scene.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char cook_usage[] =
    "usage: plume cook SCENE [options]\n"
    "  --frames A-B | N      frame range, or one frame (default: the scene's), within\n"
    "                        +-1000000000\n"
    "  --out DIR             output folder (default: out/<scene name>)\n"
    "  --device cpu|cuda|auto\n"
    "  --threads N           worker threads (default: one per core)\n"
    "  --memory-budget SIZE  the most the simulation's fields may hold, e.g. 512M or 8G\n"
    "                        (default: half the machine's memory); past it the cook stops\n"
    "                        with exit status 1, naming the field and the bytes it needed\n"
    "  --mode eager|optimized\n"
    "  --disable PASS,...    optimizer passes to switch off: listgen, demote, fusion, dse\n"
    "  --stats FILE.json     write per-frame and total statistics\n"
    "  --deterministic       the same output bytes run after run, whatever the threads (also the\n"
    "                        scene key \"deterministic\": true); costs the parallelism of float\n"
    "                        += reductions only\n"
    "  --resume              continue a bake after its last complete frame, from the checkpoint\n"
    "                        DIR/.plume_checkpoint.vdb that every complete frame writes; without\n"
    "                        one, cooks from the first frame; a checkpoint of another scene or of\n"
    "                        other options (mode, --disable, --deterministic, start frame) or a\n"
    "                        damaged one stops the cook with exit status 1\n"
    "  --no-checkpoint       do not write the checkpoint after each frame\n"
    "  --sync-writes         write each frame's files before cooking the next (default: a thread\n"
    "                        of the plugin writes them while the next frame cooks)\n"
    "  --quiet               no progress output\n";

/* Where the checkpoint of the last complete frame lives, beside the frames it belongs to. */
#define CHECKPOINT_NAME ".plume_checkpoint.vdb"

static volatile sig_atomic_t interrupted;
static int signals_seen;           /* atomic: signals taken, the first one's time below */
static struct timespec first_signal;
static int first_signal_set;       /* atomic: first_signal is written */

/* A second signal this soon after the first is the same request delivered twice: timeout(1) and
 * some job managers signal the process and then its process group; on the H200 machine a cook
 * that had started to cancel died of the copy (status 130). */
#define SIGNAL_ECHO_S 0.25

/* A cook asked to stop that reaches no safe point in grace_s seconds (a kernel whose loop never
 * ends: work already running finishes first) stops anyway, as a second signal would stop it: a
 * farm or timeout(1) sends one SIGTERM and may not follow it with SIGKILL. Complete frames and
 * the last checkpoint are whole (written to temporary names and renamed). 30 s, or
 * PLUME_CANCEL_GRACE_S (the tests). The messages are made before any signal can come. */
static unsigned grace_s = 30;
static volatile sig_atomic_t past_loop; /* the frame loop is done: no grace period from then on */
static char msg_grace[200], msg_int[200], msg_term[200];

static void set_grace(void)
{
    const char *e = getenv("PLUME_CANCEL_GRACE_S");
    char *end;
    unsigned long v = e ? strtoul(e, &end, 10) : 0;
    if (e && *e && !*end && v >= 1 && v <= 3600)
        grace_s = (unsigned)v;
    snprintf(msg_grace, sizeof msg_grace,
             "\nplume: no safe point reached in %u s (a kernel that does not end?): stopping now; the "
             "complete frames are kept\n", grace_s);
    snprintf(msg_int, sizeof msg_int,
             "\nplume: cancelling at the next safe point (Ctrl-C again to kill; stopping anyway in %u s)\n",
             grace_s);
    snprintf(msg_term, sizeof msg_term,
             "\nplume: terminated: cancelling at the next safe point (stopping anyway in %u s)\n", grace_s);
}

static void on_grace_over(int alarm_sig)
{
    (void)alarm_sig;
    ssize_t w = write(2, msg_grace, strlen(msg_grace));
    (void)w;
    int sig = interrupted ? (int)interrupted : SIGTERM;
    signal(sig, SIG_DFL);
    raise(sig); /* the exit status a shell reports for the signal */
    _exit(128 + sig);
}

/* 1 while the terminal's cursor is at the end of a progress line (no newline yet): what else is
 * printed first ends it, so that it is kept, and nothing else starts with a blank line (a log
 * file or --quiet has no progress line). */
static volatile sig_atomic_t progress_open; /* read by the signal handler too */

static void end_progress_line(void)
{
    if (progress_open)
        fputc('\n', stderr);
    progress_open = 0;
}

static void on_sigint(int sig)
{
    int saved = errno; /* the interrupted code may be about to read it */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
    /* The cook has several threads: two copies may run this at once on two of them. */
    if (__atomic_fetch_add(&signals_seen, 1, __ATOMIC_ACQ_REL) > 0) {
        /* the first one's time not yet written: it is a moment ago */
        if (__atomic_load_n(&first_signal_set, __ATOMIC_ACQUIRE)) {
            double dt = (double)(now.tv_sec - first_signal.tv_sec) +
                        1e-9 * (double)(now.tv_nsec - first_signal.tv_nsec);
            if (dt >= SIGNAL_ECHO_S) {
                /* asked again: killed the ordinary way once this handler returns (the
                 * signal is blocked while it runs) */
                signal(sig, SIG_DFL);
                raise(sig);
            }
        }
        errno = saved;
        return;
    }
    first_signal = now;
    __atomic_store_n(&first_signal_set, 1, __ATOMIC_RELEASE);
    interrupted = sig; /* the exit status will be 128 + sig, as a shell reports the signal */
    if (!past_loop) {
        signal(SIGALRM, on_grace_over);
        alarm(grace_s);
    }
    /* at once, so nobody presses again for want of an answer (write(2) is signal-safe) */
    int skip = !progress_open; /* the leading newline ends a progress line, if one is open */
    progress_open = 0;
    const char *msg = (sig == SIGINT ? msg_int : msg_term) + skip;
    ssize_t w = write(2, msg, strlen(msg));
    (void)w;
    errno = saved;
}

static int in_stage(const scene_stage *st, const plume_node *node)
{
    for (uint32_t i = 0; i < st->count; i++)
        if (st->nodes[i] == node)
            return 1;
    return 0;
}

/* 1 when a frame file the scene's outputs name for frames a..b is missing or damaged (shorter
 * than a VDB header, or without its magic number: a full read of every frame would take as long
 * as writing them), with the first few listed in out: a resumed bake with holes in its sequence
 * would otherwise end with status 0. Outputs of the substep and frame stages are written every
 * frame, those of init at frame a only, those of nodes in no stage never. */
static int frames_missing(const scene *sc, int64_t a, int64_t b, char *out, size_t n)
{
    int bad = 0;
    size_t k = 0;
    out[0] = 0;
    for (int64_t f = a; f <= b; f++)
        for (uint32_t o = 0; o < sc->noutputs; o++) {
            const plume_node *node = sc->output_nodes[o];
            if (!in_stage(&sc->substep, node) && !in_stage(&sc->frame, node) &&
                !(f == a && in_stage(&sc->init, node)))
                continue;
            char path[4200];
            outdir_frame_path(sc->outputs[o], f, path, sizeof path);
            static const unsigned char magic[8] = {0x20, 0x42, 0x44, 0x56, 0, 0, 0, 0};
            unsigned char head[8] = {0};
            const char *why = NULL;
            FILE *fp = fopen(path, "rb");
            if (!fp)
                why = errno == ENOENT ? "missing" : strerror(errno);
            else if (fread(head, 1, 8, fp) != 8 || memcmp(head, magic, 8) != 0)
                why = "damaged: no VDB header";
            if (fp)
                fclose(fp);
            if (!why)
                continue;
            if (++bad <= 4 && k < n) {
                int w = snprintf(out + k, n - k, "%s%s (%s)", bad > 1 ? ", " : "", path, why);
                k += w > 0 ? (size_t)w : 0;
            }
        }
    if (bad > 4 && k < n)
        snprintf(out + k, n - k, " and %d more", bad - 4);
    return bad > 0;
}

static int32_t is_cancelled(void *user)
{
    (void)user;
    return interrupted;
}

/* PLUME_VERBOSE=1 adds the plugin's informational messages, PLUME_VERBOSE=2 its debug ones too
 * (the smoke solver's pressure solves: iterations and residuals). */
static void log_cb(void *user, plume_log_level level, const char *msg)
{
    (void)user;
    int verbose = cli_verbosity();
    if (level == PLUME_LOG_WARNING) {
        end_progress_line();
        cli_warning(msg);
    } else if ((level == PLUME_LOG_INFO && verbose >= 1) || (level == PLUME_LOG_DEBUG && verbose >= 2)) {
        end_progress_line();
        fprintf(stderr, "plume: %s\n", msg);
    }
}

/* On a terminal: the last finished frame's line, and the plugin's stage inside the frame
 * being cooked after it (the first frame is mostly compiling, and says so). */
static char status_line[256] = "starting";

static void progress_cb(void *user, double fraction, const char *stage)
{
    (void)user;
    fprintf(stderr, "\r\033[K%s  | %s (%.0f%%)", status_line, stage, 100.0 * fraction);
    progress_open = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The frame a deferred write's failure names ("node 'export', frame 5: ...", plume.h): 1 and
 * the frame in *frame, or 0 when msg is not such a failure. */
static int written_frame_of(const char *msg, int64_t *frame)
{
    const char *node = strstr(msg, "node '");
    const char *at = node ? strstr(node, "', frame ") : NULL;
    if (!at)
        return 0;
    char *end;
    long long v = strtoll(at + 9, &end, 10);
    if (end == at + 9 || *end != ':')
        return 0;
    *frame = v;
    return 1;
}

/* Removes the entries of frame `from` and later from the statistics' frames; their count. */
static int64_t drop_frames_from(json_t *frames, int64_t from)
{
    int64_t dropped = 0;
    for (size_t i = json_array_size(frames); i-- > 0;) {
        if (json_integer_value(json_object_get(json_array_get(frames, i), "frame")) >= from) {
            json_array_remove(frames, i);
            dropped++;
        }
    }
    return dropped;
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* Frames a cook may name: far past any shot, and far from int64's end, where a frame loop's
 * f++ would wrap to negative frames and never stop. */
#define FRAME_LIMIT 1000000000LL

/* One frame number at s: an optional '-' then digits (no blanks or '+', which strtoll allows). */
static int parse_frame(const char *s, char **end, long long *out)
{
    if (!(s[0] >= '0' && s[0] <= '9') && !(s[0] == '-' && s[1] >= '0' && s[1] <= '9'))
        return -1;
    errno = 0;
    *out = strtoll(s, end, 10);
    return errno == ERANGE || *out > FRAME_LIMIT || *out < -FRAME_LIMIT ? -1 : 0;
}

static int parse_frames(const char *s, int64_t *a, int64_t *b)
{
    char *end;
    long long x, y;
    if (parse_frame(s, &end, &x))
        return -1;
    y = x;
    if (*end == '-' && parse_frame(end + 1, &end, &y))
        return -1;
    if (*end || y < x)
        return -1;
    *a = x;
    *b = y;
    return 0;
}

/* "512M", "8G", "1.5G", "65536K" or plain bytes; at least 1 MiB. Returns 0 or -1. */
static int parse_size(const char *s, uint64_t *out)
{
    /* digits with at most one '.', nothing else: strtod alone took "0x100000", " 64M", "1e3M" */
    size_t nd = strspn(s, "0123456789."), dots = 0;
    for (size_t i = 0; i < nd; i++)
        dots += s[i] == '.';
    if (!nd || dots > 1 || s[0] == '.')
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end != s + nd)
        return -1;
    double unit = 1;
    if (*end == 'K' || *end == 'k')
        unit = 1024.0, end++;
    else if (*end == 'M' || *end == 'm')
        unit = 1024.0 * 1024.0, end++;
    else if (*end == 'G' || *end == 'g')
        unit = 1024.0 * 1024.0 * 1024.0, end++;
    else if (*end == 'T' || *end == 't')
        unit = 1024.0 * 1024.0 * 1024.0 * 1024.0, end++;
    if (end == s || *end || !(v * unit >= 1024.0 * 1024.0) || v * unit > 1e18)
        return -1;
    *out = (uint64_t)(v * unit);
    return 0;
}

static int parse_disable(const char *s, uint32_t *mask)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (!strcmp(tok, "listgen"))
            *mask |= PLUME_PASS_LISTGEN;
        else if (!strcmp(tok, "demote"))
            *mask |= PLUME_PASS_DEMOTE;
        else if (!strcmp(tok, "fusion"))
            *mask |= PLUME_PASS_FUSION;
        else if (!strcmp(tok, "dse"))
            *mask |= PLUME_PASS_DSE;
        else
            return -1;
    }
    return 0;
}

static double active_voxels(const plume_plugin *api, plume_context *ctx, const scene *sc)
{
    double total = 0;
    for (uint32_t i = 0; i < sc->nfields; i++) {
        double v = 0;
        if (api->field_stat(ctx, sc->field_names[i], PLUME_STAT_ACTIVE_VOXELS, &v) == PLUME_OK)
            total += v;
    }
    return total;
}

/* Frames whose CFL condition asked for more substeps than substeps.max (the first one is
 * warned about at once, the rest counted for the end), and a velocity that is not finite. */
static int64_t cfl_capped, cfl_worst_frame;
static double cfl_worst;
static int velocity_blown;

/* Substeps for this frame from the CFL condition: the fastest voxel may cross at most `cfl`
 * voxels per substep. Past substeps.max the frame runs at the max, unstable: said. */
static uint32_t substeps_for(const plume_plugin *api, plume_context *ctx, const scene *sc, int64_t frame,
                             int *err)
{
    *err = 0;
    if (sc->cfl <= 0 || !sc->velocity)
        return sc->substeps_min;
    double vmax = 0;
    if (api->field_stat(ctx, sc->velocity, PLUME_STAT_MAX_ABS, &vmax) != PLUME_OK) {
        *err = 1;
        return 0;
    }
    if (!isfinite(vmax) && !velocity_blown) {
        velocity_blown = 1;
        end_progress_line();
        fprintf(stderr, "plume: warning: frame %lld: field '%s' holds %s velocities: the simulation has blown "
                "up (lower substeps.cfl, raise substeps.max, or calm the forces)\n", (long long)frame,
                sc->velocity, isnan(vmax) ? "NaN" : "infinite");
    }
    double n = ceil(vmax / sc->fps / (sc->cfl * sc->voxel_size));
    if (!(n >= sc->substeps_min))
        n = sc->substeps_min;
    if (n > sc->substeps_max && isfinite(n)) {
        if (cfl_capped++ == 0) {
            end_progress_line();
            fprintf(stderr, "plume: warning: frame %lld: the velocity (up to %.4g) asks for %.0f substeps at "
                    "cfl %g, more than substeps.max %u: its fastest voxels cross %.3g voxels a substep and "
                    "the result may be unstable; raise substeps.max\n", (long long)frame, vmax, n, sc->cfl,
                    sc->substeps_max, vmax / sc->fps / sc->substeps_max / sc->voxel_size);
        }
        if (n > cfl_worst) {
            cfl_worst = n;
            cfl_worst_frame = frame;
        }
    }
    if (n > sc->substeps_max)
        n = sc->substeps_max;
    return (uint32_t)n;
}

static void fmt_duration(double s, char *buf, size_t n)
{
    if (s < 60)
        snprintf(buf, n, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Written to a temporary name beside it and renamed; -1 with errno set on failure. */
static int write_stats(const char *path, json_t *root)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    if (!root) {
        errno = ENOMEM;
        return -1;
    }
    if (json_dump_file(root, tmp, JSON_INDENT(2)) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

/* Whether the statistics can be written there, before a cook whose whole run it would cost to
 * find out: a file created and removed beside it. */
static int stats_writable(const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(tmp);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return -1;
    }
    return 0;
}

/* Whether --stats would overwrite the scene or a volume (a frame written by this or another
 * bake): said, for a usage error, before anything is cooked. */
static int stats_clobbers(const char *stats_path, const char *scene_path)
{
    struct stat a, b;
    if (stat(stats_path, &a) == 0 && stat(scene_path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino) {
        cli_error("cook", "--stats %s is the scene itself: give the statistics a file of their own",
                  stats_path);
        return 1;
    }
    size_t n = strlen(stats_path);
    if (n >= 4 && !strcasecmp(stats_path + n - 4, ".vdb")) {
        cli_error("cook", "--stats %s names a .vdb file: the statistics are JSON (e.g. stats.json), "
                  "and writing them there would replace a volume", stats_path);
        return 1;
    }
    return 0;
}

static json_t *stats_json(const plume_stats *s)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:I, s:I}",
                     "tasks_launched", (json_int_t)s->tasks_launched, "tasks_launched_serial",
                     (json_int_t)s->tasks_launched_serial, "tasks_launched_range_for",
                     (json_int_t)s->tasks_launched_range_for, "tasks_launched_struct_for",
                     (json_int_t)s->tasks_launched_struct_for, "listgens", (json_int_t)s->listgens,
                     "tasks_compiled", (json_int_t)s->tasks_compiled, "instructions",
                     (json_int_t)s->instructions, "fused_tasks", (json_int_t)s->fused_tasks,
                     "eliminated_stores", (json_int_t)s->eliminated_stores, "eliminated_tasks",
                     (json_int_t)s->eliminated_tasks, "wall_s", s->wall_s, "backend_s", s->backend_s,
                     "optimizer_s", s->optimizer_s, "compile_s", s->compile_s, "active_voxels",
                     (json_int_t)s->active_voxels, "memory_bytes", (json_int_t)s->memory_bytes);
}

/* Statistics appended to plume_stats after 1.2, added to stats_json's object: the kernel
 * cache's (1.4), the optimizer's flushes (1.6), and the GPU's (1.3) where a GPU ran. */
static void appended_stats_json(json_t *o, const plume_stats *s)
{
    if (o && PLUME_HAS_FIELD(s, plume_stats, tasks_from_disk))
        json_object_set_new(o, "tasks_from_disk", json_integer((json_int_t)s->tasks_from_disk));
    if (o && PLUME_HAS_FIELD(s, plume_stats, flushes_memoized)) {
        json_object_set_new(o, "flushes", json_integer((json_int_t)s->flushes));
        json_object_set_new(o, "flushes_memoized", json_integer((json_int_t)s->flushes_memoized));
    }
    if (!o || !PLUME_HAS_FIELD(s, plume_stats, gpu_graphs_built) || s->gpu_kernels == 0)
        return;
    json_object_set_new(o, "gpu_kernel_s", json_real(s->gpu_kernel_s));
    json_object_set_new(o, "gpu_kernels", json_integer((json_int_t)s->gpu_kernels));
    json_object_set_new(o, "gpu_graph_launches", json_integer((json_int_t)s->gpu_graph_launches));
    json_object_set_new(o, "gpu_graphs_built", json_integer((json_int_t)s->gpu_graphs_built));
}

/* What a checkpoint must match to be resumed from: the scene (its bytes and kernel files'),
 * the plugin's version and the options that change results. Threads and device are left out:
 * in deterministic mode they do not change results, and without it nothing is bitwise anyway.
 * Space-separated name=value pairs, so a mismatch can be explained item by item. */
static void bake_key(char *out, size_t n, const scene *sc, const plume_plugin *api,
                     const plume_context_options *o, int deterministic)
{
    snprintf(out, n, "plume-bake/2 scene=%016llx code=%016llx plugin=%s mode=%s disabled=%u flush=%u "
             "deterministic=%d start=%lld",
             (unsigned long long)sc->content_hash, (unsigned long long)sc->kernels_hash, api->version,
             o->mode == PLUME_MODE_EAGER ? "eager" : "optimized", o->disabled_passes, o->flush_every,
             deterministic, (long long)sc->frame_start);
}

/* "scene, start" : the items of key a that differ from key b (or all of a's when b has other
 * items). */
static void key_diff(const char *a, const char *b, char *out, size_t n)
{
    out[0] = 0;
    char ta[512], tb[512];
    snprintf(ta, sizeof ta, "%s", a);
    char *sa = NULL;
    for (char *ia = strtok_r(ta, " ", &sa); ia; ia = strtok_r(NULL, " ", &sa)) {
        char *eq = strchr(ia, '=');
        size_t name_len = eq ? (size_t)(eq - ia) : strlen(ia);
        int same = 0;
        snprintf(tb, sizeof tb, "%s", b);
        char *sb = NULL;
        for (char *ib = strtok_r(tb, " ", &sb); ib && !same; ib = strtok_r(NULL, " ", &sb))
            same = !strcmp(ia, ib);
        if (same)
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%.*s", len ? ", " : "", (int)name_len, ia);
    }
}

/* The checkpoint save_begin left writing: its frame and that frame's statistics (owned by the
 * frames array). */
typedef struct pending_ckpt {
    int64_t frame;
    json_t *stats; /* a reference of its own: the frame may leave the statistics' list first */
} pending_ckpt;

/* Checkpoints that could not be written, and the last frame whose checkpoint was: a failure
 * is a warning (the frames are fine), counted so that the end of the cook and the statistics
 * say what a --resume would do. */
static int ckpt_failures;
static int64_t ckpt_last_ok;
static int ckpt_any_ok;

static void checkpoint_failed(const plume_plugin *api, plume_context *ctx, int64_t frame, json_t *fj)
{
    end_progress_line();
    fprintf(stderr, "plume: warning: frame %lld: no checkpoint: %s\n", (long long)frame, api->last_error(ctx));
    ckpt_failures++;
    if (fj)
        json_object_set_new(fj, "checkpoint_error", json_string(api->last_error(ctx)));
}

static void checkpoint_written(int64_t frame)
{
    ckpt_last_ok = frame;
    ckpt_any_ok = 1;
}

/* Waits for the pending checkpoint write and notes how long the wait took and the file's size
 * in that frame's statistics; a failed write is a warning, as for save. */
static void finish_checkpoint(const plume_plugin *api, const plume_ext_checkpoint *ck, plume_context *ctx,
                              const char *path, pending_ckpt *p)
{
    if (!p->stats)
        return;
    double c0 = now_s();
    if (ck->save_finish(ctx) != PLUME_OK) {
        checkpoint_failed(api, ctx, p->frame, p->stats);
    } else {
        struct stat cs;
        json_object_set_new(p->stats, "checkpoint_wait_ms", json_real((now_s() - c0) * 1e3));
        if (stat(path, &cs) == 0)
            json_object_set_new(p->stats, "checkpoint_bytes", json_integer((json_int_t)cs.st_size));
        checkpoint_written(p->frame);
    }
    json_decref(p->stats);
    *p = (pending_ckpt){-1, NULL};
}

static int is_value_option(const char *a)
{
    static const char *const opts[] = {"--frames", "--out", "--stats", "--device", "--threads", "--mode", "--disable",
                                       "--memory-budget"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(a, opts[i]))
            return 1;
    return 0;
}

int cmd_cook(int argc, char **argv, const cli_common *c)
{
    const char *scene_path = NULL, *out_dir = NULL, *stats_path = NULL;
    const char *frames = NULL;
    int quiet = 0, deterministic = 0, resume = 0, checkpoints = 1, sync_writes = 0;
    plume_context_options o = {sizeof o, PLUME_DEVICE_CPU, 0, 0, PLUME_MODE_OPTIMIZED, 0, 0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (!strcmp(a, "--help")) {
            fputs(cook_usage, stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--deterministic")) {
            deterministic = 1;
        } else if (!strcmp(a, "--resume")) {
            resume = 1;
        } else if (!strcmp(a, "--no-checkpoint")) {
            checkpoints = 0;
        } else if (!strcmp(a, "--sync-writes")) {
            sync_writes = 1;
        } else if (is_value_option(a) && (!has_val || !argv[i + 1][0])) {
            cli_error("cook", "%s needs a value%s", a, has_val ? " (it was given an empty one)" : "");
            return EXIT_USAGE;
        } else if (!strcmp(a, "--frames")) {
            frames = argv[++i];
        } else if (!strcmp(a, "--out")) {
            out_dir = argv[++i];
        } else if (!strcmp(a, "--stats")) {
            stats_path = argv[++i];
        } else if (!strcmp(a, "--device")) {
            const char *d = argv[++i];
            if (!strcmp(d, "cpu"))
                o.device = PLUME_DEVICE_CPU;
            else if (!strcmp(d, "cuda"))
                o.device = PLUME_DEVICE_CUDA;
            else if (!strcmp(d, "auto"))
                o.device = PLUME_DEVICE_AUTO;
            else {
                cli_error("cook", "--device must be cpu, cuda or auto, not '%s'", d);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--threads")) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 0 || t > 1024) {
                cli_error("cook", "--threads must be a number from 0 to 1024");
                return EXIT_USAGE;
            }
            o.threads = (uint32_t)t;
        } else if (!strcmp(a, "--memory-budget")) {
            if (parse_size(argv[++i], &o.memory_budget_bytes)) {
                cli_error("cook", "--memory-budget must look like 512M, 8G or a number of bytes "
                                  "(at least 1M), not '%s'", argv[i]);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--mode")) {
            const char *m = argv[++i];
            if (!strcmp(m, "eager"))
                o.mode = PLUME_MODE_EAGER;
            else if (!strcmp(m, "optimized"))
                o.mode = PLUME_MODE_OPTIMIZED;
            else {
                cli_error("cook", "--mode must be eager or optimized, not '%s'", m);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--disable")) {
            if (parse_disable(argv[++i], &o.disabled_passes)) {
                cli_error("cook", "--disable takes a comma-separated list of listgen, demote, fusion, dse, not '%s'",
                          argv[i]);
                return EXIT_USAGE;
            }
        } else if (a[0] == '-') {
            cli_error("cook", "unknown option '%s' (plume cook --help)", a);
            return EXIT_USAGE;
        } else if (!scene_path) {
            scene_path = a;
        } else {
            cli_error("cook", "only one scene at a time ('%s' and '%s')", scene_path, a);
            return EXIT_USAGE;
        }
    }
    if (!scene_path) {
        cli_error("cook", "which scene? (plume cook SCENE)");
        fputs(cook_usage, stderr);
        return EXIT_USAGE;
    }
    if (stats_path && stats_clobbers(stats_path, scene_path))
        return EXIT_USAGE;
    int64_t fa = 0, fb = 0;
    if (frames && parse_frames(frames, &fa, &fb)) {
        cli_error("cook", "--frames must look like 1-24 or 5 (first frame, then last; frames within "
                  "+-%lld), not '%s'", FRAME_LIMIT, frames);
        return EXIT_USAGE;
    }

    char err[20000]; /* a scene path and a plugin message (up to 16 KB: 20 compile errors) */
    scene sc;
    if (scene_load(&sc, scene_path, err, sizeof err)) {
        cli_error("cook", "%s", err);
        /* a farm retrying a broken scene must not read the last good run's "complete" */
        json_t *root = stats_path ? json_pack("{s:s, s:s, s:s, s:[]}", "scene", scene_path, "status", "failed",
                                              "error", err, "frames")
                                  : NULL;
        if (root && write_stats(stats_path, root) != 0)
            cli_error("cook", "cannot write statistics to %s: %s", stats_path, strerror(errno));
        json_decref(root);
        scene_free(&sc);
        return EXIT_WORK;
    }
    if (frames) {
        sc.frame_start = fa;
        sc.frame_end = fb;
    }
    char default_out[4096];
    if (!out_dir) {
        snprintf(default_out, sizeof default_out, "out/%s", sc.name);
        out_dir = default_out;
    }
    /* Before the cook it would cost to find out. A file inside the output folder is left to be
     * checked when it is written: that folder is made only once the scene is known good. */
    size_t od = strlen(out_dir);
    if (stats_path && !(strncmp(stats_path, out_dir, od) == 0 && stats_path[od] == '/') &&
        stats_writable(stats_path) != 0) {
        cli_error("cook", "cannot write statistics to %s: %s", stats_path, strerror(errno));
        scene_free(&sc);
        return EXIT_WORK;
    }

    host_plugin p;
    if (cli_load("cook", c, &p)) {
        json_t *root = stats_path ? json_pack("{s:s, s:s, s:s, s:[]}", "scene", scene_path, "status", "failed",
                                              "error", "the plugin could not be loaded (see stderr)", "frames")
                                  : NULL;
        if (root && write_stats(stats_path, root) != 0)
            cli_error("cook", "cannot write statistics to %s: %s", stats_path, strerror(errno));
        json_decref(root);
        scene_free(&sc);
        return EXIT_WORK;
    }
    const plume_plugin *api = p.api;
    /* Deterministic mode is the CPU's (floating-point reductions in a fixed order): auto takes
     * the device that can honour it rather than failing on machines with a GPU. An explicit
     * --device cuda still fails, saying why. */
    deterministic |= sc.deterministic;
    if (deterministic && o.device == PLUME_DEVICE_AUTO) {
        o.device = PLUME_DEVICE_CPU;
        if (!quiet)
            fprintf(stderr, "plume: auto: deterministic mode, using the CPU\n");
    }
    int tty = isatty(2) && !quiet;
    plume_host h = {sizeof h, NULL, log_cb, tty ? progress_cb : NULL, is_cancelled};
    plume_context *ctx = NULL;
    int rc = EXIT_WORK, lock_fd = -1;
    json_t *frames_json = json_array();
    plume_context_info ci = {.struct_size = sizeof ci};
    plume_status st = PLUME_OK;
    int64_t first = sc.frame_start, nframes = 0, done_frames = 0;
    int folder_gone = 0;
    int64_t gone_frame = 0;   /* the last frame cooked when the folder was found gone */
    struct timespec intact_at; /* when the lock was last seen in place */
    clock_gettime(CLOCK_REALTIME, &intact_at);
    /* why the cook stopped, for stderr and the statistics (a farm's report need not parse stderr) */
    char failure[20000] = "";
#define FAIL(...)                                                                                \
    do {                                                                                         \
        snprintf(failure, sizeof failure, __VA_ARGS__);                                          \
        cli_error("cook", "%s", failure);                                                        \
    } while (0)
    if (api->context_create(&o, &h, &ctx) != PLUME_OK) {
        FAIL("%s", api->last_error(NULL));
        goto stats;
    }
    api->context_info(ctx, &ci);
    if (scene_instantiate(&sc, api, ctx, out_dir, err, sizeof err)) {
        FAIL("%s", err);
        goto stats;
    }
    const plume_ext_deterministic *det = api->get_extension(PLUME_EXT_DETERMINISTIC);
    if (deterministic && (!det || det->struct_size < sizeof *det)) {
        FAIL("deterministic mode asked for, but this plugin (%s) has no \"%s\" extension", api->version,
             PLUME_EXT_DETERMINISTIC);
        goto stats;
    }
    if (deterministic && det->set(ctx, 1) != PLUME_OK) {
        FAIL("%s", api->last_error(ctx));
        goto stats;
    }
    /* ABI 1.7 plugins write a frame's files on a thread of their own while the next frame cooks;
     * a failed file surfaces at the next cook or sync, and its frame's checkpoint is not written */
    const plume_ext_deferred_writes *dw = sync_writes ? NULL : api->get_extension(PLUME_EXT_DEFERRED_WRITES);
    if (dw && dw->struct_size < sizeof *dw)
        dw = NULL;
    if (dw && dw->set(ctx, 1) != PLUME_OK) {
        FAIL("%s", api->last_error(ctx));
        goto stats;
    }
    /* only once the scene is known to be good: a refused one leaves no empty folder behind */
    if (mkdir_p(out_dir) != 0) {
        int e = errno;
        struct stat os;
        if (e == ENOTDIR && stat(out_dir, &os) == 0 && !S_ISDIR(os.st_mode))
            FAIL("cannot use %s as the output folder: it exists and is a file", out_dir);
        else
            FAIL("cannot create output folder %s: %s", out_dir, strerror(e));
        goto stats;
    }
    char lock_why[4400];
    if ((lock_fd = outdir_lock(out_dir, lock_why, sizeof lock_why)) == -1) {
        cli_error("cook", "%s", lock_why);
        goto done; /* no statistics: the path may be the running cook's */
    }
    if (lock_fd < 0) { /* a folder this cook cannot use: its statistics say so */
        FAIL("%s", lock_why);
        goto stats;
    }
    /* The folders the outputs go to, now rather than when the first frame is written: a path
     * that cannot be made (under a file, a read-only or special file system) stops the cook at
     * its place in the scene before anything is simulated; with deferred writes it surfaced a
     * frame late, after that frame was reported done. Folders named per frame (a # in them)
     * are made as the frames are written. */
    for (uint32_t i = 0; i < sc.noutputs; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", sc.outputs[i]);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            continue;
        *slash = 0;
        if (strchr(dir, '#'))
            continue;
        if (mkdir_p(dir) != 0) {
            FAIL("%s: %s: cannot create the folder %s: %s", sc.path, sc.output_paths[i], dir, strerror(errno));
            goto stats;
        }
    }
    uint64_t stale_bytes = 0;
    int stale = outdir_clean_temps(out_dir, &stale_bytes);
    if (stale && !quiet)
        fprintf(stderr, "plume: removed %d temporary file(s) (%.1f MB) that a killed cook left in %s\n", stale,
                (double)stale_bytes / 1048576.0, out_dir);
    const plume_ext_checkpoint *ck = api->get_extension(PLUME_EXT_CHECKPOINT);
    if (ck && ck->struct_size < offsetof(plume_ext_checkpoint, save_begin))
        ck = NULL;
    /* ABI 1.5 plugins write checkpoints on a thread of their own while the next frame cooks */
    int ck_async = ck && ck->struct_size >= sizeof *ck && ck->save_begin && ck->save_finish;
    pending_ckpt pending = {-1, NULL};
    if (resume && !ck) {
        FAIL("--resume: this plugin (%s) has no \"%s\" extension", api->version, PLUME_EXT_CHECKPOINT);
        goto stats;
    }
    char key[512], ckpt_path[4200];
    bake_key(key, sizeof key, &sc, api, &o, deterministic);
    snprintf(ckpt_path, sizeof ckpt_path, "%s/%s", out_dir, CHECKPOINT_NAME);
    if (resume && access(ckpt_path, F_OK) != 0) {
        if (!quiet)
            fprintf(stderr, "plume: --resume: no checkpoint %s; cooking from frame %lld\n", ckpt_path,
                    (long long)first);
    } else if (resume) {
        int64_t cf = 0;
        char *ckey = NULL;
        if (ck->info(ctx, ckpt_path, &cf, &ckey) != PLUME_OK) {
            FAIL("--resume: %s; delete it or cook without --resume to start over", api->last_error(ctx));
            goto stats;
        }
        if (strcmp(ckey, key) && strncmp(ckey, key, strcspn(key, " ") + 1)) {
            /* another key format: items cannot be compared */
            FAIL("--resume: checkpoint %s (frame %lld) was written by another version of plume (%.*s); cook "
                 "without --resume to start over", ckpt_path, (long long)cf, (int)strcspn(ckey, " "), ckey);
            api->free_string(ckey);
            goto stats;
        }
        if (strcmp(ckey, key)) {
            char diff[512];
            key_diff(key, ckey, diff, sizeof diff);
            FAIL("--resume: checkpoint %s (frame %lld) is of another bake: %s differ%s; cook without --resume to "
                 "start over", ckpt_path, (long long)cf, diff[0] ? diff : "the keys", strchr(diff, ',') ? "" : "s");
            api->free_string(ckey);
            goto stats;
        }
        api->free_string(ckey);
        if (cf >= sc.frame_end) {
            if (!quiet)
                fprintf(stderr, "plume: --resume: frames up to %lld are complete (checkpoint %s); nothing to cook\n",
                        (long long)cf, ckpt_path);
            first = cf + 1;
            rc = 0;
            goto stats;
        }
        if (ck->load(ctx, ckpt_path, key, &cf) != PLUME_OK) {
            FAIL("--resume: %s", api->last_error(ctx));
            goto stats;
        }
        char gaps[1024];
        if (frames_missing(&sc, sc.frame_start, cf, gaps, sizeof gaps)) {
            FAIL("--resume: the bake's frames before the checkpoint (%lld-%lld) are not all there: %s; "
                 "cook again without --resume to make them",
                 (long long)sc.frame_start, (long long)cf, gaps);
            goto stats;
        }
        first = cf + 1;
        if (!quiet)
            fprintf(stderr, "plume: resuming from frame %lld (checkpoint of frame %lld in %s)\n", (long long)first,
                    (long long)cf, ckpt_path);
    }
    if (ci.device_note && ci.device_note[0] && !quiet)
        fprintf(stderr, "plume: %s\n", ci.device_note);

    set_grace();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    /* neither interrupts the other's handler */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a closed terminal or session cancels cleanly too, unless the cook was started to outlive
     * it (nohup: SIGHUP ignored on entry) */
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);

    nframes = sc.frame_end - first + 1;
    if (!quiet)
        fprintf(stderr, "plume: cooking %s, frames %lld-%lld on %s%s -> %s/\n", sc.path, (long long)first,
                (long long)sc.frame_end, ci.device_name, deterministic ? ", deterministic" : "", out_dir);
    double t_start = now_s();
    double frame_dt = 1.0 / sc.fps;
    /* A resumed bake's fields come from the checkpoint: init already ran in the first cook. */
    if (sc.init.count && first == sc.frame_start) {
        plume_cook_info info = {sizeof info, sc.frame_start, (double)sc.frame_start * frame_dt, 0, 0, 1};
        st = api->cook(ctx, sc.init.nodes, sc.init.count, &info);
        if (st == PLUME_OK) /* init's own error, not frame 1's (its work ran queued) */
            st = api->sync(ctx);
        if (st != PLUME_OK && st != PLUME_ERR_CANCELLED)
            snprintf(failure, sizeof failure, "%s: init (before frame %lld): %s", sc.path,
                     (long long)sc.frame_start, api->last_error(ctx));
    }
    for (int64_t f = first; st == PLUME_OK && f <= sc.frame_end; f++) {
        double t0 = now_s();
        int serr;
        uint32_t nsub = sc.substep.count ? substeps_for(api, ctx, &sc, f, &serr) : 1;
        if (sc.substep.count && serr) { /* the velocity's statistic ran the queued work: its error */
            st = interrupted ? PLUME_ERR_CANCELLED : PLUME_ERR_INTERNAL;
            snprintf(failure, sizeof failure, "%s: frame %lld: %s", sc.path, (long long)f, api->last_error(ctx));
            break;
        }
        for (uint32_t s = 0; st == PLUME_OK && s < nsub && sc.substep.count; s++) {
            plume_cook_info info = {sizeof info, f, ((double)f + (double)s / nsub) * frame_dt,
                                    frame_dt / nsub, s, nsub};
            st = api->cook(ctx, sc.substep.nodes, sc.substep.count, &info);
        }
        if (st == PLUME_OK && sc.frame.count) {
            plume_cook_info info = {sizeof info, f, (double)(f + 1) * frame_dt, frame_dt, nsub, nsub};
            st = api->cook(ctx, sc.frame.nodes, sc.frame.count, &info);
        }
        if (st == PLUME_OK)
            st = api->sync(ctx);
        /* An output folder deleted (or swapped) under the cook: the export made a new one, or
         * failed writing into the void, and the frames before are gone. Stop rather than report
         * a complete bake, and say so rather than the write's own complaint. */
        if (st != PLUME_ERR_CANCELLED && !outdir_lock_intact(lock_fd, out_dir)) {
            folder_gone = 1;
            gone_frame = f;
            snprintf(failure, sizeof failure,
                     "%s: frame %lld: the output folder %s was removed or replaced during the cook; the frames "
                     "written before are gone: cook again", sc.path, (long long)f, out_dir);
            st = PLUME_ERR_IO;
            break;
        }
        clock_gettime(CLOCK_REALTIME, &intact_at);
        /* the frame's own error, before a checkpoint's wait below can replace the context's */
        if (st != PLUME_OK && st != PLUME_ERR_CANCELLED) {
            int64_t wf;
            if (written_frame_of(api->last_error(ctx), &wf)) /* an earlier frame's file: it names it */
                snprintf(failure, sizeof failure, "%s: %s", sc.path, api->last_error(ctx));
            else
                snprintf(failure, sizeof failure, "%s: frame %lld: %s", sc.path, (long long)f, api->last_error(ctx));
        }
        if (st != PLUME_OK)
            break;
        done_frames++;
        double ms = (now_s() - t0) * 1e3;
        double voxels = active_voxels(api, ctx, &sc);
        json_t *fj = json_pack("{s:I, s:f, s:i, s:I}", "frame", (json_int_t)f, "ms", ms, "substeps", (int)nsub,
                               "active_voxels", (json_int_t)voxels); /* a count, as in the totals */
        /* The frame's files are in place (export wrote and renamed them): now its checkpoint, also
         * written to a temporary file and renamed, so a stop at any point leaves the last complete
         * frame's checkpoint whole. A failed write is a warning: the frames themselves are fine. */
        if (ck && checkpoints && ck_async) {
            /* The previous frame's file is written while this frame cooked: wait for it, then
             * capture this frame's state and let the plugin write it during the next. */
            finish_checkpoint(api, ck, ctx, ckpt_path, &pending);
            double c0 = now_s();
            if (ck->save_begin(ctx, ckpt_path, f, key) != PLUME_OK) {
                checkpoint_failed(api, ctx, f, fj);
            } else {
                json_object_set_new(fj, "checkpoint_ms", json_real((now_s() - c0) * 1e3));
                pending = (pending_ckpt){f, json_incref(fj)};
            }
        } else if (ck && checkpoints) {
            double c0 = now_s();
            if (ck->save(ctx, ckpt_path, f, key) != PLUME_OK) {
                checkpoint_failed(api, ctx, f, fj);
            } else {
                struct stat cs;
                json_object_set_new(fj, "checkpoint_ms", json_real((now_s() - c0) * 1e3));
                if (stat(ckpt_path, &cs) == 0)
                    json_object_set_new(fj, "checkpoint_bytes", json_integer((json_int_t)cs.st_size));
                checkpoint_written(f);
            }
        }
        json_array_append_new(frames_json, fj);
        double elapsed = now_s() - t_start;
        char eta[32];
        fmt_duration(elapsed / (double)done_frames * (double)(nframes - done_frames), eta, sizeof eta);
        if (tty) {
            snprintf(status_line, sizeof status_line,
                     "frame %lld/%lld (%lld)  %.0f active voxels  %.1f ms/frame  ETA %s",
                     (long long)done_frames, (long long)nframes, (long long)f, voxels, ms, eta);
            fprintf(stderr, "\r\033[K%s", status_line);
            progress_open = 1;
        }
        else if (!quiet)
            fprintf(stderr, "frame %lld/%lld (%lld): %.0f active voxels, %.1f ms, %u substep%s\n",
                    (long long)done_frames, (long long)nframes, (long long)f, voxels, ms, nsub, nsub == 1 ? "" : "s");
    }
    /* A safe point is reached: the grace period is over, and the writes still under way (large
     * frames on a slow disk can take longer than it) finish whole. */
    past_loop = 1;
    alarm(0);
    /* The frames' files are in place before the cook reports or stops (also when cancelled:
     * the frames cooked are complete); a failure here is the last frame's. */
    if (dw && dw->finish(ctx) != PLUME_OK) {
        if (st == PLUME_OK) {
            snprintf(failure, sizeof failure, "%s: %s", sc.path, api->last_error(ctx));
            st = PLUME_ERR_IO;
        } else {
            end_progress_line();
            fprintf(stderr, "plume: also: %s\n", api->last_error(ctx));
            int64_t also_frame; /* a file that failed behind a cancel or another failure */
            if (written_frame_of(api->last_error(ctx), &also_frame))
                done_frames -= drop_frames_from(frames_json, also_frame);
        }
    }
    /* A file written behind the cook that failed: its frame and those after it were counted as
     * done, but are not on disk; the statistics list only the frames whose files are. */
    int64_t bad_frame;
    if (failure[0] && written_frame_of(failure, &bad_frame))
        done_frames -= drop_frames_from(frames_json, bad_frame);
    if (st == PLUME_OK && !outdir_lock_intact(lock_fd, out_dir)) {
        folder_gone = 1;
        gone_frame = first + done_frames - 1;
        snprintf(failure, sizeof failure,
                 "%s: the output folder %s was removed or replaced during the cook; the frames written before "
                 "are gone: cook again", sc.path, out_dir);
        st = PLUME_ERR_IO;
    }
    /* The last complete frame's checkpoint is in place before the cook reports or stops. */
    if (ck && checkpoints && ck_async)
        finish_checkpoint(api, ck, ctx, ckpt_path, &pending);
    /* ...but not in a folder that was removed under the cook: the writer made it again, and a
     * --resume would continue a bake whose earlier frames are gone. */
    char lock_path[4200];
    snprintf(lock_path, sizeof lock_path, "%s/.plume_lock", out_dir);
    if (folder_gone && access(lock_path, F_OK) != 0) /* with a lock there, another cook owns it */
        unlink(ckpt_path);
    end_progress_line();
    if (!folder_gone && (st == PLUME_ERR_CANCELLED || (interrupted && st != PLUME_OK))) {
        /* a status of its own, so a farm tells "stopped on request, resumable" from "broken" */
        rc = EXIT_SIGNALLED + (interrupted ? interrupted : SIGINT);
        if (done_frames)
            FAIL("cancelled after %lld of %lld frames; complete frames are in %s/%s", (long long)done_frames,
                 (long long)nframes, out_dir,
                 ck && checkpoints ? " (the same command with --resume continues the bake)" : "");
        else
            FAIL("cancelled before this run completed a frame; it wrote nothing to %s/%s", out_dir,
                 ck && checkpoints && first > sc.frame_start ? " (its checkpoint is unchanged: --resume continues the bake)"
                                                              : "");
        goto stats;
    }
    if (st != PLUME_OK) {
        if (!failure[0])
            snprintf(failure, sizeof failure, "%s: frame %lld: %s", sc.path, (long long)(first + done_frames),
                     api->last_error(ctx));
        cli_error("cook", "%s", failure);
        goto stats;
    }
    if (ckpt_failures) {
        /* said again at the end, where a farm log is read: the frames are complete, but a resume
         * would not continue from the last of them */
        if (ckpt_any_ok)
            fprintf(stderr, "plume: warning: %d checkpoint%s could not be written; the one in %s is of frame %lld, "
                    "so --resume would continue after frame %lld\n", ckpt_failures, ckpt_failures == 1 ? "" : "s",
                    out_dir, (long long)ckpt_last_ok, (long long)ckpt_last_ok);
        else
            fprintf(stderr, "plume: warning: %d checkpoint%s could not be written; this run left none in %s\n",
                    ckpt_failures, ckpt_failures == 1 ? "" : "s", out_dir);
    }
    if (cfl_capped > 1)
        /* said again at the end, where a farm log is read */
        fprintf(stderr, "plume: warning: %lld frames ran at substeps.max %u, fewer substeps than the CFL "
                "condition asked for (up to %.0f, frame %lld): raise substeps.max\n", (long long)cfl_capped,
                sc.substeps_max, cfl_worst, (long long)cfl_worst_frame);
    if (!quiet) {
        /* the files this run wrote, not whatever else the folder holds (an earlier bake's) */
        int nfiles = 0;
        for (int64_t f = first; f <= sc.frame_end; f++)
            for (uint32_t o = 0; o < sc.noutputs; o++) {
                char path[4200];
                outdir_frame_path(sc.outputs[o], f, path, sizeof path);
                nfiles += access(path, F_OK) == 0;
            }
        fprintf(stderr, "plume: cooked %lld frame%s in %.2f s; output in %s/ (%d file%s)\n", (long long)nframes,
                nframes == 1 ? "" : "s", now_s() - t_start, out_dir, nfiles, nfiles == 1 ? "" : "s");
    }
    rc = 0;
stats:
    /* Every run that got this far leaves its own statistics, also one that failed or found
     * nothing to cook, so a stale file of an earlier run never reads as this run's. */
    if (stats_path) {
        plume_stats s = {.struct_size = sizeof s};
        if (ctx)
            api->get_stats(ctx, &s);
        const char *status = rc == 0 ? "complete"
                             : st == PLUME_ERR_CANCELLED || interrupted ? "cancelled"
                                                                         : "failed";
        json_t *root = json_pack("{s:s, s:s, s:s, s:s, s:b, s:I, s:I, s:O, s:o}", "scene", sc.path, "status",
                                 status, "device", ci.device_name ? ci.device_name : "", "mode",
                                 o.mode == PLUME_MODE_EAGER ? "eager" : "optimized", "deterministic",
                                 deterministic, "first_frame", (json_int_t)first, "last_frame",
                                 (json_int_t)sc.frame_end, "frames", frames_json, "totals", stats_json(&s));
        appended_stats_json(root ? json_object_get(root, "totals") : NULL, &s);
        if (root && failure[0])
            json_object_set_new(root, "error", json_string(failure));
        if (root && checkpoints) /* frames whose checkpoint failed carry checkpoint_error */
            json_object_set_new(root, "checkpoint_failures", json_integer(ckpt_failures));
        if (write_stats(stats_path, root) != 0) {
            cli_error("cook", "cannot write statistics to %s: %s", stats_path, strerror(errno));
            rc = EXIT_WORK;
        }
        json_decref(root);
    }
#undef FAIL
done:
    if (lock_fd >= 0)
        close(lock_fd); /* the lock file stays: removing it could race a cook that just opened it */
    json_decref(frames_json);
    if (ctx)
        api->context_destroy(ctx); /* waits for the frames still being written */
    if (folder_gone) {
        /* the frames queued when the folder went were written into one the writer made again */
        int n = outdir_drop_recreated(out_dir, sc.outputs, sc.noutputs, first, gone_frame, intact_at.tv_sec);
        if (n && !quiet)
            fprintf(stderr, "plume: removed %d frame file%s written into %s after it was removed\n", n,
                    n == 1 ? "" : "s", out_dir);
    }
    host_plugin_unload(&p);
    scene_free(&sc);
    return rc;
}
