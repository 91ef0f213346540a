#!/usr/bin/env bash
# The plume CLI: exit codes (0 ok, 1 work failed, 2 usage), messages on stderr that name their
# place, broken scene files.
set -u
plume=$1; bad=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
# expect CODE "stderr substring" -- command...
expect() {
  local code=$1 needle=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" != "$code" ]; then
    echo "FAIL: '$*' exited $got, expected $code; stderr: $(head -c 400 "$tmp/err")"; fails=$((fails+1)); return
  fi
  if [ -n "$needle" ] && ! grep -qF -- "$needle" "$tmp/err"; then
    echo "FAIL: '$*' stderr lacks '$needle': $(head -c 400 "$tmp/err")"; fails=$((fails+1))
  fi
}
expect 0 "" -- "$plume" --help
grep -q "usage: plume" "$tmp/out" || { echo "FAIL: --help prints no usage"; fails=$((fails+1)); }
expect 0 "" -- "$plume" --version
grep -qE "^plume [0-9]+\.[0-9]+\.[0-9]+ \(ABI 1\.[0-9]+\)" "$tmp/out" || { echo "FAIL: --version"; fails=$((fails+1)); }
expect 2 "unknown command 'frobnicate'" -- "$plume" frobnicate
expect 2 "unknown option '--bogus'" -- "$plume" --bogus
expect 2 "" -- "$plume"
expect 2 "which scene?" -- "$plume" cook
expect 2 "--frames must look like" -- "$plume" cook "$bad/tiny.json" --frames 5-2
expect 2 "--device must be cpu, cuda or auto" -- "$plume" cook "$bad/tiny.json" --device tpu
# A scene field named like a node's scratch field ("<node>:<what>") is refused at its path; an
# export with no file name is refused, not written as "_0001"
sed 's/"name": "density"/"name": "project:pressure"/' "$bad/tiny.json" >"$tmp/colon.json"
expect 1 "colon.json: \$.fields[0]: field 'project:pressure': names with ':' belong to the nodes' scratch" -- "$plume" cook "$tmp/colon.json" --out "$tmp/colon"
cat >"$tmp/nofile.json" <<'EOF'
{"plume_scene": 1, "name": "nofile", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "density", "voxel_size": 0.05}],
 "nodes": [{"name": "emit", "type": "org.plume.source.sphere", "params": {"radius": 0.2}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": ""}}],
 "substep": ["emit"], "frame": ["export"]}
EOF
expect 1 "nofile.json: \$.nodes[1].params.file: 'file' must name a file, not nothing" -- "$plume" cook "$tmp/nofile.json" --out "$tmp/nofile"
[ -z "$(ls "$tmp/nofile" 2>/dev/null)" ] || { echo "FAIL: an empty file name wrote $(ls "$tmp/nofile")"; fails=$((fails+1)); }
# A file to read that is not there stops the cook when the scene is read, at its JSON path and
# with the path it looked for (it said "frame 1: node 'imp': ...: cannot open" after init);
# a sequence (a run of #) is read frame by frame and not checked here.
mkdir -p "$tmp/sub"
cat >"$tmp/sub/missing.json" <<'EOF'
{"plume_scene": 1, "name": "missing", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "density", "voxel_size": 0.1}],
 "nodes": [{"name": "imp", "type": "org.plume.vdb.import", "params": {"file": "gone.vdb"}, "bind": {"target": "density"}}],
 "init": ["imp"]}
EOF
expect 1 "missing.json: \$.nodes[0].params.file: cannot read $tmp/sub/gone.vdb: No such file or directory (a relative path is taken from the scene file's folder)" -- "$plume" cook "$tmp/sub/missing.json" --out "$tmp/missing"
[ -z "$(ls "$tmp/missing" 2>/dev/null)" ] || { echo "FAIL: a scene with a missing input wrote $(ls "$tmp/missing")"; fails=$((fails+1)); }
sed -i 's/gone.vdb/gone_####.vdb/' "$tmp/sub/missing.json"
expect 1 "missing.json: init (before frame 1): node 'imp'" -- "$plume" cook "$tmp/sub/missing.json" --out "$tmp/missing"
# An output whose folder cannot be made (under a file) stops the cook before frame 1, at its
# JSON path; it was reported a frame late, after that frame was listed as done.
: >"$tmp/afile"
sed "s|\"file\": \"\"|\"file\": \"$tmp/afile/sub/x_####.vdb\"|" "$tmp/nofile.json" >"$tmp/underfile.json"
expect 1 "underfile.json: \$.nodes[1].params.file: cannot create the folder $tmp/afile/sub: Not a directory" -- "$plume" cook "$tmp/underfile.json" --out "$tmp/underfile"
grep -q "^frame 1" "$tmp/err" && { echo "FAIL: a frame was cooked before the output folder was refused"; fails=$((fails+1)); }
# A kernel writing outside its field's index range: the message says which voxels the field can
# hold, not an SNode number
cat >"$tmp/oob.json" <<'EOF'
{"plume_scene": 1, "name": "oob", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "q", "voxel_size": 0.05}],
 "nodes": [{"name": "bad", "type": "org.plume.kernel", "params": {"code": "kernel k(field<f32> q) { for (P in ivec3(0) .. ivec3(4)) { q[P + ivec3(100000, 0, 0)] = 1.0; } }"}}],
 "substep": ["bad"]}
