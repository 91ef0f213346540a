/* Moving volumes between .vdb files (vdbio/) and fields (engine/): the shared part of the VDB
 * import and export nodes and of the "plume.vdb/1" and "plume.render/1" extensions.
 * Runs on the context's thread. Errors go to the context (pl_fail) and return a status. */
#ifndef PLUME_PLUGIN_VDB_BRIDGE_H
#define PLUME_PLUGIN_VDB_BRIDGE_H

#include "plugin/plugin.h"
#include "vdbio/vdbio.h"

typedef enum vdb_merge { VDB_MERGE_REPLACE = 0, VDB_MERGE_MAX = 1, VDB_MERGE_ADD = 2, VDB_MERGE_SET = 3 } vdb_merge;

/* How vdb_grid_to_field reads a grid. */
enum {
    /* The field is the grid's index space: the caller made it from the grid and writes the
     * grid's own transform back (vdb convert, render), so the transform is not checked. */
    VDB_READ_INDEX_SPACE = 1,
    /* REPLACE gives the field background 0 instead of the grid's: voxels the file leaves
     * inactive read 0 (an emitter's fog shape emits only where the file has active voxels,
     * whatever its background) */
    VDB_READ_BACKGROUND_ZERO = 2
};

/* Copies grid into field f of engine eng (errors reported on ctx). Unless flags has
 * VDB_READ_INDEX_SPACE, the grid's transform must be a uniform scale and a translation (no
 * rotation, mirror or axis swap: refused), its voxel size the field's (within 1e-5 relative)
 * and its voxels on the field's voxel lattice. REPLACE clears the field and takes the grid's
 * background; the others merge active voxels into what is there. A level-set grid brings every
 * voxel of its leaves and its inside tiles (negative values filling the inside of the
 * surface), in every mode, so the field reads "inside" everywhere inside.
 * `what` names the grid in messages ("smoke.vdb: grid 'density'"). */
plume_status vdb_grid_to_field(pl_context *ctx, eng_context *eng, const plm_vdb_grid *grid,
                               eng_field *f, vdb_merge merge, unsigned flags, const char *what);

/* Makes a new grid from field f's active voxels: name, class, vector_type (vec3 fields:
 * OpenVDB's VecType, 3 = contravariant relative for velocities). A field with per-voxel
 * activity (bitmasked leaves: vdb convert's) is written with its own masks. For a field with
 * per-block activity (dense leaves: a simulation's), voxels equal to the background are
 * written inactive, or for a level set (class LEVEL_SET) those not nearer the surface than the
 * background. A level set with a positive background then gets its inside stored as OpenVDB
 * stores it (plm_vdb_grid_sign_fill). Constant regions become tiles (plm_vdb_grid_prune).
 * xform (NULL: from the field's voxel size and origin) is the index-to-world matrix.
 * VDB_WRITE_CENTRED (a vec3 field that is staggered, OpenVDB's way: x of voxel I on the face
 * between I-(1,0,0) and I) writes each active voxel's centre instead, the mean of its two faces
 * per axis, as the smoke solver's cell_vel takes it. The caller frees *out with
 * plm_vdb_grid_free. */
enum { VDB_WRITE_CENTRED = 1 };
plume_status vdb_field_to_grid(pl_context *ctx, eng_field *f, const char *name, plm_vdb_class cls,
                               int vector_type, const double (*xform)[4], unsigned flags,
                               plm_vdb_grid **out);

/* Writes grids atomically with Plume's file metadata (creator, frame when >= 0) and, when
 * meta_from is not NULL, that file's other file-level entries (vdb convert keeps them) but for
 * plume_* keys and types vdbio cannot write (each of those logged as a warning). */
plume_status vdb_write_file(pl_context *ctx, const char *path, const plm_vdb_grid *const *grids,
                            int count, int half_float, plm_vdb_compression comp, int64_t frame,
                            const plm_vdb_file *meta_from);

/* mkdir -p of the folder holding path. */
int vdb_make_parent_dirs(const char *path);

/* Expands a frame pattern: each run of '#' becomes the frame, zero-padded to the run's length;
 * a pattern without '#' gets "_####" before its extension. */
void vdb_frame_path(const char *pattern, int64_t frame, char *out, size_t n);

#endif
