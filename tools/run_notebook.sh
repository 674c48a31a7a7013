#!/usr/bin/env bash
# Store a notebook's outputs from one top-to-bottom run on the embedded backend, without
# saved widget state (the FigureWidget state carries plotly.js: megabytes nbval never reads).
# usage: tools/run_notebook.sh notebooks/01-upsert.ipynb [...]
set -euo pipefail
cd "$(dirname "$0")/.."
for nb in "$@"; do
  env -u EMQ_LAB_URL .venv/bin/jupyter nbconvert --to notebook --execute --inplace \
    --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.store_widget_state=False "$nb"
  .venv/bin/python - "$nb" <<'PY'
import sys
import nbformat
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
nb.metadata.pop("widgets", None)
nbformat.write(nb, path)
PY
done
