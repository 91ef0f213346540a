#define _GNU_SOURCE
#include "scene.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Error reporting: "<file>: <json path>: <message>". */
static int fail(const scene *sc, char *err, size_t n, const char *jpath, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(const scene *sc, char *err, size_t n, const char *jpath, const char *fmt, ...)
{
    int k = snprintf(err, n, "%s: %s: ", sc->path, jpath);
    if (k < 0 || (size_t)k >= n)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(err + k, n - (size_t)k, fmt, ap);
    va_end(ap);
    static const char cut[] = "\n[... message cut]";
    if (len >= 0 && (size_t)len >= n - (size_t)k && n >= sizeof cut)
        memcpy(err + n - sizeof cut, cut, sizeof cut);
    return -1;
}

static const char *kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int known_key(const char *key, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp(key, *keys))
            return 1;
    return 0;
}

/* Unknown keys are errors: a typo in a scene should not be silently ignored. */
static int check_keys(const scene *sc, json_t *obj, const char *jpath, const char *const *keys,
                      char *err, size_t n)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (!known_key(key, keys)) {
            char all[512] = "";
            for (const char *const *k = keys; *k; k++) {
                strncat(all, *k, sizeof all - strlen(all) - 3);
                if (k[1])
                    strncat(all, ", ", sizeof all - strlen(all) - 1);
            }
            return fail(sc, err, n, jpath, "unknown key '%s' (expected one of: %s)", key, all);
        }
    }
    return 0;
}

static int get_number(const scene *sc, json_t *obj, const char *key, const char *jpath,
                      double *out, int required, char *err, size_t n)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return fail(sc, err, n, jpath, "missing key '%s' (a number)", key);
        return 0;
    }
    if (!json_is_number(v))
        return fail(sc, err, n, jpath, "'%s' must be a number, not %s", key, kind(v));
    *out = json_number_value(v);
    return 0;
}

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ull;
    }
}


/* Scene and kernel files are text a person wrote: past this, a path such as /dev/zero or a
 * FIFO that never ends is refused rather than read until memory runs out. */
#define TEXT_FILE_MAX (64u << 20)
static char *read_text_file(const char *path, size_t *len_out);

