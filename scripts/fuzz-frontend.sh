#!/usr/bin/env bash
# Builds the frontend's libFuzzer target with clang (AddressSanitizer + UBSan) and runs it for a bounded
# time, seeded from the kept corpus tests/data/fuzz/frontend/ (never written to: new inputs go to a temp
# directory, crashes to fuzz-frontend-artifacts/ in the build tree).
#   scripts/fuzz-frontend.sh [SECONDS]      (default 60)
# Environment: KOKORO_FUZZ_BUILD (default <repo>/build-fuzz-frontend), KOKORO_FUZZ_JOBS (default 2),
# KOKORO_FUZZ_ZH_DICT (a built zh.kozh to use instead of building kokoro-zhdict in the fuzz tree).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_TO_RUN="${1:-60}"
BUILD="${KOKORO_FUZZ_BUILD:-$ROOT/build-fuzz-frontend}"
JOBS="${KOKORO_FUZZ_JOBS:-2}"
command -v clang++ >/dev/null || { echo "fuzz-frontend: clang++ not found (scripts/install-deps.sh installs it)"; exit 1; }

mkdir -p "$BUILD"
# -O1 with line tables (what libFuzzer builds usually use: fast to compile, stacks with lines); the compute
# library at -O0 (the frontend uses none of its kernels: KOKORO_COMPUTE_EXTRA_FLAGS).
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DKOKORO_COMPUTE_EXTRA_FLAGS=-O0 \
  -DKOKORO_SANITIZE=address,undefined -DKOKORO_FUZZ=ON \
  -DKOKORO_BUILD_TESTS=OFF -DKOKORO_BUILD_BENCH=OFF -DKOKORO_KERNEL_TEST_VARIANTS= >"$BUILD/configure.log" 2>&1 \
  || { cat "$BUILD/configure.log"; exit 1; }
# The Mandarin frontend needs its dictionary in this tree's lexicons/: the one of the main build when the
# caller names it (KOKORO_FUZZ_ZH_DICT; ctest does), else built here (downloads cached in models/cache).
if [ -n "${KOKORO_FUZZ_ZH_DICT:-}" ] && [ -f "$KOKORO_FUZZ_ZH_DICT" ]; then
  cmake --build "$BUILD" --target fuzz_frontend -j "$JOBS"
  mkdir -p "$BUILD/lexicons"
  cp "$KOKORO_FUZZ_ZH_DICT" "$BUILD/lexicons/zh.kozh"
  if [ -f "$KOKORO_FUZZ_ZH_DICT.source" ]; then
    cp "$KOKORO_FUZZ_ZH_DICT.source" "$BUILD/lexicons/zh.kozh.source"
  fi
else
  cmake --build "$BUILD" --target fuzz_frontend kokoro-zhdict -j "$JOBS"
  bash "$ROOT/scripts/fetch-zh-dict" --zhdict "$BUILD/bin/kokoro-zhdict" --out "$BUILD/lexicons/zh.kozh" \
    --cache "${KOKORO_CACHE:-$ROOT/models/cache}"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$BUILD/fuzz-frontend-artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/frontend/fuzz/lsan.supp print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"
echo "fuzz-frontend: running for ${SECONDS_TO_RUN}s"
set +e
"$BUILD/bin/fuzz_frontend" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-frontend-artifacts/" \
  "$work" "$ROOT/tests/data/fuzz/frontend" >"$BUILD/fuzz-frontend.log" 2>&1
# libFuzzer exits non-zero on a crash, leak, timeout or sanitizer error.
status=$?
set -e
grep -E "^#[0-9]+ *(INITED|DONE)|stat::|ERROR|SUMMARY|Test unit written" "$BUILD/fuzz-frontend.log" || true
[ "$status" -eq 0 ] && echo "fuzz-frontend: clean" || echo "fuzz-frontend: FAILED (exit $status), see $BUILD/fuzz-frontend.log"
exit "$status"
