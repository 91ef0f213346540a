#!/usr/bin/env bash
# README command 1: set up, build, and cook the default scene (CPU) into out/smoke_plume/.
# Extra arguments go to `plume cook`, e.g. --frames 1-12 or --device auto.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build" >&2
cd "$root"
exec build/bin/plume cook scenes/smoke_plume.json "$@"
