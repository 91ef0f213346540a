/* Shared driver of the state-flow-graph benchmarks (micro, maccormack, mgpcg): a case is a
 * program of kernels launched over fields; it runs once eager, once optimized, and once
 * optimized with each pass disabled, each on a context of its own, and every run's fields are
 * compared with the eager run's (bitwise, or within the case's tolerance where fusion reorders
 * float atomics). Each repetition ends with a flush. Times exclude compilation: two
 * repetitions run (and compile) first, then the counters reset and the timed ones run. Main thread only. */
#ifndef PLUME_BENCH_SFG_H
#define PLUME_BENCH_SFG_H

#include "bench.h"
#include "engine/engine.h"
#include "engine/kernel.h"
#include "engine/sfg/sfg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SFGB_MAX_FIELDS 16

typedef struct sfgb_run {
    eng_context *ctx;
    eng_program *prog;
    eng_field *f[SFGB_MAX_FIELDS];
    int quick;
    void *user;
    int index; /* the mode's row in the mode table: cases with state of their own keep it per mode */
    int rep;   /* repetitions run so far, warm-up excluded */
} sfgb_run;

typedef struct sfgb_case {
    const char *name;
    /* declare fields, compile, write initial data; 0 or 1 (message printed) */
    int (*setup)(sfgb_run *r);
    /* one repetition: launches only (the driver syncs); 0 or 1 */
    int (*step)(sfgb_run *r, int rep);
    int reps, quick_reps;
    double tol;            /* 0: bitwise */
    int nfields_checked;   /* fields f[0..n) compared between modes */
} sfgb_case;

typedef struct sfgb_result {
    double ms, ms_min, ms_max; /* median, fastest and slowest timed block */
    eng_stats st;
    double sum[SFGB_MAX_FIELDS];
    uint64_t hash[SFGB_MAX_FIELDS];
    uint64_t count[SFGB_MAX_FIELDS];
} sfgb_result;

static inline int sfgb_fail(sfgb_run *r, const char *what)
{
    fprintf(stderr, "bench: %s: %s\n", what, r->ctx ? eng_error(r->ctx) : "no context");
    return 1;
}

static inline eng_field *sfgb_field(sfgb_run *r, int slot, const char *name, const char *layout,
                                    eng_type type, float bg, double voxel)
{
    eng_field_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.type = type;
    d.layout = layout;
    d.voxel_size = voxel > 0 ? voxel : 1.0;
    d.background[0] = d.background[1] = d.background[2] = bg;
    eng_field *f = NULL;
    if (eng_field_declare(r->ctx, &d, &f) != ENG_OK) {
        sfgb_fail(r, name);
        return NULL;
    }
    r->f[slot] = f;
    return f;
}

/* Fields slot0 .. slot0 + n - 1 placed in one tree, as the Taichi benchmarks place fields
 * together in one SNode, each field's block one run (the fastest optimized layout measured).
 * PLUME_BENCH_TREES=interleaved interleaves them per voxel as Taichi's place() stores a struct
 * per cell (eager slows more than optimized: a higher ratio, a slower optimized run);
 * PLUME_BENCH_TREES=separate gives each a tree of its own. types NULL: all f32. 0, or 1 with
 * the message printed. */
static inline int sfgb_group(sfgb_run *r, int slot0, const char *const *names, int n,
                             const char *layout, const eng_type *types)
{
    const char *how = getenv("PLUME_BENCH_TREES");
    if (how && !strcmp(how, "separate")) {
        for (int i = 0; i < n; i++)
            if (!sfgb_field(r, slot0 + i, names[i], layout, types ? types[i] : ENG_F32, 0, 1))
                return 1;
        return 0;
    }
    eng_field_desc d[SFGB_MAX_FIELDS];
    if (n > SFGB_MAX_FIELDS || slot0 + n > SFGB_MAX_FIELDS)
        return sfgb_fail(r, "too many fields in a group");
    memset(d, 0, sizeof d);
    for (int i = 0; i < n; i++) {
        d[i].name = names[i];
        d[i].type = types ? types[i] : ENG_F32;
        d[i].layout = layout;
        d[i].voxel_size = 1.0;
    }
    int rc = how && !strcmp(how, "interleaved")
                 ? eng_field_declare_interleaved(r->ctx, d, n, &r->f[slot0])
                 : eng_field_declare_group(r->ctx, d, n, &r->f[slot0]);
    if (rc != ENG_OK)
        return sfgb_fail(r, names[0]);
    return 0;
}

