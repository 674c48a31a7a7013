"""CadenceExplorer: watch three measures of the next run hold or drift; FastForwardPanel: a long pump run."""

from __future__ import annotations

import threading
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .. import validate
from .._browser import platform
from ..dives import cadence
from ..dives.common import lab_start_ms
from ..plots.timeline import timeline
from ..schedule import MINUTE_MS
from .figure import FigureView
from .view import View, html_part

if TYPE_CHECKING:
    from ..lab import Lab

# control name -> (label, low, high, unit in ms, starting value)
CONTROLS: dict[str, tuple[str, int, int, int, int]] = {
    "period_minutes": ("period (min)", 1, 60, MINUTE_MS, 15),
    "run_minutes": ("run (min)", 0, 30, MINUTE_MS, 4),
    "cycles": ("cycles", 1, 24, 1, 4),
    "tick_seconds": ("pump tick (s)", 0, 120, 1000, 0),
}


class CadenceExplorer(View):
    """Sliders for the period, the run, the cycles and the pump's tick (starting at ``controls``) over the lanes of
    ``cadence.trace``, drawn in ``figure`` and read out. Twins: ``set(**controls)``, ``readout``, ``trace``."""

    def __init__(self, lab: Lab, *, prefix: str = "cadence", **controls: int) -> None:
        super().__init__(lab)
        self.prefix = prefix
        self.start_ms = lab_start_ms(lab)
        self._sliders: dict[str, widgets.IntSlider] = {}
        for key, (label, low, high, _, start) in CONTROLS.items():
            slider = widgets.IntSlider(value=start, min=low, max=high, description=label, continuous_update=False)
            slider.style.description_width = "110px"
            self._on(slider, lambda _: self.act(self.refresh))
            self._sliders[key] = slider
        self._trace: cadence.Trace | None = None
        self.figure = FigureView()
        self._readout = html_part("emq-readout")
        sliders = list(self._sliders.values())
        rows = widgets.HBox(sliders[:2]), widgets.HBox(sliders[2:])
        self._boxed("emq-cadence-explorer", *rows, self._note, self.figure.widget, self._readout)
        self._move(controls)
        self.act(self.refresh)  # a dead backend: the panel shows with its status line

    def set(self, **controls: int) -> str:
        """Move any of the sliders (``period_minutes=5``, ...), recompute once; the readout."""
        self._move(controls)
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
        """Re-run the lanes for the current controls and send the figure whole (the note says so meanwhile)."""
        self._say("drawing the lanes…", "busy")
        self._trace = self._compute()
        self.figure.show(timeline(self._trace))
        # Wrap only at spaces, never inside a time (24 cycles make a long line).
        style = "font-size:14px;line-height:1.45;white-space:pre-wrap;word-break:normal;overflow-wrap:normal"
        self._readout.value = f"<pre style='{style}'>{escape(self.readout)}</pre>"
        self._say("")

    def _move(self, controls: dict[str, Any]) -> None:
        """Set the sliders ``controls`` names, every value checked first, their observers still."""
        unknown = sorted(set(controls) - set(CONTROLS))
        if unknown:
            raise ValueError(f"controls: unknown {', '.join(unknown)}; use {', '.join(CONTROLS)}")
        checked = {}
        for key, value in controls.items():
            _, low, high, _, _ = CONTROLS[key]
            checked[key] = validate.integer(value, key, low, high)
        with self._quietly():
            for key, value in checked.items():
                self._sliders[key].value = value

    def _compute(self) -> cadence.Trace:
        # each control in ms (the cycles: a count)
        value = {key: int(slider.value) * CONTROLS[key][3] for key, slider in self._sliders.items()}
        return cadence.trace(
            self.lab,
            every_ms=value["period_minutes"],
            run_ms=value["run_minutes"],
            cycles=value["cycles"],
            tick_ms=value["tick_seconds"],
            start_ms=self.start_ms,
            prefix=self.prefix,
        )


