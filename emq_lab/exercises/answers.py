"""Reading a learner's answer to a prediction in any form a dive prints it: an outcome as
``"exists"``, ``"{:ok, :exists}"``, ``"Outcome.EXISTS"`` or the raw integer; a number with its label
or unit; times with or without the leading zero, or as bare minutes on the question's clock;
registry rows; a lane's name. Each reader returns one canonical value or raises a ValueError
that says what it expected."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


def outcome(replies: dict[int, str]) -> Callable[[Any], str]:
    """A reader for an outcome, in any form a dive prints it: ``"exists"``, ``":exists"``,
    ``"{:ok, :exists}"``, ``"Outcome.EXISTS"`` (as the script headers print it), an Outcome, or the
    script's raw integer (``0``, as in ``raw 0``); any case."""

    def read(value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            if value not in replies:
                raise ValueError(f"{value} is not a reply of this script; it answers {_choices(replies)}")
            return replies[value]
        if not isinstance(value, str):
            raise ValueError(f"expected an outcome such as 'exists' or {_choices(replies)}, got {value!r}")
        text = value.strip().lower().removeprefix("raw").strip()
        if text.lstrip("-").isdigit():
            return read(int(text))
        text = text.removeprefix("{").removeprefix(":ok,").removeprefix("ok,").removesuffix("}")
        return text.strip().removeprefix("outcome.").lstrip(":")

    return read


def _choices(replies: dict[int, str]) -> str:
    return ", ".join(f"{code} ({name})" for code, name in sorted(replies.items()))


# A number as the dives print one: an optional label ("size 1", "every 15 min"), the number (its
# thousands grouped by commas or not: "3,000"), and an optional unit word ("3 rows", "+12 min").
# Anything else around it ("1 or 2", "1, 2") is not one answer.
_NUMBER = re.compile(
    r"(?:(?:every|size|rows|count)\s*[:=]?\s*)?([+-]?(?:\d{1,3}(?:,\d{3})+|\d+))\s*"
    r"(?:rows?|min|mins|minutes?|occurrences?|jobs?|members?|(?:server\s+)?writes?)?",
    re.IGNORECASE,
)


def number(value: Any) -> int:
    """A whole number: ``3``, ``"3"``, ``"3,000"``, ``"3 rows"``, ``"+12 min"``, ``"every 15 min"``, ``"size 1"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and (match := _NUMBER.fullmatch(value.strip())):
        return int(match[1].replace(",", ""))
    raise ValueError(f"expected one whole number (a unit word may follow), got {value!r}")


_HHMM = re.compile(r"(\d{1,2}):(\d{2})")


def _hhmm(text: str) -> str:
    """Every time in ``text`` written with two digits for the hour: ``9:00`` -> ``09:00``."""
    return _HHMM.sub(lambda m: f"{int(m[1]):02d}:{m[2]}", text)


_MINUTES = re.compile(r"(?<![\d:])(?<!\w)(:)(\d{2})\b")


def on_the_clock(value: Any, clock: str) -> Any:
    """Bare minutes (``":00, :15, :30, :45"``, as the dives print the grid) read on the question's
    clock: they start in its hour and move to the next hour each time a minute goes back down."""
    hour, last = int(clock[:2]), int(clock[3:])

    def fill(text: str) -> str:
        def at(match: re.Match[str]) -> str:
            nonlocal hour, last
            minute = int(match[2])
            if minute < last:
                hour += 1
            last = minute
            return f"{hour % 24:02d}:{match[2]}"

        return _MINUTES.sub(at, text)

    if isinstance(value, str):
        return fill(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return type(value)(fill(v) for v in value)
    return value


def times(value: Any) -> tuple[str, ...]:
    """Times as a list or tuple (``["09:00", "9:15"]``) or one line (``"09:00 09:15"``, commas allowed)."""
    if isinstance(value, str):
        value = value.replace(",", " ").replace("/", " ").split()
    if not isinstance(value, list | tuple) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f'expected "HH:MM" times, as a list or one line, got {value!r}')
    found = tuple(_hhmm(v.strip()) for v in value)
    bad = [t for t in found if not re.fullmatch(r"\d{2}:\d{2}", t)]
    if bad:
        raise ValueError(f'expected "HH:MM" times, got {bad[0]!r}')
    return found


def rows(name: str) -> Callable[[Any], str]:
    """A reader for the registry row of ``name``, as the dives print it, in any case:
    ``"report @ 09:45"``, ``"registry: report @ 9:45"``, ``"registry = report @ 09:45"``, a
    ``("report", "09:45")`` pair, or the time alone (``"09:45"``), read as ``name``'s."""
    example = f'"{name} @ 09:45"'

    def read(value: Any) -> str:
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
            value = f"{value[0]} @ {value[1]}"
        if not isinstance(value, str):
            raise ValueError(f"expected text such as {example}, got {value!r}")
        text = re.sub(r"^registry\s*[:=]", "", value.strip().lower()).strip()
        if re.fullmatch(r"\d{1,2}:\d{2}", text):
            text = f"{name} @ {text}"
        if "@" not in text:
            raise ValueError(f"expected a name and its next run, such as {example}, got {value!r}")
        text = re.sub(r"\s*@\s*", " @ ", text)
        return _hhmm(" ".join(text.split()))

    return read


_LANES = {"start to start": "start-to-start", "start to finish": "start-to-finish", "fixed grid": "fixed grid"}


def lane(value: Any) -> str:
    """A lane as the dives print it, in any case: ``"fixed grid"``, ``"grid"``, ``"start-to-start"``."""
    if not isinstance(value, str):
        raise ValueError(f"expected a lane: {', '.join(_LANES.values())}, got {value!r}")
    text = " ".join(value.strip().lower().replace("-", " ").replace("_", " ").split())
    found = _LANES.get(text) or _LANES.get(f"fixed {text}")
    if found is None:
        raise ValueError(f"expected a lane: {', '.join(_LANES.values())}, got {value!r}")
    return found
