/* org.plume.smoke.source: the smoke solver's emitter. Writes density and temperature (and
 * optionally velocity) inside a soft-edged analytic sphere or a shape read from a VDB grid (fog
 * or level set), and activates the blocks it touches in all three fields: the domain starts
 * here. Kernels: source_sphere and source_field in smoke.pk. */
#include "plugin/nodes/node_util.h"
#include "plugin/nodes/sphere_budget.h"
#include "plugin/nodes/smoke_common.h"
#include "plugin/vdb_bridge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const modes[] = {"max", "set", "add"};
static const char *const shapes[] = {"sphere", "vdb"};

static const plume_param_desc params[] = {
    PARAM_ENUM("shape", "Shape",
               "sphere (center, radius) or vdb: a float grid of a .vdb file, a fog volume "
               "(weight = value clamped to 0..1, at its active voxels only) or a level set (inside, with the edge falloff "
               "outside).",
               "sphere", shapes),
    PARAM_FILE("file", "VDB File",
               "Shape vdb: the .vdb to read; a run of # is replaced by the frame number (an "
               "animated emitter). Relative paths are relative to the scene file. Read again "
               "when the file there changes.",
               "", 0),
    PARAM_STRING("grid", "VDB Grid", "Shape vdb: the name of the float grid to read.", "density"),
    PARAM_INT("grid_index", "Grid Index", "Shape vdb: which of several grids with that name (0 = the first).",
              0, 0, 1000000, 0, 16),
    PARAM_VEC3("center", "Center", "Shape sphere: centre of the sphere in world units.", 0, 0.15, 0, -1e6, 1e6, -10, 10),
    PARAM_FLOAT("radius", "Radius", "Shape sphere: radius in world units.", 0.08, 0, 1e6, 0, 10),
    PARAM_FLOAT("falloff", "Edge Falloff",
                "Width of the soft edge in voxels, beyond the radius (or a level set's surface, "
                "up to the edge of its band); 0 gives a hard edge.", 1.5,
                0, 64, 0, 8),
    PARAM_FLOAT("density", "Density", "Density written inside the emitter (times its edge weight).", 1, -1e9, 1e9, 0, 10),
    PARAM_FLOAT("temperature", "Temperature",
                "Temperature written inside the emitter (the same units as the forces node's "
                "ambient temperature).",
                2, -1e9, 1e9, 0, 10),
    PARAM_ENUM("mode", "Mode",
               "How density and temperature combine with what the fields hold: max, set (blend "
               "towards the value by the edge weight) or add (the value per second, times dt).",
               "max", modes),
    PARAM_BOOL("set_velocity", "Set Velocity",
               "Blend the velocity inside the emitter towards Velocity (by the edge weight).", 0),
    PARAM_VEC3("velocity", "Velocity", "Velocity of the emitted smoke, world units per second.", 0,
               0, 0, -1e6, 1e6, -10, 10),
};

static const plume_port_desc ports[] = {
    PORT("density", "Density", "Smoke density (scalar).", PLUME_VALUE_F32, PLUME_PORT_INOUT,
         "density", 0),
    PORT("temperature", "Temperature", "Temperature (scalar).", PLUME_VALUE_F32, PLUME_PORT_INOUT,
         "temperature", 0),
    PORT("vel", "Velocity", "Staggered velocity; its active blocks are the solver's domain.",
         PLUME_VALUE_VEC3, PLUME_PORT_INOUT, "vel", 0),
};

static int emit_mode(pl_node *n)
{
    const char *mode = pl_param_str(n, "mode");
    return !strcmp(mode, "set") ? 1 : !strcmp(mode, "add") ? 2 : 0;
}