BUSY = "still working on the last click — wait for it to finish"
RUN_WAIT_S = 120  # how long the twin run() waits for a run already going on the same queue
_QUEUE_LOCKS: dict[tuple[str | None, str], threading.Lock] = {}  # by (namespace, queue), for the kernel
_QUEUE_LOCKS_GUARD = threading.Lock()


class FastForwardPanel(View):
    """A progress bar over ``cadence.fast_forward`` until the pump fired ``occurrences`` times; a click runs in the
    background, its button never off (a press meanwhile only says so). Twins: ``run()``, ``readout``, ``result``."""

    def __init__(self, lab: Lab, queue: str = "cadence-ff", *, occurrences: int = 10_000) -> None:
        super().__init__(lab)
        self.queue = queue
        self.occurrences = occurrences
        self.result: cadence.FastForward | None = None
        self.finishes = 0  # runs finished
        self.starts = 0  # runs begun (a click or the twin)
        # one lock per queue, shared by its panels: a cell re-run mid-run must not reset the first's queue
        with _QUEUE_LOCKS_GUARD:
            self._lock = _QUEUE_LOCKS.setdefault((lab.namespace, queue), threading.Lock())
        self._mine = False  # this panel holds the queue's lock
        self._worker: threading.Thread | None = None
        self._bar = widgets.IntProgress(value=0, min=0, max=occurrences, description="occurrences")
        self._label = widgets.Label(self.readout)
        self._label.add_class("emq-readout")
        self._button = widgets.Button(
            description=f"Fast-forward {occurrences:,}",
            button_style="primary",
            icon="forward",
            layout=widgets.Layout(width="auto", min_width="fit-content"),  # the label whole
        )
        self._button.on_click(lambda _: self.start())
        self._boxed("emq-fast-forward", widgets.HBox([self._button, self._bar]), self._note, self._label)

    def run(self) -> str:
        """Reset the queue, fire every occurrence (moving the bar), and return the readout."""
        # this panel's own click still running: refuse; another panel's run on the queue: wait for it
        if self._mine or not self._lock.acquire(timeout=RUN_WAIT_S):
            raise ValueError(f"fast-forward: {BUSY}")
        self._running()
        return self._run_locked()

    def start(self) -> threading.Thread | None:
        """What a click does: ``run()`` on a background thread; while one runs, only a note."""
        if not self._lock.acquire(blocking=False):
            self._say(BUSY, "refused")
            return None
        self._running()  # marked running before the click's handler returns
        if platform.active():  # the browser edition has no threads: run in the click
            self._attempt(self._run_locked)
            return None
        worker = threading.Thread(target=lambda: self._attempt(self._run_locked), daemon=True)
        self._worker = worker
        worker.start()
        return worker

    def _run_locked(self) -> str:
        try:
            result = self.act(self._fire)
        finally:
            self._label.value = self.readout
            self._bar.value = self.result.occurrences_fired if self.result is not None else self._bar.value
            self._say("")  # "running" or "still working" no longer holds
            self._mine = False
            self._lock.release()
        return self.readout if result is not None else self.note

    def wait(self) -> None:
        """Block until a started run ends (for tests and notebooks)."""
        if self._worker is not None:
            self._worker.join()

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    @property
    def readout(self) -> str:
        if self.result is None:
            return f"fast-forward: 0 of {self.occurrences:,} occurrences fired so far"
        return self.result.readout

    def _fire(self) -> cadence.FastForward:
        self.result = cadence.fast_forward(
            self.lab, self.queue, occurrences=self.occurrences, on_progress=self._progress
        )
        self.finishes += 1
        return self.result

    def _running(self) -> None:
        self._mine = True
        self.starts += 1
        self.result = None
        self._progress(0)
        self._say("running — the bar fills as it fires; a press now only says so", "busy")

    def _progress(self, so_far: int) -> None:
        self._bar.value = so_far
        self._label.value = f"fast-forward: running, {so_far:,} of {self.occurrences:,} fired"
