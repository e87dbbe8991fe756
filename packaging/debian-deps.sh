#!/usr/bin/env bash
# Install the Debian packages talk-llama needs, skipping what is already there.
#   packaging/debian-deps.sh run    runtime: PortAudio, speexdsp (echo cancellation), espeak-ng (TTS), aplay, Qt's X/EGL libs
#   packaging/debian-deps.sh test   runtime + PulseAudio, Xvfb and xdotool, sox, and the desktop-entry/AppStream
#                                   validators (the bundle test), qemu-user (an older CPU, emulated), and
#                                   the voices made from recordings of people that say the language tests'
#                                   clips (tests/support/voices.py: Open JTalk; MBROLA and RHVoice, which are in
#                                   Debian's contrib and non-free: on Debian those components are added for
#                                   them; where they cannot be had the tests use espeak-ng's voices)
# Uses sudo when not root. Prints nothing and exits fast when everything is installed.
set -euo pipefail
RUN_PKGS=(python3-venv python3-dev build-essential cmake libportaudio2 libspeexdsp1 libpulse0 libasound2-plugins libsndfile1 espeak-ng alsa-utils
  libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0
  libwayland-cursor0 libwayland-egl1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0
  fonts-dejavu-core)
TEST_PKGS=(pulseaudio pulseaudio-utils sox xvfb xauth xdotool desktop-file-utils appstream qemu-user
  open-jtalk open-jtalk-mecab-naist-jdic)
VOICE_PKGS=(hts-voice-nitech-jp-atr503-m001 mbrola mbrola-us2 mbrola-fr1 mbrola-de6 mbrola-es1 rhvoice rhvoice-russian)

want=("${RUN_PKGS[@]}")
voices=()
[[ "${1:-run}" == "test" ]] && want+=("${TEST_PKGS[@]}") && voices=("${VOICE_PKGS[@]}")

not_installed() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(not_installed "${want[@]}")
mapfile -t missing_voices < <(not_installed "${voices[@]}")
[[ ${#missing[@]} -eq 0 && ${#missing_voices[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "Not a Debian-like system; install these yourself: ${missing[*]} ${missing_voices[*]}" >&2
  exit 1
fi
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "installing system packages: ${missing[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ ${#missing_voices[@]} -eq 0 ]] && exit 0

# The test voices: on Debian, enable contrib and non-free once if no source offers them.
has_candidate() { [[ $(apt-cache policy "$1" 2>/dev/null) == *"Candidate: "[0-9]* ]]; }
. /etc/os-release
list=/etc/apt/sources.list.d/talk-llama-test-voices.sources
if ! has_candidate "${missing_voices[-1]}" && [[ "${ID:-}" == debian && -n "${VERSION_CODENAME:-}" && ! -e $list ]]; then
  echo "enabling Debian's contrib and non-free components for the test voices ($list)"
  printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" \
    "Suites: $VERSION_CODENAME $VERSION_CODENAME-updates" "Components: contrib non-free" \
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $SUDO tee "$list" >/dev/null
  $SUDO apt-get update -qq
fi
mapfile -t available < <(for p in "${missing_voices[@]}"; do has_candidate "$p" && echo "$p"; done)
if [[ ${#available[@]} -gt 0 ]]; then
  echo "installing test voices: ${available[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${available[@]}" >/dev/null
fi
if [[ ${#available[@]} -lt ${#missing_voices[@]} ]]; then
  echo "note: no package source offers some test voices; the language tests use espeak-ng's instead" >&2
fi
