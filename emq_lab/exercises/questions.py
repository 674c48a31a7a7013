"""Each dive's Predict questions: what is asked, the kind of answer (its reader, unit and an example form), how the
truth is read off the real package (the dive's own code, on a fresh queue), and why; no truth is written down here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import hhmm
from ..dives import cadence as cadence_dive
from ..dives import common
from ..dives import crash as crash_dive
from ..dives import race as race_dive
from ..dives import storm as storm_dive
from ..dives import upsert as upsert_dive
from ..schedule import MINUTE_MS, Measure
from . import answers

if TYPE_CHECKING:
    from ..lab import Lab

QUEUE = "exercise-predict"
DAY = "2026-01-05"  # the dives' simulated day; each question names its time of day


@dataclass(frozen=True)
class Kind:
    """A kind of answer: how it is read, what it is, and an example of its form (not necessarily right)."""

    read: Callable[[Any], Any]
    unit: str
    example: str


@dataclass(frozen=True)
class Question:
    """One prediction: keyword, question, how to read the truth, kind of answer, why the truth is so."""

    key: str
    ask: str
    truth: Callable[[Lab], Any]
    kind: Kind
    why: Callable[[Any], str]
    clock: str = "09:00"  # the simulated time the question starts from, as the dive showed it
    minutes_from: str | None = None  # the time bare minutes (":17") count from; None: ``clock``
    tells: tuple[str, ...] = ()  # the questions its reason answers too: it waits until they are answered


def count(noun: str = "rows") -> Kind:
    return Kind(answers.number, "a count", f'7, or "7 {noun}"')


def registry(name: str, at: str) -> Kind:
    return Kind(answers.entries(name), "registry rows", f'"{name} @ {at}"')


def outcome(replies: dict[int, str], probe: Any, example: str, **words: tuple[str, ...]) -> Kind:
    """An outcome; ``words`` are the pages' own words for each (``exists=("already there",)``)."""
    said = {phrase: meant for meant, phrases in words.items() for phrase in phrases}
    return Kind(answers.outcome(replies, probe, said), "an outcome", f'"{example}", "{{:ok, :{example}}}" or 1')


MINUTES = Kind(answers.minutes, "minutes", '20, or "20 min"')
DRIFT = Kind(answers.minutes, "minutes", '20, or "+20 min"')
TIMES = Kind(answers.times, "times of day", '"09:00 09:10 09:20 09:30"')
LANE = Kind(answers.lane, "a lane", '"start-to-start", "start-to-finish" or "fixed grid"')
# Each script's replies; its probe as the pages write it ("EXISTS = 1"); the pages' own words for it.
REGISTER = outcome(
    {1: "registered", 0: "exists"}, {"exists": ("exists", "registered")}, "registered",
    exists=("already registered", "not registered again", "already there", "writes nothing", "nothing written",
            "wrote nothing"),
)  # fmt: skip
UPSERT_REPLY = outcome(
    {1: "registered", 0: "updated"}, {"zscore": ("updated", "registered")}, "registered",
    updated=("rewritten", "rewrites", "rewrote", "replaced", "update", "upserted", "overwritten"),
)  # fmt: skip
ADVANCE = outcome(
    {1: "advanced", 0: "absent", 2: "moved"}, {"exists": (None, "absent")}, "advanced",
    moved=("nothing written", "wrote nothing"), absent=("swept", "sweeps"),
)  # fmt: skip


# -- dive 1: the upsert ----------------------------------------------------------------------------


def _boots(lab: Lab, strategy: upsert_dive.Strategy, boots: int, **kwargs: Any) -> upsert_dive.Boot:
    service = upsert_dive.Service(lab, QUEUE, strategy=strategy)
    service.reset()
    if boots > 1:
        service.boot_until(boots - 1)
    return service.boot(**kwargs)


def _period_kept(lab: Lab) -> int:
    """Boot #2 asks for every 30 min: the period, in minutes, the record keeps."""
    record = dict(_boots(lab, upsert_dive.Strategy.GUARD, 2, every_ms=30 * MINUTE_MS).after.record)
    return int(record["every_ms"]) // MINUTE_MS


GUARD, NAIVE, ZSCORE = upsert_dive.Strategy.GUARD, upsert_dive.Strategy.NAIVE, upsert_dive.Strategy.UPSERT
DIGEST = "digest every 15 min, its first run one period after its boot; boot #1 at 09:00, boot #2 at 09:05"

