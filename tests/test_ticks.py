"""ticks.lua, the pump's fast path: ``Pump.forward`` fires what the tick-at-a-time ``Pump.ticks``
fires, in one round trip a call; ``drain`` on it fires each due name once, even on the grid where
a row's next slot is now; a malformed call writes nothing. On every backend."""

from __future__ import annotations

import itertools
import os
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from helpers import MIN, START, snapshot

import emq_lab
from emq_lab import Occurrence, Outcome, SimClock, SystemClock, backend, classroom, keys
from emq_lab.pump import _map_behind, _two_in_flight
from emq_lab.scripts import source

BATCH = 4  # fewer than the ten "a" names due at 09:00: a tick leaves rows for the next
STEP = 90_000  # 1.5 min: the 7- and 4-minute periods below fall between ticks, so the grid misses slots
START_MS = SimClock(START).now_ms()


def at(minutes: float) -> int:
    """START + ``minutes``, in ms."""
    return START_MS + int(minutes * MIN)


def populated(lab: emq_lab.Lab, queue: str) -> tuple[emq_lab.Lab, SimClock]:
    """``queue`` on its own SimClock at 09:00: names on several periods, ten due at once, one
    first due at 09:30 (the ticks before it that find nothing due are passed over), and a member
    due at 08:59 whose record is gone (the first tick sweeps it)."""
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    rep = timed.repeat(queue)
    rep.register_many([(f"a{i}", 30 * MIN, "every 30") for i in range(10)])
    rep.register_many([(f"b{i}", 7 * MIN, "every 7", MIN) for i in range(3)])
    rep.register("late", 4 * MIN, "every 4 from 09:30", first_in_ms=30 * MIN)
    lab.with_clock(SimClock(START_MS - MIN)).repeat(queue).register("gone", 5 * MIN, "t")
    lab.client.delete(timed.keyspace(queue).record("gone"))
    return timed, clock


@pytest.fixture
def other(lab: emq_lab.Lab, queue: str) -> Iterator[str]:
    """A second queue of the same lab (``<queue>-b``), reset afterwards."""
    yield f"{queue}-b"
    lab.reset(f"{queue}-b")


def by_ticks(pump: emq_lab.Pump, occurrences: int, step_ms: int) -> list[list[Occurrence]]:
    """``Pump.ticks``, one tick at a time, until ``occurrences`` have fired: what ``forward``
    promises to fire, up to the tick at which the count is reached; what each tick fired."""
    fired: list[list[Occurrence]] = []
    for each in itertools.islice(pump.ticks(step_ms=step_ms), 2000):
        fired.append(each)
        if sum(map(len, fired)) >= occurrences:
            return fired
    raise AssertionError(f"2000 ticks fired fewer than {occurrences} occurrences")


def by_ticks_and_finish(
    timed: emq_lab.Lab, clock: SimClock, pump: emq_lab.Pump, occurrences: int, step_ms: int, finish_ms: int
) -> list[Occurrence]:
    """Start-to-finish by hand: tick, each run's worker finishes ``finish_ms`` after its release
    and advances the row (next = finish + period), move the clock a step, tick, ... until
    ``occurrences`` have fired (the runs of the tick that reached the count finish too)."""
    rep = timed.repeat(pump.queue)
    fired: list[Occurrence] = []
    for _ in range(2000):
        now = pump.tick()
        fired += now
        for o in now:
            every = int(rep.record(o.name)["every_ms"])
            assert rep.advance_to(o.name, o.fired_at_ms + finish_ms + every) is Outcome.ADVANCED
        clock.advance(step_ms)
        if len(fired) >= occurrences:
            return fired
    raise AssertionError(f"2000 ticks fired {len(fired)} occurrences, fewer than {occurrences}")


def assert_same_queues(a: emq_lab.Lab, qa: str, b: emq_lab.Lab, qb: str) -> None:
    """The registry rows, the wait list and the clock's now of two runs are the same."""
    assert a.repeat(qa).entries() == b.repeat(qb).entries()
    assert a.jobs(qa).browse(limit=200) == b.jobs(qb).browse(limit=200)
    assert a.clock.now_ms() == b.clock.now_ms()


# -- forward fires what the ticks fire ---------------------------------------------------------

