/* cuda_ptxas.h — PTX to machine code (a cubin) with the CUDA toolkit's ptxas, each compile in
 * a process of its own.
 *
 * Why: the driver's JIT appears to compile one module at a time per process. On an H200 the
 * pool's 16 threads loading the default scene's 102 tasks as PTX summed 262 s of driver time
 * for a 26 s first frame, while ptxas assembles the same PTX in 19 s on one core of the CPU
 * machine. ptxas processes run side by side, one per pool thread. It is optional: where no
 * toolkit is installed, or its cubin does not load (a toolkit newer than the driver), the
 * executor falls back to the driver (engine/exec_cuda.c).
 *
 * Ownership: cuda_ptxas_compile hands back a malloc'd image; the temporary folder it works in
 * (under $TMPDIR, else /tmp) is removed before it returns, whatever happened.
 * Threads: any, at once. */
#ifndef PLUME_ENGINE_BACKEND_CUDA_PTXAS_H
#define PLUME_ENGINE_BACKEND_CUDA_PTXAS_H

#include <stddef.h>

/* The ptxas to use: $PLUME_PTXAS ("off" or empty: none), else /usr/local/cuda/bin/ptxas.
 * Returns 1 with the path in path[n] when that file is executable, else 0. */
int cuda_ptxas_find(char *path, size_t n);

/* Assembles the NUL-terminated PTX text for sm (e.g. 90: -arch=sm_90, -O3). 0 with the cubin
 * in *image (the caller frees) and *size, or -1 with a message in msg that carries the first
 * lines ptxas printed ("ptxas exited with 255: ptxas fatal   : ..."). */
int cuda_ptxas_compile(const char *ptxas, int sm, const char *ptx, void **image, size_t *size,
                       char *msg, size_t msg_size);

#endif
