"""The cancel dive's races: a pump tick taken apart into steps, a cancel that can land
between any two of them, and the crash between an enqueue and its advance.

Pure state plus calls into ``Pump.read / produce / finish`` and ``Repeat.cancel``; the
CancelPanel is a view over a :class:`Race`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import TYPE_CHECKING

from . import keys, validate
from .clock import hhmm
from .outcome import Outcome
from .pump import Occurrence, PumpCrash
from .repeat import Repeat, Row

if TYPE_CHECKING:
    from .lab import Lab
    from .pump import Pump

MIN = 60_000

STEPS = ("read", "cancel", "enqueue", "advance")
LABELS = {
    "read": "pump reads due",
    "cancel": "cancel lands",
    "enqueue": "pump enqueues",
    "advance": "pump advances",
}
PRESETS: dict[str, tuple[str, ...]] = {
    "before-read": ("cancel", "read", "enqueue", "advance"),
    "after-read": ("read", "cancel", "enqueue", "advance"),
    "after-enqueue": ("read", "enqueue", "cancel", "advance"),
    "after-advance": ("read", "enqueue", "advance", "cancel"),
}
PRESET_LABELS = {
    "before-read": "cancel before the read",
    "after-read": "cancel between read and enqueue",
    "after-enqueue": "cancel between enqueue and advance",
    "after-advance": "cancel after the advance",
}


# --- the keyspace, as a learner reads it -------------------------------------------------


@dataclass(frozen=True)
class Keyspace:
    """What one queue holds: registry rows, the names that have a record, the waiting jobs."""

    registry: tuple[tuple[str, int], ...]
    records: tuple[str, ...]
    jobs: tuple[str, ...]

    @property
    def dangling(self) -> tuple[str, ...]:
        """Registry members whose record is gone."""
        return tuple(name for name, _ in self.registry if name not in self.records)

    @property
    def consistent(self) -> bool:
        """The invariant: every registry member has a record."""
        return not self.dangling

    def lines(self) -> list[str]:
        rows = ", ".join(f"{name} @ {hhmm(ms)}" for name, ms in self.registry) or "(empty)"
        records = ", ".join(self.records) or "(none)"
        jobs = ", ".join(self.jobs) or "(none)"
        return [f"registry: {rows}", f"records:  {records}", f"jobs:     {jobs}", f"invariant: {self.invariant}"]

    @property
    def invariant(self) -> str:
        if self.consistent:
            return "every registry member has a record - holds"
        return f"BROKEN - no record for {', '.join(self.dangling)}"

    def __str__(self) -> str:
        return "\n".join(self.lines())


def keyspace(lab: Lab, queue: str) -> Keyspace:
    """Read the registry, the records and the wait list of ``queue``."""
    validate.name(queue, field="queue")
    prefix = keys.record(queue, "")
    records = sorted(key[len(prefix) :] for key in lab.keys(queue) if key.startswith(prefix))
    return Keyspace(
        registry=tuple(Repeat(lab, queue).entries()),
        records=tuple(records),
        jobs=tuple(lab.client.lrange(keys.wait(queue), 0, -1)),
    )


def drop_record(lab: Lab, queue: str, name: str) -> bool:
    """Delete the record of ``name`` out of band (not through cancel), leaving its registry
    member dangling. True if there was a record to delete."""
    validate.name(queue, field="queue")
    validate.name(name)
    return bool(lab.client.delete(keys.record(queue, name)))


# --- the race: a tick in steps, a cancel in between ----------------------------------------


@dataclass(frozen=True)
class Step:
    """One step taken: what it was, what it answered, and the keyspace right after it."""

    step: str
    note: str
    after: Keyspace
    outcome: Outcome | None = None


@dataclass
class _Round:
    taken: list[Step] = field(default_factory=list)
    held: list[Row] | None = None  # what the read handed the pump; None before the read
    now_ms: int = 0
    fired: list[Occurrence] = field(default_factory=list)
    advanced: list[tuple[str, Outcome]] = field(default_factory=list)
    cancelled: Outcome | None = None


class Race:
    """A pump tick on ``name`` split into read / enqueue / advance, and a cancel that lands
    wherever the learner puts it. Each step is taken once; the pump's own order holds
    (read, then enqueue, then advance), the cancel may come at any point.

    The race runs on a queue of its own: :meth:`reset` deletes every key of ``queue`` and
    registers ``name`` due now.
    """

    def __init__(
        self,
        lab: Lab,
        queue: str = "race",
        *,
        name: str = "report",
        every_ms: int = 15 * MIN,
        template: str = '{"report": "daily"}',
    ) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.name = validate.name(name)
        self.every_ms = validate.every_ms(every_ms)
        self.template = validate.template(template)
        self.repeat = lab.repeat(queue)
        self.pump: Pump = lab.pump(queue)
        self._round = _Round()
        self.preset: str | None = None
        self.reset()

    # -- the round ---------------------------------------------------------------------------

    def reset(self) -> Keyspace:
        """Empty the queue, register ``name`` due now, forget the steps taken."""
        self.lab.reset(self.queue)
        self.repeat.register(self.name, self.every_ms, self.template)
        self.pump = self.lab.pump(self.queue)
        self._round = _Round()
        self.preset = None
        self.start = keyspace(self.lab, self.queue)
        return self.start

    @property
    def taken(self) -> list[Step]:
        return list(self._round.taken)

    @property
    def done(self) -> bool:
        return len(self._round.taken) == len(STEPS)

    @property
    def fired(self) -> list[Occurrence]:
        """The occurrences this round enqueued."""
        return list(self._round.fired)

    @property
    def advance_outcome(self) -> Outcome | None:
        """What the advance answered for ``name`` (None: not taken, or the pump held nothing)."""
        return next((outcome for name, outcome in self._round.advanced if name == self.name), None)

    @property
    def cancel_outcome(self) -> Outcome | None:
        return self._round.cancelled

    def why_not(self, step: str) -> str | None:
        """None if ``step`` may be taken now, else the reason it may not."""
        if step not in STEPS:
            raise ValueError(f"step: {step!r} is not a step; use one of {', '.join(STEPS)}")
        done = {s.step for s in self._round.taken}
        if step in done:
            return f"{step}: already taken this round; reset to replay"
        if step == "enqueue" and "read" not in done:
            return "enqueue: the pump enqueues what its read handed it; take read first"
        if step == "advance" and "enqueue" not in done:
            return "advance: the pump advances only after it enqueued; take enqueue first"
        return None

    def allowed(self, step: str) -> bool:
        return self.why_not(step) is None

    def step(self, step: str) -> Step:
        """Take one step; a step the pump's order forbids raises ValueError."""
        reason = self.why_not(step)
        if reason is not None:
            raise ValueError(reason)
        before = keyspace(self.lab, self.queue)
        note, outcome = getattr(self, f"_{step}")(before)
        taken = Step(step, note, keyspace(self.lab, self.queue), outcome)
        self._round.taken.append(taken)
        return taken

    def play(self, preset: str) -> list[Step]:
        """Reset, then take the steps of ``preset`` in order (see PRESETS)."""
        if preset not in PRESETS:
            raise ValueError(f"preset: {preset!r} is not a preset; use one of {', '.join(PRESETS)}")
        taken = self.replay(PRESETS[preset])
        self.preset = preset
        return taken

    def replay(self, order: tuple[str, ...] | list[str]) -> list[Step]:
        """Reset, then take ``order``; the first step the pump's order forbids raises ValueError."""
        self.reset()
        return [self.step(step) for step in order]

    # -- the steps ---------------------------------------------------------------------------

    def _read(self, before: Keyspace) -> tuple[str, Outcome | None]:
        state = self._round
        state.now_ms = self.lab.clock.now_ms()
        state.held = self.pump.read()
        if not state.held:
            return "nothing due: the pump holds nothing this tick", None
        row = state.held[0]
        every = "no record" if row.every_ms is None else f"every {row.every_ms // MIN} min"
        return f"due: {row.name} @ {hhmm(row.next_ms)} ({every}); the pump now holds it", None

    def _cancel(self, before: Keyspace) -> tuple[str, Outcome | None]:
        outcome = self.repeat.cancel(self.name)
        self._round.cancelled = outcome
        scores = dict(before.registry)
        if outcome is Outcome.CANCELLED and self.name in scores:
            run = hhmm(scores[self.name])
            return f"{outcome.tuple}: member (next run {run}) and record of {self.name} deleted", outcome
        if outcome is Outcome.CANCELLED:
            return f"{outcome.tuple}: record of {self.name} deleted", outcome
        return f"{outcome.tuple}: nothing to delete", outcome

    def _enqueue(self, before: Keyspace) -> tuple[str, Outcome | None]:
        state = self._round
        if not state.held:
            return "the pump holds nothing: no occurrence", None
        notes = []
        for row in state.held:
            occurrence = self.pump.produce(row, state.now_ms)
            if occurrence is None:
                notes.append(f"{row.name}: no new job")
                continue
            state.fired.append(occurrence)
            late = " (from what the read held; the cancel came too late)" if state.cancelled else ""
            notes.append(f"{occurrence.job_id} enqueued for the {hhmm(row.next_ms)} slot{late}")
        return "; ".join(notes), Outcome.ENQUEUED if state.fired else None

    def _advance(self, before: Keyspace) -> tuple[str, Outcome | None]:
        state = self._round
        if not state.held:
            return "the pump holds nothing: no advance", None
        notes = []
        members = {name for name, _ in before.registry}
        for row in state.held:
            outcome = self.pump.finish(row, state.now_ms)
            state.advanced.append((row.name, outcome))
            if outcome is Outcome.ADVANCED:
                notes.append(f"{outcome.tuple}: next run of {row.name} @ {hhmm(state.now_ms + (row.every_ms or 0))}")
            elif row.name in members:
                notes.append(f"{outcome.tuple}: record gone, the dangling member {row.name} swept")
            else:
                notes.append(f"{outcome.tuple}: record gone, so the guard re-adds nothing (the cancel took the member)")
        return "; ".join(notes), self.advance_outcome

    # -- reading the round -------------------------------------------------------------------

    def verdict(self) -> str:
        """One line: occurrences fired, what the advance answered, the registry, the invariant."""
        now = keyspace(self.lab, self.queue)
        label = PRESET_LABELS.get(self.preset or "", "your order")
        advance = self.advance_outcome.tuple if self.advance_outcome else "nothing (the pump held nothing)"
        registry = ", ".join(f"{name} @ {hhmm(ms)}" for name, ms in now.registry) or "empty"
        holds = "holds" if now.consistent else "BROKEN"
        return (
            f"{label}: {len(self._round.fired)} occurrence(s) fired, advance answered {advance}, "
            f"registry {registry}, invariant {holds}"
        )

    def text(self) -> str:
        """The multi-line readout: steps taken, their answers, the keyspace, the invariant."""
        lines = [f"race on {self.name} (every {self.every_ms // MIN} min), queue {self.queue}"]
        if self.preset:
            lines[0] += f" - preset: {PRESET_LABELS[self.preset]}"
        order = " -> ".join(s.step for s in self._round.taken) or "(none yet)"
        lines.append(f"steps: {order}")
        for s in self._round.taken:
            lines.append(f"  {LABELS[s.step]:<14} {s.note}")
        advance = self.advance_outcome.tuple if self.advance_outcome else "-"
        lines.append(f"advance outcome: {advance}")
        lines.append(f"occurrences fired: {len(self._round.fired)}")
        lines.extend(keyspace(self.lab, self.queue).lines())
        left = [LABELS[s] for s in STEPS if self.allowed(s)]
        lines.append(f"next: {', '.join(left)}" if left else "next: round complete (reset or pick a preset)")
        return "\n".join(lines)


