#define _GNU_SOURCE
#include "loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PLUME_INSTALL_LIBDIR
#define PLUME_INSTALL_LIBDIR "lib"
#endif

static int exists(const char *p) { return access(p, R_OK) == 0; }

/* The libplume.so beside the running executable: <dir>/../lib or <dir>/../<install libdir>. */
static int default_path(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    const char *cands[] = {"../lib/libplume.so", "../" PLUME_INSTALL_LIBDIR "/libplume.so", "libplume.so"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        int k = snprintf(out, n, "%s/%s", exe, cands[i]);
        if (k > 0 && (size_t)k < n && exists(out))
            return 0;
    }
    if (snprintf(out, n, "%s/../lib/libplume.so", exe) < 0)
        out[0] = 0;
    return -1;
}

int host_plugin_load(host_plugin *p, const char *explicit_path, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    const char *env = getenv("PLUME_PLUGIN");
    if (explicit_path && explicit_path[0]) {
        snprintf(p->path, sizeof p->path, "%s", explicit_path);
    } else if (env && env[0]) {
        snprintf(p->path, sizeof p->path, "%s", env);
    } else if (default_path(p->path, sizeof p->path) != 0) {
        snprintf(err, errlen, "cannot find libplume.so (looked beside this program, e.g. %s); "
                 "pass --plugin PATH or set PLUME_PLUGIN", p->path);
        return -1;
    }
    /* dlopen searches the library path for a bare name; make relative paths explicit. */
    char path[4200];
    snprintf(path, sizeof path, "%s%s", strchr(p->path, '/') ? "" : "./", p->path);
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        snprintf(err, errlen, "cannot load plugin %s: %s", p->path, dlerror());
        return -1;
    }
    plume_plugin_entry_fn entry = (plume_plugin_entry_fn)dlsym(p->dl, PLUME_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        snprintf(err, errlen, "%s is not a Plume plugin (no %s)", p->path, PLUME_PLUGIN_ENTRY_SYMBOL);
        dlclose(p->dl);
        p->dl = NULL;
        return -1;
    }
    p->api = entry(PLUME_ABI_MAJOR, PLUME_ABI_MINOR);
    if (!p->api) {
        snprintf(err, errlen, "plugin %s cannot serve ABI %d.%d", p->path, PLUME_ABI_MAJOR, PLUME_ABI_MINOR);
        dlclose(p->dl);
        p->dl = NULL;
        return -1;
    }
    if (p->api->struct_size < sizeof(plume_plugin) || p->api->init() != PLUME_OK) {
        snprintf(err, errlen, "plugin %s is older than this host or failed to initialise: %s", p->path,
                 p->api->struct_size >= sizeof(plume_plugin) ? p->api->last_error(NULL) : "");
        dlclose(p->dl);
        p->dl = NULL;
        return -1;
    }
    return 0;
}

void host_plugin_unload(host_plugin *p)
{
    if (p->api)
        p->api->deinit();
    if (p->dl)
        dlclose(p->dl);
    p->dl = NULL;
    p->api = NULL;
}
