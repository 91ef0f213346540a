#!/bin/bash
# The default scene's first two frames cooked on the fake GPU driver (fake_cuda_exec.c: kernels
# do nothing, and managed memory is inaccessible to the host while GPU work is queued), so any
# host access to the trees that the engine did not wait for first crashes the cook.
#   fake_cook_test.sh PLUME_CLI SCENE OUT_DIR   (LD_LIBRARY_PATH points at the fake; set by ctest)
set -u
cli=$1 scene=$2 out=$3
rm -rf "$out"
log=$(PLUME_KERNEL_CACHE=off PLUME_PTXAS=off "$cli" cook "$scene" --frames 1-2 --device cuda \
      --out "$out" --no-checkpoint --quiet 2>&1)
rc=$?
echo "$log"
[ $rc -eq 0 ] || { echo "FAIL: the cook exited with $rc"; exit 1; }
for f in smoke_0001.vdb smoke_0002.vdb; do
  [ -s "$out/$f" ] || { echo "FAIL: $out/$f was not written"; exit 1; }
done
echo "ok: two frames cooked on the fake GPU with no host access to pending work"
