/* lang_test.h — tiny assertion helpers shared by the kernel-language tests. */
#ifndef PLUME_LANG_TEST_H
#define PLUME_LANG_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang.h"

static int lt_failures;

#define LT_CHECK(cond, ...)                                                                    \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            lt_failures++;                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);          \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    } while (0)

/* Prints where two texts first differ. */
static inline void lt_show_diff(const char *name, const char *want, const char *got) {
    size_t i = 0;
    while (want[i] && want[i] == got[i])
        i++;
    fprintf(stderr, "--- %s: first difference at byte %zu\n--- expected:\n%s\n--- got:\n%s\n", name, i,
            want, got);
}

static inline pk_result *lt_compile(const char *src, int no_stdlib) {
    pk_options opt = {0};
    opt.no_stdlib = no_stdlib;
    pk_result *r = pk_compile("t.pk", src, strlen(src), &opt);
    if (!r) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return r;
}

static inline int lt_finish(const char *what) {
    if (lt_failures) {
        fprintf(stderr, "%s: %d failure(s)\n", what, lt_failures);
        return 1;
    }
    printf("%s: ok\n", what);
    return 0;
}

#endif
