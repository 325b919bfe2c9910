#!/usr/bin/env python3
"""kokoro_rt from Python against kokoro-onnx, each through the same calls (kokoro-onnx's), on the same sentences
and voice (dev-only; run by bench/peers/run_python_peers.sh, which says how to reproduce).

  python_peers.py rt   CORPUS_TXT... --out OUT.json [--threads N] [--repeat R] [--voice V]
  python_peers.py onnx CORPUS_TXT... --out OUT.json --model ONNX --voices NPZ [--threads N] [--repeat R] [--voice V]
  python_peers.py report RT.json ONNX.json

Per line of the corpora (after one warm-up line), R times: create(line) timed (wall and process CPU seconds,
audio seconds: RTF = compute / audio), and create_stream(line) timed to its first chunk (what a player waits
before it can start), consumed to its end. kokoro_rt is kokoro_rt.compat.Kokoro: the same calls a kokoro-onnx
program makes, with only the import changed.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time

SAMPLE_RATE = 24000


def load_lines(paths: list[str]) -> list[str]:
    lines = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            lines += [line.strip() for line in f if line.strip()]
    return lines


def first_chunk_time(kokoro, line: str, voice: str) -> tuple[float, int]:
    async def run():
        t0 = time.perf_counter()
        first, n = None, 0
        async for samples, _ in kokoro.create_stream(line, voice=voice, lang="en-us"):
            first = first or time.perf_counter() - t0
            n += samples.size
        return first, n

    return asyncio.run(run())


def measure(kokoro, lines: list[str], voice: str, repeat: int) -> list[dict]:
    kokoro.create(lines[0], voice=voice, lang="en-us")  # warm-up
    items = []
    for _ in range(repeat):
        for line in lines:
            w0, c0 = time.perf_counter(), time.process_time()
            samples, rate = kokoro.create(line, voice=voice, lang="en-us")
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            assert rate == SAMPLE_RATE
            first, streamed = first_chunk_time(kokoro, line, voice)
            items.append({"chars": len(line), "wall_s": wall, "cpu_s": cpu, "audio_s": samples.size / rate,
                          "first_chunk_s": first, "stream_audio_s": streamed / rate})
    return items


def open_rt(args):
    import kokoro_rt
    from kokoro_rt.compat import Kokoro
    kokoro = Kokoro(None, None, threads=args.threads)
    import os
    flags = open("/proc/cpuinfo").read()
    precision = os.environ.get("KOKORO_PRECISION") or (
        ("int8" if "avx512_vnni" in flags else "bf16-all") if "avx512_bf16" in flags else "fp32")
    return kokoro, f"kokoro_rt {kokoro_rt.library_version()} (compat.Kokoro, slice mode, {precision})"


def open_onnx(args):
    import importlib.metadata

    import onnxruntime as ort
    from kokoro_onnx import Kokoro
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    kokoro = Kokoro.from_session(session, args.voices)
    return kokoro, (f"kokoro-onnx {importlib.metadata.version('kokoro-onnx')}, onnxruntime {ort.__version__}, "
                    f"int8 export")


def report(paths: list[str]) -> None:
    """The table: compute seconds for the same sentences (the fair ratio: the engines' audio differs in length,
    kokoro-onnx trims each batch's silence), RTF, first-chunk times."""
    rows = []
    for p in paths:
        d = json.load(open(p))
        items = d["items"]
        firsts = sorted(i["first_chunk_s"] for i in items)
        rows.append({"name": d["engine"], "version": d["version"], "n": len(items),
                     "wall": sum(i["wall_s"] for i in items), "cpu": sum(i["cpu_s"] for i in items),
                     "audio": sum(i["audio_s"] for i in items), "first_med": statistics.median(firsts),
                     "first_max": firsts[-1]})
    ours = rows[0]
    print("| engine | version | create: compute s | audio s | RTF (wall) | RTF (CPU) | create_stream: first chunk "
          "median | max | compute / kokoro_rt | first chunk / kokoro_rt |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['name']} | {r['version']} | {r['wall']:.2f} | {r['audio']:.1f} | {r['wall'] / r['audio']:.3f} | "
              f"{r['cpu'] / r['audio']:.3f} | {r['first_med'] * 1000:.0f} ms | {r['first_max'] * 1000:.0f} ms | "
              f"{r['wall'] / ours['wall']:.2f}x | {r['first_med'] / ours['first_med']:.2f}x |")
    print(f"\n{ours['n']} create and {ours['n']} create_stream calls per engine.")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        report(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine", choices=["rt", "onnx"])
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("--model")
    ap.add_argument("--voices")
    args = ap.parse_args()
    kokoro, version = open_rt(args) if args.engine == "rt" else open_onnx(args)
    items = measure(kokoro, load_lines(args.corpora), args.voice, args.repeat)
    name = "kokoro_rt" if args.engine == "rt" else "kokoro-onnx"
    with open(args.out, "w") as f:
        json.dump({"engine": name, "version": version, "threads": args.threads, "voice": args.voice,
                   "items": items}, f, indent=1)


if __name__ == "__main__":
    main()
