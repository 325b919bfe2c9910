#!/usr/bin/env bash
# Builds the tests in separate sanitizer trees and runs them:
#   build-tsan   -DKOKORO_SANITIZE=thread             (data races, lock-order problems)
#   build-asan   -DKOKORO_SANITIZE=address,undefined  (memory errors, undefined behaviour)
# Usage: scripts/sanitize.sh [thread|address] ...   (default: both)
# Environment:
#   KOKORO_SANITIZE_BUILD_ROOT   where the trees go (default: the source directory)
#   KOKORO_RING_STRESS_ITEMS     items in the ring stress test (default 10^8, as in the normal run; about
#                                10 s under TSan here). Set it lower for a quicker pass.
#   KOKORO_SANITIZE_JOBS         build parallelism (default 2)
# To cover more code, add test binaries (names of kokoro_test targets) to the lists below. Left out on purpose:
#   test_realtime_safety  interposes malloc, which the sanitizers own (not even built in these trees);
#   test_jack_sink        JACK clients hand audio over through shared memory synchronised by futexes inside
#                         libjack, which TSan cannot see (it reports the port buffers as races), and the
#                         sanitizer slowdown makes jackd report xruns that the test rightly fails on.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_ROOT="${KOKORO_SANITIZE_BUILD_ROOT:-$ROOT}"
JOBS="${KOKORO_SANITIZE_JOBS:-2}"

# test_stream_engine runs the real model through the three-thread pipeline (issue 5): ~20 min under TSan on
# this shared 2-vCPU machine (the model's arithmetic is what TSan slows down), a few minutes under ASan.
# test_sessions and test_capi_sessions: several sessions on one model at once (issue 26), the scheduler's
# turns and the model's shared caches under concurrency. test_text_stream and test_capi_text_stream: text
# appended on one thread while the engine's threads speak it (issue 28).
TSAN_TESTS=(test_ringbuffer test_realtime test_portaudio_sink test_compute_scheduler test_sessions test_stream_engine
            test_text_stream)
ASAN_TESTS=(test_ringbuffer test_realtime test_portaudio_sink test_compute_scheduler test_sessions test_stream_engine
            test_text_stream)
# KOKORO_SANITIZE_TESTS="a b" replaces both lists (e.g. a quicker pass on the session tests alone).
if [ -n "${KOKORO_SANITIZE_TESTS:-}" ]; then
  read -r -a TSAN_TESTS <<< "$KOKORO_SANITIZE_TESTS"
  ASAN_TESTS=("${TSAN_TESTS[@]}")
fi
# The C API (capi/, tests/test_capi.c) under ASan (leaks included) and TSan: its scenarios, not gtest.
CAPI_SCENARIOS=(speak errors "fuzz 100")

export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"

run_tree() {  # name sanitizers tests...
  local name="$1" sanitizers="$2"
  shift 2
  local dir="$BUILD_ROOT/build-$name"
  echo "== $name: -DKOKORO_SANITIZE=$sanitizers in $dir"
  mkdir -p "$dir"
  cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKOKORO_SANITIZE="$sanitizers" \
    -DKOKORO_BUILD_BENCH=OFF -DKOKORO_KERNEL_TEST_VARIANTS= >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  cmake --build "$dir" --target "$@" test_capi test_capi_sessions test_capi_text_stream kokoro-zhdict -j "$JOBS"
  # test_capi speaks a Mandarin voice: the tree needs its Mandarin dictionary (downloads cached in models/cache).
  bash "$ROOT/scripts/fetch-zh-dict" --zhdict "$dir/bin/kokoro-zhdict" --out "$dir/lexicons/zh.kozh" \
    --cache "${KOKORO_CACHE:-$ROOT/models/cache}"
  local t start scenario
  for scenario in "${CAPI_SCENARIOS[@]}"; do
    echo "-- $name: test_capi $scenario"
    # shellcheck disable=SC2086  # "fuzz 100" is a scenario and its argument
    "$dir/bin/test_capi" $scenario >/dev/null
  done
  echo "-- $name: test_capi_sessions (four sessions on one model at once)"
  "$dir/bin/test_capi_sessions" >/dev/null
  echo "-- $name: test_capi_text_stream (text appended while it is spoken)"
  "$dir/bin/test_capi_text_stream" >/dev/null
  for t in "$@"; do
    start=$(date +%s%N)
    echo "-- $name: $t"
    "$dir/bin/$t" --gtest_brief=1
    echo "-- $name: $t passed in $(( ($(date +%s%N) - start) / 1000000 )) ms"
  done
}

modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(thread address)
for mode in "${modes[@]}"; do
  case "$mode" in
    thread) run_tree tsan thread "${TSAN_TESTS[@]}" ;;
    address) run_tree asan address,undefined "${ASAN_TESTS[@]}" ;;
    *) echo "sanitize.sh: unknown mode '$mode' (use thread or address)" >&2; exit 2 ;;
  esac
done
echo "sanitize.sh: all sanitizer runs passed"