EOF
expect 1 "frame 1: node 'bad' (org.plume.kernel): field 'q': kernel 'k' wrote outside the voxels the field can hold (-2048..2047, -2048..2047, -2048..2047) (64 failed operations)" -- "$plume" cook "$tmp/oob.json" --out "$tmp/oob"
! grep -q "SNode" "$tmp/err" || { echo "FAIL: the range error names an SNode: $(cat "$tmp/err")"; fails=$((fails+1)); }
# The error surfaces at the next sync, here an export's: it names the kernel's node, not the
# export's (it said "node 'export' (org.plume.vdb.export): field 'q': a kernel wrote ...").
# Optimized, the two kernels run fused as one task: both nodes are named, as candidates.
cat >"$tmp/oob2.json" <<'EOF'
{"plume_scene": 1, "name": "oob2", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "q", "voxel_size": 0.05}, {"name": "d", "voxel_size": 0.05}],
 "nodes": [{"name": "bad", "type": "org.plume.kernel", "params": {"code": "kernel k(field<f32> q) { for (P in ivec3(0) .. ivec3(4)) { q[P + ivec3(100000, 0, 0)] = 1.0; } }"}},
           {"name": "fine", "type": "org.plume.kernel", "params": {"code": "kernel k2(field<f32> d) { for (P in ivec3(0) .. ivec3(4)) { d[P] = 1.0; } }"}},
           {"name": "export", "type": "org.plume.vdb.export", "params": {"file": "o_####.vdb"}, "bind": {"density": "d"}}],
 "substep": ["bad", "fine"], "frame": ["export"]}
EOF
expect 1 "frame 1: node 'bad' (org.plume.kernel): field 'q': kernel 'k' wrote outside" -- "$plume" cook "$tmp/oob2.json" --mode eager --out "$tmp/oob2"
expect 1 "frame 1: node 'bad' (org.plume.kernel) or node 'fine' (org.plume.kernel): field 'q': kernel 'k' or 'k2' (run fused as one task) wrote outside" -- "$plume" cook "$tmp/oob2.json" --out "$tmp/oob2"
! grep -q "node 'export'" "$tmp/err" || { echo "FAIL: the range error blames the export: $(cat "$tmp/err")"; fails=$((fails+1)); }
# The pressure solve usually syncs first in a substep: it passes the kernel's node on, first
# (it said "node 'project': node 'bad' ..."), with the range error's status.
cat >"$tmp/oobp.json" <<'EOF'
{"plume_scene": 1, "name": "oobp", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "density", "voxel_size": 0.03125}, {"name": "temperature", "voxel_size": 0.03125},
            {"name": "vel", "type": "vec3", "voxel_size": 0.03125}],
 "nodes": [{"name": "src", "type": "org.plume.smoke.source", "params": {"center": [0.5, 0.5, 0.5], "radius": 0.1}},
           {"name": "bad", "type": "org.plume.kernel", "params": {"code": "kernel k(field<f32> q) { for (P in ivec3(0) .. ivec3(4)) { q[P + ivec3(100000, 0, 0)] = 1.0; } }"}, "bind": {"q": "density"}},
           {"name": "project", "type": "org.plume.smoke.project"}],
 "init": ["src"], "substep": ["bad", "project"]}
EOF
expect 1 "frame 1: node 'bad' (org.plume.kernel): field 'density': kernel 'k' wrote outside" -- "$plume" cook "$tmp/oobp.json" --out "$tmp/oobp" --no-checkpoint
# dt declared as an integer would get 0 every substep without a word: a warning says so
cat >"$tmp/intdt.json" <<'EOF'
{"plume_scene": 1, "name": "intdt", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "q", "voxel_size": 0.1}],
 "nodes": [{"name": "k", "type": "org.plume.kernel", "params": {"code": "kernel k(field<f32> q, i32 dt) { for (P in ivec3(0) .. ivec3(4)) { q[P] = f32(dt); } }"}}],
 "substep": ["k"]}
EOF
expect 0 "node 'k': kernel parameter 'dt' is not a float" -- "$plume" cook "$tmp/intdt.json" --out "$tmp/intdt" --no-checkpoint --quiet
# A kernel node's compile errors come whole: 20 with their source lines of 400 characters,
# about 13 KB (cut at 4 KB in the plugin and 8 KB in the CLI, mid-line, without a word); past
# 16 KB the message says it was cut.
for n in 55 150; do
/usr/bin/python3 - "$tmp/many.json" $n <<'PY'
import json, sys
line = '    f32 a = ' + ' + '.join('zz%d' % i for i in range(int(sys.argv[2]))) + ';'
code = 'kernel k(field<f32> q) {\n' + line + '\n}'
json.dump({"plume_scene": 1, "name": "many", "frames": {"start": 1, "end": 1},
           "fields": [{"name": "q", "voxel_size": 0.1}],
           "nodes": [{"name": "k", "type": "org.plume.kernel", "params": {"code": code}}],
           "substep": ["k"]}, open(sys.argv[1], "w"))
PY
if [ $n = 55 ]; then
  expect 1 "too many errors; stopped after 20" -- "$plume" cook "$tmp/many.json" --out "$tmp/many" --no-checkpoint --quiet
  [ "$(grep -c "error: unknown name 'zz" "$tmp/err")" = 20 ] || { echo "FAIL: not all 20 compile errors came: $(grep -c error: "$tmp/err")"; fails=$((fails+1)); }
else
  expect 1 "[... message cut]" -- "$plume" cook "$tmp/many.json" --out "$tmp/many" --no-checkpoint --quiet
fi
done
# A kernel node's source_name names its code in errors whatever the keys' order; a scalar of the
# wrong kind says what it takes
cat >"$tmp/srcname.json" <<'EOF'
{"plume_scene": 1, "name": "srcname", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "q", "voxel_size": 0.05}],
 "nodes": [{"name": "bad", "type": "org.plume.kernel", "params": {"code": "kernel k(field<f32> q) {\n    q[J] = 1.0;\n}\n", "source_name": "mine.pk"}}],
 "substep": ["bad"]}
