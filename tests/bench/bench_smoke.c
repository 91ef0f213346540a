/* plume-bench smoke: the default scene (scenes/smoke_plume.json, 128 voxels per unit) cooked
 * the way a farm job cooks it, then its solver steps one by one.
 *
 * Part 1, whole frames: the `plume` CLI cooks frames 1..N (24; --quick: 3) once per variant,
 * optimized, eager, and optimized with each pass disabled in turn, in this one run, with
 * --stats and --no-checkpoint; each variant is a child process so its peak memory (max RSS from wait4) is its own.
 * The table shows the first frame (mostly compiling), the mean of the others, tasks launched,
 * list generations, and the largest density difference of the last frame against eager.
 *
 * Part 2, per solver step: libplume.so is loaded here, the scene instantiated (its own node
 * parameters, abi/host/scene.c), and the state of the middle frame, read back from part 1's
 * .vdb files, is put into the fields before each repetition; each node of the substep is then
 * cooked alone and synced, timed, optimized and eager. M voxel-updates/s = voxels of the
 * velocity's domain (the fluid the step updates) / the step's time.
 *
 * The cooks compile every kernel (PLUME_KERNEL_CACHE=off unless set).
 * PLUME_BENCH_SMOKE_ROUNDS=N (1-9) repeats part 1 N times and reports the median ms per frame.
 * PLUME_BENCH_DEVICE=cuda runs both parts on the GPU (as `plume-bench gpu smoke` does), with one
 * more variant: optimized with batches launched kernel by kernel on a stream instead of as CUDA
 * graphs. PLUME_BENCH_SMOKE_AGAINST=fusion (or
 * listgen, demote, dse, several with commas) times part 2 against the optimizer with those
 * passes off instead of against eager.
 * The CLI and the plugin come from this build (PLUME_BENCH_CLI, PLUME_BENCH_PLUGIN; the
 * environment variables of the same names override them). PLUME_BENCH_SMOKE_STATE=FILE.vdb
 * runs part 2 alone on that frame. */
#define _GNU_SOURCE
#include "bench.h"

#include "abi/host/scene.h"
#if PLUME_BENCH_SMOKE_REF
#include "tests/bench/smoke_ref.h"
#endif
#include "plume/plume.h"
#include "vdbio/vdbio.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PLUME_BENCH_CLI
#define PLUME_BENCH_CLI "plume"
#endif
#ifndef PLUME_BENCH_PLUGIN
#define PLUME_BENCH_PLUGIN "libplume.so"
#endif
#ifndef PLUME_BENCH_SCENE
#define PLUME_BENCH_SCENE "scenes/smoke_plume.json"
#endif

typedef struct variant {
    const char *name, *mode, *disable;
    int streams; /* on a GPU: batches kernel by kernel on a stream, not as CUDA graphs */
} variant;

/* The last one only on a GPU. */
static const variant variants[] = {
    {"optimized", "optimized", NULL, 0}, {"eager", "eager", NULL, 0},
    {"no listgen", "optimized", "listgen", 0}, {"no demote", "optimized", "demote", 0},
    {"no fusion", "optimized", "fusion", 0}, {"no dse", "optimized", "dse", 0},
    {"opt-stream", "optimized", NULL, 1},
};
enum { NVAR = sizeof variants / sizeof variants[0] };

static int on_gpu(void);

typedef struct run_result {
    int ok;
    double first_ms, mean_ms, wall_s, compile_s;
    double tasks, listgens, fused, voxels_last;
    long max_rss_kb;
    char out[4096];
} run_result;

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && v[0] ? v : def;
}

static int on_gpu(void) { return strcmp(env_or("PLUME_BENCH_DEVICE", "cpu"), "cuda") == 0; }

/* Runs the CLI with argv (streams: PLUME_CUDA_GRAPHS=0 for it); fills peak RSS. Returns its
 * exit status or -1. */
