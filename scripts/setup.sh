#!/usr/bin/env bash
# Everything a README command needs, idempotent: Debian packages, a Release build in build/, and the
# converted model in models/ (see scripts/fetch-assets). Quiet unless something goes wrong; one line of timings.
#
#   scripts/setup.sh           everything: every package, every target, the kernel test variants (scripts/test)
#   scripts/setup.sh --speak   what speaking needs (scripts/say): its packages only, and only kokoro-say,
#                              kokoro-convert and kokoro-zhdict with the native compute library; a later run
#                              without --speak installs and builds the rest into the same build/
#
# The model's and the dictionaries' downloads run while the programs compile (fetch-assets --download-only);
# docs/benchmarks.md, "Set-up time on a fresh machine", has the time each step takes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scope=all
case "${1:-}" in
  --speak) scope=speak ;;
  ""|--all) ;;
  *) echo "usage: $0 [--speak|--all]" >&2; exit 2 ;;
esac
start=$(date +%s)
mark=$start
times=()
took() { local now; now=$(date +%s); times+=("$1 $(( now - mark )) s"); mark=$now; }

bash scripts/install-deps.sh "--$scope"
took packages

# The downloads (network-bound) beside the configure and the build (CPU-bound), in a process group of their own
# so that a failed build takes them down too. A failed download only warns here: fetch-assets below retries
# it and fails loudly.
mkdir -p models
setsid bash -c 's=$(date +%s); bash scripts/fetch-assets --download-only; rc=$?
  echo "downloads $(( $(date +%s) - s )) s"; exit $rc' > models/download.log 2>&1 &
downloads=$!
trap 'kill -- -$downloads 2>/dev/null || true' EXIT

# Speaking configures without the kernel test variants (the compute library compiled once, for this CPU) and
# lets CMake skip the parts whose packages it did not install; everything turns both back on, which only adds
# targets: what speaking compiled is reused.
#
# Everything, in a new tree, is the portable build the .deb is made of (-DKOKORO_PORTABLE=ON: every kernel
# family's compute library, the CPU's best picked at load time, so the forced-family tests cover all three), and
# compiles through ccache (installed with everything): the package check (ctest package.deb) then builds the
# .deb in its own tree from the same objects instead of compiling everything a second time. A tree scripts/say
# made keeps its native flags (switching would recompile it all); its package check compiles its own.
configure=()
if [ ! -f build/CMakeCache.txt ]; then
  if [ "$scope" = speak ]; then
    configure=(-DKOKORO_REQUIRE_ALL_PARTS=OFF -DKOKORO_KERNEL_TEST_VARIANTS=)
  else
    configure=(-DKOKORO_REQUIRE_ALL_PARTS=ON -DKOKORO_PORTABLE=ON)
  fi
  if command -v ccache > /dev/null; then
    configure+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
elif [ "$scope" = all ] && ! grep -q '^KOKORO_REQUIRE_ALL_PARTS:BOOL=ON$' build/CMakeCache.txt; then
  configure=(-DKOKORO_REQUIRE_ALL_PARTS=ON)
  grep -q '^KOKORO_KERNEL_TEST_VARIANTS:STRING=$' build/CMakeCache.txt && configure+=(-UKOKORO_KERNEL_TEST_VARIANTS)
fi
if [ ${#configure[@]} -gt 0 ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${configure[@]}" > build-configure.log 2>&1 ||
    { cat build-configure.log; exit 1; }
  rm -f build-configure.log
fi
took configure

targets=()
[ "$scope" = all ] || targets=(--target kokoro-say kokoro-convert kokoro-zhdict)
jobs=$(nproc 2>/dev/null || echo 2)
# pipefail: the build's own status, whether or not grep found a line to show.
cmake --build build -j "$jobs" "${targets[@]}" 2>&1 | { grep -E "error|FAILED|warning: unused" || true; } ||
  { echo "setup: build failed" >&2; exit 1; }
took build

wait "$downloads" || { echo "setup: the downloads beside the build failed; retrying them:" >&2; cat models/download.log >&2; }
trap - EXIT
bash scripts/fetch-assets --build-dir build
took model
times+=("$(tail -1 models/download.log) beside them")
echo "setup: ready in $(( $(date +%s) - start )) s: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g') (binaries in build/bin)" >&2
