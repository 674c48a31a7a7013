"""The cancel race and the crash replay, on both backends."""

from __future__ import annotations

from itertools import permutations

import pytest

import emq_lab
from emq_lab import Outcome
from emq_lab.race import PRESETS, STEPS, Race, drop_record, every_order, keyspace, replay_crash

MIN = 60_000

# preset -> (occurrences fired, what the advance answered)
EXPECTED = {
    "before-read": (0, None),
    "after-read": (1, Outcome.ABSENT),
    "after-enqueue": (1, Outcome.ABSENT),
    "after-advance": (1, Outcome.ADVANCED),
}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_ends_consistent_and_empty(lab: emq_lab.Lab, queue: str, preset: str) -> None:
    race = Race(lab, queue)
    taken = race.play(preset)
    fired, advance = EXPECTED[preset]
    state = keyspace(lab, queue)
    assert [s.step for s in taken] == list(PRESETS[preset])
    assert all(s.after.consistent for s in taken)
    assert {name for name, _ in state.registry} <= set(state.records)
    assert len(race.fired) == fired == lab.jobs(queue).count()
    assert race.advance_outcome == advance
    assert race.cancel_outcome == Outcome.CANCELLED
    assert state.registry == () and state.records == ()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_no_occurrence_after_the_cancel_however_far_the_clock_runs(lab: emq_lab.Lab, queue: str, preset: str) -> None:
    race = Race(lab, queue)
    race.play(preset)
    before = lab.jobs(queue).count()
    later = lab.pump(queue).run(until_ms=lab.clock.now_ms() + 24 * 60 * MIN, step_ms=15 * MIN)
    assert later == []
    assert lab.jobs(queue).count() == before


def test_cancel_after_the_advance_removes_the_next_run(lab: emq_lab.Lab, queue: str) -> None:
    race = Race(lab, queue)
    start = lab.clock.now_ms()
    read, enqueue, advance, cancel = race.play("after-advance")
    assert read.after.registry == (("report", start),)
    assert advance.after.registry == (("report", start + 15 * MIN),)
    assert cancel.outcome == Outcome.CANCELLED and cancel.after.registry == ()


def test_the_last_occurrence_carries_the_template_the_read_held(lab: emq_lab.Lab, queue: str) -> None:
    race = Race(lab, queue, template='{"r": 7}')
    race.play("after-read")
    (job_id,) = lab.jobs(queue).browse()
    assert lab.jobs(queue).get(job_id)["template"] == '{"r": 7}'


def test_every_order_the_pump_allows_keeps_the_invariant(lab: emq_lab.Lab, queue: str) -> None:
    race = Race(lab, queue)
    allowed = 0
    for order in permutations(STEPS):
        pump_order_kept = order.index("read") < order.index("enqueue") < order.index("advance")
        if not pump_order_kept:
            with pytest.raises(ValueError, match="take (read|enqueue) first"):
                race.replay(order)
            continue
        taken = race.replay(order)
        allowed += 1
        assert all(s.after.consistent for s in taken), order
        assert len(race.fired) == (0 if order[0] == "cancel" else 1)
    assert allowed == 4
    report = every_order(race)
    assert len(report.allowed) == 4 and len(report.refused) == 20
    assert report.invariant_after_every_step


def test_a_refused_step_changes_nothing(lab: emq_lab.Lab, queue: str) -> None:
    race = Race(lab, queue)
    before = keyspace(lab, queue)
    with pytest.raises(ValueError, match="enqueue: .*take read first"):
        race.step("enqueue")
    with pytest.raises(ValueError, match="advance: .*take enqueue first"):
        race.step("advance")
    assert keyspace(lab, queue) == before and race.taken == []
    race.step("cancel")
    with pytest.raises(ValueError, match="already taken"):
        race.step("cancel")
    with pytest.raises(ValueError, match="not a step"):
        race.step("promote")
    with pytest.raises(ValueError, match="not a preset"):
        race.play("sideways")


def test_a_dropped_record_dangles_until_the_advance_sweeps_it(lab: emq_lab.Lab, queue: str) -> None:
    race = Race(lab, queue)
    assert drop_record(lab, queue, "report")
    assert keyspace(lab, queue).dangling == ("report",)
    read = race.step("read")
    enqueue = race.step("enqueue")
    advance = race.step("advance")
    assert not read.after.consistent and not enqueue.after.consistent
    assert race.fired == [] and lab.jobs(queue).count() == 0
    assert advance.outcome == Outcome.ABSENT
    assert advance.after.registry == () and advance.after.consistent


def test_the_readout_names_the_steps_and_the_keyspace(lab: emq_lab.Lab, queue: str) -> None:
    race = Race(lab, queue)
    race.play("after-enqueue")
    text = race.text()
    assert "steps: read -> enqueue -> cancel -> advance" in text
    assert "advance outcome: {:ok, :absent}" in text
    assert "jobs:     JOB-000001" in text
    assert "registry: (empty)" in text
    assert "round complete" in text
    assert "1 occurrence(s) fired" in race.verdict()


def test_crash_after_enqueue_duplicates_with_fresh_ids(lab: emq_lab.Lab, queue: str) -> None:
    replay = replay_crash(lab, queue, slot_keyed=False)
    assert [o.job_id for o in replay.before_crash] == ["JOB-000001"]
    assert replay.due_after_crash == (("report", replay.slot_ms),)
    assert [o.job_id for o in replay.on_restart] == ["JOB-000002"]
    assert replay.jobs == ("JOB-000001", "JOB-000002")
    assert replay.duplicates == 1
    assert "verdict: 1 duplicate(s)" in str(replay)


def test_crash_after_enqueue_is_harmless_with_slot_keyed_ids(lab: emq_lab.Lab, queue: str) -> None:
    replay = replay_crash(lab, queue, slot_keyed=True)
    slot_id = f"report:{replay.slot_ms}"
    assert [o.job_id for o in replay.before_crash] == [slot_id]
    assert replay.on_restart == ()
    assert replay.restart_advance == Outcome.ADVANCED
    assert replay.jobs == (slot_id,) and replay.duplicates == 0
    assert lab.repeat(queue).entries() == [("report", replay.restart_ms + 15 * MIN)]
    assert "verdict: 0 duplicate(s)" in str(replay)


def test_replay_crash_refuses_a_restart_past_the_slot(lab: emq_lab.Lab, queue: str) -> None:
    with pytest.raises(ValueError, match="restart_after_ms"):
        replay_crash(lab, queue, slot_keyed=False, every_ms=MIN, restart_after_ms=MIN)
