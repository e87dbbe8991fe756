# talk-llama desktop. Two commands: `make run` and `make test`. Both set themselves up
# idempotently: system packages, .venv, the package (llama-cpp-python built from source with
# flags that avoid a SIGILL on CPUs that advertise AMX in VMs), and the default models.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama-cpp-python 0.3.36 is source-only on PyPI. A native build crashes (SIGILL, AMX) on
# these VMs: build a portable AVX2 wheel. GGML_OPENMP=OFF: ggml's own thread pool instead of
# OpenMP, so llama's threads neither spin against whisper's (which share these 2 cores) nor pay
# OMP_WAIT_POLICY=PASSIVE's wake-up cost on every op (generation ~1.5x slower with it).
# The wheel is built once per flag set into WHEELS (pip's own cache ignores CMAKE_ARGS).
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF
WHEELS := $(HOME)/.cache/talk-llama/wheels/$(shell echo '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)' | sha1sum | cut -c1-12)
export OMP_WAIT_POLICY := PASSIVE

.PHONY: run test check sysdeps sysdeps-test install models llama-server lint bench bench-report bundle clean

run: sysdeps install models
	$(BIN)/talk-llama

test: sysdeps-test install models llama-server
	@$(BIN)/talk-llama models fetch tiny.en  # the f16 model the quantizer tests start from
	@$(BIN)/talk-llama models fetch base-q5_1  # the multilingual model the language tests hear with
	@$(BIN)/talk-llama models fetch qwen2.5-coder-0.5b  # a real instruct model the slow tests talk with
	$(BIN)/python -m pytest

sysdeps:
	@packaging/debian-deps.sh run

sysdeps-test:
	@packaging/debian-deps.sh test

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	@ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
		echo "building llama-cpp-python $(LLAMA_VERSION) (about 10 minutes on 2 cores)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel -q --disable-pip-version-check \
			--no-deps --no-cache-dir -w $(WHEELS) llama-cpp-python==$(LLAMA_VERSION); }
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
		$(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/python -m pip install -q --disable-pip-version-check --find-links $(WHEELS) -e '.[dev]'
	@touch $@

# A self-contained folder build for people without a compiler (PyInstaller; packaging/README.md):
# dist/talk-llama-<version>-linux-x86_64.tar.gz. No models inside. tests/test_bundle.py builds
# and tries one the way a user would.
bundle: sysdeps install
	packaging/build_bundle.sh dist

models: install
	@$(BIN)/talk-llama models fetch

# llama.cpp's own llama-server and ggml-rpc-server, a test tool for the remote brain (built once
# from the llama.cpp llama-cpp-python vendors, cached; about 15 minutes on 2 cores the first time).
llama-server: install
	@packaging/build_llama_server.sh $(BIN)/python >/dev/null

# Lint and types: ruff (rules and formatting) and mypy (strict in brain/ and loop/: pyproject.toml).
lint: install
	$(BIN)/ruff check app tests bench
	$(BIN)/ruff format --check app tests bench
	$(BIN)/mypy

# The quick loop before a commit: lint, types and the tests not marked slow (~3 minutes here).
check: lint sysdeps-test models
	$(BIN)/python -m pytest -q -m "not slow"

# docs/benchmarks.md from bench/results/*.json (after `make bench` or any single benchmark).
bench-report: install
	$(BIN)/python -m bench.report --write

bench: sysdeps-test install models llama-server
	@$(BIN)/talk-llama models fetch tiny.en
	@$(BIN)/talk-llama models fetch qwen2.5-coder-0.5b
	for b in stt pauses fragments tts latency context idle bargein remote llama_server chatview switch orb families actions honest_actions; do $(BIN)/python -m bench.$$b || exit 1; done
	$(BIN)/python -m bench.load --voice 8
	$(BIN)/python -m bench.remote --load
	$(BIN)/python -m bench.coldstart --runs 5  # builds a bundle
	$(BIN)/python -m bench.model_memory  # the built-in and the 0.5B side by side, ~40 minutes
	$(BIN)/python -m bench.longchat --configs today,default  # ~35 minutes
	$(BIN)/python -m bench.report --write

clean:
	rm -rf $(VENV) build dist *.egg-info
