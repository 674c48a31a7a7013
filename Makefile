# Two commands set up a fresh machine: `make lab` and `make test`. `make help` lists the rest.
PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
TESTING := $(VENV)/.testing
NB      ?= 00-start
WORKERS ?= 2
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help install lab restore present test test-browser lint bench bench-lite clean lite fengari axe chp hub

## List the targets.
help:
	@awk '/^## /{doc=substr($$0,4); next} /^[a-z-]+:/{if(doc){split($$1,t,":"); printf "  make %-12s %s\n", t[1], doc}; doc=""}' $(MAKEFILE_LIST)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The runtime (what make lab needs) and the test tools are installed separately.
# The Voila template is installed as a copy (shared-data): a change to it installs again.
TEMPLATE := $(wildcard share/jupyter/voila/templates/emq/*)
$(RUNTIME): pyproject.toml $(TEMPLATE) | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

$(TESTING): pyproject.toml $(TEMPLATE) | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(RUNTIME) $(TESTING)

## Create .venv with the runtime and the test tools (for working on emq-lab).
install: $(TESTING)

## JupyterLab on your copy of the start page, work/00-start (or NB=...). Honours EMQ_LAB_URL and EMQ_LAB_NAMESPACE.
# The learner works in work/ (gitignored): copies of the dives without outputs, made the first
# time and never overwritten, so notebooks/ (the tested copies, outputs stored) stays as committed.
# The announcements plugin is turned off in the venv's page config: its "get notified about Jupyter
# news?" toast would cover the notebook on first open (and a classroom may be offline).
lab: $(RUNTIME)
	@$(BIN)/python -m emq_lab.copies make
	@$(BIN)/jupyter labextension disable --level=sys_prefix @jupyterlab/apputils-extension:announcements >/dev/null 2>&1
	$(BIN)/jupyter lab $(ROOT_OK) --ServerApp.root_dir=. --LabApp.news_url=None work/$(NB).ipynb

## The course's version of a dive back in work/ (make restore NB=01-upsert); yours is kept as work/01-upsert.mine-<time>.ipynb.
restore: $(RUNTIME)
	$(BIN)/python -m emq_lab.copies restore $(NB)

## Voila on the notebooks folder, for presenting: make present NB=02-cadence; the class view: EMQ_LAB_URL=<your admin URL> make present NB=instructor.
# Voila serves the whole folder so a page's links to the other dives open them; a single notebook
# would answer those links with 403. The page to open is printed; Voila 0.5.8 wants the folder absolute.
present: $(RUNTIME)
	@echo "Presenting: open http://localhost:8866/voila/render/$(NB).ipynb"
	$(BIN)/voila $(abspath notebooks) --port=8866 --no-browser

## ruff check, ruff format --check, mypy.
lint: $(TESTING)
	$(BIN)/ruff check emq_lab emq_classroom tests
	$(BIN)/ruff format --check emq_lab emq_classroom tests
	$(BIN)/mypy

# axe-core, the accessibility checker the browser tests run on every dive, and configurable-http-proxy,
# the class hub's proxy: from npm, pinned, into the venv (gitignored with it); installed once, like the
# rest of the test tools. One npm command installs both: a second --no-save install into the same
# folder would remove the first package.
AXE_VERSION := 4.14.1
CHP_VERSION := 5.3.0
NODE_DIR := $(VENV)/node
AXE := $(NODE_DIR)/node_modules/axe-core/axe.min.js
CHP := $(NODE_DIR)/node_modules/.bin/configurable-http-proxy
NODE_TOOLS := $(NODE_DIR)/.installed-$(AXE_VERSION)-$(CHP_VERSION)

$(NODE_TOOLS): | $(VENV)/bin/python
	npm install --prefix $(NODE_DIR) --no-save --no-audit --no-fund --loglevel=error \
		axe-core@$(AXE_VERSION) configurable-http-proxy@$(CHP_VERSION)
	test -f $(AXE) && test -x $(CHP) && touch $@

## Install axe-core for the browser tests (make test-browser does it).
axe: $(NODE_TOOLS)

## Install configurable-http-proxy for the class hub (make hub and make test-browser do it).
chp: $(NODE_TOOLS)

HUB := $(VENV)/.hub
$(HUB): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[hub]'
	touch $(HUB)

## The class's JupyterHub: make hub URL=redis://admin@HOST:6379/0 INSTRUCTOR=NAME (passwords: README's Classroom).
hub: $(HUB) $(NODE_TOOLS)
	$(BIN)/python -m emq_classroom hub --url '$(URL)' --instructor '$(INSTRUCTOR)' $(HUB_ARGS)

## Lint, type-check, and every test but the browser walks (fakeredis, a throwaway Valkey and cluster, the notebooks by nbval, the sandbox, the class server), on WORKERS=2 pytest workers.
# --no-loadscope-reorder: the workers take the tests in the collection's order, the longest first (tests/conftest.py).
# --durations=25: the slowest tests, named at the end of every run (where the suite's time goes).
PYTEST := $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25
test: lint
	$(PYTEST) -m "not browser"

## The browser walks in Chromium: every notebook in JupyterLab, Voila and the JupyterLite site, a class on JupyterHub (CI runs it after make test).
test-browser: $(TESTING) $(NODE_TOOLS)
	$(PYTEST) -m browser

# The JupyterLite edition in lite/_output (a static site: Pyodide, the notebooks, the Lua on fengari).
# Needs Python >= 3.12 and npm; versions in lite/pins.env. Rebuilt only when an input changed.
LITE_STAMP  := lite/_output/.built
LITE_INPUTS := lite/pins.env lite/build.sh lite/stage.sh lite/slim.py lite/early-kernel.js lite/pycompile.mjs lite/jupyter_lite_config.json lite/jupyter-lite.json pyproject.toml \
	$(wildcard notebooks/*.ipynb) $(shell find emq_lab emq_classroom -type f -not -path '*/__pycache__/*' -not -name '*.pyc')

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
	rm -rf lite/_output lite/_contents lite/.cache lite/.venv-build lite/static lite/.jupyterlite.doit.db lite/.build.lock lite/.build.log
