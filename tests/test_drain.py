"""``Pump.drain``: ticks at one now until one has nothing new to fire. It fires what a loop of
``tick()`` fires on a clock that stands still (the grid's row whose next slot is now included),
each tick one batch however many rows are due, and stops before firing a slot again (a run left
for its finish). On every backend."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from helpers import MIN, START, RoundTrips

import emq_lab
from emq_lab import Occurrence, Outcome, SimClock
from emq_lab.exercises import with_scripts
from emq_lab.scripts import source

START_MS = SimClock(START).now_ms()


def at(minutes: float) -> int:
    """START + ``minutes``, in ms."""
    return START_MS + int(minutes * MIN)


def ticked(pump: emq_lab.Pump) -> list[Occurrence]:
    """``tick()`` at the clock's now until a tick fires nothing."""
    fired: list[Occurrence] = []
    while tick := pump.tick():
        fired += tick
    return fired


@pytest.mark.parametrize("slot_keyed", [False, True], ids=["fresh", "slot"])
def test_a_grid_row_whose_next_slot_is_now_fires_each_slot_due(lab: emq_lab.Lab, queue: str, slot_keyed: bool) -> None:
    # report runs on the 15-minute grid from 09:00; at 09:15 its 09:00 slot is due, and the slot
    # after it is 09:15 itself, due too: the drain fires both, as ticks at 09:15 do, then stops.
    other = f"{queue}-ticks"
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    try:
        for q in (queue, other):
            timed.repeat(q).register("report", 15 * MIN, "t")
        clock.advance(15 * MIN)
        drained = timed.pump(queue, slot_keyed=slot_keyed, rule="fixed grid").drain()
        assert [(o.name, o.fired_at_ms, o.slot_ms) for o in drained] == [
            ("report", at(15), at(0)),
            ("report", at(15), at(15)),
        ]
        assert drained == ticked(timed.pump(other, slot_keyed=slot_keyed, rule="fixed grid"))
        assert timed.repeat(queue).entries() == [("report", at(30))] == timed.repeat(other).entries()
        assert timed.pump(queue, rule="fixed grid").drain() == []  # 09:30 is not due at 09:15
        assert timed.jobs(queue).browse() == timed.jobs(other).browse()
    finally:
        timed.reset(other)


@pytest.mark.parametrize("rule", ["start-to-start", "fixed grid"])
def test_drain_fires_what_ticks_at_one_now_fire(lab: emq_lab.Lab, queue: str, rule: str) -> None:
    # At 09:15 on the 15-minute grid: a0-a9 (slot 09:00), m0-m3 (slot 09:05) and z0-z9 (first run
    # 09:15) are due; on the grid the a's next slot is 09:15, due too. Batches of 5.
    other = f"{queue}-ticks"
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    try:
        for q in (queue, other):
            rep = timed.repeat(q)
            rep.register_many([(f"a{i}", 15 * MIN, "t") for i in range(10)])
            rep.register_many([(f"m{i}", 15 * MIN, "t", 5 * MIN) for i in range(4)])
            rep.register_many([(f"z{i}", 15 * MIN, "t", 15 * MIN) for i in range(10)])
        clock.advance(15 * MIN)
        drained = timed.pump(queue, batch=5, rule=rule).drain()
        assert drained == ticked(timed.pump(other, batch=5, rule=rule))
        twice = {f"a{i}" for i in range(10)} if rule == "fixed grid" else set()  # slots 09:00 and 09:15
        assert Counter(o.name for o in drained) == Counter(
            {name: 2 if name in twice else 1 for name, _ in timed.repeat(queue).entries()}
        )
        assert {o.fired_at_ms for o in drained} == {at(15)}
        assert timed.repeat(queue).entries() == timed.repeat(other).entries()
        assert all(ms > at(15) for _, ms in timed.repeat(queue).entries())  # nothing left due
        assert timed.pump(queue, batch=5, rule=rule).drain() == []
    finally:
        timed.reset(other)


DRAIN_RULES: list[Any] = [
    pytest.param("start-to-start", False, id="start-to-start"),
    pytest.param("fixed grid", False, id="grid"),
    pytest.param("fixed grid", True, id="grid-learners-scripts"),
]


@pytest.mark.parametrize(("rule", "learner"), DRAIN_RULES)
def test_drain_fires_every_due_name_whatever_the_path(lab: emq_lab.Lab, queue: str, rule: str, learner: bool) -> None:
    # 12 names due at 09:10 (a0-a5 since 09:00, z0-z5 at 09:10), batches of 5.
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    if learner:  # the enqueue a learner handed in (run in the sandbox): the drain runs it
        timed = with_scripts(timed, enqueue=source("enqueue") + "\n-- a learner's copy\n")
    try:
        timed.repeat(queue).register_many([(f"a{i}", 15 * MIN, "t") for i in range(6)])
        timed.repeat(queue).register_many([(f"z{i}", 15 * MIN, "t", 10 * MIN) for i in range(6)])
        clock.advance(10 * MIN)
        fired = timed.pump(queue, batch=5, rule=rule).drain()
        assert sorted(o.name for o in fired) == [*(f"a{i}" for i in range(6)), *(f"z{i}" for i in range(6))]
    finally:
        timed.reset(queue)


