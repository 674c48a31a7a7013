"""BootPanel: boot a service and see what the register script did; BootCounter: registry sizes after N boots."""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import partial
from itertools import groupby
from typing import TYPE_CHECKING

import ipywidgets as widgets

from ..clock import duration, hhmm
from ..dives.upsert import Boot, QueueState, Service, Strategy, readout_lines, tally, tally_text
from ..schedule import MINUTE_MS
from ..scripts import source
from .view import View, html_part, whole

if TYPE_CHECKING:
    from ..keys import QueueKeys
    from ..lab import Lab

PERIODS_MIN = (5, 15, 30, 60)
_LIT = "background:#fde68a;color:#1f2328;font-weight:bold"  # dark text on yellow in either theme
_PRE = "font-family:var(--jp-code-font-family,monospace);font-size:14px;line-height:1.4;margin:0;white-space:pre"
# a long line wraps, its continuation indented past the number gutter (no sideways scrolling)
_WRAP = "white-space:pre-wrap;overflow-wrap:anywhere;padding-left:5ch;text-indent:-5ch"
_FOLD = "color:var(--jp-content-font-color2,#57606a);cursor:pointer;font-style:italic"
_COMMENT = "color:var(--jp-content-font-color2,#555)"
CONTEXT = 1  # code lines shown around each lit line; the rest fold away


def _row(number: int, line: str, lit: tuple[int, ...]) -> str:
    style = _LIT if number in lit else _COMMENT if line.lstrip().startswith("--") else ""
    return f'<div style="{";".join(filter(None, (style, _WRAP)))}">{number:>3}  {html.escape(line)}</div>'


def script_html(text: str, lit: tuple[int, ...]) -> str:
    """The script numbered, ``lit`` lines highlighted; the header and runs far from them fold (``<details>``)."""
    lines = text.splitlines()
    code = (i for i, line in enumerate(lines) if line.strip() and not line.startswith("--"))
    header = next(code, len(lines))  # the lines before the first code line: comments and blanks

    def kind(n: int) -> str:
        if n <= header:
            return "header"
        return "far" if lit and all(abs(n - k) > CONTEXT for k in lit) else "open"

    out = []
    for what, run in groupby(range(1, len(lines) + 1), key=kind):
        numbers = list(run)
        rows = "".join(_row(n, lines[n - 1], lit) for n in numbers)
        if what == "open":
            out.append(rows)
            continue
        summary = line_span(numbers[0], numbers[-1])
        if what == "header":
            summary += ": the header (KEYS, ARGV, returns)"
        out.append(f"<details><summary style='{_FOLD}'>{html.escape(summary)}</summary>{rows}</details>")
    return f'<div style="{_PRE}">{"".join(out)}</div>'


def line_span(first: int, last: int) -> str:
    """ "line 47", or "lines 3-5": how a folded run of script lines is labelled."""
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    cells = "".join(f"<th style='text-align:left;padding:0 8px'>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:0 8px'><code>{html.escape(c)}</code></td>" for c in row) + "</tr>"
        for row in rows
    )
    empty = f"<tr><td colspan={len(head)} style='padding:0 8px'><i>empty</i></td></tr>" if not rows else ""
    return f"<table><tr>{cells}</tr>{body}{empty}</table>"


def state_html(boot: Boot, k: QueueKeys) -> str:
    """Outcome, raw reply, registry rows, record and pending occurrences after ``boot`` (keys ``k``)."""
    after = boot.after
    rows = [(member, hhmm(score), str(score)) for member, score in after.registry]
    pending = [(member, hhmm(score)) for member, score in after.pending]
    return (
        f"<b>boot #{boot.number}</b> at {hhmm(boot.at_ms)} · period {duration(boot.every_ms)}<br>"
        f"outcome <code>{html.escape(boot.tuple)}</code> · script returned <code>{boot.raw}</code><br>"
        f"<b>registry</b> <code>{html.escape(k.registry)}</code> · size <b>{after.size}</b>"
        + _table(("member", "next run", "score (ms)"), rows)
        + f"<b>record</b> <code>{html.escape(k.record(boot.name))}</code>"
        + _table(("field", "value"), after.record)
        + f"<b>pending</b> <code>{html.escape(k.delayed)}</code> · {len(after.pending)}"
        + _table(("occurrence", "runs at"), pending)
        + f"<p>{whole(boot.verdict)}</p>"
    )


