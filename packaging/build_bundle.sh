#!/usr/bin/env bash
# `make bundle`: build dist/talk-llama-<version>-linux-<arch>.tar.gz, a self-contained folder
# (PyInstaller, packaging/talk-llama.spec) with install.sh / uninstall.sh, the menu entry, the
# AppStream metainfo and icons. No models inside: the window offers to fetch them.
#   packaging/build_bundle.sh [DIST_DIR]     (default: dist/)
# Uses the project's venv (PYTHON=.venv/bin/python), whose llama-cpp-python is the portable build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PY=${PYTHON:-$root/.venv/bin/python}
dist=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
id=io.github.talkllama.TalkLlama
version=$("$PY" -c 'import app; print(app.__version__)')
name=talk-llama-$version-linux-$(uname -m)
work=$root/build/bundle
rm -rf "$work"
mkdir -p "$work"

echo "bundle: PyInstaller (about a minute)"
"$PY" -m PyInstaller --noconfirm --clean --log-level ERROR \
  --distpath "$work/pyi" --workpath "$work/pyi-work" packaging/talk-llama.spec
stage=$work/$name
mv "$work/pyi/talk-llama" "$stage"

# A vocabulary-only GGUF from llama.cpp's sources (inside llama-cpp-python's sdist) for
# `self-test` when no model is present: proves llama.cpp loads and tokenizes.
llama_version=$("$PY" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
sdist_dir=${XDG_CACHE_HOME:-$HOME/.cache}/talk-llama/sdist
sdist=$sdist_dir/llama_cpp_python-$llama_version.tar.gz
if [ ! -f "$sdist" ]; then
  "$PY" -m pip download -q --no-deps --no-binary :all: -d "$sdist_dir" "llama-cpp-python==$llama_version"
fi
mkdir -p "$stage/_internal/vocab"
tar -xzf "$sdist" -O "llama_cpp_python-$llama_version/vendor/llama.cpp/models/ggml-vocab-llama-spm.gguf" \
  >"$stage/_internal/vocab/ggml-vocab-llama-spm.gguf"

# The oldest C library every bundled program and library accepts.
min_glibc=$(find "$stage" -type f \( -name '*.so*' -o -name talk-llama-bin \) -print0 |
  xargs -0 objdump -T 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V | tail -n1)
sed "s/@MIN_GLIBC@/$min_glibc/" packaging/bundle/talk-llama >"$stage/talk-llama"
chmod 755 "$stage/talk-llama"
install -m 755 packaging/bundle/install.sh packaging/bundle/uninstall.sh "$stage/"
install -m 644 assets/THIRD-PARTY-NOTICES.md "$stage/"  # what it ships and under which licences
install -Dm644 "assets/$id.desktop" "$stage/share/applications/$id.desktop"
install -Dm644 "assets/$id.metainfo.xml" "$stage/share/metainfo/$id.metainfo.xml"
QT_QPA_PLATFORM=offscreen "$PY" packaging/render_icons.py "$stage/share/icons"
cat >"$stage/BUILD-INFO" <<INFO
talk-llama $version for Linux $(uname -m)
needs: glibc >= $min_glibc; an x86-64 CPU with AVX, AVX2, FMA and F16C; the host's libasound2
and libpulse0 (or PipeWire's libpulse) for sound; X11 or Wayland for the window
built: $(date -u +%Y-%m-%dT%H:%MZ) with llama-cpp-python $llama_version (portable AVX2 build)
INFO

tarball=$dist/$name.tar.gz
tar -C "$work" -czf "$tarball" "$name"  # tar keeps symlinks as symlinks
echo "bundle: $tarball ($(du -h "$tarball" | cut -f1); unpacked $(du -sh "$stage" | cut -f1); glibc >= $min_glibc)"
