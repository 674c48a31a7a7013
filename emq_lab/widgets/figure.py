"""FigureView: a plotly figure shown live inside a panel, redrawn whole on every change.

Why not ``plotly.graph_objects.FigureWidget``: it keeps the figure it was created with in its
synced state and sends every later change as a one-off delta. A front end that attaches after
the changes (Voila renders the page once every cell has run; a reloaded JupyterLab tab) draws
the first figure, then applies the next delta to it: the picture disagrees with the sliders.

Here the figure's full JSON is the widget's state: an ``ipywidgets.Output`` whose one output
is the figure as ``application/vnd.plotly.v1+json``. Any front end, whenever it attaches,
draws the current figure with the plotly renderer it already has (no CDN, no extra bundle).
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from ..plots import config as plot_config

PLOTLY_MIME = "application/vnd.plotly.v1+json"


class FigureView:
    """Empty until ``show(figure)``, which replaces what it shows. ``plotted`` is what the page is
    sent: the traces as plain dicts (``name``, ``x``, ``y``, ...), for tests and readouts."""

    def __init__(self) -> None:
        self.widget = widgets.Output(layout=widgets.Layout(width="100%"))
        self.widget.add_class("emq-figure")
        self._spec: dict[str, Any] = {"data": [], "layout": {}}

    def show(self, figure: go.Figure) -> None:
        """Send ``figure`` whole: the one output of the Output widget is replaced."""
        spec = json.loads(figure.to_json())  # plotly's encoder: plain JSON, same as the page gets
        spec["config"] = plot_config.CONFIG  # the lab's one plotly config (no logo, no cloud button)
        self._spec = spec
        self.widget.outputs = ({"output_type": "display_data", "data": {PLOTLY_MIME: spec}, "metadata": {}},)

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
