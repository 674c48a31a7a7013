"""Exercises that check and explain: the learner predicts, writes or fixes, and the lab answers
with the smallest scenario that shows what is wrong.

- ``upsert.predict(...)``, ``cadence.predict(...)``, ``cancel.predict(...)``: predict, then check.
- ``register(lua_source)``, ``next_run(fn)``, ``advance(lua_source)`` -> :class:`Check`:
  ``check.passed`` and ``print(check)``.
- ``hint(exercise, level)``, ``solution(exercise)``, ``buggy(exercise)``, ``skeleton(exercise)``.
- ``with_scripts(lab, advance=text)``: a lab (in the sandbox) whose verbs and pump run your Lua.

Every checker runs in the sandbox (:mod:`emq_lab.sandbox`, wiped before each check), on queues of
its own (``exercise-<name>``): nothing of the lab's server is read or written, except the check's
result, recorded in the learner's namespace (:mod:`emq_lab.progress`) for the instructor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import progress
from ..lab import Lab, connect
from . import advance_check, next_run_check, predict, register_check
from .check import Check
from .learner import with_scripts
from .next_run_check import Timelines
from .solutions import buggy, hint, skeleton, solution


def _recorded(check: Check, lab: Lab | None) -> Check:
    """Record ``check``'s result in ``lab``'s namespace (a fresh connection's when None)."""
    target = lab if lab is not None else connect()
    try:
        progress.record(target, check.exercise, check.passed)
    finally:
        if lab is None:
            target.close()
    return check


def _recording(checker: Callable[..., Check]) -> Callable[..., Check]:
    @functools.wraps(checker)
    def run(answer: Any, lab: Lab | None = None) -> Check:
        return _recorded(checker(answer, lab), lab)

    return run


class _RecordedPredictions:
    """A dive's questions whose ``predict`` records its result (everything else as the dive's)."""

    def __init__(self, inner: predict.Predictions) -> None:
        self._inner = inner

    def predict(self, *, lab: Lab | None = None, **answer: Any) -> Check:
        """Right or wrong, and why, for each answer given (the result is recorded)."""
        return _recorded(self._inner.predict(lab=lab, **answer), lab)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


register = _recording(register_check.check)
next_run = _recording(next_run_check.check)
advance = _recording(advance_check.check)
upsert = _RecordedPredictions(predict.upsert)
cadence = _RecordedPredictions(predict.cadence)
cancel = _RecordedPredictions(predict.cancel)

__all__ = [
    "Check",
    "Timelines",
    "advance",
    "buggy",
    "cadence",
    "cancel",
    "hint",
    "next_run",
    "register",
    "skeleton",
    "solution",
    "upsert",
    "with_scripts",
]
