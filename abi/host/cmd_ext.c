/* Commands served by plugin extensions: vdb (plume.vdb/1), render (plume.render/1) and
 * compile (plume.compile/1). Each says clearly when the loaded plugin lacks the extension. */
#include "cli.h"

#include <jansson.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

static const void *need_ext(const char *cmd, host_plugin *p, const char *id)
{
    const void *ext = p->api->get_extension(id);
    if (!ext)
        cli_error(cmd, "the plugin %s does not provide %s, which this command needs", p->path, id);
    return ext;
}

static void print_info_text(const char *json_text)
{
    json_t *root = json_loads(json_text, 0, NULL);
    if (!root) {
        puts(json_text);
        return;
    }
    json_t *grids = json_object_get(root, "grids");
    printf("%s: %zu grid(s), file format %lld\n", json_string_value(json_object_get(root, "file")),
           json_array_size(grids), (long long)json_integer_value(json_object_get(root, "format_version")));
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(root, "metadata"), key, v)
        printf("  %s = %s\n", key, json_string_value(json_object_get(v, "value")));
    size_t i;
    json_t *g;
    json_array_foreach(grids, i, g) {
        printf("  [%lld] %-20s %-8s %-11s %10lld active voxels, %lld leaves", (long long)json_integer_value(json_object_get(g, "index")),
               json_string_value(json_object_get(g, "name")), json_string_value(json_object_get(g, "type")),
               json_string_value(json_object_get(g, "class")),
               (long long)json_integer_value(json_object_get(g, "active_voxels")),
               (long long)json_integer_value(json_object_get(g, "leaves")));
        json_t *vs = json_object_get(g, "voxel_size");
        if (!vs) { /* a type OpenVDB does not know: its transform was not read */
            printf(", transform unknown  (unsupported type)\n");
            continue;
        }
        double vx = json_number_value(json_array_get(vs, 0)), vy = json_number_value(json_array_get(vs, 1)),
               vz = json_number_value(json_array_get(vs, 2));
        if (vx == vy && vx == vz)
            printf(", voxel %g", vx);
        else
            printf(", voxel %g x %g x %g", vx, vy, vz);
        /* terms off the diagonal turn or swap axes, a negative one mirrors: the import node
         * refuses both (with the same tolerance), so say so here */
        json_t *m = json_object_get(g, "index_to_world");
        int turned = 0;
        double tol = 1e-6 * vx;
        for (size_t r = 0; r < 3; r++)
            for (size_t c = 0; c < 3; c++) {
                double v = json_number_value(json_array_get(json_array_get(m, r), c));
                if (r == c ? !(v > 0) : fabs(v) > tol)
                    turned = 1;
            }
        int linear = !json_is_false(json_object_get(g, "linear"));
        if (!linear)
            printf(", frustum (not linear)");
        else if (turned)
            printf(", rotated or mirrored");
        json_t *bb = json_object_get(g, "bbox");
        if (bb)
            printf(", bbox [%lld %lld %lld]..[%lld %lld %lld]",
                   (long long)json_integer_value(json_array_get(json_array_get(bb, 0), 0)),
                   (long long)json_integer_value(json_array_get(json_array_get(bb, 0), 1)),
                   (long long)json_integer_value(json_array_get(json_array_get(bb, 0), 2)),
                   (long long)json_integer_value(json_array_get(json_array_get(bb, 1), 0)),
                   (long long)json_integer_value(json_array_get(json_array_get(bb, 1), 1)),
                   (long long)json_integer_value(json_array_get(json_array_get(bb, 1), 2)));
        if (bb && linear) {
            /* The world box of the voxel centres: two grids at the same index box can sit in
             * different places (a translation), which the index box alone does not show. */
            double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
            for (int corner = 0; corner < 8; corner++) {
                double ix[3];
                for (int a = 0; a < 3; a++)
                    ix[a] = (double)json_integer_value(json_array_get(json_array_get(bb, (corner >> a) & 1), (size_t)a));
                for (size_t r = 0; r < 3; r++) {
                    json_t *row = json_array_get(m, r);
                    double w = json_number_value(json_array_get(row, 3));
                    for (size_t c = 0; c < 3; c++)
                        w += json_number_value(json_array_get(row, c)) * ix[c];
                    lo[r] = fmin(lo[r], w);
                    hi[r] = fmax(hi[r], w);
                }
            }
            printf(", world [%g %g %g]..[%g %g %g]", lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
        }
        if (!json_is_true(json_object_get(g, "supported")))
            printf("  (unsupported type)");
        printf("\n");
    }
    json_decref(root);
}

static volatile sig_atomic_t interrupted;
__attribute__((unused)) static void on_sigint(int s)
{
    (void)s;
    interrupted = 1;
    signal(SIGINT, SIG_DFL);
}
__attribute__((unused)) static int32_t cancelled(void *u)
{
    (void)u;
    return interrupted;
}

