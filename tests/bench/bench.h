/* plume-bench: the suite registry shared by every benchmark driver.
 *
 * A suite is one C file in tests/bench/ named bench_<suite>.c. It registers itself at load time
 * with BENCH_SUITE and, when run, prints a human table to stdout and appends one JSON object per
 * case to ctx->cases (jansson; the suite keeps no reference after appending). The driver writes
 * the JSON file atomically (temporary name, then rename) after the suite returns.
 * Everything here runs on the main thread. */
#ifndef PLUME_BENCH_H
#define PLUME_BENCH_H

#include <jansson.h>

typedef struct bench_ctx {
    int argc;          /* arguments after the suite name, options already removed */
    char **argv;
    int quick;         /* 1 with --quick: small sizes, for smoke-testing the driver in CI */
    json_t *cases;     /* JSON array owned by the driver; append with json_array_append_new */
} bench_ctx;

/* Returns 0 on success, 1 when the work failed (the message already printed to stderr). */
typedef int (*bench_fn)(bench_ctx *ctx);

void bench_register(const char *name, const char *help, bench_fn fn);

/* Set by the gpu suite before it runs the others: their contexts go to CUDA device 0, and
 * the MacCormack case uses bench_mc_n voxels per axis (0: its own default). */
extern int bench_gpu;
extern int bench_mc_n;
/* The registered suite of that name, or NULL. */
bench_fn bench_find(const char *name);

/* Wall-clock seconds from a monotonic clock. */
double bench_now(void);

#define BENCH_SUITE(name, help, fn)                                                        \
    static void __attribute__((constructor)) bench_reg_##fn(void) { bench_register(name, help, fn); }

#endif
