/* Scene files (JSON): fields, nodes with parameters and bindings, and which nodes run at init,
 * per substep and per frame. See docs/scene-format.md. Errors name the file, the JSON path
 * ($.nodes[2].params.radius) and what was expected. Single-threaded. */
#ifndef PLUME_HOST_SCENE_H
#define PLUME_HOST_SCENE_H

#include "plume/plume.h"

#include <stddef.h>
#include <stdint.h>

typedef struct scene_stage {
    plume_node **nodes;
    uint32_t count;
} scene_stage;

typedef struct scene {
    char *path;          /* as given */
    char *dir;           /* folder of the scene file, for relative input paths */
    char *name;
    int64_t frame_start, frame_end;
    double fps;
    uint32_t substeps_min, substeps_max;
    double cfl;          /* 0: fixed substeps_min per frame */
    char *velocity;      /* field used for the CFL condition, or NULL */
    int velocity_type;   /* that field's PLUME_VALUE_* + 1 once declared (0: no such field) */
    double voxel_size;   /* the substep velocity field's voxel size (the CFL's), 0 without one */
    int deterministic;   /* "deterministic": true */
    /* What identifies the scene for resuming a bake, FNV-1a 64: content_hash of its JSON as
     * parsed (keys sorted, compact, without "description"), kernels_hash of every kernel file
     * it names, in the order read (after scene_instantiate). */
    uint64_t content_hash, kernels_hash;
    void *json;          /* json_t*, owned */
    plume_node **nodes;  /* all nodes, owned by the context */
    uint32_t nnodes;
    char **field_names;
    uint32_t nfields;
    scene_stage init, substep, frame;
    /* output file parameters as resolved, and the JSON path that set each: two nodes writing
     * one file would overwrite each other's frames */
    char **outputs, **output_paths;
    plume_node **output_nodes; /* the node whose parameter each is (owned by the context) */
    uint32_t noutputs;
} scene;

/* Reads and checks the file's structure. Returns 0, or -1 with a message in err. */
int scene_load(scene *sc, const char *path, char *err, size_t errlen);
/* Declares the fields and creates the nodes in ctx. FILE_PATH parameters the node writes
 * (PLUME_PARAM_FLAG_FILE_OUTPUT) are resolved against out_dir, ones it reads against the
 * scene's folder. Returns 0, or -1 with a message. */
int scene_instantiate(scene *sc, const plume_plugin *api, plume_context *ctx, const char *out_dir,
                      char *err, size_t errlen);
void scene_free(scene *sc);

#endif