UPSERT = (
    Question("size_after_boot_2",
        "boot #1 at 09:00, boot #2 at 09:05, EXISTS guard: how many registry rows after boot #2? (a count)",
        lambda lab: _boots(lab, GUARD, 2).size, count(),
        lambda size: f"boot #2 finds the record (EXISTS = 1), returns 0 and writes nothing: {size} row",
        tells=("boot_2_answers", "registry_after_boot_2")),
    Question("boot_2_answers",
        "boot #1 at 09:00, boot #2 at 09:05, EXISTS guard: what does boot #2 answer? (an outcome)",
        lambda lab: _boots(lab, GUARD, 2).outcome, REGISTER,
        lambda outcome: f"the record is live, so the script returns 0 -> {{:ok, :{outcome}}}"),
    Question("registry_after_boot_2",
        f'{DIGEST}, EXISTS guard: the registry after boot #2? (as "digest @ HH:MM")',
        lambda lab: common.entries_text(_boots(lab, GUARD, 2).after.registry), registry("digest", "09:45"),
        lambda rows: f"boot #2 writes nothing, so the row keeps boot #1's first run: {rows}",
        tells=("boot_2_answers", "size_after_boot_2")),
    Question("naive_rows_after_3_boots",
        "boots at 09:00, 09:05 and 09:10, naive append: how many registry rows after boot #3? (a count)",
        lambda lab: _boots(lab, NAIVE, 3).size, count(),
        lambda size: f"nothing looks before writing, so every boot appends its own row: {size} rows"),
    Question("naive_jobs_by_09_30",
        "boots at 09:00 and 09:05, naive append, every 15 min, first run 15 min after each boot: how many jobs"
        " does the pump fire from 09:00 up to 09:30 (a job at 09:30 itself not counted)?",
        lambda lab: upsert_dive.fire_after_boots(lab, QUEUE, 2).count(NAIVE), count("jobs"),
        lambda jobs: f"each boot's row carries a record, and the pump fires every row it finds due: {jobs} jobs"),
    Question("upsert_boot_2_answers",
        "boot #1 at 09:00, boot #2 at 09:05, ZSCORE upsert: what does boot #2 answer? (an outcome)",
        lambda lab: _boots(lab, ZSCORE, 2).outcome, UPSERT_REPLY,
        lambda outcome: f"ZSCORE finds boot #1's score: the script rewrites the row, returns 0 -> {{:ok, :{outcome}}}"),
    Question("upsert_registry_after_boot_2",
        f'{DIGEST}, ZSCORE upsert: the registry after boot #2? (as "digest @ HH:MM")',
        lambda lab: common.entries_text(_boots(lab, ZSCORE, 2).after.registry), registry("digest", "09:45"),
        lambda rows: f"the same member is stored again at boot #2's first run, its now + 15 min: {rows}",
        tells=("upsert_boot_2_answers",)),
    Question("period_after_redeploy_min",
        "EXISTS guard, boot #1 at 09:00 every 15 min, boot #2 at 09:05 every 30 min: the period the record keeps,"
        " in minutes (as 20, not 1200000 ms)?",
        _period_kept, MINUTES,
        lambda minutes: f"register is insert-if-absent: boot #2 answers exists and the record keeps {minutes} min"),
    Question("writes_on_boot_2_of_1000",
        "1,000 names, boot #1 at 09:00 and boot #2 right after, one register_many each: how many writes on boot #2?"
        " (a count)",
        lambda lab: storm_dive.boot_storm(lab, QUEUE, names=1_000).boots[1].writes, count("writes"),
        lambda writes: f"every name answers exists, and an EXISTS writes nothing: {writes} writes"),
)  # fmt: skip


# -- dive 2: the cadence ---------------------------------------------------------------------------


def _trace(
    lab: Lab, *, every_min: int = 15, run_ms: int = 4 * MINUTE_MS, cycles: int = 4, tick_ms: int = 0
) -> cadence_dive.Trace:
    """The dive's three lanes from the lab's now, on this module's queues (emptied afterwards)."""
    traced = cadence_dive.trace(
        lab, every_ms=every_min * MINUTE_MS, run_ms=run_ms, cycles=cycles, tick_ms=tick_ms,
        start_ms=lab.clock.now_ms(), prefix=QUEUE,
    )  # fmt: skip
    lab.reset_all(lane.queue for lane in traced.lanes)
    return traced


def _lane(lab: Lab, measure: Measure, **controls: int) -> cadence_dive.Lane:
    return _trace(lab, **controls).lane(measure)


def _releases(lab: Lab, measure: Measure) -> tuple[str, ...]:
    return tuple(hhmm(ms) for ms in _lane(lab, measure).releases)


def _keeps_up(lab: Lab) -> str:
    """Every 2 min, runs of 0 s, a tick every 90 s, 6 cycles: the lane that falls least behind."""
    lanes = _trace(lab, every_min=2, run_ms=0, cycles=6, tick_ms=90_000).lanes
    return min(lanes, key=lambda lane: lane.drift_ms).measure.value


