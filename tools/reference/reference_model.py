"""Runs the official reference model (PyPI kokoro==0.9.4, KModel.forward_with_tokens) on weights from a .kokoro
file, with deterministic source noise, and captures the tensors at module boundaries.

Nothing here re-implements the model: weights are loaded into the official KModel, and the intermediate
tensors are read with forward hooks (plus one wrapped method, ProsodyPredictor.F0Ntrain, which is not a
module). Only torch's two random draws in the source module are replaced (see test_noise.py).
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import warnings

import numpy as np
import torch

import kokoro_file
import test_noise

# Parameters that the official checkpoint does not carry either, so KModel keeps its construction values:
#  - AdaIN1d wraps nn.InstanceNorm1d(affine=True) only to work around an old ONNX-export bug; the trained
#    model (StyleTTS2) used affine=False, so weight stays 1 and bias 0 (an identity affine).
#  - The ALBERT pooler, whose output KModel never uses (CustomAlbert returns last_hidden_state).
_ALLOWED_MISSING_SUFFIXES = {
    ".norm.weight": "InstanceNorm1d affine weight of AdaIN1d, set to 1 (identity)",
    ".norm.bias": "InstanceNorm1d affine bias of AdaIN1d, set to 0 (identity)",
}
_ALLOWED_MISSING_PREFIXES = {
    "bert.pooler.": "ALBERT pooler, unused by KModel (CustomAlbert returns last_hidden_state), set to 0",
}


def import_kmodel():
    """Imports kokoro.model.KModel without running kokoro/__init__.py.

    The package's __init__ also imports KPipeline and with it misaki (the G2P, with spacy and espeak), which
    the model does not need; a bare package object pointing at the installed directory skips it.
    """
    if "kokoro" not in sys.modules:
        spec = importlib.util.find_spec("kokoro")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("kokoro is not installed: run tools/reference/setup.sh and use .venv-ref/bin/python")
        package = types.ModuleType("kokoro")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        sys.modules["kokoro"] = package
    from kokoro.model import KModel  # noqa: E402  (import after the package stub is in place)
    return KModel


def versions() -> dict:
    from importlib.metadata import version
    import transformers
    try:  # Debian's torch reports "1.13.0a0"; the package version says which build it is
        debian = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"], capture_output=True,
                                text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        debian = "unknown"
    return {"kokoro": version("kokoro"), "torch": torch.__version__, "torch_debian_package": debian,
            "transformers": transformers.__version__, "numpy": np.__version__, "python": sys.version.split()[0]}


def configure_torch() -> None:
    # Harmless: the official DurationEncoder asks for dropout on single-layer LSTMs (inactive in eval anyway).
    warnings.filterwarnings("ignore", message="dropout option adds dropout after all but last recurrent layer")
    torch.set_default_dtype(torch.float32)
    torch.set_num_threads(2)
    torch.set_grad_enabled(False)


def _strip_weight_norm(model: torch.nn.Module) -> int:
    """Removes weight norm everywhere, leaving a plain `.weight` parameter that the file's folded weights
    load into exactly (re-deriving weight_g/weight_v would round-trip through a norm and a division)."""
    count = 0
    for module in model.modules():
        if hasattr(module, "weight_g") and hasattr(module, "weight_v"):
            torch.nn.utils.remove_weight_norm(module)
            count += 1
    return count


def load_kmodel(model_path: str):
    """Builds KModel from a .kokoro file. Returns (model, header, coverage) where coverage lists what every
    model parameter was set from. Raises if a parameter is missing from the file (other than the documented
    ones) or if the file holds a tensor the model does not have, or a shape differs."""
    KModel = import_kmodel()
    header, tensors = kokoro_file.read(model_path)
    config = header["config"]
    # KModel.__init__ always loads a checkpoint: give it an empty one so it neither downloads nor loads.
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.pth")
        torch.save({}, empty)
        model = KModel(repo_id="hexgrad/Kokoro-82M", config=config, model=empty, disable_complex=False)
    stripped = _strip_weight_norm(model)
    model.eval()

    state = model.state_dict()
    unused = sorted(set(tensors) - set(state))
    if unused:
        raise RuntimeError(f"{model_path}: {len(unused)} tensors match no KModel parameter, e.g. {unused[:5]}")
    loaded, defaulted = [], {}
    new_state = {}
    for name, value in state.items():
        if name in tensors:
            src = tensors[name]
            if tuple(src.shape) != tuple(value.shape):
                raise RuntimeError(f"{model_path}: tensor {name} has shape {list(src.shape)}, "
                                   f"KModel expects {list(value.shape)}")
            new_state[name] = torch.from_numpy(np.array(src, dtype=np.float32))
            loaded.append(name)
            continue
        reason = next((r for s, r in _ALLOWED_MISSING_SUFFIXES.items() if name.endswith(s)), None)
        reason = reason or next((r for p, r in _ALLOWED_MISSING_PREFIXES.items() if name.startswith(p)), None)
        if reason is None:
            raise RuntimeError(f"{model_path}: KModel parameter {name} {list(value.shape)} is not in the file")
        # Set explicitly rather than trusting construction-time init, so the run is reproducible.
        value = torch.ones_like(value) if name.endswith(".norm.weight") else torch.zeros_like(value)
        new_state[name] = value
        defaulted[name] = reason
    model.load_state_dict(new_state, strict=True)
    coverage = {"loaded": loaded, "defaulted": defaulted, "weight_norm_removed": stripped,
                "file_tensors": len(tensors)}
    return model, header, coverage


@contextlib.contextmanager
def deterministic_noise(model):
    """Replaces torch.rand / torch.randn_like, for calls made inside the generator's source module only,
    with the counter-based streams of test_noise.py. Any other call while active is an error, and each
    draw must happen exactly once per forward (checked on exit)."""
    source = model.decoder.generator.m_source
    sine = source.l_sin_gen
    where = []
    calls = []
    orig_rand, orig_randn_like = torch.rand, torch.randn_like

    def rand(*size, **kwargs):
        if where[-1:] != ["sine"]:
            raise RuntimeError("torch.rand called outside SineGen while deterministic noise is active")
        shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
        n = int(np.prod(shape))
        calls.append(("rand", shape))
        values = test_noise.uniform(test_noise.STREAM_SINE_PHASE, np.arange(n)).reshape(shape)
        return torch.from_numpy(values).to(kwargs.get("dtype") or torch.float32)

    def randn_like(t, **kwargs):
        if not where:
            raise RuntimeError("torch.randn_like called outside the source module while noise is patched")
        stream = test_noise.STREAM_SINE_NOISE if where[-1] == "sine" else test_noise.STREAM_SOURCE_NOISE
        calls.append((f"randn_like/{where[-1]}", tuple(t.shape)))
        values = test_noise.normal(stream, np.arange(t.numel())).reshape(tuple(t.shape))
        return torch.from_numpy(values).to(t.dtype)

    def scoped(label, forward):
        def wrapper(*args, **kwargs):
            where.append(label)
            try:
                return forward(*args, **kwargs)
            finally:
                where.pop()
        return wrapper

    sine.forward = scoped("sine", sine.forward)
    source.forward = scoped("source", source.forward)
    torch.rand, torch.randn_like = rand, randn_like
    try:
        yield calls
    finally:
        torch.rand, torch.randn_like = orig_rand, orig_randn_like
        del sine.forward, source.forward  # drop the instance attributes: class forward is visible again
    kinds = [c[0] for c in calls]
    if kinds != ["rand", "randn_like/sine", "randn_like/source"]:
        raise RuntimeError(f"unexpected random draws in the reference: {calls}")


class Capture:
    """Forward hooks that record module-boundary tensors of one forward_with_tokens call (batch 1).

    Tensors are stored without the batch dim, detached and cloned (later in-place ops in the reference, such
    as `xs += ...` in the generator, must not alter what was recorded)."""

    def __init__(self, model):
        self.model = model
        self.t: dict[str, torch.Tensor] = {}
        self._handles = []
        self._stage_parts: dict[int, list[torch.Tensor]] = {}
        gen = model.decoder.generator
        dec = model.decoder
        pred = model.predictor
        self._num_kernels = gen.num_kernels

        self._out(model.bert, "bert_dur", lambda o: o[0])                       # [T, 768]
        self._out(model.bert_encoder, "d_en", lambda o: o[0].transpose(0, 1))  # [512, T]
        self._out(pred.text_encoder, "d", lambda o: o[0])                       # [T, 640]
        self._out(pred.lstm, "lstm_x", lambda o: o[0][0])                       # [T, 512]
        self._out(pred.duration_proj, "duration_logits", lambda o: o[0])       # [T, 50]
        self._out(model.text_encoder, "t_en", lambda o: o[0])                   # [512, T]
        self._in(dec, "asr", 0)                                                 # [512, F]
        self._in(dec, "dec_in_F0", 1)                                           # [2F]
        self._in(dec, "dec_in_N", 2)                                            # [2F]
        self._out(dec.F0_conv, "dec_F0", lambda o: o[0])                        # [1, F]
        self._out(dec.N_conv, "dec_N", lambda o: o[0])                          # [1, F]
        self._out(dec.asr_res, "dec_asr_res", lambda o: o[0])                   # [64, F]
        self._out(dec.encode, "dec_encode", lambda o: o[0])                     # [1024, F]
        for i, block in enumerate(dec.decode):
            self._out(block, f"dec_decode_{i}", lambda o: o[0])                 # [1024, F] ... [512, 2F]
        self._in(gen.noise_convs[0], "gen_har", 0)                              # [22, n]
        for i, up in enumerate(gen.ups):
            self._out(up, f"gen_ups_{i}", lambda o: o[0])
            self._in(up, f"gen_ups_in_{i}", 0)                                  # leaky_relu(previous x)
        for k, block in enumerate(gen.resblocks):
            self._handles.append(block.register_forward_hook(self._stage_part_hook(k // self._num_kernels)))
        self._in(gen.conv_post, "gen_conv_post_in", 0)
        self._out(gen.conv_post, "gen_conv_post", lambda o: o[0])               # [22, n]

        original = pred.F0Ntrain

        def F0Ntrain(x, s):
            self.t["en"] = x[0].detach().clone()                                # [640, F]
            F0, N = original(x, s)
            self.t["F0_pred"] = F0[0].detach().clone()                          # [2F]
            self.t["N_pred"] = N[0].detach().clone()
            return F0, N
        pred.F0Ntrain = F0Ntrain
        self._restore_f0n = lambda: delattr(pred, "F0Ntrain")

    def _out(self, module, name, pick):
        def hook(_m, _inputs, output):
            self.t[name] = pick(output).detach().clone()
        self._handles.append(module.register_forward_hook(hook))

    def _in(self, module, name, index):
        def hook(_m, inputs):
            self.t[name] = inputs[index][0].detach().clone()
        self._handles.append(module.register_forward_pre_hook(hook))

    def _stage_part_hook(self, stage):
        def hook(_m, _inputs, output):
            self._stage_parts.setdefault(stage, []).append(output.detach().clone())
        return hook

    def close(self):
        for h in self._handles:
            h.remove()
        self._restore_f0n()

    def finish(self, speed: float) -> dict[str, torch.Tensor]:
        """Derives the tensors that are expressions rather than module outputs, with the reference's own ops
        in the reference's order so they are bit-identical to what it computed."""
        t = self.t
        # model.py: duration = torch.sigmoid(duration).sum(axis=-1) / speed
        t["dur_sum"] = torch.sigmoid(t.pop("duration_logits")).sum(axis=-1) / speed
        # istftnet.py Generator: xs = r0; xs += r1; xs += r2; x = xs / num_kernels
        for stage, parts in sorted(self._stage_parts.items()):
            if len(parts) != self._num_kernels:
                raise RuntimeError(f"generator stage {stage}: {len(parts)} resblock outputs")
            xs = parts[0].clone()
            for p in parts[1:]:
                xs += p
            t[f"gen_stage_{stage}"] = (xs / self._num_kernels)[0]
        return t


