"""Where emq-lab runs: the browser edition (JupyterLite, Pyodide) or a Python process. The one
place that asks; the rest of the package calls :func:`active` and never reads ``sys.platform``."""

from __future__ import annotations

import sys


def active() -> bool:
    """True under Pyodide: no threads and no processes, the page's event loop, Lua on fengari."""
    return sys.platform == "emscripten"


def start() -> None:
    """What ``import emq_lab`` does first under Pyodide (nothing elsewhere): unpack the wheels
    (plotly, hypothesis, ipywidgets) and put fengari's ``lupa`` in place before fakeredis loads."""
    if active():
        from . import install, wheels

        wheels.install()
        install()
