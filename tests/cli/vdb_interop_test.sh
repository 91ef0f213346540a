#!/usr/bin/env bash
# What other tools see in the files Plume reads and writes, checked with OpenVDB's own Python
# module (pyopenvdb), which shares no code with Plume's reader or writer:
#   - a grid whose transform rotates or swaps axes is refused by the import node, not placed
#     axis-aligned (it used to be, silently);
#   - vdb convert keeps a level set's narrow band and its inside (it used to turn the inside
#     into active voxels);
#   - a level set imported and exported with density_class level_set is a level set again;
#   - exported vel is a velocity to OpenVDB (vector type contravariant relative);
#   - vdb convert keeps the file's own metadata; render of an empty grid draws the background.
# Skips (77) when pyopenvdb is missing.
set -u
plume=$1; py=$2; default_scene=$3
if ! "$py" -c 'import pyopenvdb' 2>/dev/null; then
  echo "skip: $py has no pyopenvdb (package python3-openvdb); these checks need an independent reader"
  exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
export PLUME_KERNEL_CACHE=off

"$py" - "$tmp" <<'PY' || { echo "FAIL: making the fixtures"; exit 1; }
import math, sys, pyopenvdb as vdb
d = sys.argv[1]
# pyopenvdb matrices are row vectors: the translation is the last row.
c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
r = vdb.FloatGrid(0.0); r.name = "density"
r.transform = vdb.createLinearTransform([[0.1 * c, 0, -0.1 * s, 0], [0, 0.1, 0, 0], [0.1 * s, 0, 0.1 * c, 0], [0, 0, 0, 1]])
r.getAccessor().setValueOn((9, 0, 0), 1.0)
vdb.write(d + "/rot.vdb", [r])
w = vdb.FloatGrid(0.0); w.name = "density"  # index x -> world z, y mirrored
w.transform = vdb.createLinearTransform([[0, 0, 0.1, 0], [0, -0.1, 0, 0], [0.1, 0, 0, 0], [0, 0, 0, 1]])
w.getAccessor().setValueOn((9, 0, 0), 1.0)
vdb.write(d + "/swap.vdb", [w])
ls = vdb.createLevelSetSphere(radius=3.0, center=(0.3, -1.0, 0.7), voxelSize=0.1, halfWidth=3.0)
ls.name = "surface"
vdb.write(d + "/ls.vdb", [ls], metadata={"creator": "pyopenvdb", "my_int": 7})
e = vdb.FloatGrid(0.0); e.name = "density"; e.transform = vdb.createLinearTransform(voxelSize=0.1)
vdb.write(d + "/empty.vdb", [e])
t = vdb.FloatGrid(0.0); t.name = "density"; t.gridClass = vdb.GridClass.FOG_VOLUME
t.transform = vdb.createLinearTransform(voxelSize=0.1)
t.fill((0, 0, 0), (127, 127, 127), 0.5, True)  # one active 128^3 tile
t.getAccessor().setValueOn((200, 3, 3), 0.25)
vdb.write(d + "/tile.vdb", [t])
n = vdb.FloatGrid(0.0); n.name = "density"
n.transform = vdb.createLinearTransform([[0.1, 0, 0, 0], [0, 0.2, 0, 0], [0, 0, 0.3, 0], [0, 0, 0, 1]])
n.getAccessor().setValueOn((1, 2, 3), 1.0)
vdb.write(d + "/nonuniform.vdb", [n])
PY

# A scene importing one grid of FILE into a field of voxel size 0.1 and exporting it.
scene() { # FILE GRID OUT.json [EXPORT PARAMS]
  cat >"$3" <<EOF
{"plume_scene": 1, "name": "io", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "density", "voxel_size": 0.1, "origin": [-0.05, -0.05, -0.05], "background": 0.3}],
 "nodes": [{"name": "load", "type": "org.plume.vdb.import", "params": {"file": "$1", "grid": "$2"},
            "bind": {"target": "density"}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "out_####.vdb"${4:+, $4}},
            "bind": {"density": "density"}}],
 "init": ["load"], "frame": ["export"]}
EOF
}

# 1. Rotated and axis-swapped transforms are refused, naming the file and saying why.
for f in rot swap; do
  scene "$tmp/$f.vdb" density "$tmp/$f.json"
  "$plume" cook "$tmp/$f.json" --out "$tmp/out_$f" --quiet --no-checkpoint 2>"$tmp/err"; rc=$?
  [ $rc = 1 ] && grep -q "$f.vdb" "$tmp/err" && grep -q "rotates, mirrors or swaps axes" "$tmp/err" \
    || fail "$f.vdb: exit $rc: $(cat "$tmp/err")"
  [ -z "$(ls "$tmp/out_$f" 2>/dev/null | grep vdb)" ] || fail "$f.vdb: a file was written"