@dataclass(frozen=True)
class Orders:
    """Every order of the four steps, tried: which the pump's order allows, and whether the
    invariant held after each step of each allowed one."""

    allowed: tuple[tuple[tuple[str, ...], int], ...]  # (order, occurrences fired)
    refused: tuple[tuple[str, ...], ...]
    invariant_after_every_step: bool

    def __str__(self) -> str:
        lines = [f"{len(self.allowed) + len(self.refused)} orders of the four steps"]
        lines.append(
            f"  refused by the pump's order (enqueue before read, advance before enqueue): {len(self.refused)}"
        )
        lines.append(f"  allowed: {len(self.allowed)}")
        for order, fired in self.allowed:
            lines.append(f"    {' -> '.join(order):<38} {fired} occurrence(s)")
        held = "yes" if self.invariant_after_every_step else "NO"
        lines.append(f"every registry member had a record after every step: {held}")
        return "\n".join(lines)


def every_order(race: Race) -> Orders:
    """Replay every permutation of STEPS on ``race`` and check the invariant after each step."""
    allowed: list[tuple[tuple[str, ...], int]] = []
    refused: list[tuple[str, ...]] = []
    held = True
    for order in permutations(STEPS):
        try:
            taken = race.replay(order)
        except ValueError:
            refused.append(order)
            continue
        held = held and race.start.consistent and all(s.after.consistent for s in taken)
        allowed.append((order, len(race.fired)))
    race.reset()
    return Orders(tuple(allowed), tuple(refused), held)


