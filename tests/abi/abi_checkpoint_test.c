/* The "plume.checkpoint/1" and "plume.deterministic/1" extensions through the ABI alone: a
 * context with a block field (odd origin, background 0.5, values equal to the background,
 * -0.0, denormals, NaN), a vec3 field, a per-voxel-mask field and a 0-D scalar set by a kernel
 * is saved, loaded into a fresh context that declares only one of the fields, and compared
 * block by block with what was written (the reference: the host's own arrays); saving the
 * restored context gives a byte-identical file (0-D scalar included). Keys, mismatched
 * declarations, missing fields, truncated and missing files are refused with the documented
 * statuses and leave the fields as they were. save_begin/save_finish (ABI 1.5) write the same
 * bytes from a thread of the plugin, report that thread's failure, and finish a pending write
 * before info reads the file or the context is destroyed. */
#define _GNU_SOURCE
#include "check.h"
#include "load.h"
#include "plume/plume.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const plume_plugin *api;
static const plume_ext_checkpoint *ck;

#define EXACT_LAYOUT "offset(-2048).pointer(ijk,32).pointer(ijk,16).bitmasked(ijk,8)"

static void declare(plume_context *ctx, const char *name, plume_value_type t, const char *layout, double h,
                    double bg)
{
    plume_field_desc d = {sizeof d, name, t, layout, h, {0.5, -1.0, 0.25}, {bg, bg + 1, bg + 2}};
    CHECK_STATUS(api->field_declare(ctx, &d), PLUME_OK);
}

static float pattern(int b, int n, int c)
{
    switch ((n + b) % 7) {
    case 0: return 0.5f + (float)c; /* the background */
    case 1: return -0.0f;
    case 2: return 1e-42f;          /* denormal */
    case 3: return NAN;
    default: return (float)(b * 512 + n) * 0.001f + (float)c + 1.0f / 3.0f;
    }
}

static const int32_t origins[3][3] = {{0, 0, 0}, {-16, 8, 24}, {800, -64, 8}};

static void write_field(plume_context *ctx, const char *name, int comps, int masked)
{
    plume_volume *v = NULL;
    CHECK_STATUS(api->volume_open(ctx, name, &v), PLUME_OK);
    float vals[3 * 512];
    uint64_t mask[8];
    for (int b = 0; b < 3; b++) {
        for (int n = 0; n < 512; n++)
            for (int c = 0; c < comps; c++)
                vals[n * comps + c] = pattern(b, n, c);
        for (int w = 0; w < 8; w++)
            mask[w] = 0x9249249249249249ull >> (w + b);
        CHECK_STATUS(api->volume_write_block(v, origins[b], vals, masked ? mask : NULL), PLUME_OK);
    }
    api->volume_close(v);
}

/* Fails unless field `name` of ctx holds exactly what write_field wrote. */
static void check_field(plume_context *ctx, const char *name, int comps, int masked)
{
    plume_volume *v = NULL;
    CHECK_STATUS(api->volume_open(ctx, name, &v), PLUME_OK);
    if (!v)
        return;
    plume_volume_info vi = {.struct_size = sizeof vi};
    CHECK_STATUS(api->volume_info(v, &vi), PLUME_OK);
    CHECK(vi.block_count == 3);
    CHECK(vi.background[0] == 0.5 && (comps == 1 || vi.background[2] == 2.5));
    CHECK(vi.origin[0] == 0.5 && vi.origin[1] == -1.0 && vi.origin[2] == 0.25);
    float got[3 * 512], want[3 * 512];
    uint64_t mask[8];
    for (int b = 0; b < 3; b++) {
        CHECK_STATUS(api->volume_read_block(v, origins[b], got, mask), PLUME_OK);
        for (int n = 0; n < 512; n++) {
            int on = !masked || (0x9249249249249249ull >> ((n >> 6) + b) >> (n & 63) & 1);
            CHECK_STATUS((int)(mask[n >> 6] >> (n & 63) & 1), on);
            for (int c = 0; c < comps; c++)
                want[n * comps + c] = on ? pattern(b, n, c) : 0.5f + (float)c;
        }
        CHECK(memcmp(got, want, (size_t)comps * 512 * sizeof(float)) == 0);
    }
    api->volume_close(v);
}

