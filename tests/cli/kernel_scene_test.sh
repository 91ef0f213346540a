#!/usr/bin/env bash
# Kernel nodes in a scene, end to end: a kernel fills a 16^3 box at init (v + x), another
# scales the field every substep (q * k + dt); the exported .vdb files are read back with
# pyopenvdb (OpenVDB's own reader) and compared with the same arithmetic done here. Code with
# an error stops the cook with the kernel's line:col and writes nothing.
set -u
plume=$1; scenes=$2; pyvdb=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }

"$plume" cook "$scenes/kernel_nodes.json" --out "$tmp/out" --quiet 2>"$tmp/err" || fail "cook: $(cat "$tmp/err")"
if "$pyvdb" -c "import pyopenvdb" 2>/dev/null; then
  "$pyvdb" - "$tmp/out" <<'PY' || fail "kernel node results differ from the reference arithmetic"
import sys, numpy as np, pyopenvdb as vdb
out = sys.argv[1]
dt = np.float32(1.0) / np.float32(24.0)
for frame in (1, 2):
    g = vdb.read(f"{out}/k_{frame:04d}.vdb", "density")
    a = g.getConstAccessor()
    assert g.activeVoxelCount() == 16 ** 3, g.activeVoxelCount()
    for x, y, z in [(0, 0, 0), (3, 0, 0), (15, 15, 15), (7, 2, 9)]:
        v = np.float32(2.0) + np.float32(x)
        for _ in range(frame):
            v = v * np.float32(0.5) + dt
        got = a.getValue((x, y, z))
        assert abs(got - float(v)) <= 1e-6 * abs(float(v)), (frame, x, got, float(v))
    assert a.getValue((16, 0, 0)) == 0.0
PY
else
  echo "skip: value checks: $pyvdb has no pyopenvdb (python3-openvdb); only the cook's exit status is checked"
fi

# PLUME_PROFILE=1: a table of time per task on stderr at the end; the scale kernel ran once per
# frame (2 frames, 1 substep each). Without it, no table.
PLUME_PROFILE=1 "$plume" cook "$scenes/kernel_nodes.json" --out "$tmp/prof" --quiet 2>"$tmp/err" || fail "profiled cook: $(cat "$tmp/err")"
grep -q '^plume profile: [0-9]* tasks' "$tmp/err" || fail "PLUME_PROFILE=1 printed no table: $(head -c 300 "$tmp/err")"
grep -Eq '^ +[0-9.]+ +2 +[0-9.]+ +[0-9.]+  scale#' "$tmp/err" || fail "profile has no row 'scale' with 2 runs: $(cat "$tmp/err")"
"$plume" cook "$scenes/kernel_nodes.json" --out "$tmp/plain" --quiet 2>"$tmp/err"
grep -q 'plume profile' "$tmp/err" && fail "a profile table without PLUME_PROFILE"

