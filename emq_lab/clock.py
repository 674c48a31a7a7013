"""Clocks. Every verb reads "now" from ``lab.clock``; notebooks use a SimClock."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from .schedule import MINUTE_MS
from .validate import shown


class Clock(Protocol):
    """What every verb reads "now" from."""

    def now_ms(self) -> int: ...


@runtime_checkable
class AdvancingClock(Clock, Protocol):
    """A clock that a demo can move: a :class:`SimClock`, or anything shaped like one."""

    start_ms: int

    def advance(self, ms: int = 0, *, seconds: float = 0, minutes: float = 0) -> int: ...

    def set(self, instant: str | int | datetime) -> int: ...


# Scores are doubles on the server: keep every instant a SimClock can reach exact in one and
# readable as a date. From the epoch to the last millisecond of the year 9999.
MIN_INSTANT_MS = 0
MAX_INSTANT_MS = 253_402_300_799_999


def whole_ms(value: object, field: str) -> int:
    """An int, or a float with no fractional part, as an int; anything else is refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{field}: expected milliseconds as an int, got {type(value).__name__} {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{field}: {value!r} is not a whole number of milliseconds; the clock keeps int ms")
    return int(value)


#: The course's Monday morning, where a SimClock starts unless told otherwise.
COURSE_START = "2026-01-05T09:00:00Z"
#: The instants a clock keeps, as a message says them.
INSTANTS = f"1970-01-01 to 9999-12-31 UTC, {MIN_INSTANT_MS} to {MAX_INSTANT_MS} ms"


def _in_range(ms: int, field: str) -> int:
    if not MIN_INSTANT_MS <= ms <= MAX_INSTANT_MS:
        raise ValueError(f"{field}: {shown(ms)} is outside the instants a SimClock keeps ({INSTANTS})")
    return ms


def parse_instant(instant: str | int | datetime, field: str = "start") -> int:
    """An ISO-8601 string, a datetime or epoch ms -> epoch ms; else a ValueError naming ``field``."""
    if isinstance(instant, int | float) and not isinstance(instant, bool):
        return whole_ms(instant, field)
    if isinstance(instant, str):
        try:
            instant = datetime.fromisoformat(instant)
        except ValueError:
            raise ValueError(f"{field}: {instant!r} is not an ISO-8601 instant") from None
    if isinstance(instant, datetime):
        if instant.tzinfo is None:
            instant = instant.replace(tzinfo=UTC)
        return int(instant.timestamp() * 1000)
    raise ValueError(f"{field}: expected an ISO-8601 string, datetime or int ms, got {instant!r}")


# -- how the course writes a time: every instant and every span of time printed goes through these --
def utc(ms: int) -> datetime:
    """An epoch-ms instant as an aware UTC datetime (what a figure's time axis takes)."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def hhmm(ms: int) -> str:
    """``HH:MM`` (UTC) of an epoch-ms instant, as the course writes times: for instants on the minute
    (seconds are dropped; :func:`moment` keeps them)."""
    return utc(ms).strftime("%H:%M")


def hhmmss(ms: int) -> str:
    """``HH:MM:SS`` (UTC) of an epoch-ms instant: for a column of times some of which fall between minutes."""
    return utc(ms).strftime("%H:%M:%S")


def moment(ms: int, *, day_ms: int | None = None) -> str:
    """An instant written exactly: ``09:15``, ``09:15:30``, or ``09:15:00.001`` between seconds (an
    off-by-one stays visible); with the date first, ``2026-01-06 09:15``, when it is not on the day of
    ``day_ms`` (a run a day or a year later never reads as the same moment)."""
    when = utc(ms)
    if ms % MINUTE_MS == 0:
        text = when.strftime("%H:%M")
    elif ms % 1000 == 0:
        text = when.strftime("%H:%M:%S")
    else:
        text = when.strftime("%H:%M:%S.") + f"{ms % 1000:03d}"
    if day_ms is not None and when.date() != utc(day_ms).date():
        text = f"{when:%Y-%m-%d} {text}"
    return text


def duration(ms: int) -> str:
    """A span of time, exactly, in minutes and seconds: ``15 min``, ``90 min``, ``1 min 30 s``,
    ``50 s``, ``1.500 s``, ``0 s``; a negative one with a minus sign."""
    minutes, rest = divmod(abs(ms), MINUTE_MS)
    seconds, millis = divmod(rest, 1000)
    parts = [f"{minutes} min"] if minutes else []
    if seconds or millis or not parts:
        parts.append(f"{seconds}.{millis:03d} s" if millis else f"{seconds} s")
    return ("-" if ms < 0 else "") + " ".join(parts)


class SimClock:
    """A deterministic clock that moves only when told to."""

    def __init__(self, start: str | int | datetime = COURSE_START) -> None:
        self.start_ms = _in_range(parse_instant(start), "start")
        self._now = self.start_ms

    def now_ms(self) -> int:
        return self._now

    def advance(self, ms: int = 0, *, seconds: float = 0, minutes: float = 0) -> int:
        """Move forward; returns the new now in ms. Going backwards is refused, and so is a step
        that is not a whole number of milliseconds (``advance(60_000 / 4)`` is fine: 15000.0)."""
        step = whole_ms(ms, "ms")
        for amount, field, unit in ((seconds, "seconds", 1000), (minutes, "minutes", MINUTE_MS)):
            if amount and (isinstance(amount, bool) or not isinstance(amount, int | float)):
                raise ValueError(f"{field}: expected a number, got {type(amount).__name__} {amount!r}")
            step += whole_ms(round(amount * unit, 6), field) if amount else 0
        if step < 0:
            raise ValueError(f"ms: a SimClock only moves forward, got a step of {step} ms")
        self._now = _in_range(self._now + step, "ms")
        return self._now

    def set(self, instant: str | int | datetime) -> int:
        """Jump to an instant at or after now; returns it in ms."""
        target = _in_range(parse_instant(instant, "instant"), "instant")
        if target < self._now:
            raise ValueError(f"instant: {target} is before now ({self._now}); a SimClock only moves forward")
        self._now = target
        return self._now

    def __repr__(self) -> str:
        return f"SimClock({utc(self._now).isoformat().replace('+00:00', 'Z')!r})"


class SystemClock:
    """Real time, in epoch milliseconds."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"