static int run_child(char *const argv[], int streams, long *max_rss_kb)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* every variant compiles its kernels, so the first-frame and compile columns compare
         * (a variant run after another would load most of them from the kernel cache);
         * PLUME_KERNEL_CACHE set by the caller wins */
        setenv("PLUME_KERNEL_CACHE", "off", 0);
        if (streams)
            setenv("PLUME_CUDA_GRAPHS", "0", 1);
        execv(argv[0], argv);
        fprintf(stderr, "plume-bench smoke: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    *max_rss_kb = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v ? json_number_value(v) : NAN;
}

/* The median of n <= 16 values. */
static double median_of(const double *v, int n)
{
    double s[16];
    n = n > 16 ? 16 : n;
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && s[j - 1] > v[i]; j--)
            s[j] = s[j - 1];
        s[j] = v[i];
    }
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static int cook_variant(const variant *v, const char *dir, int frames, run_result *r)
{
    memset(r, 0, sizeof *r);
    char frames_arg[32], stats[4200];
    snprintf(r->out, sizeof r->out, "%s/%s", dir, v->name);
    for (char *p = r->out + strlen(dir); *p; p++)
        if (*p == ' ')
            *p = '_';
    snprintf(frames_arg, sizeof frames_arg, "1-%d", frames);
    snprintf(stats, sizeof stats, "%s/stats.json", r->out);
    const char *argv[20] = {env_or("PLUME_BENCH_CLI", PLUME_BENCH_CLI), "cook",
                            env_or("PLUME_BENCH_SCENE", PLUME_BENCH_SCENE), "--frames", frames_arg,
                            "--out", r->out, "--mode", v->mode, "--stats", stats, "--quiet"};
    int n = 12;
    /* PLUME_BENCH_DEVICE=cuda: the same frames on the GPU (the CLI's --device) */
    argv[n++] = "--device";
    argv[n++] = env_or("PLUME_BENCH_DEVICE", "cpu");
    /* Checkpoints are written by a thread of the plugin while the next frame cooks, where they
     * would slow the frame being timed by as much as the solver's differences: the table times
     * the solver (what checkpoints cost is measured apart, docs/benchmarks.md). */
    argv[n++] = "--no-checkpoint";
    if (v->disable) {
        argv[n++] = "--disable";
        argv[n++] = v->disable;
    }
    argv[n] = NULL;
    fprintf(stderr, "smoke: cooking %d frames, %s ...\n", frames, v->name);
    int rc = run_child((char *const *)argv, v->streams, &r->max_rss_kb);
    if (rc != 0) {
        fprintf(stderr, "plume-bench smoke: %s: plume cook exited with %d\n", v->name, rc);
        return 1;
    }
    json_error_t je;
    json_t *s = json_load_file(stats, 0, &je);
    if (!s) {
        fprintf(stderr, "plume-bench smoke: %s: %s\n", stats, je.text);
        return 1;
    }
    json_t *fr = json_object_get(s, "frames"), *tot = json_object_get(s, "totals");
    size_t nf = json_array_size(fr);
    double rest = 0;
    for (size_t i = 0; i < nf; i++) {
        double ms = num(json_array_get(fr, i), "ms");
        if (i == 0)
            r->first_ms = ms;
        else
            rest += ms;
        r->voxels_last = num(json_array_get(fr, i), "active_voxels");
    }
    r->mean_ms = nf > 1 ? rest / (double)(nf - 1) : r->first_ms;
    r->wall_s = num(tot, "wall_s");
    r->compile_s = num(tot, "compile_s");
    r->tasks = num(tot, "tasks_launched");
    r->listgens = num(tot, "listgens");
    r->fused = num(tot, "fused_tasks");
    r->ok = nf == (size_t)frames;
    json_decref(s);
    return r->ok ? 0 : 1;
}

/* Largest |a - b| of grid `name` between two files with the same leaves; when their leaves
 * differ, the difference of the grids' sums. -1 when a file cannot be read. */
