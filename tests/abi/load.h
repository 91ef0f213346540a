/* Loading the plugin as a host does, for the ABI test hosts: dlopen, the entry symbol for
 * this header's ABI version, init. Returns the plugin, or NULL after saying on stderr what
 * failed (the caller exits non-zero). *dl receives the handle (NULL when dlopen failed); the
 * caller keeps it open while it uses the plugin. */
#ifndef PLUME_TEST_ABI_LOAD_H
#define PLUME_TEST_ABI_LOAD_H

#include <dlfcn.h>
#include <stdio.h>

#include "plume/plume.h"

static const plume_plugin *abi_load(const char *path, void **dl)
{
    *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
        return NULL;
    }
    plume_plugin_entry_fn entry = (plume_plugin_entry_fn)dlsym(*dl, PLUME_PLUGIN_ENTRY_SYMBOL);
    const plume_plugin *api = entry ? entry(PLUME_ABI_MAJOR, PLUME_ABI_MINOR) : NULL;
    if (!api) {
        fprintf(stderr, "cannot load %s: no plugin entry for ABI %d.%d\n", path, PLUME_ABI_MAJOR,
                PLUME_ABI_MINOR);
        return NULL;
    }
    if (api->init() != PLUME_OK) {
        fprintf(stderr, "cannot load %s: init failed\n", path);
        return NULL;
    }
    return api;
}

#endif
