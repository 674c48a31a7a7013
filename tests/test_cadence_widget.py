"""CadenceExplorer and FastForwardPanel: the twins do what a drag or a run does."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from helpers import shown

import emq_lab
from emq_lab.clock import parse_instant
from emq_lab.dives import cadence
from emq_lab.widgets.cadence import CadenceExplorer, FastForwardPanel

pytestmark = pytest.mark.embedded_only  # the logic is the package's; the backend tests cover the servers

START = parse_instant("2026-01-05T09:00:00Z")


@pytest.fixture
def explorer(lab: emq_lab.Lab, queue: str) -> Iterator[CadenceExplorer]:
    yield CadenceExplorer(lab, prefix=queue)
    for measure in cadence.Measure:
        lab.reset(cadence.lane_queue(measure, queue))


def lane_line(readout: str, measure: str) -> str:
    return next(line for line in readout.splitlines() if line.startswith(measure))


def drawn_releases(explorer: CadenceExplorer, measure: str) -> list[int]:
    """The release markers the figure shows for one lane."""
    return list(explorer.figure.trace(measure)["x"])


def test_the_default_shows_the_course_verdicts(explorer: CadenceExplorer) -> None:
    assert explorer.controls == {"period_minutes": 15, "run_minutes": 4, "cycles": 4, "tick_seconds": 0}
    assert lane_line(explorer.readout, "start-to-start").startswith("start-to-start   09:00 09:15 09:30 09:45")
    assert lane_line(explorer.readout, "start-to-finish").startswith("start-to-finish  09:00 09:19 09:38 09:57")
    assert drawn_releases(explorer, "start-to-finish") == [k * 19 for k in range(4)]  # minutes after the start


def test_dragging_the_run_slider_drags_only_start_to_finish(explorer: CadenceExplorer) -> None:
    explorer.control("run (min)").value = 10  # what a drag does
    assert drawn_releases(explorer, "start-to-finish") == [k * 25 for k in range(4)]
    assert drawn_releases(explorer, "start-to-start") == [k * 15 for k in range(4)]
    assert "drift by run 4: +30 min" in lane_line(explorer.readout, "start-to-finish")
    bars = explorer.figure.trace("start-to-start runs")
    assert list(bars["x"]) == [10] * 4  # each bar spans release -> finish, in minutes
    assert "+30 min" in explorer.html()


def test_the_tick_slider_shows_the_slip_only_the_grid_avoids(explorer: CadenceExplorer) -> None:
    readout = explorer.set(cycles=6, tick_seconds=120)
    assert lane_line(readout, "start-to-start") == (
        "start-to-start   09:00 09:16 09:32 09:48 10:04 10:20  | drift by run 6: +5 min"
    )
    assert lane_line(readout, "fixed grid") == (
        "fixed grid       09:00 09:16 09:30 09:46 10:00 10:16  | drift by run 6: +1 min"
    )
    assert readout.splitlines()[0] == "every 15 min, runs of 4 min, 6 cycles, the pump ticks every 2 min"


def test_set_matches_dragging(lab: emq_lab.Lab, queue: str, explorer: CadenceExplorer) -> None:
    explorer.set(period_minutes=10, run_minutes=3, cycles=5, tick_seconds=45)
    by_set = explorer.readout
    other = CadenceExplorer(lab, prefix=queue)
    for label, value in {"period (min)": 10, "run (min)": 3, "cycles": 5, "pump tick (s)": 45}.items():
        other.control(label).value = value  # a drag of each slider
    assert other.readout == by_set
    assert other.figure.plotted == explorer.figure.plotted


def test_the_period_marks_sit_behind_the_lanes(explorer: CadenceExplorer) -> None:
    explorer.set(period_minutes=20, run_minutes=0, cycles=3)
    marks = explorer.figure.trace("period marks")
    assert [x for x in marks["x"] if x is not None][::2] == [0, 20, 40]


def test_set_refuses_what_no_slider_allows(explorer: CadenceExplorer) -> None:
    before = explorer.readout
    with pytest.raises(ValueError, match="period_minutes: expected an int from 1 to 60"):
        explorer.set(period_minutes=0)
    with pytest.raises(ValueError, match="unknown speed"):
        explorer.set(speed=2)
    assert explorer.readout == before


def test_its_text_is_the_readout(explorer: CadenceExplorer) -> None:
    assert shown(explorer)["text/plain"] == explorer.readout


def test_fast_forward_panel(lab: emq_lab.Lab, queue: str) -> None:
    panel = FastForwardPanel(lab, queue, occurrences=300)
    assert shown(panel)["text/plain"] == "fast-forward: 0 of 300 occurrences fired so far"
    assert (
        panel.run()
        == "fired 300 occurrences; registry rows: 1; jobs made: 300 (the newest 20 kept); newest job: JOB-000300"
    )
    assert panel.control("occurrences").value == 300
    assert lab.repeat(queue).count() == 1


def test_the_page_gets_the_whole_current_figure(explorer: CadenceExplorer) -> None:
    """The Output's one output is the current figure: a front end that attaches late (Voila, a
    reloaded tab) draws what the sliders and readout say, not the first figure."""
    explorer.set(period_minutes=1, run_minutes=0, cycles=8, tick_seconds=90)
    (output,) = explorer.figure.widget.outputs
    sent = output["data"]["application/vnd.plotly.v1+json"]
    assert sent["data"] == explorer.figure.plotted
    releases = sent["data"][[t["name"] for t in sent["data"]].index("start-to-start")]["x"]
    assert releases == [k * 1.5 for k in range(8)]  # 09:00, 09:01:30, ... in minutes
    assert "over 8 cycles" in sent["layout"]["title"]["text"]
    assert "every 1 min, runs of 0 s, 8 cycles" in explorer.readout


def test_many_cycles_thin_the_period_marks_and_never_split_a_time(explorer: CadenceExplorer) -> None:
    explorer.set(period_minutes=1, cycles=24, run_minutes=4)
    marks = [x for x in explorer.figure.trace("period marks")["x"] if x is not None][::2]
    ticks = explorer.figure.layout["xaxis"]["tickvals"]
    assert marks == ticks and len(marks) <= 13  # one dotted line per labelled tick, not a hatch
    assert "white-space:pre-wrap;word-break:normal" in explorer.html()


def test_the_note_is_clear_after_a_redraw(explorer: CadenceExplorer) -> None:
    explorer.control("cycles").value = 5
    assert explorer.note == "" and "over 5 cycles" in explorer.figure.layout["title"]["text"]


def test_fast_forward_clicks_while_running_start_no_second_run(lab: emq_lab.Lab, queue: str) -> None:
    panel = FastForwardPanel(lab, queue, occurrences=2_000)
    button = panel.control("Fast-forward 2,000")
    assert button.layout.width == "auto"
    for _ in range(3):
        button.click()  # three quick clicks (the page may send them before it shows the button off)
    panel.wait()
    assert panel.finishes == panel.starts == 1
    assert not button.disabled and not panel.busy
    assert panel.html().startswith("fired 2,000 occurrences")
    assert lab.jobs(queue).count() == 20  # one run: 2,000 jobs made, the newest 20 kept


def held(monkeypatch: pytest.MonkeyPatch, release: threading.Event) -> None:
    """Every fast-forward run waits for ``release`` before it starts (a run caught mid-way)."""
    run = cadence.fast_forward
    monkeypatch.setattr(cadence, "fast_forward", lambda *args, **kwargs: release.wait() and run(*args, **kwargs))


def test_fast_forward_twin_refuses_while_a_click_runs(
    lab: emq_lab.Lab, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = FastForwardPanel(lab, queue, occurrences=300)
    held(monkeypatch, release := threading.Event())
    worker = panel.start()
    assert worker is not None and panel.busy and not panel.control("Fast-forward 300").disabled  # keeps the focus
    with pytest.raises(ValueError, match="still working on the last click"):
        panel.run()
    assert panel.start() is None and "still working" in panel.note  # a click while it runs
    release.set()
    panel.wait()
    assert panel.finishes == 1 and not panel.busy
    assert panel.html().startswith("fired 300 occurrences") and panel.note == ""


def test_a_cell_rerun_mid_run_waits_for_the_first_panel_and_counts_right(
    lab: emq_lab.Lab, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-running the panel's cell while its run goes on makes a second panel on the same queue:
    its run waits for the first instead of resetting the queue under it."""
    first = FastForwardPanel(lab, queue, occurrences=3_000)
    held(monkeypatch, release := threading.Event())
    assert first.start() is not None
    again = FastForwardPanel(lab, queue, occurrences=3_000)
    assert again.start() is None and "still working" in again.note  # a click on the new panel
    threading.Timer(0.2, release.set).start()
    assert again.run().startswith("fired 3,000 occurrences; registry rows: 1; jobs made: 3,000")
    first.wait()
    assert first.readout.startswith("fired 3,000 occurrences; registry rows: 1; jobs made: 3,000")
