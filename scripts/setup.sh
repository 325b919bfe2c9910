#!/usr/bin/env bash
# Everything both README commands need, idempotent: Debian packages, a Release build in build/, and the
# converted model in models/ (see scripts/fetch-assets). Quiet unless something goes wrong.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > build-configure.log 2>&1 ||
    { cat build-configure.log; exit 1; }
  rm -f build-configure.log
fi
cmake --build build -j "$jobs" 2>&1 | grep -E "error|FAILED|warning: unused" || true
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "setup: build failed" >&2; exit 1; }
bash scripts/fetch-assets --build-dir build
echo "setup: ready in $(( $(date +%s) - start )) s (binaries in build/bin)" >&2