def run(model, input_ids: list[int], ref_s: np.ndarray, speed: float) -> dict[str, np.ndarray]:
    """One forward_with_tokens call with deterministic noise; returns every captured tensor as float32 numpy
    (pred_dur and input_ids as float32 too, since the container only holds f32). Also cross-checks the
    captured pieces against each other so a hook that picked the wrong tensor fails loudly."""
    import torch.nn.functional as F
    ids = torch.LongTensor([input_ids])
    style = torch.from_numpy(np.asarray(ref_s, dtype=np.float32).reshape(1, -1))
    cap = Capture(model)
    try:
        with deterministic_noise(model) as draws:
            audio, pred_dur = model.forward_with_tokens(ids, style, speed)
        t = cap.finish(speed)
    finally:
        cap.close()
    pred_dur = pred_dur.reshape(-1)
    expected = torch.round(t["dur_sum"]).clamp(min=1).long()
    if not torch.equal(expected, pred_dur):
        raise RuntimeError("dur_sum does not round to pred_dur")
    if not (torch.equal(t.pop("dec_in_F0"), t["F0_pred"]) and torch.equal(t.pop("dec_in_N"), t["N_pred"])):
        raise RuntimeError("decoder inputs differ from F0Ntrain outputs")
    if not torch.equal(t.pop("gen_ups_in_0"), F.leaky_relu(t["dec_decode_3"], 0.1)):
        raise RuntimeError("generator input is not leaky_relu(dec_decode_3)")
    if not torch.equal(t.pop("gen_ups_in_1"), F.leaky_relu(t["gen_stage_0"], 0.1)):
        raise RuntimeError("gen_stage_0 is not what ups.1 consumed")
    if not torch.equal(t.pop("gen_conv_post_in"), F.leaky_relu(t["gen_stage_1"])):
        raise RuntimeError("gen_stage_1 is not what conv_post consumed")
    t["pred_dur"] = pred_dur
    t["audio"] = audio.reshape(-1)
    t["input_ids"] = ids[0]
    t["ref_s"] = style[0]
    out = {k: v.detach().to(torch.float32).numpy() for k, v in t.items()}
    out["_draws"] = draws
    return out
