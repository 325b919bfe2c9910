"""Runs kokoro-say once per line; caches audio that depends only on (binary, model, args, text)."""
import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

# kokoro-say options that change *what* is said or by whom: the reference copies them from the system's
# arguments so that both speak the same text with the same voice, speed and noise kind.
CONTENT_OPTIONS_WITH_VALUE = ("--voice", "--speed", "--lang", "--model", "--assets")
CONTENT_FLAGS = ("--phonemes-in", "--reference-noise")


def option_value(args, name):
    """Value of `--name V` or `--name=V` in args (last one wins), else None."""
    value = None
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(name + "="):
            value = a[len(name) + 1:]
    return value


def with_threads(args, threads):
    return list(args) if option_value(args, "--threads") is not None else list(args) + ["--threads", str(threads)]


def reference_args(system_args, seed, threads):
    """Whole-sentence exact mode in fp32 (the reference computation) with the system's content options.

    Every choice is spelled out, never left to kokoro-say's defaults: those move (the default precision
    became bf16 where the CPU has it, the default mode slice) and KOKORO_PRECISION would change them too."""
    args = []
    for name in CONTENT_OPTIONS_WITH_VALUE:
        value = option_value(system_args, name)
        if value is not None:
            args += [name, value]
    args += [f for f in CONTENT_FLAGS if f in system_args]
    return args + ["--mode", "exact", "--first-words", "0", "--precision", "fp32", "--seed", str(seed),
                   "--threads", str(threads)]


def _file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Synthesizer:
    def __init__(self, binary, repo_root, cache_dir, timeout_seconds=600):
        self.binary = Path(binary)
        self.repo_root = Path(repo_root)
        self.cache_dir = Path(cache_dir)
        self.timeout = timeout_seconds
        if not self.binary.is_file() or not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"kokoro-say not found or not executable: {self.binary} (build it, or pass --bin)")
        self.binary_digest = _file_digest(self.binary)

    def _model_identity(self, args):
        model = option_value(args, "--model") or os.environ.get("KOKORO_MODEL") or "models/kokoro-v1_0.kokoro"
        path = (self.repo_root / model).resolve()
        if not path.is_file():
            return str(path)  # kokoro-say will report it; nothing to cache against
        st = path.stat()
        return f"{path}:{st.st_size}:{st.st_mtime_ns}"

    def synthesize(self, text, args, out_path):
        """Runs kokoro-say; returns {ok, seconds, error}. A failure is reported, never raised."""
        out_path = Path(out_path)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        partial = out_path.with_name(out_path.name + ".partial.wav")
        partial.unlink(missing_ok=True)
        command = [str(self.binary), "-q", "-o", str(partial), *args, "--", text]
        start = time.monotonic()
        try:
            done = subprocess.run(command, cwd=self.repo_root, capture_output=True, text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            partial.unlink(missing_ok=True)
            return {"ok": False, "seconds": time.monotonic() - start, "error": f"timed out after {self.timeout} s"}
        seconds = time.monotonic() - start
        if done.returncode != 0 or not partial.is_file() or partial.stat().st_size <= 44:
            partial.unlink(missing_ok=True)
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return {"ok": False, "seconds": seconds, "error": f"exit {done.returncode}: " + " | ".join(tail)}
        os.replace(partial, out_path)
        return {"ok": True, "seconds": seconds, "error": None}

    def cached(self, text, args):
        """Audio for (binary, model, args, text), synthesized once and kept in the cache."""
        key = hashlib.sha256(json.dumps([self.binary_digest, self._model_identity(args), list(args), text])
                             .encode()).hexdigest()[:32]
        path = self.cache_dir / "audio" / f"{key}.wav"
        if path.is_file():
            return path, {"ok": True, "seconds": None, "error": None, "cached": True}
        info = self.synthesize(text, args, path)
        info["cached"] = False
        return path, info
