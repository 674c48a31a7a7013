"""Widgets: views over emq_lab, one per dive. Each has programmatic twins of its
controls and a ``readout`` string."""

from .boot import BootPanel
from .cadence import CadenceExplorer
from .cancel import CancelPanel, CrashPanel
from .classroom import ClassroomPanel

__all__ = ["BootPanel", "CadenceExplorer", "CancelPanel", "ClassroomPanel", "CrashPanel"]
