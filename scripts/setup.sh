#!/usr/bin/env bash
# Installs the Debian 12 packages Plume needs (only the missing ones) and builds it.
#   scripts/setup.sh [BUILD_DIR] [extra cmake args...]
# Why each package is needed: see README.md, "Dependencies".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true

pkgs=(build-essential cmake pkg-config git python3
      llvm-16-dev clang-16 libclang-rt-16-dev
      libopenvdb-dev libboost-dev libtbb-dev libblosc-dev zlib1g-dev libopenvdb-tools python3-openvdb
      libjansson-dev libpng-dev valgrind)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "plume setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$jobs"
