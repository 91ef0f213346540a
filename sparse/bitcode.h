/* The sparse runtime (sparse/runtime/) as LLVM bitcode, embedded at build time
 * (plume_sparse_bitcode). One module per target, every plm_rt_* entry point defined in it
 * (runtime.h lists them in PLM_RT_ENTRY_POINTS). The JIT parses the bytes (LLVM-C:
 * LLVMCreateMemoryBufferWithMemoryRange + LLVMParseBitcodeInContext2) and links them into each
 * kernel module with LLVMLinkModules2. Read-only, valid for the life of the process, any thread.
 *   x86_64:  triple x86_64-unknown-linux-gnu, generic x86-64.
 *   nvptx64: triple nvptx64-nvidia-cuda, built for sm_70 with PTX 7.0 (warp election uses
 *            match.any.sync); lowers with llc -march=nvptx64 -mcpu=sm_70 or newer. */
#ifndef PLUME_SPARSE_BITCODE_H
#define PLUME_SPARSE_BITCODE_H

extern const unsigned char plm_runtime_bc_x86_64[];
extern const unsigned long plm_runtime_bc_x86_64_size;
extern const unsigned char plm_runtime_bc_nvptx64[];
extern const unsigned long plm_runtime_bc_nvptx64_size;

#endif
