#!/usr/bin/env bash
# sd_kokoro end to end. First the module alone, driven over its stdin/stdout protocol as speech-dispatcher
# drives it (tests/test_speechd_marks.py module): index marks in order with the audio and at their words, the
# audio that of the text without marks, PAUSE at the server's next mark, STOP, CHAR, KEY, spelling. Then a
# private speech-dispatcher (own config dir, socket and logs; server-side audio into ALSA's file plugin over
# the null PCM, so no sound card or sound server) speaks through the module:
#   1. spd-say -o kokoro -w "..." returns after speaking, and the server wrote > 1 s of audio
#   2. spd-say -C (cancel) during a long message stops it (the module reports it stopped; spd-say -w returns)
#   3. Debian's Python client (python3-speechd) gets an SSML message's index marks in order before its END,
#      and a text message's server marks reach the engine in order (test_speechd_marks.py client)
#   4. the module's time to first audio for each message is printed (from its log)
# Usage: tests/test_speechd.sh SD_KOKORO_BINARY MODEL        (ctest label speechd; needs speech-dispatcher and
# python3-speechd, scripts/install-deps.sh)
#        tests/test_speechd.sh <prefix>/lib/speech-dispatcher-modules/sd_kokoro installed
#   "installed": the module runs with the configuration file installed beside it
#   (<prefix>/share/kokoro-rt/speech-dispatcher/kokoro.conf, plus a log file) and finds the model itself
#   (scripts/check-deb).
set -euo pipefail
module=$(readlink -f "$1") model=$2
here=$(dirname "$(readlink -f "$0")")
fail() { echo "test_speechd: FAIL: $*" >&2; [ -f "$tmp/log/speech-dispatcher.log" ] && tail -20 "$tmp/log/speech-dispatcher.log" >&2; exit 1; }
command -v speech-dispatcher >/dev/null || { echo "test_speechd: FAIL: speech-dispatcher not installed (scripts/install-deps.sh)" >&2; exit 1; }
# Debian's client library is installed for Debian's python3 (not for another python3 first in PATH).
python=/usr/bin/python3
"$python" -c "import speechd" 2>/dev/null || { echo "test_speechd: FAIL: python3-speechd not installed (scripts/install-deps.sh)" >&2; exit 1; }
installed_conf=$(dirname "$module")/../../share/kokoro-rt/speech-dispatcher/kokoro.conf
if [ "$model" = installed ]; then
  [ -f "$installed_conf" ] || { echo "test_speechd: FAIL: no $installed_conf" >&2; exit 1; }
else
  [ -f "$model" ] || { echo "test_speechd: FAIL: model $model missing" >&2; exit 1; }
fi
tmp=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/conf" "$tmp/log"
raw=$tmp/alsa-out.raw
cat > "$tmp/asound.conf" <<CONF
pcm.null { type null }
pcm.!default { type plug slave.pcm "null" }
pcm.kokoro_file { type file slave.pcm "null" file "$raw" format "raw" }
CONF
if [ "$model" = installed ]; then
  cp "$installed_conf" "$tmp/kokoro.conf"
else
  echo "KokoroModel \"$model\"" > "$tmp/kokoro.conf"
fi
echo "KokoroLogFile \"$tmp/log/sd_kokoro.log\"" >> "$tmp/kokoro.conf"

# 0. The module alone, over its protocol.
"$python" "$here/test_speechd_marks.py" module "$module" "$tmp/kokoro.conf" || fail "the module's index marks (above)"
: > "$tmp/log/sd_kokoro.log"
cat > "$tmp/conf/speechd.conf" <<CONF
CommunicationMethod "unix_socket"
SocketPath "$tmp/speechd.sock"
LogLevel 4
LogDir "$tmp/log"
AudioOutputMethod "alsa"
AudioALSADevice "kokoro_file"
AddModule "kokoro" "$module" "$tmp/kokoro.conf"
DefaultModule kokoro
DefaultLanguage "en"
CONF
export ALSA_CONFIG_PATH=$tmp/asound.conf
export SPEECHD_ADDRESS=unix_socket:$tmp/speechd.sock
speech-dispatcher -s -t 0 -C "$tmp/conf" -S "$tmp/speechd.sock" -L "$tmp/log" -P "$tmp/speechd.pid" \
  > "$tmp/log/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do [ -S "$tmp/speechd.sock" ] && break; sleep 0.1; done
[ -S "$tmp/speechd.sock" ] || fail "speech-dispatcher did not open its socket"

# 1. Speak and wait.
timeout 120 spd-say -o kokoro -w "Hello from kokoro through speech dispatcher." || fail "spd-say -w failed or hung"
bytes=$(stat -c %s "$raw" 2>/dev/null || echo 0)
[ "$bytes" -gt 48000 ] || fail "the server played $bytes bytes (expected > 1 s of 16-bit audio)"
grep -q "done" "$tmp/log/sd_kokoro.log" || fail "the module did not report a finished message"
echo "test_speechd: first message: $bytes bytes of audio through the server"

# 2. Stop a long message mid-way.
long="This long message goes on and on, so that the stop request arrives while it is still being spoken. \
It has several sentences. The engine synthesizes one while the previous one plays. \
None of the later ones should be heard after the stop."
timeout 120 spd-say -o kokoro -w "$long" &
say_pid=$!
# Once the module has sent the long message's first audio (its second "first audio" line), stop it.
for _ in $(seq 1 1200); do [ "$(grep -c ': first audio after' "$tmp/log/sd_kokoro.log")" -ge 2 ] && break; sleep 0.05; done
[ "$(grep -c ': first audio after' "$tmp/log/sd_kokoro.log")" -ge 2 ] || fail "the long message never started"
spd-say -C   # cancel: stops the message being spoken (of any client) and drops the queue
wait "$say_pid" || fail "spd-say -w of the stopped message failed or hung"
for _ in $(seq 1 100); do grep -q "stopped" "$tmp/log/sd_kokoro.log" && break; sleep 0.1; done
grep -q "stopped" "$tmp/log/sd_kokoro.log" || fail "the module did not report the stop: $(cat "$tmp/log/sd_kokoro.log")"

# 3. Index marks to a client, pause and resume.
"$python" "$here/test_speechd_marks.py" client "$tmp/log/sd_kokoro.log" || fail "index marks through the server (above)"

# 4. Time to first audio, as the module measured it (SPEAK received -> first audio block sent).
grep "spoke" "$tmp/log/sd_kokoro.log" | sed 's/^sd_kokoro [0-9.]*: /test_speechd: /'
echo "test_speechd: ok"