# The kernel cache (PLUME_KERNEL_CACHE): a first cook into an empty folder compiles every task
# and stores it; a second cook loads every task from there and writes the same bytes; "off"
# loads nothing.
from_disk() { python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print(t["tasks_from_disk"], t["tasks_compiled"])' "$1"; }
PLUME_KERNEL_CACHE="$tmp/kc" "$plume" cook "$scenes/kernel_nodes.json" --deterministic --out "$tmp/kc1" --stats "$tmp/kc1.json" --quiet 2>"$tmp/err" || fail "cook with a kernel cache: $(cat "$tmp/err")"
PLUME_KERNEL_CACHE="$tmp/kc" "$plume" cook "$scenes/kernel_nodes.json" --deterministic --out "$tmp/kc2" --stats "$tmp/kc2.json" --quiet 2>"$tmp/err" || fail "second cook with a kernel cache: $(cat "$tmp/err")"
PLUME_KERNEL_CACHE=off "$plume" cook "$scenes/kernel_nodes.json" --out "$tmp/kc3" --stats "$tmp/kc3.json" --quiet 2>"$tmp/err" || fail "cook with the cache off: $(cat "$tmp/err")"
# A cache folder that cannot be made (under /proc, refused even to root): the cook works and
# says once why every cook will compile again
PLUME_KERNEL_CACHE=/proc/plume-no-cache "$plume" cook "$scenes/kernel_nodes.json" --out "$tmp/kc4" --quiet 2>"$tmp/err" \
  || fail "cook with an unwritable cache: $(cat "$tmp/err")"
[ "$(grep -c "the kernel cache /proc/plume-no-cache cannot be written" "$tmp/err")" = 1 ] \
  || fail "unwritable cache: not said once: $(cat "$tmp/err")"
read -r d1 c1 <<<"$(from_disk "$tmp/kc1.json")"
read -r d2 c2 <<<"$(from_disk "$tmp/kc2.json")"
read -r d3 c3 <<<"$(from_disk "$tmp/kc3.json")"
[ "$d1" = 0 ] && [ "$c1" -gt 0 ] || fail "first cook: $d1 of $c1 tasks from disk (want 0 of some)"
[ "$d2" = "$c2" ] && [ "$c2" = "$c1" ] || fail "second cook: $d2 of $c2 tasks from disk (want all $c1)"
[ "$d3" = 0 ] || fail "PLUME_KERNEL_CACHE=off: $d3 tasks from disk"
[ "$(ls "$tmp/kc"/*.o 2>/dev/null | wc -l)" = "$c1" ] || fail "the cache folder holds $(ls "$tmp/kc" | wc -l) files for $c1 tasks"
for f in k_0001.vdb k_0002.vdb; do
  cmp -s "$tmp/kc1/$f" "$tmp/kc2/$f" || fail "$f differs between a compiled and a loaded cook"
done

# The flush memo: cooked for 6 frames, each frame's flush from the third on starts from the
# graph the one before left and repeats it, so the optimizer takes its earlier result
# (flushes_memoized); eager has no optimizer. Memoized frames write the same bytes as frames
# optimized afresh (PLUME_SFG_MEMO=0), deterministic mode.
flushes() { python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print(t["flushes"], t["flushes_memoized"])' "$1"; }
"$plume" cook "$scenes/kernel_nodes.json" --frames 1-6 --deterministic --out "$tmp/m1" --stats "$tmp/m1.json" --quiet 2>"$tmp/err" || fail "6 frames: $(cat "$tmp/err")"
PLUME_SFG_MEMO=0 "$plume" cook "$scenes/kernel_nodes.json" --frames 1-6 --deterministic --out "$tmp/m0" --stats "$tmp/m0.json" --quiet 2>"$tmp/err" || fail "6 frames, no memo: $(cat "$tmp/err")"
"$plume" cook "$scenes/kernel_nodes.json" --frames 1-6 --mode eager --out "$tmp/me" --stats "$tmp/me.json" --quiet 2>"$tmp/err" || fail "6 frames eager: $(cat "$tmp/err")"
read -r f1 m1 <<<"$(flushes "$tmp/m1.json")"
read -r f0 m0 <<<"$(flushes "$tmp/m0.json")"
read -r fe me <<<"$(flushes "$tmp/me.json")"
[ "$f1" -ge 6 ] && [ "$m1" -ge 4 ] && [ "$m1" -lt "$f1" ] || fail "memo: $m1 of $f1 flushes memoized (want 4 or more of 6 or more)"
[ "$m0" = 0 ] && [ "$f0" = "$f1" ] || fail "PLUME_SFG_MEMO=0: $m0 of $f0 flushes memoized (want 0 of $f1)"
[ "$me" = 0 ] || fail "eager: $me flushes memoized"
for n in 3 4 5 6; do
  cmp -s "$tmp/m1/k_000$n.vdb" "$tmp/m0/k_000$n.vdb" || fail "frame $n differs with and without the memo"
done

# an unknown name in a substep kernel: exit 1, the place in the code, no output file
sed 's/q\[I\] \* k + dt/q[I] * kk + dt/' "$scenes/kernel_nodes.json" >"$tmp/bad.json"
"$plume" cook "$tmp/bad.json" --out "$tmp/bad" --quiet 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] || fail "bad kernel code: exit $rc"
grep -q "nodes\[1\].params.code: scale:1:74: error: unknown name 'kk'" "$tmp/err" || fail "bad kernel code message: $(cat "$tmp/err")"
[ -z "$(ls "$tmp/bad" 2>/dev/null)" ] || fail "a failed cook left files: $(ls "$tmp/bad")"

# Fields of other layouts reach the .vdb file whole: 4^3 leaves, and 8^3 leaves whose blocks
# start 4 voxels off the multiples of 8, each filled on 0..15 per axis, export the same 4,096
# voxels as the default layout (they once wrote an empty grid and exited 0).
for lay in "" "offset(-128).pointer(ijk,64).dense(ijk,4)" "offset(-2044).pointer(ijk,32).pointer(ijk,16).dense(ijk,8)"; do
  cat >"$tmp/lay.json" <<EOF
{"plume_scene": 1, "name": "lay", "frames": {"start": 1, "end": 1, "fps": 24},
 "fields": [{"name": "density", "type": "f32", "layout": "$lay", "voxel_size": 0.1, "background": 0}],
 "nodes": [{"name": "fill", "type": "org.plume.kernel",
            "params": {"code": "kernel fill(field<f32> density) { for (P in ivec3(0) .. ivec3(16)) { density[P] = 1.0 + f32(P.x); } }"}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "lay_####.vdb"}, "bind": {"density": "density"}}],
 "init": ["fill"], "substep": [], "frame": ["export"]}
