"""emq-lab: run the scheduler dives on fakeredis or a real Valkey."""

from ._browser import platform as _platform
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

_platform.start()  # the browser edition: its wheels and its Lua, before anything else loads