EOF
expect 1 "mine.pk:2:7: error: unknown name 'J'" -- "$plume" cook "$tmp/srcname.json" --out "$tmp/srcname"
sed 's/"k": 0.5/"k": "half"/' "$bad/kernel_nodes.json" >"$tmp/kstr.json"
expect 1 "node 'scale': kernel parameter 'k' takes a finite number" -- "$plume" cook "$tmp/kstr.json" --out "$tmp/kstr"
# --out naming a file: refused before the cook, and a refused scene leaves no empty folder
: >"$tmp/afile"
expect 1 "cannot use $tmp/afile as the output folder: it exists and is a file" -- "$plume" cook "$bad/tiny.json" --out "$tmp/afile" --frames 1-1
expect 1 "cannot create output folder $tmp/afile/sub: Not a directory" -- "$plume" cook "$bad/tiny.json" --out "$tmp/afile/sub" --frames 1-1
# empty inline code is said to be so (the first bind said "has no port 'q'")
sed 's/"code": "kernel scale[^"]*"/"code": " "/' "$bad/kernel_nodes.json" >"$tmp/nocode.json"
expect 1 "\$.nodes[1].params.code: 'code' is empty: give the kernel's source" -- "$plume" cook "$tmp/nocode.json" --out "$tmp/nocode"
expect 1 "unknown node type" -- "$plume" cook "$bad/unknown_node.json" --out "$tmp/unk"
[ ! -e "$tmp/unk" ] || { echo "FAIL: a refused scene left the folder $tmp/unk"; fails=$((fails+1)); }
# A scene with a UTF-8 byte order mark cooks; a folder given as the scene says so; two nodes
# writing one file are refused at the second's path (also through a default file name)
printf '\357\273\277' >"$tmp/bom.json"; cat "$bad/tiny.json" >>"$tmp/bom.json"
expect 0 "" -- "$plume" cook "$tmp/bom.json" --out "$tmp/bom" --frames 1-1
expect 1 "$tmp: is a folder, not a scene file" -- "$plume" cook "$tmp" --out "$tmp/dirscene"
python3 - "$bad/kernel_nodes.json" "$tmp/two.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["nodes"].append({"name": "export2", "type": "org.plume.vdb.export", "params": {"file": "k_####.vdb"},
                   "bind": {"density": "density"}})
d["frame"].append("export2")
json.dump(d, open(sys.argv[2], "w"))
PY
expect 1 "two.json: \$.nodes[3].params.file: writes $tmp/two/k_####.vdb, which \$.nodes[2].params.file writes too" -- "$plume" cook "$tmp/two.json" --out "$tmp/two"
# --stats where it cannot be written: said before the cook (which it would cost), with the reason
expect 1 "cannot write statistics to $tmp/nodir/s.json: No such file or directory" -- "$plume" cook "$bad/tiny.json" --out "$tmp/st0" --stats "$tmp/nodir/s.json"
[ ! -e "$tmp/st0" ] || { echo "FAIL: --stats to a missing folder still cooked into $tmp/st0"; fails=$((fails+1)); }
# ... but a stats file inside the output folder the cook makes is fine
expect 0 "" -- "$plume" cook "$bad/tiny.json" --out "$tmp/st1" --stats "$tmp/st1/s.json" --frames 1-1
[ -s "$tmp/st1/s.json" ] || { echo "FAIL: --stats inside --out was not written"; fails=$((fails+1)); }
# --memory-budget: the whole cook's budget (every field together); past it a clear error and
# status 1 (the sphere's 4096 voxels need about 1.05 MB with the tree's tables, so 1M is short
# and 2M is enough)
expect 2 "--memory-budget must look like" -- "$plume" cook "$bad/tiny.json" --memory-budget 12x
for v in 0x100000 " 64M" 1e3M .5G 1..5G; do # strtod's other forms are not sizes
  expect 2 "--memory-budget must look like" -- "$plume" cook "$bad/tiny.json" --memory-budget "$v"
done
expect 1 "field 'density': memory budget exceeded: needed" -- "$plume" cook "$bad/tiny.json" --memory-budget 1M --out "$tmp/mb1" --frames 1-1
grep -q "budget 1048576 bytes" "$tmp/err" || { echo "FAIL: --memory-budget 1M: $(cat "$tmp/err")"; fails=$((fails+1)); }
expect 0 "" -- "$plume" cook "$bad/tiny.json" --memory-budget 2M --out "$tmp/mb2" --frames 1-1
# A sphere source larger than the budget can pay for fails at once (it looped over 10^11
# voxels, past Ctrl-C), and one outside the field's index range says so; both sources
sed 's/"radius": 0.2/"radius": 1000/' "$bad/tiny.json" >"$tmp/huge.json"
expect 1 "node 'emit': memory budget exceeded: the sphere (radius 1000, " -- timeout 60 "$plume" cook "$tmp/huge.json" --out "$tmp/huge" --frames 1-1
grep -q "more than the memory budget" "$tmp/err" || { echo "FAIL: huge sphere: $(cat "$tmp/err")"; fails=$((fails+1)); }
sed 's/"center": \[0, 0.1, 0\]/"center": [500, 0, 0]/' "$bad/tiny.json" >"$tmp/far.json"
expect 1 "node 'emit': the sphere lies outside the voxels field 'density' can hold (-2048..2047 on axis x)" -- \
  timeout 60 "$plume" cook "$tmp/far.json" --out "$tmp/far" --frames 1-1