EOF
  rm -rf "$tmp/lay"
  "$plume" cook "$tmp/lay.json" --out "$tmp/lay" --no-checkpoint --quiet 2>"$tmp/err" || fail "layout '$lay': $(cat "$tmp/err")"
  "$plume" vdb info --json "$tmp/lay/lay_0001.vdb" >"$tmp/lay.info" 2>"$tmp/err" || fail "layout '$lay': vdb info: $(cat "$tmp/err")"
  python3 - "$tmp/lay.info" <<'PY' || fail "layout '$lay': the exported grid"
import json, sys
g = json.load(open(sys.argv[1]))["grids"][0]
assert g["active_voxels"] == 4096, g
PY
done

# Other layouts give the same values as the default one, in the kernel and in the file (a
# semantics audit found four wrong results): three voxels written, one at a negative index, are
# copied by a struct-for into a default-layout field at the same indices (a leaf straight under
# the root lost its offset: the indices were 8 too high), exported (a leaf whose axes are not
# ijk was scrambled, a bitmasked one lost its values, a pointer leaf exported nothing), and a
# voxel never written reads the background, 3 (a fully dense field read 0).
for lay in "" "offset(-8).dense(ijk,16)" "offset(-8).bitmasked(ijk,16)" "offset(-8).pointer(ijk,2).dense(jki,8)" \
           "offset(-8).pointer(ijk,2).bitmasked(kji,8)" "offset(-8).pointer(ijk,4).pointer(ijk,4)" "offset(-8).pointer(ijk,16)"; do
  cat >"$tmp/lx.json" <<EOF
{"plume_scene": 1, "name": "lx", "frames": {"start": 1, "end": 1, "fps": 24},
 "fields": [{"name": "q", "layout": "$lay", "voxel_size": 1, "background": 3},
            {"name": "out", "voxel_size": 1, "background": -1}, {"name": "bgout", "voxel_size": 1, "background": -1}],
 "nodes": [{"name": "a", "type": "org.plume.kernel", "params": {"code": "kernel a(field<f32> q) { q[1, 2, 3] = 5.0; q[4, 6, 1] = 1.5; q[-3, 0, 2] = 2.0; }"}},
           {"name": "b", "type": "org.plume.kernel", "params": {"code": "kernel b(field<f32> q, field<f32> out, field<f32> bgout) { for (I in q) { if (q[I] != 3.0) { out[I] = q[I]; } } bgout[0, 0, 0] = q[7, 7, 7]; }"}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "lx_####.vdb"}, "bind": {"density": "q", "temperature": "out", "flame": "bgout"}}],
 "init": ["a"], "substep": ["b"], "frame": ["export"]}
