/* ptx.h — NVPTX code generation: a module built for nvptx64-nvidia-cuda becomes PTX text for
 * one GPU architecture, ready for the CUDA driver (cuda_driver.h: cuda_module_load_ptx).
 *
 * The pipeline is the CPU JIT's (jit.h), with the NVPTX target of LLVM 16: the builder fills
 * a module whose triple and data layout are set; kernels are marked with ptx_mark_kernel
 * (`!nvvm.annotations !{ptr @k, !"kernel", i32 1}`, how LLVM 16 knows an entry point); the
 * nvptx64 runtime bitcode, when given, is linked and internalized (clang's sm_70 target
 * attributes dropped so it inlines into kernels of any sm); "default<O3>" with the NVPTX
 * target machine; then PTX from the NVPTX asm printer.
 *
 * Threads. ptx_emit creates its own LLVMContext and target machine: any thread, any number at
 * once. ptx_mark_kernel runs inside a builder, on the builder's thread.
 *
 * Errors. 0, or -1 with one message in err naming the step (build, verifier, linking the
 * runtime, optimizer, code generation). */
#ifndef PLUME_ENGINE_CODEGEN_PTX_H
#define PLUME_ENGINE_CODEGEN_PTX_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "engine/codegen/jit.h"

typedef struct ptx_options {
    int sm;          /* compute capability as major*10+minor: 75, 80, 86, 89, 90; 0 = 80 */
    int ptx_version; /* e.g. 70 for PTX ISA 7.0; 0 = the lowest that sm needs (sm_80: 7.0,
                        sm_86: 7.1, sm_89/sm_90: 7.8) */
    int opt_level;   /* 0..3 */
    const void *runtime_bc; /* nvptx64 bitcode linked into the module; NULL = none */
    size_t runtime_bc_size;
    /* CUDA's libdevice bitcode (the __nv_* math that sqrt/exp/sin/pow... become); NULL: math
     * calls are an error. Read at each ptx_emit. */
    const char *libdevice;
} ptx_options;

/* The CUDA toolkit's libdevice when it is installed there, else NULL. */
#define PTX_LIBDEVICE_DEFAULT "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"

/* sm_80, O3, no runtime, libdevice = $PLUME_LIBDEVICE when that names a readable file, else
 * PTX_LIBDEVICE_DEFAULT when that file exists */
ptx_options ptx_options_default(void);

/* Marks fn (a function of m) as a kernel entry point. Returns 0, or -1 when fn is not a
 * function. */
int ptx_mark_kernel(LLVMModuleRef m, LLVMValueRef fn);

/* Builds, links, optimizes and prints the module: PTX text (JIT_EMIT_ASM) or the optimized
 * LLVM IR (JIT_EMIT_LLVM). Exported: every external function the builder defined. *text is
 * malloc'd: free() it. instructions (optional): LLVM instructions after optimization. */
int ptx_emit(const ptx_options *opt, jit_build_fn build, void *user, jit_emit_kind kind,
             char **text, uint64_t *instructions, char *err, size_t err_size);

/* The feature string for an sm/PTX pair ("+ptx70"); 0 when sm is not one LLVM 16 knows. */
int ptx_target_features(int sm, int ptx_version, char *buf, size_t n);

#endif
