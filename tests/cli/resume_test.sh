#!/usr/bin/env bash
# plume cook --deterministic and --resume, end to end on scenes/resume_kernels.json: a 128^3
# box relaxed each substep towards a float += reduction over the whole box into a 0-D field
# (parallel atomics: without deterministic mode the bits vary run to run).
#  - the reference is an uninterrupted deterministic cook of frames 1-3 on 2 threads;
#  - a deterministic cook of frames 1-2 on 1 thread gives the same bytes for frames 1-2;
#  - resuming it with --resume --frames 1-3 on 2 threads says which frame it resumes from and
#    gives frame 3 byte-identical to the reference;
#  - a checkpoint of another scene, of other options, a truncated one and a .vdb that is not
#    a checkpoint are refused with exit status 1 and a message naming why, and nothing crashes;
#  - without a checkpoint --resume cooks from the first frame; after the last frame it has
#    nothing to do;
#  - a frame file that cannot be written stops the cook, keeps the previous frame's checkpoint
#    and is cooked again by --resume, with the files written while the next frame cooks and
#    with --sync-writes;
#  - Ctrl-C (SIGINT) during a long cook leaves a checkpoint of the last complete frame, whose
#    frame file exists, no temporary file behind, and --resume continues after it;
#  - --resume over a bake whose earlier frame files are missing or cut short is refused.
set -u
plume=$1; scenes=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
scene=$scenes/resume_kernels.json
ckpt=.plume_checkpoint.vdb

"$plume" cook "$scene" --out "$tmp/ref" --threads 2 --deterministic --quiet 2>"$tmp/err" \
  || fail "reference cook: $(cat "$tmp/err")"
[ -s "$tmp/ref/$ckpt" ] || fail "no checkpoint beside the frames after a complete cook"
# The UUID OpenVDB puts in the header (36 characters at byte 21) is replaced by one made from the
# file's content (plugin/vdb_stable.c): a version-8 UUID, different for frames that differ.
uuid() { dd if="$1" bs=1 skip=21 count=36 2>/dev/null; }
u1=$(uuid "$tmp/ref/r_0001.vdb"); u2=$(uuid "$tmp/ref/r_0002.vdb")
echo "$u1" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' \
  || fail "frame 1's UUID is not a content-derived (version 8) one: '$u1'"
cmp -s "$tmp/ref/r_0001.vdb" "$tmp/ref/r_0002.vdb" && fail "frames 1 and 2 have the same bytes"
[ "$u1" != "$u2" ] || fail "frames 1 and 2 differ but share the UUID $u1"

"$plume" cook "$scene" --out "$tmp/res" --threads 1 --deterministic --frames 1-2 --quiet 2>"$tmp/err" \
  || fail "cook of frames 1-2: $(cat "$tmp/err")"
for f in 1 2; do
  cmp -s "$tmp/ref/r_000$f.vdb" "$tmp/res/r_000$f.vdb" \
    || fail "deterministic cooks on 2 and 1 threads differ at frame $f"
done
[ ! -e "$tmp/res/r_0003.vdb" ] || fail "frame 3 written by a cook of frames 1-2"

"$plume" cook "$scene" --out "$tmp/res" --threads 2 --deterministic --frames 1-3 --resume 2>"$tmp/err" \
  || fail "resume: $(cat "$tmp/err")"
grep -q "resuming from frame 3 (checkpoint of frame 2" "$tmp/err" || fail "resume does not say where it resumes: $(cat "$tmp/err")"
grep -q "frames 3-3" "$tmp/err" || fail "resume did not cook frame 3 alone: $(cat "$tmp/err")"
cmp -s "$tmp/ref/r_0003.vdb" "$tmp/res/r_0003.vdb" || fail "frame 3 after resume differs from the uninterrupted cook"
cmp -s "$tmp/ref/$ckpt" "$tmp/res/$ckpt" || fail "the checkpoints of frame 3 differ (resumed vs uninterrupted)"

