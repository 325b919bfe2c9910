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
    # The package holds no model until fetch_model() puts one there; this one is the source tree's (the
    # package's libkokoro is no build-tree binary, and an installed engine does not look in the build tree).
    model = Path(__file__).resolve().parents[2] / "models" / "kokoro-v1_0.kokoro"
    if not os.environ.get("KOKORO_MODEL"):
        assert model.exists(), f"{model} is missing (scripts/fetch-assets)"
        env["KOKORO_MODEL"] = str(model)
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
    # A portable build's package has a variant per x86-64 level: the loader maps the best one for this CPU
    # from lib/kokoro-rt/glibc-hwcaps/<level>/, else lib/kokoro-rt/ itself.
    mapped = {line.split()[-1] for line in maps.stdout.decode().splitlines()
              if line.endswith("/libkokoro_compute.so.0")}
    compute_dir = package / "lib" / "kokoro-rt"
    assert len(mapped) == 1, mapped
    mapped = Path(next(iter(mapped)))
    assert mapped.parent == compute_dir or mapped.parent.parent == compute_dir / "glibc-hwcaps", mapped
    assert str(build / "lib") not in maps.stdout.decode()
