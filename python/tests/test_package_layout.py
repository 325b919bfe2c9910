"""What `pip install .` puts into the package, made from the build tree without compiling anything: the CMake
install component `runtime` (pyproject.toml installs only it) into a package directory beside a copy of the
Python sources, then a child Python imports that package with no KOKORO_RT_LIBRARY: its own libkokoro, found
by the package, finds its compute library through its RUNPATH. The full `pip install .` (scikit-build-core,
PyPI, a second compile) is timed and run by hand: docs/python.md."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kokoro_rt


def test_runtime_component_is_a_working_package(tmp_path):
    lib = os.environ.get("KOKORO_RT_LIBRARY")
    if not lib:
        pytest.skip("runs against a build tree (KOKORO_RT_LIBRARY); an installed package is its own check")
    build = (Path(lib) if Path(lib).is_dir() else Path(lib).parent).resolve().parent
    package = tmp_path / "kokoro_rt"
    out = subprocess.run(["cmake", "--install", str(build), "--component", "runtime", "--prefix", str(package)],
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    source = Path(kokoro_rt.__file__).resolve().parent
    for f in list(source.glob("*.py")) + [source / "py.typed"]:
        shutil.copy(f, package / f.name)
    for expected in ["lib/libkokoro.so.0", "lib/kokoro-rt/libkokoro_compute.so.0", "bin/kokoro-fetch-model",
                     "bin/kokoro-convert", "libexec/kokoro-rt/fetch-assets", "share/kokoro-rt/data"]:
        assert (package / expected).exists(), expected
    assert not (package / "bin" / "kokoro-say").exists()  # the other programs are not part of it
    env = {k: v for k, v in os.environ.items() if k not in ("KOKORO_RT_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(tmp_path)
    code = ("import kokoro_rt, kokoro_rt._ffi as f; a = kokoro_rt.Engine().speak('Hello.'); "
            "print(f.library_path()); print(kokoro_rt.data_dir()); print(a.size)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    lib_path, data, samples = out.stdout.decode().split()
    assert Path(lib_path).resolve() == (package / "lib" / "libkokoro.so.0").resolve()
    assert Path(data) == package / "share" / "kokoro-rt"
    assert int(samples) > 0
    # Its libkokoro resolves the compute library inside the package, not the build tree's.
    maps = subprocess.run([sys.executable, "-c", "import kokoro_rt; kokoro_rt.Engine(); "
                           "print(open('/proc/self/maps').read())"], capture_output=True, timeout=300, env=env)
    assert str(package / "lib" / "kokoro-rt" / "libkokoro_compute.so.0") in maps.stdout.decode()
    assert str(build / "lib") not in maps.stdout.decode()