static inline int sfgb_compile(sfgb_run *r, const char *src)
{
    if (eng_program_compile(r->ctx, "bench.pk", src, strlen(src), &r->prog) != ENG_OK)
        return sfgb_fail(r, "compile");
    return 0;
}

/* Launches kernel `name` with arguments given as a string: "f3" is field slot 3, anything
 * else a number ("0.5", "-2"); vectors as "v1,2,3". */
static inline int sfgb_launch(sfgb_run *r, const char *name, const char *spec)
{
    eng_kernel *k = eng_program_find(r->prog, name);
    if (!k) {
        fprintf(stderr, "bench: no kernel %s\n", name);
        return 1;
    }
    eng_arg args[16];
    uint32_t n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && n < 16;
         tok = strtok_r(NULL, " ", &save), n++) {
        memset(&args[n], 0, sizeof args[n]);
        if (tok[0] == 'f') {
            args[n].field = r->f[atoi(tok + 1)];
        } else if (tok[0] == 'v') {
            char *p = tok + 1;
            for (int c = 0; c < 3; c++) {
                args[n].f[c] = strtod(p, &p);
                args[n].i[c] = (int64_t)args[n].f[c];
                if (*p == ',')
                    p++;
            }
        } else {
            args[n].f[0] = strtod(tok, NULL);
            args[n].i[0] = (int64_t)args[n].f[0];
        }
    }
    if (eng_launch(r->ctx, k, args, n) != ENG_OK)
        return sfgb_fail(r, name);
    return 0;
}

/* Sum, FNV-1a hash of the bits, and count of the active values of a field (3-D fields by
 * block; others voxel by voxel over [0, extent) per axis of their dimension). */
static inline void sfgb_digest(eng_field *f, int dim, int extent, double *sum, uint64_t *hash,
                               uint64_t *count)
{
    uint64_t h = 1469598103934665603ull, n = 0;
    double s = 0;
    int comps = eng_field_components(f);
    if (dim == 3) {
        uint64_t nb = eng_field_block_count(f);
        int32_t *o = malloc((nb ? nb : 1) * 3 * sizeof *o);
        float *v = malloc(512 * 3 * sizeof *v);
        uint64_t m[8];
        nb = o ? eng_field_block_origins(f, o, nb) : 0;
        for (uint64_t b = 0; v && b < nb; b++) {
            eng_field_read_block(f, &o[3 * b], v, m);
            for (int i = 0; i < 512 * comps; i++) {
                uint32_t u;
                memcpy(&u, &v[i], 4);
                h = (h ^ u) * 1099511628211ull;
                s += v[i];
                n++;
            }
        }
        free(o);
        free(v);
    } else {
        int ex = dim >= 1 ? extent : 1, ey = dim >= 2 ? extent : 1, ez = dim >= 3 ? extent : 1;
        for (int x = 0; x < ex; x++)
            for (int y = 0; y < ey; y++)
                for (int z = 0; z < ez; z++)
                    for (int c = 0; c < comps; c++) {
                        int32_t ijk[3] = {x, y, z};
                        float val = eng_field_read(f, ijk, c);
                        uint32_t u;
                        memcpy(&u, &val, 4);
                        h = (h ^ u) * 1099511628211ull;
                        s += val;
                        n++;
                    }
    }
    *sum = s;
    *hash = h;
    *count = n;
}

/* Per checked field: its dimension and extent for sfgb_digest (set by setup). */
typedef struct sfgb_check {
    int dim[SFGB_MAX_FIELDS];
    int extent[SFGB_MAX_FIELDS];
} sfgb_check;

/* Timed blocks per mode (the median is reported); odd, so the median is one block's time.
 * PLUME_BENCH_BLOCKS=N (1-31) sets another count. */
#define SFGB_BLOCKS 7
#define SFGB_MAX_BLOCKS 31

