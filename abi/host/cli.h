/* The `plume` reference host: shared bits of its subcommands. Single-threaded. */
#ifndef PLUME_HOST_CLI_H
#define PLUME_HOST_CLI_H

#include "loader.h"

#define EXIT_WORK 1  /* the work failed */
#define EXIT_USAGE 2 /* bad usage */

typedef struct cli_common {
    const char *plugin_path; /* --plugin */
} cli_common;

/* Prints "plume <cmd>: <message>" to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Loads the plugin or prints why not; returns 0 or -1. */
int cli_load(const char *cmd, const cli_common *c, host_plugin *p);
/* Creates a context with a logging host (warnings and errors to stderr). */
int cli_context(const char *cmd, host_plugin *p, const plume_context_options *o, plume_context **ctx);

int cmd_nodes(int argc, char **argv, const cli_common *c);
int cmd_cook(int argc, char **argv, const cli_common *c);
int cmd_vdb(int argc, char **argv, const cli_common *c);
int cmd_compile(int argc, char **argv, const cli_common *c);
int cmd_render(int argc, char **argv, const cli_common *c);

#endif
