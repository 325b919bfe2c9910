#!/usr/bin/env bash
# kokoro.lv2 as hosts find it (issue 29, "done when"), with Debian's lilv tools:
#   1. the build tree: LV2_PATH=BUILD/lv2 lv2ls lists urn:kokoro-rt:speaker; lv2info shows its ports (the
#      voice port with every voice as a scale point) without a lilv error; lv2_validate (lv2-dev, sordi)
#      finds 0 errors in its TTL against the installed LV2 specifications
#   2. cmake --install BUILD --prefix TMP: the bundle in TMP/lib/lv2/kokoro.lv2, found by lv2ls there, linked
#      to the installed libkokoro (RUNPATH), exporting lv2_descriptor only
#   3. the lilv host test's speech scenario (real-time trap on) against the installed bundle and library, with
#      no KOKORO_* variables: the installed engine reads its data from TMP/share/kokoro-rt (the model by
#      symlink, as tests/test_install.sh does)
#
# Usage: tests/test_lv2_bundle.sh SOURCE_DIR BUILD_DIR MODEL HOST_TEST      (ctest label lv2)
set -euo pipefail
src=$1 build=$2 model=$3 host_test=$4
uri=urn:kokoro-rt:speaker
fail() { echo "test_lv2_bundle: FAIL: $*" >&2; exit 1; }
[ -f "$model" ] || fail "model $model missing (scripts/fetch-assets)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The build tree.
LV2_PATH=$build/lv2 lv2ls > "$tmp/lv2ls.txt"
grep -qx "$uri" "$tmp/lv2ls.txt" || fail "lv2ls with LV2_PATH=$build/lv2 lists: $(cat "$tmp/lv2ls.txt")"
LV2_PATH=$build/lv2 lv2info "$uri" > "$tmp/lv2info.txt" 2> "$tmp/lv2info.err"
[ ! -s "$tmp/lv2info.err" ] || fail "lilv complained: $(cat "$tmp/lv2info.err")"
for symbol in control notify out speed gain voice continuous freewheel latency; do
  grep -Eq "Symbol: +$symbol\$" "$tmp/lv2info.txt" || fail "lv2info shows no port '$symbol'"
done
sordi "file://$build/lv2/kokoro.lv2/kokoro.ttl" > "$tmp/triples.nt" 2> /dev/null  # full URIs, one statement a line
for needed in "urid#map" "worker#schedule" "state#interface" "worker#interface" "lv2core#freeWheeling" \
              "lv2core#latency" "atom#supports> <http://lv2plug.in/ns/ext/midi#MidiEvent" \
              "atom#supports> <http://lv2plug.in/ns/ext/patch#Message" "lv2core#InstrumentPlugin" \
              "patch#writable> <urn:kokoro-rt:speaker#text" "patch#writable> <urn:kokoro-rt:speaker#file"; do
  grep -q "$needed" "$tmp/triples.nt" || fail "the TTL does not say $needed"
done
voices=$(grep -vc '^#' "$src/lv2/voices.txt")
points=$(grep -Ec '^\s+[0-9]+ = "' "$tmp/lv2info.txt")
[ "$points" = "$voices" ] || fail "$points scale points on the voice port, voices.txt has $voices"
grep -q '3 = "af_heart"' "$tmp/lv2info.txt" || fail "af_heart is not scale point 3"
echo "lv2info: 9 ports, $points voices"
lv2_validate "$build"/lv2/kokoro.lv2/*.ttl > "$tmp/validate.txt" 2>&1 || fail "lv2_validate: $(cat "$tmp/validate.txt")"
grep -q "Found 0 errors" "$tmp/validate.txt" || fail "lv2_validate: $(grep -v '^Skipping' "$tmp/validate.txt")"
grep "Found 0 errors" "$tmp/validate.txt"

# 2. An installed prefix.
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > /dev/null
bundle=$prefix/lib/lv2/kokoro.lv2
for f in manifest.ttl kokoro.ttl kokoro.so; do [ -f "$bundle/$f" ] || fail "$bundle/$f not installed"; done
LV2_PATH=$prefix/lib/lv2 lv2ls | grep -qx "$uri" || fail "lv2ls does not find the installed bundle"
lib=$(dirname "$(find "$prefix" -name 'libkokoro.so.0' | head -1)")
resolved=$(env -u LD_LIBRARY_PATH ldd "$bundle/kokoro.so" | awk '/libkokoro.so.0/ {print $3}')
[ "$(readlink -f "$resolved")" = "$(readlink -f "$lib/libkokoro.so.0")" ] ||
  fail "the installed plugin loads libkokoro from '$resolved', not from the prefix ($(readelf -d "$bundle/kokoro.so" | grep -i path))"
exported=$(nm -D --defined-only "$bundle/kokoro.so" | awk '$2 == "T" {print $3}' | tr '\n' ' ')
[ "$exported" = "lv2_descriptor " ] || fail "the plugin exports: $exported"
readelf -d "$bundle/kokoro.so" | grep -q 'Flags: NODELETE' ||
  fail "the plugin is not linked -z nodelete: a host that unloads it crashes at exit (tests/test_lv2_jalv.cpp)"
echo "installed: $bundle (libkokoro from $lib)"

# 3. The lilv host against the installed bundle; its own libkokoro (the reference speech) resolves to the
# prefix's too, through LD_LIBRARY_PATH.
ln -s "$(readlink -f "$model")" "$prefix/share/kokoro-rt/kokoro-v1_0.kokoro"
env -u KOKORO_MODEL -u KOKORO_ASSETS LV2_PATH="$prefix/lib/lv2" LD_LIBRARY_PATH="$lib" \
  timeout -k 10 240 "$host_test" --gtest_filter='Lv2Plugin.NoteOnSpeaks*' > "$tmp/host.log" 2>&1 ||
  fail "the host test against the installed bundle: $(tail -30 "$tmp/host.log")"
grep -q "plugin binary: $bundle/kokoro.so" "$tmp/host.log" || fail "the host loaded another bundle: $(grep 'plugin binary' "$tmp/host.log")"
grep -q "libkokoro: $lib/libkokoro.so.0" "$tmp/host.log" || fail "another libkokoro was used: $(grep '^libkokoro' "$tmp/host.log")"
grep -E '^\[measured\]|^\[  PASSED' "$tmp/host.log"
echo "test_lv2_bundle: ok"
