"""Predict, then check: a dive's questions (:mod:`.questions`) answered, in any form the dives print, before
the cell that shows them runs; the truth is read off the real package, in the sandbox, on a fresh queue."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import validate
from ..clock import SimClock
from . import answers
from .check import Check, session
from .explain import explain_error
from .questions import CADENCE, CANCEL, DAY, QUEUE, UPSERT, Question

if TYPE_CHECKING:
    from ..lab import Lab


@dataclass(frozen=True)
class Field:
    """One question as a form shows it: the keyword, the question, what kind of answer, an example."""

    key: str
    ask: str
    unit: str
    example: str


class Predictions:
    """The questions of one dive: ``predict(key=answer, ...)`` checks answers, ``fields()`` lists them."""

    def __init__(
        self, dive: str, questions: tuple[Question, ...], record: Callable[[Check, Lab | None], Check] | None = None
    ) -> None:
        self.dive, self._record = dive, record
        self._questions = {q.key: q for q in questions}

    def fields(self) -> tuple[Field, ...]:
        """Each question as a form shows it: keyword, question, kind of answer, an example of its form."""
        return tuple(Field(q.key, q.ask, q.kind.unit, q.kind.example) for q in self._questions.values())

    def predict(self, *args: Lab, lab: Lab | None = None, **answer: Any) -> Check:
        """A line per answer (right, or not and why; unreadable: expected what), and the questions left out."""
        exercise = f"{self.dive}.predict"
        if args:
            if len(args) > 1 or lab is not None:
                raise TypeError(f"{exercise} takes the lab once, then the answers by name: predict(lab, key=...)")
            lab = args[0]
            if not hasattr(lab, "pump"):
                raise TypeError(f"{exercise}: give the answers by name, e.g. predict({next(iter(self._questions))}=1)")
        if not answer:
            raise ValueError(f"answer: give at least one of {', '.join(self._questions)}")
        misnamed = {key: answer.pop(key) for key in [k for k in answer if k not in self._questions]}
        with session("predict") as (base, _):
            verdicts = [self._verdict(base, key, value, answer) for key, value in answer.items()]
        lines = [_misnamed(key, self._questions) for key in misnamed] + [line for _, line in verdicts]
        skipped = [key for key in self._questions if key not in answer]
        if skipped:
            lines.append(f"not answered: {', '.join(skipped)}")
        right = not misnamed and all(ok for ok, _ in verdicts)
        check = Check(exercise, right, "\n".join(lines))
        return check if self._record is None else self._record(check, lab)

    def _verdict(self, base: Lab, key: str, value: Any, answer: dict[str, Any]) -> tuple[bool, str]:
        """Whether ``value`` answers question ``key`` right, and the verdict's line."""
        question, kind = self._questions[key], self._questions[key].kind
        try:
            if isinstance(value, str) and any(c.isdigit() and not c.isascii() for c in value):
                raise ValueError("write its digits as 0-9")
            said, note = answers.plain(kind.read(answers.on_the_clock(value, question.minutes_from or question.clock)))
        except ValueError as exc:
            unread = f"could not read {validate.shown(value, 80)} as {kind.unit} ({exc}); try {kind.example}"
            return False, f"{key}: {unread}"
        sim_lab = base.with_clock(SimClock(f"{DAY}T{question.clock}:00Z"))
        try:
            truth, _ = answers.plain(kind.read(question.truth(sim_lab)))
        except Exception as error:  # noqa: BLE001 - a fault of the sandbox is a line, not a traceback
            return False, f"{key}: not checked - the sandbox failed ({explain_error(error)}); run the check again"
        finally:
            base.reset(QUEUE)
        noted = f" ({note})" if note else ""
        waiting = [other for other in question.tells if other not in answer]  # the reason would answer them
        later = f"(why, once you have answered {' and '.join(waiting)} too)" if waiting else ""
        if said == truth:
            return True, f"{key}: right{noted} - " + (f"{_show(truth)} {later}" if later else question.why(truth))
        shown = f"you said {_show(said)}{noted}, it is {_show(truth)}{_differs(said, truth)}"
        return False, f"{key}: not quite - {shown}" + (f" {later}" if later else f": {question.why(truth)}")


def _misnamed(key: str, questions: dict[str, Question]) -> str:
    """A keyword that names no question, with the question it likely meant."""
    near = difflib.get_close_matches(key, questions, n=1, cutoff=0.6)
    if near:
        return f"{key} is not a question; did you mean {near[0]}?"
    return f"{key} is not a question of this dive; ask one of {', '.join(questions)}"


def _differs(said: Any, truth: Any) -> str:
    """What differs between two registry rows (``"name @ HH:MM"``): the name, the time or both."""
    rows = isinstance(said, str) and isinstance(truth, str) and " @ " in said and " @ " in truth
    if not rows or "," in said or "," in truth:  # more than one row: the two lists speak for themselves
        return ""
    (said_name, _, said_at), (name, _, at) = said.partition(" @ "), truth.partition(" @ ")
    if said_name == name:
        return " (the time differs)"
    if said_at == at:
        return " (the name differs)"
    return " (the name and the time differ)"


def _show(value: Any) -> str:
    return "[" + ", ".join(value) + "]" if isinstance(value, tuple) else str(value)


#: The dives' questions, their verdicts not recorded (``emq_lab.exercises.upsert`` and its kin record them).
upsert = Predictions("upsert", UPSERT)
cadence = Predictions("cadence", CADENCE)
cancel = Predictions("cancel", CANCEL)
