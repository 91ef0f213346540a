#!/bin/bash
# The default scene's first two frames cooked on the fake GPU driver (fake_cuda_exec.c: kernels
# do nothing, and managed memory is inaccessible to the host while GPU work is queued), so any
# host access to the trees that the engine did not wait for first crashes the cook.
#   fake_cook_test.sh PLUME_CLI SCENE OUT_DIR   (LD_LIBRARY_PATH points at the fake; set by ctest)
set -u
cli=$1 scene=$2 out=$3
# optimized (frames 1-2), eager (every launch left running on the stream), and optimized with
# the launch thread (batches run from another thread)
for v in "optimized 1-2" "eager 1-1" "launch 1-1"; do
  set -- $v
  mode=$1 frames=$2 lt=0
  [ $mode = launch ] && { mode=optimized; lt=1; }
  rm -rf "$out"
  log=$(PLUME_KERNEL_CACHE=off PLUME_PTXAS=off PLUME_LAUNCH_THREAD=$lt "$cli" cook "$scene" \
        --frames $frames --mode $mode --device cuda --out "$out" --no-checkpoint --quiet 2>&1)
  rc=$?
  echo "$log"
  [ $rc -eq 0 ] || { echo "FAIL: $v: the cook exited with $rc"; exit 1; }
  [ -s "$out/smoke_0001.vdb" ] || { echo "FAIL: $v: $out/smoke_0001.vdb was not written"; exit 1; }
  echo "ok: $v cooked on the fake GPU with no host access to pending work"
done