static double max_diff(const char *fa, const char *fb, const char *name)
{
    plm_vdb_error e;
    plm_vdb_file *a = NULL, *b = NULL;
    double worst = -1;
    if (plm_vdb_open(fa, &a, &e) != PLM_VDB_OK || plm_vdb_open(fb, &b, &e) != PLM_VDB_OK) {
        fprintf(stderr, "plume-bench smoke: %s\n", e.message);
        goto done;
    }
    const plm_vdb_grid *ga = NULL, *gb = NULL;
    if (plm_vdb_find_grid(a, name, 0, &ga, &e) != PLM_VDB_OK ||
        plm_vdb_find_grid(b, name, 0, &gb, &e) != PLM_VDB_OK) {
        fprintf(stderr, "plume-bench smoke: %s\n", e.message);
        goto done;
    }
    plm_vdb_grid_info ia, ib;
    plm_vdb_grid_get_info(ga, &ia, &e);
    plm_vdb_grid_get_info(gb, &ib, &e);
    /* leaf by leaf where both files hold the same leaves (same domain, same tree order);
     * otherwise the difference of the total mass */
    worst = 0;
    float va[512], vb[512];
    int32_t oa[3], ob[3];
    int same = ia.leaf_count == ib.leaf_count;
    for (uint64_t i = 0; i < ia.leaf_count && same; i++) {
        plm_vdb_read_leaf(ga, i, oa, va, NULL, &e);
        plm_vdb_read_leaf(gb, i, ob, vb, NULL, &e);
        same = oa[0] == ob[0] && oa[1] == ob[1] && oa[2] == ob[2];
        for (int k = 0; k < 512 && same; k++)
            worst = fmax(worst, fabs((double)va[k] - (double)vb[k]));
    }
    if (!same) {
        double sa = 0, sb = 0;
        for (uint64_t i = 0; i < ia.leaf_count; i++) {
            plm_vdb_read_leaf(ga, i, oa, va, NULL, &e);
            for (int k = 0; k < 512; k++)
                sa += va[k];
        }
        for (uint64_t i = 0; i < ib.leaf_count; i++) {
            plm_vdb_read_leaf(gb, i, ob, vb, NULL, &e);
            for (int k = 0; k < 512; k++)
                sb += vb[k];
        }
        worst = fabs(sa - sb);
    }
done:
    plm_vdb_close(a);
    plm_vdb_close(b);
    return worst;
}

static int bench_advect_ref(bench_ctx *bc, double domain_voxels, double advect_ms, int reps);

/* ---- part 2: solver steps one at a time, through the ABI ---------------------------------- */

typedef struct step_ctx {
    const plume_plugin *api;
    plume_context *ctx;
    scene sc;
    plume_node *import[3];
} step_ctx;

static const char *const state_grids[3] = {"density", "temperature", "vel"};

static int step_open(step_ctx *s, void *dl, plume_exec_mode mode, uint32_t disabled,
                     const char *state_vdb, const char *out_dir)
{
    memset(s, 0, sizeof *s);
    plume_plugin_entry_fn entry = (plume_plugin_entry_fn)dlsym(dl, PLUME_PLUGIN_ENTRY_SYMBOL);
    s->api = entry ? entry(PLUME_ABI_MAJOR, PLUME_ABI_MINOR) : NULL;
    if (!s->api || s->api->init() != PLUME_OK) {
        fprintf(stderr, "plume-bench smoke: cannot initialise the plugin\n");
        return 1;
    }
    plume_context_options o = {0};
    o.struct_size = sizeof o;
    o.device = strcmp(env_or("PLUME_BENCH_DEVICE", "cpu"), "cuda") ? PLUME_DEVICE_CPU
                                                                 : PLUME_DEVICE_CUDA;
    o.mode = mode;
    o.disabled_passes = disabled;
    if (s->api->context_create(&o, NULL, &s->ctx) != PLUME_OK) {
        fprintf(stderr, "plume-bench smoke: context_create failed\n");
        return 1;
    }
    char err[1024];
    if (scene_load(&s->sc, env_or("PLUME_BENCH_SCENE", PLUME_BENCH_SCENE), err, sizeof err) ||
        scene_instantiate(&s->sc, s->api, s->ctx, out_dir, err, sizeof err)) {
        fprintf(stderr, "plume-bench smoke: %s\n", err);
        return 1;
    }
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "bench_state_%s", state_grids[i]);
        if (s->api->node_create(s->ctx, "org.plume.vdb.import", name, &s->import[i]) != PLUME_OK ||
            s->api->node_set_string(s->import[i], "file", state_vdb) != PLUME_OK ||
            s->api->node_set_string(s->import[i], "grid", state_grids[i]) != PLUME_OK ||
            s->api->node_bind(s->import[i], i == 2 ? "vector_target" : "target", state_grids[i]) !=
                PLUME_OK) {
            fprintf(stderr, "plume-bench smoke: %s\n", s->api->last_error(s->ctx));
            return 1;
        }
    }
    return 0;
}

