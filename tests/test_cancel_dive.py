"""The cancel race (emq_lab.dives.race) and the crash replay (emq_lab.dives.crash), on every backend."""

from __future__ import annotations

from itertools import permutations

import pytest
from helpers import MIN, START

import emq_lab
from emq_lab import Occurrence, Outcome
from emq_lab.clock import parse_instant
from emq_lab.dives.crash import (
    CRASH,
    RESTART,
    TICK,
    CrashBench,
    CrashTick,
    replay_crash,
)
from emq_lab.dives.race import (
    PRESET_LABELS,
    PRESETS,
    STEPS,
    Mark,
    Race,
    drop_record,
    every_order,
    preset_marks,
    snapshot,
)
from emq_lab.plots.keyspace import keyspace_figure, keyspace_marks

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
    state = snapshot(lab, queue)
    assert [s.step for s in taken] == list(PRESETS[preset])
    assert all(s.after.consistent for s in taken)
    assert {name for name, _ in state.registry} <= set(state.records)
    assert len(race.fired) == fired == lab.jobs(queue).count()
    assert race.advance_outcome == advance
    assert [s.outcome for s in taken if s.step == "cancel"] == [Outcome.CANCELLED]
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
    before = snapshot(lab, queue)
    with pytest.raises(ValueError, match="enqueue: .*take read first"):
        race.step("enqueue")
    with pytest.raises(ValueError, match="advance: .*take enqueue first"):
        race.step("advance")
    assert snapshot(lab, queue) == before and race.taken == []
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
    assert snapshot(lab, queue).dangling == ("report",)
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


# preset -> after each step (start first): (step, member's next run in minutes from the start or
# None, record exists, occurrences the step enqueued)
PRESET_MARKS = {
    "before-read": [("start", 0, True, 0), ("cancel", None, False, 0), ("read", None, False, 0),
                    ("enqueue", None, False, 0), ("advance", None, False, 0)],
    "after-read": [("start", 0, True, 0), ("read", 0, True, 0), ("cancel", None, False, 0),
                   ("enqueue", None, False, 1), ("advance", None, False, 0)],
    "after-enqueue": [("start", 0, True, 0), ("read", 0, True, 0), ("enqueue", 0, True, 1),
                      ("cancel", None, False, 0), ("advance", None, False, 0)],
    "after-advance": [("start", 0, True, 0), ("read", 0, True, 0), ("enqueue", 0, True, 1),
                      ("advance", 15, True, 0), ("cancel", None, False, 0)],
}  # fmt: skip


