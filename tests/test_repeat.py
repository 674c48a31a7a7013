"""The registry verbs on both backends: register, cancel, due, advance."""

from __future__ import annotations

import pytest
from helpers import MIN, slot, snapshot

import emq_lab
from emq_lab import Due, Outcome
from emq_lab.keys import QueueKeys


def test_boot_twice_keeps_one_record_and_one_row(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    first = rep.register("daily-report", 15 * MIN, '{"kind": "report"}')
    second = rep.register("daily-report", 15 * MIN, '{"kind": "report"}')
    assert (first, second) == (Outcome.REGISTERED, Outcome.EXISTS)
    assert (first.tuple, second.tuple) == ("{:ok, :registered}", "{:ok, :exists}")
    assert (first.reply, second.reply) == (1, 0)
    assert rep.count() == 1
    assert rep.entries() == [("daily-report", lab.clock.now_ms())]
    assert rep.record("daily-report") == {"every_ms": str(15 * MIN), "template": '{"kind": "report"}'}


def test_second_boot_writes_nothing(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("daily-report", 15 * MIN, "{}")
    before = snapshot(lab, queue)
    lab.clock.advance(minutes=7)
    assert rep.register("daily-report", 15 * MIN, "{}") is Outcome.EXISTS
    assert snapshot(lab, queue) == before


def test_reregister_with_another_period_keeps_the_old_one(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("sync", 15 * MIN, "v1")
    assert rep.register("sync", 5 * MIN, "v2") is Outcome.EXISTS
    assert rep.record("sync") == {"every_ms": str(15 * MIN), "template": "v1"}
    assert rep.due() == [Due("sync", 15 * MIN, "v1")]


def test_cancel_removes_row_and_record_and_frees_the_name(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("sync", 15 * MIN, "t")
    assert rep.cancel("sync") is Outcome.CANCELLED
    assert rep.count() == 0
    assert rep.record("sync") == {}
    assert rep.due() == []
    assert lab.keys(queue) == []
    assert rep.cancel("sync") is Outcome.ABSENT
    lab.clock.advance(minutes=3)
    assert rep.register("sync", 10 * MIN, "t2") is Outcome.REGISTERED
    assert rep.entries() == [("sync", lab.clock.now_ms())]


def test_cancel_clears_a_dangling_member(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("sync", 15 * MIN, "t")
    lab.client.delete(QueueKeys(queue).record("sync"))
    assert rep.cancel("sync") is Outcome.CANCELLED
    assert rep.count() == 0


def test_first_in_delays_the_first_run(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    start = lab.clock.now_ms()
    rep.register("later", 15 * MIN, "t", first_in_ms=5 * MIN)
    assert rep.entries() == [("later", start + 5 * MIN)]
    lab.clock.advance(minutes=4, seconds=59)
    assert rep.due() == []
    lab.clock.advance(seconds=1)
    assert rep.due() == [Due("later", 15 * MIN, "t")]


def test_due_is_in_score_order_and_bounded(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    for i, name in enumerate(["c", "a", "b"]):
        rep.register(name, MIN, "t", first_in_ms=(3 - i) * 1000)
    lab.clock.advance(seconds=3)
    assert [d.name for d in rep.due()] == ["b", "a", "c"]
    assert [d.name for d in rep.due(limit=2)] == ["b", "a"]


def test_advance_moves_the_next_run_past_now(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("sync", 15 * MIN, "t")
    lab.clock.advance(minutes=2)
    assert rep.advance("sync", 15 * MIN) is Outcome.ADVANCED
    ((name, next_ms),) = rep.entries()
    assert next_ms == lab.clock.now_ms() + 15 * MIN > lab.clock.now_ms()
    assert rep.due() == []
    assert rep.count() == 1


def test_advance_after_record_deleted_sweeps_the_member(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("sync", 15 * MIN, "t")
    lab.client.delete(QueueKeys(queue).record("sync"))
    assert rep.due() == []  # a member without a record is not due
    assert rep.advance("sync", 15 * MIN) is Outcome.ABSENT
    assert rep.count() == 0
    assert lab.keys(queue) == []


def test_every_key_of_a_queue_shares_one_slot(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("a", MIN, "t")
    rep.register("b:with:colons", MIN, "t")
    lab.pump(queue).tick()
    found = lab.keys(queue)
    assert len(found) >= 5
    assert {slot(k) for k in found} == {slot(QueueKeys(queue).registry)}


def test_due_reads_at_most_what_one_call_carries(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("sync", 15 * MIN, "v1")
    assert [row.name for row in rep.rows()] == ["sync"]  # no limit: as many as one call reads
    with pytest.raises(ValueError, match="limit: expected an int from 1 to 5,000, got int 6000"):
        rep.due(6000)
