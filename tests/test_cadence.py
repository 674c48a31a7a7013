"""The pure next-run rules (emq_lab.schedule), and the lanes emq_lab.dives.cadence gets from the
real scripts on every backend, checked against closed forms worked out by hand."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from helpers import scanned

import emq_lab
from emq_lab.clock import parse_instant
from emq_lab.dives import cadence
from emq_lab.dives.common import one_registration
from emq_lab.pump import Pump
from emq_lab.schedule import Measure, first_tick_at_or_after, next_on_grid, next_start_to_finish, next_start_to_start

S = 1000
MIN = 60 * S
START = parse_instant("2026-01-05T09:00:00Z")
S2S, S2F, GRID = Measure.START_TO_START, Measure.START_TO_FINISH, Measure.GRID


@pytest.fixture
def prefix(lab: emq_lab.Lab, queue: str) -> Iterator[str]:
    """A lane prefix of this test's own; its three lane queues are deleted afterwards."""
    yield queue
    for measure in Measure:
        lab.reset(cadence.lane_queue(measure, queue))


def at(*clock: str) -> list[int]:
    """Epoch ms of HH:MM or HH:MM:SS on the start day."""
    out = []
    for text in clock:
        parts = [int(p) for p in text.split(":")] + [0]
        out.append(START + (parts[0] - 9) * 60 * MIN + parts[1] * MIN + parts[2] * S)
    return out


# -- the pure rules ------------------------------------------------------------------------------


def test_start_to_start_and_start_to_finish_add_the_period() -> None:
    assert next_start_to_start(at("09:00")[0], 15 * MIN) == at("09:15")[0]
    assert next_start_to_finish(at("09:04")[0], 15 * MIN) == at("09:19")[0]


@pytest.mark.parametrize(
    ("slot", "now", "expected"),
    [
        ("09:00", "09:00", "09:15"),  # on time
        ("09:00", "09:07", "09:15"),  # late, but the next slot is still ahead: the grid holds
        ("09:00", "09:15", "09:15"),  # the next slot is due right now: kept
        ("09:00", "09:16", "09:30"),  # one slot missed: skipped, no burst
        ("09:00", "09:47", "10:00"),  # three slots missed: straight to the next one after now
        ("09:00", "09:45", "10:00"),  # now sits on a missed slot: the one after it
    ],
)
def test_next_on_grid_skips_missed_slots(slot: str, now: str, expected: str) -> None:
    assert next_on_grid(at(slot)[0], 15 * MIN, at(now)[0]) == at(expected)[0]


def test_first_tick_at_or_after() -> None:
    assert first_tick_at_or_after(START + 61 * S, start_ms=START, tick_ms=0) == START + 61 * S
    assert first_tick_at_or_after(START + 61 * S, start_ms=START, tick_ms=30 * S) == START + 90 * S
    assert first_tick_at_or_after(START + 60 * S, start_ms=START, tick_ms=30 * S) == START + 60 * S


# -- the lanes, from the real scripts --------------------------------------------------------------


def test_the_course_verdicts(lab: emq_lab.Lab, prefix: str) -> None:
    trace = cadence.trace(lab, every_ms=15 * MIN, run_ms=4 * MIN, cycles=4, prefix=prefix)
    assert trace.lane(S2S).releases == at("09:00", "09:15", "09:30", "09:45")
    assert trace.lane(S2F).releases == at("09:00", "09:19", "09:38", "09:57")
    assert trace.lane(GRID).releases == at("09:00", "09:15", "09:30", "09:45")
    assert [r.finish_ms - r.release_ms for r in trace.lane(S2F).runs] == [4 * MIN] * 4
    assert trace.readout == (
        "every 15 min, runs of 4 min, 4 cycles, the pump ticks exactly when due\n"
        "start-to-start   09:00 09:15 09:30 09:45  | drift by run 4: 0 s\n"
        "start-to-finish  09:00 09:19 09:38 09:57  | drift by run 4: +12 min\n"
        "fixed grid       09:00 09:15 09:30 09:45  | drift by run 4: 0 s"
    )


def _ceil_to(value: int, step: int) -> int:
    return value if step == 0 else math.ceil(value / step) * step


