#define _GNU_SOURCE
#include "vdbio_test_util.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int tu_failures;

char *tu_make_temp_dir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char *path = NULL;
    if (asprintf(&path, "%s/plume-%s-XXXXXX", base, tag) < 0)
        return NULL;
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

void tu_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = NULL;
        if (asprintf(&p, "%s/%s", dir, e->d_name) >= 0) {
            if (tu_is_dir(p)) {
                chmod(p, 0755);
                tu_remove_dir(p);
            } else {
                unlink(p);
            }
            free(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

int tu_run(const char *cmd, char **out)
{
    char *full = NULL;
    if (asprintf(&full, "%s 2>&1", cmd) < 0)
        return -1;
    FILE *p = popen(full, "r");
    free(full);
    if (!p)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 1024) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    if (buf)
        buf[len] = '\0';
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

char *tu_read_file(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

int tu_copy_prefix(const char *src, const char *dst, long n)
{
    long len;
    char *buf = tu_read_file(src, &len);
    if (!buf)
        return -1;
    int rc = tu_write_file(dst, buf, (size_t)(n < len ? n : len));
    free(buf);
    return rc;
}

long tu_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int tu_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tu_list_vdb(const char *dir, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0, cap = 0;
    char **list = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".vdb"))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            list = realloc(list, (size_t)cap * sizeof *list);
        }
        if (asprintf(&list[n], "%s/%s", dir, e->d_name) >= 0)
            n++;
    }
    closedir(d);
    qsort(list, (size_t)n, sizeof *list, cmp_str);
    *out = list;
    return n;
}

