"""The next-run exercise's figure: the learner's releases beside the reference's, each run a bar
from release to finish, the first release where they part marked. A pure function of a
``Timelines`` (what ``exercises.next_run`` keeps in ``check.detail``)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..clock import hhmm, hhmmss
from ..exercises.next_run_check import Timelines
from ..schedule import MINUTE_MS
from . import config  # noqa: F401 - plotly's config for every figure (no logo, no cloud button)

LANES = (("yours", "#D55E00"), ("start-to-start", "#0072B2"))  # colour-blind safe (Okabe-Ito)
PART_COLOUR = "#555555"


def _x(lines: Timelines, ms: int) -> float:
    """Minutes since the start (a numeric axis labelled HH:MM, as the cadence timeline)."""
    return (ms - lines.start_ms) / MINUTE_MS


def traces(lines: Timelines) -> list[dict[str, Any]]:
    """Per lane a bar trace (the runs) and a marker trace (the releases), yours on top."""
    out: list[dict[str, Any]] = []
    for y, ((label, colour), releases) in zip(
        (1, 0), zip(LANES, (lines.yours, lines.reference), strict=True), strict=True
    ):
        hover = [f"{label}<br>run #{i + 1} released {hhmmss(ms)}" for i, ms in enumerate(releases)]
        out.append(
            {
                "type": "bar",
                "name": f"{label} runs",
                "orientation": "h",
                "base": [_x(lines, ms) for ms in releases],
                "x": [lines.run_ms / MINUTE_MS] * len(releases),
                "y": [y] * len(releases),
                "width": 0.5,
                "marker": {"color": colour, "opacity": 0.5},
                "hovertext": hover,
                "hoverinfo": "text",
                "showlegend": False,
            }
        )
        out.append(
            {
                "type": "scatter",
                "name": label,
                "x": [_x(lines, ms) for ms in releases],
                "y": [y] * len(releases),
                "mode": "markers",
                "marker": {"color": colour, "symbol": "line-ns", "size": 18, "line": {"width": 3, "color": colour}},
                "hovertext": hover,
                "hoverinfo": "text",
            }
        )
    return out


def _part(lines: Timelines) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The vertical marker and its note at the first release where the lanes part (none if they agree)."""
    i = lines.parted
    if i is None or i >= len(lines.reference):
        return [], []
    x = _x(lines, lines.reference[i])
    shape = {
        "type": "line",
        "x0": x,
        "x1": x,
        "y0": -0.5,
        "y1": 1.5,
        "line": {"color": PART_COLOUR, "width": 1, "dash": "dash"},
    }
    note = {"x": x, "y": 1.5, "text": f"run #{i + 1}: they part", "showarrow": False, "yanchor": "bottom"}
    return [shape], [note]


def timelines_figure(lines: Timelines) -> go.Figure:
    """The two lanes; the x axis from the start to the last finish, HH:MM at each reference release."""
    every = [*lines.yours, *lines.reference]
    end = max(every, default=lines.start_ms) + lines.run_ms
    pad = max(lines.setting.every_ms // 4, MINUTE_MS)
    ticks = sorted(set(lines.reference))
    shapes, notes = _part(lines)
    layout = {
        "title": {"text": "your rule beside start-to-start"},
        "xaxis": {
            "type": "linear",
            "range": [_x(lines, lines.start_ms - pad), _x(lines, end + pad)],
            "tickmode": "array",
            "tickvals": [_x(lines, ms) for ms in ticks],
            "ticktext": [hhmm(ms) if ms % MINUTE_MS == 0 else hhmmss(ms) for ms in ticks],
            "title": {"text": "time (UTC)"},
        },
        "yaxis": {
            "tickmode": "array",
            "tickvals": [1, 0],
            "ticktext": [label for label, _ in LANES],
            "range": [-0.6, 1.9],
            "fixedrange": True,
        },
        "shapes": shapes,
        "annotations": notes,
        "barmode": "overlay",
        "height": 260,
        "margin": {"l": 110, "r": 20, "t": 50, "b": 60},
        "showlegend": False,
    }
    return go.Figure(data=traces(lines), layout=layout)
