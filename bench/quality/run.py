"""Perceptual-quality harness: one system (kokoro-say args) against whole-sentence exact mode.

Started by run.sh (which provides the venv); see README.md for the command and the columns.
"""
import argparse
import hashlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import soundfile
from scipy.signal import resample_poly

import asr
import dnsmos
import spectral
from synth import Synthesizer, reference_args, with_threads

HERE = Path(__file__).resolve().parent
ASR_RATE = 16000


def repo_root():
    out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE, capture_output=True, text=True)
    return Path(out.stdout.strip()) if out.returncode == 0 else HERE.parent.parent


def log(message):
    print(message, file=sys.stderr, flush=True)


def read_corpus(path, limit):
    lines = [l.strip() for l in Path(path).read_text(encoding="utf-8").splitlines()]
    lines = [l for l in lines if l and not l.startswith("#")]
    return lines[:limit] if limit else lines


def load_audio(path):
    audio, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    return audio[:, 0], rate


def to_rate(audio, rate, target):
    if rate == target:
        return audio
    g = math.gcd(rate, target)
    return resample_poly(audio, target // g, rate // g).astype(np.float32)


class Evaluator:
    """ASR transcript and DNSMOS of a wav, cached by the file's content (and the evaluators' settings)."""

    def __init__(self, cache_dir, threads):
        self.cache_dir = Path(cache_dir) / "eval"
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.threads = threads
        # The key covers the evaluators' code and settings: change either and the cached scores are redone.
        code = b"".join((HERE / m).read_bytes() for m in ("asr.py", "dnsmos.py"))
        self.settings = json.dumps({"asr": asr.SETTINGS, "dnsmos": str(dnsmos.model_path()), "asr_rate": ASR_RATE,
                                    "code": hashlib.sha256(code).hexdigest()}, sort_keys=True)
        self.transcriber = None
        self.mos = None
        self.normalize = asr.load_normalizer()

    def evaluate(self, path, text):
        data = Path(path).read_bytes()
        key = hashlib.sha256(data + self.settings.encode()).hexdigest()[:32]
        cache = self.cache_dir / f"{key}.json"
        if cache.is_file():
            result = json.loads(cache.read_text())
        else:
            audio, rate = load_audio(path)
            audio16 = to_rate(audio, rate, ASR_RATE)
            if self.transcriber is None:
                self.transcriber = asr.Transcriber(self.threads)
                self.mos = dnsmos.Dnsmos(self.threads)
            result = {"transcript": self.transcriber.transcribe(audio16), "dnsmos": self.mos.score(audio16)}
            cache.write_text(json.dumps(result))
        result["asr"] = asr.score_transcript(self.normalize, text, result["transcript"])
        return result


def mean(values):
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return float(np.mean(values)) if values else None


def summarize(files, reference_files=None):
    ok = [f for f in files if f["ok"]]
    out = {"files": len(files), "failed": len(files) - len(ok)}
    if not ok:
        return out
    errors = sum(f["asr"]["errors"] for f in ok)
    words = sum(f["asr"]["words"] for f in ok)
    out.update({"wer_percent": 100.0 * errors / max(words, 1), "word_errors": errors, "words": words,
                "sentences_with_errors": sum(1 for f in ok if f["asr"]["errors"] > 0),
                "sig": mean([f["dnsmos"]["sig"] for f in ok]), "bak": mean([f["dnsmos"]["bak"] for f in ok]),
                "ovrl": mean([f["dnsmos"]["ovrl"] for f in ok])})
    compared = [f for f in ok if f.get("vs_reference")]
    if compared:
        c = [f["vs_reference"] for f in compared]
        leaks = [x["leak_max_rms_dbfs"] for x in c if x["leak_max_rms_dbfs"] is not None]
        peaks = [x["leak_max_peak_dbfs"] for x in c if x["leak_max_peak_dbfs"] is not None]
        out.update({
            "compared_files": len(c),
            "lsd_db": mean([x["lsd_db"] for x in c]), "lsd_all_db": mean([x["lsd_all_db"] for x in c]),
            "mcd_db": mean([x["mcd_db"] for x in c]),
            "duration_files_differing": sum(1 for x in c if x["duration_diff_samples"] != 0),
            "duration_diff_max_abs_samples": max(abs(x["duration_diff_samples"]) for x in c),
            "duration_diff_mean_samples": mean([x["duration_diff_samples"] for x in c]),
            "level_diff_db": mean([x["level_diff_db"] for x in c]),
            "leak_max_rms_dbfs": max(leaks) if leaks else None,
            "leak_max_peak_dbfs": max(peaks) if peaks else None,
            "leak_frames_over_-50dbfs": sum(x["leak_frames_over_-50dbfs"] for x in c),
            "leak_files": sum(1 for x in c if x["leak_frames_over_-50dbfs"] > 0)})
    if reference_files:
        pairs = [(f, r) for f, r in zip(files, reference_files) if f["ok"] and r["ok"]]
        deltas = [f["dnsmos"]["ovrl"] - r["dnsmos"]["ovrl"] for f, r in pairs]
        out["ovrl_delta"] = mean(deltas)
        out["ovrl_lower_files"] = sum(1 for d in deltas if d < 0)
    return out


COLUMNS = ["system", "ok", "WER %", "sent. w/ err", "SIG", "BAK", "OVRL", "ΔOVRL (lower)", "LSD dB", "MCD dB",
           "dur Δ files / max smp", "level dB", "leak max dBFS (peak)", "leak frames > -50"]


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def table_row(label, s):
    if "wer_percent" not in s:
        return "| " + " | ".join([label, f"0/{s['files']}"] + ["-"] * (len(COLUMNS) - 2)) + " |"
    cells = [label, f"{s['files'] - s['failed']}/{s['files']}", fmt(s["wer_percent"], 2),
             str(s["sentences_with_errors"]), fmt(s["sig"]), fmt(s["bak"]), fmt(s["ovrl"]),
             f"{s['ovrl_delta']:+.3f} ({s['ovrl_lower_files']})" if s.get("ovrl_delta") is not None else "-"]
    if "lsd_db" in s:
        cells += [fmt(s["lsd_db"], 2), fmt(s["mcd_db"], 2),
                  f"{s['duration_files_differing']} / {s['duration_diff_max_abs_samples']}",
                  f"{s['level_diff_db']:+.2f}",
                  f"{fmt(s['leak_max_rms_dbfs'], 1)} ({fmt(s['leak_max_peak_dbfs'], 1)})",
                  f"{s['leak_frames_over_-50dbfs']} in {s['leak_files']} files"]
    else:
        cells += ["-"] * 6
    return "| " + " | ".join(cells) + " |"


def table_header():
    return "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS)


def print_summary(results_dir):
    """One table: per reference (binary, arguments, corpus lines), its reference and floor rows, then its systems."""
    paths = sorted(Path(results_dir).glob("*.json"))
    if not paths:
        sys.exit(f"no results in {results_dir}")
    groups = {}
    for p in paths:
        r = json.loads(p.read_text())
        key = json.dumps([r["reference_args"], r["binary_sha256"], r["corpus_sha256"]])
        groups.setdefault(key, []).append(r)
    print(table_header())
    for runs in groups.values():
        first = runs[0]
        print(table_row(f"reference ({' '.join(first['reference_args'])}; binary {first['binary_sha256'][:8]}, "
                        f"{first['lines']} lines)", first["reference"]["summary"]))
        print(table_row("floor: reference, --seed 1", first["floor"]["summary"]))
        for r in runs:
            print(table_row(f"{r['name']} ({' '.join(r['system_args'])})", r["system"]["summary"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     usage="run.sh --name NAME [options] -- <kokoro-say args>  |  run.sh --summary")
    parser.add_argument("--name", help="name of the system under test (results/NAME.json)")
    parser.add_argument("--bin", help="kokoro-say binary (default: <repo root>/build/bin/kokoro-say)")
    parser.add_argument("--corpus", default=str(HERE / "corpus.txt"))
    parser.add_argument("--limit", type=int, default=0, help="first N lines only (0: all)")
    parser.add_argument("--threads", type=int, default=2, help="threads for kokoro-say (unless in its args), ASR, DNSMOS")
    parser.add_argument("--cache", default=str(HERE / "cache"))
    parser.add_argument("--results", default=str(HERE / "results"))
    parser.add_argument("--summary", action="store_true", help="print the table of every results/*.json and exit")
    parser.add_argument("system_args", nargs=argparse.REMAINDER, help="-- then the kokoro-say arguments")
    opts = parser.parse_args()
    if opts.summary:
        print_summary(opts.results)
        return
    if not opts.name or not all(c.isalnum() or c in "-_." for c in opts.name):
        parser.error("--name NAME is required (letters, digits, - _ .)")
    extra = opts.system_args[1:] if opts.system_args[:1] == ["--"] else opts.system_args

    root = repo_root()
    binary = Path(opts.bin) if opts.bin else root / "build" / "bin" / "kokoro-say"
    started = time.monotonic()
    synth = Synthesizer(binary, root, opts.cache)
    lines = read_corpus(opts.corpus, opts.limit)
    system_args = with_threads(extra, opts.threads)
    sets = {"reference": reference_args(extra, 0, opts.threads),
            "floor": reference_args(extra, 1, opts.threads),
            "system": system_args}
    log(f"{len(lines)} lines; binary {binary}\n  system: {' '.join(system_args)}\n"
        f"  reference: {' '.join(sets['reference'])}")

    # Synthesis, sequential (the engine uses the cores itself).
    audio = {k: [] for k in sets}
    synth_seconds = {k: 0.0 for k in sets}
    run_dir = Path(opts.cache) / "runs" / opts.name
    for i, text in enumerate(lines):
        for kind, args in sets.items():
            if kind == "system":
                path = run_dir / f"{i:03d}.wav"
                info = synth.synthesize(text, args, path)
            else:
                path, info = synth.cached(text, args)
            synth_seconds[kind] += info["seconds"] or 0.0
            if not info["ok"]:
                log(f"  line {i + 1} {kind}: synthesis FAILED: {info['error']}")
            audio[kind].append((path, info))
        log(f"  synthesized {i + 1}/{len(lines)}")
    synthesis_done = time.monotonic()

    evaluator = Evaluator(opts.cache, opts.threads)
    files = {k: [] for k in sets}
    for i, text in enumerate(lines):
        ref_path, ref_info = audio["reference"][i]
        ref_audio = load_audio(ref_path)[0] if ref_info["ok"] else None
        for kind in sets:
            path, info = audio[kind][i]
            entry = {"index": i + 1, "text": text, "ok": info["ok"], "error": info["error"],
                     "synthesis_seconds": info["seconds"]}
            if info["ok"]:
                try:
                    sound, rate = load_audio(path)
                    entry["samples"], entry["sample_rate"] = int(sound.size), rate
                    entry.update(evaluator.evaluate(path, text))
                    if kind != "reference" and ref_audio is not None:
                        entry["vs_reference"] = spectral.compare(sound, ref_audio)
                except Exception as e:  # a broken file is one failed entry, not a failed run
                    entry.update({"ok": False, "error": f"evaluation failed: {e!r}"})
                    log(f"  line {i + 1} {kind}: {entry['error']}")
            files[kind].append(entry)
        log(f"  evaluated {i + 1}/{len(lines)}")

    result = {"name": opts.name, "system_args": system_args, "reference_args": sets["reference"],
              "floor_args": sets["floor"], "binary": str(binary), "binary_sha256": synth.binary_digest,
              "corpus": opts.corpus, "corpus_sha256": hashlib.sha256("\n".join(lines).encode()).hexdigest(),
              "lines": len(lines), "asr_settings": asr.SETTINGS,
              "seconds": {"synthesis": synth_seconds, "synthesis_wall": synthesis_done - started,
                          "evaluation_wall": time.monotonic() - synthesis_done,
                          "total_wall": time.monotonic() - started}}
    for kind in sets:
        result[kind] = {"summary": summarize(files[kind], files["reference"] if kind != "reference" else None),
                        "files": files[kind]}
    Path(opts.results).mkdir(parents=True, exist_ok=True)
    out = Path(opts.results) / f"{opts.name}.json"
    out.write_text(json.dumps(result, indent=1))

    print(table_header())
    print(table_row(f"reference ({' '.join(sets['reference'])})", result["reference"]["summary"]))
    print(table_row("floor: reference, --seed 1", result["floor"]["summary"]))
    print(table_row(f"{opts.name} ({' '.join(system_args)})", result["system"]["summary"]))
    log(f"wrote {out} ({result['seconds']['total_wall']:.0f} s)")


if __name__ == "__main__":
    main()
