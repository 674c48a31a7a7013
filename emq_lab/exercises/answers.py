"""Readers of a prediction (outcome, count, minutes, times, registry rows, lane) in any form a dive prints it
(tests/test_predict.py holds the forms): one value (or a :class:`Said` with a note), or a ValueError saying why not."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..clock import hhmmss
from ..outcome import Outcome
from ..schedule import MINUTE_MS


@dataclass(frozen=True)
class Said:
    """An answer read, with a note on how it was read (``900000`` taken as milliseconds)."""

    value: Any
    note: str = ""


def plain(read: Any) -> tuple[Any, str]:
    """A reader's result as (value, note)."""
    return (read.value, read.note) if isinstance(read, Said) else (read, "")


_WORDS = {o.value for o in Outcome} | {"nothing"}
# The course's verdict words for a probe: "EXISTS = 1" (the record is there), "ZSCORE = nil".
_PROBE = re.compile(r"\b(exists|zscore)\s*(?:=|->|answered|returned|returns)\s*(\S+)")
_RETURNS = re.compile(r"\b(?:script\s+)?(?:returns?|returned|raw|reply|answers?)\s*[:=]?\s*(-?\d+)\b")
_NEGATION = re.compile(r"\b(?:not|no|never|isn't|isnt)\s+:?(\w+)")


def _say(text: str, said: Mapping[str, str]) -> str:
    """``text`` with each phrase of ``said`` (longest first, whole words) put as the word it means."""
    for phrase in sorted(said, key=len, reverse=True):
        text = re.sub(rf"(?<![\w:]){re.escape(phrase)}(?!\w)", f" {said[phrase]} ", text)
    return text


def outcome(
    replies: dict[int, str], probes: Mapping[str, tuple[str | None, str]], phrases: Mapping[str, str]
) -> Callable[[Any], str]:
    """A reader of one script's outcome in any form the dives print it (``"{:ok, :exists}"``, ``0``, ...);
    ``probes``: a probe's outcome when it finds something and when not (``"EXISTS = 1"``); ``phrases``: words."""

    def read(value: Any) -> str:
        if isinstance(value, Outcome):
            return value.value
        if isinstance(value, int) and not isinstance(value, bool):
            if value not in replies:
                raise ValueError(f"{value} is not a reply of this script, which answers {choices(replies)}")
            return replies[value]
        if not isinstance(value, str):
            raise ValueError(f"{type(value).__name__} is not an outcome")
        text = _say(value.strip().lower().replace("outcome.", " "), phrases)
        if (negated := _NEGATION.search(text)) and negated[1] in _WORDS | set(probes):
            raise ValueError(f"{negated[0].strip()!r} says what it is not; name the outcome it is")
        if re.fullmatch(r"-?\d+", text.strip()):
            return read(int(text.strip()))
        found: list[str] = []
        for probe, said in _PROBE.findall(text):
            if probe in probes:
                missing = said.strip(",;.").lower() in {"0", "nil", "false", "none", "(nil)"}
                meant = probes[probe][1 if missing else 0]
                if meant is not None:
                    found.append(meant)
        text = _PROBE.sub(" ", text)
        found += [read(int(code)) for code in _RETURNS.findall(text)]
        text = _RETURNS.sub(" ", text)
        words = re.findall(r"[a-z]+", text)
        found += [word for word in words if word in _WORDS and word != "nothing"]
        named = list(dict.fromkeys(found))
        if not named and "nothing" in words:  # "nothing (the pump held nothing)": no advance at all
            return "nothing"
        if not named:
            raise ValueError(f"it names no outcome; this script answers {choices(replies)}")
        if len(named) > 1:
            raise ValueError(f"it names {' and '.join(named)}; give one")
        return named[0]

    return read


def choices(replies: dict[int, str]) -> str:
    """The outcomes a script answers, as a hint lists them: ``"registered" (1) or "exists" (0)``."""
    return " or ".join(f'"{name}" ({code})' for code, name in sorted(replies.items(), key=lambda c: -c[0]))


