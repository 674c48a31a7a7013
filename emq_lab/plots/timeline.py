"""A ``cadence.Trace`` as a timeline: a lane per measure, each run a bar from release to finish, period marks behind."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..clock import hhmm, hhmmss
from ..dives.cadence import Trace
from ..schedule import MINUTE_MS, Measure
from . import config  # noqa: F401 - plotly's config for every figure (no logo, no cloud button)

# Okabe and Ito's colour-blind-safe palette; the lanes are also told apart by their row and name.
COLOURS = {
    Measure.START_TO_START: "#0072B2",
    Measure.START_TO_FINISH: "#D55E00",
    Measure.GRID: "#009E73",
}
MARK_COLOUR = "#9a9a9a"
MAX_TICKS = 13  # at most this many period marks are drawn and labelled; more would merge into a hatch


def timeline(trace: Trace) -> go.Figure:
    """The period marks, then a bar and a release trace per lane; x in minutes since the start, labelled
    HH:MM (a date axis shows raw epoch numbers in a widget)."""

    def minutes(ms: int) -> float:
        return (ms - trace.start_ms) / MINUTE_MS

    marks = trace.period_marks()
    shown = marks[:: -(-len(marks) // MAX_TICKS)]  # every k-th mark, k the ceiling of marks / MAX_TICKS
    ys = {lane.measure: len(trace.lanes) - 1 - i for i, lane in enumerate(trace.lanes)}  # the top lane first
    mark_x = [x for mark in shown for x in (minutes(mark), minutes(mark), None)]  # a vertical line each
    mark_y = [y for _ in shown for y in (-0.5, len(trace.lanes) - 0.5, None)]
    data: list[dict[str, Any]] = [
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
        data.append(
            {
                "type": "bar",
                "name": f"{lane.measure.value} runs",
                "orientation": "h",
                "base": [minutes(run.release_ms) for run in lane.runs],
                "x": [(run.finish_ms - run.release_ms) / MINUTE_MS for run in lane.runs],
                "y": [y] * len(lane.runs),
                "width": 0.5,
                "marker": {"color": colour, "opacity": 0.6},
                "hovertext": hover,
                "hoverinfo": "text",
                "showlegend": False,
            }
        )
        data.append(
            {
                "type": "scatter",
                "name": lane.measure.value,
                "x": [minutes(release) for release in lane.releases],
                "y": [y] * len(lane.runs),
                "mode": "markers",
                "marker": {"color": colour, "symbol": "line-ns", "size": 18, "line": {"width": 3, "color": colour}},
                "hovertext": hover,
                "hoverinfo": "text",
            }
        )
    end = max(marks[-1], *(run.finish_ms for lane in trace.lanes for run in lane.runs))
    pad = max(trace.every_ms // 4, MINUTE_MS)
    layout = {
        # Left-aligned, so the plot's toolbar (top right, on hover) never covers it.
        "title": {"text": f"release times over {trace.cycles} cycles, one lane per measure", "x": 0, "xanchor": "left"},
        "xaxis": {
            "type": "linear",
            "range": [minutes(trace.start_ms - pad), minutes(end + pad)],
            "tickmode": "array",
            "tickvals": [minutes(mark) for mark in shown],
            "ticktext": [hhmm(mark) for mark in shown],
            "title": {"text": "time (UTC)"},
        },
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
    return go.Figure(data=data, layout=layout)
