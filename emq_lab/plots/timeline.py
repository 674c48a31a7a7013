"""The cadence timeline: one lane per measure, each run a bar from release to finish, the
intended period marks drawn behind. A pure function of a ``cadence.Trace``."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..cadence import Measure, Trace
from ..clock import hhmmss

COLOURS = {
    Measure.START_TO_START: "#1f77b4",
    Measure.START_TO_FINISH: "#d62728",
    Measure.GRID: "#2ca02c",
}
MARK_COLOUR = "#9a9a9a"


def _lane_y(trace: Trace) -> dict[Measure, int]:
    """The top lane first: y = n-1 ... 0."""
    count = len(trace.lanes)
    return {lane.measure: count - 1 - i for i, lane in enumerate(trace.lanes)}


def traces(trace: Trace) -> list[dict[str, Any]]:
    """The figure's traces as plain dicts, in a fixed order: the period marks, then a bar and a
    release-marker trace per lane. A live view updates them in place by index."""
    ys = _lane_y(trace)
    top = len(trace.lanes) - 0.5
    mark_x: list[int | None] = []
    mark_y: list[float | None] = []
    for mark in trace.period_marks():
        mark_x += [mark, mark, None]
        mark_y += [-0.5, top, None]
    out: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "name": "period marks",
            "x": mark_x,
            "y": mark_y,
            "mode": "lines",
            "line": {"color": MARK_COLOUR, "width": 1, "dash": "dot"},
            "hoverinfo": "skip",
        }
    ]
    for lane in trace.lanes:
        y = ys[lane.measure]
        colour = COLOURS[lane.measure]
        hover = [
            f"{lane.measure.value}<br>{run.job_id}<br>released {hhmmss(run.release_ms)}"
            f"<br>finished {hhmmss(run.finish_ms)}"
            for run in lane.runs
        ]
        out.append(
            {
                "type": "bar",
                "name": f"{lane.measure.value} runs",
                "orientation": "h",
                "base": [run.release_ms for run in lane.runs],
                "x": [run.finish_ms - run.release_ms for run in lane.runs],
                "y": [y] * len(lane.runs),
                "width": 0.5,
                "marker": {"color": colour, "opacity": 0.6},
                "hovertext": hover,
                "hoverinfo": "text",
                "showlegend": False,
            }
        )
        out.append(
            {
                "type": "scatter",
                "name": lane.measure.value,
                "x": lane.releases,
                "y": [y] * len(lane.runs),
                "mode": "markers",
                "marker": {"color": colour, "symbol": "line-ns", "size": 18, "line": {"width": 3, "color": colour}},
                "hovertext": hover,
                "hoverinfo": "text",
            }
        )
    return out


def layout(trace: Trace) -> dict[str, Any]:
    """Axes and titles: a date x-axis from the start to the last finish, one tick per lane."""
    ys = _lane_y(trace)
    end = max(trace.period_marks()[-1], *(run.finish_ms for lane in trace.lanes for run in lane.runs))
    pad = max(trace.every_ms // 4, 60_000)
    return {
        "title": {"text": f"release times over {trace.cycles} cycles, one lane per measure"},
        "xaxis": {"type": "date", "range": [trace.start_ms - pad, end + pad], "title": {"text": "time (UTC)"}},
        "yaxis": {
            "tickmode": "array",
            "tickvals": [ys[lane.measure] for lane in trace.lanes],
            "ticktext": [lane.measure.value for lane in trace.lanes],
            "range": [-0.6, len(trace.lanes) - 0.4],
            "fixedrange": True,
        },
        "barmode": "overlay",
        "height": 340,
        "margin": {"l": 120, "r": 20, "t": 50, "b": 90},
        "legend": {"orientation": "h", "y": -0.42},
    }


def timeline(trace: Trace) -> go.Figure:
    """A standalone figure of ``trace`` (no random ids: the same trace gives the same JSON)."""
    return go.Figure(data=traces(trace), layout=layout(trace))
