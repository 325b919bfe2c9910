#!/usr/bin/env python3
"""Whisper word errors of kokoro-server's output in each response format (dev-only; not CI).

Asks a running kokoro-server (loopback) for the first --limit lines of bench/quality/corpus.txt in every
format, streamed, as a client would; decodes them (WAV/MP3/Opus with libsndfile through soundfile; FLAC
with sndfile-convert, which reads a streamed FLAC of unknown length to its end; AAC with faad) and
transcribes them with bench/quality's ASR (faster-whisper, Whisper base). Run it with bench/quality's venv:

  bench/quality/run.sh --summary >/dev/null      # makes bench/quality/.venv once
  build/bin/kokoro-server --http-port 18880 --no-wyoming &
  bench/quality/.venv/bin/python bench/server/whisper_formats.py --port 18880 --limit 8
Needs Debian's sndfile-programs and faad for the FLAC and AAC decodes.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench/quality"))
import asr  # noqa: E402


def fetch(port, text, fmt):
    body = json.dumps({"model": "kokoro", "input": text, "voice": "af_heart", "response_format": fmt,
                       "stream": True}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/speech", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read()


def decode(data, fmt, tmp):
    path = Path(tmp) / f"x.{fmt}"
    path.write_bytes(data)
    if fmt == "pcm":
        return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768, 24000
    if fmt == "flac":
        subprocess.run(["sndfile-convert", "-pcm16", str(path), str(path) + ".wav"], check=True, capture_output=True)
        path = Path(str(path) + ".wav")
    if fmt == "aac":
        subprocess.run(["faad", "-q", "-o", str(path) + ".wav", str(path)], check=True, capture_output=True)
        path = Path(str(path) + ".wav")
    x, rate = sf.read(str(path), dtype="float32")
    return (x[:, 0] if x.ndim > 1 else x), rate


def to_16k(x, rate):
    if rate == 24000:
        return resample_poly(x, 2, 3)
    if rate == 48000:  # faad's implicit-SBR upsampling of 24 kHz AAC
        return resample_poly(x, 1, 3)
    raise ValueError(f"unexpected rate {rate}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--formats", default="wav,pcm,mp3,opus,flac,aac")
    ap.add_argument("--json")
    args = ap.parse_args()
    lines = [l.strip() for l in (ROOT / "bench/quality/corpus.txt").read_text().splitlines() if l.strip()][: args.limit]
    normalize = asr.load_normalizer()
    transcriber = asr.Transcriber(threads=2)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            errors = words = 0
            rows = []
            for text in lines:
                x, rate = decode(fetch(args.port, text, fmt), fmt, tmp)
                transcript = transcriber.transcribe(to_16k(x, rate))
                s = asr.score_transcript(normalize, text, transcript)
                errors += s["errors"]
                words += s["words"]
                rows.append({"text": text, "transcript": transcript, "errors": s["errors"]})
            results[fmt] = {"wer_percent": 100.0 * errors / max(words, 1), "errors": errors, "words": words, "lines": rows}
            print(f"{fmt:5s} WER {results[fmt]['wer_percent']:.2f}% ({errors}/{words} words, {len(lines)} lines)", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
