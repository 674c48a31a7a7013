"""The site's wheels, installed on first import (Pyodide in JupyterLite's web worker).

JupyterLite's kernel installs a package when a cell's own code names it in an ``import``, together
with every dependency its lock entry lists (Pyodide's ``loadPackagesFromImports``). The site's lock
(lite/slim.py) lists for emq-lab only what ``import emq_lab`` and a lab need, so a notebook's first
cell does not unpack plotly (10 MB) or hypothesis. This finder installs such a package when emq_lab
first imports it: it fetches the wheel the lock names from the site, checks its sha256, unpacks it
into site-packages (its dependencies first) and lets the ordinary import find it.

The fetch is a synchronous request, which a web worker may make: an ``import`` cannot wait for a
promise. Where no such request exists (Pyodide under Node) or the module is already there, the
finder stays out of the way.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import io
import sys
import sysconfig
import zipfile
from collections.abc import Sequence
from typing import Any

__all__ = ["install"]


class LockFinder:
    """A ``sys.meta_path`` finder for the top-level modules of the lock's packages not yet installed."""

    def __init__(self, pyodide: Any, js: Any) -> None:
        self._pyodide, self._js = pyodide, js
        self._packages: dict[str, Any] = pyodide.lockfile.packages.to_py()
        self._provider = {module: name for name, entry in self._packages.items() for module in entry["imports"]}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: Any = None) -> None:
        name = self._provider.get(fullname)
        if name is None or "." in fullname or self._installed(name):
            return None
        if importlib.machinery.PathFinder.find_spec(fullname) is not None:
            return None  # installed some other way (micropip, piplite): nothing to fetch
        self._install(name)
        importlib.invalidate_caches()
        return None  # the path finder after this one now finds it

    def _installed(self, name: str) -> bool:
        return bool(self._js.Reflect.has(self._pyodide.loadedPackages, name))

    def _install(self, name: str) -> None:
        entry = self._packages[name]
        for dependency in entry["depends"]:
            if dependency in self._packages and not self._installed(dependency):
                self._install(dependency)
        url = self._js.URL.new(entry["file_name"], self._pyodide.lockfileBaseUrl).href
        request = self._js.XMLHttpRequest.new()
        request.open("GET", url, False)
        request.responseType = "arraybuffer"
        request.send()
        if request.status != 200:
            raise ImportError(f"{name}: the site answered {request.status} for {url}")
        data = request.response.to_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise ImportError(f"{name}: {url} does not match the sha256 in the site's lock")
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            members = [m for m in wheel.namelist() if not m.split("/", 1)[0].endswith(".data")]
            wheel.extractall(sysconfig.get_paths()["purelib"], members)
        self._js.Reflect.set(self._pyodide.loadedPackages, name, "emq_lab")


def install() -> bool:
    """Put the finder first on ``sys.meta_path`` in a browser's Pyodide; True when it is (now) there."""
    if sys.platform != "emscripten":
        return False
    if any(isinstance(finder, LockFinder) for finder in sys.meta_path):
        return True
    import js
    import pyodide_js

    if not hasattr(js, "XMLHttpRequest") or not getattr(pyodide_js, "lockfile", None):
        return False  # Pyodide under Node (the build's and the tests' runs): every wheel is unpacked already
    sys.meta_path.insert(0, LockFinder(pyodide_js, js))
    return True