PARITY = [
    ("start-to-start", False),
    ("start-to-start", True),
    ("fixed grid", False),
    ("fixed grid", True),
    ("start-to-finish", False),  # rows never advance: the same four names fire every tick
    # start-to-finish with slot ids: each tick replays the slots already enqueued (see below)
]


@pytest.mark.parametrize(("rule", "slot_keyed"), PARITY, ids=[f"{r}-{'slot' if s else 'fresh'}" for r, s in PARITY])
def test_forward_fires_what_the_ticks_fire(
    lab: emq_lab.Lab, queue: str, other: str, rule: str, slot_keyed: bool
) -> None:
    occurrences, per_call = 50, 12  # several calls, each stopping mid-way through the run
    stepped, _ = populated(lab, other)
    each_tick = by_ticks(stepped.pump(other, batch=BATCH, slot_keyed=slot_keyed, rule=rule), occurrences, STEP)
    expected = [o for fired in each_tick for o in fired]

    forwarded, _ = populated(lab, queue)
    pump = forwarded.pump(queue, batch=BATCH, slot_keyed=slot_keyed, rule=rule)
    chunks = list(pump.forward(occurrences, step_ms=STEP, per_call=per_call))

    assert [o for chunk in chunks for o in chunk] == expected  # job id, name, fired at, slot
    assert len(chunks) >= occurrences // per_call and all(chunks)
    assert_same_queues(forwarded, queue, stepped, other)
    assert any(o.fired_at_ms > o.slot_ms for o in expected)  # rows a full batch left for a later tick
    if rule != "start-to-finish":  # (there the first four rows stay due, and fire at every tick)
        assert [] in each_tick  # ticks that found nothing due: forward passed over them
        assert "late" in {o.name for o in expected}  # first due at 09:30
    assert "gone" not in dict(forwarded.repeat(queue).entries())  # swept by the first tick


def test_forward_stops_when_every_tick_only_replays_slots_already_enqueued(
    lab: emq_lab.Lab, queue: str, other: str
) -> None:
    # Start-to-finish with slot ids and no finish: the rows stay at their slot, so after the
    # first ticks every tick would only find <name>:<slot> enqueued already. forward stops
    # instead of ticking forever; what it fired is what the ticks over the same span fire.
    forwarded, _ = populated(lab, queue)
    pump = forwarded.pump(queue, batch=BATCH, slot_keyed=True, rule="start-to-finish")
    fired = [o for chunk in pump.forward(50, step_ms=STEP, per_call=12) for o in chunk]
    # The first tick sweeps gone (due at 08:59) and fires a0-a2, the second a3 (and a0-a2 again,
    # as slots already enqueued): then a0-a3 fill every batch, each a replay.
    assert [(o.name, o.fired_at_ms) for o in fired] == [("a0", at(0)), ("a1", at(0)), ("a2", at(0)), ("a3", at(1.5))]
    assert {o.job_id for o in fired} == {f"a{i}:{START_MS}" for i in range(4)}

    stepped, _ = populated(lab, other)
    ticks = stepped.pump(other, batch=BATCH, slot_keyed=True, rule="start-to-finish").ticks(step_ms=STEP)
    span = (forwarded.clock.now_ms() - START_MS) // STEP
    assert [o for each in itertools.islice(ticks, span) for o in each] == fired
    assert_same_queues(forwarded, queue, stepped, other)


@pytest.mark.parametrize("slot_keyed", [False, True], ids=["fresh", "slot"])
def test_forward_with_a_finish_in_one_call_fires_what_ticks_and_finishes_fire(
    lab: emq_lab.Lab, queue: str, other: str, slot_keyed: bool
) -> None:
    occurrences, finish = 30, 4 * MIN
    stepped, stepped_clock = populated(lab, other)
    pump = stepped.pump(other, batch=BATCH, slot_keyed=slot_keyed, rule="start-to-finish")
    expected = by_ticks_and_finish(stepped, stepped_clock, pump, occurrences, STEP, finish)

    forwarded, _ = populated(lab, queue)
    pump = forwarded.pump(queue, batch=BATCH, slot_keyed=slot_keyed, rule="start-to-finish")
    (chunk,) = pump.forward(occurrences, step_ms=STEP, finish_ms=finish, per_call=occurrences)
    assert chunk == expected
    assert_same_queues(forwarded, queue, stepped, other)
    assert len({(o.name, o.slot_ms) for o in chunk}) == len(chunk)  # each slot fired once