int scene_load(scene *sc, const char *path, char *err, size_t n)
{
    memset(sc, 0, sizeof *sc);
    sc->path = strdup(path);
    char *tmp = strdup(path);
    sc->dir = strdup(dirname(tmp));
    free(tmp);
    sc->frame_start = 1;
    sc->frame_end = 24;
    sc->fps = 24;
    sc->substeps_min = sc->substeps_max = 1;
    json_error_t je;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, n, "%s: is a folder, not a scene file", path);
        return -1;
    }
    /* a UTF-8 byte order mark (some Windows editors write one) is not JSON: skipped */
    json_t *root = NULL;
    char *text = read_text_file(path, NULL);
    if (text) {
        size_t skip = strncmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        root = json_loads(text + skip, JSON_REJECT_DUPLICATES, &je);
        free(text);
    } else {
        root = json_load_file(path, JSON_REJECT_DUPLICATES, &je); /* for its message */
    }
    if (!root) {
        if (je.line > 0)
            snprintf(err, n, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
        else
            snprintf(err, n, "%s: %s", path, je.text);
        return -1;
    }
    sc->json = root;
    if (!json_is_object(root))
        return fail(sc, err, n, "$", "a scene must be a JSON object, not %s", kind(root));
    /* What the scene says, not how it is written: keys sorted, no spaces, no description, so
     * that re-indenting it or editing its description does not stop a --resume. */
    sc->content_hash = 0xcbf29ce484222325ull;
    sc->kernels_hash = 0xcbf29ce484222325ull;
    json_t *meaning = json_deep_copy(root);
    char *canon = NULL;
    if (meaning) {
        json_object_del(meaning, "description");
        canon = json_dumps(meaning, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref(meaning);
    }
    if (!canon) {
        snprintf(err, n, "%s: out of memory", path);
        return -1;
    }
    hash_bytes(&sc->content_hash, canon, strlen(canon));
    free(canon);
    static const char *const top_keys[] = {"plume_scene", "name", "description", "frames", "substeps",
                                           "deterministic", "fields", "nodes", "init", "substep", "frame",
                                           NULL};
    if (check_keys(sc, root, "$", top_keys, err, n))
        return -1;
    json_t *ver = json_object_get(root, "plume_scene");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        return fail(sc, err, n, "$.plume_scene", "must be 1 (the scene format version)");
    json_t *name = json_object_get(root, "name");
    if (name && !json_is_string(name))
        return fail(sc, err, n, "$.name", "must be a string, not %s", kind(name));
    if (name) {
        /* it names the default output folder out/<name>: one folder, inside out/ */
        const char *nm = json_string_value(name);
        if (!nm[0] || !strcmp(nm, ".") || !strcmp(nm, "..") || strpbrk(nm, "/\\"))
            return fail(sc, err, n, "$.name", "'%s' cannot name the output folder out/<name>: "
                        "give a non-empty name without '/' or '\\', other than '.' and '..'", nm);
        sc->name = strdup(nm);
    } else {
        char *t = strdup(path);
        char *b = basename(t);
        char *dot = strrchr(b, '.');
        if (dot)
            *dot = 0;
        sc->name = strdup(b[0] && strcmp(b, ".") && strcmp(b, "..") ? b : "scene");
        free(t);
    }

    json_t *det = json_object_get(root, "deterministic");
    if (det && !json_is_boolean(det))
        return fail(sc, err, n, "$.deterministic", "must be true or false, not %s", kind(det));
    sc->deterministic = det && json_is_true(det);

    json_t *frames = json_object_get(root, "frames");
    if (frames) {
        if (!json_is_object(frames))
            return fail(sc, err, n, "$.frames", "must be an object like {\"start\": 1, \"end\": 24, \"fps\": 24}");
        static const char *const keys[] = {"start", "end", "fps", NULL};
        double a = (double)sc->frame_start, b = (double)sc->frame_end;
        if (check_keys(sc, frames, "$.frames", keys, err, n) ||
            get_number(sc, frames, "start", "$.frames", &a, 0, err, n) ||
            get_number(sc, frames, "end", "$.frames", &b, 0, err, n) ||
            get_number(sc, frames, "fps", "$.frames", &sc->fps, 0, err, n))
            return -1;
        /* the range test first: a cast of a double past int64's range is undefined */
        if (!(fabs(a) <= 1e9 && fabs(b) <= 1e9))
            return fail(sc, err, n, "$.frames", "start and end must lie within +-1000000000");
        if (a != (int64_t)a || b != (int64_t)b || b < a)
            return fail(sc, err, n, "$.frames", "start and end must be integers with start <= end");
        if (!(sc->fps > 0))
            return fail(sc, err, n, "$.frames.fps", "must be > 0");
        sc->frame_start = (int64_t)a;
        sc->frame_end = (int64_t)b;
    }
    json_t *sub = json_object_get(root, "substeps");
    if (sub) {
        if (!json_is_object(sub))
            return fail(sc, err, n, "$.substeps", "must be an object like {\"min\": 1, \"max\": 4, \"cfl\": 1.0, \"velocity\": \"vel\"}");
        static const char *const keys[] = {"min", "max", "cfl", "velocity", NULL};
        double mn = 1, mx = 1;
        if (check_keys(sc, sub, "$.substeps", keys, err, n) ||
            get_number(sc, sub, "min", "$.substeps", &mn, 0, err, n) ||
            get_number(sc, sub, "max", "$.substeps", &mx, 0, err, n) ||
            get_number(sc, sub, "cfl", "$.substeps", &sc->cfl, 0, err, n))
            return -1;
        if (mn < 1 || mx < mn || mx > 1000 || mn != (int)mn || mx != (int)mx)
            return fail(sc, err, n, "$.substeps", "need integers 1 <= min <= max <= 1000");
        if (sc->cfl < 0)
            return fail(sc, err, n, "$.substeps.cfl", "must be >= 0");
        sc->substeps_min = (uint32_t)mn;
        sc->substeps_max = (uint32_t)mx;
        json_t *vel = json_object_get(sub, "velocity");
        if (vel && !json_is_string(vel))
            return fail(sc, err, n, "$.substeps.velocity", "must be a field name");
        if (vel)
            sc->velocity = strdup(json_string_value(vel));
    }

    json_t *fields = json_object_get(root, "fields");
    if (!json_is_array(fields))
        return fail(sc, err, n, "$.fields", "a scene needs an array of fields");
    if (json_array_size(fields) == 0)
        return fail(sc, err, n, "$.fields", "a scene needs at least one field (this array is empty)");
    json_t *nodes = json_object_get(root, "nodes");
    if (!json_is_array(nodes))
        return fail(sc, err, n, "$.nodes", "a scene needs an array of nodes");
    return 0;
}

static int vec3_of(json_t *v, double out[3])
{
    if (!json_is_array(v) || json_array_size(v) != 3)
        return -1;
    for (int k = 0; k < 3; k++) {
        json_t *c = json_array_get(v, (size_t)k);
        if (!json_is_number(c))
            return -1;
        out[k] = json_number_value(c);
    }
    return 0;
}

static int declare_fields(scene *sc, const plume_plugin *api, plume_context *ctx, char *err, size_t n)
{
    json_t *fields = json_object_get(sc->json, "fields");
    size_t i;
    json_t *f;
    sc->field_names = calloc(json_array_size(fields), sizeof *sc->field_names);
    json_array_foreach(fields, i, f) {
        char jp[64];
        snprintf(jp, sizeof jp, "$.fields[%zu]", i);
        if (!json_is_object(f))
            return fail(sc, err, n, jp, "a field must be an object, not %s", kind(f));
        static const char *const keys[] = {"name", "type", "layout", "voxel_size", "origin", "background", NULL};
        if (check_keys(sc, f, jp, keys, err, n))
            return -1;
        plume_field_desc d = {sizeof d, NULL, PLUME_VALUE_F32, NULL, 0.1, {0, 0, 0}, {0, 0, 0}};
        json_t *name = json_object_get(f, "name");
        if (!json_is_string(name) || !json_string_length(name))
            return fail(sc, err, n, jp, "missing 'name' (a non-empty string)");
        d.name = json_string_value(name);
        if (strchr(d.name, ':'))
            return fail(sc, err, n, jp, "field '%s': names with ':' belong to the nodes' scratch "
                        "fields (\"<node>:<what>\", docs/nodes.md); choose another name", d.name);
        json_t *type = json_object_get(f, "type");
        if (type) {
            const char *t = json_is_string(type) ? json_string_value(type) : "";
            if (!strcmp(t, "f32") || !strcmp(t, "float"))
                d.value_type = PLUME_VALUE_F32;
            else if (!strcmp(t, "vec3"))
                d.value_type = PLUME_VALUE_VEC3;
            else
                return fail(sc, err, n, jp, "'type' must be \"f32\" or \"vec3\"");
        }
        json_t *layout = json_object_get(f, "layout");
        if (layout && !json_is_string(layout))
            return fail(sc, err, n, jp, "'layout' must be a string such as \"default\"");
        if (layout && strcmp(json_string_value(layout), "default"))
            d.layout = json_string_value(layout);
        if (get_number(sc, f, "voxel_size", jp, &d.voxel_size, 1, err, n))
            return -1;
        json_t *origin = json_object_get(f, "origin");
        if (origin && vec3_of(origin, d.origin))
            return fail(sc, err, n, jp, "'origin' must be an array of 3 numbers");
        json_t *bg = json_object_get(f, "background");
        if (bg && json_is_number(bg)) {
            d.background[0] = d.background[1] = d.background[2] = json_number_value(bg);
        } else if (bg && d.value_type == PLUME_VALUE_F32) {
            return fail(sc, err, n, jp, "'background' of an f32 field must be one number");
        } else if (bg && vec3_of(bg, d.background)) {
            return fail(sc, err, n, jp, "'background' must be a number or an array of 3 numbers");
        }
        if (api->field_declare(ctx, &d) != PLUME_OK)
            return fail(sc, err, n, jp, "%s", api->last_error(ctx));
        sc->field_names[sc->nfields++] = strdup(d.name);
        if (sc->velocity && !strcmp(d.name, sc->velocity)) {
            sc->velocity_type = (int)d.value_type + 1;
            /* the CFL counts the velocity's own voxels (a finer field elsewhere, say an
             * unrelated mask, does not make the solver substep more) */
            sc->voxel_size = d.voxel_size;
        }
    }
    return 0;
}

static const plume_param_desc *find_param(const plume_node_desc *d, const char *id)
{
    for (uint32_t i = 0; i < d->param_count; i++)
        if (!strcmp(d->params[i].id, id))
            return &d->params[i];
    return NULL;
}

static char *read_text_file(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *g = realloc(buf, cap);
            if (!g) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = g;
        }
        size_t k = fread(buf + len, 1, 4096, f);
        len += k;
        if (k < 4096)
            break;
        if (len > TEXT_FILE_MAX) {
            free(buf);
            fclose(f);
            errno = EFBIG;
            return NULL;
        }
    }
    fclose(f);
    buf[len] = 0;
    if (len_out)
        *len_out = len;
    return buf;
}

