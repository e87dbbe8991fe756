# talk-llama desktop. Two commands: `make run` and `make test`. Both set themselves up
# idempotently: system packages, .venv, the package (llama-cpp-python built from source with
# flags that avoid a SIGILL on CPUs that advertise AMX in VMs), and the default models.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama-cpp-python 0.3.36 is source-only on PyPI. A native build crashes (SIGILL, AMX) on
# these VMs; this portable AVX2 build is what pip builds (once: pip caches the wheel).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
export OMP_WAIT_POLICY := PASSIVE

.PHONY: run test sysdeps sysdeps-test install models lint bench clean

run: sysdeps install models
	$(BIN)/talk-llama

test: sysdeps-test install models
	$(BIN)/python -m pytest

sysdeps:
	@packaging/debian-deps.sh run

sysdeps-test:
	@packaging/debian-deps.sh test

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $@

models: install
	@$(BIN)/talk-llama models fetch

lint: install
	$(BIN)/ruff check app tests bench

bench: sysdeps-test install models
	for b in stt tts latency context; do $(BIN)/python -m bench.$$b || exit 1; done
	$(BIN)/python -m bench.report

clean:
	rm -rf $(VENV) build *.egg-info
