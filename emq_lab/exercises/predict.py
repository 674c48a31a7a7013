"""Predict, then check: small questions per dive, answered as a value before the learner runs
the cell that shows it. The truth is never written down here: each question runs the real
package (the dive's own code) on a fresh queue of its own and reads the answer off it."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import SimClock, hhmm
from ..dives import cadence as cadence_dive
from ..dives import crash as crash_dive
from ..dives import race as race_dive
from ..dives import storm as storm_dive
from ..dives import upsert as upsert_dive
from ..dives.common import entries_text, move_to
from ..schedule import MINUTE_MS, Measure
from . import answers
from .check import Check, session
from .explain import explain_error

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
    unit: str = "a count"  # what the answer is, for a form's label and for an answer that cannot be read
    example: str = '7, or "7 rows"'  # an answer of the right form (not necessarily the right one)
    minutes_from: str | None = None  # the time bare minutes (":17") count from; None: ``clock``
    tells: tuple[str, ...] = ()  # the questions its reason answers too: it waits until they are answered


@dataclass(frozen=True)
class Field:
    """One question as a form shows it: the keyword, the question, what kind of answer, an example."""

    key: str
    ask: str
    unit: str
    example: str


REGISTER_REPLIES = {1: "registered", 0: "exists"}
UPSERT_REPLIES = {1: "registered", 0: "updated"}
ADVANCE_REPLIES = {1: "advanced", 0: "absent", 2: "moved"}
# What each script's probe, as the pages write it ("EXISTS = 1"), means for its answer.
REGISTER_PROBE = {"exists": ("exists", "registered")}
UPSERT_PROBE = {"zscore": ("updated", "registered")}
ADVANCE_PROBE: dict[str, tuple[str | None, str]] = {"exists": (None, "absent")}
# The pages' own words for each script's outcome, as a learner may answer with them.
REGISTER_SAID = {
    "already registered": "exists", "not registered again": "exists", "writes nothing": "exists",
    "nothing written": "exists", "wrote nothing": "exists", "already there": "exists",
}  # fmt: skip
UPSERT_SAID = {
    "rewritten": "updated", "rewrites": "updated", "rewrote": "updated", "replaced": "updated",
    "update": "updated", "upserted": "updated", "overwritten": "updated",
}  # fmt: skip
ADVANCE_SAID = {"nothing written": "moved", "wrote nothing": "moved", "swept": "absent", "sweeps": "absent"}

OUTCOME = "an outcome"
ROWS = "registry rows"
TIMES = "times of day"
MINUTES = "minutes"


# -- dive 1: the upsert ----------------------------------------------------------------------------


def _boots(lab: Lab, strategy: upsert_dive.Strategy, boots: int, **kwargs: Any) -> upsert_dive.Boot:
    service = upsert_dive.Service(lab, QUEUE, strategy=strategy)
    service.reset()
    if boots > 1:
        service.boot_until(boots - 1)
    return service.boot(**kwargs)


def _entries_after(boot: upsert_dive.Boot) -> str:
    return entries_text(boot.after.entries, empty="")


UPSERT = (
    Question(
        "size_after_boot_2",
        "boot #1 at 09:00, boot #2 at 09:05, EXISTS guard: how many registry rows after boot #2? (a count)",
        lambda lab: _boots(lab, upsert_dive.Strategy.GUARD, 2).size,
        answers.number,
        lambda size: f"boot #2 finds the record (EXISTS = 1), returns 0 and writes nothing: {size} row",
        tells=("boot_2_answers", "registry_after_boot_2"),
    ),
    Question(
        "boot_2_answers",
        "boot #1 at 09:00, boot #2 at 09:05, EXISTS guard: what does boot #2 answer? (an outcome)",
        lambda lab: _boots(lab, upsert_dive.Strategy.GUARD, 2).outcome,
        answers.outcome(REGISTER_REPLIES, REGISTER_PROBE, REGISTER_SAID),
        lambda outcome: f"the record is live, so the script returns 0 -> {{:ok, :{outcome}}}",
        unit=OUTCOME,
        example='"registered", "{:ok, :registered}" or 1',
    ),
    Question(
        "registry_after_boot_2",
        "digest every 15 min, its first run one period after its boot; boot #1 at 09:00, boot #2 at 09:05, EXISTS"
        ' guard: the registry after boot #2? (as "digest @ HH:MM")',
        lambda lab: _entries_after(_boots(lab, upsert_dive.Strategy.GUARD, 2)),
        answers.entries("digest"),
        lambda rows: f"boot #2 writes nothing, so the row keeps boot #1's first run: {rows}",
        unit=ROWS,
        example='"digest @ 09:45"',
        tells=("boot_2_answers", "size_after_boot_2"),
    ),
    Question(
        "naive_rows_after_3_boots",
        "boots at 09:00, 09:05 and 09:10, naive append: how many registry rows after boot #3? (a count)",
        lambda lab: _boots(lab, upsert_dive.Strategy.NAIVE, 3).size,
        answers.number,
        lambda size: f"nothing looks before writing, so every boot appends its own row: {size} rows",
    ),
    Question(
        "naive_jobs_by_09_30",
        "boots at 09:00 and 09:05, naive append, every 15 min, first run 15 min after each boot: how many jobs"
        " does the pump fire from 09:00 up to 09:30 (a job at 09:30 itself not counted)?",
        lambda lab: upsert_dive.fire_after_boots(lab, QUEUE, 2).count(upsert_dive.Strategy.NAIVE),
        answers.number,
        lambda jobs: f"each boot's row carries a record, and the pump fires every row it finds due: {jobs} jobs",
        example='7, or "7 jobs"',
    ),
    Question(
        "upsert_boot_2_answers",
        "boot #1 at 09:00, boot #2 at 09:05, ZSCORE upsert: what does boot #2 answer? (an outcome)",
        lambda lab: _boots(lab, upsert_dive.Strategy.UPSERT, 2).outcome,
        answers.outcome(UPSERT_REPLIES, UPSERT_PROBE, UPSERT_SAID),
        lambda outcome: f"ZSCORE finds boot #1's score: the script rewrites the row, returns 0 -> {{:ok, :{outcome}}}",
        unit=OUTCOME,
        example='"registered", "{:ok, :registered}" or 1',
    ),
    Question(
        "upsert_registry_after_boot_2",
        "digest every 15 min, its first run one period after its boot; boot #1 at 09:00, boot #2 at 09:05, ZSCORE"
        ' upsert: the registry after boot #2? (as "digest @ HH:MM")',
        lambda lab: _entries_after(_boots(lab, upsert_dive.Strategy.UPSERT, 2)),
        answers.entries("digest"),
        lambda rows: f"the same member is stored again at boot #2's first run, its now + 15 min: {rows}",
        unit=ROWS,
        example='"digest @ 09:45"',
        tells=("upsert_boot_2_answers",),
    ),
    Question(
        "period_after_redeploy_min",
        "EXISTS guard, boot #1 at 09:00 every 15 min, boot #2 at 09:05 every 30 min: the period the record keeps,"
        " in minutes (as 20, not 1200000 ms)?",
        lambda lab: (
            int(dict(_boots(lab, upsert_dive.Strategy.GUARD, 2, every_ms=30 * MINUTE_MS).after.record)["every_ms"])
            // MINUTE_MS
        ),
        answers.minutes,
        lambda minutes: f"register is insert-if-absent: boot #2 answers exists and the record keeps {minutes} min",
        unit=MINUTES,
        example='20, or "20 min"',
    ),
    Question(
        "writes_on_boot_2_of_1000",
        "1,000 names, boot #1 at 09:00 and boot #2 right after, one register_many each: how many writes on boot #2?"
        " (a count)",
        lambda lab: storm_dive.boot_storm(lab, QUEUE, names=1_000).boots[1].writes,
        answers.number,
        lambda writes: f"every name answers exists, and an EXISTS writes nothing: {writes} writes",
        example='7, or "7 writes"',
    ),
)


# -- dive 2: the cadence ---------------------------------------------------------------------------


def _lane(
    lab: Lab, measure: Measure, *, every_min: int = 15, run_ms: int = 4 * MINUTE_MS, cycles: int = 4, tick_ms: int = 0
) -> cadence_dive.Lane:
    return cadence_dive.run_lane(
        lab, measure, every_ms=every_min * MINUTE_MS, run_ms=run_ms, cycles=cycles, tick_ms=tick_ms,
        start_ms=lab.clock.now_ms(), queue=QUEUE,
    )  # fmt: skip


def _keeps_up(lab: Lab) -> str:
    """Every 2 min, runs of 0 s, a tick every 90 s, 6 cycles: the lane that falls least behind."""
    lanes = [_lane(lab, m, every_min=2, run_ms=0, cycles=6, tick_ms=90_000) for m in Measure]
    return min(lanes, key=lambda lane: lane.drift_ms).measure.value


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
        "report every 15 min, registered at 09:00 with its first run at once (09:00), ticks at 09:00, 09:15, 09:30"
        " and 09:45: how many registry rows afterwards? (a count)",
        lambda lab: _four_ticks(lab)[0],
        answers.number,
        lambda rows: f"each advance rewrites the one row's score; it never appends: {rows} row",
    ),
    Question(
        "jobs_after_4_ticks",
        "those four ticks, 09:00 to 09:45 both included, the first run due at 09:00: how many jobs were enqueued?"
        " (a count)",
        lambda lab: _four_ticks(lab)[1],
        answers.number,
        lambda jobs: f"each tick mints a fresh JOB id for the due row: {jobs} jobs",
        example='7, or "7 jobs"',
    ),
    Question(
        "rows_after_1000_runs",
        "report every 1 min from 09:00, fast-forwarded through 1,000 occurrences (a tenth of the dive's run):"
        " how many registry rows? (a count)",
        lambda lab: cadence_dive.fast_forward(lab, QUEUE, occurrences=1_000).registry_rows,
        answers.number,
        lambda rows: f"each occurrence is a job of its own; the advance rewrites the one row: {rows} row",
    ),
    Question(
        "next_runs",
        "every 15 min, 4-minute runs, first release 09:00, start-to-start: the first four releases, 09:00 included?"
        " (HH:MM)",
        lambda lab: tuple(hhmm(ms) for ms in _lane(lab, Measure.START_TO_START).releases),
        answers.times,
        lambda times: (
            f"each start is one period after the previous start; the run's length never counts: {' '.join(times)}"
        ),
        unit=TIMES,
        example='"09:00 09:10 09:20 09:30"',
    ),
    Question(
        "finish_based_runs",
        "every 15 min, 4-minute runs, first release 09:00, start-to-finish: the first four releases, 09:00 included?"
        " (HH:MM)",
        lambda lab: tuple(hhmm(ms) for ms in _lane(lab, Measure.START_TO_FINISH).releases),
        answers.times,
        lambda times: f"each start waits for the finish (4 min) plus the period: {' '.join(times)}",
        unit=TIMES,
        example='"09:00 09:10 09:20 09:30"',
    ),
    Question(
        "drift_after_4_cycles_min",
        "that start-to-finish lane from 09:00: how many minutes behind its :00/:15/:30/:45 mark is the fourth"
        " release? (minutes)",
        lambda lab: _lane(lab, Measure.START_TO_FINISH).drift_ms // MINUTE_MS,
        answers.minutes,
        lambda minutes: f"every cycle adds the 4-minute run: three gaps, {minutes} min behind",
        unit=MINUTES,
        example='20, or "+20 min"',
        tells=("finish_based_runs",),
    ),
    Question(
        "drift_with_10_min_runs_min",
        "every 15 min, 10-minute runs, first release 09:00, start-to-finish: how many minutes behind its mark (its"
        " slot on the 15-minute grid from 09:00, 09:45 for run 4) is run 4? (minutes)",
        lambda lab: _lane(lab, Measure.START_TO_FINISH, run_ms=10 * MINUTE_MS).drift_ms // MINUTE_MS,
        answers.minutes,
        lambda minutes: f"each cycle adds the 10-minute run; start-to-start stays on the marks: {minutes} min",
        unit=MINUTES,
        example='20, or "+20 min"',
    ),
    Question(
        "late_pump_drift_min",
        "every 15 min, 4-minute runs, from 09:00, a tick every 2 min: "
        "how many minutes behind its mark is start-to-start's run 6? (minutes)",
        lambda lab: _lane(lab, Measure.START_TO_START, cycles=6, tick_ms=2 * MINUTE_MS).drift_ms // MINUTE_MS,
        answers.minutes,
        lambda minutes: f"each release waits for a tick, and the next period counts from it: {minutes} min",
        unit=MINUTES,
        example='20, or "+20 min"',
    ),
    Question(
        "jobs_at_10_02",
        "start-to-start, every 15 min from 09:00, the pump down from 09:22 to 10:02: how many jobs does the tick at"
        " 10:02 release? (a count)",
        lambda lab: len(cadence_dive.outage(lab, queue=QUEUE).on_return),
        answers.number,
        lambda jobs: f"the row holds one score, and a tick fires a due name once however late: {jobs} job",
        example='7, or "7 jobs"',
    ),
    Question(
        "runs_after_outage",
        'that outage, start-to-start: the three releases after 10:02, 10:02 not included? (HH:MM, or ":MM" after'
        " 10:02)",
        lambda lab: tuple(hhmm(run.release_ms) for run in cadence_dive.outage(lab, queue=QUEUE).after),
        answers.times,
        lambda times: f"the period counts from the late release at 10:02: {' '.join(times)}",
        unit=TIMES,
        example='"10:10 10:20 10:30" or ":10 :20 :30"',
        minutes_from="10:02",
    ),
    Question(
        "lane_that_keeps_up",
        "every 2 min, runs of 0 s, from 09:00, a tick every 90 s: which lane is least behind after 6 cycles? (a lane)",
        _keeps_up,
        answers.lane,
        lambda lane: f"the grid counts from its slots, so it is never more than a tick late: {lane}",
        unit="a lane",
        example='"start-to-start", "start-to-finish" or "fixed grid"',
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


def _day_after_cancel(lab: Lab) -> int:
    """Register ``report`` (due at once), cancel it, tick every 15 min for a day: occurrences."""
    rep = lab.repeat(QUEUE)
    rep.register("report", 15 * MINUTE_MS, "{}")
    rep.cancel("report")
    return len(lab.pump(QUEUE).run(until_ms=lab.clock.now_ms() + 24 * 60 * MINUTE_MS, step_ms=15 * MINUTE_MS))


def _registry(lab: Lab) -> str:
    return entries_text(race_dive.snapshot(lab, QUEUE).registry, empty="")


def _registry_after(lab: Lab, preset: str) -> str:
    _play(lab, preset)
    return _registry(lab)


def _registry_without_compare(lab: Lab) -> str:
    race_dive.without_compare_and_set(lab, QUEUE)
    return _registry(lab)


CANCEL = (
    Question(
        "occurrences_in_a_day_after_cancel",
        "report every 15 min, registered and cancelled at 09:00, ticks every 15 min from 09:00 to 09:00 next day:"
        " how many occurrences? (a count)",
        _day_after_cancel,
        answers.number,
        lambda n: f"the cancel took the member and the record, so no tick finds report due: {n} occurrences",
        example='7, or "7 occurrences"',
    ),
    Question(
        "occurrences_if_cancel_after_read",
        "report due at 09:15; a cancel lands between the read and the enqueue: how many occurrences fire? (a count)",
        lambda lab: len(_play(lab, "after-read").fired),
        answers.number,
        lambda n: f"the pump enqueues what its read handed it, cancelled or not: {n} occurrence",
        clock="09:15",
        example='7, or "7 occurrences"',
    ),
    Question(
        "advance_answers",
        "report due at 09:15; a cancel lands between the enqueue and the advance: what does the advance answer?"
        " (an outcome)",
        lambda lab: str(_play(lab, "after-enqueue").advance_outcome or "nothing"),
        answers.outcome(ADVANCE_REPLIES, ADVANCE_PROBE, ADVANCE_SAID),
        lambda outcome: (
            f"the cancel took the record and the member: the guard re-adds nothing, and its ZREM finds nothing"
            f" left to remove: {{:ok, :{outcome}}}"
        ),
        clock="09:15",
        unit=OUTCOME,
        example='"advanced", "{:ok, :advanced}" or 1',
    ),
    Question(
        "advance_after_reregister",
        "report due at 09:15, cancelled and registered anew (first run in 30 min) mid-tick: the advance answers?"
        " (an outcome)",
        lambda lab: str(_play(lab, "re-register").advance_outcome or "nothing"),
        answers.outcome(ADVANCE_REPLIES, ADVANCE_PROBE, ADVANCE_SAID),
        lambda outcome: (
            f"the row holds the new first run, not the score the tick read: {{:ok, :{outcome}}}, nothing written"
        ),
        clock="09:15",
        unit=OUTCOME,
        example='"advanced", "{:ok, :advanced}" or 1',
        tells=("registry_after_reregister",),
    ),
    Question(
        "registry_after_reregister",
        'that re-registration at 09:15: the registry afterwards? (as "report @ HH:MM")',
        lambda lab: _registry_after(lab, "re-register"),
        answers.entries("report"),
        lambda rows: f"the registration made after the read keeps its own first run: {rows}",
        clock="09:15",
        unit=ROWS,
        example='"report @ 10:15"',
    ),
    Question(
        "registry_without_compare",
        "that re-registration at 09:15 (the old period 15 min), advanced without the compare: the registry afterwards?"
        ' (as "report @ HH:MM")',
        _registry_without_compare,
        answers.entries("report"),
        lambda rows: f"an unconditional advance writes the tick's now + the old period over the new first run: {rows}",
        clock="09:15",
        unit=ROWS,
        example='"report @ 10:15"',
    ),
    Question(
        "advance_on_dangling_member",
        "stale is due at 09:15, but its record was deleted behind the scripts' back: the advance answers? (an outcome)",
        lambda lab: _sweep(lab)[0],
        answers.outcome(ADVANCE_REPLIES, ADVANCE_PROBE, ADVANCE_SAID),
        lambda outcome: f"EXISTS finds no record, so the advance sweeps the member: {{:ok, :{outcome}}}",
        clock="09:15",
        unit=OUTCOME,
        example='"advanced", "{:ok, :advanced}" or 1',
        tells=("rows_after_sweep",),
    ),
    Question(
        "rows_after_sweep",
        "after that 09:15 advance, how many registry rows does stale keep? (a count)",
        lambda lab: _sweep(lab)[1],
        answers.number,
        lambda rows: f"the sweep's ZREM removes the dangling member: {rows} rows",
        clock="09:15",
    ),
    Question(
        "orders_refused_of_24",
        "report due at 09:15; read, cancel, enqueue, advance in all 24 orders: how many does the pump's order"
        " refuse? (a count)",
        lambda lab: len(race_dive.every_order(race_dive.Race(lab, QUEUE)).refused),
        answers.number,
        lambda n: f"the pump reads, enqueues, then advances; only the cancel may go anywhere: {n} refused",
        clock="09:15",
        example='7, or "7 orders"',
    ),
    Question(
        "jobs_in_slot_after_crash",
        "report due at 09:15; the pump (fresh ids) crashes after the enqueue, restarts at 09:16: how many jobs"
        " for the 09:15 slot? (a count)",
        lambda lab: len(crash_dive.replay_crash(lab, QUEUE, slot_keyed=False).jobs),
        answers.number,
        lambda jobs: f"the crash left the row at 09:15, so the restart enqueues it again with a fresh id: {jobs} jobs",
        clock="09:15",
        example='7, or "7 jobs"',
    ),
)


class Predictions:
    """The questions of one dive: ``predict(key=answer, ...)`` checks answers, ``questions()`` lists
    them as text, ``fields()`` as a form shows them."""

    def __init__(self, dive: str, questions: tuple[Question, ...]) -> None:
        self.dive = dive
        self._questions = {q.key: q for q in questions}

    def questions(self) -> str:
        return "\n".join(f"{q.key}: {q.ask}" for q in self._questions.values())

    def fields(self) -> tuple[Field, ...]:
        """Each question as a form shows it: keyword, question, kind of answer, an example of its form."""
        return tuple(Field(q.key, q.ask, q.unit, q.example) for q in self._questions.values())

    def prompts(self) -> dict[str, str]:
        """Each question's keyword and its wording, in the dive's order (a form builds its boxes from them)."""
        return {q.key: q.ask for q in self._questions.values()}

    def predict(self, *args: Lab, lab: Lab | None = None, **answer: Any) -> Check:
        """Right or wrong, and why, for each answer given, and which questions it left out. An
        answer that cannot be read, or a keyword that names no question, is a line of the verdict
        (what was expected, and an example), and the other answers are still checked. A reason that
        would answer another question of the dive waits until that one is answered too."""
        if args:
            if len(args) > 1 or lab is not None:
                raise TypeError(
                    f"{self.dive}.predict takes the lab once, then the answers by name: predict(lab, key=...)"
                )
            lab = args[0]
            if not hasattr(lab, "pump"):
                raise TypeError(
                    f"{self.dive}.predict: give the answers by name, e.g. predict({next(iter(self._questions))}=1)"
                )
        if not answer:
            raise ValueError(f"answer: give at least one of {', '.join(self._questions)}")
        misnamed = {key: answer.pop(key) for key in [k for k in answer if k not in self._questions]}
        given: dict[str, tuple[Any, str]] = {}
        unread: dict[str, str] = {}
        for key, value in answer.items():
            question = self._questions[key]
            try:
                if isinstance(value, str) and any(c.isdigit() and not c.isascii() for c in value):
                    raise ValueError("write its digits as 0-9")
                given[key] = answers.plain(
                    question.read(answers.on_the_clock(value, question.minutes_from or question.clock))
                )
            except ValueError as exc:
                unread[key] = (
                    f"{key}: could not read {_quoted(value)} as {question.unit} ({exc}); try {question.example}"
                )
        lines, right = [_misnamed(key, self._questions) for key in misnamed], not unread and not misnamed
        with session(lab, "predict") as (base, _):
            for key in answer:
                if key in unread:
                    lines.append(unread[key])
                    continue
                question = self._questions[key]
                said, note = given[key]
                noted = f" ({note})" if note else ""
                sim_lab = base.with_clock(SimClock(f"{DAY}T{question.clock}:00Z"))
                try:
                    truth, _ = answers.plain(question.read(question.truth(sim_lab)))
                except Exception as error:  # noqa: BLE001 - a fault of the sandbox is a line, not a traceback
                    right = False
                    lines.append(
                        f"{key}: not checked - the sandbox failed ({explain_error(error)}); run the check again"
                    )
                    continue
                finally:
                    base.reset(QUEUE)
                why = _reason(question, truth, answer)
                if said == truth:
                    lines.append(f"{key}: right{noted} - {why}")
                else:
                    right = False
                    lines.append(
                        f"{key}: not quite - you said {_show(said)}{noted}, it is {_show(truth)}"
                        f"{_differs(said, truth)}: {why}"
                    )
        skipped = [key for key in self._questions if key not in answer]
        if skipped:
            lines.append(f"not answered: {', '.join(skipped)}")
        return Check(f"{self.dive}.predict", right, "\n".join(lines))


def _reason(question: Question, truth: Any, answer: dict[str, Any]) -> str:
    """Why the truth is what it is; while a question its reason would answer is still open, only the
    truth, and when the reason comes."""
    waiting = [key for key in question.tells if key not in answer]
    if waiting:
        return f"{_show(truth)} (why, once you have answered {' and '.join(waiting)} too)"
    return question.why(truth)


def _misnamed(key: str, questions: dict[str, Question]) -> str:
    """A keyword that names no question, as a line of the verdict, with the question it likely meant."""
    near = difflib.get_close_matches(key, questions, n=1, cutoff=0.6)
    if near:
        return f"{key} is not a question; did you mean {near[0]}?"
    return f"{key} is not a question of this dive; ask one of {', '.join(questions)}"


def _quoted(value: Any) -> str:
    """An answer as the learner typed it, short enough for one line."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _differs(said: Any, truth: Any) -> str:
    """What differs between two registry rows (``"name @ HH:MM"``): the name, the time or both."""
    if not (isinstance(said, str) and isinstance(truth, str) and " @ " in said and " @ " in truth):
        return ""
    (said_name, _, said_at), (name, _, at) = said.partition(" @ "), truth.partition(" @ ")
    if "," in said or "," in truth:
        return ""  # more than one row: the two lists speak for themselves
    if said_name == name:
        return " (the time differs)"
    if said_at == at:
        return " (the name differs)"
    return " (the name and the time differ)"


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


upsert = Predictions("upsert", UPSERT)
cadence = Predictions("cadence", CADENCE)
cancel = Predictions("cancel", CANCEL)