def _four_ticks(lab: Lab) -> tuple[int, int]:
    """Register a report every 15 min, tick now and at each of the next three periods: (rows, jobs)."""
    rep, pump = lab.repeat(QUEUE), lab.pump(QUEUE)
    rep.register("report", 15 * MINUTE_MS, "{}")
    jobs = len(pump.tick())
    for _ in range(3):
        common.move_to(lab, lab.clock.now_ms() + 15 * MINUTE_MS)
        jobs += len(pump.tick())
    return rep.count(), jobs


CADENCE = (
    Question("rows_after_4_ticks",
        "report every 15 min, registered at 09:00 with its first run at once (09:00), ticks at 09:00, 09:15, 09:30"
        " and 09:45: how many registry rows afterwards? (a count)",
        lambda lab: _four_ticks(lab)[0], count(),
        lambda rows: f"each advance rewrites the one row's score; it never appends: {rows} row"),
    Question("jobs_after_4_ticks",
        "those four ticks, 09:00 to 09:45 both included, the first run due at 09:00: how many jobs were enqueued?"
        " (a count)",
        lambda lab: _four_ticks(lab)[1], count("jobs"),
        lambda jobs: f"each tick mints a fresh JOB id for the due row: {jobs} jobs"),
    Question("rows_after_1000_runs",
        "report every 1 min from 09:00, fast-forwarded through 1,000 occurrences (a tenth of the dive's run):"
        " how many registry rows? (a count)",
        lambda lab: cadence_dive.fast_forward(lab, QUEUE, occurrences=1_000).registry_rows, count(),
        lambda rows: f"each occurrence is a job of its own; the advance rewrites the one row: {rows} row"),
    Question("next_runs",
        "every 15 min, 4-minute runs, first release 09:00, start-to-start: the first four releases, 09:00 included?"
        " (HH:MM)",
        lambda lab: _releases(lab, Measure.START_TO_START), TIMES,
        lambda times: (
            f"each start is one period after the previous start; the run's length never counts: {' '.join(times)}"
        )),
    Question("finish_based_runs",
        "every 15 min, 4-minute runs, first release 09:00, start-to-finish: the first four releases, 09:00 included?"
        " (HH:MM)",
        lambda lab: _releases(lab, Measure.START_TO_FINISH), TIMES,
        lambda times: f"each start waits for the finish (4 min) plus the period: {' '.join(times)}"),
    Question("drift_after_4_cycles_min",
        "that start-to-finish lane from 09:00: how many minutes behind its :00/:15/:30/:45 mark is the fourth"
        " release? (minutes)",
        lambda lab: _lane(lab, Measure.START_TO_FINISH).drift_ms // MINUTE_MS, DRIFT,
        lambda minutes: f"every cycle adds the 4-minute run: three gaps, {minutes} min behind",
        tells=("finish_based_runs",)),
    Question("drift_with_10_min_runs_min",
        "every 15 min, 10-minute runs, first release 09:00, start-to-finish: how many minutes behind its mark (its"
        " slot on the 15-minute grid from 09:00, 09:45 for run 4) is run 4? (minutes)",
        lambda lab: _lane(lab, Measure.START_TO_FINISH, run_ms=10 * MINUTE_MS).drift_ms // MINUTE_MS, DRIFT,
        lambda minutes: f"each cycle adds the 10-minute run; start-to-start stays on the marks: {minutes} min"),
    Question("late_pump_drift_min",
        "every 15 min, 4-minute runs, from 09:00, a tick every 2 min: "
        "how many minutes behind its mark is start-to-start's run 6? (minutes)",
        lambda lab: _lane(lab, Measure.START_TO_START, cycles=6, tick_ms=2 * MINUTE_MS).drift_ms // MINUTE_MS, DRIFT,
        lambda minutes: f"each release waits for a tick, and the next period counts from it: {minutes} min"),
    Question("jobs_at_10_02",
        "start-to-start, every 15 min from 09:00, the pump down from 09:22 to 10:02: how many jobs does the tick at"
        " 10:02 release? (a count)",
        lambda lab: len(cadence_dive.outage(lab, queue=QUEUE).on_return), count("jobs"),
        lambda jobs: f"the row holds one score, and a tick fires a due name once however late: {jobs} job"),
    Question("runs_after_outage",
        'that outage, start-to-start: the three releases after 10:02, 10:02 not included? (HH:MM, or ":MM" after'
        " 10:02)",
        lambda lab: tuple(hhmm(run.release_ms) for run in cadence_dive.outage(lab, queue=QUEUE).after),
        Kind(answers.times, "times of day", '"10:10 10:20 10:30" or ":10 :20 :30"'),
        lambda times: f"the period counts from the late release at 10:02: {' '.join(times)}", minutes_from="10:02"),
    Question("lane_that_keeps_up",
        "every 2 min, runs of 0 s, from 09:00, a tick every 90 s: which lane is least behind after 6 cycles? (a lane)",
        _keeps_up, LANE,
        lambda lane: f"the grid counts from its slots, so it is never more than a tick late: {lane}"),
)  # fmt: skip


