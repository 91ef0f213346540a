/* Text output for a compiler driver: the optimized module as LLVM IR or host assembly. */
#define _GNU_SOURCE
#include "engine/codegen/jit.h"

#include <stdlib.h>
#include <string.h>

#include "engine/codegen/toolchain.h"

int jit_emit_text(const jit_config *cfg, jit_build_fn build, void *user,
                  const char *const *symbols, int n_symbols, jit_emit_kind kind, char **text,
                  char *err, size_t err_size)
{
    if (!text || !build || (symbols == NULL && n_symbols != 0)) {
        cg_set_err(err, err_size, "jit_emit_text: bad arguments");
        return -1;
    }
    *text = NULL;
    jit_config c = cfg ? *cfg : jit_config_default();
    cg_target t = {CG_HOST, c.cpu, c.features, c.opt_level, c.runtime_bc, c.runtime_bc_size, NULL};
    cg_toolchain tc;
    if (cg_toolchain_init(&tc, &t, err, err_size) != 0)
        return -1;
    LLVMModuleRef m;
    int rc = cg_build_module(&tc, "plume", build, user, symbols, n_symbols, &m, NULL, err,
                             err_size);
    if (rc == 0) {
        rc = cg_print(&tc, m, kind, text, err, err_size);
        LLVMDisposeModule(m);
    }
    cg_toolchain_fini(&tc);
    return rc;
}
