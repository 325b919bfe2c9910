#!/usr/bin/env bash
# Creates the dev-only Python venv that runs misaki 0.9.4's Japanese G2P (JAG2P, the "cutlet" version that
# kokoro 0.9.4's KPipeline(lang_code='j') builds) to write the expected phonemes under tests/data/ja/.
# Not needed to build or test the engine: the expectations are committed. Idempotent; offline after the
# pip install.
#
#   tools/reference-ja/setup.sh          # creates <repo>/.venv-ja (or $JA_VENV)
#   tools/reference-ja/make_expected.py  # then: tests/data/ja/corpus.txt -> tests/data/ja/expected.tsv
#
# Two of misaki[ja]'s requirements are left out on purpose:
#  * unidic (PyPI) holds no dictionary: it downloads UniDic 3.1 from outside PyPI at `python -m unidic
#    download`, which cannot be reached here. Without it, fugashi's Tagger() falls back to unidic-lite
#    (UniDic 2.1.2), the same dictionary the engine maps at run time, so the comparison is like for like.
#  * pyopenjtalk has no wheel for this Python and is only used by JAG2P(version='pyopenjtalk'), which
#    KPipeline does not use; misaki/ja.py imports it at module level, so make_expected.py puts a stub
#    module (stub/pyopenjtalk.py) on the path that raises if it is ever called.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${JA_VENV:-$repo/.venv-ja}"

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" - <<'PY'
import importlib.metadata as md, unidic_lite
print("reference-ja venv ready: misaki", md.version("misaki"), "fugashi", md.version("fugashi"),
      "dictionary", unidic_lite.DICDIR)
PY