static plume_context *context(void)
{
    plume_context *ctx = NULL;
    CHECK_STATUS(api->context_create(NULL, NULL, &ctx), PLUME_OK);
    return ctx;
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
    CHECK(api->abi_minor >= 2);
    ck = api->get_extension(PLUME_EXT_CHECKPOINT);
    const plume_ext_deterministic *det = api->get_extension(PLUME_EXT_DETERMINISTIC);
    CHECK(ck && ck->struct_size >= sizeof *ck);
    CHECK(det && det->struct_size >= sizeof *det);
    CHECK(api->get_extension("plume.checkpoint/2") == NULL);
    if (!ck || !det)
        CHECK_DONE();

    char dir[] = "/tmp/plume_ckpt_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], again[256], cut[256], none[256];
    snprintf(path, sizeof path, "%s/a.vdb", dir);
    snprintf(again, sizeof again, "%s/b.vdb", dir);
    snprintf(cut, sizeof cut, "%s/cut.vdb", dir);
    snprintf(none, sizeof none, "%s/none.vdb", dir);

    /* deterministic mode: off by default, settable, bad handles refused */
    plume_context *a = context();
    int32_t on = -1;
    CHECK_STATUS(det->get(a, &on), PLUME_OK);
    CHECK(on == 0);
    const char *dev = getenv("PLUME_DEVICE");
    if (dev && !strcmp(dev, "cuda")) {
        /* the suite on a GPU: deterministic mode is refused, clearly, and the rest (which is
         * about deterministic checkpoints) does not apply */
        CHECK_STATUS(det->set(a, 1), PLUME_ERR_UNSUPPORTED);
        printf("SKIPPED: deterministic checkpoints need the CPU (PLUME_DEVICE=cuda)\n");
        api->context_destroy(a);
        rmdir(dir);
        api->deinit();
        dlclose(dl);
        CHECK_DONE();
    }
    CHECK_STATUS(det->set(a, 1), PLUME_OK);
    CHECK_STATUS(det->get(a, &on), PLUME_OK);
    CHECK(on == 1);
    CHECK_STATUS(det->set(NULL, 1), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(det->get(a, NULL), PLUME_ERR_INVALID_ARGUMENT);

    declare(a, "density", PLUME_VALUE_F32, NULL, 0.1, 0.5);
    declare(a, "vel", PLUME_VALUE_VEC3, NULL, 0.1, 0.5);
    declare(a, "exact", PLUME_VALUE_F32, EXACT_LAYOUT, 0.1, 0.5);
    declare(a, "scalar", PLUME_VALUE_F32, "dense(i,1)", 0.1, 0.0);
    write_field(a, "density", 1, 0);
    write_field(a, "vel", 3, 0);
    write_field(a, "exact", 1, 1);
    plume_node *k = NULL;
    CHECK_STATUS(api->node_create(a, "org.plume.kernel", "k", &k), PLUME_OK);
    CHECK_STATUS(api->node_set_string(k, "code", "kernel put(field<f32, 0> s) { s[] = 2.75; }"), PLUME_OK);
    CHECK_STATUS(api->node_bind(k, "s", "scalar"), PLUME_OK);
    CHECK_STATUS(api->cook(a, &k, 1, NULL), PLUME_OK);

    CHECK_STATUS(ck->save(a, path, 7, "key-A"), PLUME_OK);
    int64_t frame = -1;
    char *key = NULL;
    CHECK_STATUS(ck->info(a, path, &frame, &key), PLUME_OK);
    CHECK(frame == 7 && key && !strcmp(key, "key-A"));
    api->free_string(key);
    /* saving again gives the same bytes: nothing run-dependent in the file */
    CHECK_STATUS(ck->save(a, again, 7, "key-A"), PLUME_OK);
    CHECK(files_equal(path, again));

    /* ABI 1.5: the same file written by a thread of the plugin (save_begin, save_finish) */
    CHECK(ck->struct_size >= sizeof *ck && ck->save_begin && ck->save_finish);
    if (ck->struct_size >= sizeof *ck && ck->save_begin && ck->save_finish) {
        CHECK_STATUS(ck->save_finish(a), PLUME_OK); /* nothing pending */
        unlink(again);
        CHECK_STATUS(ck->save_begin(a, again, 7, "key-A"), PLUME_OK);
        CHECK_STATUS(ck->save_finish(a), PLUME_OK);
        CHECK(files_equal(path, again));
        /* info waits for a pending write to the file it reads */
        unlink(again);
        CHECK_STATUS(ck->save_begin(a, again, 9, "key-A"), PLUME_OK);
        frame = -1;
        CHECK_STATUS(ck->info(a, again, &frame, NULL), PLUME_OK);
        CHECK(frame == 9);
        CHECK_STATUS(ck->save_finish(a), PLUME_OK); /* already waited for */
        CHECK_STATUS(ck->save_begin(NULL, again, 1, NULL), PLUME_ERR_INVALID_HANDLE);
        CHECK_STATUS(ck->save_begin(a, NULL, 1, NULL), PLUME_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(ck->save_finish(NULL), PLUME_ERR_INVALID_HANDLE);
    }

    /* a fresh context declaring one field: the others are declared by the load */
    plume_context *b = context();
    declare(b, "density", PLUME_VALUE_F32, NULL, 0.1, 0.5);
    frame = -1;
    CHECK_STATUS(ck->load(b, path, "key-B", &frame), PLUME_ERR_INVALID_ARGUMENT);
    CHECK(strstr(api->last_error(b), "another scene") != NULL);
    CHECK(frame == -1);
    CHECK_STATUS(ck->load(b, path, "key-A", &frame), PLUME_OK);
    CHECK(frame == 7);
    check_field(b, "density", 1, 0);
    check_field(b, "vel", 3, 0);
    check_field(b, "exact", 1, 1);
    unlink(again);
    CHECK_STATUS(ck->save(b, again, 7, "key-A"), PLUME_OK);
    CHECK(files_equal(path, again)); /* the 0-D scalar and every field came back exactly */
    /* loading over fields with contents replaces them */
    CHECK_STATUS(ck->load(b, path, NULL, &frame), PLUME_OK);
    check_field(b, "density", 1, 0);

    /* a field declared differently, a field the checkpoint lacks: refused, fields untouched */
    plume_context *c = context();
    declare(c, "density", PLUME_VALUE_F32, NULL, 0.2, 0.5);
    CHECK_STATUS(ck->load(c, path, NULL, &frame), PLUME_ERR_INVALID_ARGUMENT);
    CHECK(strstr(api->last_error(c), "voxel size") != NULL);
    api->context_destroy(c);
    c = context();
    declare(c, "temperature", PLUME_VALUE_F32, NULL, 0.1, 0.0);
    CHECK_STATUS(ck->load(c, path, NULL, &frame), PLUME_ERR_INVALID_ARGUMENT);
    CHECK(strstr(api->last_error(c), "has no field 'temperature'") != NULL);
    double nv = -1;
    CHECK_STATUS(api->field_stat(c, "density", PLUME_STAT_ACTIVE_BLOCKS, &nv), PLUME_ERR_NOT_FOUND);

    /* truncated, missing, not a checkpoint, bad arguments */
    FILE *in = fopen(path, "rb"), *out = fopen(cut, "wb");
    CHECK(in && out);
    for (int i = 0; in && out && i < 3000; i++) {
        int ch = fgetc(in);
        if (ch == EOF)
            break;
        fputc(ch, out);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    CHECK_STATUS(ck->load(c, cut, NULL, &frame), PLUME_ERR_IO);
    CHECK(strstr(api->last_error(c), "cannot be read") != NULL);
    CHECK_STATUS(ck->info(c, cut, &frame, NULL), PLUME_ERR_IO);
    CHECK_STATUS(ck->info(c, none, &frame, NULL), PLUME_ERR_IO);
    CHECK_STATUS(ck->load(c, NULL, NULL, &frame), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ck->save(c, NULL, 1, NULL), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ck->save(NULL, path, 1, NULL), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(ck->load(c, path, NULL, NULL), PLUME_ERR_INVALID_ARGUMENT);
    /* a failed save leaves the old file: a folder in the way of the rename */
    char blocked[300];
    snprintf(blocked, sizeof blocked, "%s/dir.vdb", dir);
    CHECK(mkdir(blocked, 0777) == 0);
    CHECK(ck->save(a, blocked, 8, "key-A") != PLUME_OK);
    if (ck->struct_size >= sizeof *ck && ck->save_begin && ck->save_finish) {
        /* the writer thread's failure comes back from save_finish, naming the frame */
        CHECK_STATUS(ck->save_begin(a, blocked, 8, "key-A"), PLUME_OK);
        CHECK(ck->save_finish(a) == PLUME_ERR_IO);
        CHECK(strstr(api->last_error(a), "checkpoint of frame 8") != NULL);
    }
    CHECK(rmdir(blocked) == 0); /* still an empty folder: no temporary file left in it either */
    if (ck->struct_size >= sizeof *ck && ck->save_begin) {
        /* a context destroyed with a write pending: the file is complete once it is gone */
        unlink(again);
        CHECK_STATUS(ck->save_begin(a, again, 7, "key-A"), PLUME_OK);
    }

    api->context_destroy(a);
    CHECK(files_equal(path, again));
    api->context_destroy(b);
    api->context_destroy(c);
    unlink(path);
    unlink(again);
    unlink(cut);
    CHECK(rmdir(dir) == 0); /* no temporary file left behind */
    api->deinit();
    dlclose(dl);
    CHECK_DONE();
}
