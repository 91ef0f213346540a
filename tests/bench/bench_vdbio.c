/* plume-bench vdbio: import and export throughput of the vdbio C API, in millions of active
 * voxels per second, for a float grid of 2048 fully active leaves (1,048,576 voxels; --quick: 64
 * leaves), per compression (none, zip, blosc) and with half floats (blosc).
 *   export = plm_vdb_grid_create + 2048 x plm_vdb_grid_add_leaf + plm_vdb_write (fsync included)
 *   import = plm_vdb_open + plm_vdb_read_leaf of every leaf into one buffer
 * Each figure is the best of 3 runs (1 with --quick). Suite option: a folder for the files
 * (default $TMPDIR or /tmp); they are removed afterwards. */
#define _GNU_SOURCE
#include "bench.h"

#ifdef PLUME_HAVE_VDBIO

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vdbio/vdbio.h"

typedef struct vdbio_case {
    const char *name;
    plm_vdb_compression compression;
    int half;
} vdbio_case;

static const vdbio_case cases[] = {
    {"none", PLM_VDB_COMPRESS_NONE, 0},
    {"zip", PLM_VDB_COMPRESS_ZIP, 0},
    {"blosc", PLM_VDB_COMPRESS_BLOSC, 0},
    {"blosc_half", PLM_VDB_COMPRESS_BLOSC, 1},
};

/* A smooth density so the compressors see data like a simulation's, not noise or constants. */
static void fill_leaves(float *values, int32_t (*origins)[3], int nleaves)
{
    for (int i = 0; i < nleaves; i++) {
        origins[i][0] = 8 * (i % 16);
        origins[i][1] = 8 * ((i / 16) % 16);
        origins[i][2] = 8 * (i / 256);
        for (int n = 0; n < 512; n++) {
            const double x = origins[i][0] + (n >> 6), y = origins[i][1] + ((n >> 3) & 7),
                         z = origins[i][2] + (n & 7);
            values[(size_t)i * 512 + (size_t)n] =
                (float)(0.5 + 0.5 * sin(0.07 * x) * cos(0.05 * y) * exp(-0.01 * z));
        }
    }
}

static int export_once(const char *path, const vdbio_case *c, const float *values,
                       int32_t (*origins)[3], int nleaves, double *secs)
{
    plm_vdb_error err;
    const double t0 = bench_now();
    plm_vdb_grid_desc d;
    memset(&d, 0, sizeof d);
    d.name = "density";
    d.type = PLM_VDB_TYPE_FLOAT;
    d.grid_class = PLM_VDB_CLASS_FOG_VOLUME;
    d.voxel_size = 0.1;
    plm_vdb_grid *g = NULL;
    if (plm_vdb_grid_create(&d, &g, &err) != PLM_VDB_OK)
        goto fail;
    for (int i = 0; i < nleaves; i++)
        if (plm_vdb_grid_add_leaf(g, origins[i], values + (size_t)i * 512, NULL, &err))
            goto fail;
    plm_vdb_write_options opt;
    memset(&opt, 0, sizeof opt);
    opt.compression = c->compression;
    opt.half_float = c->half;
    const plm_vdb_grid *list[1] = {g};
    if (plm_vdb_write(path, list, 1, &opt, &err) != PLM_VDB_OK)
        goto fail;
    *secs = bench_now() - t0;
    plm_vdb_grid_free(g);
    return 0;
fail:
    fprintf(stderr, "bench vdbio: export %s: %s\n", c->name, err.message);
    plm_vdb_grid_free(g);
    return 1;
}

