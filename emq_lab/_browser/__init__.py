"""Running emq-lab in the browser (JupyterLite, Pyodide): Lua for fakeredis without lupa.

``install()`` puts the fengari-backed module of ``lupa.py`` in ``sys.modules`` as ``lupa`` (and
``lupa.lua51`` .. ``lupa.lua54``, which fakeredis imports by name), then imports fakeredis with the
glob patterns of ``glob.py`` (matched in bounded work) in place of its own. It must run before
fakeredis is first imported, and does nothing outside Pyodide, where the real lupa is installed.
"""

from __future__ import annotations

import sys

__all__ = ["install"]

_VERSIONS = ("lua51", "lua52", "lua53", "lua54")


def install() -> bool:
    """Make ``import lupa`` find the fengari module under Pyodide; True when it is (now) installed."""
    if sys.platform != "emscripten":
        return False
    current = sys.modules.get("lupa")
    if current is not None and getattr(current, "__name__", "") == f"{__name__}.lupa":
        return True
    if "fakeredis.commands_mixins.scripting_mixin" in sys.modules or current is not None:
        # fakeredis already chose its Lua (or found none): swapping now would not reach it.
        return False
    from . import glob, lupa

    sys.modules["lupa"] = lupa
    for name in _VERSIONS:
        sys.modules[f"lupa.{name}"] = lupa
    glob.install(lupa.charge)
    return True
