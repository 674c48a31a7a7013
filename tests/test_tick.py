"""The tick redesigned: phases, the compare-and-set advance, round trips that do not grow with N,
drain and register_many, ids minted in the script, and integer clocks. On every backend."""

from __future__ import annotations

import pytest
import redis
from helpers import MIN, RoundTrips

import emq_lab
from emq_lab import Outcome, SimClock, scripts
from emq_lab.clock import hhmm


def test_a_stale_advance_leaves_a_fresh_registration_alone(lab: emq_lab.Lab, queue: str) -> None:
    # The scenario of the redesign: a tick reads report (every 15 min, due 09:00); before its
    # advance lands, report is cancelled and registered again (every 60 min, first run 09:30).
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    tick = lab.pump(queue).begin()
    assert [(row.name, hhmm(row.slot_ms)) for row in tick.read()] == [("report", "09:00")]
    assert rep.cancel("report") is Outcome.CANCELLED
    assert rep.register("report", 60 * MIN, "t", first_in_ms=30 * MIN) is Outcome.REGISTERED
    assert [o.name for o in tick.enqueue()] == ["report"]  # what the read held still fires
    assert tick.advance() == [("report", Outcome.MOVED)]
    assert tick.result.advanced == [("report", Outcome.MOVED)]
    assert [(name, hhmm(ms)) for name, ms in rep.entries()] == [("report", "09:30")]


