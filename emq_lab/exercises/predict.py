"""Predict, then check: small questions per dive, answered as a value before the learner runs
the cell that shows it. The truth is never written down here: each question runs the real
package (the dive's own code) on a fresh queue of its own and reads the answer off it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import SimClock, hhmm
from ..dives import cadence as cadence_dive
from ..dives import crash as crash_dive
from ..dives import race as race_dive
from ..dives import storm as storm_dive
from ..dives import upsert as upsert_dive
from ..dives.common import move_to
from ..schedule import MINUTE_MS, Measure
from .check import Check, session

if TYPE_CHECKING:
    from ..lab import Lab

QUEUE = "exercise-predict"
DAY = "2026-01-05"  # the dives' simulated day; each question names its time of day


@dataclass(frozen=True)
class Question:
    """One prediction: the keyword, the question, how to read the truth off the package, how to
    read the learner's answer, and why the truth is what it is."""

    key: str
    ask: str
    truth: Callable[[Lab], Any]
    read: Callable[[Any], Any]
    why: Callable[[Any], str]
    clock: str = "09:00"  # the simulated time the question starts from, as the dive showed it


def _outcome(replies: dict[int, str]) -> Callable[[Any], str]:
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


REGISTER_REPLIES = {1: "registered", 0: "exists"}
ADVANCE_REPLIES = {1: "advanced", 0: "absent", 2: "moved"}


# A number as the dives print one: an optional label ("size 1", "every 15 min"), the number, and an
# optional unit word ("3 rows", "+12 min"). Anything else around it ("1 or 2") is not one answer.
_NUMBER = re.compile(
    r"(?:(?:every|size|rows|count)\s*[:=]?\s*)?([+-]?\d+)\s*"
    r"(?:rows?|min|mins|minutes?|occurrences?|jobs?|members?)?",
    re.IGNORECASE,
)


