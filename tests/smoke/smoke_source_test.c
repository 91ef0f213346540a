/* The smoke source's VDB shapes, through the plugin ABI: a fog ring and a level-set sphere, both
 * written by OpenVDB's Python module (scenes/data/make_data.py), emitted into the solver's fields.
 * Expected figures come from the shapes' geometry: the ring's volume 2 pi^2 R r^2 and the ball's
 * 4/3 pi r^3, in voxels, not from the solver.
 *   smoke_source_test libplume.so SCENE_DATA_DIR */
#define _GNU_SOURCE
#include "plume/plume.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fprintf(stderr, "\n");                                                              \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

static const plume_plugin *api;
static plume_context *ctx;
static const char *data_dir;
static const double H = 1.0 / 128; /* the lattice of the .vdb files in scenes/data */

static int ok(plume_status st, const char *what)
{
    if (st == PLUME_OK)
        return 1;
    fprintf(stderr, "%s: status %d: %s\n", what, st, api->last_error(ctx));
    failures++;
    return 0;
}

static void declare(const char *name, plume_value_type t, double h)
{
    plume_field_desc fd = {sizeof fd, name, t, NULL, h, {-0.5, 0.0, -0.5}, {0, 0, 0}};
    ok(api->field_declare(ctx, &fd), name);
}

/* A source node emitting into fields <prefix>d, <prefix>t, <prefix>v. */
static plume_node *source(const char *name, const char *prefix, const char *file, const char *grid)
{
    plume_node *n = NULL;
    if (!ok(api->node_create(ctx, "org.plume.smoke.source", name, &n), name))
        return NULL;
    char path[4096], f[64];
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    ok(api->node_set_string(n, "shape", "vdb"), "shape");
    ok(api->node_set_string(n, "file", path), "file");
    ok(api->node_set_string(n, "grid", grid), "grid");
    ok(api->node_set_float(n, "density", 1.0), "density");
    ok(api->node_set_float(n, "temperature", 2.0), "temperature");
    const char *ports[3] = {"density", "temperature", "vel"}, *suffix[3] = {"d", "t", "v"};
    for (int i = 0; i < 3; i++) {
        snprintf(f, sizeof f, "%s%s", prefix, suffix[i]);
        ok(api->node_bind(n, ports[i], f), ports[i]);
    }
    return n;
}

static plume_status cook(plume_node *n)
{
    plume_cook_info info = {sizeof info, 1, 0.0, 1.0 / 24, 0, 1};
    plume_status st = api->cook(ctx, &n, 1, &info);
    return st == PLUME_OK ? api->sync(ctx) : st;
}

static double stat(const char *field, plume_field_stat s)
{
    double v = -1;
    ok(api->field_stat(ctx, field, s, &v), field);
    return v;
}

static void test_fog_ring(void)
{
    plume_node *n = source("ring", "r", "ring_source.vdb", "density");
    if (!n || !ok(cook(n), "cook ring"))
        return;
    /* make_data.py: major radius 0.07, minor 0.025, a linear edge centred on the surface */
    double volume = 2 * M_PI * M_PI * 0.07 * 0.025 * 0.025 / (H * H * H);
    double dsum = stat("rd", PLUME_STAT_SUM), tsum = stat("rt", PLUME_STAT_SUM);
    CHECK(fabs(dsum - volume) < 0.05 * volume, "ring density %.1f, the torus holds %.1f voxels",
          dsum, volume);
    CHECK(fabs(tsum - 2 * dsum) < 1e-4 * dsum, "temperature %.3f is twice density %.3f", tsum, dsum);
    CHECK(fabs(stat("rd", PLUME_STAT_MAX_ABS) - 1.0) < 1e-6, "the ring's core is at density 1");
    CHECK(stat("rv", PLUME_STAT_ACTIVE_BLOCKS) >= stat("rd", PLUME_STAT_ACTIVE_BLOCKS),
          "the velocity's domain covers the smoke");
    /* a second cook of a still file reads nothing new and max-blends to the same fields */
    ok(cook(n), "cook ring again");
    CHECK(fabs(stat("rd", PLUME_STAT_SUM) - dsum) < 1e-6 * dsum, "mode max is idempotent");
    api->node_destroy(n);
}