def test_the_whole_tick_reports_a_moved_row(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    rep.register("other", 15 * MIN, "t")

    def reregister(tick: emq_lab.Tick) -> None:
        rep.cancel("report")
        rep.register("report", 60 * MIN, "t", first_in_ms=30 * MIN)

    result = lab.pump(queue).begin().run(after_enqueue=reregister)
    assert sorted(o.name for o in result.fired) == ["other", "report"]
    assert sorted(result.advanced) == [("other", Outcome.ADVANCED), ("report", Outcome.MOVED)]
    assert [(name, hhmm(ms)) for name, ms in rep.entries()] == [("other", "09:15"), ("report", "09:30")]


def test_phases_go_in_order_once(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", 15 * MIN, "t")
    tick = lab.pump(queue).begin()
    with pytest.raises(ValueError, match="take read first"):
        tick.enqueue()
    tick.read()
    with pytest.raises(ValueError, match="take enqueue first"):
        tick.advance()
    tick.enqueue()
    with pytest.raises(ValueError, match="enqueue: this tick already took it"):
        tick.enqueue()
    assert tick.advance() == [("report", Outcome.ADVANCED)]


@pytest.mark.parametrize("names", [10, 300])
def test_a_tick_costs_the_same_round_trips_for_any_number_of_names(
    round_trips: RoundTrips, queue: str, names: int
) -> None:
    lab = round_trips.lab
    rep = lab.repeat(queue)
    rep.register_many([(f"n{i:04d}", 15 * MIN, "t") for i in range(names)])
    pump = lab.pump(queue, batch=1000)
    lab.clock.advance(minutes=15)  # type: ignore[attr-defined]
    round_trips.start()
    assert len(pump.tick()) == names
    # the due read, then one pipeline of enqueues and advances (redis-py asks SCRIPT EXISTS first)
    assert round_trips.count == 3


def test_register_many_is_register_for_each_item(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    assert rep.register("b", MIN, "old") is Outcome.REGISTERED
    outcomes = rep.register_many([("a", MIN, "t"), ("b", 2 * MIN, "new"), ("c", MIN, "t", 5 * MIN)])
    assert outcomes == [Outcome.REGISTERED, Outcome.EXISTS, Outcome.REGISTERED]
    assert rep.record("b") == {"every_ms": str(MIN), "template": "old"}  # exists wrote nothing
    now = lab.clock.now_ms()
    assert rep.entries() == [("a", now), ("b", now), ("c", now + 5 * MIN)]
    assert rep.register_many([]) == []


def test_register_many_checks_every_item_before_writing(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    with pytest.raises(ValueError, match=r"items\[1\]: every_ms"):
        rep.register_many([("a", MIN, "t"), ("b", 0, "t")])
    with pytest.raises(ValueError, match=r"items\[0\]: expected \(name, every_ms"):
        rep.register_many(["abc"])  # type: ignore[list-item]
    assert rep.count() == 0 and lab.keys(queue) == []


def test_ids_are_minted_in_the_script_and_a_refused_call_burns_none(lab: emq_lab.Lab, queue: str) -> None:
    def enqueue(name: str, fired_at_ms: int, template: str, *, job_id: str | None = None) -> tuple[Outcome, str]:
        call = scripts.enqueue(lab.keyspace(queue), name, fired_at_ms, template, job_id)
        return scripts.enqueued(scripts.send(lab.scripts, call, lab.client))

    assert enqueue("report", 1, "t") == (Outcome.ENQUEUED, "JOB-000001")
    k = lab.keyspace(queue)
    with pytest.raises(Exception, match="fired_at_ms must be an integer"):
        lab.scripts.enqueue(keys=[k.counter, k.wait, k.job_prefix], args=["", "report", "1.5", "t"])
    with pytest.raises(Exception, match="job_id must be empty"):
        enqueue("report", 1, "t", job_id="other:5")
    assert enqueue("report", 2, "t") == (Outcome.ENQUEUED, "JOB-000002")
    assert enqueue("report", 3, "t", job_id="report:900") == (Outcome.ENQUEUED, "report:900")
    assert enqueue("report", 4, "t", job_id="report:900") == (Outcome.DUPLICATE, "report:900")
    assert lab.jobs(queue).browse() == ["report:900", "JOB-000002", "JOB-000001"]


def test_a_malformed_register_on_a_live_name_is_an_error_not_exists(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", MIN, "t")
    k = lab.keyspace(queue)
    for every in ("1e3", "5.0", "0x10", "0", "315360000001"):  # (the contrast scripts check nothing)
        before = lab.client.hgetall(k.record("report"))
        with pytest.raises(Exception, match="every_ms must be an integer from 1 to 315360000000"):
            lab.scripts.register(keys=[k.registry, k.record("report")], args=["report", every, "t", 1])
        assert lab.client.hgetall(k.record("report")) == before


def test_a_rule_function_runs_through_the_pump(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", 15 * MIN, "t")
    pump = lab.pump(queue, rule=lambda release, every: release + 2 * every)
    pump.tick()
    assert [hhmm(ms) for _, ms in lab.repeat(queue).entries()] == ["09:30"]


def test_a_rule_that_answers_no_whole_ms_writes_nothing(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", 15 * MIN, "t")
    pump = lab.pump(queue, rule=lambda release, every: release + every / 7)
    with pytest.raises(ValueError, match="rule: the next run"):
        pump.tick()
    assert lab.jobs(queue).count() == 0  # checked before the enqueue: no job without its advance


def test_a_float_step_of_whole_ms_keeps_an_int_clock(lab: emq_lab.Lab, queue: str) -> None:
    clock = lab.clock
    assert isinstance(clock, SimClock)
    clock.advance(60_000 / 4)
    assert type(clock.now_ms()) is int
    rep = lab.repeat(queue)
    assert rep.register("report", MIN, "t") is Outcome.REGISTERED
    assert len(lab.pump(queue).tick()) == 1
    lab.pump(queue).tick()
    assert lab.jobs(queue).count() == 1  # the second tick had nothing due: no double job


def test_the_clock_refuses_what_it_cannot_keep() -> None:
    clock = SimClock("2026-01-05T09:00:00Z")
    with pytest.raises(ValueError, match="ms: 0.5 is not a whole number"):
        clock.advance(0.5)
    with pytest.raises(ValueError, match="seconds: 0.0001 is not a whole number|seconds: 0.1"):
        clock.advance(seconds=0.0001)
    with pytest.raises(ValueError, match="start: .* outside"):
        SimClock(10**17)
    with pytest.raises(ValueError, match="start: .* outside"):
        SimClock(-(10**15))
    assert clock.advance(minutes=0.5) - clock.start_ms == 30_000


def test_a_registration_made_anew_at_the_same_score_with_another_period_is_moved(lab: emq_lab.Lab, queue: str) -> None:
    # The same first run, another period: the score alone cannot tell, the period can.
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    tick = lab.pump(queue).begin()
    tick.read()
    rep.cancel("report")
    rep.register("report", 60 * MIN, "t")
    tick.enqueue()
    assert tick.advance() == [("report", Outcome.MOVED)]
    lab.clock.advance(minutes=1)  # type: ignore[attr-defined]
    lab.pump(queue).tick()  # the new registration, due since 09:00, fires by its own period
    assert [(name, hhmm(ms)) for name, ms in rep.entries()] == [("report", "10:01")]


def test_a_fault_names_the_batch_in_doubt_next_to_what_was_fired(lab: emq_lab.Lab, queue: str) -> None:
    # An enqueue that fails for n4 (a copy of the stock script): the second tick's pipeline
    # (n3, n4, n5) answers with an error. The drain raises it carrying the first tick's jobs
    # (.fired) and the three names whose enqueue was in that pipeline (.in_doubt): n3 and n5 ran.
    failing = "if ARGV[2] == 'n4' then return redis.error_reply('ERR a fault') end\n" + scripts.source("enqueue")
    mine = emq_lab.Lab(lab.client, lab.clock, "mine", scripts=lab.scripts.replacing(lab.client, enqueue=failing))
    mine.repeat(queue).register_many([(f"n{i}", 15 * MIN, "t") for i in range(7)])
    try:
        with pytest.raises(redis.ResponseError, match="a fault") as caught:
            mine.pump(queue, batch=3).drain()
        stored = {mine.jobs(queue).get(job_id)["name"] for job_id in mine.jobs(queue).browse()}
    finally:
        mine.reset(queue)
    assert [o.name for o in caught.value.fired] == ["n0", "n1", "n2"]  # type: ignore[attr-defined]
    assert caught.value.in_doubt == ["n3", "n4", "n5"]  # type: ignore[attr-defined]
    assert stored == {"n0", "n1", "n2", "n3", "n5"}  # in doubt: two of the three ran
    assert any(".in_doubt" in note for note in caught.value.__notes__)
