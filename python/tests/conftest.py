"""Fixtures for kokoro_rt's tests. Run by ctest (python.pytest, tests/CMakeLists.txt) with KOKORO_RT_LIBRARY
pointing at the build tree's lib/ and KOKORO_RT_CAPI_SAY at the reference program; by hand:

    KOKORO_RT_LIBRARY=build/lib KOKORO_RT_CAPI_SAY=build/bin/capi_say PYTHONPATH=python python3 -m pytest python/tests

Against an installed package (pip install .), leave KOKORO_RT_LIBRARY and PYTHONPATH unset.
The model and assets must be there: a missing one fails the tests (kokoro_rt.ModelError), never skips them.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kokoro_rt

TEXT = "The quick brown fox jumps over the lazy dog. It was a bright cold day in April."
# Long enough that stopping it is seen to stop it: about 40 s of speech, several seconds of compute.
LONG_TEXT = " ".join(["It was a bright cold day in April, and the clocks were striking thirteen."] * 12)


@pytest.fixture(scope="session")
def engine() -> kokoro_rt.Engine:
    e = kokoro_rt.Engine()
    yield e
    e.close()


def subprocess_env() -> dict[str, str]:
    """The environment for a child Python that must import this same kokoro_rt, from any directory."""
    package_parent = str(Path(kokoro_rt.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])}
    if env.get("KOKORO_RT_LIBRARY"):
        env["KOKORO_RT_LIBRARY"] = os.path.abspath(env["KOKORO_RT_LIBRARY"])
    return env


def capi_say_path() -> str:
    path = os.environ.get("KOKORO_RT_CAPI_SAY")
    if not path:
        build = Path(os.environ.get("KOKORO_RT_LIBRARY", "build/lib")).parent
        path = str(build / "bin" / "capi_say")
    if not os.access(path, os.X_OK):
        pytest.fail(f"the reference program {path} is not built (ninja -C build capi_say, or set KOKORO_RT_CAPI_SAY)")
    return path


def capi_say(text: str, voice: str = "af_heart", seed: int = 0, mode: str | None = None,
             lang: str | None = None) -> np.ndarray:
    """The C API's audio for these arguments (python/tests/capi_say.c), as float32 samples."""
    out = subprocess.run([capi_say_path(), text, voice, str(seed), mode or "", lang or ""], capture_output=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return np.frombuffer(out.stdout, dtype=np.float32)
