/* An ABI test host in plain C, compiled against plume.h alone: loads the plugin with dlopen,
 * negotiates versions, lists nodes, runs two contexts (also concurrently), cooks, moves blocks,
 * destroys, then dlcloses and loads the plugin again. */
#define _GNU_SOURCE
#include "check.h"
#include "plume/plume.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *plugin_path;

static const plume_plugin *load(void **dl)
{
    *dl = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        fprintf(stderr, "dlopen %s: %s\n", plugin_path, dlerror());
        return NULL;
    }
    plume_plugin_entry_fn entry = (plume_plugin_entry_fn)dlsym(*dl, PLUME_PLUGIN_ENTRY_SYMBOL);
    CHECK(entry != NULL);
    if (!entry)
        return NULL;
    /* An unknown major gets NULL; 1.0 and a newer minor of major 1 are served. */
    CHECK(entry(PLUME_ABI_MAJOR + 1, 0) == NULL);
    CHECK(entry(0, 9) == NULL);
    CHECK(entry(1, 7) != NULL);
    const plume_plugin *api = entry(1, 0);
    CHECK(api != NULL);
    if (api) {
        CHECK(api->struct_size >= sizeof(plume_plugin));
        CHECK(api->abi_major == 1);
        CHECK(api->init() == PLUME_OK);
    }
    return api;
}

static void check_descriptors(const plume_plugin *api)
{
    uint32_t n = api->node_type_count();
    CHECK(n >= 1);
    CHECK(api->node_type(n) == NULL);
    for (uint32_t i = 0; i < n; i++) {
        const plume_node_desc *d = api->node_type(i);
        CHECK(d && d->struct_size >= sizeof(plume_node_desc));
        if (!d)
            continue;
        CHECK(d->id && strchr(d->id, '.') != NULL); /* reverse-DNS */
        CHECK(api->find_node_type(d->id) == d);
        for (uint32_t k = 0; k < d->param_count; k++) {
            const plume_param_desc *p = &d->params[k];
            CHECK(p->struct_size >= sizeof(plume_param_desc));
            CHECK(p->id && p->label && p->help);
            CHECK(p->default_string != NULL);
            if (p->flags & PLUME_PARAM_FLAG_HAS_HARD_RANGE) {
                CHECK(p->hard_min <= p->hard_max);
                if (p->type == PLUME_PARAM_FLOAT || p->type == PLUME_PARAM_INT)
                    CHECK(p->default_number >= p->hard_min && p->default_number <= p->hard_max);
            }
            if (p->flags & PLUME_PARAM_FLAG_HAS_UI_RANGE)
                CHECK(p->ui_min <= p->ui_max);
            if (p->type == PLUME_PARAM_ENUM) {
                int found = 0;
                for (uint32_t e = 0; e < p->enum_count; e++)
                    found |= !strcmp(p->enum_items[e], p->default_string);
                CHECK(found);
            }
        }
        for (uint32_t k = 0; k < d->port_count; k++)
            CHECK(d->ports[k].struct_size >= sizeof(plume_port_desc) && d->ports[k].id);
    }
    CHECK(api->find_node_type("org.plume.no.such.node") == NULL);
}