# --- the presets, step by step (what the keyspace figure draws) --------------------------


@dataclass(frozen=True)
class Mark:
    """The race's name after one step: its registry score (None: no member), whether its
    record exists, how many occurrences the step enqueued, and the invariant."""

    step: str  # "start" for the keyspace before the first step
    next_ms: int | None
    record: bool
    fired: int
    consistent: bool

    @property
    def member(self) -> bool:
        return self.next_ms is not None


def marks(name: str, start: Keyspace, taken: list[Step] | tuple[Step, ...]) -> tuple[Mark, ...]:
    """The marks of one round: the start, then one per step taken (a pure function)."""
    out: list[Mark] = []
    before: Keyspace | None = None
    for step, state in [("start", start), *((s.step, s.after) for s in taken)]:
        fired = 0 if before is None else max(0, len(state.jobs) - len(before.jobs))
        out.append(Mark(step, dict(state.registry).get(name), name in state.records, fired, state.consistent))
        before = state
    return tuple(out)


def preset_marks(race: Race) -> dict[str, tuple[Mark, ...]]:
    """Play every preset on ``race`` (the real scripts) and return its marks, by preset label.
    The race is reset at the end."""
    rounds: dict[str, tuple[Mark, ...]] = {}
    for preset in PRESETS:
        taken = race.play(preset)
        rounds[PRESET_LABELS[preset]] = marks(race.name, race.start, taken)
    race.reset()
    return rounds