# --resume with a hole in the bake's frames before the checkpoint (a frame deleted, one cut to
# a few bytes): refused with exit status 1 naming the files; it resumed and ended with status
# 0, a sequence with holes for whoever reads it.
rm -rf "$tmp/gap"; cp -r "$tmp/res" "$tmp/gap"
rm "$tmp/gap/r_0001.vdb"; head -c 5 "$tmp/res/r_0002.vdb" >"$tmp/gap/r_0002.vdb"
"$plume" cook "$scene" --out "$tmp/gap" --threads 2 --deterministic --frames 1-4 --resume --quiet 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -qF "the bake's frames before the checkpoint (1-3) are not all there: $tmp/gap/r_0001.vdb (missing), $tmp/gap/r_0002.vdb (damaged: no VDB header); cook again without --resume" "$tmp/err" \
  || fail "resume over missing frames: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/gap/r_0004.vdb" ] || fail "a refused resume wrote frame 4"

# A frame file that cannot be written (a folder in its place): its frame's checkpoint is not
# written, the cook stops with exit status 1 naming the file, no later frame is left behind
# (the files are written while the next frame cooks, and the writes after a failed one are
# dropped), and --resume starts again at that frame. Both ways of writing, as each host can.
for how in deferred --sync-writes; do
  w=""; [ "$how" = deferred ] || w=$how
  rm -rf "$tmp/wf"; mkdir -p "$tmp/wf/r_0002.vdb"
  "$plume" cook "$scene" --out "$tmp/wf" --threads 2 --deterministic --frames 1-3 $w --stats "$tmp/wf.json" 2>"$tmp/err"; rc=$?
  [ "$rc" = 1 ] && grep -q "r_0002.vdb" "$tmp/err" || fail "$how: unwritable frame 2: exit $rc: $(cat "$tmp/err")"
  # the statistics list frame 1 alone (frame 2 was counted though its file failed), and the
  # message names frame 2 once, not the frame being cooked when the failure came back
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [f["frame"] for f in d["frames"]]==[1] and d["status"]=="failed", d' \
    "$tmp/wf.json" 2>"$tmp/py" || fail "$how: statistics of the failed write: $(cat "$tmp/py")"
  grep -q "frame 3: node" "$tmp/err" && fail "$how: the failure is put under frame 3: $(cat "$tmp/err")"
  [ ! -e "$tmp/wf/r_0003.vdb" ] || fail "$how: frame 3 written after frame 2 failed"
  cmp -s "$tmp/ref/r_0001.vdb" "$tmp/wf/r_0001.vdb" || fail "$how: frame 1 before the failure differs"
  cf=$("$plume" vdb info "$tmp/wf/$ckpt" 2>/dev/null | sed -n 's/^ *plume_frame = //p')
  [ "$cf" = 1 ] || fail "$how: the checkpoint after frame 2 failed is of frame '$cf', not 1"
  rmdir "$tmp/wf/r_0002.vdb"
  "$plume" cook "$scene" --out "$tmp/wf" --threads 2 --deterministic --frames 1-3 --resume $w 2>"$tmp/err" \
    && grep -q "resuming from frame 2 (checkpoint of frame 1" "$tmp/err" || fail "$how: resume after the failed frame: $(cat "$tmp/err")"
  for f in 2 3; do
    cmp -s "$tmp/ref/r_000$f.vdb" "$tmp/wf/r_000$f.vdb" || fail "$how: frame $f after the resume differs from the reference"
  done
done

# A checkpoint that cannot be written (a folder in its place): a warning per frame, the frames
# complete with status 0, and the end of the log and the statistics say no checkpoint is there
# (a farm audit found nothing marked it).
rm -rf "$tmp/big"; mkdir -p "$tmp/big/$ckpt/x"
"$plume" cook "$scenes/smoke_small.json" --out "$tmp/big" --frames 1-2 --quiet --stats "$tmp/big.json" 2>"$tmp/err"; rc=$?
[ "$rc" = 0 ] && [ -s "$tmp/big/smoke_0002.vdb" ] && [ -d "$tmp/big/$ckpt" ] || fail "unwritable checkpoint: exit $rc: $(cat "$tmp/err"; ls -a "$tmp/big")"
grep -q "2 checkpoints could not be written; this run left none in" "$tmp/err" || fail "unwritable checkpoint: no summary: $(cat "$tmp/err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="complete" and d["checkpoint_failures"]==2 and all("checkpoint_error" in f for f in d["frames"]), d' \
  "$tmp/big.json" 2>"$tmp/py" || fail "unwritable checkpoint: statistics: $(cat "$tmp/py")"

