/* Assertions for the SFG tests: a failure prints file:line and the expression; the test
 * returns non-zero at the end. */
#ifndef PLUME_TESTS_SFG_CHECK_H
#define PLUME_TESTS_SFG_CHECK_H

#include <stdio.h>

static int sfg_check_failures;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            sfg_check_failures++;                                                            \
        }                                                                                    \
    } while (0)

#define CHECK_EQ(a, b)                                                                       \
    do {                                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                                  \
        if (a_ != b_) {                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__,      \
                    __LINE__, #a, #b, a_, b_);                                               \
            sfg_check_failures++;                                                            \
        }                                                                                    \
    } while (0)

#define CHECK_DONE()                                                                         \
    do {                                                                                     \
        if (sfg_check_failures) {                                                            \
            fprintf(stderr, "%d check(s) failed\n", sfg_check_failures);                     \
            return 1;                                                                        \
        }                                                                                    \
        printf("all checks passed\n");                                                       \
        return 0;                                                                            \
    } while (0)

#endif