@pytest.mark.parametrize(
    ("every", "run", "cycles", "tick"),
    [
        (15 * MIN, 4 * MIN, 6, 0),
        (15 * MIN, 4 * MIN, 6, 120 * S),
        (7 * MIN, 30 * MIN, 5, 50 * S),
        (60 * MIN, 0, 24, 45 * S),
        (MIN, 2 * MIN, 10, 60 * S),
    ],
)
def test_every_lane_matches_its_closed_form(
    lab: emq_lab.Lab, prefix: str, every: int, run: int, cycles: int, tick: int
) -> None:
    # The pump ticks at START + k * tick (tick <= period here, so no grid slot is missed):
    # start-to-start  release_n = START + n * ceil_tick(period)          (each release is on a tick)
    # start-to-finish release_n = START + n * ceil_tick(run + period)
    # fixed grid      release_n = START + ceil_tick(n * period)          (lateness never accumulates)
    trace = cadence.trace(lab, every_ms=every, run_ms=run, cycles=cycles, tick_ms=tick, prefix=prefix)
    n = range(cycles)
    assert trace.lane(S2S).releases == [START + k * _ceil_to(every, tick) for k in n]
    assert trace.lane(S2F).releases == [START + k * _ceil_to(run + every, tick) for k in n]
    assert trace.lane(GRID).releases == [START + _ceil_to(k * every, tick) for k in n]
    for lane in trace.lanes:
        assert [r.finish_ms for r in lane.runs] == [r + run for r in lane.releases]
        assert lane.drift_ms == lane.releases[-1] - (START + (cycles - 1) * every)
        assert lab.repeat(lane.queue).count() == 1  # one registry row, however often it fired
        assert lab.jobs(lane.queue).browse(limit=cycles + 1) == [f"JOB-{k:06d}" for k in range(cycles, 0, -1)]


def test_a_late_pump_slips_start_to_start_but_not_the_grid(lab: emq_lab.Lab, prefix: str) -> None:
    trace = cadence.trace(lab, every_ms=15 * MIN, run_ms=4 * MIN, cycles=6, tick_ms=120 * S, prefix=prefix)
    # 15 min is 7.5 ticks of 2 min: each start-to-start release lands a minute late and the next
    # period counts from there; the grid's slots stay at :00/:15/:30/:45 and come at most a tick late.
    assert trace.lane(S2S).releases == at("09:00", "09:16", "09:32", "09:48", "10:04", "10:20")
    assert trace.lane(GRID).releases == at("09:00", "09:16", "09:30", "09:46", "10:00", "10:16")
    assert [r.slot_ms for r in trace.lane(GRID).runs] == at("09:00", "09:15", "09:30", "09:45", "10:00", "10:15")
    assert trace.lane(S2S).drift_ms == 5 * MIN
    assert trace.lane(GRID).drift_ms == 1 * MIN


