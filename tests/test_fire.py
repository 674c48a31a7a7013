"""fire.lua and the drain on it: a batch's enqueues and advances in one script call, running the
very functions of enqueue.lua and advance.lua (lib/). ``drain`` fires what a loop of ``tick``
fires, a malformed batch writes nothing, one round trip and one script call a batch. On every
backend."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from helpers import MIN, snapshot

import emq_lab
from emq_lab import Outcome, scripts
from emq_lab.clock import hhmm
from emq_lab.scripts import Fired, header, source

BATCH = 40


def registered(lab: emq_lab.Lab, queue: str) -> emq_lab.Lab:
    """A queue of every kind of row a batch meets: many due names over several batches (two
    templates, two periods), names not due yet, and a dangling member whose record is gone."""
    rep = lab.repeat(queue)
    rep.register_many([(f"n{i:03d}", 15 * MIN, f"t{i % 2}") for i in range(3 * BATCH + 7)])
    rep.register_many([(f"h{i}", 60 * MIN, "hourly") for i in range(5)])
    rep.register_many([(f"later{i}", 15 * MIN, "t", 5 * MIN) for i in range(3)])
    rep.register("dangling", 15 * MIN, "t")
    lab.client.delete(lab.keyspace(queue).record("dangling"))
    return lab


def renamed(dump: dict[str, object], queue: str) -> dict[str, object]:
    """A snapshot with the queue's hash tag taken out, so two queues' snapshots compare."""
    return {key.replace(f"{{{queue}}}", "{q}"): value for key, value in dump.items()}


@pytest.mark.parametrize("slot_keyed", [False, True], ids=["fresh-ids", "slot-ids"])
@pytest.mark.parametrize("rule", ["start-to-start", "fixed grid"])
@pytest.mark.parametrize("per_call", [1000, BATCH], ids=["one-call", "a-call-a-batch"])
def test_drain_fires_what_a_loop_of_tick_fires(
    lab: emq_lab.Lab, queue: str, slot_keyed: bool, rule: str, per_call: int
) -> None:
    # A call a batch on a server: two calls out at once (start-to-start), in the order of a loop.
    loop_queue = f"{queue}-loop"
    try:
        registered(lab, queue)
        registered(lab, loop_queue)
        lab.clock.advance(minutes=2)  # type: ignore[attr-defined]  # late: the grid skips forward

        loop_pump = lab.pump(loop_queue, batch=BATCH, slot_keyed=slot_keyed, rule=rule)
        by_loop = []
        for _ in range(10):
            fired = loop_pump.tick()
            by_loop += fired
            if not fired:
                break
        drain_pump = lab.pump(queue, batch=BATCH, slot_keyed=slot_keyed, rule=rule)
        by_drain = drain_pump.drain(per_call=per_call)

        assert [(o.job_id, o.name, o.fired_at_ms) for o in by_drain] == [
            (o.job_id, o.name, o.fired_at_ms) for o in by_loop
        ]
        assert len(by_drain) == 3 * BATCH + 7 + 5
        assert renamed(snapshot(lab, queue), queue) == renamed(snapshot(lab, loop_queue), loop_queue)
        assert "dangling" not in dict(lab.repeat(queue).entries())  # swept
        assert lab.repeat(queue).due() == []
    finally:
        lab.reset(loop_queue)


def test_drain_reports_the_last_batchs_advances_as_tick_does(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register_many([("a", 15 * MIN, "t"), ("b", 15 * MIN, "t")])
    rep.register("gone", 15 * MIN, "t")
    lab.client.delete(lab.keyspace(queue).record("gone"))
    pump = lab.pump(queue, batch=10)
    assert [o.name for o in pump.drain()] == ["a", "b"]
    assert sorted(pump.advanced) == [("a", Outcome.ADVANCED), ("b", Outcome.ADVANCED), ("gone", Outcome.ABSENT)]


def test_drain_under_start_to_finish_fires_and_leaves_the_rows_as_a_tick_does(lab: emq_lab.Lab, queue: str) -> None:
    loop_queue = f"{queue}-loop"
    try:
        registered(lab, queue)
        registered(lab, loop_queue)
        batch = 4 * BATCH  # one batch: a row left for its finish stays due, so drain stops after it
        ticked = lab.pump(loop_queue, batch=batch, rule="start-to-finish")
        by_tick = ticked.tick()
        drained = lab.pump(queue, batch=batch, rule="start-to-finish")
        by_drain = drained.drain()
        assert [(o.job_id, o.name) for o in by_drain] == [(o.job_id, o.name) for o in by_tick]
        assert drained.advanced == ticked.advanced == [("dangling", Outcome.ABSENT)]  # only the sweep
        assert renamed(snapshot(lab, queue), queue) == renamed(snapshot(lab, loop_queue), loop_queue)
        assert len(lab.repeat(queue).due(limit=1000)) == 3 * BATCH + 7 + 5  # every live row left due
    finally:
        lab.reset(loop_queue)


def test_a_stale_batch_enqueues_what_it_read_and_leaves_a_fresh_registration_alone(
    lab: emq_lab.Lab, queue: str
) -> None:
    # The tick's race, on fire.lua: the batch was read, then report was cancelled and registered
    # again (every 60 min, first run 09:30) before the batch's one call landed.
    rep, k, now = lab.repeat(queue), lab.keyspace(queue), lab.clock.now_ms()
    rep.register_many([("report", 15 * MIN, "t"), ("other", 15 * MIN, "o")])
    rows = scripts.due(lab.client, lab.scripts, k, now, 100)
    assert rep.cancel("report") is Outcome.CANCELLED
    assert rep.register("report", 60 * MIN, "new", first_in_ms=30 * MIN) is Outcome.REGISTERED
    fired = scripts.fire(lab.client, lab.scripts, k, now, [(row, now + 15 * MIN) for row in rows])
    assert fired == [  # in the read's order: same score, so by name
        Fired("other", Outcome.ENQUEUED, "JOB-000001", Outcome.ADVANCED),
        Fired("report", Outcome.ENQUEUED, "JOB-000002", Outcome.MOVED),  # what the read held still fires
    ]
    assert [(name, hhmm(ms)) for name, ms in rep.entries()] == [("other", "09:15"), ("report", "09:30")]
    assert lab.client.hget(k.job("JOB-000002"), "template") == "t"  # the template read, as enqueue.lua


def test_the_same_race_through_the_phases_leaves_the_same_keys(lab: emq_lab.Lab, queue: str) -> None:
    phased = f"{queue}-phases"
    try:
        for q in (queue, phased):
            lab.repeat(q).register_many([("report", 15 * MIN, "t"), ("other", 15 * MIN, "o")])
        now = lab.clock.now_ms()

        def race(q: str) -> None:
            lab.repeat(q).cancel("report")
            lab.repeat(q).register("report", 60 * MIN, "new", first_in_ms=30 * MIN)

        tick = lab.pump(phased).begin()
        tick.read()
        race(phased)
        tick.enqueue()
        tick.advance()

        k = lab.keyspace(queue)
        rows = scripts.due(lab.client, lab.scripts, k, now, 100)
        race(queue)
        fired = scripts.fire(lab.client, lab.scripts, k, now, [(row, tick.next_run(row)) for row in rows])
        assert sorted((f.name, f.advanced) for f in fired) == sorted(tick.advanced)
        assert renamed(snapshot(lab, queue), queue) == renamed(snapshot(lab, phased), phased)
    finally:
        lab.reset(phased)


def _row(name: str, read_ms: Any, every: Any, template: Any, next_ms: Any) -> list[Any]:
    return [name, read_ms, every, template, next_ms]


BAD_ROWS = [
    pytest.param(_row("b", "{now}", "0", "t", "{next}"), "read_every", id="read_every-0"),
    pytest.param(_row("b", "{now}", "15m", "t", "{next}"), "read_every", id="read_every-text"),
    pytest.param(_row("b", "{now}", "{every}", "t", "later"), "next_ms", id="next_ms-text"),
    pytest.param(_row("b", "{now}", "{every}", "t", "1.5"), "next_ms", id="next_ms-fraction"),
    pytest.param(_row("b", "{now}", "{every}", "t", "99999999999999999"), "next_ms", id="next_ms-17-digits"),
    pytest.param(_row("b", "", "{every}", "t", "{next}"), "read_ms", id="read_ms-empty"),
    pytest.param(_row("b", "soon", "{every}", "t", "{next}"), "read_ms", id="read_ms-text"),
    pytest.param(_row("", "{now}", "{every}", "t", "{next}"), "name", id="name-empty"),
    pytest.param(_row("b", "{now}", "", "t", "{next}"), "record was gone", id="gone-with-template"),
    pytest.param(_row("b", "{now}", "", "", ""), "record was gone", id="gone-left-alone"),
]


@pytest.mark.parametrize(("bad", "says"), BAD_ROWS)
def test_one_malformed_row_among_good_ones_writes_nothing(
    lab: emq_lab.Lab, queue: str, bad: list[Any], says: str
) -> None:
    rep, k, now = lab.repeat(queue), lab.keyspace(queue), lab.clock.now_ms()
    rep.register_many([("a", 15 * MIN, "t"), ("b", 15 * MIN, "t"), ("c", 15 * MIN, "t")])
    values = {"{now}": now, "{every}": 15 * MIN, "{next}": now + 15 * MIN}
    good = [_row(n, now, 15 * MIN, "t", now + 15 * MIN) for n in ("a", "c")]
    rows = [good[0], [values.get(str(v), v) for v in bad], good[1]]
    before = snapshot(lab, queue)
    keys = [k.registry, k.counter, k.wait, k.job_prefix]
    with pytest.raises(redis.ResponseError, match=f"emq fire: row 2: .*{says}"):
        lab.scripts.fire(keys=keys, args=[now, "fresh", *(v for row in rows for v in row)])
    assert snapshot(lab, queue) == before  # not even row 1, which came before the bad one
    reply = lab.scripts.fire(keys=keys, args=[now, "fresh", *(v for row in good for v in row)])
    assert reply == ["1111", "JOB-000001", "JOB-000002"]  # the good rows alone fire


BAD_CALLS = [
    pytest.param(lambda k: [k.registry, k.counter, k.wait, k.job_prefix], ["soon", "fresh"], "fired_at", id="fired_at"),
    pytest.param(lambda k: [k.registry, k.counter, k.wait, k.job_prefix], ["{now}", "mine"], "ids", id="ids"),
    pytest.param(lambda k: [k.registry, k.counter, k.wait, k.job_prefix], ["{now}"], "five entries", id="no-ids"),
    pytest.param(lambda k: [k.wait, k.counter, k.wait, k.job_prefix], ["{now}", "fresh"], "KEYS", id="keys"),
    pytest.param(lambda k: [k.registry, k.registry, k.wait, k.job_prefix], ["{now}", "fresh"], "KEYS", id="counter"),
]


@pytest.mark.parametrize(("keyset", "head", "says"), BAD_CALLS)
def test_a_malformed_call_writes_nothing(lab: emq_lab.Lab, queue: str, keyset: Any, head: list[Any], says: str) -> None:
    rep, k, now = lab.repeat(queue), lab.keyspace(queue), lab.clock.now_ms()
    rep.register_many([("a", 15 * MIN, "t"), ("b", 15 * MIN, "t")])
    rows = [_row(n, now, 15 * MIN, "t", now + 15 * MIN) for n in ("a", "b")]
    args = [now if v == "{now}" else v for v in head]
    if len(head) == 1:
        rows = [rows[0][:3]]  # and a short row
    before = snapshot(lab, queue)
    with pytest.raises(redis.ResponseError, match=f"emq fire: .*{says}"):
        lab.scripts.fire(keys=keyset(k), args=[*args, *(v for row in rows for v in row)])
    assert snapshot(lab, queue) == before


@pytest.mark.parametrize(
    ("rule", "trips", "script"),
    [
        ("start-to-start", 3, "ticks"),  # each call reads and fires a batch (100, 100, 50)
        ("fixed grid", 3, "ticks"),
        (lambda now, every: now + every, 1 + 3, "fire"),  # the first read, then one a batch (the next read behind it)
    ],
    ids=["start-to-start", "grid", "a-function"],
)
def test_drain_costs_one_round_trip_and_one_script_call_a_batch(
    lab: emq_lab.Lab,
    queue: str,
    round_trips: list[int],
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
    trips: int,
    script: str,
) -> None:
    rep = lab.repeat(queue)
    rep.register_many([(f"n{i:04d}", 15 * MIN, "t") for i in range(250)])
    pump = lab.pump(queue, batch=100, rule=rule)
    lab.pump(f"{queue}-warm").tick()  # the lab's first batch loads the scripts
    calls = {"ticks": 0, "fire": 0, "enqueue": 0, "advance": 0}
    for verb in calls:
        real = getattr(scripts, verb)

        def counted(*args: Any, _verb: str = verb, _real: Any = real, **kwargs: Any) -> Any:
            calls[_verb] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(scripts, verb, counted)
    round_trips[0] = 0
    assert len(pump.drain(per_call=100)) == 250  # ticks.lua: a batch a call (the fire.lua path always is)
    assert round_trips[0] == trips
    assert calls == {"ticks": 0, "fire": 0, "enqueue": 0, "advance": 0} | {script: 3}


def test_a_lab_with_a_learners_advance_drains_through_it(lab: emq_lab.Lab, queue: str) -> None:
    learner = lab.with_scripts(advance="return 2")  # a script that never moves a row (run in the sandbox)
    rep = learner.repeat(queue)
    try:
        rep.register_many([("a", 15 * MIN, "t"), ("b", 15 * MIN, "t")])
        pump = learner.pump(queue, batch=10)
        assert [o.job_id for o in pump.drain()] == ["JOB-000001", "JOB-000002"]
        assert pump.advanced == [("a", Outcome.MOVED), ("b", Outcome.MOVED)]  # the learner's script answered
        assert [due.name for due in rep.due()] == ["a", "b"]  # left where they were
    finally:
        learner.reset(queue)


def test_the_four_scripts_that_enqueue_or_advance_run_the_same_shared_functions() -> None:
    enqueue_lib, advance_lib = source("lib/enqueue"), source("lib/advance")
    assert enqueue_lib in source("enqueue") and advance_lib in source("advance")
    for batched in ("fire", "ticks"):
        assert enqueue_lib in source(batched) and advance_lib in source(batched)
    assert not any("@include" in source(name) for name in ("enqueue", "advance", "fire", "ticks"))
    four_keys = [("KEYS[1]", "registry"), ("KEYS[2]", "counter"), ("KEYS[3]", "wait"), ("KEYS[4]", "jobs")]
    head = header("fire")
    assert [(s.slot, s.name) for s in head.keys] == four_keys
    assert [s.name for s in head.argv] == ["fired_at", "ids"]
    assert head.purpose.startswith("fire: ") and any("Outcome.MOVED" in line for line in head.returns)
    head = header("ticks")  # the order scripts.ticks() sends them in
    assert [(s.slot, s.name) for s in head.keys] == four_keys
    assert [s.name for s in head.argv] == [
        "mode",
        "now_ms",
        "tick_ms",
        "batch",
        "reads",
        "want",
        "ids",
        "rule",
        "finish",
    ]
    assert head.purpose.startswith("ticks: ") and any("error reply" in line for line in head.returns)
    with pytest.raises(ValueError, match="no KEYS"):
        header("lib/advance")


def test_a_classrooms_acl_allows_every_command_of_every_script_as_loaded() -> None:
    from emq_lab.classroom import _CALL, ALLOWED_COMMANDS
    from emq_lab.scripts import NAMES

    def called(name: str) -> set[str]:
        return {m.lower() for m in _CALL.findall(source(name))}

    every = set().union(*(called(name) for name in NAMES.values()))
    assert {"incr", "lpush", "hget", "zscore"} <= every  # lib/'s, through the includes
    assert every <= set(ALLOWED_COMMANDS)
    # ticks.lua reads the registry itself (its rows, then each record) besides lib/'s calls.
    assert {"zrange", "hmget", "zadd", "zrem", "exists", "incr", "hset", "lpush"} <= called("ticks")
    # Each call is a literal command name, which _CALL finds: as many calls as it found.
    for name in ("ticks", "fire"):
        assert source(name).count("redis.call(") == len(_CALL.findall(source(name)))
