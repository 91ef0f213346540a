/* vdbio: reading and writing OpenVDB files through a C API.
 *
 * One C++ file (vdbio.cpp) wraps OpenVDB 10 behind this C99 header; nothing C++ crosses it.
 * Every OpenVDB or standard-library exception is caught inside and becomes a plm_vdb_status plus
 * a message written into the caller's plm_vdb_error (see "Errors").
 *
 * Reading:   plm_vdb_open -> plm_vdb_file_grid / plm_vdb_find_grid -> plm_vdb_grid_get_info,
 *            plm_vdb_grid_meta, plm_vdb_read_leaf (leaf by leaf) -> plm_vdb_close.
 * Writing:   plm_vdb_grid_create -> plm_vdb_grid_add_leaf (repeat) -> plm_vdb_write (one or more
 *            grids per file) -> plm_vdb_grid_free.
 *
 * Leaves. A leaf is OpenVDB's 8x8x8 leaf node: an origin (its minimum voxel, a multiple of 8 on
 * each axis), 512 values and a 512-bit active mask. Voxel (x, y, z) of the leaf lies at
 *     n = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7)           (x slowest, z fastest)
 * which is OpenVDB's own order and the order of a dense(ijk,8) block of the sparse runtime.
 * - Float grids: 512 floats, value n at values[n].
 * - Vec3 grids: 1536 floats, INTERLEAVED: voxel n's components at values[3n], [3n+1], [3n+2]
 *   (OpenVDB's Vec3s array, and the sparse runtime's vec3 field: 3 floats per cell).
 * - Mask: 8 uint64_t words, voxel n active when (mask[n >> 6] >> (n & 63)) & 1 (OpenVDB's
 *   NodeMask word layout).
 * Inactive voxels keep whatever value the file stores for them (usually the background; a level
 * set's inside is -background).
 *
 * Errors. Every call that can fail returns a status and, when err is not NULL, writes the status
 * and a NUL-terminated one-line message into *err, naming the file, the grid and the place, e.g.
 * "smoke.vdb: truncated or damaged file (grid 2 \"vel\"): ...". On success *err.status is
 * PLM_VDB_OK and its message is empty. No call aborts or exits the process.
 *
 * Threading. openvdb::initialize() runs once, on the first call that needs it (std::call_once),
 * so any call may be the first from any thread.
 * - A plm_vdb_file is immutable after plm_vdb_open returns: any number of threads may query it
 *   and read leaves of any of its grids at the same time. plm_vdb_close must not overlap any
 *   other use of that file or of its grids.
 * - A grid made by plm_vdb_grid_create belongs to one thread at a time: adding leaves and
 *   metadata, and also plm_vdb_grid_get_info / _meta / plm_vdb_read_leaf on it (they recompute
 *   cached figures after a change). Different created grids may be filled by different threads
 *   at once. plm_vdb_write only reads its grids, so several writes (to different paths) may
 *   share grids, but nothing may change those grids during a write.
 *
 * Ownership. Handles are owned by the caller and freed with plm_vdb_close / plm_vdb_grid_free.
 * Strings returned inside info and meta structs are owned by the handle they came from and stay
 * valid until it is freed. Value and mask buffers are always the caller's; vdbio keeps no
 * pointer to them after a call returns. */
#ifndef PLUME_VDBIO_H
#define PLUME_VDBIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum plm_vdb_status {
    PLM_VDB_OK = 0,
    PLM_VDB_ERR_ARGUMENT = 1,    /* NULL handle, index out of range, bad origin, bad option */
    PLM_VDB_ERR_NO_FILE = 2,     /* the file to read does not exist or cannot be opened */
    PLM_VDB_ERR_NOT_VDB = 3,     /* the file does not start with OpenVDB's magic number */
    PLM_VDB_ERR_CORRUPT = 4,     /* truncated or damaged VDB file, or one too new to read */
    PLM_VDB_ERR_NO_GRID = 5,     /* no grid of that name (and index) in the file */
    PLM_VDB_ERR_UNSUPPORTED = 6, /* grid value type other than float / vec3s (message names it) */
    PLM_VDB_ERR_WRITE = 7,       /* destination unwritable, disk full, rename failed */
    PLM_VDB_ERR_MEMORY = 8,      /* out of memory */
    PLM_VDB_ERR_INTERNAL = 9     /* any other OpenVDB exception (message has its text) */
} plm_vdb_status;