# everything done: nothing to cook, exit 0
"$plume" cook "$scene" --out "$tmp/res" --deterministic --resume 2>"$tmp/err" || fail "resume of a finished bake: $(cat "$tmp/err")"
grep -q "nothing to cook" "$tmp/err" || fail "finished bake: $(cat "$tmp/err")"

# other options than the checkpoint's: refused, naming the difference
"$plume" cook "$scene" --out "$tmp/res" --frames 1-4 --resume 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "is of another bake: deterministic differs" "$tmp/err" \
  || fail "a non-deterministic resume of a deterministic bake: exit $rc: $(cat "$tmp/err")"
# another scene's checkpoint: refused
cp "$tmp/ref/$ckpt" "$tmp/other.vdb"
mkdir -p "$tmp/k" && cp "$tmp/other.vdb" "$tmp/k/$ckpt"
"$plume" cook "$scenes/kernel_nodes.json" --out "$tmp/k" --deterministic --resume 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "is of another bake: scene differs" "$tmp/err" \
  || fail "another scene's checkpoint: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/k/k_0001.vdb" ] || fail "a refused resume cooked frames"
# An export in the init stage writes its file for the first frame only: --resume does not look
# for it at later frames (it refused: "i_0002.vdb (missing)"), but does at the first.
/usr/bin/python3 - "$scene" "$tmp/initout.json" <<'PY' || fail "could not write the init-export scene"
import json, sys
s = json.load(open(sys.argv[1]))
exp = [n for n in s["nodes"] if n["type"] == "org.plume.vdb.export"][0]
s["nodes"].append(dict(exp, name="at_init", params=dict(exp["params"], file="i_####.vdb")))
s["init"] = s.get("init", []) + ["at_init"]
json.dump(s, open(sys.argv[2], "w"))
PY
"$plume" cook "$tmp/initout.json" --out "$tmp/io" --deterministic --frames 1-2 --quiet 2>"$tmp/err" || fail "init export: $(cat "$tmp/err")"
"$plume" cook "$tmp/initout.json" --out "$tmp/io" --deterministic --frames 1-3 --resume --quiet 2>"$tmp/err" \
  || fail "resume with an init export: $(cat "$tmp/err")"
rm "$tmp/io/i_0001.vdb"
"$plume" cook "$tmp/initout.json" --out "$tmp/io" --deterministic --frames 1-4 --resume --quiet 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -qF "$tmp/io/i_0001.vdb (missing)" "$tmp/err" || fail "resume without the init export's file: exit $rc: $(cat "$tmp/err")"
# The bake's key is what the scene says, not how it is written: re-indented, keys reordered and a
# new description, it resumes (it was refused as "scene differs"); a kernel file's change is
# named apart ("code differs"), a change of a value is "scene differs".
/usr/bin/python3 - "$scene" "$tmp/kf" <<'PY' || fail "could not write the rewritten scenes"
import json, os, sys
s = json.load(open(sys.argv[1]))
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
s["description"] = "the same bake, written again"
json.dump(dict(reversed(list(s.items()))), open(out + "/pretty.json", "w"), indent=7)
# the first kernel node's code moved to a file
for n in s["nodes"]:
    if n["type"] == "org.plume.kernel" and isinstance(n["params"]["code"], str):
        open(out + "/k.pk", "w").write(n["params"]["code"])
        n["params"]["code"] = {"file": "k.pk"}
        break
json.dump(s, open(out + "/file.json", "w"))
PY
"$plume" cook "$scene" --out "$tmp/kf/o" --deterministic --frames 1-1 --quiet 2>"$tmp/err" || fail "key scene: $(cat "$tmp/err")"
"$plume" cook "$tmp/kf/pretty.json" --out "$tmp/kf/o" --deterministic --frames 1-2 --resume --quiet 2>"$tmp/err" \
  || fail "a re-indented scene with another description does not resume: $(cat "$tmp/err")"