_NUMBER_WORDS = {
    "no": 0, "none": 0, "zero": 0, "nothing": 0, "nil": 0,
    "one": 1, "single": 1, "once": 1, "two": 2, "twice": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "thousand": 1000,
}  # fmt: skip
# Phrases a count or a length of time may come as, put as the plain answer before reading.
_SAID_NUMBERS = {
    "not one": "0", "not a single one": "0", "never": "0", "nothing fires": "0", "no write at all": "0",
    "gone": "0", "a quarter of an hour": "15 min", "quarter of an hour": "15 min", "quarter hour": "15 min",
    "half an hour": "30 min", "half hour": "30 min", "an hour": "60 min",
}  # fmt: skip
# Words a count may carry, as the dives and pages print them: units, labels, fillers.
_COUNT_WORDS = {
    "row", "rows", "entry", "entries", "job", "jobs", "occurrence", "occurrences", "order", "orders",
    "write", "writes", "server", "member", "members", "refused", "size", "still", "registry", "every",
    "count", "fired", "enqueued", "made", "released", "in", "a", "an", "day", "total", "of", "the",
    "exactly", "just", "only", "left", "stays", "at", "is", "it", "s", "for", "slot", "keeps", "times",
    "record", "records", "by", "pump", "pumps", "allowed", "after", "holds", "hold", "last", "yes", "fires",
    "fire", "all", "and", "no",
}  # fmt: skip
_MINUTE_UNITS = {"min": 1, "mins": 1, "minute": 1, "minutes": 1, "m": 1, "h": 60, "hour": 60, "hours": 60}
_SECONDS = {"s", "sec", "second", "seconds"}
_OTHER_UNITS = {"ms", "millisecond", "milliseconds", *_SECONDS}  # the other units a minute count may come in
_MINUTE_WORDS = {"drift", "by", "run", "behind", "late", "later", "mark", "period", "after", "its", "plus"}
_NUMBER = r"[+-]?[\d,]*\d(?:\.\d+)?"
_TOKEN = re.compile(rf"{_NUMBER}|[a-z_]+|\S")
_GROUPED = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def _tokens(value: str) -> list[str]:
    text = value.strip().lower().replace("(s)", "s").replace("every_ms", "every ms").replace("→", "->")
    text = text.rsplit("->", 1)[-1]  # a line as the dives print it, "boot #2: ... -> 0 server writes": its result
    text = _say(text, _SAID_NUMBERS)
    text = re.sub(r"\b(\d{1,3})((?: \d{3})+)\b", lambda m: m[1] + m[2].replace(" ", ""), text)  # "300 000"
    text = re.sub(r"\b(\d+)\s*(?:/|of|out of)\s*\d+\b", r"\1", text)  # "20 of 24", "20/24": the first
    text = re.sub(r"emq:\S*", " ", text)  # a key, as the panels print it beside a size
    text = _ASIDE.sub(" ", text)  # asides and times of day: "1 job (JOB-000003 for the 09:30 slot)"
    if re.search(r"\d:\d", text) is None and text.count(":") == 1:
        text = text.rsplit(":", 1)[1]  # a label before the number: "registry rows: 1", "drift by run 4: +12 min"
    return _TOKEN.findall(text)


def _one_number(value: Any, allowed: set[str]) -> tuple[int | float, list[str]]:
    """The one number in ``value`` (or in the one part of a ``|``-separated line that has one) and its words."""
    if isinstance(value, str) and "|" in value:
        read, errors = [], []
        for part in value.split("|"):
            try:
                read.append(_one_number(part, allowed))
            except ValueError as exc:
                errors.append(exc)
        if len(read) == 1:
            return read[0]
        if len(read) > 1:
            raise ValueError(f"its parts hold {len(read)} numbers; give one")
        raise errors[0]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{type(value).__name__} is not a number")
    if isinstance(value, int | float):
        return value, []
    numbers: list[int | float] = []
    words: list[str] = []
    for token in _tokens(value):
        if re.fullmatch(_NUMBER, token):
            if not _GROUPED.fullmatch(token):
                raise ValueError(f"{token!r} is not a number (group thousands as 3,000)")
            plain = token.replace(",", "")
            numbers.append(float(plain) if "." in plain else int(plain))
        elif token in _NUMBER_WORDS and not (token == "thousand" and numbers):
            numbers.append(_NUMBER_WORDS[token])
        elif token == "thousand":
            numbers[-1] *= 1000
        elif token in allowed or token in {"=", "+", "~", ".", "!", "(", ")", "·", "-", ">", "→", "'", "’", ","}:
            words.append(token)
        else:
            raise ValueError(f"{token!r} is not a unit or label this question knows")
    if not numbers:
        raise ValueError("it holds no number")
    if len(numbers) > 1:
        raise ValueError(f"it holds {len(numbers)} numbers; give one")
    return numbers[0], words


_JOB_ID = re.compile(r"\bjob-\d+\b|\b[a-z]\w*:\d{13}\b")  # JOB-000001, or a slot-keyed report:1767690960000
_ASIDE = re.compile(r"\([^)]*\)|(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?!\d)")  # "(...)", a time of day