# --- the crash between enqueue and advance -------------------------------------------------


@dataclass(frozen=True)
class CrashReplay:
    """A tick that crashed after its enqueue, and the restarted pump's tick on the same slot."""

    name: str
    slot_keyed: bool
    slot_ms: int
    crash_ms: int
    restart_ms: int
    before_crash: tuple[Occurrence, ...]
    due_after_crash: tuple[tuple[str, int], ...]
    on_restart: tuple[Occurrence, ...]
    restart_advance: Outcome | None
    jobs: tuple[str, ...]

    @property
    def duplicates(self) -> int:
        """Jobs beyond the first for the one slot the replay touched."""
        return max(0, len(self.jobs) - 1)

    def __str__(self) -> str:
        mode = "slot-keyed ids <name>:<slot_ms>" if self.slot_keyed else "fresh ids from the counter"
        slot = hhmm(self.slot_ms)
        made = ", ".join(o.job_id for o in self.before_crash) or "nothing"
        still = ", ".join(f"{n} @ {hhmm(ms)}" for n, ms in self.due_after_crash) or "(empty)"
        again = ", ".join(o.job_id for o in self.on_restart)
        restart = (
            f"enqueued {again} for the {slot} slot again"
            if again
            else "the slot's id is already stored: nothing enqueued"
        )
        advance = self.restart_advance.tuple if self.restart_advance else "-"
        return "\n".join(
            [
                f"pump with {mode}, fault switch on",
                f"  {hhmm(self.crash_ms)} tick: enqueued {made} for the {slot} slot, then crashed before advance",
                f"  registry after the crash: {still} - the name is still due",
                f"  {hhmm(self.restart_ms)} restart: {restart}; advance {advance}",
                f"  jobs for the {slot} slot: {', '.join(self.jobs)}",
                f"verdict: {self.duplicates} duplicate(s)",
            ]
        )


def replay_crash(
    lab: Lab,
    queue: str,
    *,
    slot_keyed: bool,
    name: str = "report",
    every_ms: int = 15 * MIN,
    restart_after_ms: int = MIN,
) -> CrashReplay:
    """On a queue of its own (reset first): register ``name`` due now, tick a pump whose
    fault switch is on so it crashes after the enqueue, move a SimClock ``restart_after_ms``
    on, and tick a fresh pump with the same ``slot_keyed`` mode: two clicks of a
    :class:`CrashBench` with the fault on."""
    validate.name(queue, field="queue")
    if restart_after_ms and getattr(lab.clock, "advance", None) is None:
        raise ValueError("restart_after_ms: moving the clock needs a SimClock; pass 0 otherwise")
    bench = CrashBench(
        lab, queue, name=name, every_ms=every_ms, restart_after_ms=restart_after_ms, crash=True, slot_keyed=slot_keyed
    )
    crashed = bench.tick()
    if crashed.kind != CRASH or crashed.slot_ms is None:
        raise RuntimeError("replay_crash: the pump did not crash; is the fault switch wired?")
    restarted = bench.tick()
    return CrashReplay(
        name=name,
        slot_keyed=slot_keyed,
        slot_ms=crashed.slot_ms,
        crash_ms=crashed.at_ms,
        restart_ms=restarted.at_ms,
        before_crash=crashed.occurrences,
        due_after_crash=crashed.registry,
        on_restart=restarted.occurrences,
        restart_advance=restarted.advance,
        jobs=tuple(reversed(lab.jobs(queue).browse(limit=100))),
    )


