"""FigureView: a plotly figure inside a panel, sent whole on every change as the one output of an ``ipywidgets.Output``;
unlike ``FigureWidget``'s deltas, a front end that attaches later (Voila, a reloaded tab) draws the current figure."""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from ..plots import config as plot_config

PLOTLY_MIME = "application/vnd.plotly.v1+json"


class FigureView:
    """Empty until ``show(figure)``; ``plotted`` is the traces the page is sent, as plain dicts."""

    def __init__(self) -> None:
        self.widget = widgets.Output(layout=widgets.Layout(width="100%"))
        self.widget.add_class("emq-figure")
        self._spec: dict[str, Any] = {"data": [], "layout": {}}

    def show(self, figure: go.Figure) -> None:
        """Send ``figure`` whole: the one output of the Output widget is replaced."""
        self._spec = json.loads(figure.to_json())  # plotly's encoder: plain JSON, same as the page gets
        self._spec["config"] = plot_config.CONFIG
        self.widget.outputs = ({"output_type": "display_data", "data": {PLOTLY_MIME: self._spec}, "metadata": {}},)

    @property
    def plotted(self) -> list[dict[str, Any]]:
        return list(self._spec["data"])

    def trace(self, name: str) -> dict[str, Any]:
        """The plotted trace called ``name`` (KeyError naming the ones there are)."""
        for shown in self._spec["data"]:
            if shown.get("name") == name:
                return dict(shown)
        raise KeyError(f"name: no trace {name!r}; traces: {', '.join(str(t.get('name')) for t in self.plotted)}")

    @property
    def layout(self) -> dict[str, Any]:
        return dict(self._spec["layout"])