def test_forward_with_a_finish_fires_the_same_however_many_calls_it_takes(
    lab: emq_lab.Lab, queue: str, other: str
) -> None:
    occurrences, finish = 30, 4 * MIN
    one, _ = populated(lab, other)
    (in_one,) = one.pump(other, batch=BATCH, rule="start-to-finish").forward(
        occurrences, step_ms=STEP, finish_ms=finish, per_call=occurrences
    )
    many, _ = populated(lab, queue)
    pump = many.pump(queue, batch=BATCH, rule="start-to-finish")
    in_many = [o for chunk in pump.forward(occurrences, step_ms=STEP, finish_ms=finish, per_call=7) for o in chunk]
    assert [(o.name, o.slot_ms, o.fired_at_ms) for o in in_many] == [(o.name, o.slot_ms, o.fired_at_ms) for o in in_one]
    assert many.repeat(queue).entries() == one.repeat(other).entries()


# -- forward stops, or refuses --------------------------------------------------------------


@pytest.mark.parametrize("step_ms", [MIN, 0])
def test_forward_stops_when_nothing_is_registered(lab: emq_lab.Lab, queue: str, step_ms: int) -> None:
    clock = SimClock(START)
    pump = lab.with_clock(clock).pump(queue)
    assert list(pump.forward(1000, step_ms=step_ms)) == [[]]
    assert clock.now_ms() == START_MS  # no tick was taken
    assert snapshot(lab, queue) == {}
    # Only a member whose record is gone: the first tick sweeps it, then nothing is registered.
    lab.repeat(queue).register("gone", MIN, "t")
    lab.client.delete(lab.keyspace(queue).record("gone"))
    assert list(pump.forward(1000, step_ms=step_ms)) == [[]]
    assert lab.repeat(queue).entries() == []
    assert clock.now_ms() == START_MS + step_ms  # the tick after the one that swept it


@pytest.mark.parametrize("step_ms", [MIN, 0])
def test_forward_stops_when_its_only_row_is_cancelled_mid_way(lab: emq_lab.Lab, queue: str, step_ms: int) -> None:
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    timed.repeat(queue).register("report", MIN, "t")
    run = timed.pump(queue).forward(1000, step_ms=step_ms, per_call=3)
    first = next(run)
    assert [(o.name, o.fired_at_ms) for o in first] == [("report", at(0)), ("report", at(1)), ("report", at(2))]
    assert timed.repeat(queue).cancel("report") is Outcome.CANCELLED
    assert list(run) == [[]]
    assert clock.now_ms() == at(2) + step_ms  # the tick after the last one taken (step 0: the same moment)
    assert timed.jobs(queue).count() == 3


REFUSED: list[Any] = [
    pytest.param({"step_ms": -1}, {}, "step_ms", id="step_ms-negative"),
    pytest.param({"step_ms": 1.5}, {}, "step_ms", id="step_ms-float"),
    pytest.param({"step_ms": MIN, "finish_ms": MIN}, {}, "finish_ms", id="finish_ms-not-start-to-finish"),
    pytest.param({"step_ms": MIN, "finish_ms": "4m"}, {"rule": "start-to-finish"}, "finish_ms", id="finish_ms-text"),
    pytest.param({"step_ms": MIN}, {"rule": lambda now, every: now + every}, "rule", id="function-rule"),
    pytest.param({"step_ms": MIN, "per_call": 0}, {}, "per_call", id="per_call-0"),
]


@pytest.mark.parametrize(("call", "made", "field"), REFUSED)
def test_forward_refuses_naming_the_field_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, call: dict[str, Any], made: dict[str, Any], field: str
) -> None:
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    timed.repeat(queue).register_many([("a", MIN, "t"), ("b", MIN, "t")])
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match=f"^{field}:"):
        next(timed.pump(queue, **made).forward(10, **call))
    assert snapshot(lab, queue) == before
    assert clock.now_ms() == START_MS