/* Records an output file parameter's resolved path; fails when another one writes it too. */
static int note_output(scene *sc, plume_node *node, const char *full, const char *jp, char *err, size_t n)
{
    for (uint32_t i = 0; i < sc->noutputs; i++)
        if (!strcmp(sc->outputs[i], full))
            return fail(sc, err, n, jp, "writes %s, which %s writes too: one would overwrite the "
                        "other's frames", full, sc->output_paths[i]);
    char **o = realloc(sc->outputs, (sc->noutputs + 1) * sizeof *o);
    if (o)
        sc->outputs = o;
    char **q = realloc(sc->output_paths, (sc->noutputs + 1) * sizeof *q);
    if (q)
        sc->output_paths = q;
    plume_node **w = realloc(sc->output_nodes, (sc->noutputs + 1) * sizeof *w);
    if (w)
        sc->output_nodes = w;
    if (!o || !q || !w)
        return fail(sc, err, n, jp, "out of memory");
    sc->output_nodes[sc->noutputs] = node;
    sc->outputs[sc->noutputs] = strdup(full);
    sc->output_paths[sc->noutputs] = strdup(jp);
    if (!sc->outputs[sc->noutputs] || !sc->output_paths[sc->noutputs]) {
        free(sc->outputs[sc->noutputs]);
        free(sc->output_paths[sc->noutputs]);
        return fail(sc, err, n, jp, "out of memory");
    }
    sc->noutputs++;
    return 0;
}

