"""CancelPanel: step through the race between a pump tick and a cancel. CrashPanel: switch on a
crash between enqueue and advance and watch a slot get (or not get) a duplicate."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ..clock import hhmm
from ..dives.common import entries_text
from ..dives.crash import CrashBench
from ..dives.race import ALL_LABELS, LABELS, PRESET_LABELS, STEPS, Race, Snapshot, snapshot
from ..schedule import MINUTE_MS
from .note import ALREADY_RAN, BAD, GOOD, Note, click, refocus, set_disabled
from .view import View, whole

if TYPE_CHECKING:
    from ..lab import Lab


# The menu's entry once the steps on screen are a learner's own, not a preset's.
MANUAL = "manual"
MANUAL_LABEL = "— manual: your own steps —"


def _keyspace_html(state: Snapshot, queue: str) -> str:
    """The registry, records and jobs of the race's queue as a small HTML table."""
    registry = escape(entries_text(state.registry, empty="")) or "<i>empty</i>"
    records = ", ".join(escape(name) for name in state.records) or "<i>none</i>"
    jobs = ", ".join(escape(job) for job in state.jobs) or "<i>none</i>"
    colour = GOOD if state.consistent else BAD
    rows = [
        ("queue", escape(queue)),
        ("registry (ZSET)", registry),
        ("records (HASH)", records),
        ("jobs (wait list)", jobs),
    ]
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table>{body}</table><div style='color:{colour}'>invariant: {escape(state.invariant)}</div>"