static void step_close(step_ctx *s)
{
    if (s->ctx)
        s->api->context_destroy(s->ctx);
    scene_free(&s->sc);
    if (s->api)
        s->api->deinit();
}

static int cook1(step_ctx *s, plume_node *n, double dt)
{
    plume_cook_info info = {sizeof info, 12, 0.5, dt, 0, 1};
    if (s->api->cook(s->ctx, &n, 1, &info) != PLUME_OK || s->api->sync(s->ctx) != PLUME_OK) {
        fprintf(stderr, "plume-bench smoke: %s\n", s->api->last_error(s->ctx));
        return 1;
    }
    return 0;
}

/* Seconds of one cook of node n, with the state reloaded first; rep < 0 is a warm-up. */
static int time_rep(step_ctx *s, plume_node *n, double dt, int rep, double *sec)
{
    for (int i = 0; i < 3; i++)
        if (cook1(s, s->import[i], dt))
            return 1;
    plume_stats a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
    s->api->get_stats(s->ctx, &a);
    double t0 = bench_now();
    if (cook1(s, n, dt))
        return 1;
    *sec = bench_now() - t0;
    s->api->get_stats(s->ctx, &b);
    if (getenv("PLUME_BENCH_SMOKE_DEBUG"))
        fprintf(stderr, "rep %d: %.2f ms (tasks running %.2f ms, optimizer %.2f ms), compiled %llu "
                        "tasks (%.1f ms), launched %llu, listgens %llu\n",
                rep, *sec * 1e3, (b.backend_s - a.backend_s) * 1e3, (b.optimizer_s - a.optimizer_s) * 1e3,
                (unsigned long long)(b.tasks_compiled - a.tasks_compiled), (b.compile_s - a.compile_s) * 1e3,
                (unsigned long long)(b.tasks_launched - a.tasks_launched),
                (unsigned long long)(b.listgens - a.listgens));
    return 0;
}

/* Part 2. Both modes' contexts stay open and their repetitions of a step alternate (the order
 * swapped every repetition): the machine drifts between two speeds over seconds, and modes
 * timed one after the other measured the drift (the optimized advection read 122 and 67 ms in
 * two runs of one build). Each mode reports its median; the step's speed-up is the median over
 * repetitions of eager's time over optimized's, each pair run back to back. */