static int with_context(const char *cmd, const cli_common *c, host_plugin *p, plume_context **ctx, const char *ext_id,
                        const void **ext)
{
    if (cli_load(cmd, c, p))
        return -1;
    *ext = need_ext(cmd, p, ext_id);
    plume_context_options o = {sizeof o, PLUME_DEVICE_CPU, 0, 0, PLUME_MODE_OPTIMIZED, 0, 0};
    if (!*ext || cli_context(cmd, p, &o, ctx)) {
        host_plugin_unload(p);
        return -1;
    }
    return 0;
}

int cmd_vdb(int argc, char **argv, const cli_common *c)
{
    static const char usage[] = "usage: plume vdb info FILE [--json]\n"
                                "       plume vdb convert IN OUT [--half] [--compression none|zip|blosc]\n";
    if (argc < 1 || !strcmp(argv[0], "--help")) {
        fputs(usage, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : 0;
    }
    int info = !strcmp(argv[0], "info");
    if (!info && strcmp(argv[0], "convert")) {
        cli_error("vdb", "unknown subcommand '%s' (info or convert)", argv[0]);
        return EXIT_USAGE;
    }
    const char *files[2] = {NULL, NULL};
    int nfiles = 0, as_json = 0, half = 0;
    plume_vdb_compression comp = PLUME_VDB_COMPRESS_BLOSC;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (info && !strcmp(argv[i], "--json")) {
            as_json = 1;
        } else if (!info && !strcmp(argv[i], "--half")) {
            half = 1;
        } else if (!info && !strcmp(argv[i], "--compression")) {
            const char *v = i + 1 < argc ? argv[++i] : "";
            if (!strcmp(v, "none"))
                comp = PLUME_VDB_COMPRESS_NONE;
            else if (!strcmp(v, "zip"))
                comp = PLUME_VDB_COMPRESS_ZIP;
            else if (!strcmp(v, "blosc"))
                comp = PLUME_VDB_COMPRESS_BLOSC;
            else {
                cli_error("vdb", "--compression must be none, zip or blosc");
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-') {
            cli_error("vdb", "unknown option '%s'", argv[i]);
            fputs(usage, stderr);
            return EXIT_USAGE;
        } else if (nfiles < (info ? 1 : 2)) {
            files[nfiles++] = argv[i];
        } else {
            cli_error("vdb", "unexpected argument '%s' (%s)", argv[i],
                      info ? "plume vdb info FILE [--json]" : "plume vdb convert IN OUT [options]");
            return EXIT_USAGE;
        }
    }
    if (nfiles != (info ? 1 : 2)) {
        cli_error("vdb", info ? "which file? (plume vdb info FILE)" : "need an input and an output (plume vdb convert IN OUT)");
        return EXIT_USAGE;
    }
    host_plugin p;
    plume_context *ctx = NULL;
    const void *e = NULL;
    if (with_context("vdb", c, &p, &ctx, PLUME_EXT_VDB, &e))
        return EXIT_WORK;
    const plume_ext_vdb *ext = e;
    int rc = 0;
    if (info) {
        char *text = NULL;
        if (ext->info_json(ctx, files[0], &text) != PLUME_OK) {
            cli_error("vdb info", "%s", p.api->last_error(ctx));
            rc = EXIT_WORK;
        } else {
            if (as_json)
                puts(text);
            else
                print_info_text(text);
            p.api->free_string(text);
        }
    } else if (ext->convert(ctx, files[0], files[1], half, comp) != PLUME_OK) {
        cli_error("vdb convert", "%s", p.api->last_error(ctx));
        rc = EXIT_WORK;
    } else {
        fprintf(stderr, "plume: wrote %s\n", files[1]);
    }
    p.api->context_destroy(ctx);
    host_plugin_unload(&p);
    return rc;
}

int cmd_render(int argc, char **argv, const cli_common *c)
{
    static const char usage[] = "usage: plume render FILE.vdb [--grid NAME] [--size WxH] -o OUT.png\n";
    const char *in = NULL, *out = NULL, *grid = NULL;
    unsigned w = 0, h = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--grid") || !strcmp(argv[i], "--size")) &&
                   (i + 1 >= argc || !argv[i + 1][0] || (argv[i + 1][0] == '-' && argv[i + 1][1]))) {
            /* "--grid -o x.png" took -o as the grid's name and then x.png as a second input */
            cli_error("render", "%s needs a value", argv[i]);
            return EXIT_USAGE;
        } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--grid")) {
            const char **slot = argv[i][1] == 'o' ? &out : &grid;
            if (*slot) {
                cli_error("render", "%s given twice", argv[i]);
                return EXIT_USAGE;
            }
            *slot = argv[++i];
        } else if (!strcmp(argv[i], "--size")) {
            char extra;
            if (sscanf(argv[++i], "%ux%u%c", &w, &h, &extra) != 2 || !w || !h || w > 8192 || h > 8192) {
                cli_error("render", "--size must look like 640x480, each side 1 to 8192");
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-') {
            cli_error("render", "unknown option '%s'", argv[i]);
            return EXIT_USAGE;
        } else if (!in) {
            in = argv[i];
        } else {
            cli_error("render", "only one input file");
            return EXIT_USAGE;
        }
    }
    if (!in || !out) {
        cli_error("render", "need an input .vdb and -o OUT.png");
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    host_plugin p;
    plume_context *ctx = NULL;
    const void *e = NULL;
    if (with_context("render", c, &p, &ctx, PLUME_EXT_RENDER, &e))
        return EXIT_WORK;
    const plume_ext_render *ext = e;
    int rc = 0;
    if (ext->render_vdb(ctx, in, grid, out, w, h) != PLUME_OK) {
        cli_error("render", "%s", p.api->last_error(ctx));
        rc = EXIT_WORK;
    } else {
        fprintf(stderr, "plume: wrote %s\n", out);
    }
    p.api->context_destroy(ctx);
    host_plugin_unload(&p);
    return rc;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, k;
    do {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *g = realloc(buf, cap);
            if (!g) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = g;
        }
        k = fread(buf + n, 1, 4096, f);
        n += k;
    } while (k == 4096);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Writes text to path through a temporary name in the same folder, so a reader never sees
 * half a listing. */
