"""Exercises that check and explain: the learner predicts, writes or fixes, and the lab answers
with the smallest scenario that shows what is wrong.

- ``upsert.predict(...)``, ``cadence.predict(...)``, ``cancel.predict(...)``: predict, then check.
- ``register(lua_source)``, ``next_run(fn)``, ``advance(lua_source)`` -> :class:`Check`:
  ``check.passed`` and ``print(check)``.
- ``hint(exercise, level)``, ``solution(exercise)``, ``buggy(exercise)``, ``skeleton(exercise)``.

Every checker runs in the sandbox (:mod:`emq_lab.sandbox`, wiped before each check), on queues of
its own (``exercise-<name>``); nothing is read from or written to the lab's server.
"""

from __future__ import annotations

from .advance_check import check as advance
from .check import Check
from .next_run_check import Timelines
from .next_run_check import check as next_run
from .predict import cadence, cancel, upsert
from .register_check import check as register
from .solutions import buggy, hint, skeleton, solution

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
]