static inline int sfgb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double sfgb_median(const double *v, int n)
{
    double sorted[SFGB_MAX_BLOCKS];
    memcpy(sorted, v, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, sfgb_cmp_double);
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* Opens mode `index`'s context, sets the case up and runs the warm-up: two repetitions, which
 * compile every task this mode makes (the second may differ from the first: lists made by the
 * first are still valid). 0, or 1 with a message. */
static inline int sfgb_open_mode(const sfgb_case *c, int quick, int index, int eager,
                                 uint32_t disabled, int graphs, sfgb_check *chk, sfgb_run *r)
{
    memset(r, 0, sizeof *r);
    r->quick = quick;
    r->user = chk;
    r->index = index;
    eng_options o = {0, 0};
    r->ctx = eng_create(&o);
    if (!r->ctx)
        return 1;
    eng_mode m = {eager, disabled, 0, 0};
    int rc = eng_set_mode(r->ctx, &m) != ENG_OK;
    if (bench_gpu && !rc) {
        rc = eng_use_cuda(r->ctx) != ENG_OK && sfgb_fail(r, "cuda");
        eng_set_cuda_graphs(r->ctx, graphs);
    }
    rc = rc || c->setup(r);
    for (int w = 0; w < 2 && !rc; w++)
        rc = c->step(r, 0) || (eng_flush(r->ctx) != ENG_OK && sfgb_fail(r, "flush"));
    return rc || (eng_sync(r->ctx) != ENG_OK && sfgb_fail(r, "sync"));
}

/* One timed block of `reps` repetitions, each one flush (as a frame or a solver iteration
 * would be), ended by a sync; its wall time in *ms and its counters in *st. */
static inline int sfgb_block(const sfgb_case *c, sfgb_run *r, int reps, double *ms, eng_stats *st)
{
    int rc = 0;
    eng_reset_stats(r->ctx);
    double t0 = bench_now();
    for (int i = 0; i < reps && !rc; i++)
        rc = c->step(r, ++r->rep) || (eng_flush(r->ctx) != ENG_OK && sfgb_fail(r, "flush"));
    if (!rc && eng_sync(r->ctx) != ENG_OK)
        rc = sfgb_fail(r, "sync");
    *ms = (bench_now() - t0) * 1e3;
    eng_get_stats(r->ctx, st);
    return rc;
}

typedef struct sfgb_mode {
    const char *name;
    int eager;
    uint32_t disabled;
    int graphs; /* on a GPU: batches as CUDA graphs (1) or kernel by kernel on a stream (0) */
} sfgb_mode;

static const sfgb_mode sfgb_cpu_modes[] = {
    {"eager", 1, 0, 1},
    {"optimized", 0, 0, 1},
    {"no-listgen", 0, SFG_PASS_LISTGEN, 1},
    {"no-demote", 0, SFG_PASS_DEMOTE, 1},
    {"no-fusion", 0, SFG_PASS_FUSION, 1},
    {"no-dse", 0, SFG_PASS_DSE, 1},
};
/* On a GPU (plume-bench gpu): eager and optimized, each with CUDA graphs and on a stream. */
static const sfgb_mode sfgb_gpu_modes[] = {
    {"eager", 1, 0, 1},
    {"optimized", 0, 0, 1},
    {"opt-stream", 0, 0, 0},
    {"eager-stream", 1, 0, 0},
};
/* PLUME_BENCH_GPU_TWICE=1: the optimized modes once more, each in a context of its own, which
 * tells a mode that computes other bits from a run that does (MacCormack's opt-stream on the
 * H200 of stop 33: a stream launch's doing, or chance?). */
static const sfgb_mode sfgb_gpu_modes_twice[] = {
    {"eager", 1, 0, 1},      {"optimized", 0, 0, 1},   {"opt-stream", 0, 0, 0},
    {"eager-stream", 1, 0, 0}, {"optimized-2", 0, 0, 1}, {"opt-stream-2", 0, 0, 0},
};
#define SFGB_NMODES 6

/* The modes sfgb_case_run runs, in order: the CPU's, or the GPU's under plume-bench gpu. */
static inline const sfgb_mode *sfgb_mode_table(int *n)
{
    const char *twice = getenv("PLUME_BENCH_GPU_TWICE");
    if (bench_gpu && twice && twice[0] == '1') {
        *n = 6;
        return sfgb_gpu_modes_twice;
    }
    *n = bench_gpu ? 4 : 6;
    return bench_gpu ? sfgb_gpu_modes : sfgb_cpu_modes;
}

/* Runs every mode of case c, prints its rows, appends its JSON, and returns 0, or 1 when a run
 * failed or a mode's fields differ from eager's. *task_ratio and *time_ratio get eager over
 * optimized.
 *
 * The modes' contexts live side by side and their timed blocks interleave: block b of every
 * mode runs before block b + 1 of any, in an order rotated block by block. This machine's
 * memory speed drifts by up to 2x over seconds (docs/benchmarks.md), so modes timed one after
 * the other measured the drift as much as the optimizer. A mode's time is the median of its
 * blocks; its speed-up is the median over blocks of eager's block over its own, each pair run
 * within a second or so of each other. */
static inline int sfgb_case_run(const sfgb_case *c, bench_ctx *bctx, double *task_ratio,
                                double *time_ratio)
{
    static sfgb_result res[SFGB_NMODES];
    static sfgb_run runs[SFGB_NMODES];
    static double ms[SFGB_NMODES][SFGB_MAX_BLOCKS];
    double speedup[SFGB_NMODES];
    sfgb_check chk;
    memset(&chk, 0, sizeof chk);
    memset(res, 0, sizeof res);
    int fail = 0, rc = 0, opened = 0;
    json_t *modes = json_array();
    int nmodes;
    const sfgb_mode *sfgb_modes = sfgb_mode_table(&nmodes);
    const char *bs = getenv("PLUME_BENCH_BLOCKS");
    int blocks = bs ? atoi(bs) : SFGB_BLOCKS;
    blocks = bctx->quick ? 1 : blocks < 1 ? 1 : blocks > SFGB_MAX_BLOCKS ? SFGB_MAX_BLOCKS : blocks;
    int reps = bctx->quick ? c->quick_reps : c->reps;
    /* Where a case spends its time, as it goes (on a GPU, or with PLUME_BENCH_PROGRESS=1): the
     * table prints only once every mode has run every block, so a run cut short by a time
     * limit said nothing of where it was (the H200 runs of stops 29 and 33, mgpcg). */
    const char *pe = getenv("PLUME_BENCH_PROGRESS");
    int progress = bench_gpu || (pe && pe[0] == '1');
    double t_case = bench_now();
    /* eager opens first: setup functions may count their calls */
    for (int m = 0; m < nmodes && !rc; m++, opened++) {
        double t0 = bench_now();
        if ((rc = sfgb_open_mode(c, bctx->quick, m, sfgb_modes[m].eager, sfgb_modes[m].disabled,
                                 sfgb_modes[m].graphs, &chk, &runs[m])))
            fprintf(stderr, "bench: case %s failed in mode %s\n", c->name, sfgb_modes[m].name);
        else if (progress)
            fprintf(stderr, "bench: %s: mode %s set up and warmed up in %.1f s\n", c->name,
                    sfgb_modes[m].name, bench_now() - t0);
    }
    int done = 0;
    for (int b = 0; b < blocks && !rc; b++, done++) {
        for (int j = 0; j < nmodes && !rc; j++) {
            int m = (j + b) % nmodes;
            if ((rc = sfgb_block(c, &runs[m], reps, &ms[m][b], &res[m].st)))
                fprintf(stderr, "bench: case %s failed in mode %s\n", c->name,
                        sfgb_modes[m].name);
        }
        if (progress && !rc) {
            fprintf(stderr, "bench: %s: block %d of %d (ms:", c->name, b + 1, blocks);
            for (int m = 0; m < nmodes; m++)
                fprintf(stderr, " %s %.1f", sfgb_modes[m].name, ms[m][b]);
            fprintf(stderr, "), %.1f s into the case\n", bench_now() - t_case);
        }
        /* long cases (blocks of seconds) stop at 3 blocks unless told otherwise */
        if (!bs && b == 2 && ms[0][0] + ms[0][1] + ms[0][2] > 6000)
            blocks = 3;
    }
    for (int m = 0; m < opened; m++) {
        if (!rc)
            for (int i = 0; i < c->nfields_checked; i++)
                sfgb_digest(runs[m].f[i], chk.dim[i], chk.extent[i], &res[m].sum[i],
                            &res[m].hash[i], &res[m].count[i]);
        eng_destroy(runs[m].ctx);
    }
    if (rc) {
        json_decref(modes);
        return 1;
    }
    for (int m = 0; m < nmodes; m++) {
        double ratio[SFGB_MAX_BLOCKS];
        for (int b = 0; b < done; b++)
            ratio[b] = ms[0][b] / (ms[m][b] > 0 ? ms[m][b] : 1e-9);
        res[m].ms = sfgb_median(ms[m], done);
        speedup[m] = sfgb_median(ratio, done);
        res[m].ms_min = res[m].ms_max = ms[m][0];
        for (int b = 1; b < done; b++) {
            res[m].ms_min = ms[m][b] < res[m].ms_min ? ms[m][b] : res[m].ms_min;
            res[m].ms_max = ms[m][b] > res[m].ms_max ? ms[m][b] : res[m].ms_max;
        }
    }
    for (int m = 0; m < nmodes; m++) {
        int same = 1;
        for (int i = 0; i < c->nfields_checked; i++) {
            if (res[m].count[i] != res[0].count[i])
                same = 0;
            else if (c->tol == 0 ? res[m].hash[i] != res[0].hash[i]
                                 : fabs(res[m].sum[i] - res[0].sum[i]) >
                                       c->tol * (1.0 + fabs(res[0].sum[i])))
                same = 0;
        }
        if (!same) {
            fprintf(stderr, "bench: case %s: mode %s gives fields different from eager\n", c->name,
                    sfgb_modes[m].name);
            /* what differs: the active voxels (topology) or the values, and by how much */
            for (int i = 0; i < c->nfields_checked; i++)
                fprintf(stderr, "bench:   checked field %d: %llu voxels against eager's %llu, sum "
                                "%.9g against %.9g (relative %.3g), %s\n", i,
                        (unsigned long long)res[m].count[i], (unsigned long long)res[0].count[i],
                        res[m].sum[i], res[0].sum[i],
                        fabs(res[m].sum[i] - res[0].sum[i]) / (1.0 + fabs(res[0].sum[i])),
                        res[m].hash[i] == res[0].hash[i] ? "bitwise the same" : "bits differ");
            fail = 1;
        }
        const eng_stats *s = &res[m].st;
        printf("%-18s %-11s %10.2f %8.2fx %9llu %8.2fx %8llu %7llu %6llu %6llu %s\n", c->name,
               sfgb_modes[m].name, res[m].ms, speedup[m],
               (unsigned long long)s->tasks_launched,
               (double)res[0].st.tasks_launched / (double)(s->tasks_launched ? s->tasks_launched : 1),
               (unsigned long long)s->listgens, (unsigned long long)s->tasks_fused,
               (unsigned long long)s->tasks_eliminated, (unsigned long long)s->tasks_compiled,
               same ? "same" : "DIFFERENT");
        if (bench_gpu)
            printf("%-18s %-11s   GPU time %.2f ms in %llu kernels, %llu graph launches (%llu "
                   "built)\n", "", "", s->kernel_s * 1e3, (unsigned long long)s->kernels,
                   (unsigned long long)s->graph_launches, (unsigned long long)s->graphs_built);
        json_array_append_new(
            modes, json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:b}", "mode",
                             sfgb_modes[m].name, "wall_ms", res[m].ms, "tasks_launched",
                             (json_int_t)s->tasks_launched, "listgens", (json_int_t)s->listgens,
                             "tasks_fused", (json_int_t)s->tasks_fused, "tasks_eliminated",
                             (json_int_t)s->tasks_eliminated, "stores_eliminated",
                             (json_int_t)s->stores_eliminated, "activations_demoted",
                             (json_int_t)s->activations_demoted, "tasks_compiled",
                             (json_int_t)s->tasks_compiled, "optimizer_ms", s->optimizer_s * 1e3,
                             "backend_ms", s->backend_s * 1e3, "same_as_eager", same));
        json_t *row = json_array_get(modes, json_array_size(modes) - 1);
        json_object_set_new(row, "wall_ms_fastest_block", json_real(res[m].ms_min));
        json_object_set_new(row, "wall_ms_slowest_block", json_real(res[m].ms_max));
        json_t *per = json_array();
        for (int b = 0; b < done; b++)
            json_array_append_new(per, json_real(ms[m][b]));
        json_object_set_new(row, "wall_ms_blocks", per);
        json_object_set_new(row, "speedup_paired", json_real(speedup[m]));
        if (bench_gpu) {
            json_t *last = json_array_get(modes, json_array_size(modes) - 1);
            json_object_set_new(last, "gpu_kernel_ms", json_real(s->kernel_s * 1e3));
            json_object_set_new(last, "gpu_kernels", json_integer((json_int_t)s->kernels));
            json_object_set_new(last, "graph_launches", json_integer((json_int_t)s->graph_launches));
        }
    }
    if (bench_gpu)
        printf("%-18s CUDA graphs vs stream launches (optimized): %.2fx less wall time\n", c->name,
               res[2].ms / (res[1].ms > 0 ? res[1].ms : 1e-9));
    *task_ratio = (double)res[0].st.tasks_launched /
                  (double)(res[1].st.tasks_launched ? res[1].st.tasks_launched : 1);
    *time_ratio = speedup[1];
    json_array_append_new(bctx->cases,
                          json_pack("{s:s, s:i, s:i, s:f, s:f, s:f, s:o}", "name", c->name,
                                    "timed_blocks", done, "reps",
                                    bctx->quick ? c->quick_reps : c->reps, "tolerance", c->tol,
                                    "task_ratio", *task_ratio, "speedup", *time_ratio, "modes",
                                    modes));
    return fail;
}

static inline void sfgb_header(void)
{
    printf("%-18s %-11s %10s %9s %9s %9s %8s %7s %6s %6s %s\n", "case", "mode", "wall ms",
           "speedup", "tasks", "fewer", "listgen", "fused", "elim", "compl", "fields");
}

#endif
