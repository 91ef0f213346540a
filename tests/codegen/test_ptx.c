/* NVPTX emission (engine/codegen/ptx.h): a kernel that calls the sparse runtime (nvptx64
 * bitcode linked and inlined) and does an atomic add becomes PTX with a .entry, and ptxas
 * assembles it for sm_80 and sm_90. Skipped (77) after the emission checks where ptxas is
 * absent. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/codegen/ptx.h"
#include "sparse/bitcode.h"
#include "tests/check.h"
#include "tests/codegen/ptxas_util.h"

/* kernel void k(ptr rt, ptr out, ptr sum, i32 x):
 *   out[tid] = plm_rt_cell_index(rt, 3, x + tid, 0, 0); atomic sum += (float)tid */
static int build_kernel(void *user, LLVMContextRef ctx, LLVMModuleRef mod, char *err, size_t n)
{
    (void)user, (void)err, (void)n;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(ctx);
    LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
    LLVMTypeRef vd = LLVMVoidTypeInContext(ctx);
    LLVMTypeRef cparams[5] = {ptr, i32, i32, i32, i32};
    LLVMTypeRef cty = LLVMFunctionType(i32, cparams, 5, 0);
    LLVMValueRef cidx = LLVMAddFunction(mod, "plm_rt_cell_index", cty);
    LLVMTypeRef tty = LLVMFunctionType(i32, NULL, 0, 0);
    LLVMValueRef tid = LLVMAddFunction(mod, "llvm.nvvm.read.ptx.sreg.tid.x", tty);
    LLVMTypeRef kparams[4] = {ptr, ptr, ptr, i32};
    LLVMValueRef k = LLVMAddFunction(mod, "k", LLVMFunctionType(vd, kparams, 4, 0));
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, k, "entry"));
    LLVMValueRef t = LLVMBuildCall2(b, tty, tid, NULL, 0, "tid");
    LLVMValueRef args[5] = {LLVMGetParam(k, 0), LLVMConstInt(i32, 3, 0),
                            LLVMBuildAdd(b, LLVMGetParam(k, 3), t, "x"), LLVMConstInt(i32, 0, 0),
                            LLVMConstInt(i32, 0, 0)};
    LLVMValueRef c = LLVMBuildCall2(b, cty, cidx, args, 5, "c");
    LLVMValueRef slot = LLVMBuildGEP2(b, i32, LLVMGetParam(k, 1), &t, 1, "slot");
    LLVMBuildStore(b, c, slot);
    LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpFAdd, LLVMGetParam(k, 2),
                       LLVMBuildUIToFP(b, t, f32, "tf"), LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildRetVoid(b);
    LLVMDisposeBuilder(b);
    return ptx_mark_kernel(mod, k) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    char err[1024];
    const char *ptxas = find_ptxas(argc, argv);
    static const int sms[2] = {80, 90};
    char *ptx[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        ptx_options o = ptx_options_default();
        o.sm = sms[i];
        o.runtime_bc = plm_runtime_bc_nvptx64;
        o.runtime_bc_size = plm_runtime_bc_nvptx64_size;
        uint64_t ninstr = 0;
        CHECK_MSG(ptx_emit(&o, build_kernel, NULL, JIT_EMIT_ASM, &ptx[i], &ninstr, err,
                           sizeof err) == 0,
                  err);
        if (!ptx[i])
            continue;
        char want[32];
        snprintf(want, sizeof want, ".target sm_%d", sms[i]);
        CHECK(strstr(ptx[i], want) != NULL);
        CHECK(strstr(ptx[i], ".visible .entry k(") != NULL);
        CHECK(strstr(ptx[i], "atom.") != NULL || strstr(ptx[i], "red.") != NULL);
        /* the runtime was inlined: no call and no runtime function left */
        CHECK(strstr(ptx[i], "call") == NULL);
        CHECK(strstr(ptx[i], "plm_rt_") == NULL);
        CHECK(ninstr > 0);
    }

    /* Optimized LLVM IR keeps the annotation. */
    char *ll = NULL;
    ptx_options o = ptx_options_default();
    o.runtime_bc = plm_runtime_bc_nvptx64;
    o.runtime_bc_size = plm_runtime_bc_nvptx64_size;
    CHECK_MSG(ptx_emit(&o, build_kernel, NULL, JIT_EMIT_LLVM, &ll, NULL, err, sizeof err) == 0,
              err);
    if (ll) {
        CHECK(strstr(ll, "!\"kernel\"") != NULL);
        free(ll);
    }

    /* Without the runtime, its functions are undefined: an error naming one. */
    CHECK(ptx_emit(NULL, build_kernel, NULL, JIT_EMIT_ASM, &ll, NULL, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "plm_rt_cell_index") != NULL, err);

    /* An sm LLVM 16 cannot target is an error naming it. */
    ptx_options bad = ptx_options_default();
    bad.sm = 100;
    char *none = NULL;
    CHECK(ptx_emit(&bad, build_kernel, NULL, JIT_EMIT_ASM, &none, NULL, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "sm_100") != NULL, err);
    CHECK(none == NULL);

    int assembled = 0;
    if (ptxas) {
        for (int i = 0; i < 2; i++) {
            if (!ptx[i])
                continue;
            char log[4096];
            int rc = run_ptxas(ptxas, ptx[i], "test_ptx_kernel", sms[i], log, sizeof log);
            CHECK_MSG(rc == 0, log);
            assembled += rc == 0;
        }
    }
    free(ptx[0]);
    free(ptx[1]);
    if (atomic_load(&check_failures) == 0 && !ptxas)
        SKIP("ptxas not found (no CUDA toolkit at /usr/local/cuda): PTX emitted and checked as "
             "text, not assembled");
    printf("ptxas assembled %d PTX module(s)\n", assembled);
    CHECK_DONE();
}
