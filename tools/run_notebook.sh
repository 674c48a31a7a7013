#!/usr/bin/env bash
# Store a notebook's outputs from one top-to-bottom run on the embedded backend.
# usage: tools/run_notebook.sh notebooks/01-upsert.ipynb
set -euo pipefail
cd "$(dirname "$0")/.."
for nb in "$@"; do
  env -u EMQ_LAB_URL .venv/bin/jupyter nbconvert --to notebook --execute --inplace \
    --ExecutePreprocessor.timeout=600 "$nb"
done