# (with an empty input file on the sphere source, as an exporter writing every parameter would:
# an unused input may be empty, so the scene gets as far as the source's budget check)
sed -e 's/"radius": 0.08/"radius": 1000, "file": ""/' "${3:-../scenes}/smoke_plume.json" >"$tmp/shuge.json"
grep -q '"radius": 1000, "file": ""' "$tmp/shuge.json" || { echo "FAIL: smoke_plume.json was not rewritten"; fails=$((fails+1)); }
expect 1 "node 'source': memory budget exceeded: the sphere (radius 1000, " -- timeout 60 "$plume" cook "$tmp/shuge.json" --out "$tmp/shuge" --frames 1-1
# --device: without a GPU, cuda fails naming why (nothing written) and auto falls back saying so
if ldconfig -p 2>/dev/null | grep -q "libcuda.so.1"; then
  echo "SKIPPED: the no-GPU checks of --device (a CUDA driver is installed here)"
else
  expect 1 "device cuda: no CUDA driver" -- "$plume" cook "$bad/tiny.json" --device cuda --out "$tmp/dc" --frames 1-1
  [ ! -e "$tmp/dc" ] || { echo "FAIL: --device cuda without a GPU left $tmp/dc"; fails=$((fails+1)); }
  expect 0 "auto: no usable GPU (no CUDA driver" -- "$plume" cook "$bad/tiny.json" --device auto --out "$tmp/da" --frames 1-1
  grep -q "on CPU" "$tmp/err" || { echo "FAIL: --device auto did not say it cooks on the CPU"; fails=$((fails+1)); }
fi
# Deterministic mode is the CPU's: on a usable (fake, tests/engine/fake_cuda_exec.c) GPU, auto
# takes the CPU for a deterministic cook and says so; an explicit cuda fails saying why
fakex=${5:-}
if [ -n "$fakex" ] && [ -e "$fakex/libcuda.so.1" ]; then
  expect 0 "auto: deterministic mode, using the CPU" -- env LD_LIBRARY_PATH="$fakex" "$plume" cook "$bad/tiny.json" --device auto --deterministic --out "$tmp/ddet" --frames 1-1
  grep -q "on CPU" "$tmp/err" || { echo "FAIL: deterministic auto did not cook on the CPU: $(cat "$tmp/err")"; fails=$((fails+1)); }
  expect 1 "deterministic mode runs on the CPU only" -- env LD_LIBRARY_PATH="$fakex" "$plume" cook "$bad/tiny.json" --device cuda --deterministic --out "$tmp/ddc" --frames 1-1
  expect 0 "auto: using the GPU" -- env LD_LIBRARY_PATH="$fakex" PLUME_VERBOSE=1 "$plume" cook "$bad/tiny.json" --device auto --out "$tmp/dga" --frames 1-1
else
  echo "SKIPPED: deterministic --device auto on a GPU (no fake_cuda_exec driver given)"
fi
# --device with a fake driver (tests/backend/fake_cuda.c, its folder as the fourth argument): a
# device the engine cannot use is named with the reason, and auto falls back past it
fake=${4:-}
if [ -n "$fake" ] && [ -e "$fake/libcuda.so.1" ]; then
  expect 1 "device cuda: device Fake GPU has no managed memory" -- env LD_LIBRARY_PATH="$fake" FAKE_CUDA_MODE=one "$plume" cook "$bad/tiny.json" --device cuda --out "$tmp/df" --frames 1-1
  expect 1 "device cuda: CUDA driver 12.4 found but it reports 0 devices" -- env LD_LIBRARY_PATH="$fake" FAKE_CUDA_MODE=zero "$plume" cook "$bad/tiny.json" --device cuda --out "$tmp/df" --frames 1-1
  [ ! -e "$tmp/df" ] || { echo "FAIL: --device cuda on an unusable GPU left $tmp/df"; fails=$((fails+1)); }
  # the test suites' switch (README) names the GPU's problem too, not "out of host memory"
  expect 1 "context_create: PLUME_DEVICE=cuda: device Fake GPU has no managed memory" -- env LD_LIBRARY_PATH="$fake" FAKE_CUDA_MODE=one PLUME_DEVICE=cuda "$plume" cook "$bad/tiny.json" --out "$tmp/df" --frames 1-1
  ! grep -q "out of host memory" "$tmp/err" || { echo "FAIL: PLUME_DEVICE=cuda: $(cat "$tmp/err")"; fails=$((fails+1)); }
  expect 0 "auto: no usable GPU (device Fake GPU has no managed memory" -- env LD_LIBRARY_PATH="$fake" FAKE_CUDA_MODE=one "$plume" cook "$bad/tiny.json" --device auto --out "$tmp/dfa" --frames 1-1
else
  echo "SKIPPED: --device with the fake driver (no fake libcuda.so.1 folder given)"
fi
expect 2 "--disable takes" -- "$plume" cook "$bad/tiny.json" --disable nothing
expect 2 "unknown option '--fast'" -- "$plume" cook "$bad/tiny.json" --fast
expect 2 "--out needs a value" -- "$plume" cook "$bad/tiny.json" --out
expect 2 "unknown option '--yaml'" -- "$plume" nodes --yaml
expect 1 "cannot load plugin /nonexistent/libplume.so" -- "$plume" --plugin /nonexistent/libplume.so nodes
expect 1 "cannot load plugin" -- env PLUME_PLUGIN=/nonexistent/x.so "$plume" nodes
expect 0 "" -- "$plume" nodes --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(n["id"]=="org.plume.source.sphere" and n["params"] for n in d)' "$tmp/out" \
  || { echo "FAIL: nodes --json is not the expected JSON"; fails=$((fails+1)); }

