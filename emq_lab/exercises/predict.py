"""Predict, then check: small questions per dive, answered as a value before the learner runs
the cell that shows it. The truth is never written down here: each question runs the real
package (the dive's own code) on a fresh queue of its own and reads the answer off it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import hhmm
from ..dives import cadence as cadence_dive
from ..dives import race as race_dive
from ..dives import upsert as upsert_dive
from ..schedule import Measure
from .check import Check, session, sim

if TYPE_CHECKING:
    from ..lab import Lab

MIN = 60_000
QUEUE = "exercise-predict"


@dataclass(frozen=True)
class Question:
    """One prediction: the keyword, the question, how to read the truth off the package, how to
    read the learner's answer, and why the truth is what it is."""

    key: str
    ask: str
    truth: Callable[[Lab], Any]
    read: Callable[[Any], Any]
    why: Callable[[Any], str]


def _outcome(value: Any) -> str:
    """``"exists"``, ``":exists"``, ``"{:ok, :exists}"`` or an Outcome -> ``"exists"``."""
    if not isinstance(value, str):
        raise ValueError(f"expected an outcome such as 'exists', got {value!r}")
    return value.strip().removeprefix("{:ok,").removesuffix("}").strip().lstrip(":").strip().lower()


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected a whole number, got {value!r}")
    return value