static int bench_steps(bench_ctx *bc, const char *state_vdb, const char *out_dir, int reps)
{
    const char *lib = env_or("PLUME_BENCH_PLUGIN", PLUME_BENCH_PLUGIN);
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "plume-bench smoke: dlopen %s: %s\n", lib, dlerror());
        return 1;
    }
    reps = reps > 16 ? 16 : reps < 1 ? 1 : reps;
    printf("\nsolver steps alone on the state of %s (median of %d, the modes alternating)\n",
           state_vdb, reps);
    printf("%-10s %-10s %12s %10s %14s %10s\n", "step", "mode", "domain vox", "ms", "M vox-upd/s",
           "speed-up");
    step_ctx s[2];
    memset(s, 0, sizeof s);
    int rc = 0, opened = 0;
    /* PLUME_BENCH_SMOKE_AGAINST=fusion,...: the second context is the optimizer with those
     * passes off instead of eager, to measure what a pass does to each step */
    const char *against = getenv("PLUME_BENCH_SMOKE_AGAINST");
    uint32_t off = 0;
    if (against && against[0]) {
        static const char *const pass[4] = {"listgen", "demote", "fusion", "dse"};
        for (int i = 0; i < 4; i++)
            if (strstr(against, pass[i]))
                off |= 1u << i;
        if (!off) {
            fprintf(stderr, "plume-bench smoke: PLUME_BENCH_SMOKE_AGAINST=%s names no pass "
                            "(listgen, demote, fusion, dse)\n", against);
            dlclose(dl);
            return 1;
        }
    }
    const char *second = off ? "passes off" : "eager";
    for (int m = 0; m < 2 && !rc; m++, opened++)
        rc = step_open(&s[m], dl, m == 0 || off ? PLUME_MODE_OPTIMIZED : PLUME_MODE_EAGER,
                       m == 0 ? 0 : off, state_vdb, out_dir);
    double dt = 1.0 / (s[0].sc.fps > 0 ? s[0].sc.fps : 24) / 2;
    double advect_ms = 0, advect_vox = 0; /* the optimized advect step, for the C reference */
    for (uint32_t k = 0; !rc && k < s[0].sc.substep.count && k < s[1].sc.substep.count; k++) {
        double t[2][16], ratio[16];
        for (int r = -1; r < reps && !rc; r++)
            for (int j = 0; j < 2 && !rc; j++) {
                int m = (j + r + 1) % 2;
                double sec = 0;
                rc = time_rep(&s[m], s[m].sc.substep.nodes[k], dt, r, &sec);
                if (r >= 0)
                    t[m][r] = sec;
            }
        if (rc)
            break;
        for (int r = 0; r < reps; r++)
            ratio[r] = t[1][r] / (t[0][r] > 0 ? t[0][r] : 1e-12);
        double speedup = median_of(ratio, reps);
        const char *name = NULL;
        plume_node *n = s[0].sc.substep.nodes[k];
        for (uint32_t j = 0; j < s[0].sc.nnodes; j++)
            if (s[0].sc.nodes[j] == n)
                name = json_string_value(json_object_get(
                    json_array_get(json_object_get((json_t *)s[0].sc.json, "nodes"), j), "name"));
        for (int m = 0; m < 2; m++) {
            double vox = 0, sec = median_of(t[m], reps);
            s[m].api->field_stat(s[m].ctx, "vel", PLUME_STAT_ACTIVE_VOXELS, &vox);
            double mvu = vox / sec / 1e6;
            if (m == 0 && name && strcmp(name, "advect") == 0) {
                advect_ms = sec * 1e3;
                advect_vox = vox;
            }
            printf("%-10s %-10s %12.0f %10.2f %14.1f", name ? name : "?",
                   m == 0 ? "optimized" : second, vox, sec * 1e3, mvu);
            if (m == 0)
                printf(" %9.2fx", speedup);
            printf("\n");
            json_t *row = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f}", "suite", "smoke", "case",
                                    name ? name : "?", "mode", m == 0 ? "optimized" : second,
                                    "domain_voxels", vox, "ms", sec * 1e3,
                                    "mvoxel_updates_per_s", mvu);
            if (m == 0)
                json_object_set_new(row, "speedup_paired", json_real(speedup));
            json_array_append_new(bc->cases, row);
        }
    }
    for (int m = 0; m < opened; m++)
        step_close(&s[m]);
    dlclose(dl);
    if (!rc && !on_gpu() && advect_ms > 0)
        rc = bench_advect_ref(bc, advect_vox, advect_ms, reps);
    return rc;
}

/* The advection step in plain C over a dense box of about as many voxels as the solver's
 * domain (smoke_ref.h), vectorized and not, on as many threads as the cooks use: how far the
 * generated code is from plain C doing the same arithmetic, and what the step could at best
 * reach on this machine. */
