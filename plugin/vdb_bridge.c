#define _GNU_SOURCE
#include "plugin/vdb_bridge.h"
#include "engine/kernel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static plume_status vdb_fail(pl_context *ctx, const plm_vdb_error *e)
{
    plume_status st = e->status == PLM_VDB_ERR_NO_FILE || e->status == PLM_VDB_ERR_NOT_VDB ||
                              e->status == PLM_VDB_ERR_CORRUPT || e->status == PLM_VDB_ERR_WRITE
                          ? PLUME_ERR_IO
                      : e->status == PLM_VDB_ERR_NO_GRID     ? PLUME_ERR_NOT_FOUND
                      : e->status == PLM_VDB_ERR_UNSUPPORTED ? PLUME_ERR_UNSUPPORTED
                      : e->status == PLM_VDB_ERR_ARGUMENT    ? PLUME_ERR_INVALID_ARGUMENT
                                                             : PLUME_ERR_INTERNAL;
    return pl_fail(ctx, st, "%s", e->message);
}

static long long floor_div(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Engine failures of a possibly private engine, reported on ctx. */
static plume_status eng_fail_on(pl_context *ctx, eng_context *eng, int rc)
{
    return pl_fail(ctx, rc == ENG_ENOMEM         ? PLUME_ERR_MEMORY_BUDGET
                        : rc == ENG_ECANCELLED ? PLUME_ERR_CANCELLED
                                               : PLUME_ERR_INVALID_ARGUMENT,
                   "%s",
                   eng_error(eng));
}

/* A field is axis-aligned: x, y, z of its index are x, y, z of the world, scaled by one voxel
 * size. A grid whose transform rotates, mirrors or swaps axes cannot be placed in one. */
static int axis_aligned(const plm_vdb_grid_info *gi)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double m = gi->index_to_world[r][c];
            if (r == c ? !(m > 0) : fabs(m) > 1e-6 * gi->voxel_size[0])
                return 0;
        }
    return 1;
}

