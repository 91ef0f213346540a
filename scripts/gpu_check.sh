#!/bin/bash
# The GPU checks of issue 8 in one command, for a machine with an NVIDIA GPU (a lent one: pack
# the build first with scripts/device_bundle.sh and carry .devbundle). From the repository root:
#   scripts/gpu_check.sh [OUT_DIR] [PART...]
# parts, run in the order given (default: smoke bench tests):
#   smoke   frames 1-8 of the default scene on the GPU with --stats, optimized: with an empty
#           kernel cache (the toolkit's ptxas compiles, the cache stores), again (frame 1 should
#           not compile), without ptxas into an empty cache (the driver's linker), without ptxas
#           or cache (the driver's JIT of plain PTX: the old path, whose GPU time the others
#           should match); then eager, and eager waiting after every batch (PLUME_CUDA_ASYNC=0)
#   bench   plume-bench gpu mgpcg, maccormack (256^3), smoke (--quick), micro, with JSON
#   tests   the kernel-running tests with PLUME_DEVICE=cuda
#   cancel  SIGINT 8 s into a cold first frame (compiling): the cook should end with status 130
#           (a cancel) within a few seconds of the signal
#   more    the scene on streams instead of graphs, and with the launch thread (totals into
#           bench.txt); mgpcg with the launch thread
# SMOKE_VARIANTS picks the smoke part's cooks (default: all six, NAME:MODE as in the loop below),
# BENCH_SUITES the bench part's suites (default: mgpcg maccormack smoke micro).
# GPU_CHECK_SECONDS (default 540) is a deadline for the whole command: each step gets what is
# left of it, so a slow step cannot starve the report of the ones before it. What it reports goes
# to OUT_DIR (default gpu-out), line by line, so a run cut short keeps what it printed: at most 8
# files (the lent machine's tool brings back no more), the cooked frames to /tmp.
set -u
out=${1:-gpu-out}; shift || true
parts=${*:-smoke bench tests}
mkdir -p "$out"
root=$(pwd)
t_end=$(( $(date +%s) + ${GPU_CHECK_SECONDS:-540} ))
if [ -f .devbundle/bundle.tar.xz ]; then
  [ -e /work/main ] || { mkdir -p /work; ln -s "$root" /work/main; }
  # always: a warm machine keeps build/, but the carried .devbundle replaces the libraries
  tar xJf .devbundle/bundle.tar.xz
  export LD_LIBRARY_PATH=$root/.devbundle/lib
  [ -r /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ] || export PLUME_LIBDEVICE=$root/.devbundle/libdevice.10.bc
  # the bundle's ptxas where the machine has no toolkit (else the driver's JIT compiles)
  [ -x /usr/local/cuda/bin/ptxas ] || [ ! -x .devbundle/bin/ptxas ] ||
    export PLUME_PTXAS=$root/.devbundle/bin/ptxas
fi
export PLUME_CUDA_VERBOSE=1
# a wait for the GPU longer than this says what it waits for (a kernel that never ends)
export PLUME_CUDA_WATCHDOG=${PLUME_CUDA_WATCHDOG:-30}
# Plume's kernel cache, empty at the start: the modes of a bench case and the cooks of the scene
# compile the same tasks, so only the first pays for them (the driver's own JIT cache did not
# serve a second cook on the H200 of 2026-11-27).
export PLUME_KERNEL_CACHE=/tmp/plume-gpu-kernels
# GPU_CHECK_KEEP_CACHE=1 keeps what an earlier call on the same warm machine compiled (the
# bench's solver tasks are not the scene's: without it a bench call compiles them all cold)
[ "${GPU_CHECK_KEEP_CACHE:-0}" = 1 ] || rm -rf "$PLUME_KERNEL_CACHE"
log=$(cd "$out" && pwd)/bench.txt
# step SECONDS CMD...: runs CMD under what is left of the deadline, at most SECONDS.
step() {
  local want=$1; shift
  local left=$(( t_end - $(date +%s) ))
  [ "$left" -gt "$want" ] && left=$want
  if [ "$left" -lt 5 ]; then echo "== skipped (deadline): $*" >> "$log"; return 124; fi
  local t0=$(date +%s)
  timeout -k 5 "$left" "$@"
  local rc=$?
  echo "== rc $rc in $(( $(date +%s) - t0 )) s (limit $left): $*" >> "$log"
  return $rc
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  echo "ptxas: ${PLUME_PTXAS:-/usr/local/cuda/bin/ptxas}"
  "${PLUME_PTXAS:-/usr/local/cuda/bin/ptxas}" --version | tail -1; } >> "$log" 2>&1
