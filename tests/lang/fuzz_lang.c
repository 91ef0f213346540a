/* fuzz_lang.c — the kernel-language front end's fuzz target. Built with libFuzzer when
 * PLUME_FUZZ=ON (clang: -fsanitize=fuzzer,address,undefined), and linked into the
 * deterministic driver fuzz_driver.c for ctest. Any input must give a result whose parts
 * agree, never an internal error, and a printable AST when it compiles. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *text) {
    fprintf(stderr, "fuzz_lang: %s\n%s\n", why, text ? text : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pk_options opt = {0};
    /* the first byte picks options, so both with and without the stdlib are explored */
    opt.no_stdlib = size > 0 && (data[0] & 0x80) == 0x80 && (data[0] & 1);
    pk_result *r = pk_compile("fuzz.pk", (const char *)data, size, &opt);
    if (!r)
        return 0; /* out of memory */
    const char *text = pk_result_text(r);
    int ok = pk_result_ok(r);
    const pk_program *prog = pk_result_program(r);
    if (ok != (prog != NULL) || ok != (pk_result_error_count(r) == 0))
        fail("result parts disagree", text);
    if (!ok && text[0] == 0)
        fail("errors without text", NULL);
    for (uint32_t i = 0; i < pk_result_diag_count(r); i++) {
        const pk_diag *d = pk_result_diag(r, i);
        if (!d || !d->message || !d->loc.file)
            fail("bad diagnostic", text);
        /* the verifier found a checked AST that breaks ast.h's contract */
        if (strncmp(d->message, "internal error:", 15) == 0)
            fail("internal error", text);
    }
    if (prog) {
        char *dump = pk_print_program(prog, PK_PRINT_STDLIB);
        if (!dump)
            fail("printer failed", NULL);
        free(dump);
        for (uint32_t k = 0; k < prog->nkernels; k++) {
            const pk_func *f = prog->kernels[k];
            if (!f->is_kernel || pk_find_kernel(prog, f->name) == NULL)
                fail("kernel lookup", f->name);
            for (uint32_t p = 0; p < f->nparams; p++)
                if (f->params[p]->type.kind == PK_T_FIELD && f->params[p]->type.dim > 3)
                    fail("bad field parameter", f->name);
        }
    }
    pk_result_free(r);
    return 0;
}
