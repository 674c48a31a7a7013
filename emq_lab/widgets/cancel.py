"""CancelPanel: step through the race of a pump tick and a cancel; CrashPanel: crash between enqueue and advance."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Generic, TypeVar

import ipywidgets as widgets

from ..clock import hhmm
from ..dives.common import entries_text
from ..dives.crash import CrashBench
from ..dives.race import ALL_LABELS, LABELS, PRESET_LABELS, STEPS, Race, Snapshot, snapshot
from ..schedule import MINUTE_MS
from .view import BAD, GOOD, View, html_part, whole

if TYPE_CHECKING:
    from ..lab import Lab

R = TypeVar("R", Race, CrashBench)  # the round a panel shows
ALREADY_RAN = "that step already ran — press Reset or pick the next step"


class _Round(View, Generic[R]):
    """A panel over one round on a queue of its own (a Race, a CrashBench), made on first use (which
    empties the queue and registers the name due now); until the backend answers it shows empty."""

    _readout: widgets.HTML

    def __init__(self, lab: Lab, make: Callable[[], R]) -> None:
        super().__init__(lab)
        self._make: Callable[[], R] = make
        self._made: R | None = None

    def _build(self, css_class: str, *parts: widgets.Widget) -> None:
        """Lay out ``parts``, draw them empty, then start the round (or show the backend's status)."""
        self._boxed(css_class, *parts)
        self.refresh()
        self.act(self._start)

    @property
    def _round(self) -> R:
        """The round, made on first use (``race`` or ``bench`` in a panel)."""
        if self._made is None:
            self._made = self._make()
        return self._made

    def _start(self) -> None:
        made = self._round
        self.refresh()
        self._say(f"a fresh start: this panel emptied queue {made.queue} and registered {made.name} due now")

    def _said_reset(self) -> None:
        self._say(f"reset: queue {self._round.queue} emptied, {self._round.name} registered due now", "done")

    @property
    def readout(self) -> str:
        return self._round.text()

    def refresh(self) -> None:
        """Set every child from the round (until the backend answers, say so)."""
        if self._made is None:
            self._enable([])
            self._readout.value = "<i>waiting for the backend</i>"
        else:
            self._draw()

    def _draw(self) -> None:
        raise NotImplementedError


# The menu's entry once the steps on screen are a learner's own, not a preset's.
MANUAL = "manual"
MANUAL_LABEL = "— manual: your own steps —"


def _keyspace_html(state: Snapshot, queue: str) -> str:
    """The registry, records and jobs of the race's queue as a small HTML table."""
    rows = [
        ("queue", escape(queue)),
        ("registry (ZSET)", escape(entries_text(state.registry, empty="")) or "<i>empty</i>"),
        ("records (HASH)", ", ".join(map(escape, state.records)) or "<i>none</i>"),
        ("jobs (wait list)", ", ".join(map(escape, state.jobs)) or "<i>none</i>"),
    ]
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    colour = GOOD if state.consistent else BAD
    return f"<table>{body}</table><div style='color:{colour}'>invariant: {escape(state.invariant)}</div>"


class CancelPanel(_Round[Race]):
    """A button per step (read, cancel, enqueue, advance), a preset menu, Reset, and the keyspace after
    each step. Twins: ``step(step)``, ``play(preset)``, ``reset()``, ``readout``."""

    def __init__(self, lab: Lab, queue: str = "race", *, name: str = "report", every_ms: int = 15 * MINUTE_MS) -> None:
        super().__init__(lab, lambda: Race(lab, queue, name=name, every_ms=every_ms))
        self._buttons = {
            step: widgets.Button(description=LABELS[step], tooltip=f"step: {step}", layout=widgets.Layout(width="auto"))
            for step in STEPS
        }
        self._preset = widgets.Dropdown(
            options=[(MANUAL_LABEL, MANUAL), *((label, key) for key, label in PRESET_LABELS.items())],
            value="after-read",
            description="preset",
            layout=widgets.Layout(width="auto"),
        )
        self._on(self._preset, self._on_preset)
        play = self._action_button("play preset", lambda: self.play(str(self._preset.value)), style="primary")
        reset = self._action_button("reset", self.reset)
        for step, button in self._buttons.items():
            # the focus after a step: a step still open, else reset (which replays the round)
            button.on_click(lambda b, s=step: self._click(lambda: self.step(s), b, *self._buttons.values(), reset))
        self._readout, self._keyspace = html_part("emq-readout"), html_part("emq-readout")
        steps, menu = widgets.HBox(list(self._buttons.values())), widgets.HBox([self._preset, play, reset])
        self._build("emq-cancel-panel", steps, menu, self._note, self._readout, self._keyspace)

    @property
    def race(self) -> Race:
        return self._round

    def step(self, step: str) -> None:
        """Take one step (``read``, ``cancel``, ``enqueue``, ``advance``); one the order refuses: ValueError."""
        reason = self.race.why_not(step)  # ValueError for a word that is no step at all
        if reason is not None:
            if step in {s.step for s in self.race.taken}:
                ready = ", ".join(LABELS[s] for s in STEPS if self.race.may_take(s)) or "none left this round"
                reason = f"{ALL_LABELS[step]}: {ALREADY_RAN} ({ready})"
            self._say(reason, "refused")
            raise ValueError(reason)
        taken = self.race.step(step)
        with self._quietly():
            self._preset.value = MANUAL  # the steps on screen are yours now, not a preset's
        self._draw(taken.after)  # the keyspace the step just read: no second read
        self._say(f"{ALL_LABELS[step]}: {taken.note}", "done")

    def play(self, preset: str) -> None:
        """Reset and take a preset order (``before-read``, ``after-read``, ...)."""
        if preset == MANUAL:
            raise ValueError(f"preset: pick one in the menu ({', '.join(PRESET_LABELS.values())}), then play it")
        taken = self.race.play(preset)
        with self._quietly():
            self._preset.value = preset
        self._draw(taken[-1].after if taken else self.race.start)
        self._say(f"played '{PRESET_LABELS[preset]}': {self.race.verdict()}", "done")

    def reset(self) -> None:
        """Empty the queue, register the name due now, clear the steps."""
        self._draw(self.race.reset())
        self._said_reset()

    @property
    def preset(self) -> str:
        """What the preset menu shows: a preset's key, or ``manual`` after steps of your own."""
        return str(self._preset.value)

    def _draw(self, state: Snapshot | None = None) -> None:
        """Set every child from the race, the keyspace shown being ``state`` (None: read it now)."""
        self._enable([])
        lines = [f"<b>{escape(ALL_LABELS[s.step])}</b>: {whole(s.note)}" for s in self.race.taken]
        outcome = self.race.advance_outcome
        lines.append(f"advance outcome: <b>{escape(outcome.tuple) if outcome else '-'}</b>")
        self._readout.value = "<br>".join(lines)
        self._keyspace.value = _keyspace_html(state or snapshot(self.lab, self.race.queue), self.race.queue)

    def _enable(self, controls: list[widgets.DOMWidget]) -> None:
        """The controls on again, each step button only if the pump's order allows it now."""
        super()._enable(controls)
        for step, button in self._buttons.items():
            button.disabled = self._made is None or not self._made.may_take(step)

    def _on_preset(self, preset: str) -> None:
        if self._made is None:
            return
        if preset == MANUAL:
            self._say("your own order: take the steps with the buttons above (reset starts over)")
        elif self._made.preset != preset:
            self._say(f"preset '{PRESET_LABELS[preset]}' chosen: press play preset to run it")


def _crash_html(bench: CrashBench) -> str:
    """The bench's ticks, a table of jobs per slot and the duplicate count, as small HTML."""
    ticks = "<br>".join(escape(str(tick)) for tick in bench.ticks) or "<i>no ticks yet</i>"
    rows = "".join(
        f"<tr><th style='text-align:left'>{hhmm(slot)} slot</th><td>{escape(', '.join(ids))}</td>"
        f"<td style='color:{BAD if len(ids) > 1 else GOOD}'>{len(ids) - 1} duplicate(s)</td></tr>"
        for slot, ids in bench.per_slot.items()
    )
    table = f"<table>{rows}</table>" if rows else "<i>no jobs</i>"
    colour = BAD if bench.duplicates else GOOD
    return (
        f"<div>queue <code>{escape(bench.queue)}</code> · ids: {escape(bench.id_mode)}</div>"
        f"<div>{ticks}</div><div><b>jobs per slot</b></div>{table}"
        f"<div style='color:{colour}'><b>duplicates: {bench.duplicates}</b></div>"
        f"<div>next click: {escape(bench.next_click())}</div>"
    )


FAULT_ON = "fault ON: crash after enqueue"
FAULT_OFF = "fault off: crash after enqueue"


class CrashPanel(_Round[CrashBench]):
    """A fault switch, an id switch (``JOB-`` or ``<name>:<slot_ms>``), Tick (restarting a crashed pump),
    Reset, and the jobs per slot. Twins: ``set(crash=, slot_keyed=)``, ``tick()``, ``reset()``, ``readout``."""

    def __init__(self, lab: Lab, queue: str = "crash-panel") -> None:
        super().__init__(lab, lambda: CrashBench(lab, queue))
        self._crash_toggle = widgets.ToggleButton(
            description=FAULT_OFF,
            tooltip="on: a running pump crashes after its enqueue, before the advance",
            icon="check",
            layout=widgets.Layout(width="auto"),
        )
        self._ids_switch = widgets.ToggleButtons(
            options=[("fresh JOB- ids", False), ("slot-keyed <name>:<slot_ms>", True)],
            style={"button_width": "auto"},
        )
        self._on(self._crash_toggle, lambda on: self._click(lambda: self.set(crash=bool(on)), self._crash_toggle))
        self._on(self._ids_switch, lambda on: self._click(lambda: self.set(slot_keyed=bool(on)), self._ids_switch))
        tick = self._action_button("Tick (and restart)", self.tick, style="primary")
        tick.layout.width = "auto"  # the label whole
        buttons = widgets.HBox([tick, self._action_button("Reset", self.reset)])
        self._readout = html_part("emq-readout")
        # a label of its own: a ToggleButtons' description puts its buttons on the next line
        switches = widgets.HBox(
            [self._crash_toggle, widgets.Label("occurrence ids"), self._ids_switch],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        self._build("emq-crash-panel", switches, buttons, self._note, self._readout)

    @property
    def bench(self) -> CrashBench:
        return self._round

    def set(self, *, crash: bool | None = None, slot_keyed: bool | None = None) -> None:
        """Flip the fault switch and/or the id mode (a new round on an emptied queue), as the toggles would."""
        keyed_before = self.bench.slot_keyed
        self.bench.set(crash=crash, slot_keyed=slot_keyed)
        self.refresh()
        said = ["the fault is ON: the next running tick crashes after its enqueue" if self.bench.crash else "no fault"]
        if self.bench.slot_keyed != keyed_before:
            said.append(f"ids {self.bench.id_mode}: a new round on an emptied queue")
        self._say("; ".join(said), "done")

    def tick(self) -> None:
        """Click Tick: the restarted pump's tick after a crash, else a running pump's tick."""
        done = self.bench.tick()
        self.refresh()
        self._say(str(done), "done")

    def reset(self) -> None:
        """Empty the queue, register the name due now, forget the ticks."""
        self.bench.reset()
        self.refresh()
        self._said_reset()

    def _draw(self) -> None:
        on = self.bench.crash
        with self._quietly():
            self._crash_toggle.value = on
            self._crash_toggle.description = FAULT_ON if on else FAULT_OFF
            self._crash_toggle.button_style = "danger" if on else ""
            self._crash_toggle.icon = "bolt" if on else "check"
            self._ids_switch.value = self.bench.slot_keyed
        self._readout.value = _crash_html(self.bench)
