/* Minimal assertions for the ABI tests: each failure prints file:line and the expression, and
 * the test exits non-zero at the end. */
#ifndef PLUME_TEST_CHECK_H
#define PLUME_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);            \
            check_failures++;                                                                   \
        }                                                                                       \
    } while (0)

#define CHECK_STATUS(call, want)                                                                \
    do {                                                                                        \
        int got_ = (int)(call);                                                                 \
        if (got_ != (int)(want)) {                                                              \
            fprintf(stderr, "%s:%d: %s returned %d, expected %s (%d)\n", __FILE__, __LINE__,      \
                    #call, got_, #want, (int)(want));                                            \
            check_failures++;                                                                   \
        }                                                                                       \
    } while (0)

#define CHECK_DONE()                                                                            \
    do {                                                                                        \
        if (check_failures) {                                                                   \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                            \
            return 1;                                                                           \
        }                                                                                       \
        printf("all checks passed\n");                                                          \
        return 0;                                                                               \
    } while (0)

/* 1 when both files exist and hold the same bytes. */
static inline int files_equal(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        same = ca == cb;
        if (ca == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

#endif
