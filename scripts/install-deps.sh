#!/usr/bin/env bash
# Installs the Debian packages kokoro-rt builds and tests against. Idempotent: only missing packages are
# installed, so a second run costs one dpkg query. Runs apt-get as root (or via sudo when available).
#
#   scripts/install-deps.sh           everything: every part, the tests and their tools (scripts/test)
#   scripts/install-deps.sh --speak   only what kokoro-say, kokoro-convert, kokoro-zhdict and scripts/fetch-assets
#                                     need (scripts/say); CMake skips the other parts with a message
set -euo pipefail

# The speaking programs and the model: what the top-level CMakeLists.txt, core/, frontend/ and realtime/
# find, the ALSA plugins that reach the desktop's sound server, and pip and unzip for scripts/fetch-assets.
SPEAK_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates python3 python3-pip unzip
  libeigen3-dev libfftw3-dev libsamplerate0-dev libspdlog-dev libfmt-dev
  portaudio19-dev libjack-jackd2-dev libasound2-dev libasound2-plugins
  libespeak-ng-dev espeak-ng-data libsndfile1-dev libcli11-dev nlohmann-json3-dev
  libonnx-dev libprotobuf-dev libzip-dev zlib1g-dev libdnnl-dev libicu-dev unicode-cldr-core libmecab-dev
)
# Everything else: the other parts (kokoro-server, kokoro.lv2), the tests, the benchmarks and their tools.
MORE_PACKAGES=(
  python3-venv jackd2 alsa-utils
  libgtest-dev libgmock-dev libbenchmark-dev protobuf-compiler
  sox tmux clang gnuplot-nox speech-dispatcher speech-dispatcher-audio-plugins
  python3-speechd
  # kokoro.lv2: LV2 headers, lilv for the test host, lv2ls/lv2info, sord_validate for lv2_validate, jalv
  lv2-dev liblilv-dev lilv-utils sordi jalv
  python3-pytest python3-numpy python3-cffi python3-soundfile  # the Python package's tests (python/tests)
  # kokoro-server: Boost.Asio/Beast (HTTP, Wyoming), the encoders (LAME, libopusenc, libFLAC, vo-aacenc),
  # Avahi (--zeroconf); its tests decode AAC with libfaad2 and use curl as a client
  libboost-dev libmp3lame-dev libopusenc-dev libflac-dev libvo-aacenc-dev libavahi-client-dev libfaad-dev curl
  debootstrap
  # The package check (ctest package.deb) builds the .deb in a tree of its own: ccache gives it the objects the
  # main tree compiled with the same flags (scripts/setup.sh, scripts/package-deb)
  ccache
)
case "${1:-}" in
  --speak) PACKAGES=("${SPEAK_PACKAGES[@]}") ;;
  ""|--all) PACKAGES=("${SPEAK_PACKAGES[@]}" "${MORE_PACKAGES[@]}") ;;
  *) echo "usage: $0 [--speak|--all]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && { echo "install-deps: all ${#PACKAGES[@]} packages present"; exit 0; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
