"""End-to-end comparison of the C++ engine with the official reference on real sentences (dev-only).

For each sentence (misaki phonemes from tests/data/g2p/expected_en-us.jsonl) it runs the reference KModel on
our model file with the deterministic test noise, and build/bin/kokoro-say with --phonemes-in
--reference-noise, then reports durations (total frames) and the log-spectral distance between the two.

    .venv-ref/bin/python tools/reference/compare_e2e.py [--count 12] [--voice af_heart]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_model  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def log_spectra(x: np.ndarray, n_fft: int = 1024, hop: int = 256) -> np.ndarray:
    window = np.hanning(n_fft).astype(np.float64)
    frames = [x[i:i + n_fft] * window for i in range(0, len(x) - n_fft + 1, hop)]
    return 20 * np.log10(np.abs(np.fft.rfft(np.array(frames), axis=1)) + 1e-5)


def lsd_db(a: np.ndarray, b: np.ndarray) -> float:
    n = min(len(a), len(b))
    d = log_spectra(a[:n]) - log_spectra(b[:n])
    return float(np.mean(np.sqrt(np.mean(d ** 2, axis=1))))


def read_float_wav(path: str) -> np.ndarray:
    """kokoro-say writes 32-bit float WAV, which the stdlib wave module cannot read: walk the RIFF chunks."""
    data = open(path, "rb").read()
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        if cid == b"data":
            return np.frombuffer(data[pos + 8:pos + 8 + size], dtype="<f4").astype(np.float64)
        pos += 8 + size + (size & 1)
    raise RuntimeError(f"{path}: no data chunk")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "kokoro-v1_0.kokoro"))
    args = ap.parse_args()
    reference_model.configure_torch()
    model, header, _ = reference_model.load_kmodel(args.model)
    vocab = header["config"]["vocab"]
    pack = np.fromfile(os.path.join(ROOT, "..", "shared", "assets", "voices", args.voice + ".bin"),
                       dtype=np.float32).reshape(510, 256)
    rows = [json.loads(l) for l in open(os.path.join(ROOT, "tests", "data", "g2p", "expected_en-us.jsonl"))]
    rows = sorted(rows, key=lambda r: len(r["ps"]))
    picks = [rows[int(i)] for i in np.linspace(0, len(rows) - 1, args.count)]
    print(f"{'phonemes':>8} {'frames ref':>10} {'frames C++':>10} {'LSD dB':>7}  text")
    lsds = []
    for r in picks:
        ps = r["ps"][:510]
        ids = [0] + [vocab[c] for c in ps if c in vocab] + [0]
        out = reference_model.run(model, ids, pack[len(ps) - 1], 1.0)
        ref = out["audio"]
        with tempfile.TemporaryDirectory() as tmp:
            wav = os.path.join(tmp, "cpp.wav")
            subprocess.run([os.path.join(ROOT, "build", "bin", "kokoro-say"), "-q", "--phonemes-in",
                            "--reference-noise", "--voice", args.voice, "-o", wav, ps], check=True)
            cpp = read_float_wav(wav)
        lsd = lsd_db(cpp, ref.astype(np.float64))
        lsds.append(lsd)
        print(f"{len(ps):8d} {len(ref) // 600:10d} {len(cpp) // 600:10d} {lsd:7.3f}  {r['text'][:60]}", flush=True)
    print(f"mean LSD {np.mean(lsds):.3f} dB over {len(lsds)} sentences")


if __name__ == "__main__":
    main()
