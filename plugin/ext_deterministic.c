/* The "plume.deterministic/1" extension (plume.h): deterministic mode of a context, which the
 * engine implements (eng_set_deterministic). Threads: the context's thread. */
#include "plugin/plugin.h"

static plume_status det_set(plume_context *handle, int32_t on)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "deterministic set: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "deterministic set");
    /* GPU threads add floats in an order no one chooses: a GPU context cannot promise it. */
    if (on && eng_on_cuda(ctx->eng))
        return pl_fail(ctx, PLUME_ERR_UNSUPPORTED,
                       "deterministic mode runs on the CPU only; this context is on %s",
                       ctx->device_name);
    return pl_from_engine(ctx, eng_set_deterministic(ctx->eng, on != 0));
}

static plume_status det_get(plume_context *handle, int32_t *on)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "deterministic get: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "deterministic get");
    if (!on)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "deterministic get: out is NULL");
    *on = eng_deterministic(ctx->eng);
    return PLUME_OK;
}

const plume_ext_deterministic pl_ext_deterministic = {sizeof pl_ext_deterministic, det_set, det_get};