void tu_free_list(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

int tu_reference_dump(const char *python, const char *script, const char *vdb, const char *json)
{
    char *cmd = NULL, *out = NULL;
    if (asprintf(&cmd, "'%s' '%s' dump '%s' '%s'", python, script, vdb, json) < 0)
        return 1;
    int rc = tu_run(cmd, &out);
    if (rc == SKIP_CODE)
        printf("SKIP: %s", out ? out : "pyopenvdb missing\n");
    else if (rc != 0)
        fprintf(stderr, "reference dump of %s failed (%d):\n%s\n", vdb, rc, out ? out : "");
    free(cmd);
    free(out);
    return rc == 0 ? 0 : rc == SKIP_CODE ? SKIP_CODE : 1;
}

/* ---------------------------------------------------------------- comparisons */

static int close_enough(double a, double b, double tol)
{
    if (tol == 0.0)
        return (float)a == (float)b || (isnan(a) && isnan(b));
    return fabs(a - b) <= tol * fabs(b) + tol * (1.0 / 8192.0);
}

static int leaf_voxel_active(const uint64_t mask[8], int n)
{
    return (int)((mask[n >> 6] >> (n & 63)) & 1u);
}

/* Parses "[a, b, c]" into up to 3 numbers; returns how many. */
static int parse_numbers(const char *s, double v[3])
{
    int n = 0;
    while (*s && n < 3) {
        char *end;
        double d = strtod(s, &end);
        if (end != s) {
            v[n++] = d;
            s = end;
        } else {
            s++;
        }
    }
    return n;
}

static int compare_meta(const plm_vdb_grid *g, int count, const char *key, json_t *ref,
                        const char *label)
{
    int fails = 0;
    for (int i = 0; i < count; i++) {
        plm_vdb_meta m;
        if (plm_vdb_grid_meta(g, i, &m, NULL) != PLM_VDB_OK || strcmp(m.key, key))
            continue;
        if (json_is_string(ref)) {
            if (strcmp(m.value, json_string_value(ref))) {
                fails++;
                fprintf(stderr, "%s: metadata %s: vdbio \"%s\", pyopenvdb \"%s\"\n", label, key,
                        m.value, json_string_value(ref));
            }
        } else if (json_is_boolean(ref)) {
            const char *want = json_is_true(ref) ? "true" : "false";
            if (strcmp(m.value, want)) {
                fails++;
                fprintf(stderr, "%s: metadata %s: vdbio %s, pyopenvdb %s\n", label, key,
                        m.value, want);
            }
        } else if (json_is_number(ref)) {
            double v = strtod(m.value, NULL), want = json_number_value(ref);
            if (fabs(v - want) > 1e-7 * fabs(want)) {
                fails++;
                fprintf(stderr, "%s: metadata %s: vdbio %s, pyopenvdb %.17g\n", label, key,
                        m.value, want);
            }
        } else if (json_is_array(ref)) {
            double v[3] = {0, 0, 0};
            int n = parse_numbers(m.value, v);
            if (n != (int)json_array_size(ref)) {
                fails++;
                fprintf(stderr, "%s: metadata %s: vdbio \"%s\" has %d numbers\n", label, key,
                        m.value, n);
            }
            for (int k = 0; k < n && k < (int)json_array_size(ref); k++) {
                double want = json_number_value(json_array_get(ref, (size_t)k));
                if (fabs(v[k] - want) > 1e-7 * fabs(want)) {
                    fails++;
                    fprintf(stderr, "%s: metadata %s[%d]: vdbio %g, pyopenvdb %g\n", label, key,
                            k, v[k], want);
                }
            }
        }
        return fails;
    }
    fprintf(stderr, "%s: metadata %s missing in vdbio's list\n", label, key);
    return 1;
}

#define RCHECK(cond, ...)                                                                    \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fails++;                                                                         \
            fprintf(stderr, "%s: ", label);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

static int compare_grid(const plm_vdb_grid *g, json_t *r, double tol, const char *label)
{
    int fails = 0;
    plm_vdb_grid_info in;
    if (plm_vdb_grid_get_info(g, &in, NULL) != PLM_VDB_OK) {
        fprintf(stderr, "%s: no info\n", label);
        return 1;
    }
    const char *vtype = json_string_value(json_object_get(r, "value_type"));
    RCHECK(vtype && !strcmp(in.type_name, vtype), "value type %s, pyopenvdb %s", in.type_name,
           vtype ? vtype : "?");
    const char *cls = json_string_value(json_object_get(r, "class"));
    RCHECK(cls && !strcmp(plm_vdb_class_name(in.grid_class), cls), "class %s, pyopenvdb %s",
           plm_vdb_class_name(in.grid_class), cls ? cls : "?");
    RCHECK(in.saved_as_half == json_is_true(json_object_get(r, "saved_as_half")),
           "saved_as_half %d", in.saved_as_half);
    json_int_t avc = json_integer_value(json_object_get(r, "active_voxel_count"));
    RCHECK((json_int_t)in.active_voxel_count == avc, "active voxels %llu, pyopenvdb %lld",
           (unsigned long long)in.active_voxel_count, (long long)avc);
    json_int_t lc = json_integer_value(json_object_get(r, "leaf_count"));
    RCHECK((json_int_t)in.file_leaf_count == lc, "leaves %llu, pyopenvdb %lld",
           (unsigned long long)in.file_leaf_count, (long long)lc);
    if (in.active_voxel_count > 0) {
        for (int k = 0; k < 3; k++) {
            json_int_t lo = json_integer_value(json_array_get(json_object_get(r, "bbox_min"), k));
            json_int_t hi = json_integer_value(json_array_get(json_object_get(r, "bbox_max"), k));
            RCHECK(in.bbox_min[k] == lo && in.bbox_max[k] == hi, "bbox axis %d [%d, %d] vs [%lld, %lld]",
                   k, in.bbox_min[k], in.bbox_max[k], (long long)lo, (long long)hi);
        }
    }
    RCHECK(in.is_linear == json_is_true(json_object_get(r, "is_linear")), "is_linear %d",
           in.is_linear);
    for (int k = 0; k < 3; k++) {
        double vs = json_number_value(json_array_get(json_object_get(r, "voxel_size"), (size_t)k));
        RCHECK(fabs(in.voxel_size[k] - vs) <= 1e-12 * fabs(vs), "voxel size %g vs %g",
               in.voxel_size[k], vs);
    }
    json_t *samples = json_object_get(r, "transform_samples");
    for (size_t s = 0; s < json_array_size(samples); s++) {
        json_t *smp = json_array_get(samples, s), *ijk = json_object_get(smp, "index"),
               *w = json_object_get(smp, "world");
        double idx[4] = {0, 0, 0, 1};
        for (int k = 0; k < 3; k++)
            idx[k] = json_number_value(json_array_get(ijk, (size_t)k));
        for (int row = 0; row < 3; row++) {
            double got = 0;
            for (int c = 0; c < 4; c++)
                got += in.index_to_world[row][c] * idx[c];
            double want = json_number_value(json_array_get(w, (size_t)row));
            RCHECK(fabs(got - want) <= 1e-9 * (1.0 + fabs(want)),
                   "index (%g %g %g) -> world[%d] %.17g, pyopenvdb %.17g", idx[0], idx[1], idx[2],
                   row, got, want);
        }
    }
    json_t *bg = json_object_get(r, "background");
    for (int k = 0; k < in.components; k++) {
        double want = json_is_array(bg) ? json_number_value(json_array_get(bg, (size_t)k))
                                        : json_number_value(bg);
        RCHECK(close_enough(in.background[k], want, 0), "background[%d] %g vs %g", k,
               (double)in.background[k], want);
    }
    json_t *meta = json_object_get(r, "metadata");
    RCHECK((size_t)in.meta_count == json_object_size(meta), "%d metadata entries, pyopenvdb %zu",
           in.meta_count, json_object_size(meta));
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val) { fails += compare_meta(g, in.meta_count, key, val, label); }
    if (in.type == PLM_VDB_TYPE_UNSUPPORTED)
        return fails;

    json_t *leaves = json_object_get(r, "leaves"), *tiles = json_object_get(r, "tiles");
    RCHECK(json_object_size(leaves) == in.file_leaf_count, "reference has %zu leaves",
           json_object_size(leaves));
    RCHECK(json_array_size(tiles) == in.active_tile_count, "%llu tiles, pyopenvdb %zu",
           (unsigned long long)in.active_tile_count, json_array_size(tiles));
    uint64_t tile_leaves = 0;
    for (size_t t = 0; t < json_array_size(tiles); t++) {
        json_t *tl = json_array_get(tiles, t);
        json_int_t d = json_integer_value(json_array_get(json_object_get(tl, "max"), 0)) -
                       json_integer_value(json_array_get(json_object_get(tl, "min"), 0)) + 1;
        tile_leaves += (uint64_t)(d / 8) * (uint64_t)(d / 8) * (uint64_t)(d / 8);
    }
    RCHECK(in.leaf_count == in.file_leaf_count + tile_leaves,
           "leaf_count %llu, expected %llu stored + %llu from tiles",
           (unsigned long long)in.leaf_count, (unsigned long long)in.file_leaf_count,
           (unsigned long long)tile_leaves);

    const int nc = in.components;
    float *vals = malloc(sizeof(float) * 512 * 3);
    int value_fails = 0;
    for (uint64_t i = 0; i < in.leaf_count && value_fails < 10; i++) {
        int32_t o[3];
        uint64_t mask[8];
        if (plm_vdb_read_leaf(g, i, o, vals, mask, NULL) != PLM_VDB_OK) {
            RCHECK(0, "read_leaf %llu failed", (unsigned long long)i);
            break;
        }
        if (i < in.file_leaf_count) {
            char k[64];
            snprintf(k, sizeof k, "%d,%d,%d", o[0], o[1], o[2]);
            json_t *lf = json_object_get(leaves, k);
            if (!lf) {
                RCHECK(0, "leaf at %s not in the reference", k);
                value_fails++;
                continue;
            }
            json_t *rv = json_object_get(lf, "values"), *ra = json_object_get(lf, "active");
            for (int n = 0; n < 512; n++) {
                int act = (int)json_integer_value(json_array_get(ra, (size_t)n));
                if (act != leaf_voxel_active(mask, n)) {
                    RCHECK(0, "leaf %s voxel %d active %d, pyopenvdb %d", k, n,
                           leaf_voxel_active(mask, n), act);
                    value_fails++;
                }
                json_t *v = json_array_get(rv, (size_t)n);
                for (int c = 0; c < nc; c++) {
                    double want = json_number_value(nc == 1 ? v : json_array_get(v, (size_t)c));
                    if (!close_enough(vals[n * nc + c], want, tol)) {
                        RCHECK(0, "leaf %s voxel %d[%d] = %.9g, pyopenvdb %.9g", k, n, c,
                               (double)vals[n * nc + c], want);
                        value_fails++;
                    }
                }
            }
        } else {
            /* voxelized tile: must lie inside one reference tile and carry its value */
            int found = 0;
            for (size_t t = 0; t < json_array_size(tiles) && !found; t++) {
                json_t *tl = json_array_get(tiles, t), *mn = json_object_get(tl, "min"),
                       *mx = json_object_get(tl, "max");
                int inside = 1;
                for (int k = 0; k < 3; k++)
                    inside = inside && o[k] >= json_integer_value(json_array_get(mn, (size_t)k)) &&
                             o[k] + 7 <= json_integer_value(json_array_get(mx, (size_t)k));
                if (!inside)
                    continue;
                found = 1;
                json_t *v = json_object_get(tl, "value");
                for (int n = 0; n < 512; n++)
                    for (int c = 0; c < nc; c++) {
                        double want =
                            json_number_value(nc == 1 ? v : json_array_get(v, (size_t)c));
                        if (!close_enough(vals[n * nc + c], want, tol) || !leaf_voxel_active(mask, n)) {
                            RCHECK(0, "tile leaf (%d %d %d) voxel %d wrong", o[0], o[1], o[2], n);
                            value_fails++;
                            n = 512;
                            break;
                        }
                    }
            }
            if (!found) {
                RCHECK(0, "tile leaf (%d %d %d) lies in no reference tile", o[0], o[1], o[2]);
                value_fails++;
            }
        }
    }
    free(vals);
    return fails;
}

