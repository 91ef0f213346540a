#!/bin/bash
# Packs a build for a machine that lacks Debian 12's libraries (the lent GPU machine, whose image
# is not Debian): the binaries that run kernels, libplume.so, the CTest files, the GPU test's
# PTX, every shared library they load beyond glibc and libstdc++, and the CUDA toolkit's ptxas
# and libdevice where this machine has them, as one xz tarball.
#   scripts/device_bundle.sh [BUILD_DIR] [OUT_DIR]     (default: build .devbundle)
# On the other machine, from the repository root:
#   tar xJf .devbundle/bundle.tar.xz && export LD_LIBRARY_PATH=$PWD/.devbundle/lib
# CTest files name absolute paths: the checkout must be reachable at the same path there.
set -euo pipefail
build=${1:-build}
out=${2:-.devbundle}
rm -rf "$out"
mkdir -p "$out/stage/$out/lib"
bins="plume plume-bench test_engine_kernels_scalar test_engine_kernels_sparse
      test_engine_atomic_demotion test_engine_fuzz_pipeline test_engine_differential
      test_engine_launch_thread
      test_engine_mgpcg smoke_physics_test smoke_source_test abi_host_test abi_checkpoint_test
      test_sparse_gpu"
files=()
for b in $bins; do
  f=$(find "$build" -name "$b" -type f -perm -u+x | head -1)
  [ -n "$f" ] && files+=("$f")
done
files+=("$build/lib/libplume.so")
while IFS= read -r f; do files+=("$f"); done < <(find "$build" -name CTestTestfile.cmake -o -name kernels.ptx)
# the shared libraries, minus what every Linux has in a compatible version
for f in "${files[@]}"; do ldd "$f" 2>/dev/null || true; done | awk '/=>/ {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|libpthread|libdl|librt)\.so' |
  while IFS= read -r lib; do cp -L "$lib" "$out/stage/$out/lib/"; done
tar cf - "${files[@]}" | tar xf - -C "$out/stage"
# The toolkit's ptxas (a static binary) and libdevice, which the lent machine may lack: without
# ptxas the driver's JIT compiles every task, one at a time (docs/gpu.md, "Compiling").
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ -x "$cuda/bin/ptxas" ]; then
  mkdir -p "$out/stage/$out/bin"
  cp -L "$cuda/bin/ptxas" "$out/stage/$out/bin/"
fi
[ -r "$cuda/nvvm/libdevice/libdevice.10.bc" ] && cp -L "$cuda/nvvm/libdevice/libdevice.10.bc" "$out/stage/$out/"
tar cf - -C "$out/stage" . | xz -T2 -9 > "$out/bundle.tar.xz"
rm -rf "$out/stage"
ls -la "$out/bundle.tar.xz"
