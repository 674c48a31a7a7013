"""Hints in two levels, the reference solutions and the buggy scripts of "fix the bug". The
Lua lives in ``lua/`` next to this module; nothing here prints a solution unless asked."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

EXERCISES = ("register", "next_run", "advance")


def _exercise(exercise: str) -> str:
    if exercise not in EXERCISES:
        raise ValueError(f"exercise: {exercise!r} is not an exercise; use one of {', '.join(EXERCISES)}")
    return exercise


def _lua(name: str) -> str:
    return resources.files(__package__).joinpath(f"lua/{name}.lua").read_text(encoding="utf-8")


def start_to_start(release_ms: int, every_ms: int, finish_ms: int) -> int:
    """The reference rule: one period after this run started; the finish does not count."""
    return release_ms + every_ms


def finish_based(release_ms: int, every_ms: int, finish_ms: int) -> int:
    """A wrong rule for "fix the bug": it waits for the finish, so the cadence drifts."""
    return finish_ms + every_ms


HINTS: dict[str, tuple[str, str]] = {
    "register": (
        "Look before you write: a second boot must find something and stop. Which key tells you the "
        "name is live - and what must the script return then?",
        "First line of the logic: if redis.call('EXISTS', record) == 1 then return 0 end. Only after it: "
        "HSET the record with every_ms and template, ZADD the registry with score first_ms and member "
        "name (the name itself, nothing appended), return 1.",
    ),
    "next_run": (
        "Start-to-start measures from the moment this run was released, not from when it finished. "
        "Which of the arguments is that moment?",
        "Return release_ms + every_ms. finish_ms is there to tempt you: adding the run's length makes "
        "each start drift by it.",
    ),
    "advance": (
        "The tick may advance a name whose record is gone: a cancel split into DEL the record and ZREM "
        "the member, with the advance between the two, or a record deleted behind the scripts' back. What "
        "must the script look at before it writes, and what must it remove so that no registry member is "
        "left without its record? (The stretch: a name cancelled and registered anew since the read; and "
        'rep.advance, which read nothing and sends ARGV[3] and ARGV[4] as "": no check.)',
        "1) if redis.call('EXISTS', record) == 0 then redis.call('ZREM', registry, name) return 0 end - "
        "the sweep, the course's own @advance (R4.02.3). 2) redis.call('ZADD', registry, next_ms, name) and "
        "return 1. The stretch, between them: local score = redis.call('ZSCORE', registry, name) and local "
        "every = redis.call('HGET', record, 'every_ms'); if read_ms ~= '' and (not score or tonumber(score) ~= "
        "tonumber(read_ms)) then return 2 end; if read_every ~= '' and every ~= read_every then return 2 end.",
    ),
}


def hint(exercise: str, level: int = 1) -> str:
    """A hint: level 1 points at the idea, level 2 at the code."""
    chosen = _exercise(exercise)
    if isinstance(level, bool) or level not in (1, 2):
        raise ValueError(f"level: expected 1 or 2, got {level!r}")
    return f"hint {level} for {chosen}: {HINTS[chosen][level - 1]}"


def solution(exercise: str) -> Any:
    """The reference solution: Lua text for register and advance, the function for next_run."""
    chosen = _exercise(exercise)
    return start_to_start if chosen == "next_run" else _lua(f"{chosen}.solution")


def buggy(exercise: str) -> str | Callable[[int, int, int], int]:
    """The version for "fix the bug": register ZADDs first, advance has no compare-and-set, the rule drifts."""
    chosen = _exercise(exercise)
    return finish_based if chosen == "next_run" else _lua(f"{chosen}.buggy")


def skeleton(exercise: str) -> str:
    """The Lua a learner starts from: without the guard and writes (register), the sweep and compare (advance)."""
    chosen = _exercise(exercise)
    if chosen == "next_run":
        raise ValueError("exercise: next_run is written in Python; its skeleton is a def in the notebook")
    return _lua(f"{chosen}.skeleton")
