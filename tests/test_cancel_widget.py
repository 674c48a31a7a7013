"""CancelPanel: the twins, the buttons, and what the panel shows."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers import MIN, START, clickable, shown

import emq_lab
from emq_lab.clock import parse_instant
from emq_lab.widgets import CrashPanel
from emq_lab.widgets.cancel import FAULT_OFF, FAULT_ON, CancelPanel

pytestmark = pytest.mark.embedded_only  # the logic is the package's; the backend tests cover the servers


def test_only_read_and_cancel_can_start_a_round(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    assert clickable(panel) == {"read": True, "cancel": True, "enqueue": False, "advance": False}
    assert "steps: (none yet)" in panel.readout
    assert "registry: report @ 09:00" in panel.readout


@pytest.mark.parametrize("how", ["reset", "preset"])
def test_reset_replays_the_round_at_the_instant_the_panel_was_made(lab: emq_lab.Lab, queue: str, how: str) -> None:
    """03-cancel's crash replays move the shared clock on (09:15 -> 09:17) after the race panels
    printed 09:15; a Reset or a preset then must show the round the notebook printed."""
    panel = CancelPanel(lab, queue)
    made = panel.readout
    lab.clock.advance(minutes=2)
    if how == "reset":
        panel.click("reset")
        assert panel.readout == made
    else:
        panel.play("after-read")
        assert "due: report @ 09:00" in panel.readout and "JOB-000001 enqueued for the 09:00 slot" in panel.readout
    assert lab.repeat(queue).entries() == ([("report", parse_instant(START))] if how == "reset" else [])
    assert lab.clock.now_ms() == parse_instant(START) + 2 * MIN  # the lab's clock is left where it was


def test_a_click_takes_the_step_and_unlocks_the_next(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.click("pump reads due")
    assert clickable(panel) == {"read": False, "cancel": True, "enqueue": True, "advance": False}
    panel.click("pump enqueues")
    assert "JOB-000001" in panel.html()
    assert clickable(panel)["advance"]


def test_a_disabled_step_raises_from_the_twin(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    with pytest.raises(ValueError, match="take read first"):
        panel.step("enqueue")
    assert "steps: (none yet)" in panel.readout
    assert lab.jobs(queue).count() == 0


@pytest.mark.parametrize(
    ("preset", "fired", "advance"),
    [
        ("before-read", 0, "-"),
        ("after-read", 1, "{:ok, :absent}"),
        ("after-enqueue", 1, "{:ok, :absent}"),
        ("after-advance", 1, "{:ok, :advanced}"),
    ],
)
def test_each_preset_reads_out_its_outcome(lab: emq_lab.Lab, queue: str, preset: str, fired: int, advance: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.play(preset)
    text = panel.readout
    assert f"occurrences fired: {fired}" in text
    assert f"advance outcome: {advance}" in text
    assert "registry: (empty)" in text
    assert "invariant: every registry member has a record - holds" in text
    assert not any(clickable(panel).values())
    assert panel.preset == preset


def test_the_play_button_plays_the_chosen_preset(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.click("cancel after the advance")
    panel.click("play preset")
    assert "steps: read -> enqueue -> advance -> cancel" in panel.readout


def test_reset_starts_a_fresh_round(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.play("after-read")
    panel.click("reset")
    assert "steps: (none yet)" in panel.readout
    assert "jobs:     (none)" in panel.readout
    assert clickable(panel)["read"] and not clickable(panel)["advance"]


def test_displayed_text_is_the_readout(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.step("read")
    bundle = shown(panel)
    assert bundle["text/plain"] == panel.readout
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_unknown_preset_is_refused(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    with pytest.raises(ValueError, match="not a preset"):
        panel.play("never")


# --- CrashPanel ------------------------------------------------------------------------------


def _switch_by_twin(panel: CrashPanel, crash: bool, slot_keyed: bool) -> None:
    panel.set(crash=crash, slot_keyed=slot_keyed)


def _switch_by_click(panel: CrashPanel, crash: bool, slot_keyed: bool) -> None:
    panel.click("slot-keyed <name>:<slot_ms>" if slot_keyed else "fresh JOB- ids")
    if crash:
        panel.click(FAULT_OFF)  # the toggle, labelled as it is while off


def _tick_by_twin(panel: CrashPanel) -> None:
    panel.tick()


def _tick_by_click(panel: CrashPanel) -> None:
    panel.click("Tick (and restart)")


Switch = Callable[[CrashPanel, bool, bool], None]
Tick = Callable[[CrashPanel], None]
VIA: dict[str, tuple[Switch, Tick]] = {
    "twins": (_switch_by_twin, _tick_by_twin),
    "buttons": (_switch_by_click, _tick_by_click),
}


@pytest.mark.parametrize("via", sorted(VIA))
def test_crash_with_fresh_ids_duplicates_the_slot(lab: emq_lab.Lab, queue: str, via: str) -> None:
    switch, tick = VIA[via]
    panel = CrashPanel(lab, queue)
    switch(panel, True, False)
    tick(panel)
    assert "then crashed before advance" in panel.readout and "duplicates: 0" in panel.readout
    tick(panel)  # the restarted pump
    slot = parse_instant(START)
    assert panel.bench.per_slot == {slot: ("JOB-000001", "JOB-000002")}
    assert "09:00 slot: JOB-000001, JOB-000002 - 1 duplicate(s)" in panel.readout
    assert "duplicates: 1" in panel.readout and "duplicates: 1" in panel.html()
    assert lab.jobs(queue).count() == 2


@pytest.mark.parametrize("via", sorted(VIA))
def test_crash_with_slot_keyed_ids_leaves_no_duplicate(lab: emq_lab.Lab, queue: str, via: str) -> None:
    switch, tick = VIA[via]
    panel = CrashPanel(lab, queue)
    switch(panel, True, True)
    tick(panel)
    tick(panel)
    slot = parse_instant(START)
    assert panel.bench.per_slot == {slot: (f"report:{slot}",)}
    assert "the slot's id is already stored: nothing enqueued" in panel.readout
    assert "duplicates: 0" in panel.readout and "duplicates: 0" in panel.html()
    assert lab.jobs(queue).count() == 1


@pytest.mark.parametrize("via", sorted(VIA))
def test_no_fault_fires_one_job_per_slot(lab: emq_lab.Lab, queue: str, via: str) -> None:
    switch, tick = VIA[via]
    panel = CrashPanel(lab, queue)
    switch(panel, False, False)
    for _ in range(4):
        tick(panel)
        lab.clock.advance(minutes=15)
    start = parse_instant(START)
    assert panel.bench.per_slot == {start + i * 15 * MIN: (f"JOB-{i + 1:06d}",) for i in range(4)}
    assert "crashed" not in panel.readout and "restart" not in panel.readout
    assert "duplicates: 0" in panel.readout


@pytest.mark.parametrize("via", sorted(VIA))
def test_crash_reset_empties_the_queue(lab: emq_lab.Lab, queue: str, via: str) -> None:
    switch, tick = VIA[via]
    panel = CrashPanel(lab, queue)
    switch(panel, True, False)
    tick(panel)
    tick(panel)
    if via == "buttons":
        panel.click("Reset")
    else:
        panel.reset()
    assert lab.jobs(queue).count() == 0
    assert "ticks: (none yet)" in panel.readout and "duplicates: 0" in panel.readout
    assert panel.control(FAULT_ON).value is True  # reset keeps the switches


def test_the_switches_follow_the_twin(lab: emq_lab.Lab, queue: str) -> None:
    panel = CrashPanel(lab, queue)
    panel.set(crash=True, slot_keyed=True)
    assert panel.control(FAULT_ON).value is True
    panel.tick()
    panel.click("slot-keyed <name>:<slot_ms>")  # the switch shows slot-keyed already: no new round
    assert "then crashed before advance" in panel.readout
    assert "fault (crash after enqueue): on | occurrence ids: slot-keyed report:<slot_ms>" in panel.readout
    with pytest.raises(ValueError, match="crash: expected True or False"):
        panel.set(crash="on")  # type: ignore[arg-type]
    assert panel.control(FAULT_ON).value is True


def test_switching_the_ids_by_click_starts_a_new_round(lab: emq_lab.Lab, queue: str) -> None:
    panel = CrashPanel(lab, queue)
    panel.click(FAULT_OFF)
    panel.click("Tick (and restart)")
    panel.click("slot-keyed <name>:<slot_ms>")
    assert panel.bench.slot_keyed and panel.bench.crash
    assert lab.jobs(queue).count() == 0 and "ticks: (none yet)" in panel.readout


def test_crash_panel_displays_its_readout(lab: emq_lab.Lab, queue: str) -> None:
    panel = CrashPanel(lab, queue)
    panel.tick()
    bundle = shown(panel)
    assert bundle["text/plain"] == panel.readout
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "ids: fresh JOB- ids from the counter" in panel.html()  # the emq-readout a browser test reads
    for label in ("fault off: crash after enqueue", "Tick (and restart)", "Reset"):
        assert not panel.control(label).disabled


def test_a_double_click_on_a_step_is_said_on_the_note_line(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    read = panel.control("pump reads due")
    read.click()
    assert panel.note.startswith("pump reads due: due: report")
    read.click()  # the second click of a double click, sent before the page showed it off: no exception escapes
    assert panel.note == (
        "pump reads due: that step already ran — press Reset or pick the next step (cancel lands, pump enqueues)"
    )
    assert "that step already ran" in panel.html("emq-note")
    assert [s.step for s in panel.race.taken] == ["read"]  # nothing ran twice
    assert not panel.control("play preset").disabled and not panel.control("reset").disabled  # back on


def test_a_twin_out_of_order_raises_the_words_of_the_note(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.step("read")
    with pytest.raises(ValueError) as refused:
        panel.step("read")
    assert str(refused.value) == panel.note
    assert "that step already ran — press Reset or pick the next step" in str(refused.value)
    assert [entry.name for entry in refused.traceback][1:] == ["step"]  # raised in the twin, not deeper
    with pytest.raises(ValueError, match="take enqueue first") as early:
        panel.step("advance")
    assert panel.note == str(early.value)


def test_choosing_a_preset_says_what_to_press(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    assert panel.note.startswith(f"a fresh start: this panel emptied queue {queue}")
    panel.click("cancel after the advance")
    assert "press play preset" in panel.note
    panel.click("play preset")
    assert panel.note.startswith("played 'cancel after the advance'")


def test_the_fault_switch_reads_and_looks_different_on_and_off(lab: emq_lab.Lab, queue: str) -> None:
    panel = CrashPanel(lab, queue)
    toggle = panel.control("fault off: crash after enqueue")
    off = (toggle.button_style, toggle.icon)
    panel.click("fault off: crash after enqueue")
    assert panel.control("fault ON: crash after enqueue") is toggle
    assert off == ("", "check") and (toggle.button_style, toggle.icon) == ("danger", "bolt")
    assert panel.note.startswith("the fault is ON")
    panel.click("Tick (and restart)")
    assert "then crashed before advance" in panel.note
    assert not any(panel.control(label).disabled for label in (FAULT_ON, "Tick (and restart)", "Reset"))
    panel.click("fresh JOB- ids")  # the id switch is on too (a control that is off refuses the click)
