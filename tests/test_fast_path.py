"""The fast-forward the panels run on: ``fastforward.forward`` fires what ``tick`` +
``clock.advance`` in a loop fires, and leaves the same registry and jobs. On every backend."""

from __future__ import annotations

import pytest
from helpers import MIN, START

import emq_lab
from emq_lab import SimClock, SystemClock
from emq_lab.fastforward import forward


def registered(lab: emq_lab.Lab, queue: str) -> emq_lab.Lab:
    timed = lab.with_clock(SimClock(START))
    rep = timed.repeat(queue)
    rep.register_many([("every-minute", MIN, "a"), ("every-3", 3 * MIN, "b"), ("later", 2 * MIN, "c", 5 * MIN)])
    return timed


@pytest.mark.parametrize("slot_keyed", [False, True])
@pytest.mark.parametrize("per_call", [1, 7, 100])
def test_forward_fires_what_a_loop_of_tick_and_advance_fires(
    lab: emq_lab.Lab, queue: str, slot_keyed: bool, per_call: int
) -> None:
    loop_queue = f"{queue}-loop"
    try:
        by_loop = registered(lab, loop_queue)
        pump = by_loop.pump(loop_queue, slot_keyed=slot_keyed)
        expected = []
        for _ in range(12):
            expected += pump.tick()
            by_loop.clock.advance(MIN)  # type: ignore[attr-defined]
        assert len(expected) == 12 + 4 + 4  # every minute, every 3, from 09:05 every 2

        by_calls = registered(lab, queue)
        chunks = list(forward(by_calls.pump(queue, slot_keyed=slot_keyed), 20, step_ms=MIN, per_call=per_call))
        assert [o for chunk in chunks for o in chunk] == expected
        assert all(len(chunk) >= per_call for chunk in chunks[:-1])  # each call fired at least what it was asked
        assert by_calls.clock.now_ms() == by_loop.clock.now_ms()
        assert by_calls.repeat(queue).entries() == by_loop.repeat(loop_queue).entries()
        assert by_calls.jobs(queue).browse(limit=50) == by_loop.jobs(loop_queue).browse(limit=50)
        jobs = by_calls.jobs(queue)
        assert [jobs.get(o.job_id) for o in expected] == [by_loop.jobs(loop_queue).get(o.job_id) for o in expected]
    finally:
        lab.reset(loop_queue)


def test_forward_refuses_what_it_cannot_run(lab: emq_lab.Lab, queue: str) -> None:
    with pytest.raises(ValueError, match="clock: forward"):
        next(forward(lab.with_clock(SystemClock()).pump(queue), 1, step_ms=MIN))
    timed = lab.with_clock(SimClock(START))
    with pytest.raises(ValueError, match="step_ms"):
        next(forward(timed.pump(queue), 1, step_ms=-1))
    with pytest.raises(ValueError, match="finish_ms"):
        next(forward(timed.pump(queue), 1, step_ms=MIN, finish_ms=MIN))  # start-to-start has no finish
    with pytest.raises(ValueError, match="rule"):
        next(forward(timed.pump(queue, rule=lambda now, every: now + every), 1, step_ms=MIN))
    with pytest.raises(ValueError, match="scripts"):
        next(forward(timed.with_scripts(advance="return 1").pump(queue), 1, step_ms=MIN))
    assert lab.keys(queue) == []


def test_forward_stops_when_nothing_is_registered(lab: emq_lab.Lab, queue: str) -> None:
    timed = lab.with_clock(SimClock(START))
    assert list(forward(timed.pump(queue), 5, step_ms=MIN)) == [[]]
    assert timed.clock.now_ms() == SimClock(START).start_ms


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