static plume_status cook_sphere(pl_node *n, pl_cook_env *env)
{
    const eng_field_desc *d = eng_field_info(env->port_fields[0]);
    const double *c = pl_param_vec3(n, "center");
    const double *v = pl_param_vec3(n, "velocity");
    double h = d->voxel_size, r = pl_param_num(n, "radius");
    double fall = pl_param_num(n, "falloff") * h, reach = r + fall;
    double lo[3], hi[3];
    int64_t can_lo[3], can_hi[3];
    eng_field_index_range(env->port_fields[0], can_lo, can_hi);
    int clipped = 0;
    for (int k = 0; k < 3; k++) {
        /* voxel i's centre is origin + (i + 0.5) h; the loop covers only voxels the field can
         * hold (a sphere larger than the domain would loop over voxels no field keeps) */
        lo[k] = floor((c[k] - reach - d->origin[k]) / h - 0.5);
        hi[k] = ceil((c[k] + reach - d->origin[k]) / h - 0.5) + 1;
        clipped |= lo[k] < (double)can_lo[k] || hi[k] > (double)can_hi[k];
        lo[k] = lo[k] < (double)can_lo[k] ? (double)can_lo[k] : lo[k];
        hi[k] = hi[k] > (double)can_hi[k] ? (double)can_hi[k] : hi[k];
        if (lo[k] >= hi[k])
            return pl_fail(env->ctx, PLUME_ERR_OUT_OF_RANGE,
                           "node '%s': the sphere (centre %g %g %g, radius %g) lies outside the "
                           "voxels field '%s' can hold (%lld..%lld on axis %c)", n->name, c[0], c[1],
                           c[2], r, d->name, (long long)can_lo[k], (long long)can_hi[k] - 1, "xyz"[k]);
    }
    /* the voxels it activates hold density, temperature and velocity: 20 bytes at least */
    plume_status fits = sphere_fits_budget(n, c, r, h, d->origin, lo, hi, clipped, 20.0);
    if (fits != PLUME_OK)
        return fits;
    eng_arg a[15] = {
        smoke_field_arg(env->port_fields[0]),
        smoke_field_arg(env->port_fields[1]),
        smoke_field_arg(env->port_fields[2]),
        smoke_vec(lo[0], lo[1], lo[2]),
        smoke_vec(hi[0], hi[1], hi[2]),
        smoke_vec(d->origin[0], d->origin[1], d->origin[2]),
        smoke_vec(c[0], c[1], c[2]),
        smoke_num(r),
        smoke_num(fall),
        smoke_num(pl_param_num(n, "density")),
        smoke_num(pl_param_num(n, "temperature")),
        smoke_vec(v[0], v[1], v[2]),
        smoke_num(pl_param_num(n, "set_velocity") != 0),
        smoke_num(emit_mode(n)),
        smoke_num(env->info->dt),
    };
    return smoke_launch(n, env, "source_sphere", a, 15);
}

/* Reads the grid into the node's scratch field "<node>:shape" when the (frame-expanded) path,
 * or the file there (its size, time and inode: an artist exported it again), differs from what
 * it holds: once per bake for a still file, once per frame for a sequence, not once per
 * substep. *level_set tells how to read its values. */
static plume_status load_shape(pl_node *n, pl_cook_env *env, eng_field **shape, int *level_set)
{
    const char *pattern = pl_param_str(n, "file"), *grid_name = pl_param_str(n, "grid");
    if (!pattern[0])
        return pl_fail(env->ctx, PLUME_ERR_MISSING_INPUT,
                       "node '%s': shape is vdb but no file is given", n->name);
    char path[4096], key[4400];
    if (strchr(pattern, '#'))
        vdb_frame_path(pattern, env->info->frame, path, sizeof path);
    else
        snprintf(path, sizeof path, "%s", pattern);
    plume_status st =
        smoke_scratch(n, env, 0, "shape", env->port_fields[0], ENG_F32, 3, SMOKE_KEPT, shape);
    if (st != PLUME_OK)
        return st;
    smoke_state *s = smoke_state_of(n);
    struct stat fs;
    if (stat(path, &fs) != 0)
        memset(&fs, 0, sizeof fs); /* the open below says why */
    int grid_index = (int)pl_param_num(n, "grid_index");
    snprintf(key, sizeof key, "%s\n%s#%d\n%lld.%09ld %lld %llu", path, grid_name, grid_index, (long long)fs.st_mtim.tv_sec,
             (long)fs.st_mtim.tv_nsec, (long long)fs.st_size, (unsigned long long)fs.st_ino);
    if (s->loaded && !strcmp(s->loaded + 1, key)) {
        *level_set = s->loaded[0] == 'L';
        return PLUME_OK;
    }
    free(s->loaded);
    s->loaded = NULL;
    plm_vdb_error e;
    plm_vdb_file *file = NULL;
    if (plm_vdb_open(path, &file, &e) != PLM_VDB_OK)
        return pl_fail(env->ctx, PLUME_ERR_IO, "node '%s': %s", n->name, e.message);
    const plm_vdb_grid *grid = NULL;
    plm_vdb_grid_info gi;
    if (plm_vdb_find_grid(file, grid_name, grid_index, &grid, &e) != PLM_VDB_OK ||
        plm_vdb_grid_get_info(grid, &gi, &e) != PLM_VDB_OK) {
        st = pl_fail(env->ctx, PLUME_ERR_NOT_FOUND, "node '%s': %s", n->name, e.message);
    } else if (gi.components != 1) {
        st = pl_fail(env->ctx, PLUME_ERR_TYPE_MISMATCH,
                     "node '%s': %s: grid '%s' is %s; an emitter reads a float grid", n->name,
                     path, grid_name, gi.type_name);
    } else {
        char what[4200];
        snprintf(what, sizeof what, "node '%s': %s: grid '%s'", n->name, path, grid_name);
        *level_set = gi.grid_class == PLM_VDB_CLASS_LEVEL_SET;
        /* a fog shape emits at the file's active voxels only: a background of 0.5 read into the
         * rest of their blocks emitted over whole 8^3 leaves */
        st = vdb_grid_to_field(env->ctx, env->ctx->eng, grid, *shape, VDB_MERGE_REPLACE,
                               *level_set ? 0 : VDB_READ_BACKGROUND_ZERO, what);
    }
    plm_vdb_close(file);
    if (st == PLUME_OK) {
        s->loaded = malloc(strlen(key) + 2);
        if (s->loaded) {
            s->loaded[0] = *level_set ? 'L' : 'F';
            strcpy(s->loaded + 1, key);
        }
    }
    return st;
}