# -- dive 3: the cancel race -----------------------------------------------------------------------


def _play(lab: Lab, preset: str) -> race_dive.Race:
    race = race_dive.Race(lab, QUEUE)
    race.play(preset)
    return race


def _advance_answers(preset: str) -> Callable[[Lab], str]:
    return lambda lab: str(_play(lab, preset).advance_outcome or "nothing")


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


def _registry_after(lab: Lab, preset: str | None) -> str:
    """The registry after ``preset`` is played (None: the re-registration advanced without the compare)."""
    if preset is None:
        race_dive.without_compare_and_set(lab, QUEUE)
    else:
        _play(lab, preset)
    return common.entries_text(race_dive.snapshot(lab, QUEUE).registry)


CANCEL = (
    Question("occurrences_in_a_day_after_cancel",
        "report every 15 min, registered and cancelled at 09:00, ticks every 15 min from 09:00 to 09:00 next day:"
        " how many occurrences? (a count)",
        _day_after_cancel, count("occurrences"),
        lambda n: f"the cancel took the member and the record, so no tick finds report due: {n} occurrences"),
    Question("occurrences_if_cancel_after_read",
        "report due at 09:15; a cancel lands between the read and the enqueue: how many occurrences fire? (a count)",
        lambda lab: len(_play(lab, "after-read").fired), count("occurrences"),
        lambda n: f"the pump enqueues what its read handed it, cancelled or not: {n} occurrence", clock="09:15"),
    Question("advance_answers",
        "report due at 09:15; a cancel lands between the enqueue and the advance: what does the advance answer?"
        " (an outcome)",
        _advance_answers("after-enqueue"), ADVANCE,
        lambda outcome: (
            f"the cancel took the record and the member: the guard re-adds nothing, and its ZREM finds nothing"
            f" left to remove: {{:ok, :{outcome}}}"
        ), clock="09:15"),
    Question("advance_after_reregister",
        "report due at 09:15, cancelled and registered anew (first run in 30 min) mid-tick: the advance answers?"
        " (an outcome)",
        _advance_answers("re-register"), ADVANCE,
        lambda outcome: (
            f"the row holds the new first run, not the score the tick read: {{:ok, :{outcome}}}, nothing written"
        ), clock="09:15", tells=("registry_after_reregister",)),
    Question("registry_after_reregister",
        'that re-registration at 09:15: the registry afterwards? (as "report @ HH:MM")',
        lambda lab: _registry_after(lab, "re-register"), registry("report", "10:15"),
        lambda rows: f"the registration made after the read keeps its own first run: {rows}", clock="09:15"),
    Question("registry_without_compare",
        "that re-registration at 09:15 (the old period 15 min), advanced without the compare: the registry afterwards?"
        ' (as "report @ HH:MM")',
        lambda lab: _registry_after(lab, None), registry("report", "10:15"),
        lambda rows: f"an unconditional advance writes the tick's now + the old period over the new first run: {rows}",
        clock="09:15"),
    Question("advance_on_dangling_member",
        "stale is due at 09:15, but its record was deleted behind the scripts' back: the advance answers? (an outcome)",
        lambda lab: _sweep(lab)[0], ADVANCE,
        lambda outcome: f"EXISTS finds no record, so the advance sweeps the member: {{:ok, :{outcome}}}",
        clock="09:15", tells=("rows_after_sweep",)),
    Question("rows_after_sweep",
        "after that 09:15 advance, how many registry rows does stale keep? (a count)",
        lambda lab: _sweep(lab)[1], count(),
        lambda rows: f"the sweep's ZREM removes the dangling member: {rows} rows", clock="09:15"),
    Question("orders_refused_of_24",
        "report due at 09:15; read, cancel, enqueue, advance in all 24 orders: how many does the pump's order"
        " refuse? (a count)",
        lambda lab: len(race_dive.every_order(race_dive.Race(lab, QUEUE)).refused), count("orders"),
        lambda n: f"the pump reads, enqueues, then advances; only the cancel may go anywhere: {n} refused",
        clock="09:15"),
    Question("jobs_in_slot_after_crash",
        "report due at 09:15; the pump (fresh ids) crashes after the enqueue, restarts at 09:16: how many jobs"
        " for the 09:15 slot? (a count)",
        lambda lab: len(crash_dive.replay_crash(lab, QUEUE, slot_keyed=False).jobs), count("jobs"),
        lambda jobs: f"the crash left the row at 09:15, so the restart enqueues it again with a fresh id: {jobs} jobs",
        clock="09:15"),
)  # fmt: skip
