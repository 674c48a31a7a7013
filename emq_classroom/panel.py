"""ClassroomPanel: the instructor's view of a class on one server (``emq_classroom.overview``)."""

from __future__ import annotations

import asyncio
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from emq_lab.clock import hhmm, hhmmss
from emq_lab.validate import printable
from emq_lab.widgets.view import View, html_part

from . import guard as class_guard
from .overview import LearnerSummary, Overview, Search, cut, overview

if TYPE_CHECKING:
    from emq_lab.lab import Lab

EVERY_S = 5.0
_MARK = {"passed": ("✓", "#1a7f37"), "failed": ("✗", "#cf222e"), "not tried": ("○", "#57606a")}
_CELL = "padding:1px 8px;vertical-align:top;text-align:left"
_NUM = "padding:1px 8px;vertical-align:top;text-align:right"
_GREY = "color:#57606a"


def _h(text: str) -> str:
    """Escaped for HTML, with control characters shown as escapes."""
    return escape(printable(text))


def _summary_html(view: Overview) -> str:
    """The class at a glance: each dive reached by how many, each check passed/failed/not tried."""
    total = len(view.learners)
    marks = [learner.mark for learner in view.learners]
    counts = f"{total} learner(s): {marks.count('')} started, {marks.count('not started')} not started"
    if "revoked" in marks:
        counts += f", {marks.count('revoked')} revoked"
    dives = "".join(
        f"<tr><td style='{_CELL}'>{_h(dive)}</td><td style='{_NUM}'>{n} of {total}</td></tr>"
        for dive, n in view.dive_counts()
    )
    checks = "".join(
        f"<tr><td style='{_CELL}'><code>{_h(check)}</code></td><td style='{_NUM};color:#1a7f37'>{p}</td>"
        f"<td style='{_NUM};color:#cf222e'>{f}</td><td style='{_NUM};{_GREY}'>{n}</td></tr>"
        for check, p, f, n in view.check_counts()
    )
    dive_table = f"<table><tr><th style='{_CELL}'>dive</th><th style='{_NUM}'>reached</th></tr>{dives}</table>"
    check_table = (
        f"<table><tr><th style='{_CELL}'>check</th><th style='{_NUM}'>✓ passed</th><th style='{_NUM}'>✗ failed</th>"
        f"<th style='{_NUM}'>○ not tried</th></tr>{checks}</table>"
    )
    return (
        f"<p style='margin:2px 0'><b>The class</b>: {escape(counts)}</p>"
        f"<div style='display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start'>{dive_table}{check_table}</div>"
    )


def _learner_row(learner: LearnerSummary) -> str:
    name = f"<code style='white-space:nowrap'>{escape(cut(learner.namespace))}</code>"
    if learner.revoked:
        name += " <span style='color:#cf222e'>(revoked)</span>"
    if learner.guard_mark:
        name += f" <span style='color:#cf222e' title='{escape(learner.guarded)}'>({escape(learner.guard_mark)})</span>"
    if learner.mark in ("not started", "not seen"):
        said = "not started" if learner.mark == "not started" else "no course queue, no check; not searched further"
        return f"<tr><td style='{_CELL}'>{name}</td><td style='{_CELL};{_GREY}' colspan=4><i>{said}</i></td></tr>"
    dives = ", ".join(f"<span style='white-space:nowrap'>{_h(dive)}</span>" for dive in learner.dives)
    checks = (
        " ".join(
            f"<span style='color:{_MARK[state][1]};white-space:nowrap;margin-right:6px' title='{escape(state)}'>"
            f"{_MARK[state][0]} {_h(exercise)} {hhmm(at)}</span>"
            for exercise, state, at in learner.exercises()
            if at is not None
        )
        or f"<span style='{_GREY}'>no check tried</span>"
    )
    queues = ", ".join(
        f"<span style='white-space:nowrap'><code>{escape(cut(q.queue))}</code> "
        + (f"<span style='color:#cf222e'>⚠ {_h(q.problem)}</span>" if q.problem else f"{q.registrations}·{q.waiting}")
        + "</span>"
        for q in learner.queues
    )
    if learner.unlisted:
        queues += f", <i>… and {len(learner.unlisted)} more</i>"
    problems = "<br>".join(f"<span style='color:#cf222e'>⚠ {_h(p)}</span>" for p in learner.problems)
    cells = (name, dives or f"<span style='{_GREY}'>none yet</span>", checks, queues or "<i>no queue</i>", problems)
    return "<tr>" + "".join(f"<td style='{_CELL}'>{c}</td>" for c in cells) + "</tr>"


