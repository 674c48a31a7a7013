"""The fast paths the panels run on: ``Pump.ticks`` fires what ``tick`` + ``clock.advance`` in a
loop fires, in one round trip a tick. On every backend."""

from __future__ import annotations

import itertools

import pytest

import emq_lab
from emq_lab import SimClock, SystemClock

MIN = 60_000
START = "2026-01-05T09:00:00Z"


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
