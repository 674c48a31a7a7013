"""The fast-forward runs the lab's scripts, as a tick does: on a lab whose due, enqueue or advance
is a learner's (``exercises.with_scripts``) it ticks the pump's own loop; with the shipped
scripts it is ticks.lua. Both give the same occurrences."""

from __future__ import annotations

import pytest
from helpers import MIN, START

import emq_lab
from emq_lab import SimClock, exercises
from emq_lab.dives import cadence
from emq_lab.fastforward import forward
from emq_lab.schedule import Measure
from emq_lab.scripts import source

DUE = source("due")
#: A learner's due that never answers the row named "b".
DUE_WITHOUT_B = DUE.replace(
    "  local name = members[i]\n", "  local name = members[i]\n  if name == 'b' then break end\n"
)


def fired(lab: emq_lab.Lab, queue: str, rule: Measure, *, step_ms: int, finish_ms: int | None = None) -> list[object]:
    rep = lab.repeat(queue)
    rep.register("a", MIN, "ta")
    rep.register("b", 3 * MIN, "tb", first_in_ms=MIN // 2)
    pump = lab.pump(queue, rule=rule)
    out = [o for chunk in forward(pump, 40, step_ms=step_ms, finish_ms=finish_ms, per_call=7) for o in chunk]
    return [*out, lab.clock.now_ms(), rep.entries()]


@pytest.mark.parametrize("script", ["due", "enqueue", "advance"])
@pytest.mark.parametrize(
    ("rule", "step_ms", "finish_ms"),
    [(Measure.START_TO_START, MIN, None), (Measure.GRID, 0, None), (Measure.START_TO_FINISH, 20_000, 90_000)],
)
def test_a_learners_scripts_fast_forward_as_the_shipped_ones(
    script: str, rule: Measure, step_ms: int, finish_ms: int | None
) -> None:
    shipped = emq_lab.connect(clock=SimClock(START))
    # the same Lua as shipped, but not the shipped text: the pump's own ticks run it
    learner = exercises.with_scripts(shipped.with_clock(SimClock(START)), **{script: source(script) + "\n-- mine\n"})
    try:
        assert not learner.scripts.stock(script)
        assert fired(learner, "ff-learner", rule, step_ms=step_ms, finish_ms=finish_ms) == fired(
            shipped, "ff-learner", rule, step_ms=step_ms, finish_ms=finish_ms
        )
    finally:
        shipped.reset("ff-learner")
        learner.reset("ff-learner")


def test_the_fast_forward_runs_a_learners_due() -> None:
    lab = exercises.with_scripts(emq_lab.connect(clock=SimClock(START)), due=DUE_WITHOUT_B)
    try:
        occurrences = fired(lab, "ff-due", Measure.START_TO_START, step_ms=MIN)[:-2]
        assert {o.name for o in occurrences} == {"a"}  # type: ignore[attr-defined]
    finally:
        lab.reset("ff-due")


def test_a_learners_due_that_answers_nothing_ends_the_fast_forward() -> None:
    lab = exercises.with_scripts(emq_lab.connect(clock=SimClock(START)), due="return {}")
    try:
        lab.repeat("ff-none").register("a", MIN, "t")
        assert [o for chunk in forward(lab.pump("ff-none"), 5, step_ms=MIN) for o in chunk] == []
    finally:
        lab.reset("ff-none")


def test_the_cadence_dives_fast_forward_runs_a_learners_due() -> None:
    counted = DUE.replace("local out = {}\n", "local out = {}\nredis.call('INCR', registry .. ':reads')\n")
    lab = exercises.with_scripts(emq_lab.connect(clock=SimClock(START)), due=counted)
    try:
        assert cadence.fast_forward(lab, "ff-dive", occurrences=30, every_ms=MIN).occurrences_fired == 30
        assert lab.client.get(f"{lab.keyspace('ff-dive').registry}:reads") == "30"  # one read a tick
    finally:
        lab.reset("ff-dive")
        lab.client.delete(f"{lab.keyspace('ff-dive').registry}:reads")
