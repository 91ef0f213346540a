/* The "plume.vdb/1" and "plume.render/1" extensions: VDB files without a scene. Each call works
 * in a private engine context, so the caller's fields are untouched. */
#define _GNU_SOURCE
#include "plugin/plugin.h"
#include "plugin/render.h"
#include "plugin/vdb_bridge.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A layout for a scratch field that holds the grid's voxels where they are: per-voxel
 * activity (bitmasked leaves), the index range starting at the grid's lowest stored voxel on
 * the 8^3 lattice (leaves, tiles and a level set's inactive inside: what the reader writes),
 * and levels of 32 pointers stacked over the default tree's 16 x 8 until it spans the grid's
 * longest side (4,096 voxels with one, 131,072 with two, 4,194,304 with three, 134,217,728
 * with four). -1 past that. */
#define SCRATCH_MAX_SPAN (1ll << 27)
static long long floor_div(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static int scratch_layout(const plm_vdb_grid_info *gi, char *out, size_t n)
{
    long long off[3] = {-2048, -2048, -2048}, extent = 4096;
    if (!gi->stored_empty) {
        extent = 1;
        for (int k = 0; k < 3; k++) {
            off[k] = floor_div(gi->stored_min[k], 8) * 8;
            long long e = (long long)gi->stored_max[k] - off[k] + 1;
            extent = e > extent ? e : extent;
        }
    }
    long long span = 4096;
    int levels = 1;
    while (span < extent) {
        span *= 32;
        levels++;
    }
    for (int k = 0; k < 3; k++)
        if (span > SCRATCH_MAX_SPAN || off[k] + span - 1 > INT32_MAX)
            return -1;
    int at = snprintf(out, n, "offset(%lld,%lld,%lld).", off[0], off[1], off[2]);
    for (int l = 0; l < levels && at > 0 && (size_t)at < n; l++)
        at += snprintf(out + at, n - (size_t)at, "pointer(ijk,32).");
    if (at > 0 && (size_t)at < n)
        snprintf(out + at, n - (size_t)at, "pointer(ijk,16).bitmasked(ijk,8)");
    return 0;
}

static json_t *grid_json(const plm_vdb_grid *g, const plm_vdb_grid_info *gi)
{
    json_t *o = json_pack("{s:s, s:i, s:s, s:s, s:b, s:I, s:I, s:I}", "name", gi->name, "index", gi->index,
                          "type", gi->type_name, "class", plm_vdb_class_name(gi->grid_class), "supported",
                          gi->type != PLM_VDB_TYPE_UNSUPPORTED, "active_voxels",
                          (json_int_t)gi->active_voxel_count, "leaves", (json_int_t)gi->file_leaf_count,
                          "active_tiles", (json_int_t)gi->active_tile_count);
    if (gi->type != PLM_VDB_TYPE_UNSUPPORTED) {
        json_t *bg = json_array();
        for (int c = 0; c < gi->components; c++)
            json_array_append_new(bg, json_real(gi->background[c]));
        json_object_set_new(o, "background", gi->components == 1 ? json_real(gi->background[0]) : bg);
        if (gi->components == 1)
            json_decref(bg);
        json_object_set_new(o, "half_float", json_boolean(gi->saved_as_half));
    }
    /* a grid of a type OpenVDB does not know is stepped over, its transform unread: no
     * transform is better than a voxel of 0 that reads as a frustum */
    if (gi->voxel_size[0] > 0) {
        json_object_set_new(o, "voxel_size", json_pack("[f,f,f]", gi->voxel_size[0], gi->voxel_size[1], gi->voxel_size[2]));
        json_t *m = json_array();
        for (int r = 0; r < 4; r++)
            json_array_append_new(m, json_pack("[f,f,f,f]", gi->index_to_world[r][0], gi->index_to_world[r][1],
                                               gi->index_to_world[r][2], gi->index_to_world[r][3]));
        json_object_set_new(o, "index_to_world", m);
        json_object_set_new(o, "linear", json_boolean(gi->is_linear));
    }
    if (!gi->bbox_empty)
        json_object_set_new(o, "bbox", json_pack("[[i,i,i],[i,i,i]]", gi->bbox_min[0], gi->bbox_min[1], gi->bbox_min[2],
                                                 gi->bbox_max[0], gi->bbox_max[1], gi->bbox_max[2]));
    json_t *meta = json_object();
    plm_vdb_error e;
    for (int i = 0; i < gi->meta_count; i++) {
        plm_vdb_meta md;
        if (plm_vdb_grid_meta(g, i, &md, &e) == PLM_VDB_OK)
            json_object_set_new(meta, md.key, json_pack("{s:s, s:s}", "type", md.type, "value", md.value));
    }
    json_object_set_new(o, "metadata", meta);
    return o;
}

static plume_status vdb_info_json(plume_context *handle, const char *path, char **out)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "vdb info: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "vdb info");
    if (!path || !out)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "vdb info: path and out are required");
    *out = NULL;
    plm_vdb_error e;
    plm_vdb_file *file = NULL;
    if (plm_vdb_open(path, &file, &e) != PLM_VDB_OK)
        return pl_fail(ctx, PLUME_ERR_IO, "%s", e.message);
    json_t *grids = json_array(), *fmeta = json_object();
    for (int i = 0; i < plm_vdb_grid_count(file); i++) {
        const plm_vdb_grid *g = plm_vdb_file_grid(file, i);
        plm_vdb_grid_info gi;
        if (plm_vdb_grid_get_info(g, &gi, &e) == PLM_VDB_OK)
            json_array_append_new(grids, grid_json(g, &gi));
    }
    for (int i = 0; i < plm_vdb_file_meta_count(file); i++) {
        plm_vdb_meta md;
        if (plm_vdb_file_meta(file, i, &md, &e) == PLM_VDB_OK)
            json_object_set_new(fmeta, md.key, json_pack("{s:s, s:s}", "type", md.type, "value", md.value));
    }
    json_t *root = json_pack("{s:s, s:i, s:o, s:o}", "file", path, "format_version",
                             (int)plm_vdb_file_format_version(file), "metadata", fmeta, "grids", grids);
    plm_vdb_close(file);
    *out = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return *out ? PLUME_OK : pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
}