static int bench_advect_ref(bench_ctx *bc, double domain_voxels, double advect_ms, int reps)
{
#if PLUME_BENCH_SMOKE_REF
    int n = (int)lround(cbrt(domain_voxels > 0 ? domain_voxels : 90112));
    n = n < 16 ? 16 : n > 128 ? 128 : n;
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    int used = (int)threads;
    for (int v = 0; v < 2; v++) {
        smoke_ref_result r;
        int rc = v == 0 ? smoke_ref_advect_vec(n, (int)threads, reps, &r)
                        : smoke_ref_advect_scalar(n, (int)threads, reps, &r);
        if (rc != 0) {
            fprintf(stderr, "plume-bench smoke: the C reference of the advection failed: %s\n",
                    strerror(errno));
            return 1;
        }
        if (!r.check_ok) {
            fprintf(stderr, "plume-bench smoke: the C reference of the advection moved a uniform "
                            "flow wrongly (largest error %g); its timing is not reported\n",
                    r.check_error);
            return 1;
        }
        double mvu = r.voxels / r.seconds / 1e6;
        double vs = advect_ms > 0 ? advect_ms / (r.seconds * 1e3 / r.voxels * domain_voxels) : 0;
        if (r.threads != threads)
            fprintf(stderr, "plume-bench smoke: the C reference ran on %d of %ld threads\n",
                    r.threads, threads);
        used = r.threads;
        const char *mode = v == 0 ? "C vector" : "C scalar";
        printf("%-10s %-10s %12.0f %10.2f %14.1f %9.2fx\n", "advect", mode, r.voxels,
               r.seconds * 1e3, mvu, vs);
        json_array_append_new(
            bc->cases, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:i, s:f}", "suite", "smoke",
                                 "case", "advect", "mode", v == 0 ? "c_reference_vector"
                                                                   : "c_reference_scalar",
                                 "domain_voxels", r.voxels, "ms", r.seconds * 1e3,
                                 "mvoxel_updates_per_s", mvu, "threads", r.threads,
                                 "optimized_time_per_voxel_ratio", vs));
    }
    printf("(C vector / C scalar: the advection step in plain C over a dense %d^3 box, %d "
           "threads, clang -O3 -march=native with and without vectors, the median of %d; "
           "speed-up = the optimized step's time per voxel, its node's host work included, "
           "over C's)\n", n, used, reps);
#else
    (void)bc;
    (void)domain_voxels;
    (void)advect_ms;
    (void)reps;
    printf("(the C reference of the advection step was not built: clang-16 was not found)\n");
#endif
    return 0;
}

