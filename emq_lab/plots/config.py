"""How every figure of the lab is shown: plotly's config, set once for every renderer plotly has.

No plotly logo (a link off the page) and no "Share chart" button (it uploads the figure to a cloud
service; plotly.js 3 shows it by default), and the mode bar keeps only the buttons a reader uses,
so a figure adds four tab stops, not eleven. A figure module imports this module, so the config
holds from the first figure a dive shows, in JupyterLab, Voila and the browser edition alike."""

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
    """Give every plotly renderer that takes a config (the Jupyter mime type's included) ``CONFIG``."""
    for name in list(pio.renderers):
        renderer = pio.renderers[name]
        if isinstance(getattr(renderer, "config", None), dict):
            renderer.config = {**renderer.config, **CONFIG}


configure()