#define PLM_VDB_MESSAGE_MAX 512

typedef struct plm_vdb_error {
    plm_vdb_status status;
    char message[PLM_VDB_MESSAGE_MAX];
} plm_vdb_error;

/* Short constant name of a status ("ok", "not a VDB file", ...). */
const char *plm_vdb_status_name(plm_vdb_status status);

typedef enum plm_vdb_value_type {
    PLM_VDB_TYPE_UNSUPPORTED = 0, /* listed with its OpenVDB type name; leaves cannot be read */
    PLM_VDB_TYPE_FLOAT = 1,       /* "float" (also files stored as half: read as f32) */
    PLM_VDB_TYPE_VEC3 = 2         /* "vec3s" (3 x f32) */
} plm_vdb_value_type;

typedef enum plm_vdb_class {
    PLM_VDB_CLASS_UNKNOWN = 0,
    PLM_VDB_CLASS_LEVEL_SET = 1,
    PLM_VDB_CLASS_FOG_VOLUME = 2,
    PLM_VDB_CLASS_STAGGERED = 3
} plm_vdb_class;

/* "unknown", "level set", "fog volume", "staggered" */
const char *plm_vdb_class_name(plm_vdb_class cls);

/* One metadata entry. type is OpenVDB's metadata type name ("string", "bool", "int32", "int64",
 * "float", "double", "vec3i", "vec3s", "vec3d", ...); value is its text form: numbers in C
 * notation (floats with enough digits to round-trip), vectors as "[x, y, z]", bools as
 * "true"/"false". */
typedef struct plm_vdb_meta {
    const char *key;
    const char *type;
    const char *value;
} plm_vdb_meta;

typedef struct plm_vdb_grid_info {
    const char *name;          /* may be empty; several grids of a file may share it */
    const char *type_name;     /* OpenVDB's value type name: "float", "vec3s", "bool", "int32",
                                  "ptdataidx32" (points), ... */
    plm_vdb_value_type type;
    int components;            /* floats per voxel: 1 or 3; 0 when unsupported */
    plm_vdb_class grid_class;
    int index;                 /* position of the grid in its file (0-based), -1 for created */
    int name_index;            /* how many earlier grids of the file have the same name */
    int saved_as_half;         /* the file stores the values as 16-bit floats */
    float background[3];       /* components used; 0 for unsupported types */
    /* Index-to-world transform, column-vector convention: world = M * (i, j, k, 1)^T, so the
     * translation is M[0..2][3] and M[3] = (0, 0, 0, 1). For a non-linear transform (frustum)
     * this is its affine part and is_linear is 0. */
    double index_to_world[4][4];
    int is_linear;
    double voxel_size[3];      /* world size of one voxel along x, y, z (at the origin) */
    const char *map_type;      /* OpenVDB map type, e.g. "UniformScaleTranslateMap" */
    uint64_t active_voxel_count;  /* voxels in leaves and in active tiles */
    uint64_t file_leaf_count;     /* leaf nodes stored in the tree */
    uint64_t active_tile_count;   /* active tiles at internal and root levels */
    uint64_t leaf_count;          /* leaves plm_vdb_read_leaf returns: file_leaf_count plus the
                                     512-voxel leaves that active tiles are voxelized into */
    int32_t bbox_min[3], bbox_max[3]; /* inclusive index bounds of active voxels */
    int bbox_empty;                   /* 1 when no voxel is active (bounds then 0) */
    int meta_count;                   /* entries for plm_vdb_grid_meta */
    uint64_t inactive_leaf_count;     /* leaves plm_vdb_read_inactive_leaf returns */
    /* inclusive index bounds of every leaf plm_vdb_read_leaf and plm_vdb_read_inactive_leaf
     * return (a level set's inside and stray inactive leaves included): what a field must hold
     * to take them all */
    int32_t stored_min[3], stored_max[3];
    int stored_empty; /* 1 when there are none (bounds then 0) */
} plm_vdb_grid_info;

/* ---------------------------------------------------------------- reading */

typedef struct plm_vdb_file plm_vdb_file;
typedef struct plm_vdb_grid plm_vdb_grid;

