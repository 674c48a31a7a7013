"""BootPanel: boot a service twice (or more) over a live registry and see what the register
script did. BootCounter: boot it N times under every strategy and compare the registry sizes.

Both are views: the boots run in ``emq_lab.upsert``; the panels show what it returns."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .. import keys
from ..clock import hhmm
from ..dives.upsert import MINUTE_MS, Boot, Registry, Service, Strategy, period, report, tally, tally_text
from ..scripts import source
from .view import View

if TYPE_CHECKING:
    from ..lab import Lab

PERIODS_MIN = (5, 15, 30, 60)
_LIT = "background:#fde68a;font-weight:bold"
_PRE = "font-family:monospace;font-size:12px;line-height:1.35;margin:0;white-space:pre"


def script_html(text: str, lit: tuple[int, ...]) -> str:
    """The script's source, numbered, with the lines in ``lit`` highlighted."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        style = _LIT if number in lit else "color:#555" if line.lstrip().startswith("--") else ""
        rows.append(f'<div style="{style}">{number:>3}  {html.escape(line)}</div>')
    return f'<div style="{_PRE}">{"".join(rows)}</div>'


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    cells = "".join(f"<th style='text-align:left;padding:0 8px'>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:0 8px'><code>{html.escape(c)}</code></td>" for c in row) + "</tr>"
        for row in rows
    )
    empty = f"<tr><td colspan={len(head)} style='padding:0 8px'><i>empty</i></td></tr>" if not rows else ""
    return f"<table><tr>{cells}</tr>{body}{empty}</table>"


def state_html(boot: Boot, queue: str) -> str:
    """Outcome, raw reply, registry rows, record and pending occurrences after ``boot``."""
    after = boot.after
    rows = [(member, hhmm(score), str(score)) for member, score in after.rows]
    record = [(field, value) for field, value in after.record]
    pending = [(member, hhmm(score)) for member, score in after.pending]
    return (
        f"<b>boot #{boot.number}</b> at {hhmm(boot.at_ms)} · period {period(boot.every_ms)}<br>"
        f"outcome <code>{html.escape(boot.tuple)}</code> · script returned <code>{boot.raw}</code><br>"
        f"<b>registry</b> <code>{html.escape(keys.registry(queue))}</code> · size <b>{after.size}</b>"
        + _table(("member", "next run", "score (ms)"), rows)
        + f"<b>record</b> <code>{html.escape(keys.record(queue, boot.name))}</code>"
        + _table(("field", "value"), record)
        + f"<b>pending</b> <code>{html.escape(keys.delayed(queue))}</code> · {len(after.pending)}"
        + _table(("occurrence", "runs at"), pending)
        + f"<p>{html.escape(boot.verdict)}</p>"
    )


