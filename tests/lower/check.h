/* Assertions for the lowering tests: a failure prints file:line and what differed; main
 * returns non-zero at the end through CHECK_DONE. */
#ifndef PLUME_TESTS_LOWER_CHECK_H
#define PLUME_TESTS_LOWER_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)

#define CHECK_STR(got, want)                                                                 \
    do {                                                                                     \
        const char *g_ = (got), *w_ = (want);                                                \
        if (!g_ || strcmp(g_, w_) != 0) {                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n--- got:\n%s--- want:\n%s---\n",       \
                    __FILE__, __LINE__, #got, g_ ? g_ : "(null)\n", w_);                     \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)

#define CHECK_DONE()                                                                         \
    do {                                                                                     \
        if (check_failures) {                                                                \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                         \
            return 1;                                                                        \
        }                                                                                    \
        printf("all checks passed\n");                                                       \
        return 0;                                                                            \
    } while (0)

#endif
