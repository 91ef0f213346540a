/* Finding and loading libplume.so by path, through the ABI's one exported symbol. */
#ifndef PLUME_HOST_LOADER_H
#define PLUME_HOST_LOADER_H

#include "plume/plume.h"

typedef struct host_plugin {
    void *dl;
    const plume_plugin *api;
    char path[4096];
} host_plugin;

/* Loads the plugin: `explicit_path` if given, else $PLUME_PLUGIN, else the libplume.so beside
 * this executable (../lib in the build tree or an install prefix). Calls init(). On failure
 * writes a message to err and returns -1. */
int host_plugin_load(host_plugin *p, const char *explicit_path, char *err, size_t errlen);
/* deinit() and dlclose. */
void host_plugin_unload(host_plugin *p);

#endif
