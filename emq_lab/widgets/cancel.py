"""CancelPanel: step through the race between a pump tick and a cancel. CrashPanel: switch on a
crash between enqueue and advance and watch a slot get (or not get) a duplicate."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ..clock import hhmm
from ..dives.crash import CrashBench
from ..dives.race import ALL_LABELS, LABELS, PRESET_LABELS, STEPS, Keyspace, Race, keyspace
from .view import View

if TYPE_CHECKING:
    from ..lab import Lab


def _keyspace_html(state: Keyspace) -> str:
    """The registry, records and jobs of the race's queue as a small HTML table."""
    registry = ", ".join(f"{escape(name)} @ {hhmm(ms)}" for name, ms in state.registry) or "<i>empty</i>"
    records = ", ".join(escape(name) for name in state.records) or "<i>none</i>"
    jobs = ", ".join(escape(job) for job in state.jobs) or "<i>none</i>"
    colour = "#1a7f37" if state.consistent else "#cf222e"
    rows = [("registry (ZSET)", registry), ("records (HASH)", records), ("jobs (wait list)", jobs)]
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table>{body}</table><div style='color:{colour}'>invariant: {escape(state.invariant)}</div>"


class CancelPanel(View):
    """A button per step (read, cancel, enqueue, advance), a preset menu, Reset, and the
    keyspace after each step. Twins: ``step(name)``, ``play(preset)``, ``reset()``, ``readout``.

    The panel runs on a queue of its own (default ``"race"``) and resets it on creation.
    """

    def __init__(self, lab: Lab, queue: str = "race", *, name: str = "report", every_ms: int = 15 * 60_000) -> None:
        self.lab = lab
        self._race: Race | None = None
        self._new_race = lambda: Race(lab, queue, name=name, every_ms=every_ms)
        self._buttons: dict[str, widgets.Button] = {}
        for step in STEPS:
            button = widgets.Button(description=LABELS[step], tooltip=f"step: {step}")
            button.on_click(self._on_step(step))
            self._buttons[step] = button
        self._preset = widgets.Dropdown(
            options=[(label, key) for key, label in PRESET_LABELS.items()],
            value="after-read",
            description="preset",
        )
        self._play = widgets.Button(description="play preset", button_style="info")
        self._play.on_click(lambda _: self.act(lambda: self.play(str(self._preset.value))))
        self._reset = widgets.Button(description="reset", button_style="warning")
        self._reset.on_click(lambda _: self.act(self.reset))
        self._log = widgets.HTML()
        self._keyspace = widgets.HTML()
        for readout in (self._log, self._keyspace):  # findable by a browser test
            readout.add_class("emq-readout")
        self.box = widgets.VBox(
            [
                widgets.HBox(list(self._buttons.values())),
                widgets.HBox([self._preset, self._play, self._reset]),
                self._log,
                self._keyspace,
            ]
        )
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

    def _on_step(self, step: str) -> Any:
        return lambda _: self.act(lambda: self.step(step))

    # -- twins ---------------------------------------------------------------------------------

    def step(self, name: str) -> None:
        """Take one step (``read``, ``cancel``, ``enqueue`` or ``advance``); ValueError if the
        pump's order does not allow it now."""
        self._draw(self.race.step(name).after)  # the keyspace the step just read: no second read

    def play(self, preset: str) -> None:
        """Reset and take a preset order (``before-read``, ``after-read``, ``after-enqueue``,
        ``after-advance``)."""
        taken = self.race.play(preset)
        self._preset.value = preset
        self._draw(taken[-1].after if taken else self.race.start)

    def reset(self) -> None:
        """Empty the queue, register the name due now, clear the steps."""
        self._draw(self.race.reset())

    @property
    def readout(self) -> str:
        return self.race.text()

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
        self._draw(keyspace(self.lab, self.race.queue))

    def _draw(self, state: Keyspace) -> None:
        """Set every child from the race, the keyspace shown being ``state``."""
        for step, button in self._buttons.items():
            button.disabled = not self.race.allowed(step)
        lines = [f"<b>{escape(ALL_LABELS[s.step])}</b>: {escape(s.note)}" for s in self.race.taken]
        outcome = self.race.advance_outcome
        lines.append(f"advance outcome: <b>{escape(outcome.tuple) if outcome else '-'}</b>")
        self._log.value = "<br>".join(lines)
        self._keyspace.value = _keyspace_html(state)


