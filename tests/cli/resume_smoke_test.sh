#!/usr/bin/env bash
# The smoke solver resumed: tests/cli/scenes/smoke_small.json (the default scene at voxel size
# 1/32) cooked deterministically for frames 1-3 on 2 threads is the reference; frames 1-2 on 1
# thread then --resume to frame 3 on 2 threads must give byte-identical frames and checkpoint.
# This covers what only the smoke nodes have: scratch fields they declare at their first cook
# (the pressure kept as the next solve's first guess, advection temporaries), declared by the
# checkpoint load instead and found by name. The three cooks share a kernel cache in a
# temporary folder: the first compiles the solver's ~50 tasks, the others load them, which also
# checks that loaded tasks give the same bytes as compiled ones. PLUME_SLOW_TESTS=0 skips it.
set -u
plume=$1; scenes=$2; poison=${3:-}
if [ "${PLUME_SLOW_TESTS:-1}" = 0 ]; then
  echo "skip: PLUME_SLOW_TESTS=0 (the first of three smoke-solver cooks compiles for ~30 s)"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PLUME_KERNEL_CACHE="$tmp/kc"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
scene=$scenes/smoke_small.json
PLUME_VERBOSE=2 "$plume" cook "$scene" --out "$tmp/ref" --threads 2 --deterministic --quiet --stats "$tmp/ref.json" 2>"$tmp/err" || fail "reference: $(cat "$tmp/err")"
# PLUME_VERBOSE=2 shows the plugin's debug messages: one line per pressure solve, each of which
# reaches the scene's tolerance well before its iteration cap
solves=$(grep -c "mgpcg pressure solve: [0-9]* iterations" "$tmp/err")
[ "$solves" -ge 3 ] || fail "PLUME_VERBOSE=2: $solves pressure-solve lines: $(head -c 400 "$tmp/err")"
! grep -q "stopped at the iteration cap" "$tmp/err" || fail "a pressure solve stopped at its cap: $(grep cap "$tmp/err" | head -2)"
"$plume" cook "$scene" --out "$tmp/res" --threads 1 --deterministic --frames 1-2 --quiet 2>"$tmp/err" || fail "frames 1-2: $(cat "$tmp/err")"
cp "$tmp/res/.plume_checkpoint.vdb" "$tmp/res1.ckpt" 2>/dev/null
"$plume" cook "$scene" --out "$tmp/res" --threads 2 --deterministic --resume --stats "$tmp/res.json" 2>"$tmp/err" || fail "resume: $(cat "$tmp/err")"
# The same resume from a checkpoint whose transient fields hold garbage instead of nothing (the
# layout before transient fields, every field with values): no cook may read what a transient
# field held before it, so the bytes are the same (tests/cli/ckpt_poison.c says where the
# garbage goes: the domain's blocks and blocks beside it).
if [ -n "$poison" ]; then
  mkdir -p "$tmp/poison"
  cp "$tmp/res"/smoke_000[12].vdb "$tmp/poison/"
  "$poison" "$tmp/res1.ckpt" "$tmp/poison/.plume_checkpoint.vdb" >"$tmp/perr" 2>&1 || fail "ckpt_poison: $(cat "$tmp/perr")"
  "$plume" vdb info --json "$tmp/poison/.plume_checkpoint.vdb" >"$tmp/pinfo.json" 2>"$tmp/err" || fail "vdb info poisoned: $(cat "$tmp/err")"
  python3 -c 'import json,sys; g={x["name"]: x for x in json.load(open(sys.argv[1]))["grids"]}
for n in ("advect:density.fwd", "project:mg1.dom", "forces:omega", "project:residual"):
    assert g[n]["active_voxels"] > 0 and "plume_transient" not in g[n]["metadata"], (n, g[n]["active_voxels"])' "$tmp/pinfo.json" \
    || fail "the poisoned checkpoint does not hold garbage where expected"
  "$plume" cook "$scene" --out "$tmp/poison" --threads 2 --deterministic --resume 2>"$tmp/err" || fail "resume from poison: $(cat "$tmp/err")"
  for f in smoke_0003.vdb .plume_checkpoint.vdb; do
    cmp -s "$tmp/ref/$f" "$tmp/poison/$f" || fail "$f differs between the uninterrupted bake and one resumed from transient fields holding garbage"
  done
else
  echo "skip part: no ckpt_poison given (the resume from a checkpoint whose temporaries hold garbage)"
fi
grep -q "resuming from frame 3" "$tmp/err" || fail "no resume line: $(cat "$tmp/err")"
for f in smoke_0001.vdb smoke_0002.vdb smoke_0003.vdb .plume_checkpoint.vdb; do
  cmp -s "$tmp/ref/$f" "$tmp/res/$f" || fail "$f differs between the uninterrupted and the resumed bake"
done
# The checkpoint keeps the values of the simulation's state only: the scene's fields, the
# pressure that warm-starts the next solve, and the topology's marks (empty at a frame's end).
# The nodes' temporaries (advection's forward and backward fields, the multigrid levels...) are
# declared with "plume_transient" and no voxels; the resumes above, from nothing and from
# garbage in them, show that no cook reads what they held.
"$plume" vdb info --json "$tmp/ref/.plume_checkpoint.vdb" >"$tmp/ck.json" 2>"$tmp/err" || fail "vdb info checkpoint: $(cat "$tmp/err")"
python3 - "$tmp/ck.json" <<'PY' || fail "checkpoint contents"
import json, sys
grids = json.load(open(sys.argv[1]))["grids"]
kept = {"density", "temperature", "vel", "project:pressure"}
empty = {"topology:kinds", "topology:near"}  # kept, and empty at a frame's end
names = {g["name"] for g in grids}
assert kept | empty <= names and {"advect:density.fwd", "project:mg1.dom"} <= names, names
for g in grids:
    tr = g["metadata"].get("plume_transient", {}).get("value")
    if g["name"] in kept:
        assert tr is None and g["active_voxels"] > 0, (g["name"], tr, g["active_voxels"])
    elif g["name"] in empty:
        assert tr is None and g["active_voxels"] == 0, (g["name"], tr, g["active_voxels"])
    else:
        assert tr == "1" and g["active_voxels"] == 0, (g["name"], tr, g["active_voxels"])
