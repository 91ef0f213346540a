/* Assertions for the passes tests: a failure prints file:line and what differed; main returns
 * non-zero at the end through CHECK_DONE. */
#ifndef PLUME_TESTS_PASSES_CHECK_H
#define PLUME_TESTS_PASSES_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)

#define CHECK_EQ(a, b)                                                                       \
    do {                                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                                  \
        if (a_ != b_) {                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__,      \
                    __LINE__, #a, #b, a_, b_);                                               \
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
