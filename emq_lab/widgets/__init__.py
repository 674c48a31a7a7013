"""The dives' panels, each with twins of its controls and a ``readout``; a
panel's module is imported when first named (the browser edition unpacks a package on first import)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .boot import BootPanel
    from .cadence import CadenceExplorer
    from .cancel import CancelPanel, CrashPanel
    from .predict import PredictForm

__all__ = ["BootPanel", "CadenceExplorer", "CancelPanel", "CrashPanel", "PredictForm"]

_MODULES = {
    "BootPanel": "boot",
    "CadenceExplorer": "cadence",
    "CancelPanel": "cancel",
    "CrashPanel": "cancel",
    "PredictForm": "predict",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