static int set_param(scene *sc, const plume_plugin *api, plume_context *ctx, plume_node *node,
                     const plume_node_desc *nd, const char *key, json_t *v, const char *jp,
                     const char *out_dir, char *err, size_t n)
{
    const plume_param_desc *p = find_param(nd, key);
    plume_status st = PLUME_OK;
    if (!p) {
        /* Not declared by the type: a parameter the instance adds (a kernel node's scalars,
         * known once its code is set); the JSON value picks the setter. */
        double vec[3];
        if (json_is_boolean(v))
            st = api->node_set_bool(node, key, json_is_true(v));
        else if (json_is_integer(v))
            st = api->node_set_int(node, key, (int64_t)json_integer_value(v));
        else if (json_is_number(v))
            st = api->node_set_float(node, key, json_number_value(v));
        else if (json_is_array(v) && !vec3_of(v, vec))
            st = api->node_set_vec3(node, key, vec);
        else if (json_is_string(v))
            st = api->node_set_string(node, key, json_string_value(v));
        else if (json_is_array(v))
            return fail(sc, err, n, jp, "'%s': an array sets a vec3 or ivec3 parameter and must hold 3 "
                        "numbers; this one holds %zu element%s%s", key, json_array_size(v),
                        json_array_size(v) == 1 ? "" : "s",
                        json_array_size(v) == 3 ? ", not all numbers" : "");
        else
            return fail(sc, err, n, jp, "'%s' must be a number, true or false, a string or an array of "
                        "3 numbers, not %s", key, kind(v));
        if (st == PLUME_ERR_NOT_FOUND) /* a kernel node lists its own; `plume nodes` the types' */
            return fail(sc, err, n, jp, "%s%s", api->last_error(ctx),
                        strstr(api->last_error(ctx), "its parameters") ? "" : " (see `plume nodes`)");
        if (st != PLUME_OK)
            return fail(sc, err, n, jp, "%s", api->last_error(ctx));
        return 0;
    }
    switch (p->type) {
    case PLUME_PARAM_BOOL:
        if (!json_is_boolean(v))
            return fail(sc, err, n, jp, "'%s' must be true or false, not %s", key, kind(v));
        st = api->node_set_bool(node, key, json_is_true(v));
        break;
    case PLUME_PARAM_INT:
        if (!json_is_integer(v))
            return fail(sc, err, n, jp, "'%s' must be an integer, not %s", key, kind(v));
        st = api->node_set_int(node, key, (int64_t)json_integer_value(v));
        break;
    case PLUME_PARAM_FLOAT:
        if (!json_is_number(v))
            return fail(sc, err, n, jp, "'%s' must be a number, not %s", key, kind(v));
        st = api->node_set_float(node, key, json_number_value(v));
        break;
    case PLUME_PARAM_VEC3: {
        double vec[3];
        if (vec3_of(v, vec))
            return fail(sc, err, n, jp, "'%s' must be an array of 3 numbers", key);
        st = api->node_set_vec3(node, key, vec);
        break;
    }
    case PLUME_PARAM_CODE:
        /* Code is given inline or as {"file": "kernels/x.pk"} relative to the scene. */
        if (json_is_object(v)) {
            static const char *const code_keys[] = {"file", NULL};
            if (check_keys(sc, v, jp, code_keys, err, n))
                return -1;
            json_t *file = json_object_get(v, "file");
            if (!json_is_string(file))
                return fail(sc, err, n, jp, "'%s' must be a string of code or {\"file\": \"path.pk\"}", key);
            const char *rel = json_string_value(file);
            char full[4096];
            snprintf(full, sizeof full, "%s%s%s", rel[0] == '/' ? "" : sc->dir, rel[0] == '/' ? "" : "/", rel);
            struct stat kst;
            if (stat(full, &kst) == 0 && S_ISDIR(kst.st_mode))
                return fail(sc, err, n, jp, "kernel file %s is a folder, not a file", full);
            size_t tlen = 0;
            char *text = read_text_file(full, &tlen);
            if (!text && errno == EFBIG)
                return fail(sc, err, n, jp, "kernel file %s holds more than %u MiB: not kernel code", full,
                            TEXT_FILE_MAX >> 20);
            if (!text)
                return fail(sc, err, n, jp, "cannot read kernel file %s: %s", full, strerror(errno));
            if (strlen(text) != tlen) {
                free(text);
                return fail(sc, err, n, jp, "kernel file %s is not a text file (it holds a NUL byte)", full);
            }
            if (!text[strspn(text, " \t\r\n")]) {
                free(text);
                return fail(sc, err, n, jp, "kernel file %s is empty", full);
            }
            /* each file's name (as the scene writes it: the scene may move) and length first:
             * text moved from one file to the next is a change */
            uint64_t tl = (uint64_t)strlen(text);
            hash_bytes(&sc->kernels_hash, rel, strlen(rel) + 1);
            hash_bytes(&sc->kernels_hash, &tl, sizeof tl);
            hash_bytes(&sc->kernels_hash, text, (size_t)tl);
            /* Compile errors then cite the file (file:line:col), not the node. */
            if (find_param(nd, "source_name"))
                api->node_set_string(node, "source_name", full);
            st = api->node_set_string(node, key, text);
            free(text);
            break;
        }
        /* inline code is a string, and not an empty one (the node then had no ports, and the
         * first bind said "has no port 'q'", as if the port's name were wrong) */
        if (json_is_string(v) && !json_string_value(v)[strspn(json_string_value(v), " \t\r\n")])
            return fail(sc, err, n, jp, "'%s' is empty: give the kernel's source, or {\"file\": \"kernels/x.pk\"}",
                        key);
        __attribute__((fallthrough));
    case PLUME_PARAM_ENUM:
    case PLUME_PARAM_STRING:
        if (!json_is_string(v))
            return fail(sc, err, n, jp, "'%s' must be a string, not %s", key, kind(v));
        st = api->node_set_string(node, key, json_string_value(v));
        break;
    case PLUME_PARAM_FILE_PATH: {
        if (!json_is_string(v))
            return fail(sc, err, n, jp, "'%s' must be a file path string, not %s", key, kind(v));
        const char *rel = json_string_value(v);
        size_t rl = strlen(rel);
        int output = (p->flags & PLUME_PARAM_FLAG_FILE_OUTPUT) != 0;
        /* an input may be empty (unused: a sphere source's file); an output must name a file */
        if ((output && !rl) || (rl && rel[rl - 1] == '/'))
            return fail(sc, err, n, jp, "'%s' must name a file, not %s", key,
                        rl ? "a folder" : "nothing (an empty string)");
        if (!rl) {
            st = api->node_set_string(node, key, "");
            break;
        }
        const char *base = (p->flags & PLUME_PARAM_FLAG_FILE_OUTPUT) ? out_dir : sc->dir;
        char full[4096];
        if (rel[0] == '/' || !base || !base[0])
            snprintf(full, sizeof full, "%s", rel);
        else
            snprintf(full, sizeof full, "%s/%s", base, rel);
        if (output && note_output(sc, node, full, jp, err, n))
            return -1;
        /* A file to read that is not there stops the cook now, at its place in the scene,
         * instead of in the node's first cook; a sequence (a run of #) is read frame by frame. */
        if (!output && !strchr(rel, '#') && access(full, R_OK) != 0)
            return fail(sc, err, n, jp, "cannot read %s: %s%s", full, strerror(errno),
                        rel[0] == '/' ? "" : " (a relative path is taken from the scene file's folder)");
        st = api->node_set_string(node, key, full);
        break;
    }
    default:
        return fail(sc, err, n, jp, "parameter '%s' has a type this host does not know", key);
    }
    if (st != PLUME_OK && p->type == PLUME_PARAM_CODE && st == PLUME_ERR_NOT_FOUND &&
        find_param(nd, "kernel") && strstr(api->last_error(ctx), "no kernel named")) {
        /* the code is fine; the kernel it was asked for (set before it) is not in it */
        char kp[300];
        size_t base = strlen(jp) - strlen(key);
        snprintf(kp, sizeof kp, "%.*skernel", (int)base, jp);
        return fail(sc, err, n, kp, "%s", api->last_error(ctx));
    }
    if (st != PLUME_OK)
        return fail(sc, err, n, jp, "%s", api->last_error(ctx));
    return 0;
}