/* A private engine context with the caller's budget, so extension work leaves no fields behind. */
static eng_context *scratch_engine(pl_context *ctx)
{
    eng_options eo = {1, eng_memory_budget(ctx->eng)};
    return eng_create(&eo);
}

/* Reads grid into a new field of eng named `fname` that is the grid's index space (voxel
 * (i,j,k) of the field is voxel (i,j,k) of the grid; its voxel size is the grid's smallest, for
 * render's level-set ramp). Frustum transforms are refused: their index space is not a box of
 * the world. */
static plume_status grid_into_scratch(pl_context *ctx, eng_context *eng, const plm_vdb_grid *g,
                                      const plm_vdb_grid_info *gi, const char *fname, const char *what,
                                      eng_field **out)
{
    if (!gi->is_linear)
        return pl_fail(ctx, PLUME_ERR_UNSUPPORTED, "%s: only linear transforms are supported (%s)", what,
                       gi->map_type);
    double h = gi->voxel_size[0];
    for (int k = 1; k < 3; k++)
        h = gi->voxel_size[k] < h ? gi->voxel_size[k] : h;
    /* tiles become voxels here: a 594-byte file with one root tile is 68 billion of them */
    uint64_t need = gi->active_voxel_count * (uint64_t)(gi->components == 3 ? 12 : 4);
    if (gi->active_voxel_count > (UINT64_MAX >> 4) || need > eng_memory_budget(eng))
        return pl_fail(ctx, PLUME_ERR_MEMORY_BUDGET,
                       "%s: %llu active voxels (tiles counted voxel by voxel) need %llu bytes, more than the "
                       "memory budget of %llu bytes",
                       what, (unsigned long long)gi->active_voxel_count, (unsigned long long)need,
                       (unsigned long long)eng_memory_budget(eng));
    char layout[256];
    if (scratch_layout(gi, layout, sizeof layout) != 0)
        return pl_fail(ctx, PLUME_ERR_UNSUPPORTED,
                       "%s: its voxels span [%d %d %d]..[%d %d %d], more than %lld along an axis",
                       what, gi->stored_min[0], gi->stored_min[1], gi->stored_min[2], gi->stored_max[0],
                       gi->stored_max[1], gi->stored_max[2], SCRATCH_MAX_SPAN);
    eng_field_desc fd = {fname, gi->components == 3 ? ENG_VEC3 : ENG_F32, layout, h, {0, 0, 0},
                         {gi->background[0], gi->background[1], gi->background[2]}};
    if (eng_field_declare(eng, &fd, out) != ENG_OK)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "%s: %s", what, eng_error(eng));
    return vdb_grid_to_field(ctx, eng, g, *out, VDB_MERGE_REPLACE, VDB_READ_INDEX_SPACE, what);
}

