"""Exercise progress, for the instructor's view: each check's last result in the learner's namespace (``keys.progress``:
field = the check, value = ``passed <ms>`` or ``failed <ms>``); whether it is recorded never changes an answer."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from . import keys
from .clock import MAX_INSTANT_MS

if TYPE_CHECKING:
    from .lab import Lab

#: The checks the course has, in course order: what "not tried" is measured against.
EXERCISES: tuple[str, ...] = ("upsert.predict", "register", "cadence.predict", "next_run", "cancel.predict", "advance")
_MS = re.compile(r"[0-9]{1,15}")  # ASCII digits only ("²".isdigit() is True, int("²") fails)


@dataclass(frozen=True)
class Attempt:
    """The last result of one check: passed or not, and when (ms since the epoch)."""

    exercise: str
    passed: bool
    at_ms: int


def record(lab: Lab, exercise: str, passed: bool, *, at_ms: int | None = None) -> bool:
    """Whether ``exercise``'s result was stored in ``lab``'s namespace (never raises: the server may be down)."""
    when = int(time.time() * 1000) if at_ms is None else int(at_ms)
    try:
        lab.client.hset(keys.progress(lab.namespace), exercise, f"{'passed' if passed else 'failed'} {when}")
    except (RedisError, OSError):
        return False
    return True


def parse(fields: dict[str, Any]) -> tuple[dict[str, Attempt], list[str]]:
    """A progress hash's fields -> the attempts, and a note for each field that is not one."""
    attempts: dict[str, Attempt] = {}
    problems: list[str] = []
    for exercise, value in sorted(fields.items()):
        verdict, _, when = str(value).partition(" ")
        if verdict not in ("passed", "failed") or not _MS.fullmatch(when) or int(when) > MAX_INSTANT_MS:
            problems.append(f"progress field {exercise!r} holds {str(value)[:40]!r}, not 'passed|failed <ms>'")
            continue
        attempts[exercise] = Attempt(exercise, verdict == "passed", int(when))
    return attempts, problems