/* Reads the whole file (every grid, values included) into memory and closes it before returning,
 * so a truncated or damaged file is reported here and later reads cannot fail on I/O. Grids of
 * any registered OpenVDB type load (listed; only float and vec3s give leaves); a grid type
 * OpenVDB does not know is stepped over and listed as unsupported with its grid type string
 * (UNSUPPORTED only for an old file without grid offsets). On failure *out is NULL. */
plm_vdb_status plm_vdb_open(const char *path, plm_vdb_file **out, plm_vdb_error *err);
void plm_vdb_close(plm_vdb_file *file);

/* Grids in file order. */
int plm_vdb_grid_count(const plm_vdb_file *file);
/* Borrowed from the file (valid until plm_vdb_close); NULL when index is out of range. */
const plm_vdb_grid *plm_vdb_file_grid(const plm_vdb_file *file, int index);
/* The name_index-th grid named name (0 = the first in file order). NO_GRID when absent; the
 * message lists the grids the file has. */
plm_vdb_status plm_vdb_find_grid(const plm_vdb_file *file, const char *name, int name_index,
                                 const plm_vdb_grid **out, plm_vdb_error *err);
/* File-level metadata (e.g. "creator"). Strings owned by the file. */
int plm_vdb_file_meta_count(const plm_vdb_file *file);
plm_vdb_status plm_vdb_file_meta(const plm_vdb_file *file, int i, plm_vdb_meta *out,
                                 plm_vdb_error *err);
/* OpenVDB's file format version of the file (e.g. 224) */
uint32_t plm_vdb_file_format_version(const plm_vdb_file *file);

/* Works on grids from a file and on created grids (figures computed at the call for those). */
plm_vdb_status plm_vdb_grid_get_info(const plm_vdb_grid *grid, plm_vdb_grid_info *out,
                                     plm_vdb_error *err);
/* Grid metadata, all of it as stored (including OpenVDB's own "class", "file_bbox_min", ...). */
plm_vdb_status plm_vdb_grid_meta(const plm_vdb_grid *grid, int i, plm_vdb_meta *out,
                                 plm_vdb_error *err);

/* Leaf i, 0 <= i < info.leaf_count. The stored leaves come first, in OpenVDB's tree order
 * (spatially coherent); then each active tile at internal or root level, voxelized into the
 * 8^3 leaves it covers (tile value everywhere, all 512 voxels active). origin receives the
 * leaf's minimum voxel; values (NULL to skip) receives 512 floats (float grids) or 1536
 * interleaved floats (vec3 grids); mask (NULL to skip) receives 8 words. UNSUPPORTED for grids
 * of other types. Safe to call from many threads at once on the same grid. */
plm_vdb_status plm_vdb_read_leaf(const plm_vdb_grid *grid, uint64_t i, int32_t origin[3],
                                 float *values, uint64_t mask[8], plm_vdb_error *err);

/* Inactive tiles (below the root) whose value is not the background, voxelized into 8^3
 * leaves like the active tiles: i in [0, info.inactive_leaf_count). OpenVDB keeps the inside
 * of a level set's closed surface as such tiles (value -background), so a reader that wants
 * "inside" everywhere, not only in the narrow band, needs them. values (NULL to skip) as in
 * plm_vdb_read_leaf; every voxel is inactive in the file. */
plm_vdb_status plm_vdb_read_inactive_leaf(const plm_vdb_grid *grid, uint64_t i,
                                          int32_t origin[3], float *values, plm_vdb_error *err);

/* ---------------------------------------------------------------- writing */

/* Describes a new grid. name is copied. Zero-initialize, then set what you need: a zero
 * transform (all 16 entries 0) means "use voxel_size" (uniform scale, no translation); with
 * both zero the voxel size is 1. */
typedef struct plm_vdb_grid_desc {
    const char *name;
    plm_vdb_value_type type;     /* FLOAT or VEC3 */
    plm_vdb_class grid_class;
    float background[3];         /* components used */
    double voxel_size;           /* used when index_to_world is all zero */
    double index_to_world[4][4]; /* same convention as plm_vdb_grid_info; must be affine and
                                    invertible */
    int vector_type;             /* vec3 only: OpenVDB VecType, 0 = invariant (default),
                                    1 covariant, 2 covariant normalize, 3 contravariant relative,
                                    4 contravariant absolute */
} plm_vdb_grid_desc;

