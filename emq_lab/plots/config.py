"""Plotly's config for every figure of the lab, set on import for every renderer: no logo (a link off
the page), no "Share chart" (a cloud upload), and only the mode-bar buttons a reader uses."""

from __future__ import annotations

from typing import Any

import plotly.io as pio

CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "showSendToCloud": False,
    "displayModeBar": "hover",
    "responsive": True,
    "modeBarButtonsToRemove": [
        "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d", "toggleSpikelines",
        "hoverClosestCartesian", "hoverCompareCartesian",
    ],
}  # fmt: skip


def configure() -> None:
    """Give every plotly renderer that takes a config ``CONFIG``."""
    for name in list(pio.renderers):
        renderer = pio.renderers[name]
        if isinstance(getattr(renderer, "config", None), dict):
            renderer.config = {**renderer.config, **CONFIG}


configure()
