/* The libm functions generated code may call (emit_arith.c: tan, atan2, and what LLVM lowers
 * its exp/log/sin/cos/pow intrinsics to), defined in the JIT by their addresses in this
 * process. Taking the addresses here links libm into whatever links plume_codegen, so the JIT
 * does not depend on the host program having pulled those symbols in itself. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "engine/codegen/toolchain.h"

typedef float (*f1)(float);
typedef double (*d1)(double);
typedef float (*f2)(float, float);
typedef double (*d2)(double, double);

int cg_jit_define_libm(LLVMOrcLLJITRef lljit, LLVMOrcJITDylibRef dylib, char *err,
                       size_t err_size)
{
    const struct {
        const char *name;
        void (*addr)(void);
    } table[] = {
        {"sinf", (void (*)(void))(f1)sinf},     {"sin", (void (*)(void))(d1)sin},
        {"cosf", (void (*)(void))(f1)cosf},     {"cos", (void (*)(void))(d1)cos},
        {"tanf", (void (*)(void))(f1)tanf},     {"tan", (void (*)(void))(d1)tan},
        {"expf", (void (*)(void))(f1)expf},     {"exp", (void (*)(void))(d1)exp},
        {"logf", (void (*)(void))(f1)logf},     {"log", (void (*)(void))(d1)log},
        {"powf", (void (*)(void))(f2)powf},     {"pow", (void (*)(void))(d2)pow},
        {"atan2f", (void (*)(void))(f2)atan2f}, {"atan2", (void (*)(void))(d2)atan2},
        {"fmodf", (void (*)(void))(f2)fmodf},   {"fmod", (void (*)(void))(d2)fmod},
    };
    enum { N = sizeof table / sizeof table[0] };
    LLVMOrcExecutionSessionRef es = LLVMOrcLLJITGetExecutionSession(lljit);
    char prefix = LLVMOrcLLJITGetGlobalPrefix(lljit);
    LLVMOrcCSymbolMapPair pairs[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        size_t at = 0;
        if (prefix)
            name[at++] = prefix;
        strcpy(name + at, table[i].name);
        pairs[i].Name = LLVMOrcExecutionSessionIntern(es, name);
        pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)table[i].addr;
        pairs[i].Sym.Flags.GenericFlags =
            LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        pairs[i].Sym.Flags.TargetFlags = 0;
    }
    /* takes the names and the unit */
    LLVMErrorRef e = LLVMOrcJITDylibDefine(dylib, LLVMOrcAbsoluteSymbols(pairs, N));
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        cg_set_err(err, err_size, "jit_create: defining libm symbols: %s", m);
        LLVMDisposeErrorMessage(m);
        return -1;
    }
    return 0;
}
