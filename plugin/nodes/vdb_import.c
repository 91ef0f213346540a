/* org.plume.vdb.import: one grid of a .vdb file (or of a #### sequence) -> a field. */
#include "plugin/nodes/node_util.h"
#include "plugin/plugin.h"
#include "plugin/vdb_bridge.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const modes[] = {"replace", "max", "add", "set"};

static const plume_param_desc params[] = {
    PARAM_FILE("file", "File", "The .vdb to read; a run of # is replaced by the frame number for "
               "sequences. Relative paths are relative to the scene file.", "", 0),
    PARAM_STRING("grid", "Grid", "Name of the grid to read.", "density"),
    PARAM_INT("grid_index", "Grid Index", "Which of several grids with that name (0 = the first).", 0, 0,
              1000000, 0, 8),
    PARAM_ENUM("mode", "Mode", "replace: the field becomes the grid (its background too); max, add, set: "
               "the grid's active voxels are merged in, as a source (a level set's whole leaves and inside, "
               "as in replace: its inside is stored inactive).", "replace", modes),
};

static const plume_port_desc ports[] = {
    PORT("target", "Target", "The field a float grid is read into.", PLUME_VALUE_F32, PLUME_PORT_OUT, "", 1),
    PORT("vector_target", "Vector Target", "The field a vec3 grid is read into.", PLUME_VALUE_VEC3,
         PLUME_PORT_OUT, "", 1),
};

/* A vec3 grid by a name velocities go by (Houdini's vel, Blender's velocity, v). */
static int velocity_named(const char *name)
{
    return !strcasecmp(name, "vel") || !strcasecmp(name, "velocity") || !strcasecmp(name, "v");
}

/* What the cook refuses before reading anything (plume.validate/1 says it too). */
static plume_status validate(pl_node *n, eng_field *const *fields)
{
    (void)fields;
    if (!pl_param_str(n, "file")[0])
        return pl_fail(n->ctx, PLUME_ERR_MISSING_INPUT, "node '%s': no file given", n->name);
    return PLUME_OK;
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    const char *pattern = pl_param_str(n, "file");
    if (!pattern[0])
        return pl_fail(env->ctx, PLUME_ERR_MISSING_INPUT, "node '%s': no file given", n->name);
    char path[4096];
    if (strchr(pattern, '#'))
        vdb_frame_path(pattern, env->info->frame, path, sizeof path);
    else
        snprintf(path, sizeof path, "%s", pattern);
    plm_vdb_error e;
    plm_vdb_file *file = NULL;
    if (plm_vdb_open(path, &file, &e) != PLM_VDB_OK)
        return pl_fail(env->ctx, PLUME_ERR_IO, "node '%s': %s", n->name, e.message);
    const char *grid_name = pl_param_str(n, "grid");
    const plm_vdb_grid *grid = NULL;
    plume_status st = PLUME_OK;
    if (plm_vdb_find_grid(file, grid_name, (int)pl_param_num(n, "grid_index"), &grid, &e) != PLM_VDB_OK) {
        /* the reader's messages name the file only where it says something about the file */
        st = pl_fail(env->ctx, PLUME_ERR_NOT_FOUND, "node '%s': %s%s%s", n->name, strstr(e.message, path) ? "" : path,
                     strstr(e.message, path) ? "" : ": ", e.message);
    } else {
        plm_vdb_grid_info gi;
        plm_vdb_grid_get_info(grid, &gi, &e);
        eng_field *f = gi.components == 3 ? env->port_fields[1] : env->port_fields[0];
        if (gi.type == PLM_VDB_TYPE_UNSUPPORTED) {
            st = pl_fail(env->ctx, PLUME_ERR_UNSUPPORTED, "node '%s': %s: grid '%s' is %s, which fields cannot hold "
                         "(float and vec3s grids can)", n->name, path, grid_name, gi.type_name);
        } else if (!f) {
            st = pl_fail(env->ctx, PLUME_ERR_MISSING_INPUT, "node '%s': %s: grid '%s' is %s; bind port '%s' to a field",
                         n->name, path, grid_name, gi.type_name, gi.components == 3 ? "vector_target" : "target");
        } else {
            char what[4200];
            snprintf(what, sizeof what, "%s: grid '%s'", path, grid_name);
            const char *mode = pl_param_str(n, "mode");
            vdb_merge m = !strcmp(mode, "max") ? VDB_MERGE_MAX
                          : !strcmp(mode, "add") ? VDB_MERGE_ADD
                          : !strcmp(mode, "set") ? VDB_MERGE_SET
                                                 : VDB_MERGE_REPLACE;
            st = vdb_grid_to_field(env->ctx, env->ctx->eng, grid, f, m, 0, what);
            if (st == PLUME_OK && gi.components == 3 && gi.grid_class != PLM_VDB_CLASS_STAGGERED &&
                velocity_named(grid_name) && !n->warned) {
                n->warned = 1;
                pl_log(env->ctx, PLUME_LOG_WARNING,
                       "node '%s': %s is not staggered (class %s) and its vectors were copied as they "
                       "are: if field '%s' is a smoke velocity (staggered: x on the face between voxels "
                       "I-(1,0,0) and I), each component now stands half a voxel from the voxel centre it "
                       "was sampled at; write the grid staggered (OpenVDB class staggered) to import it "
                       "exactly",
                       n->name, what, plm_vdb_class_name(gi.grid_class), eng_field_info(f)->name);
            }
        }
    }
    plm_vdb_close(file);
    return st;
}

const pl_node_type pl_node_vdb_import = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.vdb.import",
             .label = "VDB Import",
             .category = "IO",
             .help = "Reads one float or vec3 grid of a .vdb file into a field, keeping its position and "
                     "background; the grid's voxel size must match the field's, and a transform that rotates, "
                     "mirrors or swaps axes is refused (fields are axis-aligned).",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
    .validate = validate,
};