EOF
  rm -rf "$tmp/lx"
  if ! "$plume" cook "$tmp/lx.json" --out "$tmp/lx" --no-checkpoint --quiet 2>"$tmp/err"; then
    fail "layout '$lay': $(cat "$tmp/err")"
  elif "$pyvdb" -c "import pyopenvdb" 2>/dev/null; then
    "$pyvdb" - "$tmp/lx/lx_0001.vdb" <<'PY' || fail "layout '$lay': values differ from the default layout's"
import sys, pyopenvdb as vdb
path = sys.argv[1]
want = {(1, 2, 3): 5.0, (4, 6, 1): 1.5, (-3, 0, 2): 2.0}
errs = []
got = {it.min: it.value for it in vdb.read(path, "temperature").citerOnValues()}
if got != want:
    errs.append(f"struct-for copy: {len(got)} voxels, {sorted(got.items())[:6]}")
q = vdb.read(path, "density")
qa = q.getConstAccessor()
errs += [f"exported q{c} = {qa.getValue(c)}, want {v}" for c, v in want.items() if qa.getValue(c) != v]
others = [(it.min, it.value) for it in q.citerOnValues() if it.min not in want and it.value != 3.0]
if others or q.background != 3.0:
    errs.append(f"exported q: background {q.background}, other voxels {others[:4]}")
b = vdb.read(path, "flame").getConstAccessor().getValue((0, 0, 0))
if b != 3.0:
    errs.append(f"an unwritten voxel read {b}, not the background 3")
if errs:
    print(errs)
    sys.exit(1)
PY
  fi
done
if ! "$pyvdb" -c "import pyopenvdb" 2>/dev/null; then
  echo "skip: values of other layouts: $pyvdb has no pyopenvdb (python3-openvdb); only the cooks' exit status is checked"
fi

# The host-side writers reach other layouts too, cell by cell: a sphere source (add, then max),
# and that file imported again (replace, then add) give the same bytes as the default layout
# (the sphere once failed there with "out of memory").
for step in sphere import; do
  for lay in "" "offset(-128).pointer(ijk,64).dense(ijk,4)" "offset(-2044).pointer(ijk,32).pointer(ijk,16).bitmasked(ijk,8)"; do
    if [ $step = sphere ]; then
      nodes='{"name": "a", "type": "org.plume.source.sphere", "params": {"center": [1, 1, 1], "radius": 0.5, "mode": "add"}},
             {"name": "b", "type": "org.plume.source.sphere", "params": {"center": [1.3, 1, 1], "radius": 0.3, "mode": "max"}},'
    else
      nodes='{"name": "a", "type": "org.plume.vdb.import", "params": {"file": "'"$tmp/sphere.vdb"'", "mode": "replace"}, "bind": {"target": "density"}},
             {"name": "b", "type": "org.plume.vdb.import", "params": {"file": "'"$tmp/sphere.vdb"'", "mode": "add"}, "bind": {"target": "density"}},'
    fi
    cat >"$tmp/lay.json" <<EOF
{"plume_scene": 1, "name": "lay", "frames": {"start": 1, "end": 1, "fps": 24},
 "fields": [{"name": "density", "type": "f32", "layout": "$lay", "voxel_size": 0.1, "background": 0}],
 "nodes": [$nodes
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "s_####.vdb"}, "bind": {"density": "density"}}],
 "init": ["a", "b"], "substep": [], "frame": ["export"]}
