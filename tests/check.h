/* Assertions for the C tests (backend, codegen, lower, passes, sfg): a failure prints file:line
 * and the expression (or what differed), the test goes on, and CHECK_DONE makes main return 1
 * if anything failed. Counting is atomic, so checks may run on the pool's threads. SKIP prints
 * the reason and returns 77 (ctest's SKIP_RETURN_CODE). */
#ifndef PLUME_TESTS_CHECK_H
#define PLUME_TESTS_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int check_failures;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
            atomic_fetch_add(&check_failures, 1);                                            \
        }                                                                                    \
    } while (0)

#define CHECK_MSG(cond, msg)                                                                 \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond,     \
                    (msg));                                                                  \
            atomic_fetch_add(&check_failures, 1);                                            \
        }                                                                                    \
    } while (0)

#define CHECK_EQ(a, b)                                                                       \
    do {                                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                                  \
        if (a_ != b_) {                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__,      \
                    __LINE__, #a, #b, a_, b_);                                               \
            atomic_fetch_add(&check_failures, 1);                                            \
        }                                                                                    \
    } while (0)

#define CHECK_STR(got, want)                                                                 \
    do {                                                                                     \
        const char *g_ = (got), *w_ = (want);                                                \
        if (!g_ || strcmp(g_, w_) != 0) {                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n--- got:\n%s--- want:\n%s---\n",       \
                    __FILE__, __LINE__, #got, g_ ? g_ : "(null)\n", w_);                     \
            atomic_fetch_add(&check_failures, 1);                                            \
        }                                                                                    \
    } while (0)

#define CHECK_DONE()                                                                         \
    do {                                                                                     \
        int f_ = atomic_load(&check_failures);                                               \
        if (f_) {                                                                            \
            fprintf(stderr, "%d check(s) failed\n", f_);                                     \
            return 1;                                                                        \
        }                                                                                    \
        printf("all checks passed\n");                                                       \
        return 0;                                                                            \
    } while (0)

#define SKIP(...)                                                                            \
    do {                                                                                     \
        printf("SKIPPED: ");                                                                 \
        printf(__VA_ARGS__);                                                                 \
        printf("\n");                                                                        \
        return 77;                                                                           \
    } while (0)

#endif