# --- the crash, one click at a time (what the CrashPanel drives) ---------------------------

TICK = "tick"  # a running pump's tick
CRASH = "crash"  # a running pump's tick with the fault on: enqueued, then died before the advance
RESTART = "restart"  # the restarted pump's first tick


@dataclass(frozen=True)
class CrashTick:
    """One tick of a :class:`CrashBench`: what kind it was, when, for which slot, what it
    enqueued, what its advance answered (None: it crashed first, or nothing was due) and the
    registry right after it."""

    kind: str
    at_ms: int
    slot_ms: int | None  # the slot the name was due for; None when nothing was due
    occurrences: tuple[Occurrence, ...]
    advance: Outcome | None
    registry: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        at = f"{hhmm(self.at_ms)} {'restart' if self.kind == RESTART else 'tick'}"
        if self.slot_ms is None:
            return f"{at}: nothing due"
        slot = hhmm(self.slot_ms)
        made = ", ".join(o.job_id for o in self.occurrences)
        if not made:
            enqueued = "the slot's id is already stored: nothing enqueued"
        elif self.kind == RESTART:
            enqueued = f"enqueued {made} for the {slot} slot again"
        else:
            enqueued = f"enqueued {made} for the {slot} slot"
        if self.kind == CRASH:
            return f"{at}: {enqueued}, then crashed before advance"
        advance = self.advance.tuple if self.advance else "-"
        upcoming = ", ".join(f"next run {hhmm(ms)}" for _, ms in self.registry)
        return f"{at}: {enqueued}; advance {advance}" + (f", {upcoming}" if upcoming else "")


def jobs_per_slot(ticks: list[CrashTick] | tuple[CrashTick, ...]) -> dict[int, tuple[str, ...]]:
    """The job ids enqueued for each slot, slots in time order (a pure function)."""
    slots: dict[int, list[str]] = {}
    for tick in ticks:
        if tick.slot_ms is not None:
            slots.setdefault(tick.slot_ms, []).extend(o.job_id for o in tick.occurrences)
    return {slot: tuple(ids) for slot, ids in sorted(slots.items()) if ids}


def count_duplicates(per_slot: dict[int, tuple[str, ...]]) -> int:
    """Jobs beyond the first in every slot (a pure function)."""
    return sum(max(0, len(ids) - 1) for ids in per_slot.values())