static plume_status cook_vdb(pl_node *n, pl_cook_env *env)
{
    eng_field *shape = NULL;
    int level_set = 0;
    plume_status st = load_shape(n, env, &shape, &level_set);
    if (st != PLUME_OK)
        return st;
    const eng_field_desc *d = eng_field_info(env->port_fields[0]);
    const double *v = pl_param_vec3(n, "velocity");
    double fall = pl_param_num(n, "falloff") * d->voxel_size, band = eng_field_info(shape)->background[0];
    smoke_state *s = smoke_state_of(n);
    if (level_set && fall > band && s && !s->warned_band) {
        /* the file knows distances only within its band: past it the ramp has nothing to go on */
        pl_log(env->ctx, PLUME_LOG_WARNING,
               "node '%s': falloff %g voxels reaches past the level set's band (%g voxels): the edge stops "
               "at the band; write the level set with a wider band (OpenVDB's half width) for a softer one",
               n->name, pl_param_num(n, "falloff"), band / d->voxel_size);
        s->warned_band = 1;
    }
    eng_arg a[13] = {
        smoke_field_arg(shape),
        smoke_field_arg(env->port_fields[0]),
        smoke_field_arg(env->port_fields[1]),
        smoke_field_arg(env->port_fields[2]),
        smoke_num(level_set),
        smoke_num(fall),
        smoke_num(band > 0 ? band : INFINITY),
        smoke_num(pl_param_num(n, "density")),
        smoke_num(pl_param_num(n, "temperature")),
        smoke_vec(v[0], v[1], v[2]),
        smoke_num(pl_param_num(n, "set_velocity") != 0),
        smoke_num(emit_mode(n)),
        smoke_num(env->info->dt),
    };
    return smoke_launch(n, env, "source_field", a, 13);
}

/* What the cook refuses before reading anything (plume.validate/1 says it too). */
static plume_status validate(pl_node *n, eng_field *const *fields)
{
    (void)fields;
    if (!strcmp(pl_param_str(n, "shape"), "vdb") && !pl_param_str(n, "file")[0])
        return pl_fail(n->ctx, PLUME_ERR_MISSING_INPUT, "node '%s': shape is vdb but no file is given", n->name);
    return PLUME_OK;
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    plume_status st = smoke_same_grid(n, env, env->port_fields, 3);
    if (st != PLUME_OK)
        return st;
    return strcmp(pl_param_str(n, "shape"), "vdb") ? cook_sphere(n, env) : cook_vdb(n, env);
}

const pl_node_type pl_node_smoke_source = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.smoke.source",
             .label = "Smoke Source",
             .category = "Smoke",
             .help = "Emits smoke from an analytic sphere or a VDB grid (fog or level set): density, "
                     "temperature and optionally velocity, activating the blocks it touches in "
                     "the solver's fields.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = COUNT(ports),
             .ports = ports},
    .cook = cook,
    .validate = validate,
};