def number(value: Any) -> int:
    """A whole number: ``3``, ``"3,000"``, ``"registry rows: 1"``, ``"none"``, or a list of job ids, counted."""
    if isinstance(value, str) and (ids := _JOB_ID.findall(value.lower())):
        rest = re.findall(r"[a-z_]+", _ASIDE.sub(" ", _JOB_ID.sub(" ", value.lower())))
        if all(word in _COUNT_WORDS for word in rest):
            return len(ids)
    found, _ = _one_number(value, _COUNT_WORDS | set(_MINUTE_UNITS))
    return _whole(found)


def _whole(found: int | float) -> int:
    if isinstance(found, float) and not found.is_integer():
        raise ValueError("it is not a whole number")
    return int(found)


def minutes(value: Any) -> int | Said:
    """Whole minutes (``"15 min"``, ``"1 hour"``, ``"0 s"``); milliseconds (``900000``) read as such, with a note."""
    found, words = _one_number(value, _COUNT_WORDS | _MINUTE_WORDS | set(_MINUTE_UNITS) | _OTHER_UNITS)
    units = [w for w in words if w in _MINUTE_UNITS or w in _OTHER_UNITS]
    if len(set(units)) > 1:
        raise ValueError(f"it has two units ({' and '.join(dict.fromkeys(units))})")
    unit = units[0] if units else ""
    if unit in _MINUTE_UNITS:
        return _whole(found * _MINUTE_UNITS[unit])
    if unit in _SECONDS:
        if found % 60:  # a readable answer, and not the right one: said as the seconds it is
            return Said(round(found / 60, 3), f"read {found:g} s as minutes")
        return _whole(found // 60)
    if unit or (abs(found) >= MINUTE_MS and found % MINUTE_MS == 0):
        if found % MINUTE_MS:
            raise ValueError(f"{found:g} ms is not a whole number of minutes")
        return Said(
            _whole(found // MINUTE_MS),
            f"read {found:,.0f} as milliseconds, {found // MINUTE_MS:.0f} min; the question wants minutes",
        )
    return _whole(found)


_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])(?:\s*([ap])\.?m\b\.?)?")
_EPOCH = re.compile(r"(?<!\d)(1\d{12})(?!\d)")  # an instant in epoch milliseconds, as the panels print it
_MINUTES = re.compile(r"(?<![\d:\w])(:)(\d{2})\b")
# Times in words: "quarter past nine", "half past nine", "twenty past nine", "quarter to ten".
_SPOKEN_MINUTES = {"five": 5, "ten": 10, "quarter": 15, "twenty": 20, "twenty five": 25, "twenty-five": 25, "half": 30}
_SPOKEN_HOURS = {w: n for w, n in _NUMBER_WORDS.items() if 1 <= n <= 12 and w not in {"single", "once", "twice"}}
_SPOKEN = re.compile(
    rf"\b(?:a\s+)?({'|'.join(sorted(_SPOKEN_MINUTES, key=len, reverse=True))})\s+(?:minutes\s+)?(past|to)\s+"
    rf"({'|'.join(_SPOKEN_HOURS)}|\d{{1,2}})\b"
)
_DOTTED = re.compile(r"(?<![\d.:,])(\d{1,2})[.h](\d{2})(?![\d.])")  # "09.15", "10h17"


def _spoken(text: str) -> str:
    """``text`` with times in words or with a dot (``"quarter past nine"``, ``"9.15"``) as H:MM."""

    def said(match: re.Match[str]) -> str:
        minute = _SPOKEN_MINUTES[match[1]]
        hour = _SPOKEN_HOURS.get(match[3]) or int(match[3])
        if match[2] == "to":
            hour, minute = hour - 1, 60 - minute
        return f"{hour}:{minute:02d}"

    return _DOTTED.sub(r"\1:\2", _SPOKEN.sub(said, text))


def on_the_clock(value: Any, clock: str) -> Any:
    """Bare minutes (``":00 :15"``) as times on the question's clock, the hour moving on as minutes go down."""
    hour, last = int(clock[:2]), int(clock[3:5])

    def placed(match: re.Match[str]) -> str:
        nonlocal hour, last
        minute = int(match[2])
        if minute < last:
            hour += 1
        last = minute
        return f"{hour % 24:02d}:{match[2]}"

    if isinstance(value, str):
        return _MINUTES.sub(placed, value)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return type(value)(_MINUTES.sub(placed, v) for v in value)
    return value


def _clock_time(hours: str, mins: str, secs: str, half: str) -> str:
    if int(hours) > 23 or int(mins) > 59 or (secs and int(secs) > 59) or (half and int(hours) > 12):
        raise ValueError(f"{hours}:{mins}{':' + secs if secs else ''}{half and half + 'm'} is not a time of day")
    hour = int(hours) % 12 + (12 if half == "p" else 0) if half else int(hours)
    shown = f"{hour:02d}:{mins}"
    return shown if secs in ("", "00") else f"{shown}:{secs}"