static int write_atomic(const char *path, const char *text)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

int cmd_compile(int argc, char **argv, const cli_common *c)
{
    static const char usage[] =
        "usage: plume compile FILE.pk [--kernel NAME] [--target cpu|ptx] "
        "[--emit check|ast|ir|llvm|asm|ptx] [-o OUT]\n"
        "  --kernel NAME   only this kernel (default: all of them)\n"
        "  --target        the device listings are made for (ptx: NVIDIA GPUs; --emit ptx implies it)\n"
        "  --emit          check (default): the kernels' signatures, after every check of the\n"
        "                  language; ast: the checked syntax tree; ir: Plume's IR as lowered\n"
        "                  and after each optimizer pass, per task; llvm, asm, ptx: the\n"
        "                  generated code of each task\n"
        "  -o OUT          write the listing to OUT instead of stdout\n"
        "Errors and warnings go to stderr as FILE:LINE:COL: ..., with the line and a caret.\n";
    const char *file = NULL, *kernel = NULL, *out = NULL;
    plume_emit emit = PLUME_EMIT_CHECK;
    plume_device target = PLUME_DEVICE_CPU;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--kernel") && v) {
            kernel = v;
            i++;
        } else if (!strcmp(a, "-o") && v) {
            out = v;
            i++;
        } else if (!strcmp(a, "--target") && v) {
            if (!strcmp(v, "cpu"))
                target = PLUME_DEVICE_CPU;
            else if (!strcmp(v, "ptx"))
                target = PLUME_DEVICE_CUDA;
            else {
                cli_error("compile", "--target takes cpu or ptx, not '%s'", v);
                return EXIT_USAGE;
            }
            i++;
        } else if (!strcmp(a, "--emit") && v) {
            static const char *const names[] = {"ir", "llvm", "asm", "ptx", "ast", "check"};
            int found = -1;
            for (int k = 0; k < 6; k++)
                if (!strcmp(v, names[k]))
                    found = k;
            if (found < 0) {
                cli_error("compile", "--emit takes check, ast, ir, llvm, asm or ptx, not '%s'", v);
                return EXIT_USAGE;
            }
            emit = found;
            i++;
        } else if (a[0] == '-' || file) {
            cli_error("compile", "unexpected argument '%s'", a);
            fputs(usage, stderr);
            return EXIT_USAGE;
        } else {
            file = a;
        }
    }
    if (!file) {
        cli_error("compile", "which file? (plume compile FILE.pk)");
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    if (emit == PLUME_EMIT_PTX)
        target = PLUME_DEVICE_CUDA;
    size_t len = 0;
    char *src = slurp(file, &len);
    if (!src) {
        cli_error("compile", "cannot read %s: %s", file, strerror(errno));
        return EXIT_WORK;
    }
    if (strlen(src) != len) {
        cli_error("compile", "%s is not a text file (it holds a NUL byte)", file);
        free(src);
        return EXIT_WORK;
    }
    host_plugin p;
    plume_context *ctx = NULL;
    const void *e = NULL;
    if (with_context("compile", c, &p, &ctx, PLUME_EXT_COMPILE, &e)) {
        free(src);
        return EXIT_WORK;
    }
    const plume_ext_compile *ext = e;
    char *text = NULL;
    int rc = 0;
    if (ext->compile(ctx, file, src, kernel, target, emit, &text) != PLUME_OK) {
        /* Diagnostics already carry file:line:col, the line and a caret. */
        fprintf(stderr, "%s\n", p.api->last_error(ctx));
        rc = EXIT_WORK;
    } else if (out) {
        if (write_atomic(out, text) != 0) {
            cli_error("compile", "cannot write %s: %s", out, strerror(errno));
            rc = EXIT_WORK;
        }
    } else {
        fputs(text, stdout);
    }
    if (text)
        p.api->free_string(text);
    free(src);
    p.api->context_destroy(ctx);
    host_plugin_unload(&p);
    return rc;
}
