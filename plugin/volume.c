/* Volume handles: a host's view of one field for moving 8^3 blocks without files. */
#include "plugin/handles.h"
#include "plugin/plugin.h"
#include "engine/kernel.h"

#include <stdlib.h>
#include <string.h>

typedef struct pl_volume {
    uintptr_t handle;
    pl_context *ctx;
    eng_field *field;
    int32_t *origins; /* the snapshot, 3 per block */
    uint64_t nblocks;
    int stale; /* writes happened since the snapshot; retaken when next read */
    struct pl_volume *next;
} pl_volume;

#define GET_VOL(var, handle)                                                                    \
    pl_volume *var = handle_get((uintptr_t)(handle), HK_VOLUME);                                \
    if (!var)                                                                                   \
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE,                                         \
                       "%s: invalid volume handle (NULL, closed, or not a volume)", __func__ + 3); \
    if (pl_in_callback(var->ctx))                                                               \
        return pl_refuse_in_callback(var->ctx, __func__ + 3)

static int snapshot(pl_volume *v)
{
    uint64_t n = eng_field_block_count(v->field);
    int32_t *o = malloc((size_t)(n ? n : 1) * 3 * sizeof *o);
    if (!o)
        return -1;
    free(v->origins);
    v->origins = o;
    v->nblocks = eng_field_block_origins(v->field, o, n);
    v->stale = 0;
    return 0;
}

/* Work queued on the context runs first, and its error (a memory budget) is this call's: the
 * engine's own waits inside the field functions below cannot report it. */
static plume_status settle(pl_volume *v)
{
    int rc = eng_sync(v->ctx->eng);
    return rc ? pl_from_engine(v->ctx, rc) : PLUME_OK;
}

static plume_status refresh(pl_volume *v)
{
    plume_status st = settle(v);
    if (st != PLUME_OK)
        return st;
    if (v->stale && snapshot(v) != 0)
        return pl_fail(v->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    return PLUME_OK;
}

plume_status pl_volume_open(plume_context *handle, const char *field, plume_volume **out)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "volume_open: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "volume_open");
    if (!out)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "volume_open: out is NULL");
    *out = NULL;
    if (!field)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "volume_open: field is NULL");
    plume_status st = pl_sync(handle);
    if (st != PLUME_OK)
        return st;
    eng_field *f = eng_field_find(ctx->eng, field);
    if (!f)
        return pl_fail(ctx, PLUME_ERR_NOT_FOUND, "volume_open: no field named '%s'", field);
    pl_volume *v = calloc(1, sizeof *v);
    if (!v || snapshot((v->field = f, v)) != 0 || !(v->handle = handle_new(HK_VOLUME, v))) {
        if (v)
            free(v->origins);
        free(v);
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "volume_open: out of host memory");
    }
    v->ctx = ctx;
    v->next = ctx->volumes;
    ctx->volumes = v;
    *out = (plume_volume *)v->handle;
    return PLUME_OK;
}

static void volume_free(pl_volume *v)
{
    handle_drop(v->handle);
    free(v->origins);
    free(v);
}

void pl_volume_close(plume_volume *handle)
{
    pl_volume *v = handle_get((uintptr_t)handle, HK_VOLUME);
    if (!v)
        return;
    if (pl_in_callback(v->ctx)) {
        pl_refuse_in_callback(v->ctx, "volume_close");
        return;
    }
    for (pl_volume **p = &v->ctx->volumes; *p; p = &(*p)->next)
        if (*p == v) {
            *p = v->next;
            break;
        }
    volume_free(v);
}

void pl_volumes_close_all(pl_context *ctx)
{
    while (ctx->volumes) {
        pl_volume *v = ctx->volumes;
        ctx->volumes = v->next;
        volume_free(v);
    }
}