# Broken scenes: the file, the JSON path (or line:col) and what was expected.
expect 1 "bad_json.json:4:" -- "$plume" cook "$bad/bad_json.json" --out "$tmp/o1"
expect 1 "unknown_node.json: \$.nodes[1].type: unknown node type 'org.plume.source.cube'" -- "$plume" cook "$bad/unknown_node.json" --out "$tmp/o2"
expect 1 "missing_field.json: \$.nodes[0].bind.target: port 'target' is bound to field 'temperature', which is not declared" -- "$plume" cook "$bad/missing_field.json" --out "$tmp/o3"
# A field of the wrong kind is refused when the scene is read, before anything is simulated
# (it was found at the node's cook, after the frame's solve)
sed 's/"vel": "vel"/"vel": "density"/' "$bad/smoke_small.json" >"$tmp/kind.json"
expect 1 "kind.json: \$.nodes[5].bind.vel: port 'vel' needs a vec3 field but 'density' is a f32 field" -- "$plume" cook "$tmp/kind.json" --out "$tmp/kind"
[ ! -e "$tmp/kind" ] || { echo "FAIL: a refused scene left the folder $tmp/kind"; fails=$((fails+1)); }
expect 1 "wrong_param.json: \$.nodes[0].params.radius: 'radius' must be a number, not a string" -- "$plume" cook "$bad/wrong_param.json" --out "$tmp/o4"
# an enum's wrong value lists the choices; --disable names what it did not take
sed 's/"params": {"radius": "large"}/"params": {"mode": "multiply"}/' "$bad/wrong_param.json" >"$tmp/enum.json"
expect 1 "\$.nodes[0].params.mode: node 'emit': 'multiply' is not a choice of 'mode' (max, set, add)" -- "$plume" cook "$tmp/enum.json" --out "$tmp/o4e"
expect 2 "--disable takes a comma-separated list of listgen, demote, fusion, dse, not 'fusion,foo'" -- "$plume" cook "$bad/tiny.json" --disable fusion,foo
expect 1 "no_fields.json: \$.fields: a scene needs an array of fields" -- "$plume" cook "$bad/no_fields.json" --out "$tmp/o5"
expect 1 "\$.substep[1]: no node named 'emitter'" -- "$plume" cook "$bad/unknown_stage_node.json" --out "$tmp/o6"
expect 1 "\$.fields[0]: unknown key 'voxel_sise'" -- "$plume" cook "$bad/typo_key.json" --out "$tmp/o7"
expect 1 "missing.json" -- "$plume" cook "$bad/missing.json" --out "$tmp/o8"

# A small scene cooks; --stats writes JSON with one entry per frame.
expect 0 "cooked 3 frames" -- "$plume" cook "$bad/tiny.json" --out "$tmp/tiny" --stats "$tmp/stats.json" --threads 1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [f["frame"] for f in d["frames"]]==[1,2,3], d; assert d["frames"][0]["active_voxels"]>0 and isinstance(d["frames"][0]["active_voxels"], int); assert d["status"]=="complete", d["status"]' "$tmp/stats.json" \
  || { echo "FAIL: stats JSON"; fails=$((fails+1)); }
expect 0 "" -- "$plume" cook "$bad/tiny.json" --out "$tmp/tiny" --frames 2-2 --quiet
[ ! -s "$tmp/err" ] || { echo "FAIL: --quiet printed: $(cat "$tmp/err")"; fails=$((fails+1)); }

# plume compile: checking a kernel file lists its kernels; errors cite file:line:col.
cat >"$tmp/k.pk" <<'EOF'
kernel scale(field<f32> q, f32 s) {
    for (I in q) {
        q[I] = q[I] * s;
    }
}
kernel clear(field<f32> q) {
    for (I in q) {
        q[I] = 0.0;
    }
}
EOF
expect 0 "" -- "$plume" compile "$tmp/k.pk"
printf 'kernel scale(q: field<f32, 3>, s: f32)\nkernel clear(q: field<f32, 3>)\n' | cmp -s - "$tmp/out" \
  || { echo "FAIL: compile check listing: $(cat "$tmp/out")"; fails=$((fails+1)); }
expect 0 "" -- "$plume" compile "$tmp/k.pk" --emit ast -o "$tmp/ast.txt"
grep -q "(kernel clear" "$tmp/ast.txt" && grep -q "(kernel scale" "$tmp/ast.txt" && [ ! -s "$tmp/out" ] \
  || { echo "FAIL: compile --emit ast -o"; fails=$((fails+1)); }
expect 1 "no kernel named 'nope'" -- "$plume" compile "$tmp/k.pk" --kernel nope
printf 'kernel bad(field<f32> q) {\n    q[J] = 1.0;\n}\n' >"$tmp/bad.pk"
expect 1 "bad.pk:2:7: error: unknown name 'J'" -- "$plume" compile "$tmp/bad.pk"
grep -q '^      \^' "$tmp/err" || { echo "FAIL: compile error has no caret under column 7"; fails=$((fails+1)); }
expect 1 "cannot read" -- "$plume" compile "$tmp/none.pk"
# Forty-odd warnings before the one error filled the 4 KB message: the error must still show.
{ for k in 1 2; do echo "kernel warned$k() {"; for i in $(seq 1 30); do echo "    f32 unused_$i = 1.0;"; done
  echo '}'; done; printf 'kernel bad() {\n    nope = 1;\n}\n'; } >"$tmp/warned.pk"
