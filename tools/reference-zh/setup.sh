#!/usr/bin/env bash
# Creates tools/reference-zh/venv with misaki's Mandarin G2P as KPipeline 0.9.4 uses it (dev tool only; the
# engine and CI never need it). After this, reference.py runs offline.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python3 -m venv "$here/venv"
"$here/venv/bin/pip" install --quiet --disable-pip-version-check \
  "misaki[zh]==0.9.4" jieba==0.42.1 pypinyin==0.55.0 cn2an==0.5.24 ordered-set==4.1.0 pypinyin-dict==0.9.0
echo "reference-zh: ready ($here/venv)"
