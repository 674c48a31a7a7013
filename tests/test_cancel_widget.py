"""CancelPanel: the twins, the buttons, and what the panel shows."""

from __future__ import annotations

import pytest

import emq_lab
from emq_lab.widgets.cancel import CancelPanel


def test_only_read_and_cancel_can_start_a_round(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    assert panel.enabled == {"read": True, "cancel": True, "enqueue": False, "advance": False}
    assert "steps: (none yet)" in panel.readout
    assert "registry: report @ 09:00" in panel.readout


def test_a_click_takes_the_step_and_unlocks_the_next(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel._buttons["read"].click()
    assert panel.enabled == {"read": False, "cancel": True, "enqueue": True, "advance": False}
    panel._buttons["enqueue"].click()
    assert "JOB-000001" in panel._keyspace.value
    assert panel.enabled["advance"]


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
    assert not any(panel.enabled.values())
    assert panel._preset.value == preset


def test_the_play_button_plays_the_chosen_preset(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel._preset.value = "after-advance"
    panel._play.click()
    assert "steps: read -> enqueue -> advance -> cancel" in panel.readout


def test_reset_starts_a_fresh_round(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.play("after-read")
    panel._reset.click()
    assert "steps: (none yet)" in panel.readout
    assert "jobs:     (none)" in panel.readout
    assert panel.enabled["read"] and not panel.enabled["advance"]


def test_displayed_text_is_the_readout(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    panel.step("read")
    bundle = panel._repr_mimebundle_()
    assert bundle["text/plain"] == panel.readout
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_unknown_preset_is_refused(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue)
    with pytest.raises(ValueError, match="not a preset"):
        panel.play("never")