int tu_compare_reference(const plm_vdb_file *file, const char *json_path, double tol)
{
    json_error_t jerr;
    json_t *root = json_load_file(json_path, 0, &jerr);
    if (!root) {
        fprintf(stderr, "%s: %s\n", json_path, jerr.text);
        tu_failures++;
        return 1;
    }
    int fails = 0;
    json_t *grids = json_object_get(root, "grids");
    const char *label = json_string_value(json_object_get(root, "file"));
    RCHECK((size_t)plm_vdb_grid_count(file) == json_array_size(grids), "%d grids, pyopenvdb %zu",
           plm_vdb_grid_count(file), json_array_size(grids));
    for (size_t i = 0; i < json_array_size(grids); i++) {
        json_t *r = json_array_get(grids, i);
        const char *name = json_string_value(json_object_get(r, "name"));
        int nth = 0; /* pyopenvdb keeps grids of one name in file order */
        for (size_t j = 0; j < i; j++)
            nth += !strcmp(json_string_value(json_object_get(json_array_get(grids, j), "name")), name);
        const plm_vdb_grid *g = NULL;
        plm_vdb_error err;
        if (plm_vdb_find_grid(file, name, nth, &g, &err) != PLM_VDB_OK) {
            RCHECK(0, "%s", err.message);
            continue;
        }
        char glabel[512];
        snprintf(glabel, sizeof glabel, "%s: grid \"%s\"[%d]", label, name, nth);
        fails += compare_grid(g, r, tol, glabel);
    }
    /* file metadata */
    json_t *fm = json_object_get(root, "file_metadata");
    RCHECK((size_t)plm_vdb_file_meta_count(file) == json_object_size(fm),
           "%d file metadata entries, pyopenvdb %zu", plm_vdb_file_meta_count(file),
           json_object_size(fm));
    const char *key;
    json_t *val;
    json_object_foreach(fm, key, val)
    {
        int found = 0;
        for (int i = 0; i < plm_vdb_file_meta_count(file); i++) {
            plm_vdb_meta m;
            if (plm_vdb_file_meta(file, i, &m, NULL) == PLM_VDB_OK && !strcmp(m.key, key)) {
                found = 1;
                if (json_is_string(val))
                    RCHECK(!strcmp(m.value, json_string_value(val)), "file metadata %s", key);
            }
        }
        RCHECK(found, "file metadata %s missing", key);
    }
    json_decref(root);
    tu_failures += fails;
    return fails;
}

