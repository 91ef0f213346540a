/* Tiny test helpers: CHECK counts failures and keeps going; a fixed-seed PRNG. */
#ifndef PLUME_TEST_SPARSE_UTIL_H
#define PLUME_TEST_SPARSE_UTIL_H

#include <stdint.h>
#include <stdio.h>

static int test_failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            if (test_failures < 30) {                                                      \
                fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);   \
                fprintf(stderr, __VA_ARGS__);                                              \
                fputc('\n', stderr);                                                       \
            }                                                                              \
            test_failures++;                                                               \
        }                                                                                  \
    } while (0)

#define TEST_RESULT()                                                                      \
    (test_failures ? (fprintf(stderr, "%d check(s) failed\n", test_failures), 1)           \
                   : (printf("ok\n"), 0))

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r)
{
    /* xorshift64* */
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

static inline uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_next(r) >> 33) % n; }

#endif
