"""The cancel dive's keyspace picture from ``race.preset_marks``: a row per preset order, a column per step."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from ..clock import hhmm
from ..dives.race import Mark
from . import config  # noqa: F401 - plotly's config for every figure (no logo, no cloud button)

Rounds = Mapping[str, Sequence[Mark]]

MEMBER_DX, RECORD_DX = -0.12, 0.12  # the member's and the record's place within a step's column
FIRED_DY, STEP_DY = 0.3, -0.3  # the star above the pair, the step's name below it
# colour-blind safe (Okabe-Ito); each state also has its own shape (filled, hollow, star, ring)
PRESENT, ABSENT, FIRED, BROKEN, TEXT = "#009E73", "#8c959f", "#E69F00", "#D55E00", "#444"
LEGEND = "each step: the member's next run (- no member), the record (R, - none), * an occurrence fired"


def _cell(mark: Mark) -> str:
    member = hhmm(mark.next_ms) if mark.next_ms is not None else "-"
    return f"{mark.step} {member} {'R' if mark.has_record else '-'}{' *' * mark.jobs_made}"


def keyspace_marks(rounds: Rounds) -> list[str]:
    """The marks the figure draws, as text a cell can print: the legend, then one line per preset."""
    width = max((len(label) for label in rounds), default=0)
    return [LEGEND] + [f"{label:<{width}}  " + " | ".join(map(_cell, marks)) for label, marks in rounds.items()]


def _rows(rounds: Rounds) -> dict[str, int]:
    """The first preset on top: y = n-1 ... 0."""
    return {label: len(rounds) - 1 - i for i, label in enumerate(rounds)}


def _scatter(
    rounds: Rounds, keep: Callable[[Mark], bool], dx: float, dy: float, hover: Callable[[Mark], str]
) -> dict[str, Any]:
    """x, y and hover text of the marks ``keep`` selects, placed at (column + dx, row + dy)."""
    rows = _rows(rounds)
    chosen = [(c, rows[label], m) for label, marks in rounds.items() for c, m in enumerate(marks) if keep(m)]
    return {
        "x": [c + dx for c, _, _ in chosen],
        "y": [r + dy for _, r, _ in chosen],
        "hovertext": [f"after {m.step}: {hover(m)}" for _, _, m in chosen],
        "hoverinfo": "text",
    }


def _member(m: Mark) -> str:
    return f"registry member, next run {hhmm(m.next_ms)}" if m.next_ms is not None else "no registry member"


def _record(m: Mark) -> str:
    return f"record {'present' if m.has_record else 'absent'}"


# The pairs drawn in every cell: what, where in the cell, its symbol, whether a mark has it, its hover.
_PAIRS: tuple[tuple[str, float, str, Callable[[Mark], bool], Callable[[Mark], str]], ...] = (
    ("member", MEMBER_DX, "circle", lambda m: m.has_member, _member),
    ("record", RECORD_DX, "square", lambda m: m.has_record, _record),
)


def keyspace_figure(rounds: Rounds, *, title: str = "") -> go.Figure:
    """Per step: the member (circle) and record (square), filled if present, a star if it fired, its
    name below and a ring where the invariant broke (the same marks give the same JSON)."""
    figure = go.Figure()
    for what, dx, symbol, has, hover in _PAIRS:
        for present in (True, False):
            colour = PRESENT if present else ABSENT

            def keep(m: Mark, has: Callable[[Mark], bool] = has, present: bool = present) -> bool:
                return has(m) is present

            figure.add_trace(
                go.Scatter(
                    name=f"{what} {'present' if present else 'absent'}",
                    mode="markers",
                    marker={"symbol": symbol if present else f"{symbol}-open", "size": 15, "color": colour},
                    **_scatter(rounds, keep, dx, 0, hover),
                )
            )
    made = _scatter(rounds, lambda m: m.jobs_made > 0, 0, FIRED_DY, lambda m: f"{m.jobs_made} occurrence(s) enqueued")
    figure.add_trace(
        go.Scatter(
            name="occurrence fired",
            mode="markers",
            marker={"symbol": "star", "size": 16, "color": FIRED},
            **made,
        )
    )
    figure.add_trace(
        go.Scatter(
            name="invariant broken",
            mode="markers",
            marker={"symbol": "circle-open", "size": 40, "color": BROKEN, "line": {"width": 2}},
            **_scatter(rounds, lambda m: not m.consistent, 0, 0, lambda m: "a registry member without a record"),
        )
    )
    steps = _scatter(rounds, lambda m: True, 0, STEP_DY, lambda m: m.step)
    figure.add_trace(
        go.Scatter(
            name="step",
            mode="text",
            x=steps["x"],
            y=steps["y"],
            text=[mark.step for marks in rounds.values() for mark in marks],
            textfont={"size": 11, "color": TEXT},
            hoverinfo="skip",
            showlegend=False,
        )
    )
    rows = _rows(rounds)
    columns = max((len(marks) for marks in rounds.values()), default=0)
    figure.update_layout(
        title=title or None,
        height=140 + 80 * len(rounds),
        margin={"l": 230, "r": 20, "t": 50 if title else 20, "b": 40},
        xaxis={
            "tickmode": "array",
            "tickvals": list(range(columns)),
            "ticktext": ["start", *(f"step {n}" for n in range(1, columns))],
            "range": [-0.5, columns - 0.5],
            "side": "top",
            "fixedrange": True,
        },
        yaxis={
            "tickmode": "array",
            "tickvals": list(rows.values()),
            "ticktext": list(rows),
            "range": [-0.6, len(rows) - 0.4],
            "zeroline": False,
            "fixedrange": True,
        },
        legend={"orientation": "h", "y": -0.08},
        plot_bgcolor="white",
    )
    return figure