/* Output FILE_PATH parameters left at their default still go under out_dir. */
static int default_outputs(scene *sc, const plume_plugin *api, plume_context *ctx, plume_node *node,
                           const plume_node_desc *nd, json_t *params, const char *out_dir,
                           const char *jp, char *err, size_t n)
{
    for (uint32_t i = 0; i < nd->param_count; i++) {
        const plume_param_desc *p = &nd->params[i];
        if (p->type != PLUME_PARAM_FILE_PATH || !(p->flags & PLUME_PARAM_FLAG_FILE_OUTPUT))
            continue;
        if (params && json_object_get(params, p->id))
            continue;
        char full[4096], dp[300];
        snprintf(full, sizeof full, "%s/%s", out_dir, p->default_string);
        snprintf(dp, sizeof dp, "%s.params.%s (its default)", jp, p->id);
        if (note_output(sc, node, full, dp, err, n))
            return -1;
        if (api->node_set_string(node, p->id, full) != PLUME_OK)
            return fail(sc, err, n, jp, "%s", api->last_error(ctx));
    }
    return 0;
}

/* The checks a node's cook makes of its ports (plugin/node.c, pl_node_cook), made when the
 * scene is read: a misspelt or mistyped field then stops the cook before anything is
 * simulated, naming its place in the scene, instead of after the first frame's solve. Names
 * with ':' (the nodes' scratch fields, made while cooking) are left to the cook. */