/* ---------------------------------------------------------------- grid copies and diffs */

typedef struct leaf_ref {
    int32_t o[3];
    uint64_t index;
} leaf_ref;

static int cmp_leaf_ref(const void *a, const void *b)
{
    const leaf_ref *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->o[k] != y->o[k])
            return x->o[k] < y->o[k] ? -1 : 1;
    return 0;
}

int tu_compare_grids(const plm_vdb_grid *a, const plm_vdb_grid *b, double tol, const char *label)
{
    int fails = 0;
    plm_vdb_grid_info ia, ib;
    if (plm_vdb_grid_get_info(a, &ia, NULL) || plm_vdb_grid_get_info(b, &ib, NULL)) {
        tu_failures++;
        return 1;
    }
    RCHECK(ia.type == ib.type, "types differ");
    RCHECK(ia.grid_class == ib.grid_class, "classes differ");
    RCHECK(ia.active_voxel_count == ib.active_voxel_count, "active voxels %llu vs %llu",
           (unsigned long long)ia.active_voxel_count, (unsigned long long)ib.active_voxel_count);
    RCHECK(ia.leaf_count == ib.leaf_count, "leaves %llu vs %llu",
           (unsigned long long)ia.leaf_count, (unsigned long long)ib.leaf_count);
    /* a half-float file stores its background in half too (OpenVDB's writeTopology) */
    for (int k = 0; k < 3; k++)
        RCHECK(tol == 0 ? ia.background[k] == ib.background[k]
                        : fabs((double)ia.background[k] - ib.background[k]) <= tol * fabs((double)ia.background[k]) + 1e-7,
               "background %g vs %g", (double)ia.background[k], (double)ib.background[k]);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            RCHECK(ia.index_to_world[r][c] == ib.index_to_world[r][c], "transform [%d][%d]", r, c);
    if (fails || ia.type == PLM_VDB_TYPE_UNSUPPORTED) {
        tu_failures += fails;
        return fails;
    }
    leaf_ref *refs = malloc(sizeof *refs * (ib.leaf_count ? ib.leaf_count : 1));
    for (uint64_t i = 0; i < ib.leaf_count; i++) {
        refs[i].index = i;
        plm_vdb_read_leaf(b, i, refs[i].o, NULL, NULL, NULL);
    }
    qsort(refs, ib.leaf_count, sizeof *refs, cmp_leaf_ref);
    const int nc = ia.components;
    float *va = malloc(sizeof(float) * 1536), *vb = malloc(sizeof(float) * 1536);
    int shown = 0;
    for (uint64_t i = 0; i < ia.leaf_count && shown < 10; i++) {
        leaf_ref key;
        uint64_t ma[8], mb[8];
        plm_vdb_read_leaf(a, i, key.o, va, ma, NULL);
        leaf_ref *hit = bsearch(&key, refs, ib.leaf_count, sizeof *refs, cmp_leaf_ref);
        if (!hit) {
            RCHECK(0, "leaf (%d %d %d) missing in the second grid", key.o[0], key.o[1], key.o[2]);
            shown++;
            continue;
        }
        int32_t ob[3];
        plm_vdb_read_leaf(b, hit->index, ob, vb, mb, NULL);
        if (memcmp(ma, mb, sizeof ma)) {
            RCHECK(0, "leaf (%d %d %d): active masks differ", key.o[0], key.o[1], key.o[2]);
            shown++;
        }
        for (int n = 0; n < 512 * nc; n++)
            if (!close_enough(vb[n], va[n], tol)) {
                RCHECK(0, "leaf (%d %d %d) value %d: %.9g vs %.9g", key.o[0], key.o[1], key.o[2],
                       n, (double)va[n], (double)vb[n]);
                shown++;
                break;
            }
    }
    free(va);
    free(vb);
    free(refs);
    tu_failures += fails;
    return fails;
}