static int bench_smoke(bench_ctx *bc)
{
    int frames = bc->quick ? 3 : 24;
    const char *only_state = getenv("PLUME_BENCH_SMOKE_STATE");
    if (only_state && only_state[0]) /* part 2 alone, on a frame cooked before */
        return bench_steps(bc, only_state, "/tmp", bc->quick ? 3 : 7);
    char tmpl[] = "/tmp/plume-bench-smoke-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir) {
        fprintf(stderr, "plume-bench smoke: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    /* PLUME_BENCH_SMOKE_ROUNDS=N cooks every variant N times, each round in a rotated order;
     * ms per frame is then the median of the rounds. One machine's memory speed can differ by a
     * third from one process to the next (docs/benchmarks.md), and a variant that always ran
     * first or last would carry that drift alone. */
    int rounds = atoi(env_or("PLUME_BENCH_SMOKE_ROUNDS", "1"));
    rounds = rounds < 1 ? 1 : rounds > 9 ? 9 : rounds;
    run_result r[NVAR];
    double per_round[NVAR][9];
    int rc = 0;
    int nvar = on_gpu() ? NVAR : NVAR - 1;
    for (int k = 0; k < rounds && !rc; k++)
        for (int j = 0; j < nvar && !rc; j++) {
            int i = (j + k) % nvar;
            run_result one;
            rc = cook_variant(&variants[i], dir, frames, &one);
            per_round[i][k] = one.mean_ms;
            if (k == 0 || one.max_rss_kb > r[i].max_rss_kb)
                r[i] = one;
        }
    for (int i = 0; i < nvar && !rc; i++)
        r[i].mean_ms = median_of(per_round[i], rounds);
    if (rc) {
        fprintf(stderr, "plume-bench smoke: outputs kept in %s\n", dir);
        return 1;
    }
    printf("smoke: %s, frames 1-%d, device %s, %d round%s (ms/frame: the median)\n",
           env_or("PLUME_BENCH_SCENE", PLUME_BENCH_SCENE), frames, env_or("PLUME_BENCH_DEVICE", "cpu"),
           rounds, rounds > 1 ? "s" : "");
    printf("%-11s %10s %12s %9s %9s %9s %8s %7s %9s %11s\n", "variant", "frame1 ms", "ms/frame 2+",
           "wall s", "compile", "tasks", "listgen", "fused", "peak MiB", "max|d-eager|");
    char last_eager[4300], last[4300];
    snprintf(last_eager, sizeof last_eager, "%s/smoke_%04d.vdb", r[1].out, frames);
    for (int i = 0; i < nvar; i++) {
        snprintf(last, sizeof last, "%s/smoke_%04d.vdb", r[i].out, frames);
        double d = i == 1 ? 0 : max_diff(last, last_eager, "density");
        printf("%-11s %10.1f %12.1f %9.2f %9.2f %9.0f %8.0f %7.0f %9.1f %11.2e\n", variants[i].name,
               r[i].first_ms, r[i].mean_ms, r[i].wall_s, r[i].compile_s, r[i].tasks, r[i].listgens,
               r[i].fused, r[i].max_rss_kb / 1024.0, d);
        json_t *each = json_array();
        for (int k = 0; k < rounds; k++)
            json_array_append_new(each, json_real(per_round[i][k]));
        if (rounds > 1) {
            printf("%-11s rounds:", "");
            for (int k = 0; k < rounds; k++)
                printf(" %.1f", per_round[i][k]);
            printf("\n");
        }
        json_array_append_new(
            bc->cases,
            json_pack("{s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "suite",
                      "smoke", "case", variants[i].name, "frames", frames, "first_frame_ms",
                      r[i].first_ms, "ms_per_frame", r[i].mean_ms, "wall_s", r[i].wall_s,
                      "compile_s", r[i].compile_s, "tasks_launched", r[i].tasks, "listgens",
                      r[i].listgens, "fused_tasks", r[i].fused, "active_voxels_last",
                      r[i].voxels_last, "peak_rss_mib", r[i].max_rss_kb / 1024.0,
                      "max_density_diff_vs_eager", d));
        json_object_set_new(json_array_get(bc->cases, json_array_size(bc->cases) - 1),
                            "ms_per_frame_rounds", each);
    }
    printf("optimized vs eager: %.2fx less time per frame (frames 2+), %.2fx fewer tasks, "
           "%.1fx fewer list generations\n",
           r[1].mean_ms / r[0].mean_ms, r[1].tasks / r[0].tasks,
           r[0].listgens > 0 ? r[1].listgens / r[0].listgens : INFINITY);
    if (nvar == NVAR)
        printf("CUDA graphs vs stream launches (optimized): %.2fx less time per frame\n",
               r[NVAR - 1].mean_ms / r[0].mean_ms);
    char state[4300];
    snprintf(state, sizeof state, "%s/smoke_%04d.vdb", r[0].out, frames / 2 > 0 ? frames / 2 : 1);
    char steps_out[4300];
    snprintf(steps_out, sizeof steps_out, "%s/steps", dir);
    rc = bench_steps(bc, state, steps_out, bc->quick ? 3 : 7);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!rc && system(cmd) != 0)
        fprintf(stderr, "plume-bench smoke: could not remove %s\n", dir);
    return rc;
}

BENCH_SUITE("smoke",
            "the default scene: frames optimized vs eager and with each pass off; solver steps "
            "alone in M voxel-updates/s",
            bench_smoke)
