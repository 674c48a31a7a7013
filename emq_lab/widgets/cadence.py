"""CadenceExplorer: drag the period, the run, the cycles and the pump's tick, and watch three
measures of the next run hold or drift. FastForwardPanel: a progress bar over a long pump run."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import plotly.graph_objects as go

from ..dives import cadence
from ..plots.timeline import layout, timeline, traces
from .view import View

if TYPE_CHECKING:
    from ..lab import Lab

# control name -> (label, low, high, unit in ms)
CONTROLS: dict[str, tuple[str, int, int, int]] = {
    "period_minutes": ("period (min)", 1, 60, cadence.MINUTE_MS),
    "run_minutes": ("run (min)", 0, 30, cadence.MINUTE_MS),
    "cycles": ("cycles", 1, 24, 1),
    "tick_seconds": ("pump tick (s)", 0, 120, 1000),
}


def delta(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The part of ``new`` that differs from ``old``, nested dicts compared key by key: updating a
    plotly object that shows ``old`` with it leaves the object showing ``new``."""
    out: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key, _ABSENT)
        if isinstance(value, dict) and isinstance(before, dict):
            inner = delta(before, value)
            if inner:
                out[key] = inner
        elif before is _ABSENT or before != value:
            out[key] = value
    return out


_ABSENT = object()


