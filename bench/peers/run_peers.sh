#!/usr/bin/env bash
# Side-by-side speed of kokoro-rt, the official PyTorch kokoro 0.9.4 and ONNX Runtime (the kokoro-onnx model)
# on the same phoneme inputs, voice and thread count, in one run. Dev-only: not part of CI.
#
#   bash bench/peers/run_peers.sh [OUT_DIR]            defaults: THREADS=2 REPEAT=2 CORPORA="short medium long"
#
# Needs: build/bin/kokoro-bench and kokoro-phonemize (cmake --build build --target kokoro-bench kokoro-phonemize),
# the model (scripts/fetch-assets), the reference venv (bash tools/reference/setup.sh -> .venv-ref, torch from
# Debian), and .venv-peers with onnxruntime (created here from PyPI on first use). The ONNX model is
# models/cache/kokoro-v1.0.int8.onnx (override with ONNX_MODEL); it is the int8 export, so its figures are
# int8 ones. Inputs: the corpora's segments as phonemes, made by our frontend (kokoro-phonemize), one per line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/peers}
threads=${THREADS:-2}
repeat=${REPEAT:-2}
corpora=${CORPORA:-short medium long}
build=${BUILD:-$root/build}
model=${KOKORO_MODEL:-$root/models/kokoro-v1_0.kokoro}
onnx=${ONNX_MODEL:-$root/models/cache/kokoro-v1.0.int8.onnx}
assets=${KOKORO_ASSETS:-$root/../shared/assets}
voice=$assets/voices/af_heart.bin
mkdir -p "$out"

[ -x "$root/.venv-ref/bin/python" ] || bash "$root/tools/reference/setup.sh"
if [ ! -x "$root/.venv-peers/bin/python" ]; then
  python3 -m venv "$root/.venv-peers"
  "$root/.venv-peers/bin/pip" install --quiet --disable-pip-version-check onnxruntime numpy
fi

: > "$out/phonemes.txt"
for c in $corpora; do "$build/bin/kokoro-phonemize" < "$root/bench/corpus/$c.txt" >> "$out/phonemes.txt"; done
echo "run_peers: $(wc -l < "$out/phonemes.txt") segments, $threads threads, $repeat repetitions" >&2

# kokoro-rt twice: in the precision its programs use by default here (PRECISION, default bf16-all where the
# CPU has AVX512-BF16, with the GEMM peak measured) and in fp32, the reference arithmetic.
default_precision=${PRECISION:-$(grep -q avx512_bf16 /proc/cpuinfo && echo bf16-all || echo fp32)}
"$build/bin/kokoro-bench" --phoneme-file "$out/phonemes.txt" --threads "$threads" --repeat "$repeat" \
  --first-words 0 --precision "$default_precision" --json > "$out/kokoro-rt.json"
if [ "$default_precision" != fp32 ]; then
  "$build/bin/kokoro-bench" --phoneme-file "$out/phonemes.txt" --threads "$threads" --repeat "$repeat" \
    --first-words 0 --precision fp32 --no-peak --json > "$out/kokoro-rt-fp32.json"
fi
"$root/.venv-ref/bin/python" "$root/bench/peers/peers.py" torch "$out/phonemes.txt" "$model" "$voice" "$threads" "$repeat" "$out/pytorch.json"
"$root/.venv-peers/bin/python" "$root/bench/peers/peers.py" onnx "$out/phonemes.txt" "$onnx" "$voice" "$threads" "$repeat" "$out/onnxruntime.json" "$assets/config.json"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 "$root/bench/peers/peers.py" report "$out" | tee "$out/table.md"