EOF
    rm -rf "$tmp/lay"
    if ! "$plume" cook "$tmp/lay.json" --out "$tmp/lay" --no-checkpoint --quiet 2>"$tmp/err"; then
      fail "$step, layout '$lay': $(cat "$tmp/err")"
    elif [ -z "$lay" ]; then
      cp "$tmp/lay/s_0001.vdb" "$tmp/$step.vdb"
    else
      cmp -s "$tmp/lay/s_0001.vdb" "$tmp/$step.vdb" || fail "$step: layout '$lay' wrote other bytes than the default layout"
    fi
  done
done

# Data past the voxels a field can hold (a field origin 500 units away: the sphere's voxels
# land near index 5000) is refused naming the node, the field and the range, not "block
# activation failed".
cat >"$tmp/far.json" <<EOF
{"plume_scene": 1, "name": "far", "frames": {"start": 1, "end": 1, "fps": 24},
 "fields": [{"name": "density", "type": "f32", "voxel_size": 0.1, "origin": [-500, 0, 0], "background": 0}],
 "nodes": [{"name": "imp", "type": "org.plume.vdb.import", "params": {"file": "$tmp/sphere.vdb", "mode": "replace"}, "bind": {"target": "density"}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "s_####.vdb"}}],
 "init": ["imp"], "substep": [], "frame": ["export"]}
EOF
"$plume" cook "$tmp/far.json" --out "$tmp/far" --no-checkpoint --quiet 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -qF "node 'imp' (org.plume.vdb.import): field 'density': voxels at (" "$tmp/err" \
  && grep -qF "lie outside the voxels the field can hold (-2048..2047" "$tmp/err" \
  || fail "import past the field's range: exit $rc: $(head -c 400 "$tmp/err")"

# A kernel's scalar parameters take what fits their type, and nothing else: no silent wrap of
# an i32, no f32 turned inf; u32 parameters can be set (they could not). One box filled with the
# parameter's value; the scene's error names its JSON path.
scalar_scene() { # TYPE VALUE EXPR
  cat >"$tmp/sc.json" <<EOF
{"plume_scene": 1, "name": "sc", "frames": {"start": 1, "end": 1, "fps": 24},
 "fields": [{"name": "density", "type": "f32", "voxel_size": 0.1, "background": 0}],
 "nodes": [{"name": "fill", "type": "org.plume.kernel",
            "params": {"code": "kernel fill(field<f32> density, $1 x) { for (P in ivec3(0, 0, 0) .. ivec3(2, 2, 2)) { density[P] = $3; } }", "x": $2}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "s_####.vdb"}}],
 "init": ["fill"], "substep": [], "frame": ["export"]}
EOF
}
refuse() { # TYPE VALUE EXPR WANT
  scalar_scene "$1" "$2" "$3"
  rm -rf "$tmp/sc"
  "$plume" cook "$tmp/sc.json" --out "$tmp/sc" --no-checkpoint --quiet 2>"$tmp/err"; rc=$?
  [ "$rc" = 1 ] && grep -qF 'sc.json: $.nodes[0].params.x: ' "$tmp/err" && grep -qF "$4" "$tmp/err" \
    || fail "$1 x = $2: exit $rc, want 1 and '$4': $(head -c 300 "$tmp/err")"
  [ ! -e "$tmp/sc/s_0001.vdb" ] || fail "$1 x = $2: refused but wrote a frame"
}
refuse i32 99999999999 "f32(x)" "takes an integer from -2147483648 to 2147483647"
refuse i32 2147483648 "f32(x)" "takes an integer from -2147483648 to 2147483647"
refuse i32 1.5 "f32(x)" "takes an integer"
refuse u32 -1 "f32(x)" "takes an integer from 0 to 4294967295"
refuse f32 1e300 "x" "takes a finite number within"
refuse i64 9007199254740993 "f32(x)" "takes an integer within +-9007199254740991"
refuse bool 2 "x ? 1.0 : 0.0" "takes true or false"
refuse vec3 "[1, 2]" "x.x" "an array sets a vec3 or ivec3 parameter and must hold 3 numbers; this one holds 2 elements"
# A misspelt scalar lists the kernel's own (`plume nodes` cannot: they come from the code).
scalar_scene f32 1 "x"
sed -i 's/"x": 1}/"x": 1, "xx": 2}/' "$tmp/sc.json"
"$plume" cook "$tmp/sc.json" --out "$tmp/sc" --no-checkpoint --quiet 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -qF "\$.nodes[0].params.xx: node 'fill': kernel 'fill' has no parameter 'xx'; its parameters: x (f32)" "$tmp/err" \
  && ! grep -qF "plume nodes" "$tmp/err" || fail "unknown kernel scalar: exit $rc: $(head -c 300 "$tmp/err")"
