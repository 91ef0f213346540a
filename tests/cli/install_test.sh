#!/usr/bin/env bash
# cmake --install into a temporary prefix; a host built against the installed header alone
# (found through plume.pc) loads the installed plugin; the installed CLI finds the plugin.
set -u
build=$1; abitests=$2; extra=${3:-}  # sanitizer flags when the plugin was built with them
prefix=$(mktemp -d); trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install"
[ -f "$prefix/include/plume/plume.h" ] || fail "header not installed"
pc=$(find "$prefix" -name plume.pc | head -1); [ -n "$pc" ] || fail "plume.pc not installed"
lib=$(find "$prefix" -name libplume.so | head -1); [ -n "$lib" ] || fail "libplume.so not installed"
[ -x "$prefix/bin/plume" ] || fail "plume not installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
cflags=$(pkg-config --cflags plume) || fail "pkg-config --cflags plume"
plugin=$(pkg-config --variable=plugin plume)
[ "$(realpath "$plugin")" = "$(realpath "$lib")" ] || fail "plume.pc plugin=$plugin, installed at $lib"
# Only the installed include folder: no project source on the include path.
cc -std=c99 -Wall -Wextra -Werror $extra $cflags -I"$abitests" -o "$prefix/host" "$abitests/abi_host_test.c" \
   $(pkg-config --libs plume) -lpthread -lm || fail "a host does not build against the installed header"
"$prefix/host" "$plugin" >/dev/null || fail "host built against the installed header failed"
out=$(env -u PLUME_PLUGIN "$prefix/bin/plume" nodes) || fail "installed plume cannot find its plugin"
grep -q org.plume.source.sphere <<<"$out" || fail "installed plume nodes lists no sphere source"
echo "install test passed"
