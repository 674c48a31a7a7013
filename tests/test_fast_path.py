"""The fast paths the panels run on: ``Pump.ticks`` fires what ``tick`` + ``clock.advance`` in a
loop fires, in one round trip a tick. On every backend."""

from __future__ import annotations

import itertools

import pytest
from helpers import MIN, START

import emq_lab
from emq_lab import SimClock, SystemClock


def registered(lab: emq_lab.Lab, queue: str) -> emq_lab.Lab:
    timed = lab.with_clock(SimClock(START))
    rep = timed.repeat(queue)
    rep.register_many([("every-minute", MIN, "a"), ("every-3", 3 * MIN, "b"), ("later", 2 * MIN, "c", 5 * MIN)])
    return timed


@pytest.mark.parametrize("slot_keyed", [False, True])
def test_ticks_fire_what_a_loop_of_tick_and_advance_fires(lab: emq_lab.Lab, queue: str, slot_keyed: bool) -> None:
    loop_queue = f"{queue}-loop"
    try:
        by_loop = registered(lab, loop_queue)
        pump = by_loop.pump(loop_queue, slot_keyed=slot_keyed)
        expected = []
        for _ in range(12):
            expected.append([(o.job_id, o.name, o.fired_at_ms) for o in pump.tick()])
            by_loop.clock.advance(MIN)  # type: ignore[attr-defined]

        by_steps = registered(lab, queue)
        steps = by_steps.pump(queue, slot_keyed=slot_keyed).ticks(step_ms=MIN)
        got = [[(o.job_id, o.name, o.fired_at_ms) for o in fired] for fired in itertools.islice(steps, 12)]

        assert got == expected
        assert sum(len(fired) for fired in got) == 12 + 4 + 4  # every minute, every 3, from 09:05 every 2
        assert by_steps.clock.now_ms() == by_loop.clock.now_ms()
        assert by_steps.repeat(queue).entries() == by_loop.repeat(loop_queue).entries()
        assert by_steps.jobs(queue).browse(limit=50) == by_loop.jobs(loop_queue).browse(limit=50)
    finally:
        lab.reset(loop_queue)


def test_ticks_cost_one_round_trip_a_tick(lab: emq_lab.Lab, queue: str, round_trips: list[int]) -> None:
    timed = registered(lab, queue)
    steps = timed.pump(queue).ticks(step_ms=MIN)
    next(steps)  # the first read, then the first tick's writes with the second read
    round_trips[0] = 0
    fired = sum(len(next(steps)) for _ in range(10))
    assert fired > 10
    assert round_trips[0] == 10


def test_ticks_need_a_clock_that_can_move(lab: emq_lab.Lab, queue: str) -> None:
    with pytest.raises(ValueError, match="clock: ticks"):
        next(lab.with_clock(SystemClock()).pump(queue).ticks(step_ms=MIN))
    with pytest.raises(ValueError, match="step_ms"):
        next(lab.pump(queue).ticks(step_ms=0))


SETTINGS = [  # (period, run, cycles, tick) in minutes, minutes, -, seconds: the notebook's and the corners
    (15, 4, 4, 0),
    (15, 10, 4, 0),
    (15, 4, 6, 120),
    (1, 0, 8, 90),
    (60, 30, 24, 7),
    (1, 30, 3, 120),
    (7, 0, 1, 0),
]


@pytest.mark.parametrize(("period", "run", "cycles", "tick"), SETTINGS)
def test_the_lanes_side_by_side_run_as_each_lane_alone(
    lab: emq_lab.Lab, queue: str, period: int, run: int, cycles: int, tick: int
) -> None:
    from emq_lab.dives import cadence

    controls = {"every_ms": period * MIN, "run_ms": run * MIN, "cycles": cycles, "tick_ms": tick * 1000}
    start = SimClock(START).start_ms
    together = cadence.trace(lab, start_ms=start, prefix=queue, **controls)
    alone = f"{queue}-alone"
    try:
        for lane in together.lanes:
            one = cadence.run_lane(
                lab, lane.measure, start_ms=start, queue=cadence.lane_queue(lane.measure, alone), **controls
            )
            assert one.runs == lane.runs
            assert len(lane.runs) == cycles
            assert lab.repeat(lane.queue).entries() == lab.repeat(one.queue).entries()
            assert lab.jobs(lane.queue).browse(limit=30) == lab.jobs(one.queue).browse(limit=30)
    finally:
        lab.reset_all(cadence.lane_queue(m, p) for m in cadence.MEASURES for p in (queue, alone))


def test_a_slider_move_costs_three_round_trips_whatever_the_cycles(
    lab: emq_lab.Lab, queue: str, round_trips: list[int]
) -> None:
    from emq_lab.dives import cadence

    if "cluster" in lab.describe():
        pytest.skip("on a cluster the lanes' queues sit on different primaries: a round trip per lane")
    controls = {"every_ms": 15 * MIN, "run_ms": 4 * MIN, "tick_ms": 120_000, "start_ms": SimClock(START).start_ms}
    cadence.trace(lab, cycles=2, prefix=queue, **controls)  # the lab's first batch loads the scripts
    for cycles in (1, 24):
        round_trips[0] = 0
        trace = cadence.trace(lab, cycles=cycles, prefix=queue, **controls)
        assert [len(lane.runs) for lane in trace.lanes] == [cycles] * 3
        assert round_trips[0] == 2 + 1  # the reset (read, unlink), then every lane's register and ticks
    lab.reset_all(cadence.lane_queue(m, queue) for m in cadence.MEASURES)


def test_reset_all_deletes_each_queue_and_nothing_else(lab: emq_lab.Lab, queue: str) -> None:
    others = [f"{queue}-a", f"{queue}-b"]
    kept = f"{queue}-kept"
    for q in [*others, kept]:
        lab.repeat(q).register_many([("x", MIN, "t"), ("y", MIN, "t")])
        lab.pump(q).tick()
    before = lab.keys(kept)
    expected = sum(len(lab.keys(q)) for q in others)
    assert lab.reset_all(others) == expected
    assert all(lab.keys(q) == [] for q in others)
    assert lab.keys(kept) == before
    assert lab.reset_all([]) == 0
    lab.reset(kept)