def _crash_html(bench: CrashBench) -> str:
    """The bench's ticks, a table of jobs per slot and the duplicate count, as small HTML."""
    ticks = "<br>".join(escape(str(tick)) for tick in bench.ticks) or "<i>no ticks yet</i>"
    rows = "".join(
        f"<tr><th style='text-align:left'>{hhmm(slot)} slot</th><td>{escape(', '.join(ids))}</td>"
        f"<td style='color:{'#cf222e' if len(ids) > 1 else '#1a7f37'}'>{len(ids) - 1} duplicate(s)</td></tr>"
        for slot, ids in bench.per_slot.items()
    )
    table = f"<table>{rows}</table>" if rows else "<i>no jobs</i>"
    colour = "#cf222e" if bench.duplicates else "#1a7f37"
    return (
        f"<div>{ticks}</div><div><b>jobs per slot</b></div>{table}"
        f"<div style='color:{colour}'><b>duplicates: {bench.duplicates}</b></div>"
        f"<div>next click: {escape(bench.next_click())}</div>"
    )


class CrashPanel(View):
    """A fault switch (crash after enqueue), an id switch (fresh ``JOB-`` ids or slot-keyed
    ``<name>:<slot_ms>``), a Tick button that also restarts a crashed pump, Reset, and the jobs
    per slot with the duplicate count. Twins: ``set(crash=, slot_keyed=)``, ``tick()``,
    ``reset()``, ``readout``. A view over :class:`emq_lab.faults.CrashBench`.

    The panel runs on a queue of its own (default ``"crash-panel"``) and resets it on creation.
    """

    def __init__(
        self, lab: Lab, queue: str = "crash-panel", *, name: str = "report", every_ms: int = 15 * 60_000
    ) -> None:
        self.lab = lab
        self._bench: CrashBench | None = None
        self._new_bench = lambda: CrashBench(lab, queue, name=name, every_ms=every_ms)
        self._holding = False
        self._crash_toggle = widgets.ToggleButton(
            value=False,
            description="fault: crash after enqueue",
            tooltip="on: a running pump crashes after its enqueue, before the advance",
            icon="bolt",
            layout=widgets.Layout(width="auto"),
        )
        self._crash_toggle.observe(self._on_crash, names="value")
        self._ids_switch = widgets.ToggleButtons(
            options=[("fresh JOB- ids", False), ("slot-keyed <name>:<slot_ms>", True)],
            value=False,
            description="occurrence ids",
            style={"button_width": "auto"},
        )
        self._ids_switch.observe(self._on_ids, names="value")
        self._tick_button = widgets.Button(description="Tick (and restart)", button_style="info")
        self._tick_button.on_click(lambda _: self.act(self.tick))
        self._reset_button = widgets.Button(description="Reset", button_style="warning")
        self._reset_button.on_click(lambda _: self.act(self.reset))
        self._readout = widgets.HTML()
        self._readout.add_class("emq-readout")  # findable by a browser test
        self.box = widgets.VBox(
            [
                widgets.HBox([self._crash_toggle, self._ids_switch]),
                widgets.HBox([self._tick_button, self._reset_button]),
                self._readout,
            ]
        )
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

    def _on_crash(self, change: dict[str, Any]) -> None:
        if not self._holding:
            self.act(lambda: self.set(crash=bool(change["new"])))

    def _on_ids(self, change: dict[str, Any]) -> None:
        if not self._holding:
            self.act(lambda: self.set(slot_keyed=bool(change["new"])))

    # -- twins ---------------------------------------------------------------------------------

    def set(self, *, crash: bool | None = None, slot_keyed: bool | None = None) -> None:
        """Flip the fault switch and/or the id mode, as the toggles would. A new id mode starts a
        new round (the queue is reset)."""
        self.bench.set(crash=crash, slot_keyed=slot_keyed)
        self.refresh()

    def tick(self) -> None:
        """Click Tick: the restarted pump's tick after a crash, else a running pump's tick."""
        self.bench.tick()
        self.refresh()

    def reset(self) -> None:
        """Empty the queue, register the name due now, forget the ticks."""
        self.bench.reset()
        self.refresh()

    @property
    def readout(self) -> str:
        return self.bench.text()

    def refresh(self) -> None:
        """Set every child from the bench."""
        if self._bench is None:  # not started: the backend has not answered yet
            self._readout.value = "<i>waiting for the backend</i>"
            return
        self._holding = True
        try:
            self._crash_toggle.value = self.bench.crash
            self._ids_switch.value = self.bench.slot_keyed
        finally:
            self._holding = False
        self._readout.value = _crash_html(self.bench)
