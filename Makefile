# Two commands set up a fresh machine: `make lab` and `make test`. `make help` lists the rest.
PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
TESTING := $(VENV)/.testing
NB      ?= 00-start
WORKERS ?= 3
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help install lab present test lint bench bench-lite clean lite fengari

## List the targets.
help:
	@awk '/^## /{doc=substr($$0,4); next} /^[a-z-]+:/{if(doc){split($$1,t,":"); printf "  make %-9s %s\n", t[1], doc}; doc=""}' $(MAKEFILE_LIST)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The runtime (what make lab needs) and the test tools are installed separately.
$(RUNTIME): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

$(TESTING): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(RUNTIME) $(TESTING)

## Create .venv with the runtime and the test tools (for working on emq-lab).
install: $(TESTING)

## JupyterLab from the repository root, on the start page 00-start (or NB=...). Honours EMQ_LAB_URL and EMQ_LAB_NAMESPACE.
lab: $(RUNTIME)
	$(BIN)/jupyter lab $(ROOT_OK) --ServerApp.root_dir=. --LabApp.news_url=None notebooks/$(NB).ipynb

## Voila on one notebook, for presenting: make present NB=02-cadence (NB=instructor for the class view).
present: $(RUNTIME)
	$(BIN)/voila notebooks/$(NB).ipynb

## ruff check, ruff format --check, mypy.
lint: $(TESTING)
	$(BIN)/ruff check emq_lab tests
	$(BIN)/ruff format --check emq_lab tests
	$(BIN)/mypy

## Lint, type-check, and the whole suite (fakeredis, a throwaway Valkey and cluster, the notebooks), on WORKERS=3 pytest workers.
test: lint
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup

# The JupyterLite edition in lite/_output (a static site: Pyodide, the notebooks, the Lua on fengari).
# Needs Python >= 3.12 and npm; versions in lite/pins.env. Rebuilt only when an input changed.
LITE_STAMP  := lite/_output/.built
LITE_INPUTS := lite/pins.env lite/build.sh lite/slim.py lite/pycompile.mjs lite/jupyter_lite_config.json lite/jupyter-lite.json pyproject.toml \
	$(wildcard notebooks/*.ipynb) $(shell find emq_lab -type f -not -path '*/__pycache__/*' -not -name '*.pyc')

$(LITE_STAMP): $(LITE_INPUTS)
	bash lite/build.sh
	touch $@

## Build the JupyterLite edition (a static site in lite/_output); needs Python >= 3.12 and npm.
lite: $(LITE_STAMP)

## Regenerate the vendored fengari bundle (emq_lab/_browser/fengari.js) from npm.
fengari:
	bash lite/build-fengari.sh

## The benchmarks (figures for the README), then the browser edition's (bench-lite).
bench: $(TESTING)
	$(BIN)/python bench/bench.py
	$(MAKE) bench-lite

## The browser edition's waits, cold and warm, per notebook (builds the site first): bench/lite.py.
bench-lite: $(TESTING) $(LITE_STAMP)
	$(BIN)/python bench/lite.py

## Remove .venv and the caches.
clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
	rm -rf lite/_output lite/_contents lite/.cache lite/.venv-build lite/static lite/.jupyterlite.doit.db lite/.build.lock