refuse ivec3 "[1, 2.5, 3]" "f32(x.y)" "takes 3 integers"
for case in "u32|4000000000|f32(x)|4000000000" "i32|-2147483648|f32(x)|-2147483648" "bool|1|x ? 7.0 : 0.0|7" \
            "f64|1e300|f32(x * 1e-299)|10" "i64|9007199254740991|f32(x)|9007199254740991"; do
  IFS='|' read -r ty val expr want <<<"$case"
  scalar_scene "$ty" "$val" "$expr"
  rm -rf "$tmp/sc"
  if ! "$plume" cook "$tmp/sc.json" --out "$tmp/sc" --no-checkpoint --quiet 2>"$tmp/err"; then
    fail "$ty x = $val refused: $(head -c 300 "$tmp/err")"
  elif "$pyvdb" -c "import pyopenvdb" 2>/dev/null; then
    "$pyvdb" - "$tmp/sc/s_0001.vdb" "$want" <<'PY' || fail "$ty x = $val: the box does not hold $want"
import sys, pyopenvdb as vdb
g = vdb.read(sys.argv[1], "density")
got = g.getConstAccessor().getValue((1, 1, 1))
want = float(sys.argv[2])
assert abs(got - want) <= 1e-6 * abs(want), (got, want)
PY
  fi
done

# Scene checks an audit of bad input found missing: an f32 field's background is one number,
# the substeps' velocity is a vec3 field, a code object has only "file", and a kernel file is a
# text file.
scene_refused() { # WHAT WANT
  rm -rf "$tmp/sr"
  "$plume" cook "$tmp/sr.json" --out "$tmp/sr" --no-checkpoint --quiet 2>"$tmp/err"; rc=$?
  [ "$rc" = 1 ] && grep -qF "$2" "$tmp/err" || fail "$1: exit $rc, want 1 and '$2': $(head -c 300 "$tmp/err")"
}
base='"plume_scene": 1, "name": "sr", "frames": {"start": 1, "end": 1, "fps": 24}, "init": [], "frame": ["export"]'
exp='{"name": "export", "type": "org.plume.vdb.export", "params": {"file": "s_####.vdb"}}'
f32='[{"name": "density", "type": "f32", "voxel_size": 0.1}]'
echo "{$base, \"substep\": [], \"fields\": [{\"name\": \"density\", \"type\": \"f32\", \"voxel_size\": 0.1, \"background\": [1, 2, 3]}], \"nodes\": [$exp]}" >"$tmp/sr.json"
scene_refused "vec3 background of an f32 field" "\$.fields[0]: 'background' of an f32 field must be one number"
echo "{$base, \"substeps\": {\"min\": 1, \"max\": 2, \"cfl\": 1, \"velocity\": \"density\"}, \"substep\": [], \"fields\": $f32, \"nodes\": [$exp]}" >"$tmp/sr.json"
scene_refused "an f32 substeps velocity" "\$.substeps.velocity: field 'density' is not a vec3 field"
mkdir -p "$tmp/pkdir"
printf 'kernel k(field<f32> density) {\0 }\n' >"$tmp/nul.pk"
for code in '{"file": "nul.pk", "x": 1}|unknown key '"'x'" '{"file": "pkdir"}|is a folder, not a file' '{"file": "nul.pk"}|holds a NUL byte'; do
  IFS='|' read -r c want <<<"$code"
  echo "{$base, \"substep\": [], \"fields\": $f32, \"nodes\": [{\"name\": \"k\", \"type\": \"org.plume.kernel\", \"params\": {\"code\": $c}}, $exp]}" >"$tmp/sr.json"
  scene_refused "code $c" "\$.nodes[0].params.code: "
  grep -qF "$want" "$tmp/err" || fail "code $c: want '$want': $(head -c 300 "$tmp/err")"