plume_status pl_volume_info(plume_volume *handle, plume_volume_info *out)
{
    GET_VOL(v, handle);
    if (!out || out->struct_size < sizeof(uint32_t))
        return pl_fail(v->ctx, PLUME_ERR_INVALID_ARGUMENT, "volume_info: out is NULL or has no struct_size");
    plume_status rst = refresh(v);
    if (rst != PLUME_OK)
        return rst;
    const eng_field_desc *d = eng_field_info(v->field);
    plume_volume_info info = {0};
    info.struct_size = sizeof info;
    info.value_type = d->type == ENG_VEC3 ? PLUME_VALUE_VEC3 : PLUME_VALUE_F32;
    info.components = (uint32_t)eng_field_components(v->field);
    info.voxel_size = d->voxel_size;
    for (int k = 0; k < 3; k++) {
        info.origin[k] = d->origin[k];
        info.background[k] = d->background[k];
        info.bbox_min[k] = INT32_MAX;
        info.bbox_max[k] = INT32_MIN;
    }
    info.block_count = v->nblocks;
    info.active_voxels = eng_field_active_voxels(v->field);
    for (uint64_t b = 0; b < v->nblocks; b++)
        for (int k = 0; k < 3; k++) {
            int32_t o = v->origins[3 * b + k];
            if (o < info.bbox_min[k])
                info.bbox_min[k] = o;
            if (o + 7 > info.bbox_max[k])
                info.bbox_max[k] = o + 7;
        }
    size_t n = out->struct_size < sizeof info ? out->struct_size : sizeof info;
    memcpy(out, &info, n);
    out->struct_size = (uint32_t)n;
    return PLUME_OK;
}

plume_status pl_volume_block_origins(plume_volume *handle, uint64_t first, uint32_t count,
                                     int32_t *origins)
{
    GET_VOL(v, handle);
    if (count && !origins)
        return pl_fail(v->ctx, PLUME_ERR_INVALID_ARGUMENT, "volume_block_origins: origins is NULL");
    plume_status rst = refresh(v);
    if (rst != PLUME_OK)
        return rst;
    if (first > v->nblocks || count > v->nblocks - first)
        return pl_fail(v->ctx, PLUME_ERR_OUT_OF_RANGE,
                       "volume_block_origins: %u blocks from block %llu asked for, the volume has %llu",
                       count, (unsigned long long)first, (unsigned long long)v->nblocks);
    memcpy(origins, v->origins + 3 * first, (size_t)count * 3 * sizeof *origins);
    return PLUME_OK;
}

static int aligned(const int32_t o[3])
{
    return !(o[0] & 7) && !(o[1] & 7) && !(o[2] & 7);
}

plume_status pl_volume_read_block(plume_volume *handle, const int32_t origin[3], float *values,
                                  uint64_t *mask)
{
    GET_VOL(v, handle);
    if (!origin || !values)
        return pl_fail(v->ctx, PLUME_ERR_INVALID_ARGUMENT, "volume_read_block: origin or values is NULL");
    if (!aligned(origin))
        return pl_fail(v->ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "volume_read_block: origin (%d,%d,%d) is not a multiple of 8", origin[0],
                       origin[1], origin[2]);
    plume_status st = settle(v);
    if (st != PLUME_OK)
        return st;
    eng_field_read_block(v->field, origin, values, mask);
    return PLUME_OK;
}

plume_status pl_volume_write_block(plume_volume *handle, const int32_t origin[3],
                                   const float *values, const uint64_t *mask)
{
    GET_VOL(v, handle);
    if (!origin || !values)
        return pl_fail(v->ctx, PLUME_ERR_INVALID_ARGUMENT, "volume_write_block: origin or values is NULL");
    if (!aligned(origin))
        return pl_fail(v->ctx, PLUME_ERR_INVALID_ARGUMENT,
                       "volume_write_block: origin (%d,%d,%d) is not a multiple of 8", origin[0],
                       origin[1], origin[2]);
    int rc = eng_field_write_block(v->ctx->eng, v->field, origin, values, mask);
    if (rc)
        return pl_from_engine(v->ctx, rc);
    v->stale = 1;
    return PLUME_OK;
}

plume_status pl_volume_clear(plume_volume *handle)
{
    GET_VOL(v, handle);
    plume_status st = settle(v);
    if (st != PLUME_OK)
        return st;
    eng_field_clear(v->ctx->eng, v->field);
    v->stale = 1;
    return PLUME_OK;
}
