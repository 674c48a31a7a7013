"""emq-lab: run the scheduler dives on fakeredis or a real Valkey."""

from ._browser import platform as _platform
from .clock import SimClock, SystemClock
from .errors import BackendUnavailable
from .jobs import Jobs
from .lab import Lab, connect
from .outcome import Outcome
from .pump import Occurrence, Pump, Tick, TickResult
from .repeat import Due, Repeat
from .scripts import Row

__all__ = [
    "BackendUnavailable", "Due", "Jobs", "Lab", "Occurrence", "Outcome", "Pump", "Repeat", "Row",
    "SimClock", "SystemClock", "Tick", "TickResult", "connect",
]  # fmt: skip

_platform.start()  # the browser edition: its wheels and its Lua, before anything else loads