for p in $parts; do
  case $p in
    bench)
      # with the kernel cache the smoke part filled: the benches' compile columns are not cold
      for s in ${BENCH_SUITES:-mgpcg maccormack smoke micro}; do
        echo "== plume-bench gpu $s" >> "$log"
        q=; [ $s = smoke ] && q=--quick   # 3 frames per variant
        step 240 build/bin/plume-bench gpu "$s" $q --json "$out/gpu_$s.json" >> "$log" 2>&1
      done
      grep -E "geometric|graphs vs|fewer \(target" "$log" ;;
    smoke)
      # two stats files come back (8 files at most); the others' totals go into bench.txt
      # eager-wait: eager with the host waiting after every batch (PLUME_CUDA_ASYNC=0), as
      # before 2026-11-27, against eager's default of waiting only where it reads
      for v in ${SMOKE_VARIANTS:-ptxas-cold:optimized ptxas-warm:optimized linker:optimized \
               jit:optimized eager:eager eager-wait:eager}; do
        name=${v%:*} mode=${v#*:} kc=$PLUME_KERNEL_CACHE px= as= frames=1-8
        st=/tmp/smoke_$name.json
        case $name in
          ptxas-cold) st=$out/smoke_optimized.json ;;
          eager) st=$out/smoke_eager.json ;;
          eager-wait) as=0 frames=1-4 ;;
          linker) kc=/tmp/plume-gpu-kernels-linker px=off; rm -rf "$kc" ;;
          jit) kc=off px=off ;;
        esac
        echo "== smoke $name ($mode, PLUME_KERNEL_CACHE=$kc PLUME_PTXAS=${px:-default}" \
             "PLUME_CUDA_ASYNC=${as:-default})" >> "$log"
        step 150 env PLUME_KERNEL_CACHE=$kc ${px:+PLUME_PTXAS=$px} ${as:+PLUME_CUDA_ASYNC=$as} \
          build/bin/plume cook scenes/smoke_plume.json --frames $frames --device cuda \
          --mode $mode --out /tmp/gpu-smoke-$name --stats "$st" --no-checkpoint >> "$log" 2>&1
        grep -A22 '"totals"' "$st" >> "$log" 2>/dev/null
        tail -2 "$log"
      done ;;
    cancel)
      echo "== cancel: SIGINT at 8 s into a cold cook" >> "$log"
      rm -rf /tmp/plume-gpu-kernels-cancel   # cold on a warm machine too
      t0=$(date +%s%N)
      step 60 env PLUME_KERNEL_CACHE=/tmp/plume-gpu-kernels-cancel timeout --preserve-status -s INT 8 \
        build/bin/plume cook scenes/smoke_plume.json --frames 1-2 --device cuda \
        --out /tmp/gpu-smoke-cancel --no-checkpoint >> "$log" 2>&1
      echo "cancel: status $? after $(( ($(date +%s%N) - t0) / 1000000 )) ms (signal at 8000 ms)" >> "$log"
      tail -3 "$log" ;;
    more)
      # streams instead of graphs, and the launch thread: totals into one file (8 files at most)
      step 120 env PLUME_CUDA_GRAPHS=0 build/bin/plume cook scenes/smoke_plume.json --frames 1-8 \
        --device cuda --out /tmp/gpu-smoke-stream --stats /tmp/smoke_stream.json --no-checkpoint >> "$log" 2>&1
      step 120 env PLUME_LAUNCH_THREAD=1 build/bin/plume cook scenes/smoke_plume.json --frames 1-8 \
        --device cuda --out /tmp/gpu-smoke-launch --stats /tmp/smoke_launch.json --no-checkpoint >> "$log" 2>&1
      for v in stream launch; do
        echo "== $v"; grep -A20 '"totals"' /tmp/smoke_$v.json
      done >> "$log" 2>&1
      echo "== PLUME_LAUNCH_THREAD=1 plume-bench gpu mgpcg" >> "$log"
      step 120 env PLUME_LAUNCH_THREAD=1 build/bin/plume-bench gpu mgpcg >> "$log" 2>&1 ;;
    tests)
      left=$(( t_end - $(date +%s) - 10 ))
      (cd build && step "$left" env PLUME_DEVICE=cuda ctest -j3 --timeout "$left" --output-on-failure \
         -R 'engine_kernels|engine_atomic|engine_fuzz|engine_differential|engine_launch_thread|engine_mgpcg|smoke_source|smoke_physics|abi_host|abi_checkpoint') \
        > "$out/tests.txt" 2>&1; tail -15 "$out/tests.txt" ;;
  esac
done
