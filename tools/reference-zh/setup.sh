#!/usr/bin/env bash
# Creates the dev-only venv that runs misaki's Mandarin G2P as KPipeline 0.9.4 uses it for Kokoro-82M v1.0
# (the engine and CI never need it): <repo>/.venv-zh, or $ZH_VENV. After this, reference.py runs offline.
#
#   tools/reference-zh/setup.sh
#   .venv-zh/bin/python tools/reference-zh/reference.py tests/data/zh/corpus.txt > tests/data/zh/expected.txt
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv="${ZH_VENV:-$repo/.venv-zh}"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  "misaki[zh]==0.9.4" jieba==0.42.1 pypinyin==0.55.0 cn2an==0.5.24 proces==0.1.7 ordered-set==4.1.0 \
  pypinyin-dict==0.9.0 addict==2.4.0
echo "reference-zh: ready ($venv)"
