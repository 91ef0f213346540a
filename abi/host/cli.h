/* The `plume` reference host: shared bits of its subcommands. Single-threaded. */
#ifndef PLUME_HOST_CLI_H
#define PLUME_HOST_CLI_H

#include "loader.h"

#define EXIT_WORK 1  /* the work failed */
#define EXIT_USAGE 2 /* bad usage */
#define EXIT_SIGNALLED 128 /* + the signal: a cook cancelled by SIGINT (130), SIGTERM (143), SIGHUP (129) */

typedef struct cli_common {
    const char *plugin_path; /* --plugin */
} cli_common;

/* Prints "plume <cmd>: <message>" to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* PLUME_VERBOSE: unset, empty or 0 -> 0; 2 -> 2 (debug messages too); anything else -> 1. */
int cli_verbosity(void);
/* Prints a plugin warning to stderr: "plume: warning: " first, unless the message already says
 * where and what it is (a kernel file's "file:line:col: warning: ..."). */
void cli_warning(const char *msg);
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