def test_preset_marks_are_what_the_scripts_left(lab: emq_lab.Lab, queue: str) -> None:
    start = parse_instant(START)
    rounds = preset_marks(Race(lab, queue))
    assert list(rounds) == [PRESET_LABELS[p] for p in PRESETS]
    for preset, expected in PRESET_MARKS.items():
        got = [
            (m.step, None if m.next_ms is None else (m.next_ms - start) // MIN, m.has_record, m.jobs_made)
            for m in rounds[PRESET_LABELS[preset]]
        ]
        assert got == expected, preset
        assert all(m.consistent for m in rounds[PRESET_LABELS[preset]])
    assert snapshot(lab, queue).registry == (("report", start),)  # reset at the end


def test_the_keyspace_figure_draws_the_marks(lab: emq_lab.Lab, queue: str) -> None:
    rounds = preset_marks(Race(lab, queue))
    figure = keyspace_figure(rounds, title="t")
    assert figure.to_json() == keyspace_figure(rounds, title="t").to_json()  # no random ids
    traces = {trace.name: trace for trace in figure.data}
    rows = {label: len(rounds) - 1 - i for i, label in enumerate(rounds)}
    cells = [(c, rows[label], m) for label, ms in rounds.items() for c, m in enumerate(ms)]

    def points(name: str) -> list[tuple[float, float]]:
        return sorted(zip(traces[name].x, traces[name].y, strict=True))

    assert points("member present") == sorted((c - 0.12, r) for c, r, m in cells if m.has_member)
    assert points("member absent") == sorted((c - 0.12, r) for c, r, m in cells if not m.has_member)
    assert points("record present") == sorted((c + 0.12, r) for c, r, m in cells if m.has_record)
    assert points("record absent") == sorted((c + 0.12, r) for c, r, m in cells if not m.has_record)
    # the star sits above the enqueue of every preset except the one whose cancel came first
    assert points("occurrence fired") == sorted([(3, 2.3), (2, 1.3), (2, 0.3)])
    assert points("invariant broken") == []
    assert list(traces["step"].text) == [m.step for _, _, m in cells]
    lines = keyspace_marks(rounds)
    assert len(lines) == 1 + len(PRESETS)
    assert lines[-1].endswith("  start 09:00 R | read 09:00 R | enqueue 09:00 R * | advance 09:15 R | cancel - -")


def test_the_keyspace_figure_rings_a_broken_invariant() -> None:
    dangling = [Mark("start", 0, False, 0, False), Mark("advance", None, False, 0, True)]
    figure = keyspace_figure({"dropped record": dangling})
    broken = next(trace for trace in figure.data if trace.name == "invariant broken")
    assert list(zip(broken.x, broken.y, strict=True)) == [(0, 0)]
    assert keyspace_marks({"dropped record": dangling})[1] == "dropped record  start 00:00 - | advance - -"


def test_crash_after_enqueue_duplicates_with_fresh_ids(lab: emq_lab.Lab, queue: str) -> None:
    replay = replay_crash(lab, queue, slot_keyed=False)
    assert [o.job_id for o in replay.crashed.occurrences] == ["JOB-000001"]
    assert replay.crashed.registry == (("report", replay.crashed.slot_ms),)
    assert [o.job_id for o in replay.restarted.occurrences] == ["JOB-000002"]
    assert replay.jobs == ("JOB-000001", "JOB-000002")
    assert replay.duplicates == 1
    assert "verdict: 1 duplicate(s)" in str(replay)


def test_crash_after_enqueue_is_harmless_with_slot_keyed_ids(lab: emq_lab.Lab, queue: str) -> None:
    replay = replay_crash(lab, queue, slot_keyed=True)
    slot_id = f"report:{replay.crashed.slot_ms}"
    assert [o.job_id for o in replay.crashed.occurrences] == [slot_id]
    assert replay.restarted.occurrences == ()
    assert replay.restarted.advance_outcome == Outcome.ADVANCED
    assert replay.jobs == (slot_id,) and replay.duplicates == 0
    assert lab.repeat(queue).entries() == [("report", replay.restarted.at_ms + 15 * MIN)]
    assert "verdict: 0 duplicate(s)" in str(replay)


def test_replay_crash_refuses_a_restart_past_the_slot(lab: emq_lab.Lab, queue: str) -> None:
    with pytest.raises(ValueError, match="restart_after_ms"):
        replay_crash(lab, queue, slot_keyed=False, every_ms=MIN, restart_after_ms=MIN)


# --- the crash bench: one click at a time ---------------------------------------------------


def test_bench_fault_on_with_fresh_ids_duplicates_the_slot(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue, crash=True)
    start = parse_instant(START)
    crashed = bench.tick()
    assert crashed.kind == CRASH and crashed.advance_outcome is None
    assert [o.job_id for o in crashed.occurrences] == ["JOB-000001"]
    assert crashed.registry == (("report", start),)  # still due: the advance never ran
    assert bench.restart_pending
    restarted = bench.tick()
    assert restarted.kind == RESTART and restarted.at_ms == start + MIN and restarted.slot_ms == start
    assert [o.job_id for o in restarted.occurrences] == ["JOB-000002"]
    assert restarted.advance_outcome == Outcome.ADVANCED
    assert bench.per_slot == {start: ("JOB-000001", "JOB-000002")}
    assert bench.duplicates == 1 and lab.jobs(queue).count() == 2
    assert not bench.restart_pending
    assert "09:00 slot: JOB-000001, JOB-000002 - 1 duplicate(s)" in bench.text()
    assert "duplicates: 1" in bench.text()


def test_bench_fault_on_with_slot_keyed_ids_collides(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue, crash=True, slot_keyed=True)
    start = parse_instant(START)
    crashed, restarted = bench.tick(), bench.tick()
    assert [o.job_id for o in crashed.occurrences] == [f"report:{start}"]
    assert restarted.occurrences == () and restarted.advance_outcome == Outcome.ADVANCED
    assert bench.per_slot == {start: (f"report:{start}",)}
    assert bench.duplicates == 0 and lab.jobs(queue).count() == 1
    assert lab.repeat(queue).entries() == [("report", start + MIN + 15 * MIN)]
    assert "the slot's id is already stored: nothing enqueued" in bench.text()


def test_bench_fault_on_keeps_crashing_and_restarting(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue, crash=True)
    kinds = [bench.tick().kind for _ in range(6)]
    assert kinds == [CRASH, RESTART] * 3
    assert len(bench.per_slot) == 3 and bench.duplicates == 3


@pytest.mark.parametrize("slot_keyed", [False, True])
def test_bench_fault_off_fires_one_job_per_slot(lab: emq_lab.Lab, queue: str, slot_keyed: bool) -> None:
    bench = CrashBench(lab, queue, slot_keyed=slot_keyed)
    start = parse_instant(START)
    for _ in range(4):
        taken = bench.tick()
        assert taken.kind == TICK and len(taken.occurrences) == 1 and taken.advance_outcome == Outcome.ADVANCED
        lab.clock.advance(minutes=15)
    assert list(bench.per_slot) == [start + i * 15 * MIN for i in range(4)]
    assert all(len(ids) == 1 for ids in bench.per_slot.values())
    assert bench.duplicates == 0 and lab.jobs(queue).count() == 4


def test_a_running_tick_waits_for_the_next_run(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue)
    start = parse_instant(START)
    first, second = bench.tick(), bench.tick()
    assert (first.at_ms, second.at_ms) == (start, start + 15 * MIN)
    assert lab.clock.now_ms() == start + 15 * MIN
    assert "next click: a tick at 09:30" in bench.text()


def test_a_pending_restart_survives_the_fault_switched_off(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue, crash=True)
    bench.tick()
    bench.set(crash=False)
    assert bench.restart_pending and "next click: the restarted pump's tick" in bench.text()
    assert bench.tick().kind == RESTART
    assert bench.tick().kind == TICK


def test_a_new_id_mode_starts_a_new_round_and_the_fault_switch_does_not(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue, crash=True)
    bench.tick()
    bench.set(crash=True, slot_keyed=False)  # nothing changes
    assert len(bench.ticks) == 1 and bench.restart_pending
    bench.set(slot_keyed=True)
    assert bench.ticks == [] and not bench.restart_pending
    assert lab.jobs(queue).count() == 0
    assert lab.repeat(queue).entries() == [("report", lab.clock.now_ms())]
    assert bench.crash and bench.slot_keyed


def test_bench_reset_empties_the_queue(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue, crash=True)
    bench.tick()
    bench.tick()
    bench.reset()
    assert lab.jobs(queue).count() == 0 and bench.ticks == [] and bench.duplicates == 0
    assert "ticks: (none yet)" in bench.text() and "jobs per slot: (none)" in bench.text()


def test_bench_refuses_bad_switches_and_a_restart_past_the_slot(lab: emq_lab.Lab, queue: str) -> None:
    bench = CrashBench(lab, queue)
    with pytest.raises(ValueError, match="crash: expected True or False"):
        bench.set(crash="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="slot_keyed"):
        bench.set(slot_keyed=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="restart_after_ms"):
        CrashBench(lab, queue, every_ms=MIN, restart_after_ms=MIN)


@pytest.mark.embedded_only  # the counting is the package's
def test_jobs_are_counted_per_slot(lab: emq_lab.Lab, queue: str) -> None:
    def tick(kind: str, slot: int | None, *ids: str) -> CrashTick:
        return CrashTick(kind, 0, slot, tuple(Occurrence(i, "r", 0, 0) for i in ids), None, ())

    bench = CrashBench(lab, queue)
    assert bench.per_slot == {} and bench.duplicates == 0
    bench.ticks = [
        tick(CRASH, 20, "A"),
        tick(RESTART, 20, "B"),
        tick(TICK, 10, "C"),
        tick(TICK, None),
        tick(RESTART, 30),
    ]
    assert bench.per_slot == {10: ("C",), 20: ("A", "B")}
    assert bench.duplicates == 1
    assert str(bench.ticks[3]) == "00:00 tick: nothing due"
