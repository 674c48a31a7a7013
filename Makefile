# Two commands set up a fresh machine: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB     ?= 01-upsert
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: install lab present test lint bench clean lite fengari

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## JupyterLab on the first notebook, embedded backend (unset EMQ_LAB_URL).
lab: install
	env -u EMQ_LAB_URL $(BIN)/jupyter lab $(ROOT_OK) notebooks/$(NB).ipynb

## Voila on one notebook, for presenting: make present NB=02-cadence
present: install
	env -u EMQ_LAB_URL $(BIN)/voila notebooks/$(NB).ipynb

lint: install
	$(BIN)/ruff check emq_lab tests
	$(BIN)/ruff format --check emq_lab tests
	$(BIN)/mypy

## Lint, type-check, and the whole suite (backend tests and notebooks, fakeredis and Valkey).
test: lint
	$(BIN)/python -m pytest

## The JupyterLite edition in lite/_output (a static site: Pyodide, the notebooks, the Lua on fengari).
## Needs Python >= 3.12 and npm; versions in lite/pins.env. Rebuilt only when an input changed.
LITE_STAMP  := lite/_output/.built
LITE_INPUTS := lite/pins.env lite/build.sh lite/jupyter_lite_config.json lite/jupyter-lite.json pyproject.toml \
	$(wildcard notebooks/*.ipynb) $(shell find emq_lab -type f -not -path '*/__pycache__/*' -not -name '*.pyc')

$(LITE_STAMP): $(LITE_INPUTS)
	bash lite/build.sh
	touch $@

lite: $(LITE_STAMP)

## Regenerate the vendored fengari bundle (emq_lab/_browser/fengari.js) from npm.
fengari:
	bash lite/build-fengari.sh

bench: install
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
	rm -rf lite/_output lite/.cache lite/.venv-build lite/static lite/.jupyterlite.doit.db
