/* PTX emission with LLVM 16's NVPTX target. */
#define _GNU_SOURCE
#include "engine/codegen/ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/codegen/toolchain.h"

ptx_options ptx_options_default(void)
{
    ptx_options o;
    memset(&o, 0, sizeof o);
    o.sm = 80;
    o.opt_level = 3;
    const char *env = getenv("PLUME_LIBDEVICE");
    if (env && env[0] && access(env, R_OK) == 0)
        o.libdevice = env;
    else if (access(PTX_LIBDEVICE_DEFAULT, R_OK) == 0)
        o.libdevice = PTX_LIBDEVICE_DEFAULT;
    return o;
}

/* The architectures LLVM 16's NVPTX backend knows that a current ptxas still assembles, with
 * the oldest PTX ISA each needs (PTX ISA release notes). */
static const struct {
    int sm, min_ptx;
} archs[] = {
    {70, 60}, {72, 61}, {75, 63}, {80, 70}, {86, 71}, {87, 74}, {89, 78}, {90, 78},
};

int ptx_target_features(int sm, int ptx_version, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        if (archs[i].sm != sm)
            continue;
        int v = ptx_version ? ptx_version : archs[i].min_ptx;
        /* LLVM 16 knows PTX ISA up to 7.8. */
        if (v < archs[i].min_ptx || v > 78)
            return 0;
        snprintf(buf, n, "+ptx%d", v);
        return 1;
    }
    return 0;
}

int ptx_mark_kernel(LLVMModuleRef m, LLVMValueRef fn)
{
    if (!m || !fn || !LLVMIsAFunction(fn))
        return -1;
    LLVMContextRef ctx = LLVMGetModuleContext(m);
    LLVMMetadataRef ops[3] = {
        LLVMValueAsMetadata(fn),
        LLVMMDStringInContext2(ctx, "kernel", 6),
        LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 1, 0)),
    };
    LLVMMetadataRef node = LLVMMDNodeInContext2(ctx, ops, 3);
    LLVMAddNamedMetadataOperand(m, "nvvm.annotations", LLVMMetadataAsValue(ctx, node));
    return 0;
}

int ptx_emit(const ptx_options *opt, jit_build_fn build, void *user, jit_emit_kind kind,
             char **text, uint64_t *instructions, char *err, size_t err_size)
{
    if (!text || !build) {
        cg_set_err(err, err_size, "ptx_emit: bad arguments");
        return -1;
    }
    *text = NULL;
    ptx_options o = opt ? *opt : ptx_options_default();
    if (o.sm == 0)
        o.sm = 80;
    char cpu[16], features[16];
    snprintf(cpu, sizeof cpu, "sm_%d", o.sm);
    if (!ptx_target_features(o.sm, o.ptx_version, features, sizeof features)) {
        cg_set_err(err, err_size,
                   "ptx_emit: sm_%d with PTX ISA %d.%d is not supported (sm: 70 72 75 80 86 87 "
                   "89 90; PTX up to 7.8 with LLVM 16)",
                   o.sm, o.ptx_version / 10, o.ptx_version % 10);
        return -1;
    }
    cg_target t = {CG_NVPTX64,   cpu,
                   features,     o.opt_level,
                   o.runtime_bc, o.runtime_bc_size,
                   o.libdevice};
    cg_toolchain tc;
    if (cg_toolchain_init(&tc, &t, err, err_size) != 0)
        return -1;
    LLVMModuleRef m;
    int rc = cg_build_module(&tc, "plume", build, user, NULL, 0, &m, instructions, err,
                             err_size);
    /* A device module cannot call anything outside itself: an undefined function (the
     * __nv_* math when no libdevice was given) is an error here, not in ptxas. */
    for (LLVMValueRef f = rc == 0 ? LLVMGetFirstFunction(m) : NULL; f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (LLVMIsDeclaration(f) && strncmp(name, "llvm.", 5) != 0 && LLVMGetFirstUse(f)) {
            cg_set_err(err, err_size, "ptx_emit: '%s' is called but not defined in the module "
                                      "(plm_rt_*: pass the runtime bitcode; __nv_* math: "
                                      "libdevice, %s)", name,
                       o.libdevice ? o.libdevice : "none given (" PTX_LIBDEVICE_DEFAULT " is absent)");
            LLVMDisposeModule(m);
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        rc = cg_print(&tc, m, kind, text, err, err_size);
        LLVMDisposeModule(m);
    }
    cg_toolchain_fini(&tc);
    return rc;
}