def _times_in(text: str) -> list[str]:
    """The times of day in ``text``; times in brackets beside them (``"09:15 (1767604500000)"``) must agree."""
    text = _spoken(text.lower())
    text = _EPOCH.sub(lambda m: hhmmss(int(m[1])), text)
    outside = re.sub(r"\([^)]*\)", " ", text)  # "10:17 10:32 (on :17 :32)": the times outside the brackets
    inside = [_clock_time(*m) for m in _TIME.findall(" ".join(re.findall(r"\(([^)]*)\)", text)))]
    found = [_clock_time(*m) for m in _TIME.findall(outside)]
    if found and inside and inside != found:
        raise ValueError(f"it says {' '.join(found)} and, in brackets, {' '.join(inside)}; give one")
    return found or inside


def times(value: Any) -> tuple[str, ...]:
    """Times of day, as a list or one line (``"then 10:17 10:32"``); ``HH:MM:SS`` at :00 read as ``HH:MM``."""
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        found = [t for v in value for t in _times_in(v)]
        if len(found) != len(value):
            bad = next(v for v in value if len(_times_in(v)) != 1)
            raise ValueError(f"{bad!r} is not one time")
    elif isinstance(value, str):
        # a bare hour in a list of times ("9, 9:15, 9:30") is that hour on the dot
        found = _times_in(re.sub(r"(?<![\d:.])(\d{1,2})(?=\s*(?:,|;|and)\s*\d{1,2}[:.h]\d{2})", r"\1:00", value))
    else:
        raise ValueError(f"{type(value).__name__} is not a list of times")
    if not found:
        raise ValueError("it holds no time")
    return tuple(found)


# A row: a name, then "@", "next", "at", an arrow, "=", ":", "," or nothing, then its time (and its ms in brackets).
_ROW = re.compile(
    r"(?<![\w:])(?!(?:next|at|row|rows|registry|one)\b)([a-z_]\w*)\s*(?:@|next\b|at\b|->|→|=|:|,|-)?\s*"
    r"((?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\b)?|1\d{12})(\s*\(1\d{12}\))?"
)
_EMPTY = {"", "(empty)", "empty", "none", "(none)", "nothing", "no rows", "0 rows"}


def entries(name: str) -> Callable[[Any], str]:
    """A reader of registry rows as the dives and panels print them (``"report @ 09:45"``; a time alone: ``name``'s)."""

    def read(value: Any) -> str:
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
            value = f"{value[0]} @ {value[1]}"
        if not isinstance(value, str):
            raise ValueError(f"{type(value).__name__} is not a registry row")
        text = _spoken(value.strip().lower())
        text = re.sub(r"^(?:registry|rows?)\s*(?:emq:\S*)?\s*[:=]?", "", text).strip()
        text = re.split(r"[;|]\s*(?:records?|jobs?|invariant)\b", text)[0].strip()
        if text in _EMPTY:
            return ""
        found = [(row, _times_in(at + ms)[0]) for row, at, ms in _ROW.findall(text)]
        if not found:
            alone = _times_in(text)
            if len(alone) == 1 and not re.search(r"[a-z]{2,}", _TIME.sub(" ", _EPOCH.sub(" ", text))):
                found = [(name, alone[0])]
        if not found:
            raise ValueError("it names no row and time")
        return ", ".join(f"{row} @ {at}" for row, at in found)

    return read


_LANES = {
    "start to start": "start-to-start", "s2s": "start-to-start", "start to finish": "start-to-finish",
    "s2f": "start-to-finish", "fixed grid": "fixed grid", "grid": "fixed grid",
    "bullmq every": "fixed grid", "bullmq": "fixed grid", "every": "fixed grid",  # the grid is BullMQ's every
}  # fmt: skip


def lane(value: Any) -> str:
    """A lane as the dives print it: ``"fixed grid"``, ``"the grid"``, ``"start-to-start"``, ..."""
    if not isinstance(value, str):
        raise ValueError(f"{type(value).__name__} is not a lane")
    text = value.strip().lower().replace("'s", "").replace("’s", "")
    outside = re.sub(r"\([^)]*\)", " ", text)  # "grid (BullMQ's every)": the lane outside the brackets
    for said in (outside, *re.findall(r"\(([^)]*)\)", text)):
        words = re.sub(r"[-_,]", " ", said).split()
        said = " ".join(w for w in words if w not in {"the", "lane", "one", "measure", "rule", "a"})
        found = _LANES.get(said) or _LANES.get(said.removeprefix("fixed ").strip())
        if found is not None:
            return found
    raise ValueError("it names no lane")