/* Cook a hard-edged sphere and compare the voxel count with the analytic volume. */
static void cook_sphere(const plume_plugin *api, plume_context *ctx, double radius)
{
    const double h = 0.02;
    plume_field_desc fd = {sizeof fd, "density", PLUME_VALUE_F32, NULL, h, {-1, -1, -1}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_OK);
    plume_node *node = NULL;
    CHECK_STATUS(api->node_create(ctx, "org.plume.source.sphere", "emit", &node), PLUME_OK);
    double c[3] = {0.1, -0.05, 0.0};
    CHECK_STATUS(api->node_set_vec3(node, "center", c), PLUME_OK);
    CHECK_STATUS(api->node_set_float(node, "radius", radius), PLUME_OK);
    CHECK_STATUS(api->node_set_float(node, "falloff", 0.0), PLUME_OK);
    CHECK_STATUS(api->node_set_float(node, "value", 2.0), PLUME_OK);
    CHECK_STATUS(api->node_bind(node, "target", "density"), PLUME_OK);
    plume_cook_info info = {sizeof info, 1, 0.0, 1.0 / 24, 0, 1};
    CHECK_STATUS(api->cook(ctx, &node, 1, &info), PLUME_OK);
    CHECK_STATUS(api->sync(ctx), PLUME_OK);

    plume_volume *vol = NULL;
    CHECK_STATUS(api->volume_open(ctx, "density", &vol), PLUME_OK);
    plume_volume_info vi = {.struct_size = sizeof vi};
    CHECK_STATUS(api->volume_info(vol, &vi), PLUME_OK);
    CHECK(vi.components == 1 && vi.voxel_size == h);
    CHECK(vi.block_count > 0);
    uint32_t nb = (uint32_t)vi.block_count;
    int32_t *origins = malloc((size_t)nb * 3 * sizeof *origins);
    float vals[512];
    uint64_t mask[8];
    CHECK_STATUS(api->volume_block_origins(vol, 0, nb, origins), PLUME_OK);
    double inside = 0;
    int bad_value = 0;
    for (uint32_t b = 0; b < nb; b++) {
        CHECK(origins[3 * b] % 8 == 0 && origins[3 * b + 1] % 8 == 0 && origins[3 * b + 2] % 8 == 0);
        CHECK_STATUS(api->volume_read_block(vol, origins + 3 * b, vals, mask), PLUME_OK);
        for (int i = 0; i < 512; i++) {
            if (vals[i] == 2.0f)
                inside++;
            else if (vals[i] != 0.0f)
                bad_value++;
        }
    }
    CHECK(bad_value == 0);
    /* Voxel centres inside the sphere approximate its volume: 4/3 pi r^3 / h^3. */
    double expect = 4.0 / 3.0 * M_PI * radius * radius * radius / (h * h * h);
    CHECK(fabs(inside - expect) < 0.05 * expect);
    free(origins);
    api->volume_close(vol);
}

/* Blocks written from host memory read back identically; unmasked voxels read as background. */
static void block_round_trip(const plume_plugin *api, plume_context *ctx)
{
    /* Bitmasked leaves keep per-voxel activity (the default dense leaves keep it per block). */
    plume_field_desc fd = {sizeof fd, "vel", PLUME_VALUE_VEC3,
                           "offset(-2048).pointer(ijk,32).pointer(ijk,16).bitmasked(ijk,8)", 0.5,
                           {0, 0, 0}, {0.25, 0.5, 0.75}};
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_OK);
    plume_volume *vol = NULL;
    CHECK_STATUS(api->volume_open(ctx, "vel", &vol), PLUME_OK);
    float in[3 * 512], out[3 * 512];
    uint64_t mask[8], mask_out[8];
    for (int i = 0; i < 3 * 512; i++)
        in[i] = (float)i * 0.5f - 100.0f;
    for (int w = 0; w < 8; w++)
        mask[w] = 0x5555555555555555ull >> w;
    int32_t o1[3] = {-16, 8, 24}, o2[3] = {0, 0, 0}, bad[3] = {1, 0, 0};
    CHECK_STATUS(api->volume_write_block(vol, o1, in, mask), PLUME_OK);
    CHECK_STATUS(api->volume_write_block(vol, o2, in, NULL), PLUME_OK);
    CHECK_STATUS(api->volume_write_block(vol, bad, in, NULL), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(api->volume_read_block(vol, o1, out, mask_out), PLUME_OK);
    CHECK(memcmp(mask, mask_out, sizeof mask) == 0);
    int mismatches = 0;
    for (int i = 0; i < 512; i++) {
        int on = (int)(mask[i >> 6] >> (i & 63) & 1);
        for (int c = 0; c < 3; c++) {
            float want = on ? in[3 * i + c] : (float)fd.background[c];
            mismatches += out[3 * i + c] != want;
        }
    }
    CHECK(mismatches == 0);
    plume_volume_info vi = {.struct_size = sizeof vi};
    CHECK_STATUS(api->volume_info(vol, &vi), PLUME_OK);
    CHECK(vi.block_count == 2);
    uint64_t on = 0;
    for (int w = 0; w < 8; w++)
        on += (uint64_t)__builtin_popcountll(mask[w]);
    CHECK(vi.active_voxels == on + 512);
    CHECK(vi.bbox_min[0] == -16 && vi.bbox_max[2] == 31);
    /* An inactive block reads as background with an empty mask. */
    int32_t far[3] = {800, 800, 800};
    CHECK_STATUS(api->volume_read_block(vol, far, out, mask_out), PLUME_OK);
    CHECK(out[0] == 0.25f && out[1] == 0.5f && out[2] == 0.75f && out[1535] == 0.75f && mask_out[0] == 0);
    CHECK_STATUS(api->volume_clear(vol), PLUME_OK);
    CHECK_STATUS(api->volume_info(vol, &vi), PLUME_OK);
    CHECK(vi.block_count == 0 && vi.active_voxels == 0);
    api->volume_close(vol);
}