done

# One field bound to two ports of a kernel that writes one of them: the stencil read
# neighbours it had already overwritten (an audit measured a wrong sum, exit 0). Refused at the
# second port's bind; reading one field through two ports stays allowed.
cat >"$tmp/blur.pk" <<'PK'
kernel blur(field<f32> src, field<f32> dst) {
    for (I in src) {
        dst[I] = 0.5 * src[I] + 0.1 * (src[I + ivec3(1, 0, 0)] + src[I - ivec3(1, 0, 0)]);
    }
}
kernel sum2(field<f32> a, field<f32> b, field<f32> dst) {
    for (I in a) {
        dst[I] = a[I] + b[I];
    }
}
PK
two='[{"name": "density", "type": "f32", "voxel_size": 0.1}, {"name": "other", "type": "f32", "voxel_size": 0.1}]'
echo "{$base, \"substep\": [\"k\"], \"fields\": $two, \"nodes\": [{\"name\": \"k\", \"type\": \"org.plume.kernel\", \"params\": {\"code\": {\"file\": \"blur.pk\"}, \"kernel\": \"blur\"}, \"bind\": {\"src\": \"density\", \"dst\": \"density\"}}, $exp]}" >"$tmp/sr.json"
scene_refused "one field on a read and a written port" "\$.nodes[0].bind.dst: ports 'src' and 'dst' are both bound to field 'density', which port 'dst' writes"
echo "{$base, \"substep\": [\"k\"], \"fields\": $two, \"nodes\": [{\"name\": \"k\", \"type\": \"org.plume.kernel\", \"params\": {\"code\": {\"file\": \"blur.pk\"}, \"kernel\": \"sum2\"}, \"bind\": {\"a\": \"density\", \"b\": \"density\", \"dst\": \"other\"}}, $exp]}" >"$tmp/sr.json"
"$plume" cook "$tmp/sr.json" --out "$tmp/sr" --no-checkpoint --quiet 2>"$tmp/err" || fail "one field read through two ports: $(head -c 300 "$tmp/err")"

# A field parameter no port can carry (field<i32>) stops the scene where the code is set, at
# the parameter (it failed in the first cook, naming another parameter's field).
echo "{$base, \"substep\": [\"k\"], \"fields\": $two, \"nodes\": [{\"name\": \"k\", \"type\": \"org.plume.kernel\", \"params\": {\"code\": \"kernel k(field<f32> density, field<i32> alpha) { for (I in density) { density[I] = f32(alpha[I]); } }\"}}, $exp]}" >"$tmp/sr.json"
scene_refused "a field<i32> parameter" "\$.nodes[0].params.code: k:1:41: error: field parameter 'alpha' of type field<i32, 3>: a node's fields hold f32 or vec3"