@pytest.mark.parametrize("per_call", [0, -5, 2.5, True, "1000"])
@pytest.mark.parametrize("rule", ["start-to-start", "start-to-finish"])
def test_drain_refuses_a_bad_per_call_naming_the_field_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, per_call: Any, rule: str
) -> None:
    lab.repeat(queue).register_many([("a", MIN, "t"), ("b", MIN, "t")])
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match="^per_call:"):
        lab.pump(queue, rule=rule).drain(per_call=per_call)
    assert snapshot(lab, queue) == before


def test_forward_refuses_a_negative_finish_naming_the_field(lab: emq_lab.Lab, queue: str) -> None:
    timed = lab.with_clock(SimClock(START))
    timed.repeat(queue).register("a", MIN, "t")
    before = snapshot(lab, queue)
    try:
        with pytest.raises(ValueError, match="^finish_ms:"):
            next(timed.pump(queue, rule="start-to-finish").forward(10, step_ms=MIN, finish_ms=-1))
    finally:
        assert snapshot(lab, queue) == before  # refused by one side or the other, never written


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda lab: lab.with_scripts(advance=source("advance") + "\n-- a learner's copy\n"), "scripts"),
        (lambda lab: lab.with_scripts(enqueue=source("enqueue") + "\n-- a learner's copy\n"), "scripts"),
        (lambda lab: lab.with_clock(SystemClock()), "clock"),
    ],
    ids=["learners-advance", "learners-enqueue", "system-clock"],
)
def test_forward_refuses_a_lab_it_cannot_run_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, make: Callable[[emq_lab.Lab], emq_lab.Lab], field: str
) -> None:
    lab.repeat(queue).register_many([("a", MIN, "t"), ("b", MIN, "t")])
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match=f"^{field}:"):
        next(make(lab).pump(queue).forward(10, step_ms=MIN))
    assert snapshot(lab, queue) == before
    assert lab.clock.now_ms() == START_MS


def test_forward_costs_one_round_trip_a_call(lab: emq_lab.Lab, queue: str, round_trips: list[int]) -> None:
    clock = SimClock(START)
    pump = lab.with_clock(clock).pump(queue, batch=100)
    assert list(pump.forward(1, step_ms=MIN)) == [[]]  # loads the script on the queue's node
    lab.repeat(queue).register_many([(f"n{i}", MIN, "t") for i in range(10)])
    round_trips[0] = 0
    chunks = list(pump.forward(1000, step_ms=MIN, per_call=250))
    # Ten names a minute: 250 occurrences are 25 ticks, each call stops on the tick that makes 250.
    assert [len(chunk) for chunk in chunks] == [250, 250, 250, 250]
    assert round_trips[0] == 4
    assert clock.now_ms() == at(100)


# -- drain on ticks.lua ------------------------------------------------------------------------


@pytest.mark.parametrize("slot_keyed", [False, True], ids=["fresh", "slot"])
def test_a_grid_row_whose_next_slot_is_now_fires_once_a_drain(
    lab: emq_lab.Lab, queue: str, other: str, slot_keyed: bool
) -> None:
    # report runs on the 15-minute grid from 09:00; at 09:15 its 09:00 slot is due, and the slot
    # after it is 09:15 itself. A drain fires it once and leaves it due; so does a tick.
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    for q in (queue, other):
        timed.repeat(q).register("report", 15 * MIN, "t")
    clock.advance(15 * MIN)
    drains = timed.pump(queue, slot_keyed=slot_keyed, rule="fixed grid")
    ticks = timed.pump(other, slot_keyed=slot_keyed, rule="fixed grid")

    for slot, next_slot in ((at(0), at(15)), (at(15), at(30))):
        drained, ticked = drains.drain(), ticks.tick()
        assert [(o.name, o.fired_at_ms, o.slot_ms) for o in drained] == [("report", at(15), slot)]
        assert drained == ticked
        assert timed.repeat(queue).entries() == [("report", next_slot)]
    assert drains.drain() == [] == ticks.tick()  # 09:30 is not due at 09:15
    assert timed.jobs(queue).browse() == timed.jobs(other).browse()