typedef struct job {
    const plume_plugin *api;
    double radius;
    int ok;
} job;

static void *cook_thread(void *arg)
{
    job *j = arg;
    plume_context *ctx = NULL;
    if (j->api->context_create(NULL, NULL, &ctx) != PLUME_OK)
        return NULL;
    cook_sphere(j->api, ctx, j->radius);
    j->api->context_destroy(ctx);
    j->ok = 1;
    return NULL;
}

/* The host's progress callback during a cook: the node being cooked, then (first cook) the
 * kernels compiling, on the cooking thread, fractions in [0, 1], at most ten calls a second. */
typedef struct progress_seen {
    int calls, bad;
    char first[256];
    double last_t, min_gap;
    pthread_t thread;
} progress_seen;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_progress(void *user, double fraction, const char *stage)
{
    progress_seen *p = user;
    double t = mono_s();
    if (p->calls == 0)
        snprintf(p->first, sizeof p->first, "%.3f %s", fraction, stage);
    else if (t - p->last_t < p->min_gap)
        p->min_gap = t - p->last_t;
    p->last_t = t;
    if (!(fraction >= 0 && fraction <= 1) || !stage || strncmp(stage, "frame 1", 7) != 0 ||
        !pthread_equal(pthread_self(), p->thread))
        p->bad++;
    p->calls++;
}

static void check_progress(const plume_plugin *api)
{
    progress_seen seen = {.min_gap = 1e9, .thread = pthread_self()};
    plume_host h = {sizeof h, &seen, NULL, on_progress, NULL};
    plume_context *ctx = NULL;
    CHECK_STATUS(api->context_create(NULL, &h, &ctx), PLUME_OK);
    if (!ctx)
        return;
    cook_sphere(api, ctx, 0.25);
    api->context_destroy(ctx);
    printf("progress: %d calls, first '%s'\n", seen.calls, seen.first);
    CHECK(seen.calls >= 1 && seen.bad == 0);
    CHECK(strcmp(seen.first, "0.000 frame 1: emit (node 1 of 1)") == 0);
    CHECK(seen.min_gap >= 0.099);
}

static void run_once(const plume_plugin *api)
{
    check_progress(api);
    check_descriptors(api);
    plume_context_options o = {sizeof o, PLUME_DEVICE_CPU, 2, 0, PLUME_MODE_OPTIMIZED, 0, 0};
    plume_context *a = NULL, *b = NULL;
    CHECK_STATUS(api->context_create(&o, NULL, &a), PLUME_OK);
    CHECK_STATUS(api->context_create(NULL, NULL, &b), PLUME_OK);
    CHECK(a && b && a != b);
    plume_context_info ci = {.struct_size = sizeof ci};
    CHECK_STATUS(api->context_info(a, &ci), PLUME_OK);
    /* PLUME_DEVICE=cuda (the suite on a GPU) puts every context on the GPU */
    const char *dev = getenv("PLUME_DEVICE");
    int on_gpu = dev && !strcmp(dev, "cuda");
    CHECK(ci.device == (on_gpu ? PLUME_DEVICE_CUDA : PLUME_DEVICE_CPU) && ci.threads == 2 &&
          ci.device_name && ci.device_name[0]);
    cook_sphere(api, a, 0.3);
    block_round_trip(api, b);
    /* Fields are per context: b has no density. */
    double v;
    CHECK_STATUS(api->field_stat(b, "density", PLUME_STAT_ACTIVE_VOXELS, &v), PLUME_ERR_NOT_FOUND);
    CHECK_STATUS(api->field_stat(a, "density", PLUME_STAT_MAX_ABS, &v), PLUME_OK);
    CHECK(v == 2.0);
    plume_stats st = {.struct_size = sizeof st};
    CHECK_STATUS(api->get_stats(a, &st), PLUME_OK);
    CHECK(st.memory_bytes > 0);
    api->context_destroy(a);
    api->context_destroy(b);

    /* Two contexts cooking at the same time on two threads. */
    job j1 = {api, 0.2, 0}, j2 = {api, 0.35, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, cook_thread, &j1);
    pthread_create(&t2, NULL, cook_thread, &j2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(j1.ok && j2.ok);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: abi_host_test PATH/libplume.so\n");
        return 2;
    }
    plugin_path = argv[1];
    for (int round = 0; round < 2; round++) {
        void *dl = NULL;
        const plume_plugin *api = load(&dl);
        CHECK(api != NULL);
        if (!api)
            CHECK_DONE();
        run_once(api);
        api->deinit();
        CHECK(dlclose(dl) == 0);
    }
    CHECK_DONE();
}
