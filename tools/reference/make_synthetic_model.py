"""Writes a .kokoro model file with random weights in KModel's layout, for exercising the reference tooling
(and kokoro_file.py's writer) without the real converted weights.

    .venv-ref/bin/python tools/reference/make_synthetic_model.py OUT.kokoro [--config assets/config.json]

Names and shapes come from the official KModel built from the config, with weight norm folded (plain
`.weight`), and the tensors the official checkpoint lacks (AdaIN1d InstanceNorm affine, ALBERT pooler) left
out, as in the real file. The duration head's bias is shifted so random weights give short durations.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kokoro_file  # noqa: E402
import reference_model  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--config", default="/work/shared/assets/config.json")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    reference_model.configure_torch()
    torch.manual_seed(args.seed)
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    KModel = reference_model.import_kmodel()
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.pth")
        torch.save({}, empty)
        model = KModel(repo_id="hexgrad/Kokoro-82M", config=config, model=empty)
    for m in model.modules():
        if hasattr(m, "weight_g"):
            torch.nn.utils.remove_weight_norm(m)
    tensors = {}
    for name, value in model.state_dict().items():
        if name.endswith((".norm.weight", ".norm.bias")) or name.startswith("bert.pooler."):
            continue
        tensors[name] = value.numpy().astype(np.float32)
    tensors["predictor.duration_proj.linear_layer.bias"] -= 3.0  # sigmoid ~0.05 x 50 bins: ~2.5 frames
    size = kokoro_file.write(args.out, config, tensors, source=f"synthetic random weights, seed {args.seed}")
    print(f"wrote {args.out}: {len(tensors)} tensors, {size} bytes")


if __name__ == "__main__":
    main()