def test_drain_fires_each_due_name_once_past_the_rows_that_stay_due(
    lab: emq_lab.Lab, queue: str, round_trips: list[int]
) -> None:
    # At 09:15 on the 15-minute grid: a0-a9 (slot 09:00) fire and stay due at 09:15, where they
    # sort before z0-z9 (first run 09:15); m0-m3 (slot 09:05) fire and move to 09:20. Batches of
    # 5 must pass the a's over to reach the z's.
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    rep = timed.repeat(queue)
    rep.register_many([(f"a{i}", 15 * MIN, "t") for i in range(10)])
    rep.register_many([(f"m{i}", 15 * MIN, "t", 5 * MIN) for i in range(4)])
    rep.register_many([(f"z{i}", 15 * MIN, "t", 15 * MIN) for i in range(10)])
    names = [name for name, _ in rep.entries()]
    clock.advance(15 * MIN)
    pump = timed.pump(queue, batch=5, rule="fixed grid")

    round_trips[0] = 0
    fired = pump.drain(per_call=5)  # a call a batch: the names still due pass from call to call
    assert Counter(o.name for o in fired) == Counter(names)  # each of the 24 once
    assert round_trips[0] == 5  # one ticks.lua call a batch: 5, 5, 5, 5, then the last 4
    assert {o.fired_at_ms for o in fired} == {at(15)}
    slots = {o.name: o.slot_ms for o in fired}
    assert [slots[f"a{i}"] for i in range(10)] == [at(0)] * 10
    assert [slots[f"z{i}"] for i in range(10)] == [at(15)] * 10
    entries = dict(rep.entries())
    assert [entries[f"a{i}"] for i in range(10)] == [at(15)] * 10  # still due: the next drain's
    assert [entries[f"m{i}"] for i in range(4)] == [at(20)] * 4
    assert [entries[f"z{i}"] for i in range(10)] == [at(30)] * 10
    assert sorted(pump.advanced) == sorted((name, Outcome.ADVANCED) for name in names)

    round_trips[0] = 0
    again = pump.drain()  # 1,000 rows a call by default: the batches of 5 pass the a's in one call
    assert [(o.name, o.slot_ms) for o in again] == [(f"a{i}", at(15)) for i in range(10)]
    assert round_trips[0] == 1
    assert pump.drain() == []
    assert timed.jobs(queue).count() == len(names) + 10


def test_a_drain_maps_each_reply_while_its_next_call_waits_on_the_server() -> None:
    # Mapping reply 1 waits until call 2 has begun: mapped in the caller's thread, reply 1 would
    # hold call 2 back and the wait would time out.
    second_call = threading.Event()

    def replies() -> Iterator[int]:
        yield 1
        second_call.set()
        yield from (2, 3)

    def mapped(reply: int) -> int:
        if reply == 1:
            assert second_call.wait(5), "the next call waited for the last reply's mapping"
        return 10 * reply

    assert _map_behind(replies(), mapped) == [10, 20, 30]  # in the replies' order


def test_two_calls_go_out_at_once_and_none_more_than_the_rows_need() -> None:
    # 2,500 rows due, 1,000 a call: three calls. After the first reply the other two go out at
    # once, and each waits for the other to begin: sent one at a time, they would time out. They
    # may run in either order; neither order makes a fourth call.
    rows, lock, started = [2_500], threading.Lock(), [0]
    together = threading.Barrier(2, timeout=5)

    def call() -> int:
        with lock:
            started[0] += 1
            number = started[0]
        if number in (2, 3):
            together.wait()
        with lock:
            rows[0] -= min(1_000, rows[0])
            return rows[0]

    replies = list(_two_in_flight(call, lambda left: left, 1_000))
    assert started == [3] and rows == [0]
    assert replies[0] == 1_500 and sorted(replies[1:]) == [0, 500]


def test_a_call_that_fails_leaves_no_call_running_after_the_drain() -> None:
    # After the first reply two calls go out: one fails at once, the other takes 0.3 s. The
    # failure comes only once neither is running (no call outlives its drain).
    lock, started, running = threading.Lock(), [0], [0]

    def call() -> int:
        with lock:
            started[0] += 1
            number, running[0] = started[0], running[0] + 1
        try:
            if number == 2:
                raise redis.ConnectionError("the server went away")
            time.sleep(0.3 if number == 3 else 0)
            return 1_500 if number == 1 else 0
        finally:
            with lock:
                running[0] -= 1

    with pytest.raises(redis.ConnectionError, match="went away"):
        list(_two_in_flight(call, lambda left: left, 1_000))
    assert started == [3] and running == [0]


