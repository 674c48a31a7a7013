"""Backend health for the panels: run an action, and when the server is down say so in one line
instead of a traceback, keeping the action so it can be retried."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from redis import exceptions

UNAVAILABLE = "backend unavailable — retrying"

# What a dead, restarting or failing-over server raises. BusyLoadingError (a server still
# replaying its AOF) is a ConnectionError; ClusterDownError and TryAgainError are what a
# cluster answers while a slot has no serving primary.
TRANSIENT: tuple[type[Exception], ...] = (
    exceptions.ConnectionError,
    exceptions.TimeoutError,
    exceptions.ClusterDownError,
    exceptions.TryAgainError,
)

T = TypeVar("T")


class Health(Generic[T]):
    """Runs actions for a panel. ``status`` is ``""`` while the backend answers and
    ``UNAVAILABLE`` after an action failed on a transient error; ``retry()`` runs that action again.

    Any other exception (a ValueError from validation, a script error) propagates: only an
    unreachable backend is turned into a status line. A retried action may run twice on the
    server when the first reply was lost in flight: register and cancel answer the same either
    way; a pump with fresh ids may mint one more id (a slot-keyed pump collides instead).
    """

    def __init__(self) -> None:
        self.status = ""
        self.failures = 0  # transient failures since the last success
        self.error: Exception | None = None  # the last transient error, for a log, never printed
        self._pending: Callable[[], T] | None = None

    @property
    def ok(self) -> bool:
        return not self.status

    @property
    def pending(self) -> bool:
        """True while a failed action waits for ``retry()``."""
        return self._pending is not None

    def run(self, action: Callable[[], T]) -> T | None:
        """``action()``; on a transient backend error, None with ``status == UNAVAILABLE``."""
        try:
            value = action()
        except TRANSIENT as exc:
            self.status = UNAVAILABLE
            self.failures += 1
            self.error = exc
            self._pending = action
            return None
        self.status = ""
        self.failures = 0
        self.error = None
        self._pending = None
        return value

    def retry(self) -> T | None:
        """Run the action that last failed again (None when nothing is pending)."""
        if self._pending is None:
            return None
        return self.run(self._pending)

    def __repr__(self) -> str:
        return f"Health({self.status or 'ok'!r})"
