"""fast/ticks.lua behind ``fastforward.forward``: it fires what a loop of ``tick()`` and
``clock.advance`` fires (the equivalence that keeps it in step with the flat scripts) and leaves
the same registry and jobs; a malformed ticks.lua call writes nothing. On every backend."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from helpers import MIN, START, slot, snapshot

import emq_classroom as classroom
import emq_lab
from emq_lab import Occurrence, Outcome, SimClock, SystemClock, scripts
from emq_lab.fastforward import forward
from emq_lab.keys import QueueKeys

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


def by_ticks(pump: emq_lab.Pump, clock: SimClock, occurrences: int, step_ms: int) -> list[list[Occurrence]]:
    """``tick()`` then ``clock.advance(step_ms)`` until ``occurrences`` have fired: what
    ``forward`` promises to fire, up to the tick at which the count is reached; what each tick fired."""
    fired: list[list[Occurrence]] = []
    for _ in range(2000):
        fired.append(pump.tick())
        clock.advance(step_ms)
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
    stepped, clock = populated(lab, other)
    pump = stepped.pump(other, batch=BATCH, slot_keyed=slot_keyed, rule=rule)
    each_tick = by_ticks(pump, clock, occurrences, STEP)
    expected = [o for fired in each_tick for o in fired]

    forwarded, _ = populated(lab, queue)
    pump = forwarded.pump(queue, batch=BATCH, slot_keyed=slot_keyed, rule=rule)
    chunks = list(forward(pump, occurrences, step_ms=STEP, per_call=per_call))

    assert [o for chunk in chunks for o in chunk] == expected  # job id, name, fired at, slot
    assert len(chunks) >= occurrences // per_call and all(chunks)
    assert_same_queues(forwarded, queue, stepped, other)
    assert any(o.fired_at_ms > o.slot_ms for o in expected)  # rows a full batch left for a later tick
    if rule != "start-to-finish":  # (there the first four rows stay due, and fire at every tick)
        assert [] in each_tick  # ticks that found nothing due: forward passed over them
        assert "late" in {o.name for o in expected}  # first due at 09:30
    assert "gone" not in dict(forwarded.repeat(queue).entries())  # swept by the first tick


ONE_ROW = [
    pytest.param("start-to-start", False, None, id="start-to-start"),
    pytest.param("fixed grid", True, None, id="grid-slot"),
    pytest.param("start-to-finish", False, 4 * MIN, id="start-to-finish"),
]


@pytest.mark.parametrize(("rule", "slot_keyed", "finish"), ONE_ROW)
def test_forward_of_one_row_fires_what_the_ticks_fire(
    lab: emq_lab.Lab, queue: str, other: str, rule: str, slot_keyed: bool, finish: int | None
) -> None:
    # One registration (the fast-forward panel's, an explorer lane's): ticks.lua reads its row
    # once a call and writes its last advance at the call's end; every 7 min, a tick every 1.5.
    occurrences = 40
    runs: list[list[Occurrence]] = []
    for q in (other, queue):
        clock = SimClock(START)
        timed = lab.with_clock(clock)
        timed.repeat(q).register("report", 7 * MIN, "t")
        pump = timed.pump(q, slot_keyed=slot_keyed, rule=rule)
        if q == other and finish is None:
            runs.append([o for fired in by_ticks(pump, clock, occurrences, STEP) for o in fired])
        elif q == other:
            runs.append(by_ticks_and_finish(timed, clock, pump, occurrences, STEP, finish))
        else:
            chunks = forward(pump, occurrences, step_ms=STEP, finish_ms=finish, per_call=9)
            runs.append([o for chunk in chunks for o in chunk])
    assert runs[1] == runs[0]
    assert lab.repeat(queue).entries() == lab.repeat(other).entries()
    assert lab.jobs(queue).browse(limit=100) == lab.jobs(other).browse(limit=100)


def test_forward_stops_when_every_tick_only_replays_slots_already_enqueued(
    lab: emq_lab.Lab, queue: str, other: str
) -> None:
    # Start-to-finish with slot ids and no finish: the rows stay at their slot, so after the
    # first ticks every tick would only find <name>:<slot> enqueued already. forward stops
    # instead of ticking forever; what it fired is what the ticks over the same span fire.
    forwarded, _ = populated(lab, queue)
    pump = forwarded.pump(queue, batch=BATCH, slot_keyed=True, rule="start-to-finish")
    fired = [o for chunk in forward(pump, 50, step_ms=STEP, per_call=12) for o in chunk]
    # The first tick sweeps gone (due at 08:59) and fires a0-a2, the second a3 (and a0-a2 again,
    # as slots already enqueued): then a0-a3 fill every batch, each a replay.
    assert [(o.name, o.fired_at_ms) for o in fired] == [("a0", at(0)), ("a1", at(0)), ("a2", at(0)), ("a3", at(1.5))]
    assert {o.job_id for o in fired} == {f"a{i}:{START_MS}" for i in range(4)}

    stepped, clock = populated(lab, other)
    pump = stepped.pump(other, batch=BATCH, slot_keyed=True, rule="start-to-finish")
    ticked = []
    while clock.now_ms() < forwarded.clock.now_ms():
        ticked += pump.tick()
        clock.advance(STEP)
    assert ticked == fired
    assert_same_queues(forwarded, queue, stepped, other)


def test_forward_counts_only_new_jobs_so_replayed_slots_never_end_it_early(
    lab: emq_lab.Lab, queue: str, other: str
) -> None:
    # Slot ids: the jobs of 09:00 to 09:04 are stored, then the row is registered anew at 09:00 (a
    # replay). Its first five ticks only meet their own jobs; forward goes on to three new ones.
    def replayed(q: str) -> tuple[emq_lab.Lab, SimClock]:
        first = lab.with_clock(SimClock(START))
        first.repeat(q).register("n", MIN, "t")
        for _ in range(5):
            first.pump(q, slot_keyed=True).tick()
            first.clock.advance(MIN)  # type: ignore[attr-defined]
        clock = SimClock(START)  # back at 09:00
        again = lab.with_clock(clock)
        again.repeat(q).cancel("n")
        again.repeat(q).register("n", MIN, "t")
        return again, clock

    forwarded, _ = replayed(queue)
    fired = [o for chunk in forward(forwarded.pump(queue, slot_keyed=True), 3, step_ms=MIN, per_call=3) for o in chunk]
    assert [o.job_id for o in fired] == [f"n:{at(minute)}" for minute in (5, 6, 7)]
    stepped, clock = replayed(other)
    ticked = [o for chunk in by_ticks(stepped.pump(other, slot_keyed=True), clock, 3, MIN) for o in chunk]
    assert ticked == fired
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
    (chunk,) = forward(pump, occurrences, step_ms=STEP, finish_ms=finish, per_call=occurrences)
    assert chunk == expected
    assert_same_queues(forwarded, queue, stepped, other)
    assert len({(o.name, o.slot_ms) for o in chunk}) == len(chunk)  # each slot fired once


def test_forward_with_a_finish_fires_the_same_however_many_calls_it_takes(
    lab: emq_lab.Lab, queue: str, other: str
) -> None:
    occurrences, finish = 30, 4 * MIN
    one, _ = populated(lab, other)
    (in_one,) = forward(
        one.pump(other, batch=BATCH, rule="start-to-finish"),
        occurrences,
        step_ms=STEP,
        finish_ms=finish,
        per_call=occurrences,
    )
    many, _ = populated(lab, queue)
    pump = many.pump(queue, batch=BATCH, rule="start-to-finish")
    in_many = [o for chunk in forward(pump, occurrences, step_ms=STEP, finish_ms=finish, per_call=7) for o in chunk]
    assert [(o.name, o.slot_ms, o.fired_at_ms) for o in in_many] == [(o.name, o.slot_ms, o.fired_at_ms) for o in in_one]
    assert many.repeat(queue).entries() == one.repeat(other).entries()


# -- forward stops, or refuses --------------------------------------------------------------


@pytest.mark.parametrize("step_ms", [MIN, 0])
def test_forward_stops_when_nothing_is_registered(lab: emq_lab.Lab, queue: str, step_ms: int) -> None:
    clock = SimClock(START)
    pump = lab.with_clock(clock).pump(queue)
    many = scripts.MAX_WANT + 1  # more than one ticks.lua call may want: forward asks for at most MAX_WANT
    assert list(forward(pump, many, step_ms=step_ms, per_call=many)) == [[]]
    assert clock.now_ms() == START_MS  # no tick was taken
    assert snapshot(lab, queue) == {}
    # Only a member whose record is gone: the first tick sweeps it, then nothing is registered.
    lab.repeat(queue).register("gone", MIN, "t")
    lab.client.delete(lab.keyspace(queue).record("gone"))
    assert list(forward(pump, 1000, step_ms=step_ms)) == [[]]
    assert lab.repeat(queue).entries() == []
    assert clock.now_ms() == START_MS + step_ms  # the tick after the one that swept it


@pytest.mark.parametrize("step_ms", [MIN, 0])
def test_forward_stops_when_its_only_row_is_cancelled_mid_way(lab: emq_lab.Lab, queue: str, step_ms: int) -> None:
    clock = SimClock(START)
    timed = lab.with_clock(clock)
    timed.repeat(queue).register("report", MIN, "t")
    run = forward(timed.pump(queue), 1000, step_ms=step_ms, per_call=3)
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
        next(forward(timed.pump(queue, **made), 10, **call))
    assert snapshot(lab, queue) == before
    assert clock.now_ms() == START_MS


def test_forward_refuses_a_negative_finish_naming_the_field(lab: emq_lab.Lab, queue: str) -> None:
    timed = lab.with_clock(SimClock(START))
    timed.repeat(queue).register("a", MIN, "t")
    before = snapshot(lab, queue)
    try:
        with pytest.raises(ValueError, match="^finish_ms:"):
            next(forward(timed.pump(queue, rule="start-to-finish"), 10, step_ms=MIN, finish_ms=-1))
    finally:
        assert snapshot(lab, queue) == before  # refused by one side or the other, never written


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda lab: lab.with_clock(SystemClock()), "clock"),
    ],
    ids=["system-clock"],  # a learner's scripts it runs: test_forward_scripts.py
)
def test_forward_refuses_a_lab_it_cannot_run_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, make: Callable[[emq_lab.Lab], emq_lab.Lab], field: str
) -> None:
    lab.repeat(queue).register_many([("a", MIN, "t"), ("b", MIN, "t")])
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match=f"^{field}:"):
        next(forward(make(lab).pump(queue), 10, step_ms=MIN))
    assert snapshot(lab, queue) == before
    assert lab.clock.now_ms() == START_MS


# -- ticks.lua called raw ----------------------------------------------------------------------

GOOD = ["{now}", MIN, 10, 100, 5, "fresh", "start-to-start", ""]
MALFORMED: list[Any] = [
    pytest.param({0: "soon"}, "now_ms must be an integer", id="now_ms-text"),
    pytest.param({0: "1.5"}, "now_ms must be an integer", id="now_ms-fraction"),
    pytest.param({0: "12345678901234567"}, "now_ms must be an integer", id="now_ms-17-digits"),
    pytest.param({0: ""}, "now_ms must be an integer", id="now_ms-empty"),
    pytest.param({1: "-1"}, "tick_ms must be an integer >= 0", id="tick_ms-negative"),
    pytest.param({1: "1m"}, "tick_ms must be an integer >= 0", id="tick_ms-text"),
    pytest.param({2: "0"}, "batch must be an integer from 1 to 1000", id="batch-0"),
    pytest.param({2: "1001"}, "batch must be an integer from 1 to 1000", id="batch-over"),
    pytest.param({2: "100000"}, "batch must be an integer from 1 to 1000", id="batch-100000"),
    pytest.param({2: "1e3"}, "batch must be an integer from 1 to 1000", id="batch-1e3"),
    pytest.param({3: "0"}, "reads must be an integer from 1 to 10000", id="reads-0"),
    pytest.param({3: "10001"}, "reads must be an integer from 1 to 10000", id="reads-over"),
    pytest.param({4: "0"}, "want must be an integer from 1 to 10000", id="want-0"),
    pytest.param({4: "1000000000"}, "want must be an integer from 1 to 10000", id="want-over"),
    pytest.param({4: "all"}, "want must be an integer from 1 to 10000", id="want-text"),
    pytest.param({5: "mine"}, 'ids must be "fresh" or "slot"', id="ids"),
    pytest.param({6: "grid"}, "rule must be", id="rule"),
    pytest.param({7: "5"}, "finish must be", id="finish-not-start-to-finish"),
    pytest.param({6: "start-to-finish", 7: "-5"}, "finish must be", id="finish-negative"),
    pytest.param({6: "start-to-finish", 7: "4m"}, "finish must be", id="finish-text"),
    pytest.param({7: None}, "finish must be", id="finish-missing"),
]


def keys_of(lab: emq_lab.Lab, queue: str) -> list[str]:
    k = lab.keyspace(queue)
    return [k.registry, k.counter, k.wait, k.job_prefix]


@pytest.mark.parametrize(("changed", "says"), MALFORMED)
def test_a_malformed_ticks_call_names_the_problem_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, changed: dict[int, Any], says: str
) -> None:
    lab.repeat(queue).register_many([("a", MIN, "t"), ("b", MIN, "t")])
    now = lab.clock.now_ms()
    good: list[Any] = [now if v == "{now}" else v for v in GOOD]
    args = list(good)
    for index, value in changed.items():
        args[index] = value
    args = [each for each in args if each is not None]
    before = snapshot(lab, queue)
    with pytest.raises(redis.ResponseError, match=f"^emq ticks: .*{re.escape(says)}"):
        lab.scripts.ticks(keys=keys_of(lab, queue), args=args)
    assert snapshot(lab, queue) == before
    done = scripts.ticked(lab.scripts.ticks(keys=keys_of(lab, queue), args=good))
    assert [(row.name, row.enqueued) for row in done.rows[:2]] == [("a", Outcome.ENQUEUED), ("b", Outcome.ENQUEUED)]


def same_slot(queue: str) -> str:
    """Another queue whose keys hash to the slot of ``queue``'s (so a cluster runs the call and
    the script itself must refuse it)."""
    target = slot(QueueKeys(queue).registry)
    # CRC16 over "<queue>-<i>" is not uniform: some queue names need past 100,000 of them (t103:
    # 127,978). Queues t0 to t2999 all find one, the farthest in half a second.
    for i in range(10_000_000):
        if slot(QueueKeys(q := f"{queue}-{i}").registry) == target:
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
        args: list[Any] = [lab.clock.now_ms(), MIN, 10, 100, 5, "fresh", "start-to-start", ""]
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
    assert [o.name for o in pump.tick()] == ["a", "b"]
    assert [len(chunk) for chunk in forward(pump, 6, step_ms=15 * MIN, per_call=4)] == [4, 2]
    assert timed.jobs(queue).count() == 8


DAY = 24 * 60 * MIN
ROWS_A_CALL = 5000  # ticks.lua's MAX_ROWS: the registry rows one call reads (a tick reads its batch, due or not)


def test_forward_splits_a_large_class_of_due_rows_into_calls_within_the_bounds(
    lab: emq_lab.Lab, queue: str, other: str
) -> None:
    """B1: one ticks.lua call reads at most 5000 registry rows, so at the pump's batch of 100 it
    takes at most 50 ticks, whatever it wants. A row due every minute, and a class larger than a
    batch (101 names) due at 09:49, the 50th tick: the first call stops after that tick with two of
    the class still due, and the next takes them up at 09:50. Call after call, forward fires what
    the ticks fire."""
    stepped = lab.with_clock(SimClock(START))
    pump = stepped.pump(other)
    ticks_a_call = ROWS_A_CALL // pump.batch
    klass = [(f"n{i:03d}", DAY, "t", (ticks_a_call - 1) * MIN) for i in range(pump.batch + 1)]
    occurrences = len(klass) + 2 * ticks_a_call + ticks_a_call // 2  # into a third call: per_call does not cut them
    for timed, name in ((stepped, other), (lab.with_clock(SimClock(START)), queue)):
        timed.repeat(name).register("every-minute", MIN, "t")
        timed.repeat(name).register_many(klass)
    clock = stepped.clock
    assert isinstance(clock, SimClock)
    expected = [o for fired in by_ticks(pump, clock, occurrences, MIN) for o in fired]

    forwarded = lab.with_clock(SimClock(START))
    chunks = list(forward(forwarded.pump(queue), occurrences, step_ms=MIN, per_call=occurrences))

    assert [o for chunk in chunks for o in chunk] == expected
    assert len(chunks) >= 3
    assert all(len({o.fired_at_ms for o in chunk}) <= ticks_a_call for chunk in chunks)
    names = {name for name, *_ in klass}
    assert names & {o.name for o in chunks[0]} and names & {o.name for o in chunks[1]}  # the class spans two calls
    assert any(o.fired_at_ms > o.slot_ms for o in chunks[1])  # its rest fired a tick late, as the ticks fire it
    assert_same_queues(forwarded, queue, stepped, other)


def test_ticks_stops_inside_a_tick_at_its_byte_bound_and_the_next_call_goes_on(lab: emq_lab.Lab, queue: str) -> None:
    """Templates of 60 KiB: a call copies about 4 MiB of them into jobs, then stops inside the
    tick; the next call takes up the same tick, so every name fires once, at that tick's now."""
    rep = lab.with_clock(SimClock(START)).repeat(queue)
    rep.register_many([(f"n{i:03d}", 30 * MIN, "x" * 60 * 1024) for i in range(200)])
    pump = lab.with_clock(SimClock(START)).pump(queue, batch=scripts.MAX_BATCH)
    chunks = list(forward(pump, 200, step_ms=MIN))
    fired = [o for chunk in chunks for o in chunk]
    assert len(chunks) >= 3  # about 68 rows a call
    assert sorted(o.name for o in fired) == [f"n{i:03d}" for i in range(200)]
    assert {o.fired_at_ms for o in fired} == {START_MS}


