"""emq-lab: run the scheduler dives on fakeredis or a real Valkey."""

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