done
"$plume" vdb info "$tmp/rot.vdb" | grep -q "rotated" || fail "vdb info does not say rot.vdb is rotated"
"$plume" vdb info "$tmp/nonuniform.vdb" | grep -q "voxel 0.1 x 0.2 x 0.3" || fail "vdb info: non-uniform voxel: $("$plume" vdb info "$tmp/nonuniform.vdb")"

# 2. vdb convert of a level set: same band, inside still inside, class and metadata kept.
"$plume" vdb convert "$tmp/ls.vdb" "$tmp/ls_rt.vdb" 2>"$tmp/err" || fail "convert ls: $(cat "$tmp/err")"
"$plume" vdb convert "$tmp/tile.vdb" "$tmp/tile_rt.vdb" 2>"$tmp/err" || fail "convert tile: $(cat "$tmp/err")"
# 3. Import + export as a level set.
scene "$tmp/ls.vdb" surface "$tmp/ls.json" '"density_class": "level_set"'
"$plume" cook "$tmp/ls.json" --out "$tmp/out_ls" --quiet --no-checkpoint 2>"$tmp/err" || fail "cook ls: $(cat "$tmp/err")"
# 4. The default scene's vel, one frame.
"$plume" cook "$default_scene" --frames 1-1 --out "$tmp/smoke" --quiet --no-checkpoint 2>"$tmp/err" || fail "default scene: $(cat "$tmp/err")"

"$py" - "$tmp" <<'PY' || fail "pyopenvdb disagrees (above)"
import sys, pyopenvdb as vdb
d = sys.argv[1]
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
src = vdb.read(d + "/ls.vdb", "surface")
centre, outside = (3, -10, 7), (3, -10, 50)  # index of the sphere's centre; a voxel far outside
for name, path, grid in (("convert", "/ls_rt.vdb", "surface"), ("export", "/out_ls/out_0001.vdb", "density")):
    try:
        g = vdb.read(d + path, grid)
    except Exception as x:
        bad.append("%s: %s" % (name, x))
        continue
    check(g.gridClass == vdb.GridClass.LEVEL_SET, "%s: class %s" % (name, g.gridClass))
    check(g.activeVoxelCount() == src.activeVoxelCount(),
          "%s: %d active voxels, the file has %d" % (name, g.activeVoxelCount(), src.activeVoxelCount()))
    a, b = g.getConstAccessor(), src.getConstAccessor()
    check(a.getValue(centre) < 0, "%s: the centre reads %g, not inside" % (name, a.getValue(centre)))
    check(a.getValue(outside) > 0, "%s: far outside reads %g" % (name, a.getValue(outside)))
    diff = max(abs(a.getValue(it.min) - b.getValue(it.min)) for it in src.citerOnValues())
    check(diff < 1e-6, "%s: band values differ by %g" % (name, diff))
t, u = vdb.read(d + "/tile.vdb", "density"), vdb.read(d + "/tile_rt.vdb", "density")
check(u.activeVoxelCount() == t.activeVoxelCount(), "tile: %d active voxels, the file has %d" % (u.activeVoxelCount(), t.activeVoxelCount()))
check(u.leafCount() == t.leafCount(), "tile: %d leaves written for the file's %d (a 128^3 tile voxelized)" % (u.leafCount(), t.leafCount()))
ua = u.getConstAccessor()
check(ua.getValue((64, 64, 64)) == 0.5 and ua.getValue((200, 3, 3)) == 0.25, "tile: values changed")
fm = vdb.readMetadata(d + "/ls_rt.vdb")
check(fm.get("my_int") == 7, "convert dropped the file's metadata: %s" % fm)
check(fm.get("creator", "").startswith("Plume"), "convert's creator: %s" % fm.get("creator"))
vel = vdb.read(d + "/smoke/smoke_0001.vdb", "vel")
check(vel.vectorType == vdb.VectorType.CONTRAVARIANT_RELATIVE, "vel's vector type: %s" % vel.vectorType)
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY

# 5. An empty grid renders as the background with a warning, not a failure.
"$plume" render "$tmp/empty.vdb" -o "$tmp/empty.png" 2>"$tmp/err" || fail "render of an empty grid: $(cat "$tmp/err")"
grep -q "no active voxels" "$tmp/err" || fail "render of an empty grid says nothing: $(cat "$tmp/err")"
[ "$(head -c 8 "$tmp/empty.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "no PNG for the empty grid"

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all interop checks passed"
