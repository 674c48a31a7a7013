"""ClassroomPanel: the instructor's view of every learner's namespace on one server.

A view over ``emq_lab.classroom.overview``: a table per learner (queues, registry sizes, jobs
waiting, which dives' queues exist), a Refresh button, and a refresh every few seconds while a
kernel's event loop runs (scheduled on that asyncio loop, not a thread)."""

from __future__ import annotations

import asyncio
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .. import classroom
from .view import View

if TYPE_CHECKING:
    from ..lab import Lab

EVERY_S = 5.0


def overview_html(view: classroom.Overview) -> str:
    """One table: a row per learner queue, the learner's dives on its first row."""
    head = "".join(
        f"<th style='text-align:left;padding:0 8px'>{h}</th>"
        for h in ("learner", "dives", "queue", "registry", "waiting", "keys")
    )
    rows = []
    for learner in view.learners:
        dives = escape(", ".join(learner.dives) or "no dive yet")
        for i, q in enumerate(learner.queues):
            first = (escape(learner.namespace), dives) if i == 0 else ("", "")
            cells = (*first, f"<code>{escape(q.queue)}</code>", str(q.registrations), str(q.waiting), str(q.keys))
            rows.append("<tr>" + "".join(f"<td style='padding:0 8px'>{c}</td>" for c in cells) + "</tr>")
    if not rows:
        rows.append("<tr><td colspan=6 style='padding:0 8px'><i>no learner has a key yet</i></td></tr>")
    note = "" if view.complete else f"<p><i>stopped after {view.scanned} keys: the list may be incomplete</i></p>"
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{note}"


class ClassroomPanel(View):
    """Every namespace on ``lab``'s server that starts with ``prefix``, refreshed by the button
    and every ``every_s`` seconds in a kernel (``None``: only on demand).

    Twins: ``refresh()`` (the button), ``stop()`` (ends the automatic refresh); ``readout`` is the
    overview as text. The lab should log in as the instructor (a user that may SCAN every key)."""

    def __init__(self, lab: Lab, *, prefix: str = "", every_s: float | None = EVERY_S) -> None:
        self.lab = lab
        self.prefix = prefix
        self.every_s = every_s
        self.overview = classroom.overview(lab.client, prefix=prefix)
        self._table = widgets.HTML(overview_html(self.overview))
        self._table.add_class("emq-readout")
        self._refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self._refresh_button.on_click(lambda _: self.act(self.refresh))
        self._auto = widgets.Checkbox(value=every_s is not None, description=f"every {every_s or EVERY_S:g} s")
        self._auto.observe(self._on_auto, names="value")
        self.box = widgets.VBox([widgets.HBox([self._refresh_button, self._auto]), self._table])
        self.box.add_class("emq-classroom-panel")  # findable by a browser walk
        self._timer: asyncio.TimerHandle | None = None
        self._schedule()

    @property
    def readout(self) -> str:
        return self.overview.readout

    def refresh(self) -> str:
        """Scan again and redraw; returns the readout."""
        self.overview = classroom.overview(self.lab.client, prefix=self.prefix)
        self._table.value = overview_html(self.overview)
        return self.readout

    def stop(self) -> None:
        """No more automatic refreshes (the checkbox's twin)."""
        self._auto.value = False

    def _on_auto(self, change: dict[str, Any]) -> None:
        if change["new"]:
            self._schedule()
        elif self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self) -> None:
        """Refresh again in ``every_s`` seconds on the running event loop (a kernel's); outside a
        loop (a script, a test) there is nothing to schedule on and the panel refreshes on demand."""
        if not self._auto.value:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(self.every_s or EVERY_S, self._tick)

    def _tick(self) -> None:
        self._timer = None
        if not self._auto.value:
            return
        self.act(self.refresh)
        self._schedule()
