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

#endif