static int import_once(const char *path, float *buf, uint64_t expect_leaves, double *open_s,
                       double *total_s, double *checksum)
{
    plm_vdb_error err;
    const double t0 = bench_now();
    plm_vdb_file *f = NULL;
    if (plm_vdb_open(path, &f, &err) != PLM_VDB_OK) {
        fprintf(stderr, "bench vdbio: import: %s\n", err.message);
        return 1;
    }
    const double t1 = bench_now();
    const plm_vdb_grid *g = plm_vdb_file_grid(f, 0);
    plm_vdb_grid_info in;
    plm_vdb_grid_get_info(g, &in, NULL);
    if (in.leaf_count != expect_leaves) {
        fprintf(stderr, "bench vdbio: import: %llu leaves, wrote %llu\n",
                (unsigned long long)in.leaf_count, (unsigned long long)expect_leaves);
        plm_vdb_close(f);
        return 1;
    }
    for (uint64_t i = 0; i < in.leaf_count; i++) {
        int32_t o[3];
        uint64_t mask[8];
        float tmp[512];
        plm_vdb_read_leaf(g, i, o, tmp, mask, NULL);
        /* place the block by its origin, as an import into a field does */
        const uint64_t at = (uint64_t)(o[0] / 8 + 16 * (o[1] / 8) + 256 * (o[2] / 8));
        if (at < in.leaf_count)
            memcpy(buf + at * 512, tmp, sizeof tmp);
    }
    const double t2 = bench_now();
    plm_vdb_close(f);
    *open_s = t1 - t0;
    *total_s = t2 - t0;
    double s = 0;
    for (uint64_t i = 0; i < in.leaf_count * 512; i += 97)
        s += buf[i];
    *checksum = s;
    return 0;
}

static int run_vdbio(bench_ctx *ctx)
{
    const int nleaves = ctx->quick ? 64 : 2048, reps = ctx->quick ? 1 : 3;
    const double voxels = 512.0 * nleaves;
    const char *dir = ctx->argc > 0 ? ctx->argv[0] : getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    float *values = malloc(sizeof(float) * 512 * (size_t)nleaves);
    float *buf = malloc(sizeof(float) * 512 * (size_t)nleaves);
    int32_t(*origins)[3] = malloc(sizeof *origins * (size_t)nleaves);
    if (!values || !buf || !origins) {
        fprintf(stderr, "bench vdbio: out of memory\n");
        return 1;
    }
    fill_leaves(values, origins, nleaves);
    printf("vdbio: float grid, %d leaves, %.0f active voxels, best of %d; files in %s\n", nleaves,
           voxels, reps, dir);
    printf("%-11s %10s %12s %12s %12s %12s\n", "case", "file MB", "export s", "export Mv/s",
           "import s", "import Mv/s");
    int rc = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases && rc == 0; c++) {
        char *path = NULL;
        if (asprintf(&path, "%s/plume_bench_vdbio_%d_%s.vdb", dir, (int)getpid(),
                     cases[c].name) < 0)
            return 1;
        double best_exp = 1e30, best_imp = 1e30, best_open = 1e30, checksum = 0;
        for (int r = 0; r < reps && rc == 0; r++) {
            double e = 0, o = 0, t = 0;
            rc |= export_once(path, &cases[c], values, origins, nleaves, &e);
            if (rc == 0)
                rc |= import_once(path, buf, (uint64_t)nleaves, &o, &t, &checksum);
            if (e < best_exp)
                best_exp = e;
            if (t < best_imp) {
                best_imp = t;
                best_open = o;
            }
        }
        struct stat st;
        const double bytes = stat(path, &st) == 0 ? (double)st.st_size : 0;
        remove(path);
        free(path);
        if (rc)
            break;
        if (!cases[c].half && memcmp(buf, values, sizeof(float) * 512 * (size_t)nleaves)) {
            fprintf(stderr, "bench vdbio: %s: values read back differ\n", cases[c].name);
            rc = 1;
            break;
        }
        printf("%-11s %10.2f %12.4f %12.1f %12.4f %12.1f\n", cases[c].name, bytes / 1e6,
               best_exp, voxels / best_exp / 1e6, best_imp, voxels / best_imp / 1e6);
        json_array_append_new(
            ctx->cases,
            json_pack("{s:s, s:s, s:b, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:i}", "name",
                      cases[c].name, "compression",
                      cases[c].compression == PLM_VDB_COMPRESS_NONE  ? "none"
                      : cases[c].compression == PLM_VDB_COMPRESS_ZIP ? "zip"
                                                                     : "blosc",
                      "half_float", cases[c].half, "leaves", nleaves, "active_voxels", voxels,
                      "file_bytes", bytes, "export_s", best_exp, "export_mvoxels_per_s",
                      voxels / best_exp / 1e6, "import_s", best_imp, "import_open_s", best_open,
                      "import_mvoxels_per_s", voxels / best_imp / 1e6, "fsync", 1, "reps", reps));
    }
    free(values);
    free(buf);
    free(origins);
    return rc;
}

BENCH_SUITE("vdbio", "VDB import/export throughput (M active voxels/s), per compression",
            run_vdbio)

#endif
