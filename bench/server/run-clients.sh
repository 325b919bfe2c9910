#!/usr/bin/env bash
# Runs bench/server/clients.py (the openai and wyoming PyPI packages as clients) against a kokoro-server it
# starts on free loopback ports. Makes bench/server/.venv from requirements.txt the first time (PyPI).
#   bench/server/run-clients.sh [OUT_DIR]      (default: bench/server/clients-out)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/clients-out}"
venv="${KOKORO_CLIENTS_VENV:-$here/.venv}"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi
log="$(mktemp)"
"${KOKORO_SERVER:-$root/build/bin/kokoro-server}" --host 127.0.0.1 --http-port 0 --wyoming-port 0 --max-sessions 2 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 600); do grep -q "listening on" "$log" && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done
grep -q "listening on" "$log" || { echo "kokoro-server did not start:"; cat "$log"; exit 1; }
http_port=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f3)
wyoming_port=$(grep -o 'tcp://127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f3)
"$venv/bin/python" "$here/clients.py" --http-port "$http_port" --wyoming-port "$wyoming_port" --out "$out"