def _int(value: Any) -> int:
    """A whole number: ``3``, ``"3"``, ``"3 rows"``, ``"+12 min"``, ``"every 15 min"``, ``"size 1"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and (match := _NUMBER.fullmatch(value.strip())):
        return int(match[1])
    raise ValueError(f"expected one whole number (a unit word may follow), got {value!r}")


_HHMM = re.compile(r"(\d{1,2}):(\d{2})")


def _hhmm(text: str) -> str:
    """Every time in ``text`` written with two digits for the hour: ``9:00`` -> ``09:00``."""
    return _HHMM.sub(lambda m: f"{int(m[1]):02d}:{m[2]}", text)


_MINUTES = re.compile(r"(?<![\d:])(?<!\w)(:)(\d{2})\b")


def _on_the_clock(value: Any, clock: str) -> Any:
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


def _times(value: Any) -> tuple[str, ...]:
    """Times as a list or tuple (``["09:00", "9:15"]``) or one line (``"09:00 09:15"``, commas allowed)."""
    if isinstance(value, str):
        value = value.replace(",", " ").replace("/", " ").split()
    if not isinstance(value, list | tuple) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(f'expected "HH:MM" times, as a list or one line, got {value!r}')
    times = tuple(_hhmm(v.strip()) for v in value)
    bad = [t for t in times if not re.fullmatch(r"\d{2}:\d{2}", t)]
    if bad:
        raise ValueError(f'expected "HH:MM" times, got {bad[0]!r}')
    return times


def _rows(value: Any) -> str:
    """Registry rows as the dives print them, in any case: ``"report @ 09:45"``,
    ``"registry: report @ 9:45"``, ``"registry = report @ 09:45"`` or a ``("report", "09:45")`` pair."""
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
        value = f"{value[0]} @ {value[1]}"
    if not isinstance(value, str):
        raise ValueError(f'expected text such as "report @ 09:45", got {value!r}')
    text = re.sub(r"^registry\s*[:=]", "", value.strip().lower())
    text = re.sub(r"\s*@\s*", " @ ", text)
    return _hhmm(" ".join(text.split()))


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
        "boot #1 at 09:00, boot #2 at 09:05, EXISTS guard: how many registry rows after boot #2?",
        lambda lab: _boots(lab, upsert_dive.Strategy.GUARD, 2).size,
        _int,
        lambda size: f"boot #2 finds the record (EXISTS = 1), returns 0 and writes nothing: {size} row",
    ),
    Question(
        "boot_2_answers",
        "boot #1 at 09:00, boot #2 at 09:05, EXISTS guard: what does boot #2 answer?",
        lambda lab: _boots(lab, upsert_dive.Strategy.GUARD, 2).outcome,
        _outcome(REGISTER_REPLIES),
        lambda outcome: f"the record is live, so the script returns 0 -> {{:ok, :{outcome}}}",
    ),
    Question(
        "naive_rows_after_3_boots",
        "boots at 09:00, 09:05 and 09:10, naive append: how many registry rows after boot #3?",
        lambda lab: _boots(lab, upsert_dive.Strategy.NAIVE, 3).size,
        _int,
        lambda size: f"nothing looks before writing, so every boot appends its own row: {size} rows",
    ),
    Question(
        "period_after_redeploy_min",
        "EXISTS guard, boot #1 at 09:00 every 15 min, boot #2 at 09:05 every 30 min: the period after, in min?",
        lambda lab: (
            int(dict(_boots(lab, upsert_dive.Strategy.GUARD, 2, every_ms=30 * MINUTE_MS).after.record)["every_ms"])
            // MINUTE_MS
        ),
        _int,
        lambda minutes: f"register is insert-if-absent: boot #2 answers exists and the record keeps {minutes} min",
    ),
    Question(
        "writes_on_boot_2_of_1000",
        "1,000 names, boot #1 at 09:00 and boot #2 right after, one register_many each: how many writes on boot #2?",
        lambda lab: storm_dive.boot_storm(lab, QUEUE, names=1_000).boots[1].writes,
        _int,
        lambda writes: f"every name answers exists, and an EXISTS writes nothing: {writes} writes",
    ),
)


# -- dive 2: the cadence ---------------------------------------------------------------------------


def _lane(lab: Lab, measure: Measure) -> cadence_dive.Lane:
    start = lab.clock.now_ms()
    return cadence_dive.run_lane(
        lab, measure, every_ms=15 * MINUTE_MS, run_ms=4 * MINUTE_MS, cycles=4, start_ms=start, queue=QUEUE
    )


def _four_ticks(lab: Lab) -> tuple[int, int]:
    """Register a report every 15 min, tick now and at each of the next three periods: (rows, jobs)."""
    rep, pump = lab.repeat(QUEUE), lab.pump(QUEUE)
    rep.register("report", 15 * MINUTE_MS, "{}")
    jobs = len(pump.tick())
    for _ in range(3):
        move_to(lab, lab.clock.now_ms() + 15 * MINUTE_MS)
        jobs += len(pump.tick())
    return rep.count(), jobs


CADENCE = (
    Question(
        "rows_after_4_ticks",
        "report every 15 min, ticks at 09:00, 09:15, 09:30 and 09:45: how many registry rows afterwards?",
        lambda lab: _four_ticks(lab)[0],
        _int,
        lambda rows: f"each advance rewrites the one row's score; it never appends: {rows} row",
    ),
    Question(
        "jobs_after_4_ticks",
        "those four ticks, 09:00 to 09:45: how many jobs were enqueued?",
        lambda lab: _four_ticks(lab)[1],
        _int,
        lambda jobs: f"each tick mints a fresh JOB id for the due row: {jobs} jobs",
    ),
    Question(
        "next_runs",
        "every 15 min, 4-minute runs, first release 09:00, start-to-start: the first four releases?",
        lambda lab: tuple(hhmm(ms) for ms in _lane(lab, Measure.START_TO_START).releases),
        _times,
        lambda times: (
            f"each start is one period after the previous start; the run's length never counts: {' '.join(times)}"
        ),
    ),
    Question(
        "finish_based_runs",
        "every 15 min, 4-minute runs, first release 09:00, start-to-finish: the first four releases?",
        lambda lab: tuple(hhmm(ms) for ms in _lane(lab, Measure.START_TO_FINISH).releases),
        _times,
        lambda times: f"each start waits for the finish (4 min) plus the period: {' '.join(times)}",
    ),
    Question(
        "drift_after_4_cycles_min",
        "that start-to-finish lane from 09:00: how many minutes behind its :00/:15/:30/:45 mark is the fourth release?",
        lambda lab: _lane(lab, Measure.START_TO_FINISH).drift_ms // MINUTE_MS,
        _int,
        lambda minutes: f"every cycle adds the 4-minute run: three gaps, {minutes} min behind",
    ),
)


# -- dive 3: the cancel race -----------------------------------------------------------------------


def _play(lab: Lab, preset: str) -> race_dive.Race:
    race = race_dive.Race(lab, QUEUE)
    race.play(preset)
    return race


def _sweep(lab: Lab) -> tuple[str, int]:
    """Register ``stale``, delete its record behind the scripts' back, advance it: (answer, rows)."""
    rep = lab.repeat(QUEUE)
    rep.register("stale", 15 * MINUTE_MS, "{}")
    race_dive.drop_record(lab, QUEUE, "stale")
    return str(rep.advance("stale", 15 * MINUTE_MS)), rep.count()