plume_status vdb_grid_to_field(pl_context *ctx, eng_context *eng, const plm_vdb_grid *grid,
                               eng_field *f, vdb_merge merge, unsigned flags, const char *what)
{
    plm_vdb_error e;
    plm_vdb_grid_info gi;
    if (plm_vdb_grid_get_info(grid, &gi, &e) != PLM_VDB_OK)
        return vdb_fail(ctx, &e);
    /* The field is written from the host below, which first runs the work queued before (an
     * emitter mid-cook): its error, a cancel included, is this call's, not lost in there. */
    int qrc = eng_sync(eng);
    if (qrc)
        return eng_fail_on(ctx, eng, qrc);
    const eng_field_desc *d = eng_field_info(f);
    int comps = eng_field_components(f);
    if (gi.type == PLM_VDB_TYPE_UNSUPPORTED)
        return pl_fail(ctx, PLUME_ERR_UNSUPPORTED, "%s: grids of type %s are not supported (float and vec3s are)",
                       what, gi.type_name);
    if (gi.components != comps)
        return pl_fail(ctx, PLUME_ERR_TYPE_MISMATCH, "%s is a %s grid but field '%s' is %s", what, gi.type_name,
                       d->name, comps == 3 ? "vec3" : "f32");
    int32_t shift[3] = {0, 0, 0};
    if (!(flags & VDB_READ_INDEX_SPACE)) {
        if (!gi.is_linear || fabs(gi.voxel_size[0] - gi.voxel_size[1]) > 1e-6 * gi.voxel_size[0] ||
            fabs(gi.voxel_size[0] - gi.voxel_size[2]) > 1e-6 * gi.voxel_size[0])
            return pl_fail(ctx, PLUME_ERR_UNSUPPORTED, "%s: only uniform, linear transforms can be imported (%s)",
                           what, gi.map_type);
        if (!axis_aligned(&gi))
            return pl_fail(ctx, PLUME_ERR_UNSUPPORTED,
                           "%s: its transform rotates, mirrors or swaps axes (%s), and fields are axis-aligned; "
                           "resample the grid to an axis-aligned transform first (e.g. OpenVDB's resample)",
                           what, gi.map_type);
        double h = d->voxel_size;
        /* a node's scratch field (an emitter's shape) is laid out like the scene's fields it
         * works on: those are what the user sets */
        int scratch = eng_field_is_scratch(f);
        char whose[300];
        snprintf(whose, sizeof whose, scratch ? "the node's fields" : "field '%s'", d->name);
        const char *set = scratch ? "set the voxel_size of the scene's fields the node works on" : "set the field's voxel_size";
        if (fabs(gi.voxel_size[0] - h) > 1e-5 * h)
            return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                           "%s has voxel size %g but %s %s voxel size %g: %s to %g (or resample the file)",
                           what, gi.voxel_size[0], whose, scratch ? "have" : "has", h, set, gi.voxel_size[0]);
        /* VDB index (0,0,0) is a voxel centre at the translation; ours has its corner at origin. */
        double s[3], fit[3];
        int off = 0;
        for (int k = 0; k < 3; k++) {
            s[k] = (gi.index_to_world[k][3] - 0.5 * h - d->origin[k]) / h;
            /* a shift that is no 32-bit index (an origin of 1e20) cannot place the grid at all */
            if (!(fabs(s[k]) < 1e9))
                return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                               "%s lies %.3g voxels along %c from the origin of %s: too far for any field's "
                               "voxels; set the %s origin near the grid's ([%.9g, %.9g, %.9g])",
                               what, s[k], "xyz"[k], scratch ? "the node's fields" : whose,
                               scratch ? "scene's fields'" : "field's", gi.index_to_world[0][3] - 0.5 * h,
                               gi.index_to_world[1][3] - 0.5 * h, gi.index_to_world[2][3] - 0.5 * h);
            off |= fabs(s[k] - nearbyint(s[k])) > 1e-3;
            /* the origin nearest the field's own that puts the grid's voxels on the field's */
            fit[k] = gi.index_to_world[k][3] - 0.5 * h - nearbyint(s[k]) * h;
            shift[k] = (int32_t)nearbyint(s[k]);
        }
        if (off)
            return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT,
                           "%s is offset by a fraction of a voxel from %s (x %.4f, y %.4f, z %.4f "
                           "voxels): set the %s origin to [%.9g, %.9g, %.9g] (a VDB voxel's position "
                           "is its centre, a field's origin the corner of its voxel (0, 0, 0))",
                           what, whose, s[0] - nearbyint(s[0]), s[1] - nearbyint(s[1]), s[2] - nearbyint(s[2]),
                           scratch ? "scene's fields'" : "field's", fit[0], fit[1], fit[2]);
    }
    /* Every voxel read is written: the leaves, tiles voxel by voxel, and a level set's inside
     * (below). Past the whole budget the import would fill memory for minutes before failing
     * (a 22 KB level set with a 1024^3 inside is 4 GB of voxels). */
    int ls_all = gi.grid_class == PLM_VDB_CLASS_LEVEL_SET && comps == 1;
    uint64_t leaves = gi.leaf_count + (ls_all ? gi.inactive_leaf_count : 0);
    uint64_t bytes = leaves * 512u * (uint64_t)comps * 4u, budget = eng_memory_budget(eng);
    if (leaves > (UINT64_MAX >> 16) || (budget && bytes > budget))
        return pl_fail(ctx, PLUME_ERR_MEMORY_BUDGET,
                       "%s: its %llu blocks of 8^3 voxels (tiles counted voxel by voxel%s) need %.3g GB, "
                       "more than the memory budget of %.3g GB",
                       what, (unsigned long long)leaves, ls_all ? ", and the level set's inside" : "",
                       (double)bytes / 1e9, (double)budget / 1e9);
    if (merge == VDB_MERGE_REPLACE) {
        static const float zero[3] = {0, 0, 0};
        eng_field_clear(eng, f);
        eng_field_set_background(f, flags & VDB_READ_BACKGROUND_ZERO ? zero : gi.background);
    }
    float *vals = malloc(3 * 512 * sizeof *vals);
    if (!vals)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    int aligned = !(shift[0] & 7) && !(shift[1] & 7) && !(shift[2] & 7);
    /* its blocks' memory can be written in place; not where activity is per voxel (a
     * bitmasked leaf): taking a block's memory activates all 512 of its voxels, and a grid not
     * on the field's block grid would add the rest of each block at 0 */
    int direct = eng_field_has_blocks(f) && !eng_field_voxel_masks(f);
    /* A level set's value matters everywhere, not only where the file marks voxels active: the
     * inside of its surface is stored as inactive voxels and tiles of value -background, and a
     * collider or emitter needs "inside" there too. So every voxel of its leaves is taken, and
     * its inside tiles follow the leaves. */
    int level_set = gi.grid_class == PLM_VDB_CLASS_LEVEL_SET && comps == 1;
    uint64_t total = gi.leaf_count + (level_set ? gi.inactive_leaf_count : 0);
    plume_status st = PLUME_OK;
    for (uint64_t i = 0; i < total && st == PLUME_OK; i++) {
        int32_t o[3];
        uint64_t mask[8];
        int rc = i < gi.leaf_count ? plm_vdb_read_leaf(grid, i, o, vals, mask, &e)
                                   : plm_vdb_read_inactive_leaf(grid, i - gi.leaf_count, o, vals, &e);
        if (rc != PLM_VDB_OK) {
            st = vdb_fail(ctx, &e);
            break;
        }
        if (level_set || i >= gi.leaf_count)
            memset(mask, 0xff, sizeof mask);
        for (int k = 0; k < 3; k++)
            o[k] += shift[k];
        if (aligned && merge == VDB_MERGE_REPLACE) {
            int rc = eng_field_write_block(eng, f, o, vals, mask);
            if (rc)
                st = eng_fail_on(ctx, eng, rc);
            continue;
        }
        for (int n = 0; n < 512 && st == PLUME_OK; n++) {
            if (!(mask[n >> 6] >> (n & 63) & 1))
                continue;
            int32_t v[3] = {o[0] + (n >> 6), o[1] + ((n >> 3) & 7), o[2] + (n & 7)};
            int32_t bo[3] = {(int32_t)(floor_div(v[0], 8) * 8), (int32_t)(floor_div(v[1], 8) * 8),
                             (int32_t)(floor_div(v[2], 8) * 8)};
            int m = (v[0] - bo[0]) * 64 + (v[1] - bo[1]) * 8 + (v[2] - bo[2]);
            /* a field of another layout: its cell read, merged below, and written back */
            float cell[3];
            float *dst = cell;
            if (direct) {
                float *data = eng_field_block_data(eng, f, bo, 1);
                if (!data) { /* the engine said why: past the field's voxels, or its budget */
                    st = eng_fail_on(ctx, eng, eng_error_code(eng));
                    break;
                }
                dst = data + m * comps;
            } else {
                for (int c = 0; c < comps; c++)
                    cell[c] = eng_field_read(f, v, c);
            }
            for (int c = 0; c < comps; c++) {
                float src = vals[n * comps + c], *p = &dst[c];
                if (merge == VDB_MERGE_ADD)
                    *p += src;
                else if (merge == VDB_MERGE_MAX)
                    *p = src > *p ? src : *p;
                else
                    *p = src;
            }
            if (!direct && (rc = eng_field_write(eng, f, v, cell)) != ENG_OK) {
                st = eng_fail_on(ctx, eng, rc);
                break;
            }
        }
    }
    free(vals);
    return st;
}