class CancelPanel(View):
    """A button per step (read, cancel, enqueue, advance), a preset menu, Reset, and the
    keyspace after each step. Twins: ``step(name)``, ``play(preset)``, ``reset()``, ``readout``,
    ``note``.

    The panel runs on a queue of its own (default ``"race"``) and resets it on creation. A step
    the pump's order refuses is said on the note line (a click) or raised as one ValueError with
    the same words (the twin); nothing reaches the Log Console.
    """

    def __init__(self, lab: Lab, queue: str = "race", *, name: str = "report", every_ms: int = 15 * MINUTE_MS) -> None:
        self.lab = lab
        self._race: Race | None = None
        self._new_race = lambda: Race(lab, queue, name=name, every_ms=every_ms)
        self._note = Note()
        self._busy = False
        self._quiet = False  # the menu set by the panel itself, not by a learner's choice
        self._buttons: dict[str, widgets.Button] = {}
        for step in STEPS:
            button = widgets.Button(
                description=LABELS[step], tooltip=f"step: {step}", layout=widgets.Layout(width="auto")
            )
            button.on_click(self._on_step(step))
            self._buttons[step] = button
        self._preset = widgets.Dropdown(
            options=[(MANUAL_LABEL, MANUAL), *((label, key) for key, label in PRESET_LABELS.items())],
            value="after-read",
            description="preset",
            layout=widgets.Layout(width="auto"),
        )
        self._preset.observe(self._on_preset, names="value")
        self._play = widgets.Button(description="play preset", button_style="primary")
        self._play.on_click(lambda b: self._click(lambda: self.play(str(self._preset.value)), b))
        self._reset = widgets.Button(description="reset", button_style="")
        self._reset.on_click(lambda b: self._click(self.reset, b))
        self._log = widgets.HTML()
        self._keyspace = widgets.HTML()
        for readout in (self._log, self._keyspace):  # findable by a browser test
            readout.add_class("emq-readout")
        self.box = widgets.VBox(
            [
                widgets.HBox(list(self._buttons.values())),
                widgets.HBox([self._preset, self._play, self._reset]),
                self._note.widget,
                self._log,
                self._keyspace,
            ]
        )
        self.box.add_class("emq-cancel-panel")
        self.refresh()  # the empty panel, then the race (or the status line while the backend is down)
        self.act(self._start)

    @property
    def race(self) -> Race:
        """The race this panel steps through (its queue reset and the name registered on first use)."""
        if self._race is None:
            self._race = self._new_race()
        return self._race

    def _start(self) -> None:
        self.race  # noqa: B018 - builds it: resets the queue and registers the name
        self.refresh()
        self._note.say(
            f"a fresh start: this panel emptied queue {self.race.queue} and registered {self.race.name} due now"
        )

    def _on_step(self, step: str) -> Any:
        return lambda b: self._click(lambda: self.step(step), b)

    # -- twins ---------------------------------------------------------------------------------

    def step(self, name: str) -> None:
        """Take one step (``read``, ``cancel``, ``enqueue`` or ``advance``). A step the pump's
        order does not allow now raises ValueError saying why (and the note line says it too)."""
        reason = self.refusal(name)
        if reason is not None:
            self._note.say(reason, "refused")
            raise ValueError(reason)
        taken = self.race.step(name)
        self._show_preset(MANUAL)  # the steps on screen are yours now, not a preset's
        self._draw(taken.after)  # the keyspace the step just read: no second read
        self._note.say(f"{ALL_LABELS[name]}: {taken.note}", "done")

    def play(self, preset: str) -> None:
        """Reset and take a preset order (``before-read``, ``after-read``, ``after-enqueue``,
        ``after-advance``, ``re-register``)."""
        if preset == MANUAL:
            raise ValueError(f"preset: pick one in the menu ({', '.join(PRESET_LABELS.values())}), then play it")
        taken = self.race.play(preset)
        self._show_preset(preset)
        self._draw(taken[-1].after if taken else self.race.start)
        self._note.say(f"played '{PRESET_LABELS[preset]}': {self.race.verdict()}", "done")

    def reset(self) -> None:
        """Empty the queue, register the name due now, clear the steps."""
        self._draw(self.race.reset())
        self._note.say(f"reset: queue {self.race.queue} emptied, {self.race.name} registered due now", "done")

    def refusal(self, step: str) -> str | None:
        """None if ``step`` may be taken now, else why not, in the words the note line uses."""
        reason = self.race.why_not(step)  # ValueError for a name that is no step at all
        if reason is None:
            return None
        if step in {s.step for s in self.race.taken}:
            ready = [LABELS[s] for s in STEPS if self.race.allowed(s)]
            nxt = f" ({', '.join(ready)})" if ready else " (none left this round)"
            return f"{ALL_LABELS[step]}: {ALREADY_RAN}{nxt}"
        return reason

    @property
    def readout(self) -> str:
        return self.race.text()

    @property
    def note(self) -> str:
        return self._note.text

    @property
    def enabled(self) -> dict[str, bool]:
        """Which step buttons can be clicked now."""
        return {step: not button.disabled for step, button in self._buttons.items()}

    def refresh(self) -> None:
        """Re-read the keyspace and set every child from the race."""
        if self._race is None:  # not started: the backend has not answered yet
            for button in self._buttons.values():
                button.disabled = True
            self._log.value = "<i>waiting for the backend</i>"
            return
        self._draw(snapshot(self.lab, self.race.queue))

    def _draw(self, state: Snapshot) -> None:
        """Set every child from the race, the keyspace shown being ``state``."""
        self._enable_steps()
        lines = [f"<b>{escape(ALL_LABELS[s.step])}</b>: {whole(s.note)}" for s in self.race.taken]
        outcome = self.race.advance_outcome
        lines.append(f"advance outcome: <b>{escape(outcome.tuple) if outcome else '-'}</b>")
        self._log.value = "<br>".join(lines)
        self._keyspace.value = _keyspace_html(state, self.race.queue)

    # -- callbacks: they set widget values, never print ------------------------------------------

    @property
    def preset(self) -> str:
        """What the preset menu shows: a preset's key, or ``manual`` after steps of your own."""
        return str(self._preset.value)

    def _show_preset(self, preset: str) -> None:
        self._quiet = True
        try:
            self._preset.value = preset
        finally:
            self._quiet = False

    def _click(self, action: Callable[[], Any], origin: widgets.DOMWidget | None = None) -> None:
        """Every control off while ``action`` runs; a refusal goes to the note line. The focus goes
        back to ``origin``, or, when that step has just run, to the next step that may be taken."""
        self._busy = True
        set_disabled([*self._buttons.values(), self._play, self._reset, self._preset], True)
        try:
            self.act(lambda: self._note.attempt(action))
        finally:
            self._busy = False
            set_disabled([self._play, self._reset, self._preset], False)
            self._enable_steps()
            if origin is not None:
                refocus(origin, *self._buttons.values(), self._play)

    def _enable_steps(self) -> None:
        """Each step button on if the pump's order allows it now (all off before the race started)."""
        for step, button in self._buttons.items():
            button.disabled = self._busy or self._race is None or not self._race.allowed(step)

    def _on_preset(self, change: dict[str, Any]) -> None:
        if self._quiet or self._race is None:
            return
        if change["new"] == MANUAL:
            self._note.say("your own order: take the steps with the buttons above (reset starts over)")
        elif self._race.preset != change["new"]:
            self._note.say(f"preset '{PRESET_LABELS[change['new']]}' chosen: press play preset to run it")


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
        f"<div>queue <code>{escape(bench.queue)}</code> · ids: {escape(bench.ids)}</div>"
        f"<div>{ticks}</div><div><b>jobs per slot</b></div>{table}"
        f"<div style='color:{colour}'><b>duplicates: {bench.duplicates}</b></div>"
        f"<div>next click: {escape(bench.next_click())}</div>"
    )


FAULT_ON = "fault ON: crash after enqueue"
FAULT_OFF = "fault off: crash after enqueue"