class BootPanel(View):
    """Boot #1, Boot #2 and Reset over an emptied ``queue``, a strategy switch, the next boot's period and the boots
    run. Twins: ``boot(n)``, ``use(strategy)``, ``select(i)``, ``set_period(minutes)``, ``reset()``; ``readout``."""

    def __init__(self, lab: Lab, queue: str, *, strategy: Strategy | str = Strategy.GUARD) -> None:
        super().__init__(lab)
        self.service = Service(lab, queue, strategy=strategy)
        self.queue = self.service.queue
        self._selected: int | None = None
        self._strategy = widgets.ToggleButtons(
            options=[(s.label, s.value) for s in Strategy],
            value=self.service.strategy.value,
            style={"button_width": "auto"},
        )
        self._period = widgets.Dropdown(
            options=[(duration(m * MINUTE_MS), m) for m in PERIODS_MIN],
            value=self.service.schedule.every_ms // MINUTE_MS,
            description="next boot every",
            style={"description_width": "auto"},
            layout=widgets.Layout(width="auto"),
        )
        self._history = widgets.ToggleButtons(options=[], description="boots", layout=widgets.Layout(display="none"))
        self._script = html_part("emq-script", flex="1 1 0", min_width="0", overflow="auto")
        self._state = html_part("emq-readout", flex="0 0 auto", max_width="50%")
        self._on(self._strategy, lambda value: self._click(lambda: self._start_over(Strategy(value)), self._strategy))
        self._on(self._history, self._on_history)
        self._on(self._period, self._on_period)
        boots = [self._action_button(f"Boot #{n}", partial(self.boot, n), style="primary") for n in (1, 2)]
        controls = widgets.HBox([*boots, self._action_button("Reset", self.reset), self._period])
        views = widgets.HBox(  # the state first (outcome and registry in view), the script beside it
            [self._state, self._script],
            layout=widgets.Layout(align_items="flex-start", grid_gap="24px", flex_flow="row nowrap"),
        )
        # a label of its own: a ToggleButtons' description puts its buttons on the next line
        centred = widgets.Layout(align_items="center")
        strategy = widgets.HBox([widgets.Label("strategy"), self._strategy], layout=centred)
        self._boxed("emq-boot-panel", strategy, controls, self._note, self._history, views)
        self.act(self._fresh_start)  # a dead backend: the panel shows with its status line

    def _fresh_start(self) -> None:
        self.service.reset()
        self._show(None)
        self._say(f"a fresh start: this panel emptied queue {self.queue} (registry size 0)")

    def boot(self, n: int, *, minutes: int | None = None) -> Boot:
        """Boot #n (the missing boots before it first), or select it if it ran; ``minutes``: their period."""
        every = (minutes if minutes is not None else int(self._period.value)) * MINUTE_MS
        ran = len(self.service.history)
        done = self.service.boot_until(n, every_ms=every)
        self._sync_history()
        self.select(n)
        result = f"{done.tuple}, registry size {done.size}"
        if n <= ran:
            self._say(f"Boot #{n} already ran — shown again, nothing new ran; press Reset to boot again", "refused")
        elif n > ran + 1:
            missing, they = (f"Boot #{ran + 1}", "it") if n == ran + 2 else (f"Boots #{ran + 1} to #{n - 1}", "they")
            self._say(f"{missing} had not run, so {they} ran first; then Boot #{n}: {result}", "done")
        else:
            self._say(f"Boot #{n} ran: {result}", "done")
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
            strategy, registry = self.service.strategy, self.lab.keyspace(self.queue).registry
            return (
                f"strategy  {strategy.label} ({strategy.script}.lua)\n"
                f"no boot yet · registry {registry} · size {self.service.state().size}"
            )
        return "\n".join(readout_lines(boot, queue=self.queue, of=len(self.service.history), lab=self.lab))

    def _on_history(self, i: int | None) -> None:
        if i is not None:
            self._show(int(i))
            self._say(f"Boot #{i} selected: its call lit again (nothing ran)")

    def _on_period(self, minutes: int) -> None:
        self._say(
            f"next boot registers every {minutes} min; boots already run keep their period"
            + (" (Boot #2 has run: press Reset to boot again)" if len(self.service.history) >= 2 else ""),
            "done",
        )

    def _start_over(self, strategy: Strategy) -> None:
        self.service.use(strategy)
        self._sync_history()
        self._show(None)
        self._say(f"{strategy.label}: queue {self.queue} emptied, no boot yet (registry size 0)", "done")

    def _sync_history(self) -> None:
        with self._quietly():
            self._history.options = [(f"#{b.number}", b.number) for b in self.service.history]
            # ipywidgets' front end keeps stale buttons when the options empty, so hide the row.
            self._history.layout.display = "" if self.service.history else "none"
            known = self._selected is not None and self._selected <= len(self.service.history)
            self._history.value = self._selected if known else None

    def _show(self, i: int | None) -> None:
        self._selected = i
        boot = self.selected
        if boot is None:
            self._script.value = script_html(source(self.service.strategy.script), ())
            wrap = _PRE.replace("white-space:pre", "white-space:pre-wrap")
            self._state.value = f"<pre style='{wrap}'>{html.escape(self.readout)}</pre>"
            return
        self._script.value = script_html(source(boot.strategy.script), boot.lit)
        self._state.value = state_html(boot, self.lab.keyspace(self.queue))


class BootCounter(View):
    """A slider of boots (1 to 20), each move re-running them from an empty ``queue`` under every
    strategy. Twin: ``set(boots=n)``; ``readout`` compares the registry sizes."""

    def __init__(self, lab: Lab, queue: str, *, boots: int = 2) -> None:
        super().__init__(lab)
        self.queue = queue
        self._states: dict[Strategy, QueueState] = {}
        self._slider = widgets.IntSlider(value=boots, min=1, max=20, description="boots")
        self._slider.observe(lambda _: self.act(self._recount), names="value")
        self._table = html_part("emq-readout")
        self._boxed("emq-boot-counter", self._slider, self._table)
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
        if not self._states:  # not counted yet: the backend has not answered
            self._recount()
        return tally_text(self._states, self.boots)

    def _recount(self) -> None:
        self._states = tally(self.lab, self.queue, self.boots)
        self._draw()

    def _draw(self) -> None:
        rows = [
            (s.label, str(state.size), str(len(state.pending)), "one row" if state.size == 1 else "duplicated")
            for s, state in self._states.items()
        ]
        title = f"<b>after {self.boots} boot{'s' if self.boots != 1 else ''}</b>"
        self._table.value = title + _table(("strategy", "registry rows", "pending", ""), rows)