expect 1 "warned.pk:66:5: error: unknown name 'nope'" -- "$plume" compile "$tmp/warned.pk"
grep -q "and 60 warnings, not shown" "$tmp/err" \
  || { echo "FAIL: failed compile does not count its warnings: $(tail -c 300 "$tmp/err")"; fails=$((fails+1)); }
printf 'func f32 twice(f32 x) { return 2.0 * x; }\n' >"$tmp/nokernel.pk"
expect 0 "nokernel.pk: defines no kernel" -- "$plume" compile "$tmp/nokernel.pk"
# a listing of it is empty, not an error (the check above passes)
expect 0 "nokernel.pk: defines no kernel" -- "$plume" compile "$tmp/nokernel.pk" --emit ir
[ ! -s "$tmp/out" ] || { echo "FAIL: --emit ir of a file without kernels printed: $(head -c 200 "$tmp/out")"; fails=$((fails+1)); }
expect 1 "no kernel named 'k'" -- "$plume" compile "$tmp/nokernel.pk" --emit ir --kernel k
# A loop too large for the code generator (LLVM took 39 s on this one, minutes on larger) is an
# error at the kernel, not a compile nobody can stop; its IR still prints.
printf 'kernel huge(field<f32> a) {\n    for (I in a) { f32 s = 0.0; for (static i in 0 .. 1024) { s += a[I + ivec3(i, 0, 0)]; } a[I] = s; }\n}\n' >"$tmp/huge.pk"
expect 1 "huge.pk:1:8: error: kernel 'huge': lowers to" -- timeout 30 "$plume" compile "$tmp/huge.pk" --emit asm
expect 0 "" -- timeout 30 "$plume" compile "$tmp/huge.pk" --emit ir -o "$tmp/huge.ir"
# Lowering errors start with their place and name the kernel after "error: ", whatever the
# names: it read "kernel 'rotate': rot.pk:2:29: error: ...", and a kernel named k in a file
# whose name holds a k was not named at all.
printf 'kernel rotate(field<f32> a,\n              field<i32, 1> counts) {\n    for (P in ivec3(0) .. ivec3(4)) { a[P] = 1.0; }\n}\n' >"$tmp/rot.pk"
expect 1 "rot.pk:2:29: error: kernel 'rotate': field parameter 'counts' of type field<i32, 1>" -- "$plume" compile "$tmp/rot.pk" --emit ir
grep -q "^$tmp/rot.pk:2:29" "$tmp/err" || { echo "FAIL: the lowering error does not start with its place: $(cat "$tmp/err")"; fails=$((fails+1)); }
# ...and shows the line with a caret under the place (column 29: 28 characters before it)
caret="$(printf '%28s^' '')"
grep -qxF '              field<i32, 1> counts) {' "$tmp/err" && grep -qxF "$caret" "$tmp/err" ||
  { echo "FAIL: the lowering error has no source line and caret: $(cat "$tmp/err")"; fails=$((fails+1)); }
printf 'kernel k(field<i32> counts) {\n    for (P in ivec3(0) .. ivec3(4)) { counts[P] = 1; }\n}\n' >"$tmp/kk.pk"
expect 1 "kk.pk:1:21: error: kernel 'k': field parameter 'counts'" -- "$plume" compile "$tmp/kk.pk" --emit llvm
expect 2 "unexpected argument 'extra'" -- "$plume" vdb info "$tmp/none.vdb" extra
# a kernel node whose code file is empty says so at its path
: >"$tmp/empty.pk"
printf '{"plume_scene": 1, "name": "e", "fields": [{"name": "q", "voxel_size": 0.1}], "nodes": [{"name": "k", "type": "org.plume.kernel", "params": {"code": {"file": "empty.pk"}, "rate": 0.5}}], "substep": ["k"]}\n' >"$tmp/emptypk.json"
expect 1 "emptypk.json: \$.nodes[0].params.code: kernel file $tmp/empty.pk is empty" -- "$plume" cook "$tmp/emptypk.json" --out "$tmp/emptypk"
# Code that compiles with warnings (an unused local: docs/language.md) lists its kernel and
# shows each warning once, at its place, with its caret
printf 'kernel w(field<f32> q) {\n    for (I in q) {\n        f32 unused = 1.0;\n        q[I] = 2.0;\n    }\n}\n' >"$tmp/w.pk"
expect 0 "w.pk:3:13: warning: unused variable 'unused'" -- "$plume" compile "$tmp/w.pk"
[ "$(grep -c "warning: unused variable" "$tmp/err")" = 1 ] && grep -q '^            \^' "$tmp/err" \
  && ! grep -q "plume: warning: .*warning:" "$tmp/err" && grep -q "^kernel w(" "$tmp/out" \
  || { echo "FAIL: compile with a warning: $(cat "$tmp/err")"; fails=$((fails+1)); }
# ... and so does a kernel node given that code, once however many frames it cooks
sed -e 's/q\[I\] = q\[I\] \* k + dt;/f32 spare = k; q[I] = q[I] * k + dt;/' "$bad/kernel_nodes.json" >"$tmp/kw.json"
grep -q "f32 spare" "$tmp/kw.json" || { echo "FAIL: kernel_nodes.json was not rewritten"; fails=$((fails+1)); }
expect 0 "warning: unused variable 'spare'" -- "$plume" cook "$tmp/kw.json" --out "$tmp/kw" --frames 1-2 --quiet
[ "$(grep -c "warning: unused variable 'spare'" "$tmp/err")" = 1 ] \
  || { echo "FAIL: kernel node warning, not once: $(cat "$tmp/err")"; fails=$((fails+1)); }
