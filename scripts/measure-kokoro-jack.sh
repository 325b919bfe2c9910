#!/usr/bin/env bash
# Measures kokoro-jack on a private JACK server with the dummy backend (48 kHz, 256-frame periods by
# default): time to first audio per utterance, xruns, underruns, and the worst time spent in the process
# callback. Prints kokoro-jack's status lines and its closing summary; asserts nothing.
#
#   scripts/measure-kokoro-jack.sh [BUILD_DIR] [CORPUS] [RATE] [PERIOD]
#     BUILD_DIR  default: build           CORPUS  default: bench/corpus/medium.txt (one utterance a line)
#   KOKORO_JACK_ARGS="--mode exact" scripts/measure-kokoro-jack.sh     extra kokoro-jack options
#
# Each line goes through kokoro-jack's named pipe once the previous one has been spoken and played, so
# every utterance starts from an idle engine (TTFA without queueing). The server runs under its own name
# (kokoro-measure-$$) and is stopped at the end; nothing else is touched.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
CORPUS="${2:-$ROOT/bench/corpus/medium.txt}"
RATE="${3:-48000}"
PERIOD="${4:-256}"
BIN="$BUILD/bin/kokoro-jack"
[ -x "$BIN" ] || { echo "measure-kokoro-jack: $BIN not built (cmake --build $BUILD --target kokoro-jack)" >&2; exit 1; }
[ -r "$CORPUS" ] || { echo "measure-kokoro-jack: cannot read $CORPUS" >&2; exit 1; }

WORK="$(mktemp -d)"
SERVER="kokoro-measure-$$"
JACKD_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
  [ -n "$JACKD_PID" ] && kill "$JACKD_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export JACK_NO_START_SERVER=1
jackd -n "$SERVER" -d dummy -r "$RATE" -p "$PERIOD" >"$WORK/jackd.log" 2>&1 &
JACKD_PID=$!
for _ in $(seq 100); do jack_lsp -s "$SERVER" >/dev/null 2>&1 && break; sleep 0.1; done
jack_lsp -s "$SERVER" >/dev/null 2>&1 || { echo "measure-kokoro-jack: jackd did not start:" >&2; cat "$WORK/jackd.log" >&2; exit 1; }

# shellcheck disable=SC2086  # KOKORO_JACK_ARGS is a list of options
"$BIN" --server "$SERVER" --fifo "$WORK/fifo" ${KOKORO_JACK_ARGS:-} </dev/null >"$WORK/status.txt" 2>"$WORK/stderr.txt" &
APP_PID=$!
for _ in $(seq 300); do grep -q "kokoro-jack: ready" "$WORK/stderr.txt" && break; sleep 0.1; done
grep -q "kokoro-jack: ready" "$WORK/stderr.txt" || { echo "measure-kokoro-jack: kokoro-jack did not start:" >&2; cat "$WORK/stderr.txt" >&2; exit 1; }
head -1 "$WORK/stderr.txt"

n=0
while IFS= read -r line || [ -n "$line" ]; do
  [ -z "${line// /}" ] && continue
  n=$((n + 1))
  printf '%s\n' "$line" >"$WORK/fifo"
  for _ in $(seq 1200); do [ "$(grep -c '^\[' "$WORK/status.txt")" -ge "$n" ] && break; sleep 0.05; done
  # Let the audio still in the buffer play out before the next line (the status line comes when the last
  # samples were handed to JACK; up to one second of audio is buffered).
  sleep 1.2
done <"$CORPUS"

kill -TERM "$APP_PID"
wait "$APP_PID" || true
APP_PID=""
cat "$WORK/status.txt"
grep -iE "xrun|not finished|late" "$WORK/jackd.log" | sort | uniq -c | head -5 || true
grep -E "utterances?;|underrun|xrun|error" "$WORK/stderr.txt" || true
sed -n 's/.*first audio after \([0-9]*\) ms.*/\1/p' "$WORK/status.txt" | sort -n >"$WORK/ttfa.txt"
if [ -s "$WORK/ttfa.txt" ]; then
  count=$(wc -l <"$WORK/ttfa.txt")
  echo "TTFA (line read -> first samples handed to JACK), $count utterances: median $(sed -n "$(((count + 1) / 2))p" "$WORK/ttfa.txt") ms," \
       "min $(head -1 "$WORK/ttfa.txt") ms, max $(tail -1 "$WORK/ttfa.txt") ms"
fi