def test_drain_is_a_tick_a_batch_then_a_read_that_finds_nothing(round_trips: RoundTrips, queue: str) -> None:
    lab = round_trips.lab
    rep = lab.repeat(queue)
    rep.register_many([(f"n{i:04d}", 15 * MIN, "t") for i in range(250)])
    rep.register("later", 15 * MIN, "t", first_in_ms=MIN)
    pump = lab.pump(queue, batch=100)
    assert len(pump.tick()) == 100
    round_trips.start()
    fired = pump.drain()
    assert len(fired) == 150 and len({o.name for o in fired}) == 150
    assert round_trips.count == 2 * 3 + 1  # a tick of 100, one of 50, then a read that finds nothing due
    assert [o.job_id for o in fired][:2] == ["JOB-000101", "JOB-000102"]
    assert rep.due() == []
    assert dict(rep.entries())["later"] == lab.clock.now_ms() + MIN  # not due: untouched


def finish(lab: emq_lab.Lab, queue: str, fired: list[Occurrence], run_ms: int) -> None:
    """The worker: each run finishes ``run_ms`` after its release and advances its row."""
    rep = lab.repeat(queue)
    for o in fired:
        assert rep.advance_to(o.name, o.fired_at_ms + run_ms + 15 * MIN, read_ms=o.slot_ms) is Outcome.ADVANCED


def test_under_start_to_finish_a_drain_stops_before_releasing_a_run_again(lab: emq_lab.Lab, queue: str) -> None:
    # Start-to-finish leaves each released row due where it was until its run's finish: a second
    # tick at the same now would release it again, so the drain stops there, one batch in. Once
    # the worker finished those runs, the next drain takes the next batch.
    rep = lab.repeat(queue)
    names = [f"n{i:02d}" for i in range(12)]
    rep.register_many([(name, 15 * MIN, "t") for name in names])
    pump = lab.pump(queue, batch=5, rule="start-to-finish")
    first = pump.drain()
    assert [o.name for o in first] == names[:5]
    assert lab.jobs(queue).count() == 5  # no run released twice
    finish(lab, queue, first, MIN)
    second = pump.drain()
    assert [o.name for o in second] == names[5:10]
    finish(lab, queue, second, MIN)
    assert [o.name for o in pump.drain()] == names[10:]


def test_a_drain_whose_rule_keeps_every_name_in_place_fires_one_batch(lab: emq_lab.Lab, queue: str) -> None:
    # A rule that gives each row a next run at now keeps every fired name due where it was: the
    # next tick would fire the same slots again, so the drain stops after one.
    lab.repeat(queue).register_many([(f"n{i:02d}", 15 * MIN, "t") for i in range(20)])
    pump = lab.pump(queue, batch=5, rule=lambda release_ms, every_ms: release_ms)
    assert [o.name for o in pump.drain()] == [f"n{i:02d}" for i in range(5)]
    assert lab.jobs(queue).count() == 5


# Three and a half of the pump's batches (100): one tick takes the last 09:00 rows and the first at 09:15.
GRID_DUE = 350


def test_a_grid_drain_exactly_on_a_slot_fires_batches_of_names_for_each_due_slot(lab: emq_lab.Lab, queue: str) -> None:
    # 350 names on the 15-minute grid, due since 09:00; the drain runs at 09:15, exactly their
    # next slot: each name it fires moves to 09:15, behind the names still at 09:00, and fires
    # again for that slot once they are done. The caller's occurrences are the server's jobs.
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    names = [f"n{i:05d}" for i in range(GRID_DUE)]
    timed.repeat(queue).register_many([(name, 15 * MIN, "t") for name in names])
    clock.advance(15 * MIN)
    pump = timed.pump(queue, rule="fixed grid")
    assert GRID_DUE % pump.batch and 3 * pump.batch < GRID_DUE  # a tick of both slots, after whole batches
    fired = pump.drain()
    assert [(o.name, o.slot_ms) for o in fired] == [(n, at(0)) for n in names] + [(n, at(15)) for n in names]
    assert {o.fired_at_ms for o in fired} == {at(15)}
    jobs = timed.jobs(queue)
    assert sorted(jobs.browse(limit=3 * GRID_DUE)) == sorted(o.job_id for o in fired)  # no job beyond these
    pipe = lab.client.pipeline(transaction=False)
    for o in fired:
        pipe.hget(timed.keyspace(queue).job(o.job_id), "name")
    assert pipe.execute() == [o.name for o in fired]
    assert {ms for _, ms in timed.repeat(queue).entries()} == {at(30)}  # each on its next slot