def _registry_after(lab: Lab, preset: str) -> str:
    _play(lab, preset)
    return ", ".join(f"{name} @ {hhmm(ms)}" for name, ms in race_dive.snapshot(lab, QUEUE).registry)


CANCEL = (
    Question(
        "occurrences_if_cancel_after_read",
        "report due at 09:15; a cancel lands between the read and the enqueue: how many occurrences fire?",
        lambda lab: len(_play(lab, "after-read").fired),
        _int,
        lambda n: f"the pump enqueues what its read handed it, cancelled or not: {n} occurrence",
        clock="09:15",
    ),
    Question(
        "advance_answers",
        "report due at 09:15; a cancel lands between the enqueue and the advance: what does the advance answer?",
        lambda lab: str(_play(lab, "after-enqueue").advance_outcome or "nothing"),
        _outcome(ADVANCE_REPLIES),
        lambda outcome: f"the record is gone, so the guard re-adds nothing and sweeps: {{:ok, :{outcome}}}",
        clock="09:15",
    ),
    Question(
        "advance_after_reregister",
        "report due at 09:15, cancelled and registered anew (first run in 30 min) mid-tick: the advance answers?",
        lambda lab: str(_play(lab, "re-register").advance_outcome or "nothing"),
        _outcome(ADVANCE_REPLIES),
        lambda outcome: (
            f"the row holds the new first run, not the score the tick read: {{:ok, :{outcome}}}, nothing written"
        ),
        clock="09:15",
    ),
    Question(
        "registry_after_reregister",
        'that re-registration at 09:15: the registry afterwards? (as "report @ HH:MM")',
        lambda lab: _registry_after(lab, "re-register"),
        _rows,
        lambda rows: f"the registration made after the read keeps its own first run: {rows}",
        clock="09:15",
    ),
    Question(
        "advance_on_dangling_member",
        "stale is due at 09:15, but its record was deleted behind the scripts' back: the advance answers?",
        lambda lab: _sweep(lab)[0],
        _outcome(ADVANCE_REPLIES),
        lambda outcome: f"EXISTS finds no record, so the advance sweeps the member: {{:ok, :{outcome}}}",
        clock="09:15",
    ),
    Question(
        "rows_after_sweep",
        "after that 09:15 advance, how many registry rows does stale keep?",
        lambda lab: _sweep(lab)[1],
        _int,
        lambda rows: f"the sweep's ZREM removes the dangling member: {rows} rows",
        clock="09:15",
    ),
    Question(
        "jobs_in_slot_after_crash",
        "report due at 09:15; the pump (fresh ids) crashes after the enqueue, restarts at 09:16: jobs for the slot?",
        lambda lab: len(crash_dive.replay_crash(lab, QUEUE, slot_keyed=False).jobs),
        _int,
        lambda jobs: f"the crash left the row at 09:15, so the restart enqueues it again with a fresh id: {jobs} jobs",
        clock="09:15",
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
        """Right or wrong, and why, for each answer given, and which questions it left out;
        nothing is run before every key is known."""
        if not answer:
            raise ValueError(f"answer: give at least one of {', '.join(self._questions)}")
        unknown = sorted(set(answer) - set(self._questions))
        if unknown:
            raise ValueError(f"{unknown[0]}: not a question of this dive; ask one of {', '.join(self._questions)}")
        given = {}
        for key, value in answer.items():
            try:
                question = self._questions[key]
                given[key] = question.read(_on_the_clock(value, question.clock))
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
        lines, right = [], True
        with session(lab, "predict") as (base, _):
            for key, said in given.items():
                question = self._questions[key]
                sim_lab = base.with_clock(SimClock(f"{DAY}T{question.clock}:00Z"))
                truth = question.read(question.truth(sim_lab))
                base.reset(QUEUE)
                if said == truth:
                    lines.append(f"{key}: right - {question.why(truth)}")
                else:
                    right = False
                    lines.append(
                        f"{key}: not quite - you said {_show(said)}, it is {_show(truth)}: {question.why(truth)}"
                    )
        skipped = [key for key in self._questions if key not in given]
        if skipped:
            lines.append(f"not answered: {', '.join(skipped)}")
        return Check(f"{self.dive}.predict", right, "\n".join(lines))


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


upsert = Predictions("upsert", UPSERT)
cadence = Predictions("cadence", CADENCE)
cancel = Predictions("cancel", CANCEL)