PY
# Under an address-space limit (ulimit -v, a farm's h_vmem) of 4 GB, where every field's tree
# once reserved half the machine's memory and the first frame failed, the same frames come out
# (each tree reserves a share of what the limit leaves). ASan's shadow memory needs terabytes
# of address space, so a sanitizer build skips this.
if ldd "$plume" 2>/dev/null | grep -q libasan; then
  echo "skip part: ulimit -v (this plume is built with AddressSanitizer)"
else
  (ulimit -v 4000000; "$plume" cook "$scene" --out "$tmp/ulim" --threads 2 --deterministic --frames 1-2 --quiet 2>"$tmp/err") \
    || fail "ulimit -v 4000000: $(head -c 600 "$tmp/err")"
  cmp -s "$tmp/ref/smoke_0002.vdb" "$tmp/ulim/smoke_0002.vdb" || fail "ulimit -v: frame 2 differs from the reference"
fi
# The export marks the staggered velocity as OpenVDB's staggered class (docs/nodes.md), so other
# tools sample it on the faces; the scalars are fog volumes
"$plume" vdb info --json "$tmp/ref/smoke_0003.vdb" >"$tmp/info.json" 2>"$tmp/err" || fail "vdb info: $(cat "$tmp/err")"
python3 -c 'import json,sys; g={x["name"]: x["class"] for x in json.load(open(sys.argv[1]))["grids"]}
assert g == {"density": "fog volume", "temperature": "fog volume", "vel": "staggered"}, g' "$tmp/info.json" \
  || fail "exported grid classes: $(head -c 300 "$tmp/info.json")"
# The totals' active voxels (the plugin's get_stats: every field but the nodes' scratch fields)
# equal the last frame's (the CLI's own sum of field_stat over the scene's fields), also after a
# resume, where the checkpoint declared the scratch fields before their nodes marked them.
for j in ref res; do
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["totals"]["active_voxels"]; f=d["frames"][-1]["active_voxels"]
assert t > 0 and t == f, (t, f)' "$tmp/$j.json" || fail "$j: totals.active_voxels is not the last frame's"
done
# The other backtrace orders, the semi-Lagrangian scheme and the Gauss-Seidel pressure solver
# launch kernels of their own (advect_*_rk1, _rk3, project_rbgs...: smoke.pk) and have scratch
# fields of their own: two frames each must cook and carry density, and with ckpt_poison, frame
# 3 resumed from a checkpoint whose transient fields hold garbage must be the uninterrupted
# bake's frame 3.
for variant in "rk1 semi-lagrangian mgpcg" "rk3 maccormack mgpcg" "rk2 maccormack rbgs"; do
  set -- $variant
  sed -e "s/\"backtrace\": \"rk2\"/\"backtrace\": \"$1\"/" -e "s/\"scheme\": \"maccormack\"/\"scheme\": \"$2\"/" \
    -e "s/\"iterations\": 200,/\"iterations\": 200, \"solver\": \"$3\",/" "$scene" > "$tmp/variant.json"
  grep -q "\"backtrace\": \"$1\"" "$tmp/variant.json" && grep -q "\"solver\": \"$3\"" "$tmp/variant.json" \
    || fail "$variant: the scene was not rewritten"
  v=$tmp/v_$1_$2_$3
  "$plume" cook "$tmp/variant.json" --out "$v/ref" --frames 1-3 --deterministic --quiet 2>"$tmp/err" || fail "$variant: $(cat "$tmp/err")"
  "$plume" vdb info "$v/ref/smoke_0002.vdb" --json > "$tmp/info.json" 2>"$tmp/err" || fail "$variant: vdb info: $(cat "$tmp/err")"
  python3 - "$tmp/info.json" "$variant" <<'PY' || fail "$variant: no density in frame 2"
import json, sys
g = {x["name"]: x for x in json.load(open(sys.argv[1]))["grids"]}
sys.exit(0 if g.get("density", {}).get("active_voxels", 0) > 0 else 1)
PY
  [ -n "$poison" ] || continue
  "$plume" cook "$tmp/variant.json" --out "$v/res" --frames 1-2 --deterministic --quiet 2>"$tmp/err" &&
    mkdir -p "$v/p" && cp "$v/res"/smoke_000[12].vdb "$v/p/" &&
    "$poison" "$v/res/.plume_checkpoint.vdb" "$v/p/.plume_checkpoint.vdb" >/dev/null 2>"$tmp/err" &&
    "$plume" cook "$tmp/variant.json" --out "$v/p" --frames 1-3 --deterministic --resume --quiet 2>"$tmp/err" ||
    fail "$variant: poisoned resume: $(cat "$tmp/err")"
  cmp -s "$v/ref/smoke_0003.vdb" "$v/p/smoke_0003.vdb" || fail "$variant: frame 3 differs after a resume from garbage"
done
if [ "$fails" -ne 0 ]; then echo "$fails smoke resume check(s) failed"; exit 1; fi
echo "smoke resume checks passed"
