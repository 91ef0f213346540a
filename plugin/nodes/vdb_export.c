/* org.plume.vdb.export: fields -> one .vdb per frame. */
#include "plugin/nodes/node_util.h"
#include "plugin/plugin.h"
#include "engine/kernel.h"
#include "plugin/vdb_bridge.h"
#include "plugin/vdb_stable.h"
#include "plugin/write_queue.h"

#include <stdio.h>
#include <string.h>

static const char *const compressions[] = {"blosc", "zip", "none"};
static const char *const vel_classes[] = {"staggered", "centred", "unknown"};
static const char *const float_classes[] = {"fog_volume", "level_set", "unknown"};

static const plume_param_desc params[] = {
    PARAM_FILE("file", "File", "Output path; each run of # becomes the frame number, zero-padded "
               "(smoke_####.vdb -> smoke_0007.vdb); a path without # gets _#### before its extension "
               "(emit.vdb -> emit_0007.vdb). Relative paths go under the output folder.",
               "smoke_####.vdb", PLUME_PARAM_FLAG_FILE_OUTPUT),
    PARAM_ENUM("compression", "Compression", "blosc (fast), zip or none. OpenVDB writes fog volumes and "
               "level sets without zip whatever is asked, so zip shrinks only vel (and unknown-class grids); "
               "blosc applies to all.", "blosc", compressions),
    PARAM_BOOL("half_float", "Half Float", "Store values as 16-bit floats: half the size, about 3 "
               "significant digits down to about 6e-5; smaller magnitudes lose precision (1e-6 keeps "
               "about 2 digits) and those below about 3e-8 become 0.", 0),
    PARAM_STRING("density_name", "Density Grid", "Grid name for the density port; empty: the bound field's name.", "density"),
    PARAM_STRING("temperature_name", "Temperature Grid", "Grid name for the temperature port; empty: the bound field's name.", "temperature"),
    PARAM_STRING("flame_name", "Flame Grid", "Grid name for the flame port; empty: the bound field's name.", "flame"),
    PARAM_STRING("vel_name", "Velocity Grid", "Grid name for the velocity port; empty: the bound field's name.", "vel"),
    PARAM_ENUM("vel_class", "Velocity Class", "How the velocity is written. staggered: as the smoke "
               "solver keeps it (a MAC grid: x on the face between voxels I-(1,0,0) and I, as OpenVDB "
               "defines it), class staggered, so tools that honour the class sample it where it lives. "
               "centred: the mean of each voxel's two faces per axis, the velocity at the voxel's "
               "centre, class unknown: for readers that take every vector at the voxel centre (many "
               "renderers' motion blur). unknown: the values as they are, class unknown: for a vec3 "
               "field that is not a staggered velocity.", "staggered", vel_classes),
    PARAM_ENUM("density_class", "Density Class", "Grid class of the density port: fog_volume, level_set "
               "(signed distances, negative inside: the band nearer the surface than the background is "
               "written active and the inside as OpenVDB stores it) or unknown.", "fog_volume", float_classes),
    PARAM_ENUM("temperature_class", "Temperature Class", "Grid class of the temperature port, as "
               "density_class.", "fog_volume", float_classes),
    PARAM_ENUM("flame_class", "Flame Class", "Grid class of the flame port, as density_class.", "fog_volume",
               float_classes),
};

/* Every port is optional: an unbound port whose default field does not exist is skipped. */
static const plume_port_desc ports[] = {
    PORT("density", "Density", "Written as a float grid of the class density_class says (a fog volume by "
         "default).", PLUME_VALUE_F32, PLUME_PORT_IN, "density", 1),
    PORT("temperature", "Temperature", "Written as a float grid of the class temperature_class says.",
         PLUME_VALUE_F32, PLUME_PORT_IN, "temperature", 1),
    PORT("flame", "Flame", "Written as a float grid of the class flame_class says.", PLUME_VALUE_F32,
         PLUME_PORT_IN, "flame", 1),
    PORT("vel", "Velocity", "Written as a vec3 grid of the class vel_class says, with OpenVDB's vector type "
         "'contravariant relative' (a velocity: transforms without the translation).", PLUME_VALUE_VEC3,
         PLUME_PORT_IN, "vel", 1),
};

static const char *const name_params[] = {"density_name", "temperature_name", "flame_name", "vel_name"};
static const char *const class_params[] = {"density_class", "temperature_class", "flame_class", "vel_class"};

/* OpenVDB's VecType for a velocity */
#define VEC_CONTRAVARIANT_RELATIVE 3

static plm_vdb_class class_named(const char *c)
{
    return !strcmp(c, "fog_volume")  ? PLM_VDB_CLASS_FOG_VOLUME
           : !strcmp(c, "level_set") ? PLM_VDB_CLASS_LEVEL_SET
           : !strcmp(c, "staggered") ? PLM_VDB_CLASS_STAGGERED
                                     : PLM_VDB_CLASS_UNKNOWN;
}

/* Two ports written under one grid name: readers that look grids up by name (Blender,
 * pyopenvdb.read, render --grid) would see only the first. */
static plume_status check_names(pl_node *n, eng_field *const *fields)
{
    const char *names[4] = {NULL, NULL, NULL, NULL};
    for (int p = 0; p < 4; p++) {
        if (!fields[p])
            continue;
        names[p] = pl_param_str(n, name_params[p]);
        if (!names[p][0])
            names[p] = eng_field_info(fields[p])->name;
        for (int q = 0; q < p; q++)
            if (names[q] && !strcmp(names[q], names[p]))
                return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT,
                               "node '%s': ports '%s' and '%s' would both be written as grid '%s', and readers "
                               "that look grids up by name see only the first; give one another %s",
                               n->name, ports[q].id, ports[p].id, names[p], name_params[p]);
    }
    return PLUME_OK;
}

