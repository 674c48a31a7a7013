"""CadenceExplorer and FastForwardPanel: the twins do what a drag or a run does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import emq_lab
from emq_lab.clock import parse_instant
from emq_lab.dives import cadence
from emq_lab.widgets.cadence import CadenceExplorer, FastForwardPanel

MIN = 60_000
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
    shown = next(t for t in explorer._figure.data if t.name == measure)
    return list(shown.x)


def test_the_default_shows_the_course_verdicts(explorer: CadenceExplorer) -> None:
    assert explorer.controls == {"period_minutes": 15, "run_minutes": 4, "cycles": 4, "tick_seconds": 0}
    assert lane_line(explorer.readout, "start-to-start").startswith("start-to-start   09:00 09:15 09:30 09:45")
    assert lane_line(explorer.readout, "start-to-finish").startswith("start-to-finish  09:00 09:19 09:38 09:57")
    assert drawn_releases(explorer, "start-to-finish") == [k * 19 for k in range(4)]  # minutes after the start


def test_dragging_the_run_slider_drags_only_start_to_finish(explorer: CadenceExplorer) -> None:
    explorer._sliders["run_minutes"].value = 10  # what a drag does
    assert drawn_releases(explorer, "start-to-finish") == [k * 25 for k in range(4)]
    assert drawn_releases(explorer, "start-to-start") == [k * 15 for k in range(4)]
    assert "drift after 4 cycles: +30 min" in lane_line(explorer.readout, "start-to-finish")
    bars = next(t for t in explorer._figure.data if t.name == "start-to-start runs")
    assert list(bars.x) == [10] * 4  # each bar spans release -> finish, in minutes
    assert "+30 min" in explorer._readout.value


def test_the_tick_slider_shows_the_slip_only_the_grid_avoids(explorer: CadenceExplorer) -> None:
    readout = explorer.set(cycles=6, tick_seconds=120)
    assert lane_line(readout, "start-to-start") == (
        "start-to-start   09:00 09:16 09:32 09:48 10:04 10:20  | drift after 6 cycles: +5 min"
    )
    assert lane_line(readout, "fixed grid") == (
        "fixed grid       09:00 09:16 09:30 09:46 10:00 10:16  | drift after 6 cycles: +1 min"
    )
    assert readout.splitlines()[0] == "every 15 min, runs of 4 min, 6 cycles, the pump ticks every 2 min"


def test_set_matches_dragging(lab: emq_lab.Lab, queue: str, explorer: CadenceExplorer) -> None:
    explorer.set(period_minutes=10, run_minutes=3, cycles=5, tick_seconds=45)
    by_set = explorer.readout
    other = CadenceExplorer(lab, prefix=queue)
    for key, value in {"period_minutes": 10, "run_minutes": 3, "cycles": 5, "tick_seconds": 45}.items():
        other._sliders[key].value = value
    assert other.readout == by_set
    assert [list(t.x) for t in other._figure.data] == [list(t.x) for t in explorer._figure.data]


def test_the_period_marks_sit_behind_the_lanes(explorer: CadenceExplorer) -> None:
    explorer.set(period_minutes=20, run_minutes=0, cycles=3)
    marks = next(t for t in explorer._figure.data if t.name == "period marks")
    assert [x for x in marks.x if x is not None][::2] == [0, 20, 40]


def test_set_refuses_what_no_slider_allows(explorer: CadenceExplorer) -> None:
    before = explorer.readout
    with pytest.raises(ValueError, match="period_minutes: expected an int from 1 to 60"):
        explorer.set(period_minutes=0)
    with pytest.raises(ValueError, match="unknown speed"):
        explorer.set(speed=2)
    assert explorer.readout == before


def test_its_text_is_the_readout(explorer: CadenceExplorer) -> None:
    assert explorer._repr_mimebundle_()["text/plain"] == explorer.readout


def test_fast_forward_panel(lab: emq_lab.Lab, queue: str) -> None:
    panel = FastForwardPanel(lab, queue, occurrences=300)
    assert panel._repr_mimebundle_()["text/plain"] == "fast-forward: 0 of 300 occurrences fired so far"
    assert panel.run() == "fired 300 occurrences; registry rows: 1; jobs waiting: 300; newest job: JOB-000300"
    assert panel._bar.value == 300
    assert lab.repeat(queue).count() == 1
