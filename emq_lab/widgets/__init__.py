"""Widgets: the dives' panels (and the instructor's), views over emq_lab. Each has programmatic
twins of its controls and a ``readout`` string.

Each panel's module is imported when the panel is first named (``from emq_lab.widgets import
BootPanel``): the boot panel needs no plotly, and in the browser edition every package costs its
unpacking on first import (emq_lab/_browser/wheels.py)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .boot import BootPanel
    from .cadence import CadenceExplorer
    from .cancel import CancelPanel, CrashPanel
    from .classroom import ClassroomPanel
    from .predict import PredictForm

__all__ = ["BootPanel", "CadenceExplorer", "CancelPanel", "ClassroomPanel", "CrashPanel", "PredictForm"]

_MODULES = {
    "BootPanel": "boot",
    "CadenceExplorer": "cadence",
    "CancelPanel": "cancel",
    "CrashPanel": "cancel",
    "ClassroomPanel": "classroom",
    "PredictForm": "predict",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