/* Port i of node and the field it is bound to (the scene's bind, else the port's default);
 * -1 when the plugin cannot say (last_error). */
static int port_binding(const plume_plugin *api, plume_node *node, json_t *bind, uint32_t i,
                        const plume_port_desc **p, json_t **b, const char **name)
{
    if (api->node_port(node, i, p) != PLUME_OK)
        return -1;
    *b = bind ? json_object_get(bind, (*p)->id) : NULL;
    *name = *b ? json_string_value(*b) : (*p)->default_field;
    return 0;
}

static int check_ports(scene *sc, const plume_plugin *api, plume_context *ctx, plume_node *node,
                       json_t *bind, const char *jp, char *err, size_t n)
{
    uint32_t count = 0;
    if (api->node_port_count(node, &count) != PLUME_OK)
        return fail(sc, err, n, jp, "%s", api->last_error(ctx));
    json_t *fields = json_object_get(sc->json, "fields");
    for (uint32_t i = 0; i < count; i++) {
        const plume_port_desc *p;
        json_t *b;
        const char *name;
        if (port_binding(api, node, bind, i, &p, &b, &name))
            return fail(sc, err, n, jp, "%s", api->last_error(ctx));
        char pp[256];
        if (b)
            snprintf(pp, sizeof pp, "%s.bind.%s", jp, p->id);
        else
            snprintf(pp, sizeof pp, "%s.bind (port '%s' unbound)", jp, p->id);
        if (!name || !name[0]) {
            if (!p->optional)
                return fail(sc, err, n, pp, "port '%s' is not bound to a field", p->id);
            continue;
        }
        if (strchr(name, ':'))
            continue;
        json_t *fd = NULL, *f;
        size_t k;
        json_array_foreach(fields, k, f) {
            if (!strcmp(json_string_value(json_object_get(f, "name")), name))
                fd = f;
        }
        if (!fd) {
            if (!p->optional || b)
                return fail(sc, err, n, pp, "port '%s' is bound to field '%s'%s, which is not "
                            "declared in $.fields", p->id, name, b ? "" : " (its default)");
            continue;
        }
        json_t *ty = json_object_get(fd, "type");
        int vec = json_is_string(ty) && !strcmp(json_string_value(ty), "vec3");
        int want = p->value_type == PLUME_VALUE_VEC3;
        if (vec != want)
            return fail(sc, err, n, pp, "port '%s' needs a %s field but '%s' is a %s field",
                        p->id, want ? "vec3" : "f32", name, vec ? "vec3" : "f32");
        /* as the cook: a written field bound to a second port is read while it changes */
        for (uint32_t j = 0; j < i; j++) {
            const plume_port_desc *q;
            json_t *qb;
            const char *qname;
            if (port_binding(api, node, bind, j, &q, &qb, &qname))
                return fail(sc, err, n, jp, "%s", api->last_error(ctx));
            if (!qname || strcmp(qname, name) ||
                (p->direction == PLUME_PORT_IN && q->direction == PLUME_PORT_IN))
                continue;
            return fail(sc, err, n, pp, "ports '%s' and '%s' are both bound to field '%s', which "
                        "port '%s' writes: a node's ports must be different fields when one of "
                        "them is written (bind the output to another field)", q->id, p->id, name,
                        p->direction != PLUME_PORT_IN ? p->id : q->id);
        }
    }
    return 0;
}