def _checked_switch(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{field}: expected True or False, got {value!r}")
    return value


class CrashBench:
    """One name on a queue of its own, ticked one click at a time, with a fault switch.

    With ``crash`` on, a running pump's tick crashes after its enqueue, before the advance, and
    the next tick is the restarted pump's (``restart_after_ms`` later on a SimClock; a restarted
    pump runs clean). With ``crash`` off a tick is a plain ``Pump.tick()``. A running pump ticks
    at the name's next run: a SimClock behind it moves there (a clock that cannot move is read as
    it is). ``slot_keyed`` picks the ids: fresh ``JOB-`` ids from the counter, or ``<name>:<slot_ms>``;
    switching it starts a new round, so one round never mixes the two. The queue is reset on
    creation.
    """

    def __init__(
        self,
        lab: Lab,
        queue: str,
        *,
        name: str = "report",
        every_ms: int = 15 * MIN,
        template: str = '{"report": "daily"}',
        restart_after_ms: int = MIN,
        crash: bool = False,
        slot_keyed: bool = False,
    ) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.name = validate.name(name)
        self.every_ms = validate.every_ms(every_ms)
        self.template = validate.template(template)
        if isinstance(restart_after_ms, bool) or not isinstance(restart_after_ms, int):
            raise ValueError(f"restart_after_ms: expected an int of milliseconds, got {restart_after_ms!r}")
        if not 0 <= restart_after_ms < every_ms:
            raise ValueError(
                f"restart_after_ms: must be from 0 to below every_ms ({every_ms}) so the restart meets "
                f"the same slot, got {restart_after_ms}"
            )
        self.restart_after_ms = restart_after_ms
        self.crash = _checked_switch(crash, "crash")
        self.slot_keyed = _checked_switch(slot_keyed, "slot_keyed")
        self.ticks: list[CrashTick] = []
        self.restart_pending = False  # the last tick crashed: the next one is the restarted pump's
        self.reset()

    # -- controls ------------------------------------------------------------------------------

    def set(self, *, crash: bool | None = None, slot_keyed: bool | None = None) -> None:
        """Flip the fault switch and/or the id mode. A new id mode starts a new round (reset)."""
        new_crash = self.crash if crash is None else _checked_switch(crash, "crash")
        new_keyed = self.slot_keyed if slot_keyed is None else _checked_switch(slot_keyed, "slot_keyed")
        if new_keyed != self.slot_keyed:
            self.reset()  # first, so a failed reset leaves the old mode in place
            self.slot_keyed = new_keyed
        self.crash = new_crash

    def reset(self) -> None:
        """Empty the queue, register the name due now, forget the ticks and any pending restart."""
        self.lab.reset(self.queue)
        self.lab.repeat(self.queue).register(self.name, self.every_ms, self.template)
        self.ticks = []
        self.restart_pending = False

    def tick(self) -> CrashTick:
        """One click: the restarted pump's tick if the last one crashed, else a running pump's
        tick at the name's next run (crashing after its enqueue when the fault is on)."""
        rep = self.lab.repeat(self.queue)
        restart = self.restart_pending
        if restart:
            self._move_to(self.lab.clock.now_ms() + self.restart_after_ms)
        else:
            upcoming = dict(rep.entries()).get(self.name)
            if upcoming is not None:
                self._move_to(upcoming)
        now = self.lab.clock.now_ms()
        slot = dict(rep.entries()).get(self.name)
        if slot is not None and slot > now:
            slot = None
        pump = self.lab.pump(self.queue, slot_keyed=self.slot_keyed)
        pump.crash_after_enqueue = self.crash and not restart
        kind = RESTART if restart else TICK
        try:
            fired = pump.tick()
        except PumpCrash as crash:
            fired, kind = list(crash.occurrences), CRASH
        self.restart_pending = kind == CRASH
        taken = CrashTick(
            kind=kind,
            at_ms=now,
            slot_ms=slot,
            occurrences=tuple(fired),
            advance=None if kind == CRASH else dict(pump.advanced).get(self.name),
            registry=tuple(rep.entries()),
        )
        self.ticks.append(taken)
        return taken

    def _move_to(self, target_ms: int) -> None:
        """Move a SimClock forward to ``target_ms`` (never back; a clock that cannot move stays)."""
        advance = getattr(self.lab.clock, "advance", None)
        behind = target_ms - self.lab.clock.now_ms()
        if advance is not None and behind > 0:
            advance(behind)

    # -- reading the round ---------------------------------------------------------------------

    @property
    def per_slot(self) -> dict[int, tuple[str, ...]]:
        """The job ids enqueued for each slot of this round."""
        return jobs_per_slot(self.ticks)

    @property
    def duplicates(self) -> int:
        """Jobs beyond the first, summed over the round's slots."""
        return count_duplicates(self.per_slot)

    @property
    def ids(self) -> str:
        return f"slot-keyed {self.name}:<slot_ms>" if self.slot_keyed else "fresh JOB- ids from the counter"

    def next_click(self) -> str:
        """What the next tick will be."""
        if self.restart_pending:
            return "the restarted pump's tick (it runs clean)"
        upcoming = dict(self.lab.repeat(self.queue).entries()).get(self.name)
        if upcoming is None:
            return "a tick with nothing due"
        at = hhmm(max(upcoming, self.lab.clock.now_ms()))
        return f"a tick at {at}" + (" that crashes after its enqueue" if self.crash else "")

    def text(self) -> str:
        """The multi-line readout: the switches, every tick, the jobs per slot, the duplicates."""
        fault = "on" if self.crash else "off"
        lines = [
            f"crash bench: {self.name} every {self.every_ms // MIN} min, queue {self.queue}",
            f"fault (crash after enqueue): {fault} | occurrence ids: {self.ids}",
            "ticks:" if self.ticks else "ticks: (none yet)",
        ]
        lines.extend(f"  {tick}" for tick in self.ticks)
        per_slot = self.per_slot
        lines.append("jobs per slot:" if per_slot else "jobs per slot: (none)")
        for slot, ids in per_slot.items():
            lines.append(f"  {hhmm(slot)} slot: {', '.join(ids)} - {len(ids) - 1} duplicate(s)")
        lines.append(f"duplicates: {self.duplicates}")
        lines.append(f"next click: {self.next_click()}")
        return "\n".join(lines)
