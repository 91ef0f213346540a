/* plume-bench: runs one benchmark suite, prints its table and optionally writes its JSON. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SUITES 32

static struct {
    const char *name, *help;
    bench_fn fn;
} suites[MAX_SUITES];
static int nsuites;
int bench_gpu;
int bench_mc_n;

bench_fn bench_find(const char *name)
{
    for (int i = 0; i < nsuites; i++)
        if (!strcmp(suites[i].name, name))
            return suites[i].fn;
    return NULL;
}

void bench_register(const char *name, const char *help, bench_fn fn)
{
    if (nsuites < MAX_SUITES) {
        suites[nsuites].name = name;
        suites[nsuites].help = help;
        suites[nsuites].fn = fn;
        nsuites++;
    }
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: plume-bench SUITE [--json FILE] [--quick] [suite options]\n\nsuites:\n");
    for (int i = 0; i < nsuites; i++)
        fprintf(f, "  %-12s %s\n", suites[i].name, suites[i].help);
}

static int write_json_atomic(const char *path, json_t *root)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.tmp", path);
    if (json_dump_file(root, tmp, JSON_INDENT(2)) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int main(int argc, char **argv)
{
    /* Line by line even into a file: a run cut short (a time limit) keeps the rows it printed. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    const char *json_path = NULL;
    int quick = 0;
    char **rest = calloc((size_t)argc, sizeof *rest);
    int nrest = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plume-bench: --json needs a file name\n");
                free(rest);
                return 2;
            }
            json_path = argv[++i];
        } else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            /* not a suite's argument (vdbio took it for its folder) */
            usage(stdout);
            free(rest);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "plume-bench: unknown option '%s'\n", argv[i]);
            usage(stderr);
            free(rest);
            return 2;
        } else {
            rest[nrest++] = argv[i];
        }
    }
    int which = -1;
    for (int i = 0; i < nsuites; i++)
        if (!strcmp(suites[i].name, argv[1]))
            which = i;
    if (which < 0) {
        fprintf(stderr, "plume-bench: unknown suite '%s'\n", argv[1]);
        usage(stderr);
        free(rest);
        return 2;
    }
    bench_ctx ctx = {.argc = nrest, .argv = rest, .quick = quick, .cases = json_array()};
    int rc = suites[which].fn(&ctx);
    if (rc == 0 && json_path) {
        json_t *root = json_pack("{s:s, s:O}", "suite", suites[which].name, "cases", ctx.cases);
        if (write_json_atomic(json_path, root) != 0) {
            fprintf(stderr, "plume-bench: cannot write %s\n", json_path);
            rc = 1;
        } else {
            printf("wrote %s\n", json_path);
        }
        json_decref(root);
    }
    json_decref(ctx.cases);
    free(rest);
    return rc ? 1 : 0;
}