expect 2 "which file?" -- "$plume" compile
# every command answers --help with its usage on stdout and status 0
for cmd in "compile" "vdb" "vdb info" "vdb convert" "render" "cook" "nodes"; do
  expect 0 "" -- "$plume" $cmd --help
  grep -q "usage: plume ${cmd%% *}" "$tmp/out" || { echo "FAIL: plume $cmd --help: $(head -c 200 "$tmp/out")"; fails=$((fails+1)); }
done
expect 2 "--emit takes" -- "$plume" compile "$tmp/k.pk" --emit bytecode

# Listings past the front end need every compiler stage; a build without them says so.
"$plume" compile "$tmp/k.pk" --kernel scale --emit ir >"$tmp/ir.txt" 2>"$tmp/err"
if grep -q "lacks" "$tmp/err"; then
  echo "skip: IR/LLVM/asm/PTX listing checks: this build has no kernel stages ($(head -c 200 "$tmp/err"))"
else
  # the struct-for needs its lists made first, then runs with per-level SNode lookups
  grep -q '^# task scale#[0-9]* (listgen) as offloaded' "$tmp/ir.txt" \
    && grep -q '^# task scale#[0-9]* (struct_for) for the code generator' "$tmp/ir.txt" \
    && grep -q 'sn_lookup' "$tmp/ir.txt" && grep -q '^# kernel scale as lowered' "$tmp/ir.txt" \
    || { echo "FAIL: compile --emit ir: $(head -c 400 "$tmp/ir.txt")"; fails=$((fails+1)); }
  expect 0 "" -- "$plume" compile "$tmp/k.pk" --kernel scale --emit llvm
  grep -q 'define .*void @plm_task(' "$tmp/out" || { echo "FAIL: compile --emit llvm"; fails=$((fails+1)); }
  # Reductions into one-element fields from a parallel loop add up per chunk and meet the
  # shared element once, at the chunk's end: one atomic add and one compare-and-swap (float
  # min) in the whole task, where per-voxel atomics would appear in every copy of the loop.
  printf '%s\n' 'kernel red(field<f32> a, field<f32> b, field<f32, 0> sum, field<f32, 0> lo) {' \
    '    for (I in a) { sum[] += a[I] * b[I]; lo[] min= a[I]; } }' >"$tmp/red.pk"
  expect 0 "" -- "$plume" compile "$tmp/red.pk" --emit llvm
  [ "$(grep -c 'atomicrmw fadd' "$tmp/out")" = 1 ] && [ "$(grep -c 'cmpxchg' "$tmp/out")" = 1 ] \
    || { echo "FAIL: reductions not accumulated per chunk: $(grep -c 'atomicrmw fadd' "$tmp/out") atomic adds, $(grep -c cmpxchg "$tmp/out") CAS"; fails=$((fails+1)); }
  expect 0 "" -- "$plume" compile "$tmp/k.pk" --kernel scale --emit asm
  grep -q '^plm_task:' "$tmp/out" || { echo "FAIL: compile --emit asm"; fails=$((fails+1)); }
  expect 0 "" -- "$plume" compile "$tmp/k.pk" --kernel clear --target ptx --emit ptx -o "$tmp/clear.ptx"
  grep -q '\.entry plm_task' "$tmp/clear.ptx" || { echo "FAIL: compile --emit ptx"; fails=$((fails+1)); }
  ptxas=/usr/local/cuda/bin/ptxas
  if [ -x "$ptxas" ]; then
    "$ptxas" -arch=sm_80 -o "$tmp/clear.cubin" "$tmp/clear.ptx" 2>"$tmp/err" \
      || { echo "FAIL: ptxas rejects the PTX: $(head -c 400 "$tmp/err")"; fails=$((fails+1)); }
  else
    echo "skip: ptxas not found at $ptxas; PTX not assembled"
  fi
fi

# The CFL counts the velocity field's voxels: velocity 1 at voxel 1/32, 24 fps, cfl 1 takes
# ceil(32 / 24) = 2 substeps, also with a finer field that the solver never reads (it took 6,
# from the finest voxel of any field).
cat >"$tmp/cfl.json" <<'EOF'
{"plume_scene": 1, "name": "cfl", "frames": {"start": 1, "end": 1, "fps": 24},
 "substeps": {"min": 1, "max": 50, "cfl": 1.0, "velocity": "vel"},
 "fields": [{"name": "vel", "type": "vec3", "voxel_size": 0.03125},
            {"name": "aux", "type": "f32", "voxel_size": 0.0078125}],
 "nodes": [{"name": "push", "type": "org.plume.kernel",
            "params": {"code": "kernel k(field<vec3> v) { for (P in ivec3(0) .. ivec3(8)) { v[P] = vec3(1.0, 0.0, 0.0); } }"},
            "bind": {"v": "vel"}}],
 "init": ["push"], "substep": ["push"]}
EOF
expect 0 "frame 1/1 (1): " -- "$plume" cook "$tmp/cfl.json" --out "$tmp/cfl" --no-checkpoint
grep -q ", 2 substeps" "$tmp/err" || { echo "FAIL: CFL substeps with a finer unrelated field: $(cat "$tmp/err")"; fails=$((fails+1)); }