static int create_nodes(scene *sc, const plume_plugin *api, plume_context *ctx, const char *out_dir,
                        char *err, size_t n)
{
    json_t *nodes = json_object_get(sc->json, "nodes");
    sc->nodes = calloc(json_array_size(nodes) + 1, sizeof *sc->nodes);
    size_t i;
    json_t *nj;
    json_array_foreach(nodes, i, nj) {
        char jp[64];
        snprintf(jp, sizeof jp, "$.nodes[%zu]", i);
        if (!json_is_object(nj))
            return fail(sc, err, n, jp, "a node must be an object, not %s", kind(nj));
        static const char *const keys[] = {"name", "type", "params", "bind", NULL};
        if (check_keys(sc, nj, jp, keys, err, n))
            return -1;
        json_t *name = json_object_get(nj, "name"), *type = json_object_get(nj, "type");
        if (!json_is_string(name) || !json_string_length(name))
            return fail(sc, err, n, jp, "missing 'name' (a non-empty string)");
        for (size_t k = 0; k < i; k++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(nodes, k), "name")),
                        json_string_value(name)))
                return fail(sc, err, n, jp, "node name '%s' is used twice", json_string_value(name));
        if (!json_is_string(type))
            return fail(sc, err, n, jp, "missing 'type' (a node type id such as org.plume.source.sphere)");
        const plume_node_desc *nd = api->find_node_type(json_string_value(type));
        if (!nd) {
            char tp[80];
            snprintf(tp, sizeof tp, "%s.type", jp);
            return fail(sc, err, n, tp, "unknown node type '%s' (`plume nodes` lists them)",
                        json_string_value(type));
        }
        plume_node *node;
        if (api->node_create(ctx, nd->id, json_string_value(name), &node) != PLUME_OK)
            return fail(sc, err, n, jp, "%s", api->last_error(ctx));
        sc->nodes[sc->nnodes++] = node;
        json_t *params = json_object_get(nj, "params");
        if (params && !json_is_object(params))
            return fail(sc, err, n, jp, "'params' must be an object");
        const char *key;
        json_t *v;
        /* Declared parameters first, code last among them (a kernel node's source_name names
         * the code in its messages, whatever the keys' order); then the others, which the code
         * may have added (a kernel node's scalars). */
        for (int pass = 0; pass < 3; pass++) {
            json_object_foreach(params, key, v) {
                const plume_param_desc *pd = find_param(nd, key);
                int want = !pd ? 2 : pd->type == PLUME_PARAM_CODE ? 1 : 0;
                if (want != pass)
                    continue;
                char pp[256];
                snprintf(pp, sizeof pp, "%s.params.%s", jp, key);
                if (set_param(sc, api, ctx, node, nd, key, v, pp, out_dir, err, n))
                    return -1;
            }
        }
        if (default_outputs(sc, api, ctx, node, nd, params, out_dir, jp, err, n))
            return -1;
        json_t *bind = json_object_get(nj, "bind");
        if (bind && !json_is_object(bind))
            return fail(sc, err, n, jp, "'bind' must be an object of port: field");
        json_object_foreach(bind, key, v) {
            char bp[256];
            snprintf(bp, sizeof bp, "%s.bind.%s", jp, key);
            if (!json_is_string(v) && !json_is_null(v))
                return fail(sc, err, n, bp, "must be a field name (or null to leave an optional port out)");
            if (json_is_string(v) && !json_string_value(v)[0])
                return fail(sc, err, n, bp, "must be a field name (or null to leave an optional port out), not \"\"");
            if (api->node_bind(node, key, json_is_null(v) ? "" : json_string_value(v)) != PLUME_OK)
                return fail(sc, err, n, bp, "%s", api->last_error(ctx));
        }
        if (check_ports(sc, api, ctx, node, bind, jp, err, n))
            return -1;
        /* the rest of what the first cook would refuse (ABI 1.8): a kernel's field of the
         * wrong dimensions, say */
        const plume_ext_validate *val = api->get_extension(PLUME_EXT_VALIDATE);
        if (val && val->struct_size >= sizeof *val && val->validate(node) != PLUME_OK)
            return fail(sc, err, n, jp, "%s", api->last_error(ctx));
    }
    return 0;
}

