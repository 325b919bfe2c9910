"""Regenerates tests/data/golden/*.kokoro: the official reference (PyPI kokoro==0.9.4,
KModel.forward_with_tokens) run on our converted weights, with deterministic source noise, captured at every
module boundary. CI compares the C++ engine against these files without torch or network.

    bash tools/reference/setup.sh
    .venv-ref/bin/python tools/reference/make_goldens.py [--model models/kokoro-v1_0.kokoro] [--out tests/data/golden]

Deterministic: same model file -> byte-identical golden files. docs/golden-data.md documents the contents,
the noise generator and the reductions.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kokoro_file  # noqa: E402
import reference_model  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOICE_DIR = "/work/shared/assets/voices"
VOICE = "af_heart"

# Phoneme strings are misaki 0.9.4 en-us output (tests/data/g2p/expected_en-us.jsonl), copied here so the
# goldens do not move when that corpus changes. The long ones join several corpus sentences with a space, as
# one KPipeline chunk would.
_S0 = "ðə sˈɪTi kˈWnsᵊl vˈOTᵻd ˌɔn tˈuzdˌA tʊ əpɹˈuv ɐ nˈu bˈʌʤət fɔɹ pˈʌblɪk skˈulz."
_S1 = "əfˈɪʃᵊlz sˈɛd ðə stˈɔɹm hæd nˈɑkt ˈWt pˈWəɹ tə mˈɔɹ ðən tˈu hˈʌndɹəd θˈWzᵊnd hˈOmz."
_S2 = ("ðə kˈʌmpᵊni ɹəpˈɔɹTᵻd stɹˈɔŋ ˈɜɹnɪŋz fɔɹ ðə θˈɜɹd kwˈɔɹTəɹ, bˈiTɪŋ ˈænələsts "
       "ˌɛkspˌɛktˈAʃənz.")
_S3 = "fˈIəɹfˌITəɹz bˈæTᵊld ðə blˈAz fɔɹ sˈɛvəɹəl ˈWəɹz bəfˈɔɹ bɹˈɪŋɪŋ ɪt ˈʌndəɹ kəntɹˈOl."
_S4 = "ðə pɹˈɛzədˌɛnt ɪz ɪkspˈɛktᵻd tə sˈIn ðə bˈɪl ˈɪntu lˈɔ lˈATəɹ ðɪs wˈik."
_S5 = "hˈɛvi ɹˈAn kˈɔzd flˈʌdɪŋ ɪn sˈɛvəɹəl lˌOlˈIɪŋ nˈAbəɹhˌʊdz əkɹˈɔs ðə ɹˈiʤᵊn."
_COFFEE = "lˈɛts ɡɹˈæb sˌʌm kˈɔfi bəfˈɔɹ ðə mˈiTɪŋ."

# name, text, phonemes, speed.
CASES = [
    ("one_phoneme", "a", "ɐ", 1.0),
    ("short_20", "My PIN is secret.", "mˌI pˈɪn ɪz sˈikɹət.", 1.0),
    ("medium_150", "The city council voted on Tuesday to approve a new budget for public schools. "
     "The president is expected to sign the bill into law later this week.", f"{_S0} {_S4}", 1.0),
    ("long_488", "(six news sentences, tests/data/g2p corpus rows 0-5)", " ".join([_S0, _S1, _S2, _S3, _S4, _S5]),
     1.0),
    ("speed_0.8", "Let's grab some coffee before the meeting.", _COFFEE, 0.8),
    ("speed_1.3", "Let's grab some coffee before the meeting.", _COFFEE, 1.3),
]

# What each case stores whole (budget: all goldens <= 6 MB, each file <= ~2 MB). A tensor is stored whole if
# it has at most `full_limit` values and is not in `reduce`; otherwise it is reduced (see below).
#  - one_phoneme is the module-by-module case: everything whole except five tensors that alone would take
#    5 MB; the whole ones still cut the chain into short runs (encode -> decode_0..2 -> dec_decode_2 whole;
#    dec_decode_3 -> ups_0 -> stage_0 whole; stage_0 -> ups_1 -> stage_1 -> conv_post whole -> audio).
#  - short_20 and speed_0.8 keep the text side (T-sized tensors) whole; speed_1.3 shares that text side with
#    speed_0.8 (speed only acts after the duration head), so it and the long cases reduce everything large.
POLICY = {
    "one_phoneme": {"full_limit": None, "reduce": {"dec_decode_0", "dec_decode_1", "gen_ups_0", "gen_ups_1",
                                                   "gen_stage_1"}},
    "short_20": {"full_limit": 32768, "reduce": set()},
    "speed_0.8": {"full_limit": 32768, "reduce": set()},
    "speed_1.3": {"full_limit": 4096, "reduce": set()},
    "medium_150": {"full_limit": 4096, "reduce": set()},
    "long_488": {"full_limit": 4096, "reduce": set()},
}

# Where time runs in each captured tensor (batch dim already dropped); tensors not listed are always whole.
TIME_AXIS = {
    "bert_dur": 0, "d_en": 1, "d": 0, "lstm_x": 0, "t_en": 1, "en": 1, "asr": 1,
    "dec_F0": 1, "dec_N": 1, "dec_asr_res": 1, "dec_encode": 1,
    "dec_decode_0": 1, "dec_decode_1": 1, "dec_decode_2": 1, "dec_decode_3": 1,
    "gen_har": 1, "gen_ups_0": 1, "gen_stage_0": 1, "gen_ups_1": 1, "gen_stage_1": 1, "gen_conv_post": 1,
    "audio": 0,
}
ORDER = ["input_ids", "ref_s", "bert_dur", "d_en", "d", "lstm_x", "dur_sum", "pred_dur", "en", "F0_pred",
         "N_pred", "t_en", "asr", "dec_F0", "dec_N", "dec_asr_res", "dec_encode", "dec_decode_0",
         "dec_decode_1", "dec_decode_2", "dec_decode_3", "gen_har", "gen_ups_0", "gen_stage_0", "gen_ups_1",
         "gen_stage_1", "gen_conv_post", "audio"]

# Reduction of a large tensor (see docs/golden-data.md): keep the time steps listed in `<name>.index` (the
# first HEAD, the last TAIL, and every stride-th from 0, the stride chosen so that about KEEP_VALUES values
# remain, but at least MIN_STRIDED strided steps) plus, per channel, the sum and the sum of absolute values over ALL time steps (`<name>.sum`,
# `<name>.abssum`, accumulated in float64 and stored as f32) so an error anywhere still shows.
KEEP_VALUES = 4096
HEAD = TAIL = 2
MIN_STRIDED = 4


def reduction_index(length: int, channels: int) -> tuple[np.ndarray, int]:
    """The kept time steps: first HEAD, last TAIL, and 0, s, 2s, ... with s = ceil(length / budget)."""
    budget = max(MIN_STRIDED, KEEP_VALUES // channels - HEAD - TAIL)
    stride = max(1, -(-length // budget))
    keep = set(range(min(HEAD, length))) | set(range(max(0, length - TAIL), length))
    keep |= set(range(0, length, stride))
    return np.array(sorted(keep), dtype=np.int64), stride


def add_tensor(name: str, x: np.ndarray, policy: dict, tensors: dict, reductions: dict) -> None:
    limit = policy["full_limit"]
    if name not in TIME_AXIS or (name not in policy["reduce"] and (limit is None or x.size <= limit)):
        tensors[name] = x
        return
    axis = TIME_AXIS[name]
    length = x.shape[axis]
    channels = x.size // length
    index, stride = reduction_index(length, channels)
    tensors[name] = np.take(x, index, axis=axis)
    tensors[f"{name}.index"] = index.astype(np.float32)  # exact: indices < 2^24
    # Shape: the full shape without the time axis, [1] for the 1-D audio.
    tensors[f"{name}.sum"] = np.atleast_1d(x.astype(np.float64).sum(axis=axis)).astype(np.float32)
    tensors[f"{name}.abssum"] = np.atleast_1d(np.abs(x.astype(np.float64)).sum(axis=axis)).astype(np.float32)
    reductions[name] = {"full_shape": list(x.shape), "time_axis": axis, "head": HEAD, "tail": TAIL,
                        "stride": stride, "kept": int(index.size)}


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description="Regenerate the reference golden files.")
    ap.add_argument("--model", default=os.path.join(REPO, "models", "kokoro-v1_0.kokoro"))
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "data", "golden"))
    ap.add_argument("--cases", nargs="*", help="only these case names")
    args = ap.parse_args()

    reference_model.configure_torch()
    model, header, coverage = reference_model.load_kmodel(args.model)
    vocab = header["config"]["vocab"]
    versions = reference_model.versions()
    model_sha = sha256(args.model)
    pack = np.fromfile(os.path.join(VOICE_DIR, f"{VOICE}.bin"), dtype="<f4").reshape(-1, 1, 256)
    print(f"model {args.model}: {coverage['file_tensors']} tensors, {len(coverage['loaded'])} KModel "
          f"parameters loaded, {len(coverage['defaulted'])} set to documented defaults, "
          f"{coverage['weight_norm_removed']} weight-norm modules folded")
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()))
    os.makedirs(args.out, exist_ok=True)

    total = 0
    for name, text, phonemes, speed in CASES:
        if args.cases and name not in args.cases:
            continue
        unknown = sorted({p for p in phonemes if p not in vocab})
        if unknown:
            raise SystemExit(f"case {name}: phonemes {unknown} are not in the vocab")
        if len(phonemes) + 2 > model.context_length:
            raise SystemExit(f"case {name}: {len(phonemes)} phonemes exceed the context")
        input_ids = [0, *[vocab[p] for p in phonemes], 0]
        style_row = len(phonemes) - 1  # KPipeline.infer: pack[len(ps) - 1]
        ref_s = pack[style_row, 0]
        started = time.time()
        captured = reference_model.run(model, input_ids, ref_s, speed)
        draws = captured.pop("_draws")
        seconds = time.time() - started
        missing = set(ORDER) ^ set(captured)
        if missing:
            raise SystemExit(f"case {name}: captured set differs from the expected one: {sorted(missing)}")

        tensors, reductions = {}, {}
        for key in ORDER:
            add_tensor(key, captured[key], POLICY[name], tensors, reductions)
        frames = int(captured["pred_dur"].sum())
        config = {
            "kind": "kokoro-rt golden reference data",
            "case": name, "text": text, "phonemes": phonemes, "num_phonemes": len(phonemes),
            "input_ids": input_ids, "voice": VOICE, "style_row": style_row, "speed": speed,
            "frames": frames, "audio_samples": int(captured["audio"].size),
            "reference": {"entry": "kokoro.model.KModel.forward_with_tokens", **versions,
                          "torch_threads": 2, "dtype": "float32", "disable_complex": False},
            "model_file": {"path": os.path.relpath(args.model, REPO), "sha256": model_sha,
                           "source": header.get("source", "")},
            "noise": {"generator": "tools/reference/test_noise.py", "draws": [list(map(str, d)) for d in draws]},
            "reduced": reductions,
            "reduction_rule": ("kept time steps are <name>.index (first head, last tail, and every stride-th "
                               "from 0); <name>.sum/<name>.abssum are per-channel sums over all time steps "
                               "(float64 accumulation, stored f32); shapes drop the batch dim"),
        }
        path = os.path.join(args.out, f"{name}.kokoro")
        size = kokoro_file.write(path, config, tensors, source=f"KModel.forward_with_tokens on {config['model_file']['path']}",
                                 converter="tools/reference/make_goldens.py")
        _, back = kokoro_file.read(path)
        if list(back) != list(tensors) or not all(np.array_equal(back[k], tensors[k]) for k in tensors):
            bad = [k for k in tensors if k not in back or not np.array_equal(back[k], tensors[k])]
            raise SystemExit(f"{path}: read-back differs from what was written: {bad}")
        total += size
        print(f"{name:12s} T={len(input_ids):3d} F={frames:5d} samples={captured['audio'].size:7d} "
              f"speed={speed} reduced={len(reductions):2d} -> {size / 1e6:.3f} MB "
              f"({seconds:.1f} s) |audio|max={np.abs(captured['audio']).max():.4f}")
    print(f"total {total / 1e6:.3f} MB in {args.out}")


if __name__ == "__main__":
    main()