"$plume" cook "$tmp/kf/file.json" --out "$tmp/kf/f" --deterministic --frames 1-1 --quiet 2>"$tmp/err" || fail "key scene with a kernel file: $(cat "$tmp/err")"
echo "// a comment" >>"$tmp/kf/k.pk"
"$plume" cook "$tmp/kf/file.json" --out "$tmp/kf/f" --deterministic --frames 1-2 --resume 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "is of another bake: code differs;" "$tmp/err" || fail "a changed kernel file: exit $rc: $(cat "$tmp/err")"
# a truncated checkpoint: a clear error, no crash
head -c 100000 "$tmp/other.vdb" >"$tmp/res/$ckpt"
"$plume" cook "$scene" --out "$tmp/res" --deterministic --frames 1-4 --resume 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "cannot be read: .*truncated or damaged" "$tmp/err" \
  || fail "truncated checkpoint: exit $rc: $(cat "$tmp/err")"
# a .vdb that is not a checkpoint
cp "$tmp/ref/r_0001.vdb" "$tmp/res/$ckpt"
"$plume" cook "$scene" --out "$tmp/res" --deterministic --frames 1-4 --resume 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "not a Plume checkpoint" "$tmp/err" || fail "frame file as checkpoint: exit $rc: $(cat "$tmp/err")"
# no checkpoint at all: cooks from the first frame
"$plume" cook "$scene" --out "$tmp/fresh" --deterministic --frames 1-1 --resume 2>"$tmp/err" \
  && grep -q "no checkpoint .*; cooking from frame 1" "$tmp/err" || fail "resume without a checkpoint: $(cat "$tmp/err")"
cmp -s "$tmp/ref/r_0001.vdb" "$tmp/fresh/r_0001.vdb" || fail "frame 1 of a fresh --resume cook differs"
# --no-checkpoint writes none
"$plume" cook "$scene" --out "$tmp/none" --frames 1-1 --no-checkpoint --quiet 2>"$tmp/err" || fail "--no-checkpoint: $(cat "$tmp/err")"
[ ! -e "$tmp/none/$ckpt" ] || fail "--no-checkpoint wrote a checkpoint"

# Ctrl-C mid-cook: the last complete frame's checkpoint stays whole and resumable.
"$plume" cook "$scenes/slow.json" --out "$tmp/slow" --threads 1 >"$tmp/slow.out" 2>"$tmp/slow.err" &
pid=$!
for _ in $(seq 200); do [ -e "$tmp/slow/$ckpt" ] && break; sleep 0.1; done
sleep 0.3
# twice, 20 ms apart, as timeout(1) signals the process and then its group: one request
kill -INT "$pid" 2>/dev/null
sleep 0.02
kill -INT "$pid" 2>/dev/null
wait "$pid"; rc=$?
if [ ! -e "$tmp/slow/$ckpt" ]; then
  fail "no checkpoint within 20 s of starting the slow cook (exit $rc): $(head -c 300 "$tmp/slow.err")"
else
  # 130 with the message: cancelled, not killed by the second signal (that prints nothing)
  [ "$rc" = 130 ] && grep -q "cancelled after" "$tmp/slow.err" || fail "Ctrl-C: exit $rc: $(tail -c 300 "$tmp/slow.err")"
  grep -q "cancelling at the next safe point" "$tmp/slow.err" || fail "Ctrl-C was not acknowledged at once: $(tail -c 300 "$tmp/slow.err")"
  ls -a "$tmp/slow" | grep -q "tmp" && fail "temporary files left after Ctrl-C: $(ls -a "$tmp/slow")"
  cf=$("$plume" vdb info "$tmp/slow/$ckpt" 2>"$tmp/err" | sed -n 's/^ *plume_frame = //p')
  [ -n "$cf" ] || fail "the checkpoint after Ctrl-C cannot be read: $(cat "$tmp/err")"
  if [ -n "$cf" ]; then
    [ -e "$tmp/slow/$(printf 'slow_%04d.vdb' "$cf")" ] || fail "checkpoint of frame $cf but no such frame file"
    next=$((cf + 1))
    "$plume" cook "$scenes/slow.json" --out "$tmp/slow" --frames "1-$next" --resume 2>"$tmp/err" \
      && grep -q "resuming from frame $next " "$tmp/err" || fail "resume after Ctrl-C: $(cat "$tmp/err")"
  fi
