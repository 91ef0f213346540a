#!/usr/bin/env bash
# README command 2: set up, build, and run the test suite with ctest.
#   scripts/test.sh              the normal build (build/)
#   scripts/test.sh --sanitize   an ASan+UBSan build (build-asan/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--sanitize" ]; then
  build=$root/build-asan
  "$root/scripts/setup.sh" "$build" -DPLUME_SANITIZE=ON
  # LLVM and OpenVDB are not instrumented; known leaks inside them are listed in tests/lsan.supp.
  # intercept_tls_get_addr=0: GCC 12's sanitizer runtime takes a dynamic TLS block that happens
  # to start 16 bytes into a page for a glibc-2.19 header and hands LeakSanitizer a bogus range,
  # and its tracer then crashes at exit ("Tracer caught signal 11", "DTLS n at 0x24-..."), by
  # chance of where malloc put the block (later sanitizer runtimes no longer guess).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}
else
  build=$root/build
  "$root/scripts/setup.sh" "$build"
fi
ctest --test-dir "$build" --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