static int reserved(const char *key)
{
    return !strcmp(key, "name") || !strcmp(key, "class") ||
           !strcmp(key, "is_saved_as_half_float") || !strncmp(key, "file_", 5);
}

plm_vdb_grid *tu_copy_grid(const plm_vdb_grid *src)
{
    plm_vdb_grid_info in;
    plm_vdb_error err;
    if (plm_vdb_grid_get_info(src, &in, &err) != PLM_VDB_OK)
        return NULL;
    plm_vdb_grid_desc d;
    memset(&d, 0, sizeof d);
    d.name = in.name;
    d.type = in.type;
    d.grid_class = in.grid_class;
    memcpy(d.background, in.background, sizeof d.background);
    memcpy(d.index_to_world, in.index_to_world, sizeof d.index_to_world);
    plm_vdb_grid *g = NULL;
    if (plm_vdb_grid_create(&d, &g, &err) != PLM_VDB_OK) {
        fprintf(stderr, "copy of %s: %s\n", in.name, err.message);
        return NULL;
    }
    for (int i = 0; i < in.meta_count; i++) {
        plm_vdb_meta m;
        plm_vdb_grid_meta(src, i, &m, NULL);
        if (reserved(m.key))
            continue;
        if (plm_vdb_grid_set_meta(g, m.key, m.type, m.value, &err) != PLM_VDB_OK &&
            err.status != PLM_VDB_ERR_ARGUMENT)
            fprintf(stderr, "copy of %s: %s\n", in.name, err.message);
    }
    float *vals = malloc(sizeof(float) * 1536);
    for (uint64_t i = 0; i < in.leaf_count; i++) {
        int32_t o[3];
        uint64_t mask[8];
        if (plm_vdb_read_leaf(src, i, o, vals, mask, &err) != PLM_VDB_OK ||
            plm_vdb_grid_add_leaf(g, o, vals, mask, &err) != PLM_VDB_OK) {
            fprintf(stderr, "copy of %s: %s\n", in.name, err.message);
            plm_vdb_grid_free(g);
            g = NULL;
            break;
        }
    }
    free(vals);
    return g;
}
