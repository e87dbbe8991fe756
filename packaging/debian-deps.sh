#!/usr/bin/env bash
# Install the Debian packages talk-llama needs, skipping what is already there.
#   packaging/debian-deps.sh run    runtime: PortAudio, speexdsp (echo cancellation), espeak-ng (TTS), aplay, Qt's X/EGL libs
#   packaging/debian-deps.sh test   runtime + PulseAudio, Xvfb and xdotool, sox, and the desktop-entry/AppStream
#                                   validators (the bundle test), qemu-user (an older CPU, emulated)
# Uses sudo when not root. Prints nothing and exits fast when everything is installed.
set -euo pipefail
RUN_PKGS=(python3-venv python3-dev build-essential cmake libportaudio2 libspeexdsp1 libpulse0 libasound2-plugins libsndfile1 espeak-ng alsa-utils
  libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0
  libwayland-cursor0 libwayland-egl1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0
  fonts-dejavu-core)
TEST_PKGS=(pulseaudio pulseaudio-utils sox xvfb xauth xdotool desktop-file-utils appstream qemu-user)

want=("${RUN_PKGS[@]}")
[[ "${1:-run}" == "test" ]] && want+=("${TEST_PKGS[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "Not a Debian-like system; install these yourself: ${missing[*]}" >&2
  exit 1
fi
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
echo "installing system packages: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
