"""Clocks. Every verb reads "now" from ``lab.clock``; notebooks use a SimClock."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int: ...


def parse_instant(instant: str | int | datetime) -> int:
    """An ISO-8601 string, a datetime or epoch milliseconds -> epoch milliseconds."""
    if isinstance(instant, bool):
        raise ValueError(f"start: expected an ISO-8601 string, datetime or int ms, got {instant!r}")
    if isinstance(instant, int):
        return instant
    if isinstance(instant, str):
        try:
            instant = datetime.fromisoformat(instant)
        except ValueError:
            raise ValueError(f"start: {instant!r} is not an ISO-8601 instant") from None
    if isinstance(instant, datetime):
        if instant.tzinfo is None:
            instant = instant.replace(tzinfo=UTC)
        return int(instant.timestamp() * 1000)
    raise ValueError(f"start: expected an ISO-8601 string, datetime or int ms, got {instant!r}")


def hhmm(ms: int) -> str:
    """Wall-clock ``HH:MM`` (UTC) of an epoch-ms instant, as the course writes times."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M")


def hhmmss(ms: int) -> str:
    """Wall-clock ``HH:MM:SS`` (UTC) of an epoch-ms instant."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S")


class SimClock:
    """A deterministic clock that moves only when told to."""

    def __init__(self, start: str | int | datetime = "2026-01-05T09:00:00Z") -> None:
        self.start_ms = parse_instant(start)
        self._now = self.start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int = 0, *, seconds: float = 0, minutes: float = 0, hours: float = 0) -> int:
        """Move forward; returns the new now in ms. Going backwards is refused."""
        step = ms + round(seconds * 1000 + minutes * 60_000 + hours * 3_600_000)
        if step < 0:
            raise ValueError(f"ms: a SimClock only moves forward, got a step of {step} ms")
        self._now += step
        return self._now

    def set(self, instant: str | int | datetime) -> int:
        """Jump to an instant at or after now; returns it in ms."""
        target = parse_instant(instant)
        if target < self._now:
            raise ValueError(f"instant: {target} is before now ({self._now}); a SimClock only moves forward")
        self._now = target
        return self._now

    def reset(self) -> None:
        """Back to the start instant (for a fresh demo)."""
        self._now = self.start_ms

    def __repr__(self) -> str:
        iso = datetime.fromtimestamp(self._now / 1000, UTC).isoformat().replace("+00:00", "Z")
        return f"SimClock({iso!r})"


class SystemClock:
    """Real time, in epoch milliseconds."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"