def test_a_reply_that_cannot_be_mapped_fails_the_drain_after_the_calls_it_made() -> None:
    made: list[int] = []

    def replies() -> Iterator[int]:
        for n in (1, 2, 3):
            made.append(n)
            yield n

    def mapped(reply: int) -> int:
        if reply == 2:
            raise RuntimeError("ticks.lua answered 1 entries and 0 numbers for 2 rows")
        return reply

    with pytest.raises(RuntimeError, match="for 2 rows"):
        _map_behind(replies(), mapped)
    assert made == [1, 2, 3]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_a_forked_child_drains_with_a_mapping_thread_of_its_own(valkey_server: Any, queue: str) -> None:
    # The parent's drains start the mapping thread; a child forked after has no copy of it. Its
    # drain must start its own instead of waiting on one that is not there.
    clock = SimClock(START)
    lab = emq_lab.connect(valkey_server.url, clock=clock)
    try:
        lab.repeat(queue).register_many([(f"n{i:02d}", 15 * MIN, "t") for i in range(30)])
        clock.advance(15 * MIN)
        assert len(lab.pump(queue, batch=5).drain(per_call=10)) == 30  # 3 calls, mapped behind
        clock.advance(15 * MIN)
        child = os.fork()
        if child == 0:
            os._exit(0 if len(lab.pump(queue, batch=5).drain(per_call=10)) == 30 else 1)
        deadline = time.monotonic() + 20
        while (done := os.waitpid(child, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        if done == (0, 0):
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            pytest.fail("the forked child's drain waited 20 s for a mapping thread")
        assert os.waitstatus_to_exitcode(done[1]) == 0
        assert lab.jobs(queue).count() == 60
    finally:
        lab.reset(queue)
        lab.close()


def test_only_a_server_in_another_process_has_a_wait_to_fill() -> None:
    assert backend.in_process(backend.embedded_client())
    assert not backend.in_process(redis.Redis(host="127.0.0.1", port=1))  # (no connection is made)


def test_a_drain_of_whole_calls_makes_no_empty_call_after_them(
    lab: emq_lab.Lab, queue: str, round_trips: list[int]
) -> None:
    # 20 names due, batches of 5, two batches a call: the second call takes the last 10 and
    # knows (it read one row past its batch) that nothing fresh is due after them.
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    timed.repeat(queue).register_many([(f"n{i:02d}", 15 * MIN, "t") for i in range(20)])
    timed.repeat(queue).register("later", 15 * MIN, "t", 20 * MIN)
    clock.advance(15 * MIN)
    pump = timed.pump(queue, batch=5)

    round_trips[0] = 0
    assert sorted(o.name for o in pump.drain(per_call=10)) == [f"n{i:02d}" for i in range(20)]
    assert round_trips[0] == 2
    round_trips[0] = 0
    assert pump.drain(per_call=10) == []
    assert round_trips[0] == 1


DRAIN_RULES: list[Any] = [
    pytest.param("start-to-start", False, id="start-to-start"),
    pytest.param("fixed grid", False, id="grid"),
    pytest.param(
        "fixed grid",
        True,
        id="grid-learners-scripts",
    ),
    pytest.param(
        "start-to-finish",
        False,
        id="start-to-finish",
    ),
]


@pytest.mark.parametrize(("rule", "learner"), DRAIN_RULES)
def test_drain_fires_every_due_name_once_whatever_the_path(
    lab: emq_lab.Lab, queue: str, rule: str, learner: bool
) -> None:
    # "Every occurrence due now, batch after batch": 12 names due at 09:15 (a0-a5 since 09:00,
    # z0-z5 at 09:15), batches of 5.
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    if learner:  # the enqueue a learner handed in (run in the sandbox): the drain runs the scripts per row
        timed = timed.with_scripts(enqueue=source("enqueue") + "\n-- a learner's copy\n")
    try:
        timed.repeat(queue).register_many([(f"a{i}", 15 * MIN, "t") for i in range(6)])
        timed.repeat(queue).register_many([(f"z{i}", 15 * MIN, "t", 15 * MIN) for i in range(6)])
        clock.advance(15 * MIN)
        fired = timed.pump(queue, batch=5, rule=rule).drain()
        assert sorted(o.name for o in fired) == [*(f"a{i}" for i in range(6)), *(f"z{i}" for i in range(6))]
    finally:
        timed.reset(queue)


# -- ticks.lua called raw ----------------------------------------------------------------------

GOOD = ["ticks", "{now}", MIN, 10, 100, 5, "fresh", "start-to-start", ""]
DRAIN = ["drain", "{now}", 0, 10, 1, 0, "fresh", "fixed grid", ""]
MALFORMED: list[Any] = [
    pytest.param(GOOD, {0: "tick"}, "mode must be", id="mode"),
    pytest.param(GOOD, {0: ""}, "mode must be", id="mode-empty"),
    pytest.param(GOOD, {1: "soon"}, "now_ms must be an integer", id="now_ms-text"),
    pytest.param(GOOD, {1: "1.5"}, "now_ms must be an integer", id="now_ms-fraction"),
    pytest.param(GOOD, {1: "12345678901234567"}, "now_ms must be an integer", id="now_ms-17-digits"),
    pytest.param(GOOD, {1: ""}, "now_ms must be an integer", id="now_ms-empty"),
    pytest.param(GOOD, {2: "-1"}, "tick_ms must be an integer >= 0", id="tick_ms-negative"),
    pytest.param(GOOD, {2: "1m"}, "tick_ms must be an integer >= 0", id="tick_ms-text"),
    pytest.param(GOOD, {3: "0"}, "batch must be an integer from 1 to 100000", id="batch-0"),
    pytest.param(GOOD, {3: "100001"}, "batch must be an integer from 1 to 100000", id="batch-over"),
    pytest.param(GOOD, {3: "1e3"}, "batch must be an integer from 1 to 100000", id="batch-1e3"),
    pytest.param(GOOD, {4: "0"}, "reads must be an integer from 1 to 100000", id="reads-0"),
    pytest.param(GOOD, {4: "100001"}, "reads must be an integer from 1 to 100000", id="reads-over"),
    pytest.param(GOOD, {5: "-1"}, "want must be an integer >= 0", id="want-negative"),
    pytest.param(GOOD, {5: "all"}, "want must be an integer >= 0", id="want-text"),
    pytest.param(GOOD, {5: "0"}, "ticks take want >= 1", id="ticks-want-0"),
    pytest.param(GOOD, {6: "mine"}, 'ids must be "fresh" or "slot"', id="ids"),
    pytest.param(GOOD, {7: "grid"}, "rule must be", id="rule"),
    pytest.param(GOOD, {8: "5"}, "finish must be", id="finish-not-start-to-finish"),
    pytest.param(GOOD, {7: "start-to-finish", 8: "-5"}, "finish must be", id="finish-negative"),
    pytest.param(GOOD, {7: "start-to-finish", 8: "4m"}, "finish must be", id="finish-text"),
    pytest.param(GOOD[:8], {}, "finish must be", id="finish-missing"),
    pytest.param(GOOD[:1], {}, "now_ms must be an integer", id="argv-cut-short"),
    pytest.param([*GOOD, "a"], {}, "ticks take want >= 1 and no names to pass", id="ticks-passing-a-name"),
    pytest.param(DRAIN, {2: MIN}, "a drain takes tick_ms 0", id="drain-tick_ms"),
    pytest.param(DRAIN, {5: 1}, "a drain takes tick_ms 0, want 0", id="drain-want"),
    pytest.param(DRAIN, {7: "start-to-finish"}, "a rule that moves the rows", id="drain-start-to-finish"),
    pytest.param(DRAIN, {7: "start-to-finish", 8: "5"}, "finish must be", id="drain-finish"),
    pytest.param([*DRAIN, "a", ""], {}, "a name to pass must be a non-empty string", id="drain-passing-empty"),
]


def keys_of(lab: emq_lab.Lab, queue: str) -> list[str]:
    k = lab.keyspace(queue)
    return [k.registry, k.counter, k.wait, k.job_prefix]


@pytest.mark.parametrize(("base", "changed", "says"), MALFORMED)
def test_a_malformed_ticks_call_names_the_problem_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, base: list[Any], changed: dict[int, Any], says: str
) -> None:
    lab.repeat(queue).register_many([("a", MIN, "t"), ("b", MIN, "t")])
    now = lab.clock.now_ms()
    args: list[Any] = [now if v == "{now}" else v for v in base]
    for index, value in changed.items():
        args[index] = value
    before = snapshot(lab, queue)
    with pytest.raises(redis.ResponseError, match=f"^emq ticks: .*{re.escape(says)}"):
        lab.scripts.ticks(keys=keys_of(lab, queue), args=args)
    assert snapshot(lab, queue) == before
    good: list[Any] = [now if v == "{now}" else v for v in (DRAIN if base[0] == "drain" else GOOD)]
    codes = lab.scripts.ticks(keys=keys_of(lab, queue), args=good)[0]
    assert codes.startswith("1111")  # the call it spoils, well formed, fires a and b


def same_slot(queue: str) -> str:
    """Another queue whose keys hash to the slot of ``queue``'s (so a cluster runs the call and
    the script itself must refuse it)."""
    target = keys.slot(keys.registry(queue))
    # CRC16 over "<queue>-<i>" is not uniform: some queue names need past 100,000 of them (t103:
    # 127,978). Queues t0 to t2999 all find one, the farthest in half a second.
    for i in range(10_000_000):
        if keys.slot(keys.registry(q := f"{queue}-{i}")) == target:
            return q
    raise AssertionError(f"no queue <{queue}-i> shares the slot of {queue!r} for i below 10,000,000")


@pytest.mark.parametrize("swapped", [0, 1, 2, 3], ids=["registry", "counter", "wait", "jobs"])
def test_a_ticks_call_on_the_keys_of_two_queues_writes_nothing(lab: emq_lab.Lab, queue: str, swapped: int) -> None:
    neighbour = same_slot(queue)
    try:
        for q in (queue, neighbour):
            lab.repeat(q).register_many([("a", MIN, "t"), ("b", MIN, "t")])
        mixed = keys_of(lab, queue)
        mixed[swapped] = keys_of(lab, neighbour)[swapped]
        before = snapshot(lab, queue), snapshot(lab, neighbour)
        args: list[Any] = ["ticks", lab.clock.now_ms(), MIN, 10, 100, 5, "fresh", "start-to-start", ""]
        with pytest.raises(redis.ResponseError, match="^emq ticks: KEYS"):
            lab.scripts.ticks(keys=mixed, args=args)
        assert (snapshot(lab, queue), snapshot(lab, neighbour)) == before
    finally:
        lab.reset(neighbour)


# -- a learner's ACL lets the fast path run --------------------------------------------------


@pytest.fixture(params=["valkey", "cluster"])
def learner_lab(request: pytest.FixtureRequest, queue: str) -> Iterator[emq_lab.Lab]:
    """A lab logged in as a classroom learner (an ACL user allowed only ALLOWED_COMMANDS)."""
    server = request.getfixturevalue("valkey_cluster" if request.param == "cluster" else "valkey_server")
    admin, _ = emq_lab.backend.open_client(server.url)
    prefix = f"ticks{queue}x"
    (learner,) = classroom.create_users(admin, learners=1, prefix=prefix, check=False)  # the shared, open server
    classroom.load_scripts(admin)  # a learner may not load them
    lab = emq_lab.connect(learner.url(server.url), clock=SimClock(START), namespace=learner.namespace)
    yield lab
    lab.reset(queue)
    lab.close()
    classroom.revoke_users(admin, prefix=prefix)
    admin.close()


def test_a_learners_acl_lets_ticks_lua_run(learner_lab: emq_lab.Lab, queue: str) -> None:
    clock = SimClock(START)
    timed = learner_lab.with_clock(clock)
    rep = timed.repeat(queue)
    rep.register_many([("a", 15 * MIN, "t"), ("b", 15 * MIN, "t")])
    rep.register("gone", 15 * MIN, "t")
    timed.client.delete(timed.keyspace(queue).record("gone"))  # the script's HMGET, then ZREM
    clock.advance(15 * MIN)
    pump = timed.pump(queue, slot_keyed=True, rule="fixed grid")
    assert [o.name for o in pump.drain()] == ["a", "b"]
    assert [len(chunk) for chunk in pump.forward(6, step_ms=15 * MIN, per_call=4)] == [4, 2]
    assert timed.jobs(queue).count() == 8