/* The file's supported grids are written as they are (OpenVDB's shallow copies: tree, tiles,
 * inactive values, transform and metadata untouched), so a conversion changes only the codec
 * and the value width; nothing goes through a field, whose index range and per-voxel values
 * (no tiles, inactive voxels at the background) could not hold every grid. */
static plume_status vdb_convert(plume_context *handle, const char *in, const char *outp, int32_t half,
                                plume_vdb_compression comp)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "vdb convert: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "vdb convert");
    if (!in || !outp)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "vdb convert: input and output paths are required");
    if (comp < PLUME_VDB_COMPRESS_NONE || comp > PLUME_VDB_COMPRESS_BLOSC)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "vdb convert: unknown compression %d", comp);
    plm_vdb_error e;
    plm_vdb_file *file = NULL;
    if (plm_vdb_open(in, &file, &e) != PLM_VDB_OK)
        return pl_fail(ctx, PLUME_ERR_IO, "%s", e.message);
    int n = plm_vdb_grid_count(file);
    const plm_vdb_grid **grids = calloc((size_t)(n ? n : 1), sizeof *grids);
    plume_status st = grids ? PLUME_OK : pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    int count = 0, skipped = 0;
    for (int i = 0; i < n && st == PLUME_OK; i++) {
        const plm_vdb_grid *g = plm_vdb_file_grid(file, i);
        plm_vdb_grid_info gi;
        if (plm_vdb_grid_get_info(g, &gi, &e) != PLM_VDB_OK) {
            st = pl_fail(ctx, PLUME_ERR_IO, "%s", e.message);
            break;
        }
        if (gi.type == PLM_VDB_TYPE_UNSUPPORTED) {
            pl_log(ctx, PLUME_LOG_WARNING, "%s: grid %d '%s' of type %s is not supported and is left out of %s",
                   in, i, gi.name, gi.type_name, outp);
            skipped++;
            continue;
        }
        grids[count++] = g;
    }
    if (st == PLUME_OK && count == 0)
        st = pl_fail(ctx, PLUME_ERR_UNSUPPORTED, "%s has no float or vec3 grid to convert", in);
    if (st == PLUME_OK && pl_cancelled(ctx))
        st = pl_fail(ctx, PLUME_ERR_CANCELLED, "vdb convert: cancelled; %s was not written", outp);
    if (st == PLUME_OK)
        st = vdb_write_file(ctx, outp, grids, count, half, (plm_vdb_compression)comp, -1, file);
    if (st == PLUME_OK && skipped)
        pl_log(ctx, PLUME_LOG_WARNING, "%d unsupported grid(s) of %s were not converted", skipped, in);
    free(grids);
    plm_vdb_close(file);
    return st;
}

