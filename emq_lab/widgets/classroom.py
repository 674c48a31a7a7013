"""ClassroomPanel: the instructor's view of every learner of a class on one server.

A view over ``emq_lab.classroom.overview``: one row per learner (not started, or the dives
reached, the queues with their registry sizes and jobs waiting, and which checks passed, failed
or were not tried, and when), a Refresh button, and a refresh every few seconds while a kernel's
event loop runs (scheduled on that asyncio loop, not a thread). It only reads."""

from __future__ import annotations

import asyncio
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .. import classroom
from ..classroom.overview import LearnerSummary, shown
from ..clock import hhmm, hhmmss
from .view import View

if TYPE_CHECKING:
    from ..lab import Lab

EVERY_S = 5.0
_MARK = {"passed": ("✓", "#1a7f37"), "failed": ("✗", "#cf222e"), "not tried": ("○", "#57606a")}
_CELL = "padding:2px 10px;vertical-align:top;text-align:left"


def _h(text: str) -> str:
    """Escaped for HTML, with control characters shown as escapes."""
    return escape(shown(text))


def _learner_row(learner: LearnerSummary) -> str:
    name = f"<code style='white-space:nowrap'>{_h(learner.namespace)}</code>"
    if not learner.started and not learner.problems:
        grey = f"{_CELL};color:#57606a"
        return f"<tr><td style='{_CELL}'>{name}</td><td style='{grey}' colspan=4><i>not started</i></td></tr>"
    # each dive and each check kept whole, with room to wrap between them (a long row of checks
    # ran past the panel's right edge)
    dives = ", ".join(f"<span style='white-space:nowrap'>{_h(dive)}</span>" for dive in learner.dives) or "no dive yet"
    queues = "<br>".join(
        f"<code>{_h(q.queue)}</code> <span style='color:#cf222e'>⚠ {_h(q.problem)}</span>"
        if q.problem
        else f"<span style='white-space:nowrap'><code>{_h(q.queue)}</code> registry {q.registrations} · "
        f"waiting {q.waiting} · keys {q.keys}</span>"
        for q in learner.queues
    )
    if learner.unlisted:
        queues += f"<br><i>… and {len(learner.unlisted)} more queue(s)</i>"
    checks = " ".join(
        f"<span style='color:{_MARK[state][1]};white-space:nowrap;margin-right:10px' title='{escape(state)}'>"
        f"{_MARK[state][0]} {_h(exercise)}{f' {hhmm(at)}' if at is not None else ''}</span>"
        for exercise, state, at in learner.exercises()
    )
    problems = "<br>".join(f"<span style='color:#cf222e'>⚠ {_h(p)}</span>" for p in learner.problems)
    cells = (name, dives, queues or "<i>no queue</i>", checks, problems)
    return "<tr>" + "".join(f"<td style='{_CELL}'>{c}</td>" for c in cells) + "</tr>"


def overview_html(view: classroom.Overview) -> str:
    """One table: a row per learner."""
    legend = "checks <span style='font-weight:normal;color:#57606a'>(✓ passed, ✗ failed, ○ not tried; UTC)</span>"
    head = "".join(f"<th style='{_CELL}'>{h}</th>" for h in ("learner", "dives", "queues", legend, ""))
    rows = [_learner_row(learner) for learner in view.learners]
    if not rows:
        rows.append(f"<tr><td colspan=5 style='{_CELL}'><i>no learner found yet</i></td></tr>")
    notes = [view.users_note] if view.users_note else []
    if not view.complete:
        notes.append(f"stopped looking for other namespaces after {view.scanned} keys: the list may be incomplete")
    note = "".join(f"<p><i>{_h(n)}</i></p>" for n in notes)
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{note}"


class ClassroomPanel(View):
    """Every learner of the class on ``lab``'s server (names starting with ``prefix``, and
    ``learners`` even with no key), refreshed by the button and every ``every_s`` seconds in a
    kernel (``None``: only on demand).

    Twins: ``refresh()`` (the button), ``stop()`` (ends the automatic refresh); ``readout`` is
    the overview as text; ``when`` says when the last refresh succeeded (and what failed since).
    The lab should log in as the instructor (a user that may SCAN every key and list ACL users)."""

    def __init__(
        self, lab: Lab, *, prefix: str = "", learners: tuple[str, ...] = (), every_s: float | None = EVERY_S
    ) -> None:
        self.lab = lab
        self.prefix = prefix
        self.learners = tuple(learners)
        self.every_s = every_s
        self.overview = classroom.Overview((), 0, True)
        self.when = "not refreshed yet"
        self._table = widgets.HTML(overview_html(self.overview))
        self._table.add_class("emq-readout")
        self._when = widgets.HTML(escape(self.when))
        self._when.add_class("emq-refreshed")
        self._refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self._refresh_button.on_click(lambda _: self.act(self.refresh))
        self._auto = widgets.Checkbox(value=every_s is not None, description=f"every {every_s or EVERY_S:g} s")
        self._auto.observe(self._on_auto, names="value")
        self.box = widgets.VBox([widgets.HBox([self._refresh_button, self._auto, self._when]), self._table])
        self.box.add_class("emq-classroom-panel")  # findable by a browser walk
        self._timer: asyncio.TimerHandle | None = None
        self.act(self.refresh)
        self._schedule()

    @property
    def readout(self) -> str:
        return self.overview.readout

    def refresh(self) -> str:
        """Read the class again and redraw; returns the readout."""
        self.overview = classroom.overview(self.lab.client, prefix=self.prefix, learners=self.learners)
        self._table.value = overview_html(self.overview)
        self.when = f"last refreshed {hhmmss(self.lab.clock.now_ms())} UTC"
        self._when.value = escape(self.when)
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
        """One automatic refresh. Whatever it meets, the next one is scheduled: a server that is
        down shows the status line (its retry runs the refresh), any other fault shows beside
        the time of the last refresh that succeeded."""
        self._timer = None
        if not self._auto.value:
            return
        try:
            if not self.health.pending:  # while down, the health's own retry refreshes
                self.act(self.refresh)
        except Exception as exc:
            self._when.value = f"{escape(self.when)} — <b>the last refresh failed</b>: {_h(str(exc)[:200])}"
        finally:
            self._schedule()
