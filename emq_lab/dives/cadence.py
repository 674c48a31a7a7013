"""Cadence: the three ways to measure the next run (the pump's rules, in :mod:`emq_lab.schedule`) run
on the real scripts and a SimClock: the lanes a timeline draws, the fast-forward and the pump's outage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import validate
from ..clock import SimClock, duration, hhmm, hhmmss
from ..fastforward import forward
from ..outcome import Outcome
from ..schedule import MINUTE_MS, Measure
from .common import entries_text, lab_start_ms, one_registration

if TYPE_CHECKING:
    from ..lab import Lab
    from ..pump import Pump
    from ..repeat import Repeat

NAME = "report"  # the one registration every lane schedules
TEMPLATE = '{"report": "cadence"}'

MEASURES = (Measure.START_TO_START, Measure.START_TO_FINISH, Measure.GRID)
SUFFIXES = {Measure.START_TO_START: "s2s", Measure.START_TO_FINISH: "s2f", Measure.GRID: "grid"}


def lane_queue(measure: Measure | str, prefix: str = "cadence") -> str:
    """The queue a lane runs on: ``cadence-s2s``, ``cadence-s2f``, ``cadence-grid``."""
    return validate.name(f"{prefix}-{SUFFIXES[Measure(measure)]}", field="queue")


def next_bullmq_every(prev_ms: int, every_ms: int, now_ms: int, *, offset_ms: int | None = None) -> int:
    """BullMQ 6's next run for ``every`` (``getJobSchedulerEveryNextMillis.lua``): the slot after ``prev_ms``,
    or if that is behind ``now_ms`` the first slot after now of the epoch's grid shifted by ``offset_ms``
    (by default ``prev_ms % every_ms``); the same slot as ``next_on_grid`` gives."""
    offset = prev_ms % every_ms if offset_ms is None else offset_ms
    following = prev_ms + every_ms
    if following >= now_ms:
        return following
    aligned = (now_ms // every_ms) * every_ms + offset
    return aligned + every_ms if aligned <= now_ms else aligned


@dataclass(frozen=True)
class Run:
    """One occurrence: released by a pump tick, finished by the worker ``run_ms`` later."""

    job_id: str
    slot_ms: int  # the registry score that made it due
    release_ms: int
    finish_ms: int


@dataclass(frozen=True)
class Lane:
    """The runs one measure produced on its queue, and the period they were meant to keep."""

    measure: Measure
    queue: str
    every_ms: int
    runs: tuple[Run, ...]

    @property
    def releases(self) -> list[int]:
        return [run.release_ms for run in self.runs]

    @property
    def drift_ms(self) -> int:
        """How far the last release sits after its cycle's mark (the first release plus k periods)."""
        return self.runs[-1].release_ms - self.runs[0].release_ms - (len(self.runs) - 1) * self.every_ms

    @property
    def skipped(self) -> int:
        """Grid slots passed over (missed, then skipped forward); 0 for the other measures."""
        if self.measure is not Measure.GRID:
            return 0
        covered = self.runs[-1].slot_ms - self.runs[0].slot_ms
        return covered // self.every_ms - (len(self.runs) - 1)


@dataclass(frozen=True)
class Trace:
    """Every lane of one setting of the controls."""

    start_ms: int
    every_ms: int
    run_ms: int
    cycles: int
    tick_ms: int
    lanes: tuple[Lane, ...]

    def lane(self, measure: Measure | str) -> Lane:
        wanted = Measure(measure)
        return next(lane for lane in self.lanes if lane.measure is wanted)

    def period_marks(self) -> list[int]:
        """Every period mark from the start to the last finish (what the timeline draws behind)."""
        end = max([self.start_ms, *(run.finish_ms for lane in self.lanes for run in lane.runs)])
        return list(range(self.start_ms, end + 1, self.every_ms))

    @property
    def readout(self) -> str:
        """The setting, then each lane's release times (HH:MM, or HH:MM:SS if any is between minutes) and drift."""
        instants = [ms for lane in self.lanes for ms in lane.releases]
        clock = hhmm if all(ms % MINUTE_MS == 0 for ms in instants) else hhmmss
        tick = f"every {duration(self.tick_ms)}" if self.tick_ms else "exactly when due"
        setting = f"every {duration(self.every_ms)}, runs of {duration(self.run_ms)}, {self.cycles} cycles"
        lines = [f"{setting}, the pump ticks {tick}"]
        width = max(len(lane.measure.value) for lane in self.lanes)
        for lane in self.lanes:
            sign = "+" if lane.drift_ms > 0 else ""
            drift = f"drift by run {len(lane.runs)}: {sign}{duration(lane.drift_ms)}"
            if lane.skipped:
                late = lane.runs[-1].release_ms - lane.runs[-1].slot_ms
                drift += f" ({lane.skipped} missed slots skipped; the last run came {duration(late)} after its slot)"
            times = " ".join(clock(ms) for ms in lane.releases)
            lines.append(f"{lane.measure.value:<{width}}  {times}  | {drift}")
        return "\n".join(lines)


