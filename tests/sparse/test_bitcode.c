/* The embedded runtime bitcode loads through the LLVM C API for both targets, verifies, defines
 * every documented entry point, holds no mutable global state and calls nothing outside itself
 * (only LLVM intrinsics are declared), as a freestanding runtime must. */
#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <string.h>

#include "sparse/bitcode.h"
#include "sparse/runtime/runtime.h"
#include "test_util.h"

static const char *const entry_points[] = {
#define NAME(n) #n,
    PLM_RT_ENTRY_POINTS(NAME)
#undef NAME
};

static void check_module(const char *what, const unsigned char *bc, unsigned long size,
                         const char *triple_prefix)
{
    CHECK(size > 1000, "%s: %lu bytes of bitcode", what, size);
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRange((const char *)bc, size, what, 0);
    LLVMModuleRef mod = NULL;
    if (LLVMParseBitcodeInContext2(ctx, buf, &mod)) {
        CHECK(0, "%s: LLVMParseBitcodeInContext2 failed", what);
        LLVMDisposeMemoryBuffer(buf);
        LLVMContextDispose(ctx);
        return;
    }
    const char *triple = LLVMGetTarget(mod);
    CHECK(strncmp(triple, triple_prefix, strlen(triple_prefix)) == 0, "%s: triple %s", what,
          triple);
    char *msg = NULL;
    CHECK(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg), "%s: verifier: %s", what,
          msg ? msg : "");
    LLVMDisposeMessage(msg);
    size_t n = sizeof entry_points / sizeof entry_points[0];
    CHECK(n >= 50, "%zu entry points listed", n);
    for (size_t i = 0; i < n; i++) {
        LLVMValueRef fn = LLVMGetNamedFunction(mod, entry_points[i]);
        CHECK(fn != NULL, "%s: %s missing", what, entry_points[i]);
        if (fn) {
            CHECK(!LLVMIsDeclaration(fn), "%s: %s only declared", what, entry_points[i]);
            CHECK(LLVMGetLinkage(fn) == LLVMExternalLinkage, "%s: %s not external", what,
                  entry_points[i]);
        }
    }
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        if (LLVMIsDeclaration(fn))
            CHECK(strncmp(name, "llvm.", 5) == 0, "%s: calls external function %s", what, name);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) {
        size_t len;
        const char *name = LLVMGetValueName2(g, &len);
        CHECK(LLVMIsGlobalConstant(g), "%s: mutable global %s", what, name);
    }
    LLVMDisposeModule(mod);
    LLVMDisposeMemoryBuffer(buf); /* parsing does not take the buffer */
    LLVMContextDispose(ctx);
}

int main(void)
{
    check_module("x86_64", plm_runtime_bc_x86_64, plm_runtime_bc_x86_64_size, "x86_64");
    check_module("nvptx64", plm_runtime_bc_nvptx64, plm_runtime_bc_nvptx64_size, "nvptx64");
    return TEST_RESULT();
}