def overview_html(view: Overview) -> str:
    """The summary, then one compact row per learner, then the guard's last lines."""
    if not view.learners:
        body = "<p><i>no learner found yet</i></p>"
    else:
        legend = f"checks tried <span style='font-weight:normal;{_GREY}'>(✓ passed, ✗ failed; UTC)</span>"
        queues = f"queues <span style='font-weight:normal;{_GREY}'>(registry·waiting)</span>"
        head = "".join(f"<th style='{_CELL}'>{h}</th>" for h in ("learner", "dives", legend, queues, ""))
        rows = "".join(_learner_row(learner) for learner in view.learners)
        body = _summary_html(view) + f"<table style='margin-top:6px'><tr>{head}</tr>{rows}</table>"
    notes = [view.users_note] if view.users_note else []
    if not view.complete:
        notes.append(
            f"stopped looking for other namespaces and queues after {view.scanned} keys: the list may be incomplete"
        )
    note = "".join(f"<p><i>{_h(n)}</i></p>" for n in notes)
    guard = ""
    if view.guard:
        lines = "".join(f"<li>{_h(line)}</li>" for line in view.guard)
        guard = f"<p style='margin:4px 0 0'><b>Class guard</b> (newest first)</p><ul style='margin:0'>{lines}</ul>"
    return body + note + guard


class ClassroomPanel(View):
    """The class summary, a row per learner (names starting with ``prefix``, and ``learners``) and the
    guard's log, refreshed by the button and every ``every_s`` seconds on a kernel's loop (``None``:
    on demand); ``guard=True`` (an admin's lab) runs the class guard first. Twins: ``refresh()``,
    ``stop()``; ``readout``, ``when``. The lab logs in as the instructor (SCAN, ACL LIST)."""

    def __init__(
        self,
        lab: Lab,
        *,
        prefix: str = "",
        learners: tuple[str, ...] = (),
        every_s: float | None = EVERY_S,
        guard: bool = False,
    ) -> None:
        super().__init__(lab)
        self.prefix = prefix
        self.learners = tuple(learners)
        self.every_s = every_s
        self.guard = guard
        self.swept: class_guard.Sweep | None = None
        self.overview = Overview((), 0, True)
        self._search = Search()  # kept: each refresh's search walks on where the last stopped
        self.when = "not refreshed yet"
        self._table, self._when = html_part("emq-readout"), html_part("emq-refreshed")
        self._draw()
        self._refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self._refresh_button.on_click(lambda _: self.act(self.refresh))
        self._auto = widgets.Checkbox(value=every_s is not None, description=f"every {every_s or EVERY_S:g} s")
        self._auto.observe(self._on_auto, names="value")
        self._boxed("emq-classroom-panel", widgets.HBox([self._refresh_button, self._auto, self._when]), self._table)
        self._timer: asyncio.TimerHandle | None = None
        self.act(self.refresh)
        self._schedule()

    @property
    def readout(self) -> str:
        return self.overview.readout

    def refresh(self) -> str:
        """(Run the guard, then) read the class again and redraw; returns the readout."""
        if self.guard:
            self.swept = class_guard.sweep(self.lab.client, prefix=self.prefix or "learner")
        self.overview = overview(self.lab.client, prefix=self.prefix, learners=self.learners, search=self._search)
        self.when = f"last refreshed {hhmmss(self.lab.clock.now_ms())} UTC"
        self._draw()
        return self.readout

    def _draw(self) -> None:
        self._table.value = overview_html(self.overview)
        self._when.value = escape(self.when)

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
        """Refresh again in ``every_s`` seconds on the running event loop (none: only on demand)."""
        if not self._auto.value:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(self.every_s or EVERY_S, self._tick)

    def _tick(self) -> None:
        """One automatic refresh, then the next scheduled whatever it met (a fault shown beside ``when``)."""
        self._timer = None
        try:
            if not self.health.waiting:  # while down, the health's own retry refreshes
                self.act(self.refresh)
        except Exception as exc:
            self._when.value = f"{escape(self.when)} — <b>the last refresh failed</b>: {_h(str(exc)[:200])}"
        finally:
            self._schedule()