fi

# SIGTERM and SIGHUP (a closed session) cancel the same way, each with 128 + its number; a
# log reader that goes away (SIGPIPE on stderr) does not stop the cook (a runner that starts
# tests with SIGPIPE ignored would pass this without the fix: bash cannot undo an inherited
# ignore).
for sig in TERM:143 HUP:129; do
  rm -rf "$tmp/sig"
  "$plume" cook "$scenes/slow.json" --out "$tmp/sig" --threads 1 --quiet --stats "$tmp/sig.json" 2>"$tmp/sig.err" &
  pid=$!
  for _ in $(seq 600); do [ -e "$tmp/sig/$ckpt" ] && break; sleep 0.1; done
  [ -e "$tmp/sig/$ckpt" ] || fail "SIG${sig%:*}: no checkpoint within 60 s of starting the slow cook"
  kill -"${sig%:*}" "$pid"; wait "$pid"; rc=$?
  [ "$rc" = "${sig#*:}" ] && grep -q "cancelled after" "$tmp/sig.err" || fail "SIG${sig%:*}: exit $rc: $(tail -c 300 "$tmp/sig.err")"
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["status"]=="cancelled"' "$tmp/sig.json" 2>/dev/null \
    || fail "SIG${sig%:*}: statistics not 'cancelled'"
done
rm -rf "$tmp/pipe"
"$plume" cook "$scenes/smoke_small.json" --out "$tmp/pipe" --frames 1-4 --no-checkpoint 2>&1 | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && [ -s "$tmp/pipe/smoke_0004.vdb" ] && ! ls -a "$tmp/pipe" | grep -q tmp \
  || fail "cook whose log reader went away: exit $rc: $(ls -a "$tmp/pipe")"

# One cook per output folder: a second one is refused while the first runs, naming it, and the
# lock dies with its holder (kill -9 leaves none behind).
"$plume" cook "$scenes/slow.json" --out "$tmp/lock" --threads 1 --quiet 2>/dev/null &
pid=$!
for _ in $(seq 200); do [ -e "$tmp/lock/$ckpt" ] && break; sleep 0.1; done
"$plume" cook "$scenes/slow.json" --out "$tmp/lock" --frames 1-1 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "another cook is writing to $tmp/lock (pid $pid on " "$tmp/err" \
  || fail "second cook into one folder: exit $rc: $(cat "$tmp/err")"
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
"$plume" cook "$scenes/slow.json" --out "$tmp/lock" --frames 1-1 --quiet 2>"$tmp/err" \
  || fail "cook after the first was killed: $(cat "$tmp/err")"

# A checkpoint changed after it was written (four bytes in its voxel data, which OpenVDB reads
# without noticing) is refused by its content hash, not resumed from.
cp -r "$tmp/ref" "$tmp/dmg"
size=$(stat -c %s "$tmp/dmg/$ckpt")
printf '\x00\x00\x80\x3f' | dd of="$tmp/dmg/$ckpt" bs=1 seek=$((size * 3 / 4)) conv=notrunc 2>/dev/null
"$plume" cook "$scene" --out "$tmp/dmg" --deterministic --frames 1-4 --resume 2>"$tmp/err"; rc=$?
[ "$rc" = 1 ] && grep -q "is damaged" "$tmp/err" || fail "damaged checkpoint: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/dmg/r_0004.vdb" ] || fail "a damaged checkpoint was resumed from"