static void test_level_set_sphere(void)
{
    plume_node *n = source("ball", "b", "sphere_collider.vdb", "collider");
    if (!n)
        return;
    ok(api->node_set_float(n, "falloff", 0.0), "falloff");
    if (!ok(cook(n), "cook sphere"))
        return;
    /* make_data.py: radius 0.09; a hard edge gives density 1 on the voxels inside, 0 elsewhere */
    double r = 0.09 / H, volume = 4.0 / 3.0 * M_PI * r * r * r;
    double inside = stat("bd", PLUME_STAT_SUM);
    CHECK(fabs(inside - volume) < 0.03 * volume, "%.0f voxels inside, the ball has %.0f", inside,
          volume);
    /* A falloff wider than the file's band (3 voxels) stops at the band: past it the file only
     * says "at least 3 voxels away" (it gave every voxel of the grid's leaves 0.7, 21,000 voxels'
     * worth, and smoke as far as the leaves reach). */
    ok(api->node_set_float(n, "falloff", 10.0), "falloff");
    if (ok(cook(n), "cook sphere, wide falloff")) {
        double reach = r + 3.5, most = 4.0 / 3.0 * M_PI * reach * reach * reach;
        double wide = stat("bd", PLUME_STAT_SUM);
        CHECK(wide > inside && wide < most, "density %.0f with a 10-voxel falloff: more than %.0f, at most "
              "the %.0f voxels within the band", wide, inside, most);
    }
    api->node_destroy(n);
}

static void expect_error(plume_node *n, const char *needle, const char *what)
{
    plume_status st = cook(n);
    const char *msg = api->last_error(ctx);
    CHECK(st != PLUME_OK, "%s: the cook fails", what);
    CHECK(msg && strstr(msg, needle), "%s: the message names '%s': %s", what, needle,
          msg ? msg : "(none)");
}

static void test_errors(void)
{
    plume_node *n = source("nofile", "r", "no_such.vdb", "density");
    if (n)
        expect_error(n, "no_such.vdb", "a missing file");
    api->node_destroy(n);
    n = source("nogrid", "r", "ring_source.vdb", "smoke");
    if (n)
        expect_error(n, "density", "an unknown grid lists the file's grids");
    api->node_destroy(n);
    n = source("coarse", "c", "ring_source.vdb", "density");
    if (n)
        expect_error(n, "voxel size", "a grid on another lattice");
    api->node_destroy(n);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s libplume.so SCENE_DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[2];
    void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    plume_plugin_entry_fn entry = (plume_plugin_entry_fn)dlsym(dl, PLUME_PLUGIN_ENTRY_SYMBOL);
    api = entry ? entry(PLUME_ABI_MAJOR, PLUME_ABI_MINOR) : NULL;
    if (!api || api->init() != PLUME_OK) {
        fprintf(stderr, "cannot initialise the plugin\n");
        return 1;
    }
    plume_context_options o = {sizeof o, PLUME_DEVICE_CPU, 2, 0, PLUME_MODE_EAGER, 0, 0};
    if (api->context_create(&o, NULL, &ctx) != PLUME_OK) {
        fprintf(stderr, "context_create failed\n");
        return 1;
    }
    const char *prefixes[3] = {"r", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char name[8];
        double h = prefixes[i][0] == 'c' ? 2 * H : H;
        snprintf(name, sizeof name, "%sd", prefixes[i]);
        declare(name, PLUME_VALUE_F32, h);
        snprintf(name, sizeof name, "%st", prefixes[i]);
        declare(name, PLUME_VALUE_F32, h);
        snprintf(name, sizeof name, "%sv", prefixes[i]);
        declare(name, PLUME_VALUE_VEC3, h);
    }
    if (!failures) {
        test_fog_ring();
        test_level_set_sphere();
        test_errors();
    }
    api->context_destroy(ctx);
    api->deinit();
    dlclose(dl);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