class BootPanel(View):
    """Boot #1, Boot #2 and Reset over queue ``queue``, a strategy switch, a period for the next
    boot and a history of boots to select.

    Twins: ``boot(n)``, ``use(strategy)``, ``select(i)``, ``set_period(minutes)``, ``reset()``;
    ``readout`` is the selected boot's report as plain text."""

    def __init__(self, lab: Lab, queue: str, *, strategy: Strategy | str = Strategy.GUARD) -> None:
        self.lab = lab
        self.service = Service(lab, queue, strategy=strategy)
        self.queue = self.service.queue
        self._selected: int | None = None
        self._quiet = False

        self._strategy = widgets.ToggleButtons(
            options=[(s.label, s.value) for s in Strategy], value=self.service.strategy.value, description="strategy"
        )
        self._buttons = {n: widgets.Button(description=f"Boot #{n}") for n in (1, 2)}
        self._reset = widgets.Button(description="Reset", button_style="warning")
        self._period = widgets.Dropdown(
            options=[(f"{m} min", m) for m in PERIODS_MIN],
            value=self.service.schedule.every_ms // MINUTE_MS,
            description="period",
            layout=widgets.Layout(width="180px"),
        )
        self._history = widgets.ToggleButtons(options=[], description="boots", layout=widgets.Layout(display="none"))
        self._script = widgets.HTML()
        self._state = widgets.HTML()
        self._state.add_class("emq-readout")  # the readout, findable by a browser test

        for number, button in self._buttons.items():
            button.on_click(lambda _b, n=number: self.act(lambda: self.boot(n)))
        self._reset.on_click(lambda _b: self.act(self.reset))
        self._strategy.observe(self._on_strategy, names="value")
        self._history.observe(self._on_history, names="value")

        controls = widgets.HBox([*self._buttons.values(), self._reset, self._period])
        views = widgets.HBox(  # side by side when there is room, stacked when not
            [self._script, self._state],
            layout=widgets.Layout(align_items="flex-start", grid_gap="16px", flex_flow="row wrap"),
        )
        self.box = widgets.VBox([self._strategy, controls, self._history, views])
        self.act(self.refresh)  # a dead backend: the panel shows with its status line

    # -- twins -----------------------------------------------------------------------------
    def boot(self, n: int, *, minutes: int | None = None) -> Boot:
        """Boot #n (running any boot still missing before it) and light its call. A boot that
        already ran is only selected. ``minutes`` overrides the period for the boots run now."""
        every = (minutes if minutes is not None else int(self._period.value)) * MINUTE_MS
        done = self.service.boot_until(n, every_ms=every)
        self._sync_history()
        self.select(n)
        return done

    def use(self, strategy: Strategy | str) -> None:
        """Switch the strategy (the toggle) and start over on an empty queue."""
        chosen = Strategy(strategy)
        if self._strategy.value == chosen.value:
            self._start_over(chosen)
        else:
            self._strategy.value = chosen.value

    def select(self, i: int) -> None:
        """Light boot #i's call again (the history selector)."""
        if not 1 <= i <= len(self.service.history):
            raise ValueError(f"i: boots 1 to {len(self.service.history)} have run, got {i!r}")
        if self._history.value == i:
            self._show(i)
        else:
            self._history.value = i

    def set_period(self, minutes: int) -> None:
        """The period the next boots register (the dropdown), in minutes."""
        if minutes not in PERIODS_MIN:
            raise ValueError(f"minutes: one of {', '.join(map(str, PERIODS_MIN))}, got {minutes!r}")
        self._period.value = minutes

    def reset(self) -> None:
        """Empty the queue and forget the boots (the Reset button)."""
        self._start_over(self.service.strategy)

    def refresh(self) -> None:
        """Redraw from the selected boot (or the empty state)."""
        self._show(self._selected)

    @property
    def history(self) -> list[Boot]:
        return list(self.service.history)

    @property
    def selected(self) -> Boot | None:
        return None if self._selected is None else self.service.history[self._selected - 1]

    @property
    def readout(self) -> str:
        boot = self.selected
        if boot is None:
            return "\n".join(
                [
                    f"strategy  {self.service.strategy.label} ({self.service.strategy.script}.lua)",
                    f"no boot yet · registry {keys.registry(self.queue)} · size {self.service.state().size}",
                ]
            )
        return "\n".join(report(boot, queue=self.queue, of=len(self.service.history)))

    # -- callbacks: they set widget values, never print --------------------------------------
    def _on_strategy(self, change: dict[str, Any]) -> None:
        self.act(lambda: self._start_over(Strategy(change["new"])))

    def _on_history(self, change: dict[str, Any]) -> None:
        if not self._quiet and change["new"] is not None:
            self._show(int(change["new"]))

    def _start_over(self, strategy: Strategy) -> None:
        self.service.use(strategy)
        self._sync_history()
        self._show(None)

    def _sync_history(self) -> None:
        self._quiet = True
        try:
            self._history.options = [(f"#{b.number}", b.number) for b in self.service.history]
            # ipywidgets' front end keeps stale buttons when the options empty, so hide the row.
            self._history.layout.display = "" if self.service.history else "none"
            known = self._selected is not None and self._selected <= len(self.service.history)
            self._history.value = self._selected if known else None
        finally:
            self._quiet = False

    def _show(self, i: int | None) -> None:
        self._selected = i
        boot = self.selected
        if boot is None:
            self._script.value = script_html(source(self.service.strategy.script), ())
            self._state.value = f"<pre style='{_PRE}'>{html.escape(self.readout)}</pre>"
            return
        self._script.value = script_html(source(boot.strategy.script), boot.lit)
        self._state.value = state_html(boot, self.queue)


class BootCounter(View):
    """Boot the service N times (a slider, 1 to 20) under every strategy and compare the
    registry sizes. Twin: ``set(boots=n)``; ``readout`` is the comparison as text.

    Each move re-runs the boots from an empty ``queue`` (use a queue of its own)."""

    def __init__(self, lab: Lab, queue: str, *, boots: int = 2) -> None:
        self.lab = lab
        self.queue = queue
        self._counts: dict[Strategy, Registry] = {}
        self._slider = widgets.IntSlider(value=boots, min=1, max=20, description="boots")
        self._table = widgets.HTML()
        self._table.add_class("emq-readout")
        self._slider.observe(self._on_slider, names="value")
        self.box = widgets.VBox([self._slider, self._table])
        self._draw()
        self.act(self._recount)  # a dead backend: the panel shows with its status line

    def set(self, *, boots: int) -> None:
        """Move the slider to ``boots``."""
        if not 1 <= boots <= 20:
            raise ValueError(f"boots: from 1 to 20, got {boots!r}")
        self._slider.value = boots

    @property
    def boots(self) -> int:
        return int(self._slider.value)

    @property
    def readout(self) -> str:
        if not self._counts:  # not counted yet: the backend has not answered
            self._recount()
        return tally_text(self._counts, self.boots)

    def _on_slider(self, change: dict[str, Any]) -> None:
        self.act(self._recount)

    def _recount(self) -> None:
        self._counts = tally(self.lab, self.queue, self.boots)
        self._draw()

    def _draw(self) -> None:
        rows = [
            (s.label, str(state.size), str(len(state.pending)), "one row" if state.size == 1 else "duplicated")
            for s, state in self._counts.items()
        ]
        self._table.value = f"<b>after {self.boots} boots</b>" + _table(
            ("strategy", "registry rows", "pending", ""), rows
        )
