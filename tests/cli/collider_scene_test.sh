#!/usr/bin/env bash
# The second shipped scene, scenes/smoke_collider.json, end to end through the CLI: it reads its
# two input files (written by pyopenvdb: a fog ring as the source, a level-set sphere as the
# collider) relative to the scene, cooks two frames and writes files OpenVDB's own reader opens.
# The values are checked against the inputs, not against an earlier run: the source's mode is
# "max" and it runs after advection in every substep, and nothing after it in the substep lowers
# density or temperature outside solids, so at export every voxel of the ring must hold at least
# the ring's fog value (density 1.0 x fog, temperature 2.0 x fog); inside the solid (level set
# < 0) the project node clears the smoke, so no density may be there.
set -u
plume=$1; scenes=$2; pyvdb=$3; poison=${4:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }

"$plume" cook "$scenes/smoke_collider.json" --frames 1-2 --out "$tmp/out" --quiet 2>"$tmp/err" ||
  fail "cook: $(cat "$tmp/err")"
for f in 1 2; do
  [ -s "$tmp/out/collider_000$f.vdb" ] || fail "frame $f: no collider_000$f.vdb in $(ls "$tmp/out")"
done
if ! "$pyvdb" -c "import pyopenvdb" 2>/dev/null; then
  echo "skip: value checks: $pyvdb has no pyopenvdb (python3-openvdb); only files and exit status checked"
elif [ "$fails" -eq 0 ]; then
  "$pyvdb" - "$tmp/out" "$scenes/data" <<'PY' || fail "exported values break the source/collider rules"
import sys, pyopenvdb as vdb
out, data = sys.argv[1], sys.argv[2]
ring = vdb.read(f"{data}/ring_source.vdb", "density")
solid = vdb.read(f"{data}/sphere_collider.vdb", "collider")
for frame in (1, 2):
    path = f"{out}/collider_{frame:04d}.vdb"
    dens, temp = vdb.read(path, "density"), vdb.read(path, "temperature")
    da, ta = dens.getConstAccessor(), temp.getConstAccessor()
    checked = 0
    for it in ring.citerOnValues():
        assert it.count == 1, "the ring file has tiles; this check reads voxels only"
        if it.value <= 0:
            continue
        w = ring.transform.indexToWorld(it.min)
        ijk = tuple(int(c) for c in dens.transform.worldToIndexCellCentered(w))
        d, t = da.getValue(ijk), ta.getValue(ijk)
        assert d >= it.value - 1e-6, (frame, ijk, d, it.value)
        assert t >= 2.0 * it.value - 2e-6, (frame, ijk, t, it.value)
        checked += 1
    assert checked > 1000, checked  # the torus holds thousands of voxels
    sa = solid.getConstAccessor()
    inside = 0
    for it in dens.citerOnValues():
        if it.count != 1 or it.value == 0:
            continue
        w = dens.transform.indexToWorld(it.min)
        s = sa.getValue(tuple(int(c) for c in solid.transform.worldToIndexCellCentered(w)))
        inside += s < 0
    assert inside == 0, (frame, inside)
    print(f"frame {frame}: {checked} ring voxels at or above the source, none inside the solid")
PY
fi

# Resumed at frame 3 from a checkpoint whose transient fields hold garbage (ckpt_poison.c), the
# scene's own paths (the collider's solid cells, the source read from a file, a closed box)
# give the bytes of the uninterrupted deterministic bake: none of them reads a temporary that
# an earlier cook left.
if [ -n "$poison" ]; then
  s=$scenes/smoke_collider.json
  "$plume" cook "$s" --frames 1-3 --out "$tmp/ref" --threads 2 --deterministic --quiet 2>"$tmp/err" &&
    "$plume" cook "$s" --frames 1-2 --out "$tmp/res" --threads 1 --deterministic --quiet 2>"$tmp/err" &&
    mkdir -p "$tmp/p" && cp "$tmp/res"/collider_000[12].vdb "$tmp/p/" &&
    "$poison" "$tmp/res/.plume_checkpoint.vdb" "$tmp/p/.plume_checkpoint.vdb" >/dev/null 2>"$tmp/err" &&
    "$plume" cook "$s" --frames 1-3 --out "$tmp/p" --threads 2 --deterministic --resume --quiet 2>"$tmp/err" ||
    fail "poisoned resume: $(cat "$tmp/err")"
  for f in collider_0003.vdb .plume_checkpoint.vdb; do
    cmp -s "$tmp/ref/$f" "$tmp/p/$f" || fail "$f differs after a resume from transient fields holding garbage"
  done
else
  echo "skip part: no ckpt_poison given (the resume from a checkpoint whose temporaries hold garbage)"
fi

if [ "$fails" -ne 0 ]; then echo "$fails collider-scene check(s) failed"; exit 1; fi
echo "collider scene checks passed"
