"""The registry pictures of the upsert dive: after the same boots, where each strategy's
registry rows and pending occurrences sit on the clock, the jobs the pump then fired, and what
a boot storm writes beside BullMQ. Pure functions of the state."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import plotly.graph_objects as go

from ..clock import hhmm
from ..dives.upsert import BULLMQ_MEASURED, Fired, Measured, Registry, StormResult, writes_per_name
from . import config  # noqa: F401 - plotly's config for every figure (no logo, no cloud button)


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def registry_marks(states: Mapping[str, Registry]) -> list[str]:
    """The marks the figure draws, one line per strategy, as text a cell can print."""
    lines = []
    for label, state in states.items():
        rows = ", ".join(hhmm(score) for _, score in state.rows) or "none"
        pending = ", ".join(hhmm(score) for _, score in state.pending) or "none"
        lines.append(f"{label:<14} rows at {rows} · pending runs at {pending}")
    return lines


def _markers(states: Mapping[str, Registry], field: str, *, name: str, symbol: str, size: int, what: str) -> go.Scatter:
    """One marker per (member, score) pair of each state's ``field`` (``rows`` or ``pending``)."""
    pairs = [(label, member, score) for label, state in states.items() for member, score in getattr(state, field)]
    return go.Scatter(
        name=name,
        x=[_at(score) for _, _, score in pairs],
        y=[label for label, _, _ in pairs],
        text=[member for _, member, _ in pairs],
        mode="markers",
        marker={"symbol": symbol, "size": size},
        hovertemplate=f"%{{y}}<br>{what} %{{x|%H:%M}}<extra></extra>",
    )


def registry_figure(states: Mapping[str, Registry], *, title: str = "") -> go.Figure:
    """One lane per strategy: a circle per registry row, a cross per pending occurrence."""
    labels = list(states)
    figure = go.Figure()
    figure.add_trace(
        _markers(states, "rows", name="registry row", symbol="circle", size=16, what="row %{text}<br>next run")
    )
    figure.add_trace(
        _markers(states, "pending", name="pending occurrence", symbol="x", size=10, what="%{text}<br>runs at")
    )
    figure.update_layout(
        title=title or None,
        height=120 + 60 * len(labels),
        margin={"l": 120, "r": 20, "t": 50 if title else 20, "b": 40},
        xaxis={"title": "run time (UTC)", "tickformat": "%H:%M"},
        yaxis={"categoryorder": "array", "categoryarray": labels[::-1], "type": "category"},
        legend={"orientation": "h", "y": -0.35},
    )
    return figure


def fired_marks(fired: Fired) -> list[str]:
    """The marks ``fired_figure`` draws, one line per strategy, as text a cell can print."""
    return [
        f"{strategy.label:<14} jobs at " + (", ".join(f"{hhmm(o.fired_at_ms)} {o.job_id}" for o in jobs) or "none")
        for strategy, jobs in fired.jobs.items()
    ]


def fired_figure(fired: Fired, *, title: str = "") -> go.Figure:
    """One lane per strategy, a diamond for each job the pump fired, labelled with its id."""
    labels = [strategy.label for strategy in fired.jobs]
    pairs = [(s.label, o) for s, jobs in fired.jobs.items() for o in jobs]
    figure = go.Figure(
        go.Scatter(
            name="job fired",
            x=[_at(o.fired_at_ms) for _, o in pairs],
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
        xaxis={"title": "fired at (UTC)", "tickformat": "%H:%M", "range": [_at(fired.start_ms), _at(fired.until_ms)]},
        yaxis={"categoryorder": "array", "categoryarray": labels[::-1], "type": "category"},
        showlegend=False,
    )
    return figure


def writes_figure(storm: StormResult, measured: Measured = BULLMQ_MEASURED, *, title: str = "") -> go.Figure:
    """Server writes per name on boot #1 and boot #2: a bar per boot, this storm's beside the
    stored BullMQ run's (``upsert.beside`` prints the same numbers)."""
    bars = writes_per_name(storm, measured)
    figure = go.Figure()
    for label, boots in bars.items():
        figure.add_trace(
            go.Bar(
                name=label,
                x=["boot #1", "boot #2"],
                y=list(boots),
                text=[f"{each:,.0f}" for each in boots],
                textposition="outside",
                hovertemplate=f"{label}<br>%{{x}}: %{{y:,.1f}} writes per name<extra></extra>",
            )
        )
    top = max(max(boots) for boots in bars.values())
    figure.update_layout(
        title=title or None,
        barmode="group",
        height=320,
        margin={"l": 60, "r": 20, "t": 50 if title else 20, "b": 40},
        yaxis={"title": "server writes per name", "range": [0, top * 1.2 or 1]},
        legend={"orientation": "h", "y": -0.15},
    )
    return figure
