#!/bin/bash
# The GPU checks of issue 8 in one command, for a machine with an NVIDIA GPU (a lent one: pack
# the build first with scripts/device_bundle.sh and carry .devbundle). From the repository root:
#   scripts/gpu_check.sh [OUT_DIR] [PART...]     parts: tests bench smoke (default: all three)
# tests: the kernel-running tests with PLUME_DEVICE=cuda; bench: plume-bench gpu (micro,
# maccormack 256^3, mgpcg) with JSON, and mgpcg again with the launch thread; smoke: 8 frames
# of the default scene on the GPU, eager, optimized, optimized on streams, optimized with the
# launch thread, with --stats. What it reports goes to OUT_DIR (default
# gpu-out), line by line, so a run cut short keeps what it printed: at most 8 files (the lent
# machine's tool brings back no more), the cooked frames to /tmp.
set -u
out=${1:-gpu-out}; shift || true
parts=${*:-tests bench smoke}
mkdir -p "$out"
root=$(pwd)
if [ -f .devbundle/bundle.tar.xz ]; then
  [ -e /work/main ] || { mkdir -p /work; ln -s "$root" /work/main; }
  tar xJf .devbundle/bundle.tar.xz
  export LD_LIBRARY_PATH=$root/.devbundle/lib
  [ -r /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ] || export PLUME_LIBDEVICE=$root/.devbundle/libdevice.10.bc
fi
export PLUME_CUDA_VERBOSE=1
for p in $parts; do
  case $p in
    tests)
      (cd build && PLUME_DEVICE=cuda ctest -j2 --timeout 900 --output-on-failure \
         -R 'engine_kernels|engine_atomic|engine_fuzz|engine_differential|engine_launch_thread|engine_mgpcg|smoke_source|smoke_physics|abi_host|abi_checkpoint') \
        > "$out/tests.txt" 2>&1; tail -15 "$out/tests.txt" ;;
    bench)
      for s in mgpcg maccormack micro; do
        build/bin/plume-bench gpu "$s" --json "$out/gpu_$s.json" >> "$out/bench.txt" 2>&1
      done
      # batches flushed without a sync on the launch thread (engine/launcher.h), against the above
      echo "== PLUME_LAUNCH_THREAD=1" >> "$out/bench.txt"
      PLUME_LAUNCH_THREAD=1 build/bin/plume-bench gpu mgpcg >> "$out/bench.txt" 2>&1
      grep -E "geometric|graphs vs|fewer \(target" "$out/bench.txt" ;;
    smoke)
      for v in optimized eager; do
        build/bin/plume cook scenes/smoke_plume.json --frames 1-8 --device cuda --mode $v \
          --out "/tmp/gpu-smoke-$v" --stats "$out/smoke_$v.json" --no-checkpoint 2>&1 | tail -3
      done
      # streams instead of graphs, and the launch thread: totals into one file (8 files at most)
      PLUME_CUDA_GRAPHS=0 build/bin/plume cook scenes/smoke_plume.json --frames 1-8 --device cuda \
        --out /tmp/gpu-smoke-stream --stats /tmp/smoke_stream.json --no-checkpoint 2>&1 | tail -3
      PLUME_LAUNCH_THREAD=1 build/bin/plume cook scenes/smoke_plume.json --frames 1-8 --device cuda \
        --out /tmp/gpu-smoke-launch --stats /tmp/smoke_launch.json --no-checkpoint 2>&1 | tail -3
      for v in stream launch; do
        echo "== $v"; grep -A20 '"totals"' /tmp/smoke_$v.json
      done > "$out/smoke_more.txt" 2>&1 ;;
  esac
done