# Every run leaves its own statistics: a refused resume does not leave the last run's "complete".
"$plume" cook "$scene" --out "$tmp/st" --frames 1-1 --quiet --stats "$tmp/st.json" 2>"$tmp/err" || fail "stats cook: $(cat "$tmp/err")"
"$plume" cook "$scene" --out "$tmp/st" --frames 1-2 --mode eager --resume --quiet --stats "$tmp/st.json" 2>"$tmp/err"; rc=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="failed" and "another bake" in d["error"], d' \
  "$tmp/st.json" 2>"$tmp/py" || fail "stats after a refused resume (exit $rc): $(cat "$tmp/py")"
"$plume" cook "$scene" --out "$tmp/st" --frames 1-1 --resume --quiet --stats "$tmp/st.json" 2>"$tmp/err" || fail "nothing to cook: $(cat "$tmp/err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="complete" and d["frames"]==[] and d["first_frame"]==2, d' \
  "$tmp/st.json" 2>"$tmp/py" || fail "stats of a resume with nothing to cook: $(cat "$tmp/py")"

# A lock that cannot be made (a folder in its place) and a plugin that does not load: failed
# runs whose statistics were not written, so the last run's "complete" stood (a farm audit).
"$plume" cook "$scene" --out "$tmp/st" --frames 1-1 --quiet --stats "$tmp/st.json" 2>"$tmp/err" || fail "stats cook: $(cat "$tmp/err")"
mkdir -p "$tmp/lockdir/.plume_lock"
"$plume" cook "$scene" --out "$tmp/lockdir" --frames 1-1 --quiet --stats "$tmp/st.json" 2>"$tmp/err"; rc=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="failed" and "cannot create the lock" in d["error"], d' \
  "$tmp/st.json" 2>"$tmp/py" && [ "$rc" = 1 ] || fail "stats when the lock cannot be made (exit $rc): $(cat "$tmp/py" "$tmp/err")"
"$plume" cook "$scene" --out "$tmp/st" --frames 1-1 --quiet --stats "$tmp/st.json" 2>"$tmp/err" || fail "stats cook: $(cat "$tmp/err")"
"$plume" --plugin "$tmp/none.so" cook "$scene" --out "$tmp/st" --frames 1-1 --quiet --stats "$tmp/st.json" 2>"$tmp/err"; rc=$?
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="failed", d' \
  "$tmp/st.json" 2>"$tmp/py" && [ "$rc" = 1 ] || fail "stats when the plugin does not load (exit $rc): $(cat "$tmp/py" "$tmp/err")"

echo '{"plume_scene": 1, "name": "broken",' >"$tmp/broken.json"
"$plume" cook "$tmp/broken.json" --out "$tmp/st" --quiet --stats "$tmp/st.json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="failed" and "broken.json" in d["error"], d' \
  "$tmp/st.json" 2>"$tmp/py" || fail "stats of a scene that does not load: $(cat "$tmp/py")"

# Frame numbers past what a frame loop can count are a usage error, not an endless cook.
for fr in 99999999999999999999 1-99999999999999999999 9223372036854775806-9223372036854775807 " 1-2" +1-2; do
  timeout 20 "$plume" cook "$scene" --out "$tmp/fr" --frames "$fr" 2>"$tmp/err"; rc=$?
  [ "$rc" = 2 ] && grep -q "\-\-frames must look like" "$tmp/err" || fail "--frames '$fr': exit $rc: $(head -c 300 "$tmp/err")"
done

# Temporary files of writes a SIGKILL cut short (their process gone) are removed by the next
# cook of the folder; a live process's are kept.
sleep 0 & dead=$!; wait $dead
touch "$tmp/st/..r_0001.vdb.tmp$dead.3.tmp-$dead-7" "$tmp/st/.$ckpt.tmp$dead.2" "$tmp/st/.r_0002.vdb.tmp$$.1" \
  "$tmp/st/.notes.tmp-$dead-06"
"$plume" cook "$scene" --out "$tmp/st" --frames 1-1 2>"$tmp/err" || fail "cook over stale temporaries: $(cat "$tmp/err")"
grep -q "removed 2 temporary file(s)" "$tmp/err" || fail "stale temporaries: $(cat "$tmp/err"; ls -a "$tmp/st")"
[ -z "$(ls -a "$tmp/st" | grep "tmp$dead")" ] || fail "stale temporaries left: $(ls -a "$tmp/st")"
[ -e "$tmp/st/.r_0002.vdb.tmp$$.1" ] || fail "a live process's temporary file was removed"
[ -e "$tmp/st/.notes.tmp-$dead-06" ] || fail "a hidden file that is not a .vdb's temporary was removed"

