#!/usr/bin/env bash
# Install, then build against the install the way an outside user would (issue 13, "done when"):
#   1. cmake --install BUILD --prefix TMP
#   2. examples/say_to_wav.c compiled with only `pkg-config --cflags --libs kokoro` (PKG_CONFIG_PATH=TMP)
#   3. run it with no KOKORO_* variables: the installed engine finds its assets in TMP/share/kokoro-rt and
#      the model there too (a symlink to MODEL stands in for kokoro-fetch-model's copy); check the WAV
#   4. tests/test_capi.c's speak scenario (events, barge-in from another thread) built with pkg-config's
#      flags only, under ASan with leak checking
#   5. the same example through find_package(kokoro), statically linked to libkokoro.a: run from <prefix>/bin
#      it finds the prefix's data; run from anywhere else it names the configured prefix's (and no build path)
#   6. the model command is installed and documents --from-model
#   7. no installed file names the build machine's source, build or shared-assets directory (issue 31)
#
# Usage: tests/test_install.sh SOURCE_DIR BUILD_DIR MODEL      (ctest label capi; needs sox, pkg-config, cc)
set -euo pipefail
src=$1 build=$2 model=$3
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }
[ -f "$model" ] || fail "model $model missing (scripts/fetch-assets)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name kokoro.pc | head -1)
[ -n "$pc" ] || fail "no kokoro.pc installed"
lib=$(cd "$(dirname "$pc")/.." && pwd)
for f in "$prefix/include/kokoro.h" "$lib/libkokoro.a" "$lib/cmake/kokoro/kokoroConfig.cmake" \
         "$prefix/bin/kokoro-say" "$prefix/bin/kokoro-fetch-model" "$prefix/share/kokoro-rt/assets/config.json" \
         "$prefix/share/kokoro-rt/data/kokoro-v1_0.stats-predictor.kokoro"; do
  [ -e "$f" ] || fail "$f not installed"
done
soname=$(readelf -d "$lib/libkokoro.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libkokoro.so.0" ] || fail "SONAME is '$soname'"
exported=$(nm -D --defined-only "$lib/libkokoro.so" | awk '$2 == "T" {print $3}' | grep -vc '^kokoro_' || true)
[ "$exported" = 0 ] || fail "libkokoro.so exports $exported symbols besides kokoro_*"

export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs kokoro)
echo "pkg-config --cflags --libs kokoro: $flags"
cc -std=c99 -Wall -Wextra -Werror -o "$tmp/say_to_wav" "$src/examples/say_to_wav.c" $flags

# No KOKORO_MODEL / KOKORO_ASSETS: everything from the prefix (the model by symlink: a copy is 300 MB).
ln -s "$(readlink -f "$model")" "$prefix/share/kokoro-rt/kokoro-v1_0.kokoro"
check_wav() {  # file, minimum seconds
  [ "$(soxi -r "$1")" = 24000 ] || fail "$1: rate $(soxi -r "$1")"
  [ "$(soxi -c "$1")" = 1 ] || fail "$1: channels $(soxi -c "$1")"
  local d rms
  d=$(soxi -D "$1")
  awk -v d="$d" -v m="$2" 'BEGIN { exit !(d > m) }' || fail "$1: $d s of audio, expected more than $2"
  rms=$(sox "$1" -n stat 2>&1 | awk '/RMS +amplitude/ {print $3}')
  awk -v r="$rms" 'BEGIN { exit !(r > 0.01) }' || fail "$1: RMS $rms (silent?)"
  echo "$1: $d s, RMS $rms"
}
env -u KOKORO_MODEL -u KOKORO_ASSETS LD_LIBRARY_PATH="$lib" \
  "$tmp/say_to_wav" "$tmp/hello.wav" "Hello from the installed library. It speaks through the C API." \
  > "$tmp/words.txt"
