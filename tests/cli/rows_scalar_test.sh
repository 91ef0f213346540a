#!/usr/bin/env bash
# The default scene cooked with rows in vectors (the default) and with PLUME_ROWVEC=0 (every
# loop body one cell at a time) must give the same bytes: a row runs each lane with the scalar
# copy's operations on the same operands (docs/ir.md, "Rows in vectors"), and deterministic mode
# makes the rest of a cook repeatable, so any difference is a code-generation bug in one of the
# solver's kernels. Usage: rows_scalar_test.sh PLUME_CLI SCENES_DIR
set -euo pipefail
cli=$1
scenes=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a cache of its own: the two variants compile their own code (the cache keys on the switch)
export PLUME_KERNEL_CACHE="$tmp/cache"
"$cli" cook "$scenes/smoke_plume.json" --frames 1-3 --deterministic --no-checkpoint --quiet \
    --out "$tmp/rows"
PLUME_ROWVEC=0 "$cli" cook "$scenes/smoke_plume.json" --frames 1-3 --deterministic \
    --no-checkpoint --quiet --out "$tmp/scalar"
n=0
for f in "$tmp"/rows/*.vdb; do
    b=$(basename "$f")
    if ! cmp -s "$f" "$tmp/scalar/$b"; then
        echo "FAIL: $b differs between rows in vectors and PLUME_ROWVEC=0"
        exit 1
    fi
    n=$((n + 1))
done
if [ "$n" -ne 3 ]; then
    echo "FAIL: expected 3 frames from each cook, found $n"
    exit 1
fi
echo "rows in vectors and scalar bodies: $n frames of the default scene, the same bytes"
