/* plume-bench gpu: the state-flow-graph benchmarks on CUDA device 0. Runs the micro,
 * maccormack (256^3; --quick 32^3) and mgpcg suites with every context on the GPU, each case
 * eager and optimized, with batches launched as CUDA graphs and kernel by kernel on a stream,
 * and prints GPU time (CUDA events) beside wall time; then the smoke suite with its cooks on the
 * GPU (PLUME_BENCH_DEVICE=cuda), streams against graphs among its variants. Without a usable
 * GPU it says why and fails. Optional argument: one suite name (micro, maccormack, mgpcg,
 * smoke). */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

static int run_gpu(bench_ctx *bctx)
{
    eng_options o = {1, 0};
    eng_context *probe = eng_create(&o);
    if (!probe || eng_use_cuda(probe) != ENG_OK) {
        fprintf(stderr, "plume-bench gpu: no usable GPU: %s\n", probe ? eng_error(probe) : "no context");
        eng_destroy(probe);
        return 1;
    }
    printf("gpu: %s\n", eng_device_name(probe));
    eng_destroy(probe);
    bench_gpu = 1;
    bench_mc_n = bctx->quick ? 0 : 256;
    static const char *const suites[] = {"micro", "maccormack", "mgpcg", "smoke"};
    const char *only = bctx->argc > 0 ? bctx->argv[0] : NULL;
    int fail = 0;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (only && strcmp(only, suites[i]))
            continue;
        bench_fn fn = bench_find(suites[i]);
        if (!fn)
            continue;
        printf("\n== %s on the GPU\n", suites[i]);
        if (!strcmp(suites[i], "smoke"))
            setenv("PLUME_BENCH_DEVICE", "cuda", 1);
        bench_ctx sub = *bctx;
        sub.argc = 0;
        fail |= fn(&sub);
    }
    bench_gpu = 0;
    bench_mc_n = 0;
    return fail;
}

BENCH_SUITE("gpu", "micro, maccormack (256^3), mgpcg and smoke on CUDA device 0: eager vs "
                   "optimized, CUDA graphs vs stream launches, GPU time [suite]", run_gpu)