# A node name past 200 bytes is refused at its place: the node's scratch fields are named after
# it and were cut, so two long names with one prefix shared them (a fuzzer found it).
long=$(printf 'n%.0s' $(seq 1 250))
sed "s/\"name\": \"emit\"/\"name\": \"$long\"/; s/\"substep\": \[\"emit\"\]/\"substep\": [\"$long\"]/" "$tmp/nofile.json" >"$tmp/longname.json"
expect 1 "longname.json: \$.nodes[0]: node_create: node name 'nnnn" -- "$plume" cook "$tmp/longname.json" --out "$tmp/longname"
grep -q "has 250 bytes; at most 200" "$tmp/err" || { echo "FAIL: long node name: $(cat "$tmp/err")"; fails=$((fails+1)); }
# A kernel file that never ends (a fuzzer found it): it was read until memory ran out.
cat >"$tmp/devzero.json" <<'EOF'
{"plume_scene": 1, "name": "z", "frames": {"start": 1, "end": 1},
 "fields": [{"name": "density", "voxel_size": 0.1}],
 "nodes": [{"name": "k", "type": "org.plume.kernel", "params": {"code": {"file": "/dev/zero"}}}],
 "substep": ["k"]}
EOF
expect 1 "\$.nodes[0].params.code: kernel file /dev/zero holds more than 64 MiB" -- timeout 60 "$plume" cook "$tmp/devzero.json" --out "$tmp/devzero"

# Frames whose CFL condition asks for more substeps than substeps.max run at the max and say so:
# at once for the first, and at the end for the count (a fierce lift: 1e5; it ran on silently).
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
for n in s["nodes"]:
    if n["type"] == "org.plume.smoke.forces":
        n.setdefault("params", {})["temperature_lift"] = 1e5
json.dump(s, open(sys.argv[2], "w"))' "$bad/smoke_small.json" "$tmp/hot.json"
expect 0 "asks for" -- "$plume" cook "$tmp/hot.json" --frames 1-4 --out "$tmp/hot" --no-checkpoint --quiet --deterministic
grep -qE "frame 2: the velocity \(up to [0-9.e+]+\) asks for [0-9]+ substeps at cfl 2, more than substeps.max 4" "$tmp/err" \
  && grep -qE "plume: warning: 3 frames ran at substeps.max 4, fewer substeps than the CFL condition asked for" "$tmp/err" \
  || { echo "FAIL: no CFL warning: $(cat "$tmp/err")"; fails=$((fails+1)); }

# The summary counts the files this run wrote, not an earlier bake's left in the folder, in
# words that agree with the numbers ("cooked 1 frames ... (3 files)" before)
expect 0 "cooked 3 frames in" -- "$plume" cook "$bad/kernel_nodes.json" --out "$tmp/count" --frames 1-3
expect 0 "" -- "$plume" cook "$bad/kernel_nodes.json" --out "$tmp/count" --frames 1-1 --threads 1
grep -qE "cooked 1 frame in [0-9.]+ s; output in $tmp/count/ \(1 file\)" "$tmp/err" && grep -qF "(1 thread)" "$tmp/err" \
  || { echo "FAIL: the summary of a one-frame cook: $(cat "$tmp/err")"; fails=$((fails+1)); }

# forces.up is a direction: [0, 0.5, 0] gives the bytes [0, 1, 0] gives (it halved buoyancy), and
# [0, 0, 0] is refused at its node when the scene is read (buoyancy was silently off)
for up in "0, 1, 0" "0, 0.5, 0" "0, 0, 0"; do
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
for n in s["nodes"]:
    if n["type"] == "org.plume.smoke.forces":
        n.setdefault("params", {})["up"] = [float(x) for x in sys.argv[3].split(",")]
json.dump(s, open(sys.argv[2], "w"))' "$bad/smoke_small.json" "$tmp/up.json" "$up"
  d="$tmp/up_$(echo "$up" | tr -d ', .')"
  "$plume" cook "$tmp/up.json" --frames 1-2 --out "$d" --no-checkpoint --deterministic --quiet 2>"$tmp/err"; echo $? >"$d.rc"
done
[ "$(cat "$tmp/up_010.rc")" = 0 ] && [ "$(cat "$tmp/up_0050.rc")" = 0 ] && cmp -s "$tmp/up_010/smoke_0002.vdb" "$tmp/up_0050/smoke_0002.vdb" \
  || { echo "FAIL: forces.up [0, 0.5, 0] differs from [0, 1, 0]"; fails=$((fails+1)); }
[ "$(cat "$tmp/up_000.rc")" = 1 ] && grep -qF "node 'forces': 'up' (0, 0, 0) has no direction" "$tmp/err" \
  || { echo "FAIL: forces.up [0, 0, 0]: $(cat "$tmp/err")"; fails=$((fails+1)); }

# A velocity holding NaN is said to have blown up (the CFL's max |v| skipped NaN voxels, so
# nothing was said and the frame ran at substeps.min)
cat >"$tmp/nanvel.json" <<'EOF'
{"plume_scene": 1, "name": "nanvel", "frames": {"start": 1, "end": 2},
 "substeps": {"min": 1, "max": 4, "cfl": 1.0, "velocity": "vel"},
 "fields": [{"name": "vel", "type": "vec3", "voxel_size": 0.1}],
 "nodes": [{"name": "bad", "type": "org.plume.kernel", "params": {"code": "kernel bad(field<vec3> vel, f32 z) { for (P in ivec3(0) .. ivec3(8)) { vel[P] = vec3(1.0); } vel[ivec3(3)] = vec3(z / z); }", "z": 0.0}},
           {"name": "calm", "type": "org.plume.kernel", "params": {"code": "kernel calm(field<vec3> vel) { for (I in vel) { vel[I] += vec3(0.0); } }"}}],
 "init": ["bad"], "substep": ["calm"]}
EOF
expect 0 "field 'vel' holds NaN velocities: the simulation has blown up" -- "$plume" cook "$tmp/nanvel.json" --out "$tmp/nanvel" --no-checkpoint --quiet

if [ "$fails" -ne 0 ]; then echo "$fails CLI check(s) failed"; exit 1; fi
echo "all CLI checks passed"
