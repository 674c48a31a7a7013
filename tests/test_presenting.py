"""Presenting: figures without plotly's logo and cloud button, the keyboard focus kept on a control
after it ran, and a preset menu that names only what is on screen."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from helpers import clickable

import emq_lab
from emq_lab.clock import SimClock
from emq_lab.dives import race
from emq_lab.plots import config, fired, timeline
from emq_lab.widgets import BootPanel, CancelPanel
from emq_lab.widgets.cancel import MANUAL
from emq_lab.widgets.figure import FigureView


def lab() -> emq_lab.Lab:
    return emq_lab.connect(clock=SimClock("2026-01-05T09:00:00Z"), namespace="presenting")  # embedded


@pytest.mark.parametrize("renderer", ["plotly_mimetype", "jupyterlab", "notebook_connected"])
def test_a_figure_is_shown_without_the_logo_or_the_share_button(renderer: str) -> None:
    assert fired.config is config and timeline.config is config  # each figure module sets it up
    bundle = pio.renderers[renderer].to_mimebundle(go.Figure().to_dict())
    shown = bundle.get("application/vnd.plotly.v1+json", {}).get("config") or pio.renderers[renderer].config
    assert shown["displaylogo"] is False and shown["showSendToCloud"] is False
    assert "lasso2d" in shown["modeBarButtonsToRemove"]
    view = FigureView()
    view.show(go.Figure())
    assert view.widget.outputs[0]["data"]["application/vnd.plotly.v1+json"]["config"] == config.CONFIG


@pytest.fixture
def focused(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The widgets that were sent the focus, in order (what the page would do with the message)."""
    sent: list[Any] = []
    monkeypatch.setattr(widgets.DOMWidget, "focus", lambda self: sent.append(self))
    return sent


def test_a_panel_button_gets_the_focus_back_after_its_run(focused: list[Any]) -> None:
    panel = BootPanel(lab(), "presenting-boot")
    panel.click("Boot #1")
    first = panel.control("Boot #1")
    assert focused == [first] and not first.disabled


def test_a_step_that_ran_hands_the_focus_to_the_next_step(focused: list[Any]) -> None:
    panel = CancelPanel(lab(), "presenting-race")
    panel.click("pump reads due")
    assert panel.control("pump reads due").disabled  # it ran: the focus cannot stay on it
    assert [control.description for control in focused] == ["cancel lands"]  # the next step that is on


def test_the_last_step_hands_the_focus_to_reset_not_the_preset_menu(focused: list[Any]) -> None:
    panel = CancelPanel(lab(), "presenting-last")
    for label in ("pump reads due", "pump enqueues", "pump advances"):
        panel.click(label)
    assert [control.description for control in focused] == ["cancel lands", "cancel lands", "cancel lands"]
    panel.click("cancel lands")  # the last step still open: every step button is off now
    assert not any(clickable(panel).values())
    assert focused[-1] is panel.control("reset") and not focused[-1].disabled
    panel.click("reset")  # and from reset, the round starts over on the first step
    assert focused[-1] is panel.control("reset") and clickable(panel)["read"]


def test_the_preset_menu_names_a_preset_only_when_it_is_on_screen() -> None:
    panel = CancelPanel(lab(), "presenting-presets")
    menu = panel.control("preset")
    keys = [key for _, key in menu.options]
    assert keys == [MANUAL, *race.PRESET_LABELS]  # manual, then the five presets the prose names
    panel.play("after-enqueue")
    assert panel.preset == "after-enqueue" and "preset: cancel between enqueue and advance" in panel.readout
    panel.reset()
    panel.step("read")
    assert panel.preset == MANUAL, "manual steps: the menu no longer names the preset played before"
    assert "preset:" not in panel.readout.splitlines()[0]
    with pytest.raises(ValueError, match="preset: pick one in the menu"):
        panel.play(MANUAL)
    panel.click("cancel after the advance")  # a learner's choice is said, not played
    assert "press play preset" in panel.note