class CrashPanel(View):
    """A fault switch (crash after enqueue), an id switch (fresh ``JOB-`` ids or slot-keyed
    ``<name>:<slot_ms>``), a Tick button that also restarts a crashed pump, Reset, and the jobs
    per slot with the duplicate count. Twins: ``set(crash=, slot_keyed=)``, ``tick()``,
    ``reset()``, ``readout``, ``note``. A view over :class:`emq_lab.dives.crash.CrashBench`.

    The panel runs on a queue of its own (default ``"crash-panel"``) and resets it on creation.
    The fault switch reads and looks different on and off (red "fault ON", grey "fault off").
    """

    def __init__(
        self, lab: Lab, queue: str = "crash-panel", *, name: str = "report", every_ms: int = 15 * MINUTE_MS
    ) -> None:
        self.lab = lab
        self._bench: CrashBench | None = None
        self._new_bench = lambda: CrashBench(lab, queue, name=name, every_ms=every_ms)
        self._holding = False
        self._note = Note()
        self._crash_toggle = widgets.ToggleButton(
            value=False,
            description=FAULT_OFF,
            tooltip="on: a running pump crashes after its enqueue, before the advance",
            icon="check",
            layout=widgets.Layout(width="auto"),
        )
        self._crash_toggle.observe(self._on_crash, names="value")
        self._ids_switch = widgets.ToggleButtons(
            options=[("fresh JOB- ids", False), ("slot-keyed <name>:<slot_ms>", True)],
            value=False,
            style={"button_width": "auto"},
        )
        self._ids_switch.observe(self._on_ids, names="value")
        self._tick_button = widgets.Button(
            description="Tick (and restart)", button_style="primary", layout=widgets.Layout(width="auto")
        )
        self._tick_button.on_click(lambda b: self._click(self.tick, b))
        self._reset_button = widgets.Button(description="Reset", button_style="")
        self._reset_button.on_click(lambda b: self._click(self.reset, b))
        self._readout = widgets.HTML()
        self._readout.add_class("emq-readout")  # findable by a browser test
        self.box = widgets.VBox(
            [
                # a label of its own: a ToggleButtons' description puts its buttons on the next line
                widgets.HBox(
                    [self._crash_toggle, widgets.Label("occurrence ids"), self._ids_switch],
                    layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
                ),
                widgets.HBox([self._tick_button, self._reset_button]),
                self._note.widget,
                self._readout,
            ]
        )
        self.box.add_class("emq-crash-panel")
        self.refresh()  # the empty panel, then the bench (or the status line while the backend is down)
        self.act(self._start)

    @property
    def bench(self) -> CrashBench:
        """The bench this panel drives (its queue reset and the name registered on first use)."""
        if self._bench is None:
            self._bench = self._new_bench()
        return self._bench

    def _start(self) -> None:
        self.bench  # noqa: B018 - builds it: resets the queue and registers the name
        self.refresh()
        self._note.say(
            f"a fresh start: this panel emptied queue {self.bench.queue} and registered {self.bench.name} due now"
        )

    def _on_crash(self, change: dict[str, Any]) -> None:
        if not self._holding:
            self._click(lambda: self.set(crash=bool(change["new"])), self._crash_toggle)

    def _on_ids(self, change: dict[str, Any]) -> None:
        if not self._holding:
            self._click(lambda: self.set(slot_keyed=bool(change["new"])), self._ids_switch)

    # -- twins ---------------------------------------------------------------------------------

    def set(self, *, crash: bool | None = None, slot_keyed: bool | None = None) -> None:
        """Flip the fault switch and/or the id mode, as the toggles would. A new id mode starts a
        new round (the queue is reset)."""
        keyed_before = self.bench.slot_keyed
        self.bench.set(crash=crash, slot_keyed=slot_keyed)
        self.refresh()
        said = ["the fault is ON: the next running tick crashes after its enqueue" if self.bench.crash else "no fault"]
        if self.bench.slot_keyed != keyed_before:
            said.append(f"ids {self.bench.ids}: a new round on an emptied queue")
        self._note.say("; ".join(said), "done")

    def tick(self) -> None:
        """Click Tick: the restarted pump's tick after a crash, else a running pump's tick."""
        done = self.bench.tick()
        self.refresh()
        self._note.say(str(done), "done")

    def reset(self) -> None:
        """Empty the queue, register the name due now, forget the ticks."""
        self.bench.reset()
        self.refresh()
        self._note.say(f"reset: queue {self.bench.queue} emptied, {self.bench.name} registered due now", "done")

    @property
    def readout(self) -> str:
        return self.bench.text()

    @property
    def note(self) -> str:
        return self._note.text

    @property
    def controls(self) -> list[widgets.DOMWidget]:
        return [self._crash_toggle, self._ids_switch, self._tick_button, self._reset_button]

    def refresh(self) -> None:
        """Set every child from the bench."""
        if self._bench is None:  # not started: the backend has not answered yet
            self._readout.value = "<i>waiting for the backend</i>"
            return
        self._holding = True
        try:
            on = self.bench.crash
            self._crash_toggle.value = on
            self._crash_toggle.description = FAULT_ON if on else FAULT_OFF
            self._crash_toggle.button_style = "danger" if on else ""
            self._crash_toggle.icon = "bolt" if on else "check"
            self._ids_switch.value = self.bench.slot_keyed
        finally:
            self._holding = False
        self._readout.value = _crash_html(self.bench)

    def _click(self, action: Callable[[], Any], origin: widgets.DOMWidget | None = None) -> None:
        click(self.act, self._note, self.controls, action, origin)
