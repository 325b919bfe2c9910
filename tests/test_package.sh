#!/usr/bin/env bash
# The Debian package as CI checks it (ctest label package; issue 31): scripts/package-deb builds it in
# BUILD/package-deb from this source tree (a portable tree of its own, prefix /usr, no tests; through ccache,
# after scripts/test's portable tree nearly every object comes from the cache: scripts/setup.sh),
# with the dictionaries from the archives scripts/fetch-assets already downloaded, then scripts/check-deb
# installs it on a debootstrapped Debian 12 inside that directory and runs every check there with the
# network cut off, giving it the model CI already converted (--from-model). Prints the time of each part.
#
# Usage: tests/test_package.sh SOURCE_DIR BUILD_DIR MODEL     (root; Debian's mirror; ~2 cores for 10+ min)
set -euo pipefail
src=$1 out=$2/package-deb model=$3
fail() { echo "test_package: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts)"
[ -f "$model" ] || fail "model $model missing (scripts/fetch-assets)"
t0=$(date +%s)
JOBS=${JOBS:-2} bash "$src/scripts/package-deb" "$out" > "$out.log" 2>&1 || { tail -30 "$out.log" >&2; fail "scripts/package-deb"; }
t1=$(date +%s)
deb=$(ls "$out"/kokoro-rt_*.deb)
echo "test_package: $(basename "$deb") ($(du -h "$deb" | cut -f1)) built in $((t1 - t0)) s"
bash "$src/scripts/check-deb" "$deb" "$model" || fail "scripts/check-deb (above)"
echo "test_package: checked in $(( $(date +%s) - t1 )) s; $(( $(date +%s) - t0 )) s in all"
