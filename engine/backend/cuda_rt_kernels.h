/* cuda_rt_kernels.h — the runtime's GPU kernels (cuda_rt_kernels.c) as nvptx64 LLVM bitcode,
 * embedded at build time. Not yet linked with the runtime: the executor links both and lowers
 * them to PTX for its device (engine/exec_cuda.c). Read-only, any thread.
 * Absent (size 0) where clang-16 was not found at build time. */
#ifndef PLUME_ENGINE_BACKEND_CUDA_RT_KERNELS_H
#define PLUME_ENGINE_BACKEND_CUDA_RT_KERNELS_H

extern const unsigned char plm_cuda_rt_kernels_bc[];
extern const unsigned long plm_cuda_rt_kernels_bc_size;

#endif