def _lane_setup(
    lab: Lab, queue: str, *, start_ms: int, every_ms: int, measure: Measure = Measure.START_TO_START
) -> tuple[SimClock, Repeat, Pump]:
    """An emptied ``queue`` holding the one registration a lane runs, on a fresh SimClock."""
    clock = SimClock(start_ms)
    sim = lab.with_clock(clock)
    rep = one_registration(sim, queue, NAME, every_ms, TEMPLATE)
    return clock, rep, sim.pump(queue, rule=measure)


AGAIN = "something else wrote to this lane's queue while it ran; move a slider to run the lanes again"


def trace(
    lab: Lab,
    *,
    every_ms: int,
    run_ms: int,
    cycles: int,
    tick_ms: int = 0,
    start_ms: int | None = None,
    prefix: str = "cadence",
) -> Trace:
    """Every measure's lane for ``cycles`` cycles on ``<prefix>-s2s``, ``-s2f``, ``-grid``: the name due at the
    start, the pump ticking every ``tick_ms`` (0: when due) through ``fastforward.forward``, and under
    start-to-finish the worker finishing ``run_ms`` after each release (next = finish + period)."""
    validate.every_ms(every_ms)
    for value, field in ((run_ms, "run_ms"), (tick_ms, "tick_ms")):
        validate.integer(value, field, 0, unit=" ms")
    validate.limit(cycles, field="cycles")
    if start_ms is None:
        start_ms = lab_start_ms(lab)
    pumps = [lab.with_clock(SimClock(start_ms)).pump(lane_queue(m, prefix), rule=m) for m in MEASURES]
    lab.reset_all(pump.queue for pump in pumps)
    lanes = []
    for measure, pump in zip(MEASURES, pumps, strict=True):
        if pump.lab.repeat(pump.queue).register(NAME, every_ms, TEMPLATE) is not Outcome.REGISTERED:
            raise RuntimeError(f"{pump.queue}: {AGAIN}")
        finish = run_ms if measure is Measure.START_TO_FINISH else None
        chunks = forward(pump, cycles, step_ms=tick_ms, finish_ms=finish, per_call=cycles)
        fired = [o for chunk in chunks for o in chunk]
        if len(fired) < cycles:
            raise RuntimeError(f"{pump.queue}: the row was gone before run {cycles}: {AGAIN}")
        runs = tuple(Run(o.job_id, o.slot_ms, o.fired_at_ms, o.fired_at_ms + run_ms) for o in fired)
        lanes.append(Lane(measure, pump.queue, every_ms, runs))
    return Trace(start_ms, every_ms, run_ms, cycles, tick_ms, tuple(lanes))


def state_line(lab: Lab, queue: str) -> str:
    """One line: now, the registry rows with their next run, and the newest four job ids."""
    registry = entries_text(lab.repeat(queue).entries(), empty="empty")
    waiting = lab.jobs(queue)
    newest = waiting.browse(limit=4)
    more = waiting.count() - len(newest)
    listed = ", ".join(newest) + (f" (+{more} older)" if more > 0 else "")
    return f"now {hhmm(lab.clock.now_ms())} | registry: {registry} | jobs: {listed or 'none'}"


KEEP = 20  # the newest jobs a fast-forward keeps


@dataclass(frozen=True)
class FastForward:
    """What a fast-forward left behind."""

    occurrences_fired: int
    registry_rows: int
    jobs_made: int  # jobs the run left waiting, before the clean-up
    newest_job: str
    kept: int  # the newest jobs kept after the clean-up (the older ones are deleted)

    @property
    def readout(self) -> str:
        return (
            f"fired {self.occurrences_fired:,} occurrences; registry rows: {self.registry_rows}; "
            f"jobs made: {self.jobs_made:,} (the newest {self.kept} kept); newest job: {self.newest_job}"
        )


