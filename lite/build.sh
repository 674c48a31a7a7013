#!/usr/bin/env bash
# Build the JupyterLite edition into lite/_output: every notebook, emq-lab's wheel and every
# dependency vendored, Pyodide served from the site itself (no CDN at run time).
# Needs: Python >= 3.12 (pyodide-lock 0.2 reads Pyodide 314's lock), npm, and PyPI/npm access.
# Versions: lite/pins.env. Run through `make lite`, which rebuilds only when an input changed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
source "$here/pins.env"
cache="$here/.cache"
venv="$here/.venv-build"
mkdir -p "$cache"

find_python() {
  local candidate
  for candidate in "${LITE_PYTHON:-}" python3.13 python3.12 \
    "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# 1. The build environment: JupyterLite, the kernel with its lock addon, and the packages whose
#    labextensions the notebooks need (widgets, plotly, anywidget) so the site carries them.
requirements=(
  "jupyterlite-core==$JUPYTERLITE_CORE" "jupyterlite-pyodide-kernel[lock]==$JUPYTERLITE_PYODIDE_KERNEL"
  jupyter-server "ipywidgets==$IPYWIDGETS" "jupyterlab_widgets==$JUPYTERLAB_WIDGETS" plotly anywidget build hatchling
)
if [ ! -x "$venv/bin/jupyter-lite" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "${requirements[*]}" ]; then
  python="$(find_python)" || { echo "lite: no Python >= 3.12 found (set LITE_PYTHON)" >&2; exit 3; }
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet "${requirements[@]}"
  echo "${requirements[*]}" > "$venv/.requirements"
fi
kernel_pyodide="$("$venv/bin/python" -c 'from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION as v; print(v)')"
if [ "$kernel_pyodide" != "$PYODIDE" ]; then
  echo "lite: pins.env says PYODIDE=$PYODIDE but the kernel pins $kernel_pyodide" >&2
  exit 2
fi

# 2. emq-lab's own wheel (markers keep lupa, jupyterlab, voila and nbconvert out under Pyodide).
rm -rf "$cache/wheels"
"$venv/bin/python" -m build --wheel --no-isolation --outdir "$cache/wheels" "$repo" >/dev/null

# 3. Pyodide's core from npm, served by the site; its lock's package table emptied so that uv
#    resolves every package from PyPI instead of pinning them to the CDN.
npm_dir="$cache/npm"
mkdir -p "$npm_dir"
[ -f "$npm_dir/package.json" ] || echo '{"private": true}' > "$npm_dir/package.json"
if [ "$(node -p "require('$npm_dir/node_modules/pyodide/package.json').version" 2>/dev/null)" != "$PYODIDE" ]; then
  (cd "$npm_dir" && npm install --no-audit --no-fund --silent "pyodide@$PYODIDE")
fi
rm -rf "$here/static/pyodide"
mkdir -p "$here/static/pyodide"
(cd "$npm_dir/node_modules/pyodide" && cp pyodide.mjs pyodide.asm.mjs pyodide.asm.wasm python_stdlib.zip \
  pyodide.js package.json "$here/static/pyodide/")
"$venv/bin/python" - "$npm_dir/node_modules/pyodide/pyodide-lock.json" "$here/static/pyodide/pyodide-lock.json" <<'PY'
import json, sys
lock = json.load(open(sys.argv[1], encoding="utf-8"))
lock["packages"] = {}
json.dump(lock, open(sys.argv[2], "w", encoding="utf-8"), indent=1)
PY

# 4. The site's files: the course's tracked notebooks, never a learner's (lite/stage.sh).
contents="$here/_contents"
bash "$here/stage.sh" "$contents"

# 5. The site, from scratch: doit's incremental runs can skip re-patching jupyter-lite.json (and
#    then lose pyodideUrl) when only the inputs' config changed. Downloads stay cached in .cache.
cd "$here"
rm -rf "$here/_output" "$here/.jupyterlite.doit.db"
"$venv/bin/jupyter" lite build --lite-dir "$here" --output-dir "$here/_output"

# 6. Out with what no page uses; the kernel's packages in one parallel batch; bytecode into the
#    wheels (see lite/slim.py).
"$venv/bin/python" "$here/slim.py" "$here/_output" "$npm_dir/node_modules/pyodide" "$contents"
du -sh "$here/_output"
