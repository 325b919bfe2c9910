#!/usr/bin/env bash
# Builds kokoro-server's libFuzzer target (apps/kokoro_server/fuzz/fuzz_server.cpp: HTTP requests, request
# bodies, Wyoming framing, sentence cuts) with clang (AddressSanitizer + UBSan) and runs it for a bounded
# time, seeded from the kept corpus tests/data/fuzz/server/ (never written to: new inputs go to a temp
# directory, crashes to fuzz-server-artifacts/ in the build tree).
#   scripts/fuzz-server.sh [SECONDS]      (default 60)
# Environment: KOKORO_FUZZ_BUILD (default <repo>/build-fuzz-server), KOKORO_FUZZ_JOBS (default 2).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TO_RUN="${1:-60}"
BUILD="${KOKORO_FUZZ_BUILD:-$ROOT/build-fuzz-server}"
JOBS="${KOKORO_FUZZ_JOBS:-2}"
command -v clang++ >/dev/null || { echo "fuzz-server: clang++ not found (scripts/install-deps.sh installs it)"; exit 1; }

mkdir -p "$BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DKOKORO_SANITIZE=address,undefined -DKOKORO_FUZZ=ON \
  -DKOKORO_BUILD_TESTS=OFF -DKOKORO_BUILD_BENCH=OFF -DKOKORO_KERNEL_TEST_VARIANTS= >"$BUILD/configure.log" 2>&1 \
  || { cat "$BUILD/configure.log"; exit 1; }
cmake --build "$BUILD" --target fuzz_server -j "$JOBS"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$BUILD/fuzz-server-artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"
echo "fuzz-server: running for ${SECONDS_TO_RUN}s"
set +e
"$BUILD/bin/fuzz_server" -max_total_time="$SECONDS_TO_RUN" -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-server-artifacts/" \
  "$work" "$ROOT/tests/data/fuzz/server" >"$BUILD/fuzz-server.log" 2>&1
# libFuzzer exits non-zero on a crash, leak, timeout or sanitizer error.
status=$?
set -e
grep -E "^#[0-9]+ *(INITED|DONE)|stat::|ERROR|SUMMARY|Test unit written" "$BUILD/fuzz-server.log" || true
[ "$status" -eq 0 ] && echo "fuzz-server: clean" || echo "fuzz-server: FAILED (exit $status), see $BUILD/fuzz-server.log"
exit "$status"
