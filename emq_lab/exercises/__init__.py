"""Exercises that check and explain: the learner predicts, writes or fixes, and the lab answers
with the smallest scenario that shows what is wrong.

- ``upsert.predict(...)``, ``cadence.predict(...)``, ``cancel.predict(...)``: predict, then check.
- ``register(lua_source)``, ``next_run(fn)``, ``advance(lua_source)`` -> :class:`Check`:
  ``check.passed`` and ``print(check)``.
- ``hint(exercise, level)``, ``solution(exercise)``, ``buggy(exercise)``, ``skeleton(exercise)``.
- ``with_scripts(lab, advance=text)``: a lab (in the sandbox) whose verbs and pump run your Lua.

Every checker runs in the sandbox (:mod:`emq_lab.sandbox`, wiped before each check), on queues of its own
(``exercise-<name>``): of the lab's server it reads nothing and writes only its result (:mod:`emq_lab.progress`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from .. import progress
from ..lab import Lab, connect
from . import advance_check, next_run_check, predict, questions, register_check
from .check import Check, with_scripts
from .solutions import buggy, hint, skeleton, solution

#: Seconds a check without ``lab=`` waits, at most, for the class server (``$EMQ_LAB_URL``) to record it.
RECORD_TIMEOUT_S = 2.0


def _recorded(check: Check, lab: Lab | None) -> Check:
    """``check``, recorded in ``lab``'s namespace (a fresh connection's when None), or saying why not."""
    target, why = lab, None
    try:
        target = lab if lab is not None else connect(timeout_s=RECORD_TIMEOUT_S)
        if not progress.record(target, check.exercise, check.passed):
            target.client.ping()  # the reason the write failed, when the server has one
            why = "the server did not take the write (a user that may not write its progress key?)"
    except Exception as error:  # noqa: BLE001 - any failure to reach the server is reported, not raised
        said = str(error).strip()
        why = f"{type(error).__name__}: {said.splitlines()[0][:300]}" if said else type(error).__name__
    finally:
        if lab is None and target is not None:
            with contextlib.suppress(Exception):
                target.close()
    if why is not None:
        check = dataclasses.replace(check, text=f"{check.text}\n  (not recorded for your instructor: {why})")
    return check


def _recording(checker: Callable[..., Check]) -> Callable[..., Check]:
    @functools.wraps(checker)
    def run(answer: Any, lab: Lab | None = None) -> Check:
        return _recorded(checker(answer), lab)  # the check runs in the sandbox; ``lab`` records it

    return run


register = _recording(register_check.check)
next_run = _recording(next_run_check.check)
advance = _recording(advance_check.check)
upsert = predict.Predictions("upsert", questions.UPSERT, record=_recorded)
cadence = predict.Predictions("cadence", questions.CADENCE, record=_recorded)
cancel = predict.Predictions("cancel", questions.CANCEL, record=_recorded)

__all__ = [
    "Check",
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
