"""emq-lab: run the scheduler dives on fakeredis or a real Valkey."""

import sys as _sys

from .clock import SimClock, SystemClock
from .errors import BackendUnavailable
from .lab import Lab, connect
from .outcome import Outcome
from .pump import Occurrence, Pump, Tick
from .repeat import Due, Repeat

__all__ = [
    "BackendUnavailable",
    "Due",
    "Lab",
    "Occurrence",
    "Outcome",
    "Pump",
    "Repeat",
    "SimClock",
    "SystemClock",
    "Tick",
    "connect",
]

if _sys.platform == "emscripten":  # the browser edition: plotly, hypothesis, ipywidgets install on first import
    from ._browser import wheels as _wheels

    _wheels.install()
