#!/bin/bash
# The GPU kernel cache end to end on the fake GPU driver (fake_cuda_exec.c): frame 1 of the
# default scene cooked twice into one empty cache folder. The first cook assembles every task
# with the toolkit's ptxas and stores the cubins; the second loads every task from the folder
# and assembles none. Skipped (77) where ptxas is not installed.
#   fake_cache_test.sh PLUME_CLI SCENE WORK_DIR   (LD_LIBRARY_PATH points at the fake; ctest)
set -u
cli=$1 scene=$2 work=$3
ptxas=${PLUME_PTXAS_FOR_TEST:-/usr/local/cuda/bin/ptxas}
[ -x "$ptxas" ] || { echo "skipped: no ptxas at $ptxas (the CUDA toolkit is not installed)"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
fail=0
for n in 1 2; do
  log=$(PLUME_KERNEL_CACHE="$work/cache" PLUME_PTXAS="$ptxas" PLUME_CUDA_VERBOSE=1 "$cli" cook \
        "$scene" --frames 1-1 --device cuda --out "$work/out$n" --stats "$work/stats$n.json" \
        --no-checkpoint --quiet 2>&1) || { echo "$log"; echo "FAIL: cook $n exited non-zero"; exit 1; }
  line=$(grep "plume: cuda:" <<<"$log")
  echo "cook $n: $line"
  compiled=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['tasks_compiled'])" "$work/stats$n.json")
  disk=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['tasks_from_disk'])" "$work/stats$n.json")
  byptxas=$(sed -n 's/.*summed over threads; \([0-9]*\) by ptxas.*/\1/p' <<<"$line")
  if [ $n = 1 ]; then
    [ "$compiled" -gt 0 ] && [ "$disk" = 0 ] && [ "$byptxas" = "$compiled" ] ||
      { echo "FAIL: the first cook should assemble all $compiled tasks with ptxas (ptxas $byptxas, disk $disk)"; fail=1; }
    first=$compiled
  else
    [ "$disk" = "$first" ] && [ "$compiled" = "$first" ] && [ "$byptxas" = 0 ] ||
      { echo "FAIL: the second cook should load all $first tasks from the cache (disk $disk, compiled $compiled, ptxas $byptxas)"; fail=1; }
  fi
done
[ $fail = 0 ] && echo "ok: $first tasks assembled by ptxas, then all loaded from the cache"
exit $fail
