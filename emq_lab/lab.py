"""Lab: one connection, one clock, the scripts, and the per-queue views."""

from __future__ import annotations

from typing import Any

from . import keys, validate
from .backend import TIMEOUT_S, open_client
from .cadence import Measure
from .clock import Clock, SystemClock
from .jobs import Jobs
from .pump import Pump
from .repeat import Repeat
from .scripts import Scripts


class Lab:
    """What ``emq_lab.connect()`` returns."""

    def __init__(self, client: Any, clock: Clock, description: str) -> None:
        self.client = client
        self.clock = clock
        self.scripts = Scripts.load(client)
        self._description = description

    def repeat(self, queue: str) -> Repeat:
        return Repeat(self, queue)

    def jobs(self, queue: str) -> Jobs:
        return Jobs(self, queue)

    def pump(
        self, queue: str, *, batch: int = 100, slot_keyed: bool = False, rule: Measure | str = Measure.START_TO_START
    ) -> Pump:
        return Pump(self, queue, batch=batch, slot_keyed=slot_keyed, rule=rule)

    def keys(self, queue: str) -> list[str]:
        """Every key of ``queue`` (SCAN on its pattern), sorted."""
        validate.name(queue, field="queue")
        return sorted(set(self.client.scan_iter(match=keys.pattern(queue), count=500)))

    def reset(self, queue: str) -> int:
        """Delete every key of ``queue`` and nothing else; returns how many were deleted."""
        found = self.keys(queue)
        deleted = 0
        for start in range(0, len(found), 500):
            deleted += int(self.client.unlink(*found[start : start + 500]))
        return deleted

    def describe(self) -> str:
        """The backend, for humans (not for compared notebook output)."""
        return self._description

    def close(self) -> None:
        self.client.close()

    def __repr__(self) -> str:
        return f"Lab(clock={self.clock!r})"


def connect(url: str | None = None, clock: Clock | None = None, *, timeout_s: float = TIMEOUT_S) -> Lab:
    """A Lab on ``url`` (else ``$EMQ_LAB_URL``, else the embedded server) reading now from ``clock``.

    A server must answer a PING now (else ``emq_lab.BackendUnavailable`` naming the URL); a
    command waits at most ``timeout_s`` seconds for its reply."""
    client, description = open_client(url, timeout_s=timeout_s)
    return Lab(client, clock if clock is not None else SystemClock(), description)
