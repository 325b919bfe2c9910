"""Writes a full-size checkpoint in the official kokoro-v1_0.pth layout from a .kokoro model file, so that
`kokoro-convert --pth` can be checked end to end on a real torch.save archive of the whole model.

The official file is torch.save({'bert': sd, 'bert_encoder': sd, 'predictor': sd, 'text_encoder': sd,
'decoder': sd}) with weight-normed layers stored as weight_g / weight_v. This builds exactly that from a KModel
whose weights come from the model file (weight_v = W, weight_g = ||W|| over all dims but 0), then checks that
converting it back reproduces the model file.

    .venv-ref/bin/python tools/reference/export_pth.py models/kokoro-v1_0.kokoro /tmp/kokoro-export.pth
    build/bin/kokoro-convert --pth /tmp/kokoro-export.pth -o /tmp/from-pth.kokoro
    .venv-ref/bin/python tools/reference/export_pth.py --compare models/kokoro-v1_0.kokoro /tmp/from-pth.kokoro
"""
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kokoro_file  # noqa: E402
from reference_model import configure_torch, import_kmodel  # noqa: E402


def export(model_path: str, out_path: str) -> None:
    configure_torch()
    KModel = import_kmodel()
    header, tensors = kokoro_file.read(model_path)
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.pth")
        torch.save({}, empty)
        model = KModel(repo_id="hexgrad/Kokoro-82M", config=header["config"], model=empty)
    state = model.state_dict()
    new_state = {}
    for name, value in state.items():
        if name.endswith(".weight_v") or name.endswith(".weight_g"):
            w = torch.from_numpy(np.array(tensors[name[:-2]], dtype=np.float32))
            if name.endswith(".weight_v"):
                new_state[name] = w
            else:
                dims = tuple(range(1, w.dim()))
                new_state[name] = torch.linalg.vector_norm(w, dim=dims, keepdim=True)
        elif name in tensors:
            new_state[name] = torch.from_numpy(np.array(tensors[name], dtype=np.float32))
        else:
            new_state[name] = value  # pooler / identity InstanceNorm affines, as KModel initialises them
    model.load_state_dict(new_state, strict=True)
    parts = {k: getattr(model, k).state_dict() for k in ("bert", "bert_encoder", "predictor", "text_encoder", "decoder")}
    torch.save(parts, out_path)
    print(f"wrote {out_path}: {sum(len(p) for p in parts.values())} tensors, {os.path.getsize(out_path) / 1e6:.1f} MB")


def compare(a_path: str, b_path: str) -> None:
    _, a = kokoro_file.read(a_path)
    _, b = kokoro_file.read(b_path)
    missing = sorted(set(a) - set(b))
    worst, worst_name = 0.0, ""
    for name in a:
        if name not in b:
            continue
        x, y = np.asarray(a[name], dtype=np.float64), np.asarray(b[name], dtype=np.float64)
        rel = float(np.max(np.abs(x - y)) / max(np.max(np.abs(x)), 1e-30))
        if rel > worst:
            worst, worst_name = rel, name
    print(f"{len(a)} tensors in {a_path}; missing from {b_path}: {missing}; max relative difference "
          f"{worst:.3e} ({worst_name})")
    sys.exit(1 if missing or worst > 1e-5 else 0)


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        export(sys.argv[1], sys.argv[2])
