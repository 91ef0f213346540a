/* Misuse of the ABI: NULL and destroyed handles, handles of the wrong kind, parameters of the
 * wrong type or out of range, unknown node ids, a cook with a missing input. Each must give an
 * error status and a message, never a crash. */
#define _GNU_SOURCE
#include "check.h"
#include "plume/plume.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_MSG(api, ctx, needle)                                                             \
    do {                                                                                        \
        const char *m_ = (api)->last_error(ctx);                                                \
        if (!m_ || !strstr(m_, needle)) {                                                       \
            fprintf(stderr, "%s:%d: last error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,       \
                    m_ ? m_ : "(null)", needle);                                                \
            check_failures++;                                                                   \
        }                                                                                       \
    } while (0)

/* Threads of this process (the plugin's pool, launch and compile threads among them). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A struct of `type` with room for 64 more bytes, as a newer header would have it: `call`
 * fills it, and must say it wrote its own size. */
#define CHECK_WRITTEN_SIZE(type, call_with)                                                     \
    do {                                                                                        \
        union {                                                                                 \
            type s;                                                                             \
            unsigned char bytes[sizeof(type) + 64];                                             \
        } u_;                                                                                   \
        memset(&u_, 0xcd, sizeof u_);                                                           \
        u_.s.struct_size = sizeof u_;                                                           \
        CHECK_STATUS(call_with(&u_.s), PLUME_OK);                                               \
        CHECK(u_.s.struct_size == sizeof(type));                                                \
    } while (0)
#define GET_STATS(p) api->get_stats(ctx, p)
#define CONTEXT_INFO(p) api->context_info(ctx, p)
#define VOLUME_INFO(p) api->volume_info(vol, p)

/* Structs the plugin fills say how much of them it wrote; a host built against a newer header
 * (a bigger struct) then sees the fields this plugin lacks as absent. */
static void test_struct_sizes(const plume_plugin *api, plume_context *ctx, plume_volume *vol)
{
    CHECK_WRITTEN_SIZE(plume_stats, GET_STATS);
    CHECK_WRITTEN_SIZE(plume_context_info, CONTEXT_INFO);
    CHECK_WRITTEN_SIZE(plume_volume_info, VOLUME_INFO);
    /* An older host's smaller struct: only its part is written, and it says so. */
    plume_stats old = {.struct_size = 8};
    CHECK_STATUS(api->get_stats(ctx, &old), PLUME_OK);
    CHECK(old.struct_size == 8);
    /* Sizes too small to hold anything are refused, not read as "all defaults". */
    plume_cook_info zero = {0};
    CHECK_STATUS(api->cook(ctx, NULL, 0, &zero), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "struct_size");
    plume_host host0 = {0};
    plume_context *c0 = NULL;
    CHECK_STATUS(api->context_create(NULL, &host0, &c0), PLUME_ERR_INVALID_ARGUMENT);
    CHECK(c0 == NULL);
    CHECK_MSG(api, NULL, "host.struct_size");
}

/* Work queued before a volume call runs first, and its error is that call's. */
static void test_volume_errors(const plume_plugin *api)
{
    plume_context_options o = {sizeof o, PLUME_DEVICE_CPU, 1, 1250000, PLUME_MODE_OPTIMIZED, 0, 0};
    plume_context *ctx = NULL;
    CHECK_STATUS(api->context_create(&o, NULL, &ctx), PLUME_OK);
    plume_field_desc fd = {sizeof fd, "density", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_OK);
    plume_field_desc scratch = fd;
    scratch.name = "project:mg.rz";
    CHECK_STATUS(api->field_declare(ctx, &scratch), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "reserved");
    plume_node *s = NULL, *k = NULL;
    CHECK_STATUS(api->node_create(ctx, "org.plume.source.sphere", "sph", &s), PLUME_OK);
    CHECK_STATUS(api->node_set_float(s, "radius", 0.3), PLUME_OK);
    plume_cook_info ci = {sizeof ci, 1, 0, 1.0 / 24, 0, 1};
    CHECK_STATUS(api->cook(ctx, &s, 1, &ci), PLUME_OK);
    plume_volume *v = NULL;
    CHECK_STATUS(api->volume_open(ctx, "density", &v), PLUME_OK);
    /* Spreads the sphere's blocks 400 times apart: far past the budget, raised when it runs. */
    CHECK_STATUS(api->node_create(ctx, "org.plume.kernel", "spread", &k), PLUME_OK);
    CHECK_STATUS(api->node_set_string(k, "code",
                                      "kernel a(field<f32> density) { for (I in density) { density[I * 400] = 7.0; } }"),
                 PLUME_OK);
    plume_status cooked = api->cook(ctx, &k, 1, &ci);
    if (cooked == PLUME_OK) { /* queued: the next call that waits for it must say so */
        int32_t org[3] = {0, 0, 0};
        float vals[512];
        uint64_t mask[8];
        CHECK_STATUS(api->volume_read_block(v, org, vals, mask), PLUME_ERR_MEMORY_BUDGET);
        CHECK_MSG(api, ctx, "budget");
    } else {
        CHECK_STATUS(cooked, PLUME_ERR_MEMORY_BUDGET);
    }
    api->volume_close(v);
    api->context_destroy(ctx);
}

/* Host callbacks that call back into their own context, which is in the middle of a call:
 * each such call is refused (INVALID_ARGUMENT) and changes nothing (it used to crash in the
 * plugin, or with field_stat from is_cancelled, run queued work half way and give other
 * numbers); the outer call's own result and message stand. */
typedef struct reentry {
    const plume_plugin *api;
    plume_context *ctx;
    plume_node *node;
    int polls, logs, refused, accepted;
    char refusal[512];
} reentry;

static void try_all(reentry *r)
{
    double v = 0;
    plume_cook_info ci = {sizeof ci, 7, 0, 0.04, 0, 1};
    plume_volume *vol = NULL;
    plume_status st[] = {r->api->field_stat(r->ctx, "density", PLUME_STAT_SUM, &v),
                         r->api->cook(r->ctx, &r->node, 1, &ci), r->api->sync(r->ctx),
                         r->api->node_set_float(r->node, "radius", 0.2),
                         r->api->volume_open(r->ctx, "density", &vol)};
    for (size_t i = 0; i < sizeof st / sizeof *st; i++) {
        r->refused += st[i] == PLUME_ERR_INVALID_ARGUMENT;
        r->accepted += st[i] == PLUME_OK;
    }
    snprintf(r->refusal, sizeof r->refusal, "%s", r->api->last_error(r->ctx));
    r->api->node_destroy(r->node);  /* ignored: the node is cooking */
    r->api->context_destroy(r->ctx); /* ignored: the context is mid-call */
    r->api->deinit();                /* ignored */
    plume_context_info info = {.struct_size = sizeof info};
    r->accepted += r->api->context_info(r->ctx, &info) == PLUME_OK ? 0 : 100; /* allowed */
}

/* A second context whose callback, run while the first's callback is under way (the first's
 * callback cooks it), reaches back into the first: still refused. */
typedef struct nested {
    reentry *outer;
    plume_context *ctx;
    plume_node *node;
    int tried;
} nested;

static int32_t nested_cancel(void *user)
{
    nested *n = user;
    if (!n->tried++)
        try_all(n->outer);
    return 0;
}

static int32_t reentry_cancel(void *user)
{
    reentry *r = user;
    if (r->polls++ == 0)
        try_all(r);
    return 0;
}

static nested *g_nested;

static int32_t outer_cancel(void *user)
{
    reentry *r = user;
    if (r->polls++ == 0) { /* cook the other context from inside this callback */
        plume_cook_info ci = {sizeof ci, 1, 0, 0.04, 0, 1};
        r->accepted += r->api->cook(g_nested->ctx, &g_nested->node, 1, &ci) == PLUME_OK ? 0 : 1000;
    }
    return 0;
}

static void reentry_log(void *user, plume_log_level level, const char *message)
{
    (void)level;
    (void)message;
    reentry *r = user;
    if (r->logs++ == 0)
        try_all(r);
}

/* A node's failure reaches the host's log as last_error has it: once, naming the node. */
typedef struct logged {
    int errors;
    char last[4096];
} logged;

static void capture_log(void *user, plume_log_level level, const char *message)
{
    logged *l = user;
    if (level == PLUME_LOG_ERROR) {
        l->errors++;
        snprintf(l->last, sizeof l->last, "%s", message);
    }
}

static void test_logged_failure(const plume_plugin *api)
{
    logged l = {0};
    plume_host host = {sizeof host, &l, capture_log, NULL, NULL};
    plume_context *ctx = NULL;
    CHECK_STATUS(api->context_create(NULL, &host, &ctx), PLUME_OK);
    plume_field_desc fd = {sizeof fd, "density", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_OK);
    /* a sphere exported, then imported into a field whose origin lies 500 units away: the
     * file's voxels land past what the field can hold, which the engine says without knowing
     * the node */
    char dir[] = "/tmp/plume-abi-log-XXXXXX", file[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(file, sizeof file, "%s/s.vdb", dir);
    plume_node *sph = NULL, *exp = NULL, *imp = NULL;
    plume_cook_info ci = {sizeof ci, 1, 0, 0.04, 0, 1};
    CHECK_STATUS(api->node_create(ctx, "org.plume.source.sphere", "sph", &sph), PLUME_OK);
    CHECK_STATUS(api->node_create(ctx, "org.plume.vdb.export", "exp", &exp), PLUME_OK);
    CHECK_STATUS(api->node_set_string(exp, "file", file), PLUME_OK);
    plume_node *both[2] = {sph, exp};
    CHECK_STATUS(api->cook(ctx, both, 2, &ci), PLUME_OK);
    CHECK_STATUS(api->sync(ctx), PLUME_OK);
    plume_field_desc far = {sizeof far, "far", PLUME_VALUE_F32, NULL, 0.1, {-500, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &far), PLUME_OK);
    CHECK_STATUS(api->node_create(ctx, "org.plume.vdb.import", "imp", &imp), PLUME_OK);
    char exported[80];
    snprintf(exported, sizeof exported, "%s/s_0001.vdb", dir); /* the export's frame pattern */
    CHECK_STATUS(api->node_set_string(imp, "file", exported), PLUME_OK);
    CHECK_STATUS(api->node_bind(imp, "target", "far"), PLUME_OK);
    int before = l.errors;
    CHECK(api->cook(ctx, &imp, 1, &ci) != PLUME_OK);
    CHECK(l.errors == before + 1);
    const char *want = "node 'imp' (org.plume.vdb.import): field 'far': voxels at";
    if (strncmp(l.last, want, strlen(want)))
        fprintf(stderr, "logged: \"%s\"\n", l.last);
    CHECK(strncmp(l.last, want, strlen(want)) == 0);
    CHECK(strcmp(l.last, api->last_error(ctx)) == 0);
    unlink(exported);
    rmdir(dir);
    api->context_destroy(ctx);
}

static void test_callback_reentry(const plume_plugin *api)
{
    plume_field_desc fd = {sizeof fd, "density", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    plume_cook_info ci = {sizeof ci, 1, 0, 0.04, 0, 1};
    double want = 0, got = -1;
    /* the reference: the same cook without callbacks */
    plume_context *ref = NULL;
    plume_node *rn = NULL;
    CHECK_STATUS(api->context_create(NULL, NULL, &ref), PLUME_OK);
    CHECK_STATUS(api->field_declare(ref, &fd), PLUME_OK);
    CHECK_STATUS(api->node_create(ref, "org.plume.source.sphere", "s", &rn), PLUME_OK);
    CHECK_STATUS(api->cook(ref, &rn, 1, &ci), PLUME_OK);
    CHECK_STATUS(api->field_stat(ref, "density", PLUME_STAT_SUM, &want), PLUME_OK);
    api->context_destroy(ref);
    CHECK(want > 0);

    reentry r = {.api = api};
    plume_host host = {sizeof host, &r, reentry_log, NULL, reentry_cancel};
    CHECK_STATUS(api->context_create(NULL, &host, &r.ctx), PLUME_OK);
    CHECK_STATUS(api->field_declare(r.ctx, &fd), PLUME_OK);
    CHECK_STATUS(api->node_create(r.ctx, "org.plume.source.sphere", "s", &r.node), PLUME_OK);
    /* from is_cancelled, polled during the cook */
    CHECK_STATUS(api->cook(r.ctx, &r.node, 1, &ci), PLUME_OK);
    CHECK(r.polls > 0);
    CHECK(r.refused == 5);
    CHECK(r.accepted == 0);
    if (!strstr(r.refusal, "called from a host callback"))
        fprintf(stderr, "refusal inside the callback: \"%s\"\n", r.refusal), check_failures++;
    CHECK(!strstr(api->last_error(r.ctx), "host callback")); /* the cook's own state again */
    CHECK_STATUS(api->field_stat(r.ctx, "density", PLUME_STAT_SUM, &got), PLUME_OK);
    CHECK(got == want);
    /* from log, during a call that fails: its status and message are the outer call's */
    r.refused = r.accepted = 0;
    CHECK_STATUS(api->node_set_float(r.node, "radius", -1), PLUME_ERR_OUT_OF_RANGE);
    CHECK(r.logs > 0);
    CHECK(r.refused == 5);
    CHECK_MSG(api, r.ctx, "outside its range");
    /* the node and the context survived the destroys tried inside */
    CHECK_STATUS(api->node_set_float(r.node, "radius", 0.3), PLUME_OK);
    CHECK_STATUS(api->sync(r.ctx), PLUME_OK);
    api->context_destroy(r.ctx);

    /* nested: A's is_cancelled cooks B, whose is_cancelled calls into A */
    reentry a = {.api = api};
    nested b = {.outer = &a};
    g_nested = &b;
    plume_host ha = {sizeof ha, &a, NULL, NULL, outer_cancel};
    plume_host hb = {sizeof hb, &b, NULL, NULL, nested_cancel};
    CHECK_STATUS(api->context_create(NULL, &ha, &a.ctx), PLUME_OK);
    CHECK_STATUS(api->context_create(NULL, &hb, &b.ctx), PLUME_OK);
    CHECK_STATUS(api->field_declare(a.ctx, &fd), PLUME_OK);
    CHECK_STATUS(api->field_declare(b.ctx, &fd), PLUME_OK);
    CHECK_STATUS(api->node_create(a.ctx, "org.plume.source.sphere", "s", &a.node), PLUME_OK);
    CHECK_STATUS(api->node_create(b.ctx, "org.plume.source.sphere", "s", &b.node), PLUME_OK);
    CHECK_STATUS(api->cook(a.ctx, &a.node, 1, &ci), PLUME_OK);
    CHECK(b.tried > 0);
    CHECK(a.refused == 5);
    CHECK(a.accepted == 0); /* B's cook went through; nothing of A's did */
    CHECK_STATUS(api->field_stat(a.ctx, "density", PLUME_STAT_SUM, &got), PLUME_OK);
    CHECK(got == want);
    CHECK_STATUS(api->field_stat(b.ctx, "density", PLUME_STAT_SUM, &got), PLUME_OK);
    CHECK(got == want);
    api->context_destroy(b.ctx);
    api->context_destroy(a.ctx);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    plume_plugin_entry_fn entry = (plume_plugin_entry_fn)dlsym(dl, PLUME_PLUGIN_ENTRY_SYMBOL);
    const plume_plugin *api = entry(1, 0);
    CHECK_STATUS(api->init(), PLUME_OK);

    /* NULL handles. */
    double v = 0;
    CHECK_STATUS(api->field_stat(NULL, "x", PLUME_STAT_SUM, &v), PLUME_ERR_INVALID_HANDLE);
    CHECK_MSG(api, NULL, "invalid context handle");
    CHECK_STATUS(api->sync(NULL), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->cook(NULL, NULL, 0, NULL), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->node_set_float(NULL, "radius", 1), PLUME_ERR_INVALID_HANDLE);
    CHECK_MSG(api, NULL, "invalid node handle");
    CHECK_STATUS(api->volume_info(NULL, NULL), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->context_create(NULL, NULL, NULL), PLUME_ERR_INVALID_ARGUMENT);
    api->context_destroy(NULL);
    api->node_destroy(NULL);
    api->volume_close(NULL);

    /* Options the plugin cannot serve. */
    plume_context *ctx = NULL;
    plume_context_options bad = {sizeof bad, 42, 0, 0, PLUME_MODE_OPTIMIZED, 0, 0};
    CHECK_STATUS(api->context_create(&bad, NULL, &ctx), PLUME_ERR_INVALID_ARGUMENT);
    CHECK(ctx == NULL);
    CHECK_MSG(api, NULL, "unknown device");
    plume_context_options bad_passes = {sizeof bad, PLUME_DEVICE_CPU, 0, 0, PLUME_MODE_OPTIMIZED, 0xFFFFFFFFu, 0};
    CHECK_STATUS(api->context_create(&bad_passes, NULL, &ctx), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, NULL, "bits of no pass");

    CHECK_STATUS(api->context_create(NULL, NULL, &ctx), PLUME_OK);
    plume_context *other = NULL;
    CHECK_STATUS(api->context_create(NULL, NULL, &other), PLUME_OK);

    /* Unknown node type. */
    plume_node *node = NULL;
    CHECK_STATUS(api->node_create(ctx, "org.plume.does.not.exist", NULL, &node), PLUME_ERR_NOT_FOUND);
    CHECK(node == NULL);
    CHECK_MSG(api, ctx, "unknown node type 'org.plume.does.not.exist'");
    CHECK_STATUS(api->node_create(ctx, NULL, NULL, &node), PLUME_ERR_NOT_FOUND);
    CHECK_STATUS(api->node_create(ctx, "org.plume.source.sphere", "a:b", &node), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "':' is not allowed");

    /* Parameters of the wrong type, unknown, out of range, bad enum choice. */
    CHECK_STATUS(api->node_create(ctx, "org.plume.source.sphere", "s1", &node), PLUME_OK);
    CHECK_STATUS(api->node_set_string(node, "radius", "big"), PLUME_ERR_TYPE_MISMATCH);
    CHECK_MSG(api, ctx, "parameter 'radius' is a float");
    CHECK_STATUS(api->node_set_int(node, "mode", 1), PLUME_ERR_TYPE_MISMATCH);
    CHECK_STATUS(api->node_set_bool(node, "center", 1), PLUME_ERR_TYPE_MISMATCH);
    CHECK_STATUS(api->node_set_float(node, NULL, 1), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(api->field_stat(ctx, NULL, PLUME_STAT_SUM, &v), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(api->node_set_float(node, "no_such_param", 1), PLUME_ERR_NOT_FOUND);
    CHECK_MSG(api, ctx, "no parameter 'no_such_param'");
    CHECK_STATUS(api->node_set_float(node, "radius", -1), PLUME_ERR_OUT_OF_RANGE);
    CHECK_MSG(api, ctx, "outside its range");
    CHECK_STATUS(api->node_set_float(node, "radius", 0.0 / 0.0), PLUME_ERR_OUT_OF_RANGE);
    CHECK_STATUS(api->node_set_string(node, "mode", "multiply"), PLUME_ERR_OUT_OF_RANGE);
    CHECK_STATUS(api->node_set_string(node, "mode", NULL), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(api->node_set_vec3(node, "center", NULL), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(api->node_set_string(node, "mode", "add"), PLUME_OK);
    CHECK_STATUS(api->node_bind(node, "no_port", "density"), PLUME_ERR_NOT_FOUND);
    /* "" leaves out optional ports only; NULL is no name */
    CHECK_STATUS(api->node_bind(node, "target", ""), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "port 'target' is required: it cannot be left unbound");
    CHECK_STATUS(api->node_bind(node, "target", NULL), PLUME_ERR_INVALID_ARGUMENT);

    /* A cook with a missing input: the default field 'density' is not declared. */
    plume_cook_info info = {sizeof info, 1, 0, 0.04, 0, 1};
    CHECK_STATUS(api->cook(ctx, &node, 1, &info), PLUME_ERR_MISSING_INPUT);
    CHECK_MSG(api, ctx, "'density', which is not declared");
    /* A field of the wrong type on the port. */
    plume_field_desc fd = {sizeof fd, "vel", PLUME_VALUE_VEC3, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_OK);
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "declared twice");
    fd.name = "bad";
    fd.voxel_size = 0;
    CHECK_STATUS(api->field_declare(ctx, &fd), PLUME_ERR_OUT_OF_RANGE);
    CHECK_STATUS(api->node_bind(node, "target", "vel"), PLUME_OK);
    CHECK_STATUS(api->cook(ctx, &node, 1, &info), PLUME_ERR_TYPE_MISMATCH);
    CHECK_MSG(api, ctx, "needs a f32 field");

    /* Cook times that would turn the fields into NaN or zero, and a field that cannot be. */
    plume_cook_info bad_ci[] = {{sizeof info, 1, 0, 0.0 / 0.0, 0, 1}, {sizeof info, 1, 0, 1.0 / 0.0, 0, 1},
                                {sizeof info, 1, 0, -0.04, 0, 1},     {sizeof info, 1, 0.0 / 0.0, 0.04, 0, 1},
                                {sizeof info, 1, 0, 0.04, 2, 1},      {sizeof info, 1, 0, 0.04, 0, 0}};
    for (size_t i = 0; i < sizeof bad_ci / sizeof *bad_ci; i++)
        CHECK_STATUS(api->cook(ctx, &node, 1, &bad_ci[i]), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "info.substep");
    plume_field_desc nan_origin = {sizeof fd, "nan", PLUME_VALUE_F32, NULL, 0.1, {0, 0.0 / 0.0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &nan_origin), PLUME_ERR_OUT_OF_RANGE);
    CHECK_MSG(api, ctx, "must be finite");
    plume_field_desc newline = {sizeof fd, "two\nlines", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &newline), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "control characters");
    /* A kernel scalar: a value of the wrong kind is a type mismatch, one past its type a range
     * error. */
    plume_node *kn = NULL;
    CHECK_STATUS(api->node_create(ctx, "org.plume.kernel", "k", &kn), PLUME_OK);
    CHECK_STATUS(api->node_set_string(kn, "code", "kernel k(field<vec3> vel, i32 n) { for (I in vel) { vel[I] = vec3(f32(n)); } }"),
                 PLUME_OK);
    CHECK_STATUS(api->node_set_int(kn, "n", 5000000000LL), PLUME_ERR_OUT_OF_RANGE);
    CHECK_STATUS(api->node_set_float(kn, "n", 1.5), PLUME_ERR_TYPE_MISMATCH);
    CHECK_STATUS(api->node_set_int(kn, "n", -7), PLUME_OK);
    api->node_destroy(kn);
    /* One field on a port that is read and on one that is written: refused before anything
     * runs (the scene reader has the same check, tests/cli/kernel_scene_test.sh). Two ports
     * that only read it are fine. */
    CHECK_STATUS(api->node_create(ctx, "org.plume.kernel", "alias", &kn), PLUME_OK);
    CHECK_STATUS(api->node_set_string(kn, "code", "kernel k(field<vec3> a, field<vec3> b) { for (I in a) { b[I] = a[I]; } }"),
                 PLUME_OK);
    CHECK_STATUS(api->node_bind(kn, "a", "vel"), PLUME_OK);
    CHECK_STATUS(api->node_bind(kn, "b", "vel"), PLUME_OK);
    CHECK_STATUS(api->cook(ctx, &kn, 1, &info), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, ctx, "ports 'a' and 'b' are both bound to field 'vel', which port 'b' writes");
    api->node_destroy(kn);
    CHECK_STATUS(api->node_create(ctx, "org.plume.kernel", "alias", &kn), PLUME_OK);
    CHECK_STATUS(api->node_set_string(kn, "code",
                                      "kernel k(field<vec3> a, field<vec3> b, field<vec3> c) { for (I in a) { c[I] = a[I] + b[I]; } }"),
                 PLUME_OK);
    CHECK_STATUS(api->node_bind(kn, "a", "vel"), PLUME_OK);
    CHECK_STATUS(api->node_bind(kn, "b", "vel"), PLUME_OK);
    plume_field_desc out = {sizeof fd, "sum", PLUME_VALUE_VEC3, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(ctx, &out), PLUME_OK);
    CHECK_STATUS(api->node_bind(kn, "c", "sum"), PLUME_OK);
    CHECK_STATUS(api->cook(ctx, &kn, 1, &info), PLUME_OK);
    CHECK_STATUS(api->sync(ctx), PLUME_OK);
    api->node_destroy(kn);

    /* plume.validate/1 (ABI 1.8): what the cook would refuse before any work, without cooking. */
    const plume_ext_validate *val = api->get_extension(PLUME_EXT_VALIDATE);
    CHECK(val && val->struct_size >= sizeof *val);
    if (val) {
        CHECK_STATUS(api->node_create(ctx, "org.plume.kernel", "v", &kn), PLUME_OK);
        CHECK_STATUS(val->validate(kn), PLUME_ERR_MISSING_INPUT); /* no code yet */
        CHECK_MSG(api, ctx, "its 'code' parameter is empty");
        CHECK_STATUS(api->node_set_string(kn, "code", "kernel k(field<f32> q, field<f32, 0> t) { for (I in q) { t[] += q[I]; } }"),
                     PLUME_OK);
        CHECK_STATUS(val->validate(kn), PLUME_ERR_MISSING_INPUT); /* 'q' and 't' are not declared */
        CHECK_MSG(api, ctx, "port 'q' is bound to field 'q', which is not declared");
        plume_field_desc q3 = {sizeof fd, "q3", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
        plume_field_desc t0 = {sizeof fd, "t0", PLUME_VALUE_F32, "dense(i,1)", 0.1, {0, 0, 0}, {0, 0, 0}};
        CHECK_STATUS(api->field_declare(ctx, &q3), PLUME_OK);
        CHECK_STATUS(api->field_declare(ctx, &t0), PLUME_OK);
        CHECK_STATUS(api->node_bind(kn, "q", "q3"), PLUME_OK);
        CHECK_STATUS(api->node_bind(kn, "t", "q3"), PLUME_OK); /* read and written: aliasing */
        CHECK_STATUS(val->validate(kn), PLUME_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(api->node_bind(kn, "t", "vel"), PLUME_OK); /* a vec3 field on an f32 port */
        CHECK_STATUS(val->validate(kn), PLUME_ERR_TYPE_MISMATCH);
        CHECK_STATUS(api->node_bind(kn, "t", "sum"), PLUME_OK);
        CHECK_STATUS(val->validate(kn), PLUME_ERR_TYPE_MISMATCH);
        plume_field_desc t3 = {sizeof fd, "t3", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
        CHECK_STATUS(api->field_declare(ctx, &t3), PLUME_OK);
        CHECK_STATUS(api->node_bind(kn, "t", "t3"), PLUME_OK); /* 3-D on a 0-D parameter */
        CHECK_STATUS(val->validate(kn), PLUME_ERR_TYPE_MISMATCH);
        CHECK_MSG(api, ctx, "node 'v' (org.plume.kernel): kernel 'k': parameter 't' is 0-dimensional but field 't3' is 3-dimensional");
        CHECK_STATUS(api->node_bind(kn, "t", "t0"), PLUME_OK);
        plume_stats before, after;
        memset(&before, 0, sizeof before);
        memset(&after, 0, sizeof after);
        before.struct_size = after.struct_size = sizeof before;
        CHECK_STATUS(api->sync(ctx), PLUME_OK);
        CHECK_STATUS(api->get_stats(ctx, &before), PLUME_OK);
        CHECK_STATUS(val->validate(kn), PLUME_OK);
        CHECK_STATUS(api->sync(ctx), PLUME_OK);
        CHECK_STATUS(api->get_stats(ctx, &after), PLUME_OK);
        CHECK(after.tasks_launched == before.tasks_launched); /* nothing ran */
        CHECK_STATUS(api->cook(ctx, &kn, 1, &info), PLUME_OK); /* and a cook of it works */
        CHECK_STATUS(api->sync(ctx), PLUME_OK);
        CHECK_STATUS(api->get_stats(ctx, &after), PLUME_OK);
        CHECK(after.tasks_launched > before.tasks_launched);
        CHECK_STATUS(api->node_set_string(kn, "code", "kernel k(field<f32> q) { q[I] = 1.0; }"), PLUME_ERR_COMPILE);
        CHECK_STATUS(val->validate(kn), PLUME_ERR_COMPILE);
        api->node_destroy(kn);
        CHECK_STATUS(val->validate(NULL), PLUME_ERR_INVALID_HANDLE);
        /* settings the cook refuses at once: validate said OK to them */
        plume_node *sv = NULL, *ev = NULL, *iv = NULL;
        CHECK_STATUS(api->node_create(ctx, "org.plume.smoke.source", "sv", &sv), PLUME_OK);
        CHECK_STATUS(api->node_set_string(sv, "shape", "vdb"), PLUME_OK);
        CHECK_STATUS(api->node_bind(sv, "density", "q3"), PLUME_OK);
        CHECK_STATUS(api->node_bind(sv, "temperature", "t3"), PLUME_OK);
        CHECK_STATUS(val->validate(sv), PLUME_ERR_MISSING_INPUT);
        CHECK_MSG(api, ctx, "shape is vdb but no file is given");
        CHECK_STATUS(api->node_create(ctx, "org.plume.vdb.export", "ev", &ev), PLUME_OK);
        CHECK_STATUS(api->node_bind(ev, "density", "q3"), PLUME_OK);
        CHECK_STATUS(api->node_bind(ev, "temperature", "t3"), PLUME_OK);
        CHECK_STATUS(api->node_set_string(ev, "file", ""), PLUME_OK);
        CHECK_STATUS(val->validate(ev), PLUME_ERR_INVALID_ARGUMENT);
        CHECK_MSG(api, ctx, "its 'file' parameter is empty");
        CHECK_STATUS(api->node_set_string(ev, "file", "x_####.vdb"), PLUME_OK);
        CHECK_STATUS(api->node_set_string(ev, "temperature_name", "density"), PLUME_OK);
        CHECK_STATUS(val->validate(ev), PLUME_ERR_INVALID_ARGUMENT);
        CHECK_MSG(api, ctx, "would both be written as grid 'density'");
        CHECK_STATUS(api->node_create(ctx, "org.plume.vdb.import", "iv", &iv), PLUME_OK);
        CHECK_STATUS(api->node_bind(iv, "target", "q3"), PLUME_OK);
        CHECK_STATUS(val->validate(iv), PLUME_ERR_MISSING_INPUT);
        CHECK_MSG(api, ctx, "no file given");
        api->node_destroy(sv);
        api->node_destroy(ev);
        api->node_destroy(iv);
    }

    /* A node of one context cooked in another. */
    CHECK_STATUS(api->cook(other, &node, 1, &info), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_MSG(api, other, "another context");

    /* Handles of the wrong kind. */
    CHECK_STATUS(api->sync((plume_context *)node), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->node_set_float((plume_node *)ctx, "radius", 1), PLUME_ERR_INVALID_HANDLE);
    plume_volume *vol = NULL;
    CHECK_STATUS(api->volume_open(ctx, "nothing", &vol), PLUME_ERR_NOT_FOUND);
    CHECK_STATUS(api->volume_open(ctx, "vel", &vol), PLUME_OK);
    CHECK_STATUS(api->volume_block_origins(vol, 5, 1, (int32_t[3]){0}), PLUME_ERR_OUT_OF_RANGE);
    CHECK_STATUS(api->volume_read_block(vol, NULL, NULL, NULL), PLUME_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(api->node_bind((plume_node *)vol, "target", "x"), PLUME_ERR_INVALID_HANDLE);

    /* Destroyed handles. */
    api->node_destroy(node);
    CHECK_STATUS(api->node_set_float(node, "radius", 1), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->cook(ctx, &node, 1, &info), PLUME_ERR_INVALID_HANDLE);
    api->node_destroy(node); /* twice: ignored */
    api->volume_close(vol);
    CHECK_STATUS(api->volume_info(vol, &(plume_volume_info){.struct_size = sizeof(plume_volume_info)}),
                 PLUME_ERR_INVALID_HANDLE);
    api->context_destroy(ctx);
    CHECK_STATUS(api->sync(ctx), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->node_create(ctx, "org.plume.source.sphere", NULL, &node), PLUME_ERR_INVALID_HANDLE);
    CHECK(strstr(api->last_error(ctx), "invalid context") != NULL);
    api->context_destroy(ctx); /* twice: ignored */

    /* A memory budget too small for the work fails clearly: first too small for a field's
     * fixed part, then too small for what a cook activates. */
    plume_context_options tiny = {sizeof tiny, PLUME_DEVICE_CPU, 1, 4096, PLUME_MODE_OPTIMIZED, 0, 0};
    plume_context *small = NULL;
    CHECK_STATUS(api->context_create(&tiny, NULL, &small), PLUME_OK);
    plume_field_desc dd = {sizeof dd, "density", PLUME_VALUE_F32, NULL, 0.01, {0, 0, 0}, {0, 0, 0}};
    CHECK(api->field_declare(small, &dd) != PLUME_OK);
    CHECK_MSG(api, small, "budget");
    api->context_destroy(small);
    plume_context_options mb = {sizeof mb, PLUME_DEVICE_CPU, 1, 2u << 20, PLUME_MODE_OPTIMIZED, 0, 0};
    CHECK_STATUS(api->context_create(&mb, NULL, &small), PLUME_OK);
    CHECK_STATUS(api->field_declare(small, &dd), PLUME_OK);
    plume_node *big = NULL;
    CHECK_STATUS(api->node_create(small, "org.plume.source.sphere", "big", &big), PLUME_OK);
    CHECK_STATUS(api->node_set_float(big, "radius", 1.0), PLUME_OK); /* ~4M voxels, 16 MB */
    CHECK_STATUS(api->cook(small, &big, 1, &info), PLUME_ERR_MEMORY_BUDGET);
    CHECK_MSG(api, small, "memory budget exceeded");
    api->context_destroy(small);

    plume_field_desc od = {sizeof od, "density", PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
    CHECK_STATUS(api->field_declare(other, &od), PLUME_OK);
    plume_volume *ov = NULL;
    CHECK_STATUS(api->volume_open(other, "density", &ov), PLUME_OK);
    test_struct_sizes(api, other, ov);
    api->volume_close(ov);
    api->context_destroy(other);
    test_volume_errors(api);
    test_callback_reentry(api);
    test_logged_failure(api);

    /* The last deinit destroys a context the host left alive, threads and all, and a handle
     * from before it is refused after the next init even though a new context takes its slot. */
    int threads_before = thread_count();
    plume_context_options two = {sizeof two, PLUME_DEVICE_CPU, 2, 0, PLUME_MODE_OPTIMIZED, 0, 0};
    plume_context *left = NULL;
    CHECK_STATUS(api->context_create(&two, NULL, &left), PLUME_OK);
    CHECK_STATUS(api->field_declare(left, &od), PLUME_OK);
    plume_node *sph = NULL;
    CHECK_STATUS(api->node_create(left, "org.plume.source.sphere", "s", &sph), PLUME_OK);
    CHECK_STATUS(api->cook(left, &sph, 1, &info), PLUME_OK);
    plume_node *inc = NULL; /* a kernel: the pool, launch and compile threads start */
    CHECK_STATUS(api->node_create(left, "org.plume.kernel", "inc", &inc), PLUME_OK);
    CHECK_STATUS(api->node_set_string(inc, "code",
                                      "kernel a(field<f32> density) { for (I in density) { density[I] += 1.0; } }"),
                 PLUME_OK);
    CHECK_STATUS(api->cook(left, &inc, 1, &info), PLUME_OK);
    CHECK_STATUS(api->sync(left), PLUME_OK);
    CHECK(thread_count() > threads_before);
    api->deinit();
    /* a joined thread leaves /proc a moment after its join returns */
    for (int i = 0; i < 200 && thread_count() != threads_before; i++)
        usleep(10000);
    CHECK(thread_count() == threads_before);
    CHECK_STATUS(api->init(), PLUME_OK);
    plume_context *fresh = NULL;
    CHECK_STATUS(api->context_create(NULL, NULL, &fresh), PLUME_OK);
    CHECK_STATUS(api->sync(left), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->node_set_float(sph, "radius", 0.5), PLUME_ERR_INVALID_HANDLE);
    CHECK_STATUS(api->sync(fresh), PLUME_OK);
    api->context_destroy(fresh);

    api->deinit();
    /* after the last deinit no context can be made (its threads would outlive the dlclose) */
    plume_context *late = NULL;
    CHECK_STATUS(api->context_create(NULL, NULL, &late), PLUME_ERR_INVALID_ARGUMENT);
    CHECK(late == NULL);
    CHECK_MSG(api, NULL, "call init() first");
    dlclose(dl);
    CHECK_DONE();
}
