/* The table of built-in node types, in the order `plume nodes` lists them. */
#include "plugin/plugin.h"

#include <string.h>

extern const pl_node_type pl_node_source_sphere;
extern const pl_node_type pl_node_vdb_import;
extern const pl_node_type pl_node_vdb_export;
extern const pl_node_type pl_node_kernel;
extern const pl_node_type pl_node_smoke_source;
extern const pl_node_type pl_node_smoke_advect;
extern const pl_node_type pl_node_smoke_forces;
extern const pl_node_type pl_node_smoke_project;
extern const pl_node_type pl_node_smoke_topology;

static const pl_node_type *const types[] = {
    &pl_node_source_sphere,
    &pl_node_vdb_import,
    &pl_node_vdb_export,
    &pl_node_kernel,
    &pl_node_smoke_source,
    &pl_node_smoke_advect,
    &pl_node_smoke_forces,
    &pl_node_smoke_project,
    &pl_node_smoke_topology,
};

uint32_t pl_registry_count(void) { return (uint32_t)(sizeof types / sizeof types[0]); }

const pl_node_type *pl_registry_get(uint32_t i)
{
    return i < pl_registry_count() ? types[i] : NULL;
}

const pl_node_type *pl_registry_find(const char *id)
{
    for (uint32_t i = 0; id && i < pl_registry_count(); i++)
        if (!strcmp(types[i]->desc.id, id))
            return types[i];
    return NULL;
}
