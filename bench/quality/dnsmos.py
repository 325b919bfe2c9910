"""DNSMOS P.835 (SIG, BAK, OVRL) with the ONNX model shipped in PyPI `speechmos`, run by onnxruntime.

Computed the way speechmos does it (its dnsmos.py, read, not imported: it pulls librosa and requests):
16 kHz audio in [-1, 1]; a clip shorter than 9.01 s is doubled (appended to itself) until it is long
enough; windows of 9.01 s (144160 samples) every 1 s, floor(len / 16000 - 9.01) + 1 of them (minus the
few that float rounding makes one sample short, below); each window's
raw SIG/BAK/OVRL from sig_bak_ovr.onnx goes through the non-personalised polynomial fit below; the clip's
scores are the means over windows.
"""
import importlib.util
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000
WINDOW_SECONDS = 9.01
WINDOW = int(WINDOW_SECONDS * SAMPLE_RATE)
# Polynomials mapping the network's raw outputs to P.835 MOS (highest power first), DNSMOS non-personalised.
POLY_SIG = np.poly1d([-0.08397278, 1.22083953, 0.0052439])
POLY_BAK = np.poly1d([-0.13166888, 1.60915514, -0.39604546])
POLY_OVRL = np.poly1d([-0.06766283, 1.11546468, 0.04602535])


def model_path():
    spec = importlib.util.find_spec("speechmos")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("Python package speechmos is not installed (bench/quality/run.sh installs it)")
    path = Path(list(spec.submodule_search_locations)[0]) / "dnsmos_models" / "sig_bak_ovr.onnx"
    if not path.is_file():
        raise RuntimeError(f"DNSMOS model missing: {path}")
    return path


class Dnsmos:
    def __init__(self, threads=2):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_path()), options, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name

    def score(self, audio_16k):
        audio = np.clip(np.asarray(audio_16k, dtype=np.float32), -1.0, 1.0)
        if audio.size == 0:
            raise ValueError("empty audio")
        while audio.size < WINDOW:
            audio = np.concatenate([audio, audio])
        hops = int(np.floor(audio.size / SAMPLE_RATE) - WINDOW_SECONDS) + 1
        # Window ends computed in floating point as speechmos does: for some offsets (idx + 9.01) * 16000
        # rounds down to one sample short and that window is skipped there, so it is skipped here too.
        windows = [audio[h * SAMPLE_RATE: int((h + WINDOW_SECONDS) * SAMPLE_RATE)] for h in range(hops)]
        raw = np.concatenate([self.session.run(None, {self.input_name: w[np.newaxis, :]})[0]
                              for w in windows if w.size >= WINDOW])
        return {"sig": float(np.mean(POLY_SIG(raw[:, 0]))),
                "bak": float(np.mean(POLY_BAK(raw[:, 1]))),
                "ovrl": float(np.mean(POLY_OVRL(raw[:, 2])))}