check_wav "$tmp/hello.wav" 1.5
grep -q "installed" "$tmp/words.txt" || fail "no word event for 'installed': $(cat "$tmp/words.txt")"
env -u KOKORO_MODEL -u KOKORO_ASSETS "$prefix/bin/kokoro-say" -v -q -o "$tmp/say.wav" "Installed." > "$tmp/say.log" 2>&1 ||
  fail "installed kokoro-say: $(cat "$tmp/say.log")"
grep -q "$prefix/share/kokoro-rt/assets" "$tmp/say.log" || fail "installed kokoro-say did not use the installed assets"
grep -q "slice statistics: predictor $prefix/share/kokoro-rt/data/kokoro-v1_0.stats-predictor.kokoro" "$tmp/say.log" ||
  fail "installed kokoro-say did not use the installed statistics predictor: $(grep 'slice statistics' "$tmp/say.log")"
check_wav "$tmp/say.wav" 0.3

# The issue's acceptance run, built like an outside user would: tests/test_capi.c (open with defaults, a
# sentence into a buffer, a second one stopped mid-way from another thread, close) compiled with only
# pkg-config's flags, under AddressSanitizer: its leak checker covers the whole process, libkokoro included.
cc -std=c99 -g -fsanitize=address -fno-omit-frame-pointer -o "$tmp/test_capi" "$src/tests/test_capi.c" $flags -lpthread -lm
# Cut after 240 s so that a hang fails loudly instead of waiting for ctest's timeout. (The one hang seen, in
# 2026-11-24's runs, was the test's own REQUIRE evaluating pthread_create twice: two stopper threads.)
env -u KOKORO_MODEL -u KOKORO_ASSETS LD_LIBRARY_PATH="$lib" ASAN_OPTIONS=detect_leaks=1 \
  timeout -k 10 240 "$tmp/test_capi" speak > "$tmp/capi.log" 2>&1 ||
  fail "test_capi speak against the install (exit $?): $(tail -30 "$tmp/capi.log")"
sed 's/^/test_capi: /' "$tmp/capi.log"

# find_package(kokoro) with the static library.
cmake -S "$src/examples" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" >/dev/null
if readelf -d "$tmp/consumer/say_to_wav_static" | grep -q libkokoro; then fail "static example needs libkokoro.so"; fi
# A static program has no library to locate the install by: in <prefix>/bin it finds the data from its own
# directory; anywhere else only in the configured prefix (core/install_paths.h), which is not this one.
cp "$tmp/consumer/say_to_wav_static" "$prefix/bin/"
env -u KOKORO_MODEL -u KOKORO_ASSETS "$prefix/bin/say_to_wav_static" "$tmp/static.wav" "Linked statically." >/dev/null
check_wav "$tmp/static.wav" 0.5
rm "$prefix/bin/say_to_wav_static"
if env -u KOKORO_MODEL -u KOKORO_ASSETS "$tmp/consumer/say_to_wav_static" "$tmp/static2.wav" "x" > "$tmp/static.log" 2>&1; then
  fail "a static program outside the prefix found data: $(cat "$tmp/static.log")"
fi
grep -q "no assets directory" "$tmp/static.log" || fail "static program elsewhere: $(cat "$tmp/static.log")"
if grep -qF -e "$src" -e "$build" "$tmp/static.log"; then fail "static program looked in the build tree: $(cat "$tmp/static.log")"; fi

# The model command, into a data directory of its own (a copy of an existing model: no network).
"$prefix/bin/kokoro-fetch-model" --help | grep -q -- --from-model || fail "kokoro-fetch-model --help"

# Nothing installed names the build machine: no source, build or ../shared path in any file (RUNPATHs are
# rewritten by the install; the lookups read the build tree's marker, which is not installed).
shared=$(cd "$src/../shared" 2>/dev/null && pwd || echo "$src/../shared")
found=$(rm -f "$prefix/share/kokoro-rt/kokoro-v1_0.kokoro" && grep -rlaF -e "$(cd "$src" && pwd)" -e "$(cd "$build" && pwd)" -e "$shared" "$prefix" || true)
[ -z "$found" ] || fail "installed files name the build machine's paths: $found"
echo "test_install: ok"
