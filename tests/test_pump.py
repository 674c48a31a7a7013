"""The pump and the jobs it produces, on both backends."""

from __future__ import annotations

import threading
import time

import pytest
import redis
from helpers import MIN, START

import emq_lab
from emq_lab import Occurrence, Outcome
from emq_lab.backend import embedded_client, embedded_server
from emq_lab.keys import QueueKeys


def test_two_ticks_mint_two_ids_newest_first(lab: emq_lab.Lab, queue: str) -> None:
    rep, pump, jobs = lab.repeat(queue), lab.pump(queue), lab.jobs(queue)
    rep.register("report", 15 * MIN, '{"r": 1}')
    start = lab.clock.now_ms()
    first = pump.tick()
    lab.clock.advance(minutes=15)
    second = pump.tick()
    assert first == [Occurrence("JOB-000001", "report", start, start)]
    assert second == [Occurrence("JOB-000002", "report", start + 15 * MIN, start + 15 * MIN)]
    assert jobs.browse() == ["JOB-000002", "JOB-000001"]
    assert jobs.get("JOB-000001") == {
        "id": "JOB-000001",
        "name": "report",
        "fired_at_ms": str(start),
        "template": '{"r": 1}',
    }
    assert rep.entries() == [("report", start + 30 * MIN)]


def test_a_tick_before_the_next_run_fires_nothing(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", 15 * MIN, "t")
    pump = lab.pump(queue)
    assert len(pump.tick()) == 1
    lab.clock.advance(minutes=14)
    assert pump.tick() == []
    assert lab.jobs(queue).count() == 1


def test_a_late_tick_fires_once_and_restarts_the_period(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    lab.clock.advance(minutes=61)  # four periods late
    fired = lab.pump(queue).tick()
    assert [o.name for o in fired] == ["report"]
    assert rep.entries() == [("report", lab.clock.now_ms() + 15 * MIN)]


def test_hundreds_of_ticks_leave_one_row(lab: emq_lab.Lab, queue: str) -> None:
    """tick() in a loop; 02-cadence's fast-forward (nbval, every backend) takes the same name
    through 10,000 ticks on the pump's one-round-trip path."""
    rep, pump = lab.repeat(queue), lab.pump(queue)
    rep.register("heartbeat", 1000, "t")
    fired = 0
    for _ in range(500):
        fired += len(pump.tick())
        lab.clock.advance(1000)
    assert fired == 500
    assert rep.count() == 1
    assert lab.jobs(queue).browse(limit=1) == ["JOB-000500"]


def test_tick_sweeps_a_member_whose_record_is_gone(lab: emq_lab.Lab, queue: str) -> None:
    rep, pump = lab.repeat(queue), lab.pump(queue)
    rep.register("gone", 15 * MIN, "t")
    rep.register("kept", 15 * MIN, "t")
    lab.client.delete(QueueKeys(queue).record("gone"))
    result = pump.begin().run()
    assert [o.name for o in result.fired] == ["kept"]
    assert dict(result.advanced) == {"gone": Outcome.ABSENT, "kept": Outcome.ADVANCED}
    assert [name for name, _ in rep.entries()] == ["kept"]


def test_batch_bounds_a_tick(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    for i in range(5):
        rep.register(f"n{i}", 15 * MIN, "t")
    pump = lab.pump(queue, batch=2)
    assert len(pump.tick()) == 2
    assert len(pump.tick()) == 2
    assert len(pump.tick()) == 1
    assert pump.tick() == []


def test_a_hook_between_enqueue_and_advance_sees_the_jobs_and_can_stop_the_advances(
    lab: emq_lab.Lab, queue: str
) -> None:
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "t")
    start = dict(rep.entries())["report"]
    seen: list[tuple[int, list[str]]] = []

    def stop(tick: emq_lab.Tick) -> None:
        seen.append((lab.jobs(queue).count(), [o.job_id for o in tick.fired]))
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        lab.pump(queue).begin().run(after_enqueue=stop)
    assert seen == [(1, ["JOB-000001"])]  # the enqueue had landed when the hook ran
    assert dict(rep.entries())["report"] == start  # ... and no advance followed


def test_run_ticks_a_simclock_forward(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("report", 15 * MIN, "t")
    start = lab.clock.now_ms()
    fired = lab.pump(queue).run(until_ms=start + 45 * MIN, step_ms=MIN)
    assert [o.fired_at_ms - start for o in fired] == [0, 15 * MIN, 30 * MIN, 45 * MIN]


def test_a_run_that_meets_a_fault_raises_carrying_what_every_earlier_tick_fired() -> None:
    """``Pump.run`` ticks many times; a fault at a later tick raises the backend's error carrying the
    occurrences of every tick before it too (as ``drain`` does), each of them stored."""
    queue = "run-fault"
    lab = emq_lab.connect(clock=emq_lab.SimClock(START))
    lab.repeat(queue).register_many([(f"n{i}", MIN, "t") for i in range(10)])
    wait, server = lab.keyspace(queue).wait, embedded_server()

    def cut_once_out() -> None:  # the embedded server switched off once 100 jobs are out
        watcher = embedded_client()
        deadline = time.monotonic() + 60
        while watcher.llen(wait) < 100 and time.monotonic() < deadline:
            time.sleep(0.0005)
        server.connected = False

    cutter = threading.Thread(target=cut_once_out)
    cutter.start()
    try:
        with pytest.raises(redis.RedisError) as caught:
            lab.pump(queue).run(until_ms=lab.clock.now_ms() + 600 * MIN, step_ms=MIN)
    finally:
        cutter.join()
        server.connected = True
    fired: list[Occurrence] = caught.value.fired  # type: ignore[attr-defined]
    assert len(fired) >= 90  # the ticks before the one that met the fault, ten names each
    assert {o.job_id for o in fired} <= set(lab.jobs(queue).browse(limit=10_000))
    lab.reset(queue)
