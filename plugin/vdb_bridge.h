/* Moving volumes between .vdb files (vdbio/) and fields (engine/): the shared part of the VDB
 * import and export nodes and of the "plume.vdb/1" and "plume.render/1" extensions.
 * Runs on the context's thread. Errors go to the context (pl_fail) and return a status. */
#ifndef PLUME_PLUGIN_VDB_BRIDGE_H
#define PLUME_PLUGIN_VDB_BRIDGE_H

#include "plugin/plugin.h"
#include "vdbio/vdbio.h"

typedef enum vdb_merge { VDB_MERGE_REPLACE = 0, VDB_MERGE_MAX = 1, VDB_MERGE_ADD = 2, VDB_MERGE_SET = 3 } vdb_merge;

/* Copies grid into field f of engine eng (errors reported on ctx). The grid's voxel size must match the field's (within 1e-5
 * relative) and its voxels must lie on the field's voxel lattice. REPLACE clears the field
 * and takes the grid's background; the others merge active voxels into what is there. A
 * level-set grid brings every voxel of its leaves and its inside tiles (negative values filling
 * the inside of the surface), so the field reads "inside" everywhere inside.
 * `what` names the grid in messages ("smoke.vdb: grid 'density'"). */
plume_status vdb_grid_to_field(pl_context *ctx, eng_context *eng, const plm_vdb_grid *grid,
                               eng_field *f, vdb_merge merge, const char *what);

/* Makes a new grid from field f's active voxels: name, class; for fields with per-block
 * activity (dense leaves), voxels equal to the background are written inactive. xform (NULL:
 * from the field's voxel size and origin) is the index-to-world matrix. The caller frees *out
 * with plm_vdb_grid_free. */
plume_status vdb_field_to_grid(pl_context *ctx, eng_field *f, const char *name, plm_vdb_class cls,
                               const double (*xform)[4], plm_vdb_grid **out);

/* Writes grids atomically with Plume's file metadata (creator, frame when >= 0). */
plume_status vdb_write_file(pl_context *ctx, const char *path, const plm_vdb_grid *const *grids,
                            int count, int half_float, plm_vdb_compression comp, int64_t frame);

/* mkdir -p of the folder holding path. */
int vdb_make_parent_dirs(const char *path);

/* Expands a frame pattern: each run of '#' becomes the frame, zero-padded to the run's length;
 * a pattern without '#' gets "_####" before its extension. */
void vdb_frame_path(const char *pattern, int64_t frame, char *out, size_t n);

#endif