def fast_forward(
    lab: Lab,
    queue: str,
    *,
    occurrences: int,
    every_ms: int = MINUTE_MS,
    on_progress: Callable[[int], None] | None = None,
) -> FastForward:
    """One name on an emptied ``queue`` ticked once a period from the lab's start on a SimClock until it
    fired ``occurrences`` times (``on_progress`` hears the count after each round trip); the newest
    :data:`KEEP` jobs are kept. Another run on the queue meanwhile is a ValueError, not a mixed count."""
    validate.limit(occurrences, field="occurrences")
    validate.every_ms(every_ms)
    _, rep, pump = _lane_setup(lab, queue, start_ms=lab_start_ms(lab), every_ms=every_ms)
    ids: list[str] = []
    for chunk in forward(pump, occurrences, step_ms=every_ms):
        ids += [o.job_id for o in chunk]
        if on_progress is not None:
            on_progress(len(ids))
    jobs = pump.lab.jobs(queue)
    entries, made, newest = rep.entries(), jobs.count(), jobs.browse(limit=1)
    # emptied first, this run alone made JOB-000001 on: anything else is another run's, and the counts would mix
    if ids != [f"JOB-{n:06d}" for n in range(1, occurrences + 1)] or made != occurrences or newest != ids[-1:]:
        raise ValueError(
            f"fast-forward: another run used queue {queue} meanwhile (a second panel, in another tab or "
            "kernel?), so this run's counts would be wrong; run one panel per queue at a time, then click again"
        )
    jobs.trim(KEEP)
    return FastForward(len(ids), len(entries), made, newest[0], kept=min(KEEP, made))


@dataclass(frozen=True)
class Outage:
    """One measure's lane around a pump outage: its runs and the window the pump was down."""

    measure: Measure
    every_ms: int
    down_ms: int
    back_ms: int
    runs: tuple[Run, ...]

    @property
    def before(self) -> tuple[Run, ...]:
        return tuple(run for run in self.runs if run.release_ms < self.down_ms)

    @property
    def on_return(self) -> tuple[Run, ...]:
        """What the first tick after the outage released: one run, however many slots passed."""
        return tuple(run for run in self.runs if run.release_ms == self.back_ms)

    @property
    def after(self) -> tuple[Run, ...]:
        return tuple(run for run in self.runs if run.release_ms > self.back_ms)

    @property
    def missed(self) -> int:
        """Period marks (from the first run) that fell inside the outage."""
        marks = range(self.runs[0].release_ms, self.back_ms + 1, self.every_ms)
        return sum(1 for mark in marks if mark >= self.down_ms)

    def __str__(self) -> str:
        before = " ".join(hhmm(run.release_ms) for run in self.before)
        back = ", ".join(f"{run.job_id} for the {hhmm(run.slot_ms)} slot" for run in self.on_return)
        after = " ".join(hhmm(run.release_ms) for run in self.after)
        minutes = sorted({hhmm(run.release_ms)[2:] for run in self.after})  # ":15"
        return (
            f"{self.measure.value:<15} fired {before} | down {hhmm(self.down_ms)}-{hhmm(self.back_ms)}, "
            f"{self.missed} marks passed | back at {hhmm(self.back_ms)}: {len(self.on_return)} job ({back}) | "
            f"then {after} (on {' '.join(minutes)})"
        )


#: When an outage lane's pump stops, counted from the lane's start (09:22 on the course's clock).
DOWN_AT_MS = 22 * MINUTE_MS


def outage(
    lab: Lab,
    measure: Measure | str = Measure.START_TO_START,
    *,
    down_for_ms: int = 40 * MINUTE_MS,
    runs_after: int = 3,
    queue: str | None = None,
) -> Outage:
    """One name every 15 min on an emptied ``outage-<lane>``, the real pump ticking when it is due but down from
    :data:`DOWN_AT_MS` after the lab's start for ``down_for_ms``, until ``runs_after`` releases followed its return."""
    measure = Measure(measure)
    if measure is Measure.START_TO_FINISH:
        raise ValueError("measure: an outage lane runs start-to-start or the fixed grid (the pump's own rules)")
    validate.integer(down_for_ms, "down_for_ms", 1, unit=" ms")
    validate.limit(runs_after, field="runs_after")
    start, every_ms = lab_start_ms(lab), 15 * MINUTE_MS
    down, back = start + DOWN_AT_MS, start + DOWN_AT_MS + down_for_ms
    queue = lane_queue(measure, "outage") if queue is None else queue
    clock, rep, pump = _lane_setup(lab, queue, start_ms=start, every_ms=every_ms, measure=measure)
    runs: list[Run] = []
    while len([run for run in runs if run.release_ms > back]) < runs_after:
        ((_, score),) = rep.entries()
        tick_at = back if down <= score < back else score
        clock.set(max(clock.now_ms(), tick_at))
        runs.extend(Run(o.job_id, score, o.fired_at_ms, o.fired_at_ms) for o in pump.tick())
    return Outage(measure, every_ms, down, back, tuple(runs))


def outages(lab: Lab) -> list[Outage]:
    """The same outage on start-to-start and on the fixed grid."""
    return [outage(lab, m) for m in (Measure.START_TO_START, Measure.GRID)]
