"""The upsert dive's picture: the jobs the pump fired after the same boots, one lane per strategy."""

from __future__ import annotations

import plotly.graph_objects as go

from ..clock import hhmm, utc
from ..dives.upsert import Fired
from . import config  # noqa: F401 - plotly's config for every figure (no logo, no cloud button)


def fired_marks(fired: Fired) -> list[str]:
    """The marks ``fired_figure`` draws, one line per strategy, as text a cell can print."""
    lines = []
    for strategy, occurrences in fired.occurrences.items():
        jobs = ", ".join(f"{hhmm(o.fired_at_ms)} {o.job_id}" for o in occurrences) or "none"
        lines.append(f"{strategy.label:<14} jobs at {jobs}")
    return lines


def fired_figure(fired: Fired, *, title: str = "") -> go.Figure:
    """One lane per strategy, a diamond for each job the pump fired, labelled with its id."""
    labels = [strategy.label for strategy in fired.occurrences]
    pairs = [(s.label, o) for s, occurrences in fired.occurrences.items() for o in occurrences]
    figure = go.Figure(
        go.Scatter(
            name="job fired",
            x=[utc(o.fired_at_ms) for _, o in pairs],
            y=[label for label, _ in pairs],
            text=[o.job_id for _, o in pairs],
            customdata=[o.name for _, o in pairs],
            mode="markers+text",
            textposition="top center",
            marker={"symbol": "diamond", "size": 14},
            hovertemplate="%{y}<br>%{text} from row %{customdata}<br>fired %{x|%H:%M}<extra></extra>",
        )
    )
    figure.update_layout(
        title=title or None,
        height=140 + 60 * len(labels),
        margin={"l": 120, "r": 20, "t": 50 if title else 20, "b": 40},
        xaxis={"title": "fired at (UTC)", "tickformat": "%H:%M", "range": [utc(fired.start_ms), utc(fired.until_ms)]},
        yaxis={"categoryorder": "array", "categoryarray": labels[::-1], "type": "category"},
        showlegend=False,
    )
    return figure
