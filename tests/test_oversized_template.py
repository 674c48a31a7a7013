"""A stored template over register's size (a learner's own HSET skips register's check) is never
read by a script: due.lua answers the row refused with its size, ticks.lua answers OVERSIZED and
stores no job, and both advance past it. On every backend."""

from __future__ import annotations

from helpers import MIN

import emq_lab
from emq_lab import Outcome, scripts, validate
from emq_lab.fastforward import forward

BIG = 2 * 2**20  # 2 MiB, far past MAX_TEMPLATE_BYTES


def _stored_big(lab: emq_lab.Lab, queue: str, name: str) -> None:
    lab.repeat(queue).register(name, MIN, "t")
    lab.client.hset(lab.keyspace(queue).record(name), "template", "x" * BIG)


def test_due_answers_an_oversized_template_as_a_refused_row_without_it(lab: emq_lab.Lab, queue: str) -> None:
    _stored_big(lab, queue, "big")
    lab.repeat(queue).register("small", MIN, "hello")
    rows = {row.name: row for row in lab.repeat(queue).rows()}
    assert rows["big"].template is None and rows["big"].template_bytes == BIG
    assert rows["big"].every_ms == MIN
    assert rows["small"].template == "hello" and rows["small"].template_bytes is None
    assert [due.name for due in lab.repeat(queue).due()] == ["small"]


def test_a_template_at_the_limit_is_still_read(lab: emq_lab.Lab, queue: str) -> None:
    lab.repeat(queue).register("edge", MIN, "y" * validate.MAX_TEMPLATE_BYTES)
    (row,) = lab.repeat(queue).rows()
    assert row.template == "y" * validate.MAX_TEMPLATE_BYTES and row.template_bytes is None


def test_a_tick_stores_no_job_for_a_refused_row_and_advances_it(lab: emq_lab.Lab, queue: str) -> None:
    _stored_big(lab, queue, "big")
    lab.repeat(queue).register("small", MIN, "hello")
    result = lab.pump(queue).begin().run()
    assert [o.name for o in result.fired] == ["small"]
    assert sorted(result.advanced) == [("big", Outcome.ADVANCED), ("small", Outcome.ADVANCED)]
    assert lab.client.llen(lab.keyspace(queue).wait) == 1


def test_ticks_answers_refused_for_an_oversized_template_and_moves_on(lab: emq_lab.Lab, queue: str) -> None:
    _stored_big(lab, queue, "big")
    lab.repeat(queue).register("small", MIN, "hello")
    call = scripts.ticks(
        lab.keyspace(queue), now_ms=lab.clock.now_ms(), tick_ms=MIN, batch=10, reads=3, want=100,
        slot_keyed=False, rule="start-to-start", finish_ms=None,
    )  # fmt: skip
    done = scripts.ticked(scripts.send(lab.scripts, call, lab.client))
    by_name = {(row.name, row.enqueued) for row in done.rows}
    assert by_name == {("big", Outcome.OVERSIZED), ("small", Outcome.ENQUEUED)}
    assert all(row.advanced is Outcome.ADVANCED for row in done.rows)
    assert not [row for row in done.rows if row.name == "big" and row.job_id]
    assert lab.client.llen(lab.keyspace(queue).wait) == 3  # small's three ticks, none of big's
    assert sum(len(f) for f in forward(lab.pump(queue), 2, step_ms=MIN)) == 2


def test_a_forward_of_refused_rows_only_ends(lab: emq_lab.Lab, queue: str) -> None:
    _stored_big(lab, queue, "big")
    assert sum(len(f) for f in forward(lab.pump(queue), 5, step_ms=MIN)) == 0
