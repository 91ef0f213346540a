/* The "plume.deferred_writes/1" extension (plume.h): switches a context's file writes to its
 * write queue (write_queue.h). Threads: the context's thread. */
#include "plugin/plugin.h"
#include "plugin/write_queue.h"

static plume_status dw_finish(plume_context *handle)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "deferred writes finish: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "deferred writes finish");
    return ctx->writes ? pl_wq_finish(ctx->writes, ctx) : PLUME_OK;
}

static plume_status dw_set(plume_context *handle, int32_t on)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "deferred writes set: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "deferred writes set");
    if (!on) {
        ctx->deferred_writes = 0;
        return dw_finish(handle);
    }
    if (!ctx->writes && !(ctx->writes = pl_wq_create()))
        return pl_fail(ctx, PLUME_ERR_INTERNAL, "deferred writes set: out of host memory");
    ctx->deferred_writes = 1;
    return PLUME_OK;
}

static plume_status dw_get(plume_context *handle, int32_t *on)
{
    pl_context *ctx = pl_context_get(handle);
    if (!ctx)
        return pl_fail(NULL, PLUME_ERR_INVALID_HANDLE, "deferred writes get: invalid context handle");
    if (pl_in_callback(ctx))
        return pl_refuse_in_callback(ctx, "deferred writes get");
    if (!on)
        return pl_fail(ctx, PLUME_ERR_INVALID_ARGUMENT, "deferred writes get: out is NULL");
    *on = ctx->deferred_writes;
    return PLUME_OK;
}

const plume_ext_deferred_writes pl_ext_deferred_writes = {sizeof pl_ext_deferred_writes, dw_set, dw_get,
                                                          dw_finish};