def test_the_stock_scripts_refuse_work_past_their_bounds(lab: emq_lab.Lab, queue: str) -> None:
    k = lab.keyspace(queue)
    with pytest.raises(ValueError, match="^batch: at most 1000 rows a tick"):
        lab.pump(queue, batch=scripts.MAX_BATCH + 1)
    big = "x" * (64 * 1024 + 1)
    with pytest.raises(redis.ResponseError, match="template must be text of at most 65536 bytes"):
        lab.scripts.register(keys=[k.registry, k.record("a")], args=["a", MIN, big, 0])
    with pytest.raises(redis.ResponseError, match="template must be at most 65536 bytes"):
        lab.scripts.register_many(keys=[k.registry, k.record("a")], args=[MIN, big, 0, "a"])
    with pytest.raises(redis.ResponseError, match="names times its size at most 4194304"):
        many = [f"m{i}" for i in range(100)]
        args = [MIN, "x" * 50_000, 0, *many]
        lab.scripts.register_many(keys=[k.registry, *(k.record(m) for m in many)], args=args)
    with pytest.raises(redis.ResponseError, match="template must be text of at most 65536 bytes"):
        lab.scripts.enqueue(keys=[k.counter, k.wait, k.job_prefix], args=["", "a", 0, big])
    assert lab.keys(queue) == []
    # what the API sends stays within them: 500 names of 60 KiB go in calls of at most 4 MiB
    outcomes = lab.repeat(queue).register_many([(f"n{i}", MIN, "y" * 60 * 1024) for i in range(500)])
    assert outcomes == [Outcome.REGISTERED] * 500
