/* Commands served by plugin extensions: vdb, compile, render. Each says clearly when the
 * loaded plugin lacks the extension. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const void *need_ext(const char *cmd, host_plugin *p, const char *id)
{
    const void *ext = p->api->get_extension(id);
    if (!ext)
        cli_error(cmd, "the plugin %s does not provide %s, which this command needs", p->path, id);
    return ext;
}

int cmd_vdb(int argc, char **argv, const cli_common *c)
{
    if (argc < 1 || !strcmp(argv[0], "--help")) {
        fprintf(argc < 1 ? stderr : stdout,
                "usage: plume vdb info FILE [--json]\n"
                "       plume vdb convert IN OUT [--half] [--compression none|zip|blosc]\n");
        return argc < 1 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[0], "info") && strcmp(argv[0], "convert")) {
        cli_error("vdb", "unknown subcommand '%s' (info or convert)", argv[0]);
        return EXIT_USAGE;
    }
    host_plugin p;
    if (cli_load("vdb", c, &p))
        return EXIT_WORK;
    int rc = need_ext("vdb", &p, PLUME_EXT_VDB) ? EXIT_WORK : EXIT_WORK;
    host_plugin_unload(&p);
    return rc;
}

int cmd_compile(int argc, char **argv, const cli_common *c)
{
    (void)argv;
    if (argc < 1) {
        cli_error("compile", "which file? (plume compile FILE.pk)");
        return EXIT_USAGE;
    }
    host_plugin p;
    if (cli_load("compile", c, &p))
        return EXIT_WORK;
    need_ext("compile", &p, PLUME_EXT_COMPILE);
    host_plugin_unload(&p);
    return EXIT_WORK;
}

int cmd_render(int argc, char **argv, const cli_common *c)
{
    (void)argv;
    if (argc < 1) {
        cli_error("render", "which file? (plume render FILE.vdb -o OUT.png)");
        return EXIT_USAGE;
    }
    host_plugin p;
    if (cli_load("render", c, &p))
        return EXIT_WORK;
    need_ext("render", &p, PLUME_EXT_RENDER);
    host_plugin_unload(&p);
    return EXIT_WORK;
}