class CadenceExplorer(View):
    """Sliders for the period, the run duration, the cycles and the pump's tick interval; a
    timeline with one lane per measure and a readout of the release times and the drift.

    Every lane comes from ``emq_lab.cadence.trace``: the real register, pump and advance scripts
    on the lab's backend, on SimClocks. Twins: ``set(**controls)``, ``readout``, ``trace``.
    """

    def __init__(
        self,
        lab: Lab,
        *,
        period_minutes: int = 15,
        run_minutes: int = 4,
        cycles: int = 4,
        tick_seconds: int = 0,
        start_ms: int | None = None,
        prefix: str = "cadence",
    ) -> None:
        self.lab = lab
        self.prefix = prefix
        self.start_ms = start_ms if start_ms is not None else int(getattr(lab.clock, "start_ms", lab.clock.now_ms()))
        initial = {
            "period_minutes": period_minutes,
            "run_minutes": run_minutes,
            "cycles": cycles,
            "tick_seconds": tick_seconds,
        }
        self._sliders: dict[str, widgets.IntSlider] = {}
        for key, (label, low, high, _) in CONTROLS.items():
            slider = widgets.IntSlider(
                value=self._checked(key, initial[key]),
                min=low,
                max=high,
                description=label,
                continuous_update=False,
                style={"description_width": "110px"},
            )
            slider.observe(self._on_change, names="value")
            self._sliders[key] = slider
        self._holding = False
        self._trace: cadence.Trace | None = None
        self._figure = go.FigureWidget()
        self._drawn: tuple[list[dict[str, Any]], dict[str, Any]] | None = None  # what the figure shows
        self._readout = widgets.HTML()
        self._readout.add_class("emq-readout")  # the readout, findable by a browser test
        self.box = widgets.VBox(
            [
                widgets.HBox(list(self._sliders.values())[:2]),
                widgets.HBox(list(self._sliders.values())[2:]),
                self._figure,
                self._readout,
            ]
        )
        self.act(self.refresh)  # a dead backend: the panel shows with its status line

    # -- twins ---------------------------------------------------------------------------------

    def set(self, **controls: int) -> str:
        """Move any of ``period_minutes``, ``run_minutes``, ``cycles``, ``tick_seconds`` as the
        sliders would, recompute once, and return the readout."""
        unknown = sorted(set(controls) - set(CONTROLS))
        if unknown:
            raise ValueError(f"controls: unknown {', '.join(unknown)}; use {', '.join(CONTROLS)}")
        checked = {key: self._checked(key, value) for key, value in controls.items()}
        self._holding = True
        try:
            for key, value in checked.items():
                self._sliders[key].value = value
        finally:
            self._holding = False
        self.refresh()
        return self.readout

    @property
    def controls(self) -> dict[str, int]:
        return {key: int(slider.value) for key, slider in self._sliders.items()}

    @property
    def trace(self) -> cadence.Trace:
        """The lanes for the current controls (run on first use)."""
        if self._trace is None:
            self._trace = self._compute()
        return self._trace

    @property
    def readout(self) -> str:
        return self.trace.readout

    def refresh(self) -> None:
        """Re-run the lanes for the current controls and redraw the figure in place."""
        self._trace = self._compute()
        fresh_traces, fresh_layout = traces(self._trace), layout(self._trace)
        if self._drawn is None:  # the first draw
            self._figure.update(timeline(self._trace).to_dict())
        else:
            # Only what changed is handed to plotly (its checks of every property cost more than
            # the lanes): the figure ends the same as after a full update.
            drawn_traces, drawn_layout = self._drawn
            with self._figure.batch_update():
                for shown, old, fresh in zip(self._figure.data, drawn_traces, fresh_traces, strict=True):
                    changed = delta(old, {k: v for k, v in fresh.items() if k != "type"})
                    if changed:
                        shown.update(changed)
                changed = delta(drawn_layout, fresh_layout)
                if changed:
                    self._figure.update_layout(changed)
        self._drawn = (fresh_traces, fresh_layout)
        self._readout.value = self._html()

    # -- internals -----------------------------------------------------------------------------

    @staticmethod
    def _checked(key: str, value: Any) -> int:
        label, low, high, _ = CONTROLS[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{key}: expected an int from {low} to {high}, got {value!r}")
        return value

    def _compute(self) -> cadence.Trace:
        c = {key: int(slider.value) * CONTROLS[key][3] for key, slider in self._sliders.items()}
        return cadence.trace(
            self.lab,
            every_ms=c["period_minutes"],
            run_ms=c["run_minutes"],
            cycles=c["cycles"],
            tick_ms=c["tick_seconds"],
            start_ms=self.start_ms,
            prefix=self.prefix,
        )

    def _on_change(self, _change: dict[str, Any]) -> None:
        if not self._holding:
            self.act(self.refresh)

    def _html(self) -> str:
        return f"<pre style='font-size:12px;line-height:1.4'>{escape(self.readout)}</pre>"


class FastForwardPanel(View):
    """A progress bar over ``cadence.fast_forward``: tick the pump once per period on a SimClock
    until it fired ``occurrences`` times. Twins: ``run()``, ``readout``, ``result``."""

    def __init__(
        self, lab: Lab, queue: str = "cadence-ff", *, occurrences: int = 10_000, every_ms: int = cadence.MINUTE_MS
    ) -> None:
        self.lab = lab
        self.queue = queue
        self.occurrences = occurrences
        self.every_ms = every_ms
        self.result: cadence.FastForward | None = None
        self._bar = widgets.IntProgress(value=0, min=0, max=occurrences, description="occurrences")
        self._label = widgets.Label(self.readout)
        self._label.add_class("emq-readout")
        self._button = widgets.Button(description=f"Fast-forward {occurrences:,}", button_style="primary")
        self._button.on_click(lambda _: self.act(self.run))
        self.box = widgets.VBox([widgets.HBox([self._button, self._bar]), self._label])

    def run(self) -> str:
        """Reset the queue, fire every occurrence (moving the bar), and return the readout."""
        self._bar.value = 0
        self.result = cadence.fast_forward(
            self.lab, self.queue, occurrences=self.occurrences, every_ms=self.every_ms, on_progress=self._progress
        )
        self._label.value = self.readout
        return self.readout

    @property
    def readout(self) -> str:
        if self.result is None:
            return f"fast-forward: 0 of {self.occurrences:,} occurrences fired so far"
        return self.result.readout

    def _progress(self, fired: int) -> None:
        self._bar.value = fired