static plume_status render_vdb(plume_context *handle, const char *vdb_path, const char *grid, const char *png,
                               uint32_t w, uint32_t h)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "render: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "render");
    if (!vdb_path || !png)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "render: the .vdb and the .png paths are required");
    if (!w != !h) /* both 0: a size from the volume's extent */
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "render: a size of %ux%u: give both sides, or 0x0 for one from the volume", w, h);
    plm_vdb_error e;
    plm_vdb_file *file = NULL;
    if (plm_vdb_open(vdb_path, &file, &e) != PLM_VDB_OK)
        return pl_fail(ctx, PLUME_ERR_IO, "%s", e.message);
    const plm_vdb_grid *g = NULL;
    plume_status st = PLUME_OK;
    if (grid && grid[0]) {
        if (plm_vdb_find_grid(file, grid, 0, &g, &e) != PLM_VDB_OK)
            st = pl_fail(ctx, PLUME_ERR_NOT_FOUND, "%s", e.message);
    } else {
        for (int i = 0; i < plm_vdb_grid_count(file) && !g; i++) {
            plm_vdb_grid_info gi;
            if (plm_vdb_grid_get_info(plm_vdb_file_grid(file, i), &gi, &e) == PLM_VDB_OK && gi.type == PLM_VDB_TYPE_FLOAT)
                g = plm_vdb_file_grid(file, i);
        }
        if (!g)
            st = pl_fail(ctx, PLUME_ERR_NOT_FOUND, "%s has no float grid to render", vdb_path);
    }
    plm_vdb_grid_info gi;
    if (st == PLUME_OK && plm_vdb_grid_get_info(g, &gi, &e) != PLM_VDB_OK)
        st = pl_fail(ctx, PLUME_ERR_IO, "%s", e.message);
    if (st == PLUME_OK && gi.type != PLM_VDB_TYPE_FLOAT)
        st = pl_fail(ctx, PLUME_ERR_UNSUPPORTED, "%s: grid '%s' is %s; render shows float grids", vdb_path, gi.name,
                     gi.type_name);
    eng_context *eng = st == PLUME_OK ? scratch_engine(ctx) : NULL;
    eng_field *f = NULL;
    if (st == PLUME_OK) {
        char what[4200];
        snprintf(what, sizeof what, "%s: grid '%s'", vdb_path, gi.name);
        st = grid_into_scratch(ctx, eng, g, &gi, "render", what, &f);
    }
    /* the picture is of index space: say so where that is not the world's axes at one scale */
    int plain = st == PLUME_OK;
    double unit = plain ? gi.index_to_world[0][0] : 0; /* vdb info's tolerance for a turn */
    for (int r = 0; r < 3 && plain; r++)
        for (int c = 0; c < 3 && plain; c++)
            plain = r == c ? gi.index_to_world[r][c] > 0 && fabs(gi.index_to_world[r][c] - unit) <= 1e-5 * unit
                           : fabs(gi.index_to_world[r][c]) <= 1e-6 * fabs(unit);
    if (st == PLUME_OK && !plain)
        pl_log(ctx, PLUME_LOG_WARNING,
               "%s: grid '%s' is drawn in its index space (i right, j up, looking down -k): its transform "
               "rotates, mirrors or stretches it, which the picture does not show",
               vdb_path, gi.name);
    if (st == PLUME_OK) {
        char err[1024];
        if (eng_field_block_count(f) == 0)
            pl_log(ctx, PLUME_LOG_WARNING, "%s: grid '%s' has no active voxels; %s shows the background alone",
                   vdb_path, gi.name, png);
        if (pl_render_field(f, gi.grid_class == PLM_VDB_CLASS_LEVEL_SET, w, h, png, err, sizeof err) != 0)
            st = pl_fail(ctx, PLUME_ERR_IO, "%s: %s", vdb_path, err);
    }
    eng_destroy(eng);
    plm_vdb_close(file);
    return st;
}

static const plume_ext_vdb ext_vdb = {sizeof ext_vdb, vdb_info_json, vdb_convert};
static const plume_ext_render ext_render = {sizeof ext_render, render_vdb};

extern const plume_ext_compile pl_ext_compile;

const void *pl_get_extension(const char *id)
{
    if (!id)
        return NULL;
    if (!strcmp(id, PLUME_EXT_VDB))
        return &ext_vdb;
    if (!strcmp(id, PLUME_EXT_RENDER))
        return &ext_render;
    if (!strcmp(id, PLUME_EXT_COMPILE))
        return &pl_ext_compile;
    return NULL;
}