# The output folder removed under a running cook: exit 1 naming it, status failed, rather than
# a new folder and a "complete" bake missing its first frames.
timeout 300 "$plume" cook "$scenes/slow.json" --out "$tmp/gone" --threads 1 --quiet --stats "$tmp/gone.json" 2>"$tmp/err" &
pid=$!
for _ in $(seq 600); do [ -e "$tmp/gone/$ckpt" ] && break; sleep 0.1; done
if [ ! -e "$tmp/gone/$ckpt" ]; then
  kill "$pid" 2>/dev/null; wait "$pid"
  fail "folder removal: no checkpoint within 60 s of starting the slow cook: $(head -c 300 "$tmp/err")"
else
  # moved away first, at once: rm -rf alone removes entry by entry, and the export, finding
  # its temporary file gone before the folder, may report that (also exit 1) instead
  mv "$tmp/gone" "$tmp/gone.moved" && rm -rf "$tmp/gone.moved"
  wait "$pid"; rc=$?
  [ "$rc" = 1 ] && grep -q "was removed or replaced during the cook" "$tmp/err" \
    || fail "output folder removed mid-cook: exit $rc: $(tail -c 300 "$tmp/err")"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="failed", d["status"]' "$tmp/gone.json" 2>"$tmp/py" \
    || fail "stats after the folder went: $(cat "$tmp/py")"
  [ ! -e "$tmp/gone/$ckpt" ] || fail "a checkpoint was left in the recreated folder: a --resume would skip the lost frames"
  # nor the frames still queued when it went: the writer made the folder again for them
  [ -z "$(ls -A "$tmp/gone" 2>/dev/null)" ] || fail "the recreated folder holds: $(ls -A "$tmp/gone")"
fi

# A scene's name makes the default folder out/<name>: it must stay one folder inside out/.
for nm in '"../../esc"' '""' '".."' '"a/b"'; do
  sed "s|\"name\": \"resume_kernels\"|\"name\": $nm|" "$scene" > "$tmp/named.json"
  grep -qF "\"name\": $nm" "$tmp/named.json" || fail "the name $nm was not put into the test scene"
  (cd "$tmp" && "$plume" cook named.json --frames 1-1 --quiet 2>"$tmp/err"); rc=$?
  [ "$rc" = 1 ] && grep -q 'named.json: \$.name:' "$tmp/err" \
    || fail "scene name $nm: exit $rc: $(head -c 300 "$tmp/err")"
done
[ ! -e "$tmp/../esc" ] && [ ! -e "$tmp/out" ] || fail "a refused scene name still wrote: $(ls "$tmp/.." "$tmp/out" 2>&1 | head)"

# --stats must not replace the scene or a volume, and an empty value is a usage error.
cp "$scene" "$tmp/self.json"
"$plume" cook "$tmp/self.json" --out "$tmp/self" --frames 1-1 --stats "$tmp/self.json" 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "is the scene itself" "$tmp/err" && cmp -s "$scene" "$tmp/self.json" \
  || fail "--stats = the scene: exit $rc: $(head -c 300 "$tmp/err")"
"$plume" cook "$scene" --out "$tmp/self" --frames 1-1 --stats "$tmp/self/r_0001.vdb" 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "names a .vdb file" "$tmp/err" || fail "--stats x.vdb: exit $rc: $(head -c 300 "$tmp/err")"
for opt in --stats --out --threads --frames --memory-budget; do
  "$plume" cook "$scene" --out "$tmp/self" $opt "" 2>"$tmp/err"; rc=$?
  [ "$rc" = 2 ] && grep -q -- "$opt needs a value" "$tmp/err" || fail "$opt '': exit $rc: $(head -c 300 "$tmp/err")"
done

if [ "$fails" -ne 0 ]; then echo "$fails resume/determinism check(s) failed"; exit 1; fi
echo "resume and determinism checks passed"
