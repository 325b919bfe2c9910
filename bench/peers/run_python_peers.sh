#!/usr/bin/env bash
# kokoro_rt from Python vs kokoro-onnx from Python, side by side in one run: the same sentences (bench/corpus
# short, medium, long), voice af_heart, 2 threads, each through kokoro-onnx's own calls (create and
# create_stream). Dev-only: not part of CI.
#
#   bash bench/peers/run_python_peers.sh [OUT_DIR]          defaults: THREADS=2 REPEAT=2 CORPORA="short medium long"
#
# Needs: build/lib/libkokoro.so (ninja -C build kokoro), the model (scripts/fetch-assets; it also leaves the int8
# ONNX export it converted from in models/cache/kokoro-v1.0.int8.onnx, which kokoro-onnx runs here: override with
# ONNX_MODEL) and .venv-kokoro-onnx, created here from PyPI on first use (kokoro-onnx 0.6.1 with onnxruntime,
# and cffi for kokoro_rt, which is used from the source tree through KOKORO_RT_LIBRARY). kokoro-onnx's voices
# archive is written from the assets' voice packs (the same voices), so both speak with identical styles.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/peers-python}
threads=${THREADS:-2}
repeat=${REPEAT:-2}
corpora=${CORPORA:-short medium long}
build=${BUILD:-$root/build}
onnx=${ONNX_MODEL:-$root/models/cache/kokoro-v1.0.int8.onnx}
assets=${KOKORO_ASSETS:-$root/../shared/assets}
venv=$root/.venv-kokoro-onnx
mkdir -p "$out"
[ -f "$onnx" ] || { echo "run_python_peers: $onnx not found (scripts/fetch-assets leaves it there)" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "kokoro-onnx==0.6.1" cffi
fi
"$venv/bin/python" - "$assets/voices" "$out/voices.npz" <<'PY'
import sys, pathlib, numpy as np
voices = {p.stem: np.fromfile(p, dtype="<f4").reshape(510, 1, 256) for p in pathlib.Path(sys.argv[1]).glob("*.bin")}
np.savez(sys.argv[2], **voices)
PY
files=()
for c in $corpora; do files+=("$root/bench/corpus/$c.txt"); done
echo "run_python_peers: $(cat "${files[@]}" | grep -c .) sentences, $threads threads, $repeat repetitions" >&2
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt" >&2
KOKORO_RT_LIBRARY=$build/lib PYTHONPATH=$root/python "$venv/bin/python" "$root/bench/peers/python_peers.py" rt \
  "${files[@]}" --out "$out/kokoro_rt.json" --threads "$threads" --repeat "$repeat"
"$venv/bin/python" "$root/bench/peers/python_peers.py" onnx "${files[@]}" --out "$out/kokoro-onnx.json" \
  --threads "$threads" --repeat "$repeat" --model "$onnx" --voices "$out/voices.npz"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt" >&2
"$venv/bin/python" "$root/bench/peers/python_peers.py" report "$out/kokoro_rt.json" "$out/kokoro-onnx.json" |
  tee "$out/table.md"