def _times(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f'expected a list of "HH:MM" strings, got {value!r}')
    return tuple(v.strip() for v in value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {value!r}")
    return " ".join(value.split())


# -- dive 1: the upsert ----------------------------------------------------------------------------


def _boots(lab: Lab, strategy: upsert_dive.Strategy, boots: int, **kwargs: Any) -> upsert_dive.Boot:
    service = upsert_dive.Service(lab, QUEUE, strategy=strategy)
    service.reset()
    if boots > 1:
        service.boot_until(boots - 1)
    return service.boot(**kwargs)


UPSERT = (
    Question(
        "size_after_boot_2",
        "with the EXISTS guard, how many registry rows after boot #2?",
        lambda lab: _boots(lab, upsert_dive.Strategy.GUARD, 2).size,
        _int,
        lambda size: f"boot #2 finds the record (EXISTS = 1), returns 0 and writes nothing: {size} row",
    ),
    Question(
        "boot_2_answers",
        "with the EXISTS guard, what does boot #2 answer?",
        lambda lab: _boots(lab, upsert_dive.Strategy.GUARD, 2).outcome,
        _outcome,
        lambda outcome: f"the record is live, so the script returns 0 -> {{:ok, :{outcome}}}",
    ),
    Question(
        "naive_rows_after_3_boots",
        "with the naive append, how many registry rows after boot #3?",
        lambda lab: _boots(lab, upsert_dive.Strategy.NAIVE, 3).size,
        _int,
        lambda size: f"nothing looks before writing, so every boot appends its own row: {size} rows",
    ),
    Question(
        "period_after_redeploy_min",
        "boot #1 registers every 15 min, boot #2 every 30 min (EXISTS guard): the period afterwards, in minutes?",
        lambda lab: (
            int(dict(_boots(lab, upsert_dive.Strategy.GUARD, 2, every_ms=30 * MIN).after.record)["every_ms"]) // MIN
        ),
        _int,
        lambda minutes: f"register is insert-if-absent: boot #2 answers exists and the record keeps {minutes} min",
    ),
)


# -- dive 2: the cadence ---------------------------------------------------------------------------


def _lane(lab: Lab, measure: Measure) -> cadence_dive.Lane:
    start = sim(lab)[1].now_ms()
    return cadence_dive.run_lane(lab, measure, every_ms=15 * MIN, run_ms=4 * MIN, cycles=4, start_ms=start, queue=QUEUE)


CADENCE = (
    Question(
        "next_runs",
        "every 15 min, 4-minute runs, from 09:00, start-to-start: the first four releases?",
        lambda lab: tuple(hhmm(ms) for ms in _lane(lab, Measure.START_TO_START).releases),
        _times,
        lambda times: (
            f"each start is one period after the previous start; the run's length never counts: {' '.join(times)}"
        ),
    ),
    Question(
        "finish_based_runs",
        "the same, start-to-finish: the first four releases?",
        lambda lab: tuple(hhmm(ms) for ms in _lane(lab, Measure.START_TO_FINISH).releases),
        _times,
        lambda times: f"each start waits for the finish (4 min) plus the period: {' '.join(times)}",
    ),
    Question(
        "drift_after_4_cycles_min",
        "start-to-finish: how many minutes behind its :00/:15/:30/:45 mark is the fourth release?",
        lambda lab: _lane(lab, Measure.START_TO_FINISH).drift_ms // MIN,
        _int,
        lambda minutes: f"every cycle adds the 4-minute run: three gaps, {minutes} min behind",
    ),
)


# -- dive 3: the cancel race -----------------------------------------------------------------------


def _play(lab: Lab, preset: str) -> race_dive.Race:
    race = race_dive.Race(lab, QUEUE)
    race.play(preset)
    return race


def _registry_after(lab: Lab, preset: str) -> str:
    _play(lab, preset)
    return ", ".join(f"{name} @ {hhmm(ms)}" for name, ms in race_dive.keyspace(lab, QUEUE).registry)


CANCEL = (
    Question(
        "occurrences_if_cancel_after_read",
        "the cancel lands between the pump's read and its enqueue: how many occurrences fire?",
        lambda lab: len(_play(lab, "after-read").fired),
        _int,
        lambda n: f"the pump enqueues what its read handed it, cancelled or not: {n} occurrence",
    ),
    Question(
        "advance_answers",
        "the cancel lands between the enqueue and the advance: what does the advance answer?",
        lambda lab: str(_play(lab, "after-enqueue").advance_outcome or "nothing"),
        _outcome,
        lambda outcome: f"the record is gone, so the guard re-adds nothing and sweeps: {{:ok, :{outcome}}}",
    ),
    Question(
        "advance_after_reregister",
        "cancelled and registered anew between the read and the advance: what does the advance answer?",
        lambda lab: str(_play(lab, "re-register").advance_outcome or "nothing"),
        _outcome,
        lambda outcome: (
            f"the row holds the new first run, not the score the tick read: {{:ok, :{outcome}}}, nothing written"
        ),
    ),
    Question(
        "registry_after_reregister",
        'and the registry afterwards? (as "report @ HH:MM")',
        lambda lab: _registry_after(lab, "re-register"),
        _text,
        lambda rows: f"the registration made after the read keeps its own first run: {rows}",
    ),
)


class Predictions:
    """The questions of one dive: ``predict(key=answer, ...)`` checks answers, ``questions()`` lists them."""

    def __init__(self, dive: str, questions: tuple[Question, ...]) -> None:
        self.dive = dive
        self._questions = {q.key: q for q in questions}

    def questions(self) -> str:
        return "\n".join(f"{q.key}: {q.ask}" for q in self._questions.values())

    def predict(self, *, lab: Lab | None = None, **answer: Any) -> Check:
        """Right or wrong, and why, for each answer given; nothing is run before every key is known."""
        if not answer:
            raise ValueError(f"answer: give at least one of {', '.join(self._questions)}")
        unknown = sorted(set(answer) - set(self._questions))
        if unknown:
            raise ValueError(f"{unknown[0]}: not a question of this dive; ask one of {', '.join(self._questions)}")
        given = {}
        for key, value in answer.items():
            try:
                given[key] = self._questions[key].read(value)
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
        lines, right = [], True
        with session(lab, "predict") as (base, _):
            for key, said in given.items():
                question = self._questions[key]
                sim_lab, _ = sim(base)
                truth = question.truth(sim_lab)
                truth = question.read(truth)
                base.reset(QUEUE)
                if said == truth:
                    lines.append(f"{key}: right - {question.why(truth)}")
                else:
                    right = False
                    lines.append(
                        f"{key}: not quite - you said {_show(said)}, it is {_show(truth)}: {question.why(truth)}"
                    )
        return Check(f"{self.dive}.predict", right, "\n".join(lines))


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


upsert = Predictions("upsert", UPSERT)
cadence = Predictions("cadence", CADENCE)
cancel = Predictions("cancel", CANCEL)
