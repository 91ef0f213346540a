/* toolchain.h — internal to engine/codegen: what one compiling thread owns, and the module
 * pipeline every path shares (JIT, text emission, PTX).
 *
 * A cg_toolchain is an LLVMContext, a target machine and, when a runtime blob is given, that
 * runtime parsed once into the context (each module links a clone). LLVMContext is not
 * thread-safe: a toolchain is used by one thread at a time, the thread that owns it.
 *
 * The pipeline (cg_build_module): empty module with triple and data layout -> builder ->
 * verifier -> link a clone of the runtime -> strip clang's target attributes from the runtime
 * -> internalize everything but the kept symbols -> LLVMRunPasses("default<On>") -> count
 * instructions. */
#ifndef PLUME_ENGINE_CODEGEN_TOOLCHAIN_H
#define PLUME_ENGINE_CODEGEN_TOOLCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "engine/codegen/jit.h"

typedef enum cg_arch { CG_HOST = 0, CG_NVPTX64 = 1 } cg_arch;

typedef struct cg_target {
    cg_arch arch;
    const char *cpu;      /* NULL = host CPU (CG_HOST) */
    const char *features; /* NULL = host features (CG_HOST) or none */
    int opt_level;
    const void *runtime_bc;
    size_t runtime_bc_size;
    const char *libdevice; /* NVPTX: path of CUDA's libdevice bitcode, linked like the runtime
                            * (its __nv_* math); NULL = none */
} cg_target;

typedef struct cg_toolchain {
    cg_arch arch;
    int opt_level;
    LLVMContextRef ctx;
    LLVMTargetMachineRef tm;
    char *triple;
    char *datalayout;
    LLVMModuleRef runtime; /* NULL without a blob */
    LLVMModuleRef libdevice; /* NULL without one */
    char diag[512];        /* the last error the context's diagnostic handler saw */
} cg_toolchain;

/* Initializes the LLVM targets once per process (any thread). */
void cg_init_llvm(void);

int cg_toolchain_init(cg_toolchain *tc, const cg_target *t, char *err, size_t err_size);
void cg_toolchain_fini(cg_toolchain *tc);

/* Runs the pipeline. keep/n_keep: symbols that stay external (NULL = every external function
 * the builder defined). name: the module's name (diagnostics). On success *out is a module in
 * tc->ctx owned by the caller. */
int cg_build_module(cg_toolchain *tc, const char *name, jit_build_fn build, void *user,
                    const char *const *keep, int n_keep, LLVMModuleRef *out,
                    uint64_t *instructions, char *err, size_t err_size);

uint64_t cg_count_instructions(LLVMModuleRef m);
/* Drops clang's per-function target-cpu, target-features, tune-cpu and no-builtins from every
 * function of m (bitcode built ahead of time, so it inlines into code for another cpu). */
void cg_strip_target_attributes(LLVMModuleRef m);

/* Emits assembly (LLVMAssemblyFile) or an object (LLVMObjectFile) of `m` with tc's target
 * machine. The module is left as it is. */
int cg_emit(cg_toolchain *tc, LLVMModuleRef m, LLVMCodeGenFileType kind,
            LLVMMemoryBufferRef *out, char *err, size_t err_size);

/* The module as text: LLVM IR (JIT_EMIT_LLVM) or the target's assembly (JIT_EMIT_ASM; PTX on
 * NVPTX). *text is malloc'd. Assembly output runs codegen, which may change the module. */
int cg_print(cg_toolchain *tc, LLVMModuleRef m, jit_emit_kind kind, char **text, char *err,
             size_t err_size);

/* Defines libm's functions (sinf, atan2...) in the JIT's dylib by address (jit_symbols.c). */
struct LLVMOrcOpaqueLLJIT;
struct LLVMOrcOpaqueJITDylib;
int cg_jit_define_libm(struct LLVMOrcOpaqueLLJIT *lljit, struct LLVMOrcOpaqueJITDylib *dylib,
                       char *err, size_t err_size);

/* snprintf into err when err is not NULL. */
void cg_set_err(char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Monotonic wall clock, seconds. */
double cg_now(void);

#endif