/* Block `o`'s staggered vec3 values (vals, read already) become the means of each voxel's two
 * faces per axis; the upper face of a voxel on the block's upper side is in the next block
 * (its background when inactive). spare: 3 x 1536 floats. */
static void centre_block(eng_field *f, const int32_t o[3], float *vals, float *spare)
{
    static const int stride[3] = {64, 8, 1}; /* n = x*64 + y*8 + z, as the blocks are read */
    for (int a = 0; a < 3; a++) {
        int32_t next[3] = {o[0], o[1], o[2]};
        next[a] += 8;
        uint64_t mask[8];
        (void)eng_field_read_block(f, next, spare + a * 1536, mask); /* inactive: background */
    }
    float hi[1536];
    for (int n = 0; n < 512; n++) {
        const int at[3] = {n >> 6, (n >> 3) & 7, n & 7};
        for (int a = 0; a < 3; a++)
            hi[n * 3 + a] = at[a] < 7 ? vals[(n + stride[a]) * 3 + a] : spare[a * 1536 + (n - 7 * stride[a]) * 3 + a];
    }
    for (int i = 0; i < 1536; i++)
        vals[i] = 0.5f * (vals[i] + hi[i]);
}

plume_status vdb_field_to_grid(pl_context *ctx, eng_field *f, const char *name, plm_vdb_class cls,
                               int vector_type, const double (*xform)[4], unsigned flags,
                               plm_vdb_grid **out)
{
    const eng_field_desc *d = eng_field_info(f);
    int comps = eng_field_components(f);
    double h = d->voxel_size;
    plm_vdb_grid_desc gd;
    memset(&gd, 0, sizeof gd);
    gd.name = name;
    gd.type = comps == 3 ? PLM_VDB_TYPE_VEC3 : PLM_VDB_TYPE_FLOAT;
    gd.grid_class = cls;
    gd.vector_type = comps == 3 ? vector_type : 0;
    for (int c = 0; c < 3; c++)
        gd.background[c] = d->background[c];
    for (int k = 0; k < 3; k++) {
        gd.index_to_world[k][k] = h;
        gd.index_to_world[k][3] = d->origin[k] + 0.5 * h;
    }
    gd.index_to_world[3][3] = 1;
    if (xform)
        memcpy(gd.index_to_world, xform, sizeof gd.index_to_world);
    int per_block = !eng_field_voxel_masks(f);
    /* A level set's band is the voxels nearer the surface than the background; the rest (the
     * inside included) is left to the sign fill below, as OpenVDB's tools store it. */
    int level_set = cls == PLM_VDB_CLASS_LEVEL_SET && comps == 1;
    float band = fabsf(d->background[0]);
    plm_vdb_error e;
    plm_vdb_grid *g = NULL;
    if (plm_vdb_grid_create(&gd, &g, &e) != PLM_VDB_OK)
        return vdb_fail(ctx, &e);
    uint64_t nb = eng_field_block_count(f);
    int32_t *origins = malloc((size_t)(nb ? nb : 1) * 3 * sizeof *origins);
    int centred = (flags & VDB_WRITE_CENTRED) && comps == 3;
    float *vals = malloc((centred ? 4 : 1) * 3 * 512 * sizeof *vals);
    if (!origins || !vals) {
        free(origins);
        free(vals);
        plm_vdb_grid_free(g);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    }
    nb = eng_field_block_origins(f, origins, nb);
    plume_status st = PLUME_OK;
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t mask[8];
        eng_field_read_block(f, origins + 3 * b, vals, mask);
        if (centred)
            centre_block(f, origins + 3 * b, vals, vals + 1536);
        /* Where activity is per block, a voxel still at the background adds nothing but size;
         * a level set keeps its narrow band whatever the layout (an import takes every voxel
         * of its leaves, so a field with voxel masks holds them active too). */
        int any = 0;
        for (int n = 0; n < 512; n++) {
            if (!(mask[n >> 6] >> (n & 63) & 1))
                continue;
            int same = per_block;
            for (int c = 0; c < comps && same; c++)
                same &= vals[n * comps + c] == d->background[c];
            if (level_set)
                same = !(fabsf(vals[n]) < band);
            if (same)
                mask[n >> 6] &= ~(1ull << (n & 63));
            else
                any = 1;
        }
        if (!any)
            continue;
        if (plm_vdb_grid_add_leaf(g, origins + 3 * b, vals, mask, &e) != PLM_VDB_OK) {
            st = vdb_fail(ctx, &e);
            break;
        }
    }
    free(origins);
    free(vals);
    if (st == PLUME_OK && level_set && d->background[0] > 0 && plm_vdb_grid_sign_fill(g, &e) != PLM_VDB_OK)
        st = vdb_fail(ctx, &e);
    if (st == PLUME_OK && plm_vdb_grid_prune(g, &e) != PLM_VDB_OK)
        st = vdb_fail(ctx, &e);
    if (st != PLUME_OK) {
        plm_vdb_grid_free(g);
        return st;
    }
    *out = g;
    return PLUME_OK;
}