/* What the cook refuses before writing anything (plume.validate/1 says it too). */
static plume_status validate(pl_node *n, eng_field *const *fields)
{
    if (!pl_param_str(n, "file")[0])
        return pl_fail(n->ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "node '%s': its 'file' parameter is empty (e.g. smoke_####.vdb)", n->name);
    return check_names(n, fields);
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    plm_vdb_grid *grids[4] = {NULL, NULL, NULL, NULL};
    int count = 0;
    if (!pl_param_str(n, "file")[0])
        return pl_fail(env->ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "node '%s': its 'file' parameter is empty (e.g. smoke_####.vdb)", n->name);
    /* Export is a sync point: the frame's queued tasks run now and their errors (a memory
     * budget) stop the export before any file is written. */
    int rc = eng_sync(env->ctx->eng);
    if (rc)
        return pl_from_engine(env->ctx, rc);
    plume_status st = check_names(n, env->port_fields);
    for (int p = 0; p < 4 && st == PLUME_OK; p++) {
        if (!env->port_fields[p])
            continue;
        const char *name = pl_param_str(n, name_params[p]);
        if (!name[0])
            name = eng_field_info(env->port_fields[p])->name;
        const char *class_name = pl_param_str(n, class_params[p]);
        plm_vdb_class cls = class_named(class_name);
        const eng_field_desc *fd = eng_field_info(env->port_fields[p]);
        /* OpenVDB's fog volume has background 0 (tools::checkFogVolume): another background
         * is not a fog volume to the tools that rely on the class */
        if (cls == PLM_VDB_CLASS_FOG_VOLUME && fd->background[0] != 0) {
            cls = PLM_VDB_CLASS_UNKNOWN;
            if (!(n->warned & 1u << p)) {
                n->warned |= 1u << p;
                pl_log(env->ctx, PLUME_LOG_WARNING,
                       "node '%s': field '%s' has background %g, and a fog volume's is 0: grid '%s' is "
                       "written with class unknown (set %s to unknown to say so)",
                       n->name, fd->name, (double)fd->background[0], name, class_params[p]);
            }
        }
        if (cls == PLM_VDB_CLASS_LEVEL_SET && !(fd->background[0] > 0)) {
            st = pl_fail(env->ctx, PLUME_ERR_INVALID_ARGUMENT,
                         "node '%s': %s is level_set but field '%s' has background %g; a level set's background "
                         "is its band's half-width, a positive distance (outside the surface)",
                         n->name, class_params[p], fd->name, (double)fd->background[0]);
            break;
        }
        st = vdb_field_to_grid(env->ctx, env->port_fields[p], name, cls, p == 3 ? VEC_CONTRAVARIANT_RELATIVE : 0,
                               NULL, p == 3 && !strcmp(class_name, "centred") ? VDB_WRITE_CENTRED : 0, &grids[count]);
        if (st == PLUME_OK)
            count++;
    }
    if (st == PLUME_OK && count == 0)
        st = pl_fail(env->ctx, PLUME_ERR_MISSING_INPUT,
                     "node '%s': nothing to export: none of its ports is bound to a declared field", n->name);
    if (st == PLUME_OK && pl_cancelled(env->ctx))
        st = pl_fail(env->ctx, PLUME_ERR_CANCELLED, "cancelled before writing frame %lld",
                     (long long)env->info->frame);
    if (st == PLUME_OK) {
        char path[4096];
        vdb_frame_path(pl_param_str(n, "file"), env->info->frame, path, sizeof path);
        const char *comp = pl_param_str(n, "compression");
        plm_vdb_compression c = !strcmp(comp, "none") ? PLM_VDB_COMPRESS_NONE
                                : !strcmp(comp, "zip") ? PLM_VDB_COMPRESS_ZIP
                                                       : PLM_VDB_COMPRESS_BLOSC;
        /* The file's bytes depend on its content only (no random UUID): the same frame cooked
         * twice gives the same file. */
        char frame_text[32];
        snprintf(frame_text, sizeof frame_text, "%lld", (long long)env->info->frame);
        plm_vdb_meta meta[2] = {{"creator", "string", "Plume " PLUME_VERSION_STRING},
                                {"plume_frame", "int64", frame_text}};
        plm_vdb_write_options wo = {.compression = c,
                                     .half_float = pl_param_num(n, "half_float") != 0,
                                     .file_meta = meta,
                                     .file_meta_count = 2};
        char who[300];
        if (env->ctx->deferred_writes && env->ctx->writes) {
            snprintf(who, sizeof who, "node '%s', frame %lld", n->name, (long long)env->info->frame);
            st = pl_wq_push(env->ctx->writes, env->ctx, who, path, grids, count, &wo);
            count = 0; /* the queue has the grids now */
        } else {
            snprintf(who, sizeof who, "node '%s'", n->name);
            st = pl_vdb_write_stable(env->ctx, who, path, (const plm_vdb_grid *const *)grids, count, &wo);
            if (st == PLUME_OK)
                pl_log(env->ctx, PLUME_LOG_INFO, "wrote %s", path);
        }
    }
    for (int i = 0; i < count; i++)
        plm_vdb_grid_free(grids[i]);
    return st;
}

const pl_node_type pl_node_vdb_export = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.vdb.export",
             .label = "VDB Export",
             .category = "IO",
             .help = "Writes fields to one .vdb file per frame (atomically: a temporary file renamed when "
                     "complete), with only active voxels, Plume's creator metadata and the frame number. The "
                     "bytes depend only on the content (the OpenVDB UUID is a hash of the rest).",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
    .validate = validate,
};