# A kernel name the code does not define: at the "kernel" key (it was reported at "code"),
# with the kernels the code has.
echo "{$base, \"substep\": [\"k\"], \"fields\": $two, \"nodes\": [{\"name\": \"k\", \"type\": \"org.plume.kernel\", \"params\": {\"code\": {\"file\": \"blur.pk\"}, \"kernel\": \"blurr\"}}, $exp]}" >"$tmp/sr.json"
scene_refused "a kernel the code lacks" "\$.nodes[0].params.kernel: node 'k': $tmp/blur.pk has no kernel named 'blurr'; its kernels: blur, sum2"

# A 0-D field (scene-format.md: "layout": "dense(i,1)") is the target of a reduction: 64
# voxels of 1.5 sum to 96 in one substep, exported through a port like any field. The default
# (3-D) layout on it stops the cook when the scene is read (plume.validate/1), at the node,
# naming the layout that fits.
cat >"$tmp/zd.json" <<'EOF'
{"plume_scene": 1, "name": "zd", "frames": {"start": 1, "end": 1, "fps": 24},
 "fields": [{"name": "density", "voxel_size": 0.1}, {"name": "total", "voxel_size": 0.1, "layout": "dense(i,1)"}],
 "nodes": [{"name": "fill", "type": "org.plume.kernel", "params": {"code": "kernel fill(field<f32> density) { for (I in ivec3(0, 0, 0) .. ivec3(4, 4, 4)) { density[I] = 1.5; } }"}},
           {"name": "summer", "type": "org.plume.kernel", "params": {"code": "kernel sum(field<f32> density, field<f32, 0> total) { for (I in density) { total[] += density[I]; } }"}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "z_####.vdb"}, "bind": {"flame": "total"}}],
 "init": ["fill"], "substep": ["summer"], "frame": ["export"]}
EOF
"$plume" cook "$tmp/zd.json" --out "$tmp/zd" --no-checkpoint --quiet 2>"$tmp/err" || fail "0-D reduction scene: $(head -c 300 "$tmp/err")"
"$plume" vdb info "$tmp/zd/z_0001.vdb" >"$tmp/info" 2>&1
grep -Eq 'flame +float .* 1 active voxels' "$tmp/info" || fail "0-D field not exported as one voxel: $(cat "$tmp/info")"
if "$pyvdb" -c "import pyopenvdb" 2>/dev/null; then
  "$pyvdb" -c 'import sys, pyopenvdb as vdb; v = vdb.read(sys.argv[1], "flame").getConstAccessor().getValue((0, 0, 0)); sys.exit(0 if v == 96.0 else print(v) or 1)' \
    "$tmp/zd/z_0001.vdb" || fail "0-D reduction: the sum is not 96"
else
  echo "skip: the 0-D sum's value: $pyvdb has no pyopenvdb"
fi
# A warning (an unused variable) in a log that is not a terminal: no blank line before it
# (there is no progress line to end), with and without --quiet.
sed 's/{ for (I in density) { total/{ f32 unused = 1.0; for (I in density) { total/' "$tmp/zd.json" >"$tmp/zw.json"
for q in "" --quiet; do
  "$plume" cook "$tmp/zw.json" --out "$tmp/zw" --no-checkpoint $q 2>"$tmp/err" || fail "warned cook $q: $(head -c 300 "$tmp/err")"
  grep -q "warning: unused variable 'unused'" "$tmp/err" || fail "warned cook $q: no warning: $(head -c 300 "$tmp/err")"
  ! grep -q '^$' "$tmp/err" || fail "warned cook $q: a blank line in the log: $(cat -A "$tmp/err" | head -5)"
done
sed 's/dense(i,1)/default/' "$tmp/zd.json" >"$tmp/sr.json"
scene_refused "a 3-D field on a 0-D parameter" "sr.json: \$.nodes[1]: node 'summer' (org.plume.kernel): kernel 'sum': parameter 'total' is 0-dimensional but field 'total' is 3-dimensional (a field's layout sets its dimensions: \"layout\": \"dense(i,1)\""

if [ "$fails" -ne 0 ]; then echo "$fails kernel-scene check(s) failed"; exit 1; fi
echo "kernel scene checks passed"