plume_status vdb_write_file(pl_context *ctx, const char *path, const plm_vdb_grid *const *grids,
                            int count, int half_float, plm_vdb_compression comp, int64_t frame,
                            const plm_vdb_file *meta_from)
{
    char frame_text[32];
    snprintf(frame_text, sizeof frame_text, "%lld", (long long)frame);
    int nfrom = meta_from ? plm_vdb_file_meta_count(meta_from) : 0;
    plm_vdb_meta *meta = malloc((size_t)(2 + nfrom) * sizeof *meta);
    if (!meta)
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "out of host memory");
    int nmeta = 0;
    meta[nmeta++] = (plm_vdb_meta){"creator", "string", "Plume " PLUME_VERSION_STRING};
    if (frame >= 0)
        meta[nmeta++] = (plm_vdb_meta){"plume_frame", "int64", frame_text};
    plm_vdb_error e;
    /* The source file's entries, but for the writer's (now Plume), Plume's own (a converted
     * checkpoint is no checkpoint: its content hash is gone) except the frame number, which a
     * pipeline reads, and types vdbio cannot write back. */
    static const char *const writable[] = {"string", "bool",  "int32", "int64", "float",
                                           "double", "vec3i", "vec3s", "vec3d"};
    for (int i = 0; i < nfrom; i++) {
        plm_vdb_meta m;
        if (plm_vdb_file_meta(meta_from, i, &m, &e) != PLM_VDB_OK || !strcmp(m.key, "creator") ||
            (!strncmp(m.key, "plume_", 6) && (strcmp(m.key, "plume_frame") || frame >= 0)))
            continue;
        int ok = 0;
        for (size_t k = 0; k < sizeof writable / sizeof *writable; k++)
            ok |= !strcmp(m.type, writable[k]);
        if (ok)
            meta[nmeta++] = m;
        else
            pl_log(ctx, PLUME_LOG_WARNING, "%s: file metadata '%s' of type %s is not kept", path, m.key, m.type);
    }
    plm_vdb_write_options wo = {.compression = comp,
                                 .half_float = half_float,
                                 .file_meta = meta,
                                 .file_meta_count = nmeta};
    plume_status st = PLUME_OK;
    if (vdb_make_parent_dirs(path) != 0)
        st = pl_fail(ctx, PLUME_ERR_IO, "cannot create the folder for %s: %s", path, strerror(errno));
    else if (plm_vdb_write(path, grids, count, &wo, &e) != PLM_VDB_OK)
        st = vdb_fail(ctx, &e);
    free(meta);
    return st;
}

int vdb_make_parent_dirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf)
        return 0;
    *slash = 0;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

void vdb_frame_path(const char *pattern, int64_t frame, char *out, size_t n)
{
    const char *hash = strchr(pattern, '#');
    char tmp[4096];
    if (!hash) {
        const char *slash = strrchr(pattern, '/');
        const char *dot = strrchr(pattern, '.');
        if (!dot || (slash && dot < slash))
            dot = pattern + strlen(pattern);
        snprintf(tmp, sizeof tmp, "%.*s_####%s", (int)(dot - pattern), pattern, dot);
        pattern = tmp;
        hash = strchr(pattern, '#');
    }
    size_t k = 0;
    for (const char *p = pattern; *p && k + 1 < n;) {
        if (*p != '#') {
            out[k++] = *p++;
            continue;
        }
        int width = 0;
        while (p[width] == '#')
            width++;
        int w = snprintf(out + k, n - k, "%0*lld", width, (long long)frame);
        k += w > 0 ? (size_t)w : 0;
        if (k >= n)
            k = n - 1;
        p += width;
    }
    out[k] = 0;
    (void)hash;
}
