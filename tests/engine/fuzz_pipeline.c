/* fuzz_pipeline.c — the whole compiler short of LLVM under mutated sources: every program the
 * front end accepts must also lower, optimize, offload and lower its accesses without an error
 * (engine/listing.c runs exactly the stages a launch runs), with each field parameter given its
 * dimension's default layout. Driven by tests/lang/fuzz_driver.c for a bounded time in ctest;
 * the only error allowed for an accepted program is a field type engine fields cannot hold. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/listing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = NULL, err[4096];
    int rc = eng_compile_listing("fuzz.pk", (const char *)data, size, NULL, ENG_LIST_IR, &text,
                                 err, sizeof err);
    free(text);
    if (rc == ENG_LIST_OK || rc == ENG_LIST_ESOURCE || rc == ENG_LIST_ENOTFOUND)
        return 0;
    if (strstr(err, "a node's fields hold f32 or vec3") || strstr(err, "out of host memory"))
        return 0;
    fprintf(stderr, "fuzz_pipeline: an accepted program failed past the front end:\n%s\n--- source\n%.*s\n",
            err, (int)size, (const char *)data);
    abort();
}