def test_a_missed_grid_slot_is_skipped_not_fired_in_a_burst(lab: emq_lab.Lab, prefix: str) -> None:
    # A 1-minute period and a pump that looks every 90 s: each tick releases one run; when the
    # slot after the one just fired is already behind the tick, the grid jumps past it.
    trace = cadence.trace(lab, every_ms=MIN, run_ms=0, cycles=8, tick_ms=90 * S, prefix=prefix)
    grid = trace.lane(GRID)
    assert grid.releases == [START + k * 90 * S for k in range(8)]
    assert [(r.slot_ms - START) // S for r in grid.runs] == [0, 60, 120, 180, 300, 360, 480, 540]
    assert grid.skipped == 2  # the 240 s and 420 s slots
    assert "(2 missed slots skipped; the last run came 1 min 30 s after its slot)" in trace.readout
    assert [r.job_id for r in grid.runs] == [f"JOB-{k:06d}" for k in range(1, 9)]


def test_the_lanes_are_on_the_backend(lab: emq_lab.Lab, prefix: str) -> None:
    trace = cadence.trace(lab, every_ms=15 * MIN, run_ms=4 * MIN, cycles=3, prefix=prefix)
    s2f = trace.lane(S2F)
    jobs = lab.jobs(s2f.queue)
    assert [jobs.get(r.job_id)["fired_at_ms"] for r in s2f.runs] == [str(r) for r in s2f.releases]
    # start-to-finish: the last run's finish advanced the row too: next = finish + period
    assert lab.repeat(s2f.queue).entries() == [(cadence.NAME, s2f.runs[-1].finish_ms + 15 * MIN)]


def test_trace_refuses_bad_controls(lab: emq_lab.Lab) -> None:
    with pytest.raises(ValueError, match="run_ms"):
        cadence.trace(lab, every_ms=MIN, run_ms=-1, cycles=3)
    with pytest.raises(ValueError, match="cycles"):
        cadence.trace(lab, every_ms=MIN, run_ms=0, cycles=0)
    with pytest.raises(ValueError, match="every_ms"):
        cadence.trace(lab, every_ms=0, run_ms=0, cycles=3)


# -- the pump's rule -----------------------------------------------------------------------------


def test_a_grid_pump_advances_from_the_slot(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    pump = Pump(lab, queue, rule="fixed grid")
    pump.tick()
    lab.clock.advance(minutes=17)  # two minutes late for the 09:15 slot
    assert [o.fired_at_ms for o in pump.tick()] == at("09:17")
    assert rep.entries() == [("report", at("09:30")[0])]  # start-to-start would say 09:32


def test_a_start_to_finish_pump_leaves_the_row_for_the_finish(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    rep.register("gone", 15 * MIN, "t")
    lab.client.delete(emq_lab.keys.QueueKeys(queue).record("gone"))
    pump = Pump(lab, queue, rule=S2F)
    assert [o.name for o in pump.tick()] == ["report"]
    assert rep.entries() == [("report", START)]  # not advanced at release; the dangling one swept
    lab.clock.advance(minutes=4)
    assert rep.advance("report", 15 * MIN) is emq_lab.Outcome.ADVANCED
    assert rep.entries() == [("report", at("09:19")[0])]


def test_an_unknown_rule_is_refused(lab: emq_lab.Lab, queue: str) -> None:
    with pytest.raises(ValueError, match="rule: 'cron'"):
        Pump(lab, queue, rule="cron")


# -- the live view and the fast-forward ------------------------------------------------------------


def test_state_line_shows_one_row_and_the_newest_jobs(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", 15 * MIN, "t")
    pump = lab.pump(queue)
    for _ in range(6):
        pump.tick()
        lab.clock.advance(minutes=15)
    assert cadence.state_line(lab, queue) == (
        "now 10:30 | registry: report @ 10:30 | jobs: JOB-000006, JOB-000005, JOB-000004, JOB-000003 (+2 older)"
    )


def test_fast_forward_reports_progress_and_leaves_one_row(lab: emq_lab.Lab, queue: str) -> None:
    seen: list[int] = []
    result = cadence.fast_forward(lab, queue, occurrences=250, every_ms=MIN, on_progress=seen.append)
    assert seen == [100, 200, 250]
    counts = (result.occurrences_fired, result.registry_rows, result.jobs_made)
    assert counts == (250, 1, 250) and result.newest_job == "JOB-000250"
    assert lab.repeat(queue).entries() == [("report", START + 250 * MIN)]
    assert lab.clock.now_ms() == START  # the fast-forward ran on a SimClock of its own
    # It leaves the newest 20 jobs and the registration, not 250 job hashes.
    assert result.kept == 20 and lab.jobs(queue).browse(limit=1000) == [f"JOB-{n:06d}" for n in range(250, 230, -1)]
    assert len(scanned(lab, queue)) == 20 + 1 + 1 + 1 + 1  # jobs, the record, the registry, counter, wait list


def test_two_fast_forwards_on_one_queue_refuse_rather_than_mix(lab: emq_lab.Lab, queue: str, backend_url: str) -> None:
    # A second tab (its own kernel and connection) runs the same panel's fast-forward while the
    # first one's run is under way: the first says so instead of counting the other's jobs.
    other = emq_lab.connect(backend_url, clock=emq_lab.SimClock(START))
    seen: list[int] = []

    def second_tab(fired: int) -> None:
        if not seen:
            seen.append(cadence.fast_forward(other, queue, occurrences=150, every_ms=MIN).jobs_made)

    try:
        with pytest.raises(ValueError, match=f"another run used queue {queue} meanwhile"):
            cadence.fast_forward(lab, queue, occurrences=300, every_ms=MIN, on_progress=second_tab)
        assert seen == [150]  # the other tab's run, whole before the first went on, is right
        result = cadence.fast_forward(lab, queue, occurrences=300, every_ms=MIN)  # one at a time: right
        assert (result.occurrences_fired, result.jobs_made, result.newest_job) == (300, 300, "JOB-000300")
    finally:
        other.close()


def test_the_timeline_draws_the_lanes_marks(lab: emq_lab.Lab, prefix: str) -> None:
    from emq_lab.plots.timeline import timeline

    trace = cadence.trace(lab, every_ms=15 * MIN, run_ms=4 * MIN, cycles=4, prefix=prefix)
    figure = timeline(trace)
    bars = {bar.name: bar for bar in figure.data if bar.type == "bar"}
    finish = bars["start-to-finish runs"]
    assert list(finish.base) == [0, 19, 38, 57]  # minutes after 09:00
    assert list(finish.x) == [4, 4, 4, 4]
    assert list(bars["start-to-start runs"].base) == [0, 15, 30, 45]
    axis = figure.layout.xaxis
    assert axis.type == "linear"  # a date axis shows raw epoch numbers in a FigureWidget
    assert list(axis.ticktext) == ["09:00", "09:15", "09:30", "09:45", "10:00"]
    assert list(axis.tickvals) == [0, 15, 30, 45, 60]
    assert timeline(trace).to_json() == figure.to_json()  # deterministic: no random ids


SETTINGS = [  # (period, run, cycles, tick) in minutes, minutes, -, seconds: the notebook's and the corners
    (15, 4, 4, 0),
    (15, 10, 4, 0),
    (15, 4, 6, 120),
    (1, 0, 8, 90),
    (2, 0, 6, 90),  # exercises.cadence.predict: lane_that_keeps_up
    (60, 30, 24, 7),
    (1, 30, 3, 120),
    (7, 0, 1, 0),
]


def tick_by_tick(
    lab: emq_lab.Lab, measure: Measure, queue: str, *, every_ms: int, run_ms: int, cycles: int, tick_ms: int
) -> cadence.Lane:
    """The oracle for ``cadence.trace``: one lane, the pump ticked one tick at a time (no fast-forward).
    Its clock jumps to the first tick at or after the row's score (ticks in between find nothing due); a
    worker finishes each run ``run_ms`` after its release and, under start-to-finish, advances the row."""
    clock = emq_lab.SimClock(START)
    sim = lab.with_clock(clock)
    rep = one_registration(sim, queue, cadence.NAME, every_ms, cadence.TEMPLATE)
    pump = sim.pump(queue, rule=measure)
    runs: list[cadence.Run] = []
    last_tick: int | None = None
    while len(runs) < cycles:
        ((_, score),) = rep.entries()
        earliest = score if last_tick is None or tick_ms == 0 else max(score, last_tick + 1)
        last_tick = first_tick_at_or_after(earliest, start_ms=START, tick_ms=tick_ms)
        clock.set(max(clock.now_ms(), last_tick))
        for occurrence in pump.tick():
            release = occurrence.fired_at_ms
            runs.append(cadence.Run(occurrence.job_id, score, release, release + run_ms))
        if measure is Measure.START_TO_FINISH:
            clock.set(runs[-1].finish_ms)  # the worker finishes the run ...
            rep.advance(cadence.NAME, every_ms)  # ... and advances: next = now (the finish) + period
    return cadence.Lane(measure, queue, every_ms, tuple(runs))


@pytest.mark.parametrize(("period", "run", "cycles", "tick"), SETTINGS)
def test_the_lanes_side_by_side_run_as_each_lane_alone(
    lab: emq_lab.Lab, queue: str, period: int, run: int, cycles: int, tick: int
) -> None:
    controls = {"every_ms": period * MIN, "run_ms": run * MIN, "cycles": cycles, "tick_ms": tick * 1000}
    start = START
    together = cadence.trace(lab, start_ms=start, prefix=queue, **controls)
    alone = f"{queue}-alone"
    try:
        for lane in together.lanes:
            one = tick_by_tick(lab, lane.measure, cadence.lane_queue(lane.measure, alone), **controls)
            assert one.runs == lane.runs
            assert len(lane.runs) == cycles
            assert lab.repeat(lane.queue).entries() == lab.repeat(one.queue).entries()
            assert lab.jobs(lane.queue).browse(limit=30) == lab.jobs(one.queue).browse(limit=30)
    finally:
        lab.reset_all(cadence.lane_queue(m, p) for m in cadence.MEASURES for p in (queue, alone))