static int build_stage(scene *sc, const char *key, scene_stage *st, char *err, size_t n)
{
    json_t *arr = json_object_get(sc->json, key);
    char jp[64];
    snprintf(jp, sizeof jp, "$.%s", key);
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return fail(sc, err, n, jp, "must be an array of node names");
    st->nodes = calloc(json_array_size(arr) + 1, sizeof *st->nodes);
    json_t *nodes = json_object_get(sc->json, "nodes");
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        snprintf(jp, sizeof jp, "$.%s[%zu]", key, i);
        if (!json_is_string(v))
            return fail(sc, err, n, jp, "must be a node name, not %s", kind(v));
        size_t k;
        json_t *nj;
        int found = -1;
        json_array_foreach(nodes, k, nj) {
            if (!strcmp(json_string_value(json_object_get(nj, "name")), json_string_value(v)))
                found = (int)k;
        }
        if (found < 0)
            return fail(sc, err, n, jp, "no node named '%s' in $.nodes", json_string_value(v));
        st->nodes[st->count++] = sc->nodes[found];
    }
    return 0;
}

int scene_instantiate(scene *sc, const plume_plugin *api, plume_context *ctx, const char *out_dir,
                      char *err, size_t n)
{
    if (declare_fields(sc, api, ctx, err, n) || create_nodes(sc, api, ctx, out_dir, err, n) ||
        build_stage(sc, "init", &sc->init, err, n) || build_stage(sc, "substep", &sc->substep, err, n) ||
        build_stage(sc, "frame", &sc->frame, err, n))
        return -1;
    if (sc->velocity && !sc->velocity_type)
        return fail(sc, err, n, "$.substeps.velocity", "no field named '%s' in $.fields", sc->velocity);
    if (sc->velocity && sc->velocity_type != (int)PLUME_VALUE_VEC3 + 1)
        return fail(sc, err, n, "$.substeps.velocity", "field '%s' is not a vec3 field: the substeps "
                    "follow the largest speed of a velocity", sc->velocity);
    if (!sc->init.count && !sc->substep.count && !sc->frame.count)
        return fail(sc, err, n, "$", "nothing to cook: 'init', 'substep' and 'frame' are all empty");
    return 0;
}

void scene_free(scene *sc)
{
    for (uint32_t i = 0; i < sc->noutputs; i++) {
        free(sc->outputs[i]);
        free(sc->output_paths[i]);
    }
    free(sc->outputs);
    free(sc->output_paths);
    free(sc->output_nodes);
    free(sc->path);
    free(sc->dir);
    free(sc->name);
    free(sc->velocity);
    if (sc->json)
        json_decref(sc->json);
    free(sc->nodes);
    for (uint32_t i = 0; i < sc->nfields; i++)
        free(sc->field_names[i]);
    free(sc->field_names);
    free(sc->init.nodes);
    free(sc->substep.nodes);
    free(sc->frame.nodes);
    memset(sc, 0, sizeof *sc);
}
