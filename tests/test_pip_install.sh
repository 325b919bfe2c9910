#!/usr/bin/env bash
# `pip install .` as a user runs it (docs/python.md): a fresh venv (with Debian's site packages: numpy, cffi,
# pytest, soundfile; scikit-build-core comes from PyPI into pip's build environment), the package built from
# SOURCE by scikit-build-core (build tree kept in SOURCE/build-python, so a rerun is incremental), then the
# issue's one-liner and the Python tests against the installed package. Compiles libkokoro a second time:
# ctest runs it only when configured with -DKOKORO_TEST_PIP_INSTALL=ON (label pip).
#
#   tests/test_pip_install.sh SOURCE CAPI_SAY
set -euo pipefail
src=$(cd "$1" && pwd)
capi_say=$(readlink -f "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
start=$(date +%s)
"$work/venv/bin/pip" install --disable-pip-version-check --quiet "$src"
echo "pip install: $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$work"  # not the source tree: the installed package must be the one imported
"$work/venv/bin/python" -c "import kokoro_rt; a = kokoro_rt.Engine().speak('Hello.'); print(a.dtype, a.shape)"
"$work/venv/bin/python" -c "import kokoro_rt, sys; sys.exit(0 if kokoro_rt.__file__.startswith('$work/venv/') else 1)"
env -u KOKORO_RT_LIBRARY -u PYTHONPATH KOKORO_RT_CAPI_SAY="$capi_say" \
  "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$src/python/tests"
