#!/usr/bin/env bash
# Perceptual-quality harness (issue 11 point 3): WER, DNSMOS, LSD/MCD, duration, level and leak of
# kokoro-say's audio against whole-sentence exact mode. Usage and columns: bench/quality/README.md.
#
#   bench/quality/run.sh --name NAME [--bin PATH] [--limit N] -- <kokoro-say args, e.g. --mode exact>
#   bench/quality/run.sh --summary          # the table of every results/*.json
#
# Needs PyPI (first run only); never used at run time or by CI.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
stamp="$venv/.installed-requirements"

# (Re)install only when the requirements changed since the last successful install.
if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
if ! cmp -s "$here/requirements.txt" "$stamp"; then
  "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
  # openai-whisper only for its EnglishTextNormalizer: --no-deps keeps torch out.
  "$venv/bin/pip" install --quiet --no-deps openai-whisper==20250625
  cp "$here/requirements.txt" "$stamp"
fi

exec "$venv/bin/python" "$here/run.py" "$@"
