/* plume: the reference host. It loads libplume.so and uses nothing but the ABI. */
#include "cli.h"

#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PLUME_VERSION
#define PLUME_VERSION "0.0.0"
#endif

static const char usage_text[] =
    "usage: plume [--plugin PATH] COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  nodes [--json]                      list node types with parameters and ports\n"
    "  cook SCENE [options]                cook a scene (plume cook --help for options)\n"
    "  compile FILE.pk [options]           check a kernel file, show IR / LLVM / assembly / PTX\n"
    "                                      (plume compile --help for options)\n"
    "  vdb info FILE [--json]              describe the grids of a .vdb file\n"
    "  vdb convert IN OUT [--half] [--compression none|zip|blosc]\n"
    "  render FILE.vdb [--grid NAME] [--size WxH] -o OUT.png\n"
    "\n"
    "options:\n"
    "  --plugin PATH   the plugin to load (default: $PLUME_PLUGIN, else the libplume.so\n"
    "                  installed beside this program)\n"
    "  --help, --version\n"
    "\n"
    "exit status: 0 success, 1 the work failed, 2 bad usage, 128 + the signal when a cook was\n"
    "cancelled by one (130 SIGINT, 143 SIGTERM, 129 SIGHUP; stopped 30 s after the signal when\n"
    "no safe point comes, PLUME_CANCEL_GRACE_S seconds when set)\n";

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "plume%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_load(const char *cmd, const cli_common *c, host_plugin *p)
{
    char err[8192];
    if (host_plugin_load(p, c->plugin_path, err, sizeof err) != 0) {
        cli_error(cmd, "%s", err);
        return -1;
    }
    return 0;
}

int cli_verbosity(void)
{
    const char *v = getenv("PLUME_VERBOSE");
    if (!v || !*v || strcmp(v, "0") == 0)
        return 0;
    return strcmp(v, "2") == 0 ? 2 : 1;
}

void cli_warning(const char *msg)
{
    fprintf(stderr, strstr(msg, ": warning: ") ? "%s\n" : "plume: warning: %s\n", msg);
}

static void log_cb(void *user, plume_log_level level, const char *msg)
{
    (void)user;
    /* Errors are printed by the command that got the failing status, with its context. */
    int verbose = cli_verbosity();
    if (level == PLUME_LOG_WARNING)
        cli_warning(msg);
    else if ((level == PLUME_LOG_INFO && verbose >= 1) || (level == PLUME_LOG_DEBUG && verbose >= 2))
        fprintf(stderr, "plume: %s\n", msg);
}

int cli_context(const char *cmd, host_plugin *p, const plume_context_options *o, plume_context **ctx)
{
    plume_host h = {sizeof h, NULL, log_cb, NULL, NULL};
    if (p->api->context_create(o, &h, ctx) != PLUME_OK) {
        cli_error(cmd, "%s", p->api->last_error(NULL));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* A file-size limit (ulimit -f) would kill the process mid-write; ignored, the write fails
     * with EFBIG and the command reports it, leaving the old file and no temporary one. */
    signal(SIGXFSZ, SIG_IGN);
    /* A log reader that goes away (`plume cook ... 2>&1 | head`) would kill the cook mid-write;
     * ignored, writes to the closed pipe fail and the cook goes on. */
    signal(SIGPIPE, SIG_IGN);
    cli_common c = {NULL};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("plume %s (ABI %d.%d)\n", PLUME_VERSION, PLUME_ABI_MAJOR, PLUME_ABI_MINOR);
            return 0;
        } else if (!strcmp(argv[i], "--plugin")) {
            if (i + 1 >= argc) {
                cli_error(NULL, "--plugin needs a path");
                return EXIT_USAGE;
            }
            c.plugin_path = argv[++i];
        } else {
            cli_error(NULL, "unknown option '%s'", argv[i]);
            fputs(usage_text, stderr);
            return EXIT_USAGE;
        }
    }
    if (i >= argc) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[i];
    int sub_argc = argc - i - 1;
    char **sub_argv = argv + i + 1;
    if (!strcmp(cmd, "nodes"))
        return cmd_nodes(sub_argc, sub_argv, &c);
    if (!strcmp(cmd, "cook"))
        return cmd_cook(sub_argc, sub_argv, &c);
    if (!strcmp(cmd, "vdb"))
        return cmd_vdb(sub_argc, sub_argv, &c);
    if (!strcmp(cmd, "compile"))
        return cmd_compile(sub_argc, sub_argv, &c);
    if (!strcmp(cmd, "render"))
        return cmd_render(sub_argc, sub_argv, &c);
    cli_error(NULL, "unknown command '%s'", cmd);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}
