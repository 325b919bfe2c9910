#!/usr/bin/env bash
# Creates the dev-only Python environment that runs the official Kokoro reference (PyPI kokoro==0.9.4)
# to regenerate tests/data/golden/. CI never needs it: the goldens are committed.
#
#   bash tools/reference/setup.sh          # idempotent; re-running only checks
#
# Torch comes from Debian (python3-torch 1.13.1) rather than PyPI so the venv stays small and offline-friendly;
# the venv sees it through --system-site-packages. kokoro is installed with --no-deps because its declared
# dependency misaki[en] (the G2P: spacy, phonemizer, espeak) is not needed to run KModel; the tool imports
# kokoro.model without running kokoro/__init__.py (which imports the pipeline and misaki).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${KOKORO_REF_VENV:-$repo_root/.venv-ref}"
py=/usr/bin/python3

# Pinned so the goldens can be reproduced bit for bit. transformers 4.46.3 is verified to import and run
# ALBERT on torch 1.13 (eager attention: 1.13 has no SDPA); tokenizers etc. follow from it.
KOKORO_VERSION=0.9.4
TRANSFORMERS_VERSION=4.46.3
LOGURU_VERSION=0.7.3
HF_HUB_VERSION=0.26.5

if ! dpkg -s python3-torch python3-venv python3-attr >/dev/null 2>&1; then
  apt-get update
  apt-get install -y python3-torch python3-venv python3-attr  # attr: kokoro/custom_stft.py imports it
fi

if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv --system-site-packages "$venv"
fi

# numpy is pinned to Debian's copy (torch 1.13 is built against numpy 1.x): the constraint stops pip from
# pulling a numpy 2 into the venv as a side effect of another package.
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
"$py" -c 'import numpy; print("numpy==" + numpy.__version__)' > "$constraints"

"$venv/bin/pip" install --quiet --disable-pip-version-check -c "$constraints" \
  "transformers==$TRANSFORMERS_VERSION" "loguru==$LOGURU_VERSION" "huggingface_hub==$HF_HUB_VERSION"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "kokoro==$KOKORO_VERSION"

# Smoke check: the reference model class imports and torch is the Debian build.
PYTHONPATH="$repo_root/tools/reference" "$venv/bin/python" -c 'import reference_model as r; print(r.versions())'
