#!/usr/bin/env python3
"""Peer engines on the same phoneme inputs as kokoro-bench (dev-only; run by bench/peers/run_peers.sh).

  peers.py torch PHONEMES MODEL VOICE THREADS REPEAT OUT.json   official KModel (kokoro 0.9.4), in .venv-ref
  peers.py onnx  PHONEMES ONNX   VOICE THREADS REPEAT OUT.json   ONNX Runtime on the kokoro-onnx model
  peers.py report OUT_DIR                                        the side-by-side table from the JSON files

Each engine synthesizes every line of PHONEMES (one segment each) REPEAT times after one warm-up line, and
records wall and CPU seconds per line and the audio seconds produced. RTF = compute / audio (lower is faster).
"""
from __future__ import annotations

import json
import os
import sys
import time

SAMPLE_RATE = 24000


def load_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def style_row(voice_path: str, n_phonemes: int):
    import numpy as np
    pack = np.fromfile(voice_path, dtype="<f4").reshape(510, 1, 256)
    return pack[max(1, min(n_phonemes, 510)) - 1]  # [1, 256], as KPipeline picks it


def timed(fn, lines, repeat):
    fn(lines[0])  # warm-up
    items = []
    for _ in range(repeat):
        for line in lines:
            w0, c0 = time.perf_counter(), time.process_time()
            n = fn(line)
            items.append({"wall_s": time.perf_counter() - w0, "cpu_s": time.process_time() - c0,
                          "audio_s": n / SAMPLE_RATE, "phonemes": len(line)})
    return items


def run_torch(phonemes, model_path, voice, threads, repeat, out):
    import torch
    from loguru import logger
    logger.remove()  # kokoro logs every call at DEBUG
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "reference"))
    import reference_model
    torch.set_num_threads(threads)
    model, _, _ = reference_model.load_kmodel(model_path)
    model.eval()

    def synth(line):
        ref_s = torch.from_numpy(style_row(voice, len(line)).copy())
        with torch.no_grad():
            audio = model(line, ref_s, 1.0)
        return int(audio.numel())

    items = timed(synth, load_lines(phonemes), repeat)
    info = {"engine": "pytorch", "version": f"kokoro 0.9.4, torch {torch.__version__}", "threads": threads}
    json.dump({**info, "items": items}, open(out, "w"), indent=1)


def run_onnx(phonemes, onnx_path, voice, threads, repeat, out, config):
    import numpy as np
    import onnxruntime as ort
    vocab = json.load(open(config))["vocab"]
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
    # As kokoro-onnx feeds the graph: token input "input_ids" (newer exports) or "tokens", dtypes as declared.
    dtypes = {i.name: {"tensor(float)": np.float32, "tensor(int32)": np.int32, "tensor(int64)": np.int64}[i.type]
              for i in sess.get_inputs()}
    ids_name = "input_ids" if "input_ids" in dtypes else "tokens"

    def synth(line):
        ids = [0] + [vocab[c] for c in line if c in vocab] + [0]
        feed = {ids_name: np.array([ids], dtype=dtypes[ids_name]), "style": style_row(voice, len(line)).astype(dtypes["style"]),
                "speed": np.ones(1, dtype=dtypes["speed"])}
        audio = sess.run(None, feed)[0]
        return int(audio.size)

    items = timed(synth, load_lines(phonemes), repeat)
    info = {"engine": "onnxruntime", "version": f"onnxruntime {ort.__version__}, {os.path.basename(onnx_path)}",
            "threads": threads}
    json.dump({**info, "items": items}, open(out, "w"), indent=1)


def report(out_dir):
    rows = []
    peak = None
    for name in ("kokoro-rt", "kokoro-rt-fp32", "pytorch", "onnxruntime"):
        path = os.path.join(out_dir, name + ".json")
        if not os.path.exists(path):
            continue
        d = json.load(open(path))
        if name.startswith("kokoro-rt"):  # kokoro-bench --json
            c = d["corpora"]["phonemes"]
            wall, audio, cpu = c["compute_s"], c["audio_s"], d["cpu_s"]
            version = f"kokoro-rt exact {d['precision']}, {d['threads']} threads"
            peak = peak or d.get("gemm_peak_gflops")
        else:
            wall = sum(i["wall_s"] for i in d["items"])
            cpu = sum(i["cpu_s"] for i in d["items"])
            audio = sum(i["audio_s"] for i in d["items"])
            version = d["version"] + f", {d['threads']} threads"
        rows.append((name, version, wall / audio, cpu / audio, audio))
    if not rows:
        sys.exit("peers.py report: no results in " + out_dir)
    ours = next((r for r in rows if r[0] == "kokoro-rt"), None)
    if peak and "2" in peak:
        print(f"GEMM peak (kokoro-bench, same run): {peak['1']:.0f} GFLOP/s on 1 thread, {peak['2']:.0f} on 2\n")
    print("| engine | version | RTF (wall) | RTF (CPU, all threads) | audio s | wall RTF / kokoro-rt |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, version, rtf, rtf_cpu, audio in rows:
        ratio = f"{rtf / ours[2]:.2f}x" if ours else "-"
        print(f"| {name} | {version} | {rtf:.3f} | {rtf_cpu:.3f} | {audio:.1f} | {ratio} |")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "torch" and len(sys.argv) == 8:
        run_torch(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7])
    elif cmd == "onnx" and len(sys.argv) == 9:
        run_onnx(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7], sys.argv[8])
    elif cmd == "report" and len(sys.argv) == 3:
        report(sys.argv[2])
    else:
        sys.exit(__doc__)
