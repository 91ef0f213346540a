/* The one exported symbol and the plugin's function table. */
#define PLUME_BUILDING_PLUGIN 1
#include "plugin/handles.h"
#include "plugin/plugin.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;

static plume_status plugin_init(void)
{
    pthread_mutex_lock(&init_lock);
    init_count++;
    pthread_mutex_unlock(&init_lock);
    return PLUME_OK;
}

/* The last deinit destroys the contexts the host left alive: their threads (launch, pool,
 * compile, checkpoint writer) would otherwise outlive a dlclose, parked in unmapped code. */
static void plugin_deinit(void)
{
    if (pl_in_any_callback()) { /* the context that called the host is mid-call: kept */
        pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT,
                "deinit: called from a host callback, inside a call on a context; ignored");
        return;
    }
    pthread_mutex_lock(&init_lock);
    if (init_count > 0 && --init_count == 0) {
        uintptr_t h;
        while ((h = handle_any(HK_CONTEXT)) != 0) {
            /* at unload the host's callbacks (and their user data) may be gone already */
            pl_context *ctx = pl_context_get((plume_context *)h);
            if (ctx)
                memset(&ctx->host, 0, sizeof ctx->host);
            pl_context_destroy((plume_context *)h);
        }
        handle_table_release();
    }
    pthread_mutex_unlock(&init_lock);
}

/* Contexts only between init and the last deinit: a context made outside would keep its threads
 * running past the dlclose that no deinit prepared (the header's contract, now enforced). */
static plume_status context_create(const plume_context_options *o, const plume_host *h,
                                   plume_context **out)
{
    pthread_mutex_lock(&init_lock);
    int live = init_count > 0;
    pthread_mutex_unlock(&init_lock);
    if (!live) {
        if (out)
            *out = NULL;
        return pl_fail(NULL, PLUME_ERR_INVALID_ARGUMENT,
                       "context_create: call init() first (and not after the last deinit())");
    }
    return pl_context_create(o, h, out);
}

static uint32_t node_type_count(void) { return pl_registry_count(); }

static const plume_node_desc *node_type(uint32_t i)
{
    const pl_node_type *t = pl_registry_get(i);
    return t ? &t->desc : NULL;
}

static const plume_node_desc *find_node_type(const char *id)
{
    const pl_node_type *t = pl_registry_find(id);
    return t ? &t->desc : NULL;
}

static void free_string(char *s) { free(s); }

static const void *get_extension(const char *id)
{
    if (id && !strcmp(id, PLUME_EXT_CHECKPOINT))
        return &pl_ext_checkpoint;
    if (id && !strcmp(id, PLUME_EXT_DETERMINISTIC))
        return &pl_ext_deterministic;
    if (id && !strcmp(id, PLUME_EXT_DEFERRED_WRITES))
        return &pl_ext_deferred_writes;
    if (id && !strcmp(id, PLUME_EXT_VALIDATE))
        return &pl_ext_validate;
    return pl_get_extension(id);
}

static const plume_plugin table = {
    .struct_size = sizeof(plume_plugin),
    .abi_major = PLUME_ABI_MAJOR,
    .abi_minor = PLUME_ABI_MINOR,
    .id = "org.plume",
    .name = "Plume",
    .version = PLUME_VERSION_STRING,
    .vendor = "Plume developers",
    .init = plugin_init,
    .deinit = plugin_deinit,
    .last_error = pl_last_error,
    .node_type_count = node_type_count,
    .node_type = node_type,
    .find_node_type = find_node_type,
    .get_extension = get_extension,
    .context_create = context_create,
    .context_destroy = pl_context_destroy,
    .context_info = pl_context_info,
    .field_declare = pl_field_declare,
    .field_stat = pl_field_stat,
    .node_create = pl_node_create,
    .node_destroy = pl_node_destroy,
    .node_set_bool = pl_node_set_bool,
    .node_set_int = pl_node_set_int,
    .node_set_float = pl_node_set_float,
    .node_set_vec3 = pl_node_set_vec3,
    .node_set_string = pl_node_set_string,
    .node_bind = pl_node_bind,
    .node_port_count = pl_node_port_count,
    .node_port = pl_node_port,
    .cook = pl_cook,
    .sync = pl_sync,
    .get_stats = pl_get_stats,
    .volume_open = pl_volume_open,
    .volume_close = pl_volume_close,
    .volume_info = pl_volume_info,
    .volume_block_origins = pl_volume_block_origins,
    .volume_read_block = pl_volume_read_block,
    .volume_write_block = pl_volume_write_block,
    .volume_clear = pl_volume_clear,
    .free_string = free_string,
};

const plume_plugin *plume_plugin_entry(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    /* One major is served; any minor of it works because minors only append. */
    (void)host_abi_minor;
    if (host_abi_major != PLUME_ABI_MAJOR)
        return NULL;
    return &table;
}
