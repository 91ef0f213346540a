/* pkdump — test utility: compiles a kernel source file and prints the diagnostics and, on
 * success, the AST dump. Exit status 0 when the source is valid, 1 when it has errors, 2 on
 * bad usage. Used by the docs/stdlib tests and by people writing expected AST text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p) {
                free(buf);
                buf = NULL;
            }
            buf = p;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    pk_options opt = {0};
    int print_stdlib = 0, quiet = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-stdlib") == 0)
            opt.no_stdlib = 1;
        else if (strcmp(argv[i], "--stdlib") == 0)
            print_stdlib = 1;
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: pkdump [--no-stdlib] [--stdlib] [--quiet] FILE.pk\n");
        return 2;
    }
    size_t len = 0;
    char *src = read_file(path, &len);
    if (!src) {
        fprintf(stderr, "pkdump: cannot read %s\n", path);
        return 2;
    }
    pk_result *r = pk_compile(path, src, len, &opt);
    if (!r) {
        fprintf(stderr, "pkdump: out of memory\n");
        free(src);
        return 1;
    }
    fputs(pk_result_text(r), stderr);
    int ok = pk_result_ok(r);
    if (ok && !quiet) {
        char *text = pk_print_program(pk_result_program(r), print_stdlib ? PK_PRINT_STDLIB : 0);
        if (text)
            fputs(text, stdout);
        free(text);
    }
    pk_result_free(r);
    free(src);
    return ok ? 0 : 1;
}
