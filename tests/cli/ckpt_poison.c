/* ckpt_poison IN OUT: rewrites a Plume checkpoint (docs/abi.md, plume.checkpoint/1) with every
 * transient field (grid metadata "plume_transient" = "1", stored empty) filled with garbage
 * and the key removed, as a checkpoint of the format before transient fields would hold them
 * (every field with its values). A field that is truly transient is written before it is read
 * in every cook, or pruned to the background, so a bake resumed from OUT must give the bytes
 * of one resumed from IN: tests/cli/resume_smoke_test.sh checks that.
 *
 * The garbage: 1e4 in every component of every voxel of the blocks where the first
 * non-transient field of the checkpoint has blocks (inside the domain), and of the same blocks
 * moved 16 voxels along x (mostly outside it, where stale blocks must be pruned); fields
 * stored as cells (0-D scalars) get one active cell at index (0, 0, 0). Exit status 1 and a
 * message on any failure. With FIELD, only that field gets garbage (the others stay empty): to
 * find which field a failing resume reads. */
#include "vdbio/vdbio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 1e4f

static int fail(const char *what, const plm_vdb_error *e)
{
    fprintf(stderr, "ckpt_poison: %s: %s\n", what, e ? e->message : "out of memory");
    return 1;
}

static const char *meta_value(const plm_vdb_grid *g, int count, const char *key)
{
    plm_vdb_error e;
    for (int i = 0; i < count; i++) {
        plm_vdb_meta m;
        if (plm_vdb_grid_meta(g, i, &m, &e) == PLM_VDB_OK && !strcmp(m.key, key))
            return m.value;
    }
    return NULL;
}

/* A new grid like g (name, type, class, background, transform, Plume's metadata but the
 * transient key). */
static int copy_header(const plm_vdb_grid *g, const plm_vdb_grid_info *gi, plm_vdb_grid **out)
{
    plm_vdb_grid_desc d;
    memset(&d, 0, sizeof d);
    d.name = gi->name;
    d.type = gi->type;
    d.grid_class = gi->grid_class;
    memcpy(d.background, gi->background, sizeof d.background);
    memcpy(d.index_to_world, gi->index_to_world, sizeof d.index_to_world);
    plm_vdb_error e;
    if (plm_vdb_grid_create(&d, out, &e) != PLM_VDB_OK)
        return fail(gi->name, &e);
    for (int i = 0; i < gi->meta_count; i++) {
        plm_vdb_meta m;
        if (plm_vdb_grid_meta(g, i, &m, &e) != PLM_VDB_OK)
            return fail(gi->name, &e);
        if (strncmp(m.key, "plume_", 6) || !strcmp(m.key, "plume_transient"))
            continue; /* OpenVDB's own entries come from the desc */
        if (plm_vdb_grid_set_meta(*out, m.key, m.type, m.value, &e) != PLM_VDB_OK)
            return fail(gi->name, &e);
    }
    return 0;
}

static int copy_leaves(const plm_vdb_grid *g, const plm_vdb_grid_info *gi, plm_vdb_grid *out,
                       float *vals)
{
    plm_vdb_error e;
    for (uint64_t i = 0; i < gi->leaf_count; i++) {
        int32_t o[3];
        uint64_t mask[8];
        if (plm_vdb_read_leaf(g, i, o, vals, mask, &e) != PLM_VDB_OK ||
            plm_vdb_grid_add_leaf(out, o, vals, mask, &e) != PLM_VDB_OK)
            return fail(gi->name, &e);
    }
    return 0;
}