/* A grid to fill and write. The caller owns it: plm_vdb_grid_free (which ignores grids that
 * belong to an open file; those go with plm_vdb_close). */
plm_vdb_status plm_vdb_grid_create(const plm_vdb_grid_desc *desc, plm_vdb_grid **out,
                                   plm_vdb_error *err);
void plm_vdb_grid_free(plm_vdb_grid *grid);

/* Copies one leaf in: origin (multiples of 8), values in the layout of plm_vdb_read_leaf (512
 * or 1536 floats), mask of 8 words (NULL = all active). Adding a second leaf at the same origin is
 * an ARGUMENT error (the grid keeps the first). A leaf whose mask is all zero is still stored
 * (its values kept as inactive values); callers that want only active voxels written skip empty
 * blocks. Only for grids from plm_vdb_grid_create. */
plm_vdb_status plm_vdb_grid_add_leaf(plm_vdb_grid *grid, const int32_t origin[3],
                                     const float *values, const uint64_t mask[8],
                                     plm_vdb_error *err);

/* For a level set made leaf by leaf (narrow band active, |value| < background): sets every
 * inactive value by the sign of the active values beside it, +background outside and
 * -background inside, and fills the closed inside of the surface with inactive -background
 * tiles (OpenVDB's signedFloodFill, run on one thread). Readers then find "inside" away from
 * the band, as in a level set OpenVDB's own tools make. Float grids from plm_vdb_grid_create
 * with a positive background only; call it after the last leaf. */
plm_vdb_status plm_vdb_grid_sign_fill(plm_vdb_grid *grid, plm_vdb_error *err);

/* Replaces every node whose values are all equal (exactly) and equally active by one tile:
 * a region written leaf by leaf as a constant (an imported active tile, a saturated core) is
 * stored as OpenVDB stores it, one value instead of 512 per leaf. Values and active voxels
 * read the same afterwards. Created grids only; call it after the last leaf. */
plm_vdb_status plm_vdb_grid_prune(plm_vdb_grid *grid, plm_vdb_error *err);

/* Sets (or replaces) one grid metadata entry from its text form (types and forms as in
 * plm_vdb_meta: "string", "bool", "int32", "int64", "float", "double", "vec3i", "vec3s",
 * "vec3d"). Keys that OpenVDB manages are refused with ARGUMENT: "name", "class",
 * "is_saved_as_half_float" and "file_*" (set them through the desc / write options). */
plm_vdb_status plm_vdb_grid_set_meta(plm_vdb_grid *grid, const char *key, const char *type,
                                     const char *value, plm_vdb_error *err);

typedef enum plm_vdb_compression {
    PLM_VDB_COMPRESS_NONE = 0,  /* values stored raw */
    PLM_VDB_COMPRESS_ZIP = 1,   /* zlib */
    PLM_VDB_COMPRESS_BLOSC = 2  /* blosc (lz4), OpenVDB's fastest */
} plm_vdb_compression;

/* Zero-initialized = uncompressed, full float, no file metadata. In every mode OpenVDB's lossless
 * "active mask" scheme is on (inactive values equal to +-background are not stored). */
typedef struct plm_vdb_write_options {
    plm_vdb_compression compression;
    int half_float;                /* store float and vec3 values as 16-bit halves */
    const plm_vdb_meta *file_meta; /* file-level entries (e.g. {"creator","string","Plume 0.1"}) */
    int file_meta_count;
    int no_fsync; /* skip flushing to disk before the rename: other processes still never see
                     a partial file, but a machine crash may leave an empty or partial one
                     (scratch files, tests) */
} plm_vdb_write_options;

/* Writes grids[0..count) (created grids or grids of an open file with a supported type) to path,
 * atomically: the data goes to a new temporary file in path's folder, which is flushed to disk
 * (fsync, unless no_fsync) and renamed over path only when complete. On any failure the temporary file is removed and
 * whatever was at path is untouched. options NULL = all defaults. */
plm_vdb_status plm_vdb_write(const char *path, const plm_vdb_grid *const *grids, int count,
                             const plm_vdb_write_options *options, plm_vdb_error *err);

#ifdef __cplusplus
}
#endif

#endif