static int poison(const plm_vdb_grid *like, const plm_vdb_grid_info *li, int cells,
                  const plm_vdb_grid_info *gi, plm_vdb_grid *out, float *vals)
{
    plm_vdb_error e;
    for (int n = 0; n < 3 * 512; n++)
        vals[n] = POISON;
    if (cells) {
        uint64_t mask[8] = {1, 0, 0, 0, 0, 0, 0, 0};
        const int32_t o[3] = {0, 0, 0};
        return plm_vdb_grid_add_leaf(out, o, vals, mask, &e) != PLM_VDB_OK ? fail(gi->name, &e) : 0;
    }
    for (int shift = 0; shift <= 16; shift += 16) {
        for (uint64_t i = 0; i < li->leaf_count; i++) {
            int32_t o[3];
            if (plm_vdb_read_leaf(like, i, o, NULL, NULL, &e) != PLM_VDB_OK)
                return fail(li->name, &e);
            o[0] += shift;
            plm_vdb_status st = plm_vdb_grid_add_leaf(out, o, vals, NULL, &e);
            /* the moved blocks land on unmoved ones too: those are poisoned already */
            if (st != PLM_VDB_OK && !(shift && st == PLM_VDB_ERR_ARGUMENT))
                return fail(gi->name, &e);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: ckpt_poison IN.vdb OUT.vdb [FIELD]\n");
        return 2;
    }
    plm_vdb_error e;
    plm_vdb_file *in = NULL;
    if (plm_vdb_open(argv[1], &in, &e) != PLM_VDB_OK)
        return fail(argv[1], &e);
    int n = plm_vdb_grid_count(in), rc = 0, poisoned = 0;
    plm_vdb_grid **grids = calloc((size_t)(n ? n : 1), sizeof *grids);
    float *vals = malloc(3 * 512 * sizeof *vals);
    const plm_vdb_grid *like = NULL;
    plm_vdb_grid_info li;
    memset(&li, 0, sizeof li);
    for (int i = 0; i < n && !like; i++) {
        const plm_vdb_grid *g = plm_vdb_file_grid(in, i);
        plm_vdb_grid_info gi;
        if (plm_vdb_grid_get_info(g, &gi, &e) == PLM_VDB_OK && !meta_value(g, gi.meta_count, "plume_transient") &&
            gi.leaf_count > 0) {
            like = g;
            li = gi;
        }
    }
    if (!grids || !vals || !like)
        rc = fail(argv[1], NULL);
    for (int i = 0; i < n && !rc; i++) {
        const plm_vdb_grid *g = plm_vdb_file_grid(in, i);
        plm_vdb_grid_info gi;
        if (plm_vdb_grid_get_info(g, &gi, &e) != PLM_VDB_OK) {
            rc = fail(argv[1], &e);
            break;
        }
        const char *tr = meta_value(g, gi.meta_count, "plume_transient");
        const char *storage = meta_value(g, gi.meta_count, "plume_storage");
        rc = copy_header(g, &gi, &grids[i]);
        if (!rc && tr && (argc < 4 || !strcmp(gi.name, argv[3]))) {
            rc = poison(like, &li, storage && !strcmp(storage, "cells"), &gi, grids[i], vals);
            poisoned++;
        } else if (!rc) {
            rc = copy_leaves(g, &gi, grids[i], vals);
        }
    }
    int nmeta = rc ? 0 : plm_vdb_file_meta_count(in);
    plm_vdb_meta *meta = calloc((size_t)(nmeta ? nmeta : 1), sizeof *meta);
    for (int i = 0; i < nmeta && !rc; i++)
        if (plm_vdb_file_meta(in, i, &meta[i], &e) != PLM_VDB_OK)
            rc = fail(argv[1], &e);
    if (!rc && !poisoned) {
        fprintf(stderr, "ckpt_poison: %s has no transient field\n", argv[1]);
        rc = 1;
    }
    if (!rc) {
        plm_vdb_write_options wo = {.file_meta = meta, .file_meta_count = nmeta, .no_fsync = 1};
        if (plm_vdb_write(argv[2], (const plm_vdb_grid *const *)grids, n, &wo, &e) != PLM_VDB_OK)
            rc = fail(argv[2], &e);
        else
            printf("ckpt_poison: %d of %d grids poisoned\n", poisoned, n);
    }
    for (int i = 0; grids && i < n; i++)
        plm_vdb_grid_free(grids[i]);
    free(grids);
    free(vals);
    free(meta);
    plm_vdb_close(in);
    return rc;
}
