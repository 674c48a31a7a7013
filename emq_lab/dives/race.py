"""The cancel dive's race: the real tick's phases (``Pump.begin()`` -> ``Tick.read / enqueue / advance``)
one step at a time, a cancel (or a registration anew) between any two; the CancelPanel shows a :class:`Race`."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import TYPE_CHECKING

from .. import validate
from ..backend import scored
from ..clock import SimClock, duration, hhmm
from ..outcome import Outcome
from ..pump import Occurrence, Tick
from ..schedule import MINUTE_MS
from .common import entries_text, one_registration, record_names

if TYPE_CHECKING:
    from ..lab import Lab

LABELS = {"read": "pump reads due", "cancel": "cancel lands", "enqueue": "pump enqueues", "advance": "pump advances"}
STEPS = tuple(LABELS)
PRESETS: dict[str, tuple[str, ...]] = {
    "before-read": ("cancel", "read", "enqueue", "advance"),
    "after-read": ("read", "cancel", "enqueue", "advance"),
    "after-enqueue": ("read", "enqueue", "cancel", "advance"),
    "after-advance": ("read", "enqueue", "advance", "cancel"),
}
# The compare-and-set's lesson: cancel and register anew between read and advance; a preset, never in every_order().
REGISTER = "register"
ALL_LABELS = {**LABELS, REGISTER: "registered anew"}
REREGISTER_EVERY_MS = 60 * MINUTE_MS
REREGISTER_FIRST_IN_MS = 30 * MINUTE_MS
EXTRA_PRESETS: dict[str, tuple[str, ...]] = {"re-register": ("read", "cancel", REGISTER, "enqueue", "advance")}
PRESET_LABELS = {
    "before-read": "cancel before the read",
    "after-read": "cancel between read and enqueue",
    "after-enqueue": "cancel between enqueue and advance",
    "after-advance": "cancel after the advance",
    "re-register": "cancel and register anew between read and advance",
}


@dataclass(frozen=True)
class Snapshot:
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

    @property
    def invariant(self) -> str:
        if self.consistent:
            return "every registry member has a record - holds"
        return f"BROKEN - no record for {', '.join(self.dangling)}"

    def __str__(self) -> str:
        lines = [
            f"registry: {entries_text(self.registry)}",
            f"records:  {', '.join(self.records) or '(none)'}",
            f"jobs:     {', '.join(self.jobs) or '(none)'}",
            f"invariant: {self.invariant}",
        ]
        return "\n".join(lines)


def snapshot(lab: Lab, queue: str) -> Snapshot:
    """Read the registry, the records and the wait list of ``queue``."""
    k = lab.keyspace(queue)
    records = record_names(lab, queue)
    pipe = lab.client.pipeline(transaction=False)  # the registry and the wait list in one round trip
    pipe.zrange(k.registry, 0, -1, withscores=True)
    pipe.lrange(k.wait, 0, -1)
    members, jobs = pipe.execute()
    return Snapshot(registry=tuple(scored(members)), records=tuple(records), jobs=tuple(jobs))


def drop_record(lab: Lab, queue: str, name: str) -> bool:
    """Delete ``name``'s record out of band (not through cancel), leaving its member dangling; True if there was one."""
    validate.name(name)
    return bool(lab.client.delete(lab.keyspace(queue).record(name)))


@dataclass(frozen=True)
class Step:
    """One step taken: what it was, what it answered, and the keyspace right after it."""

    step: str
    note: str
    after: Snapshot
    outcome: Outcome | None


class Race:
    """A pump tick on ``name`` in steps (read, enqueue, advance, in that order, each once a round) and a
    cancel anywhere, on a queue of its own, on a SimClock stopped at the lab's now: every round is the same tick."""

    def __init__(
        self,
        lab: Lab,
        queue: str = "race",
        *,
        name: str = "report",
        every_ms: int = 15 * MINUTE_MS,
        template: str = '{"report": "daily"}',
    ) -> None:
        self.lab = lab = lab.with_clock(SimClock(lab.clock.now_ms()))
        self.queue = validate.name(queue, field="queue")
        self.name, self.every_ms, self.template = validate.registration(name, every_ms, template)
        self.repeat, self.pump = lab.repeat(queue), lab.pump(queue)
        self.reset()

    def reset(self) -> Snapshot:
        """Empty the queue, register ``name`` due now, forget the steps taken."""
        one_registration(self.lab, self.queue, self.name, self.every_ms, self.template)
        self.taken: list[Step] = []
        self._tick: Tick | None = None  # the pump's tick, begun at the read
        self.preset: str | None = None
        self.start = snapshot(self.lab, self.queue)
        return self.start

    @property
    def fired(self) -> list[Occurrence]:
        """The occurrences this round enqueued."""
        return list(self._tick.fired) if self._tick else []

    @property
    def advance_outcome(self) -> Outcome | None:
        """What the advance answered for ``name`` (None: not taken, or the pump held nothing)."""
        advanced = self._tick.advanced if self._tick else []
        return next((outcome for name, outcome in advanced if name == self.name), None)

    def why_not(self, step: str) -> str | None:
        """None if ``step`` may be taken now, else the reason it may not."""
        if step not in ALL_LABELS:
            raise ValueError(f"step: {step!r} is not a step; use one of {', '.join(ALL_LABELS)}")
        done = {s.step for s in self.taken}
        if step in done:
            return f"{step}: already taken this round; reset to replay"
        if step == REGISTER and "cancel" not in done:
            return "register: the name is still registered (it would answer exists); take cancel first"
        if step == "enqueue" and "read" not in done:
            return "enqueue: the pump enqueues what its read handed it; take read first"
        if step == "advance" and "enqueue" not in done:
            return "advance: the pump advances only after it enqueued; take enqueue first"
        return None

    def may_take(self, step: str) -> bool:
        return self.why_not(step) is None

    def step(self, step: str) -> Step:
        """Take one step; a step the pump's order forbids raises ValueError."""
        if (reason := self.why_not(step)) is not None:
            raise ValueError(reason)
        before = snapshot(self.lab, self.queue)
        note, outcome = getattr(self, f"_{step}")(before)
        taken = Step(step, note, snapshot(self.lab, self.queue), outcome)
        self.taken.append(taken)
        return taken

    def play(self, preset: str) -> list[Step]:
        """Reset, then take the steps of ``preset`` (PRESETS, EXTRA_PRESETS) in order."""
        presets = {**PRESETS, **EXTRA_PRESETS}
        if preset not in presets:
            raise ValueError(f"preset: {preset!r} is not a preset; use one of {', '.join(presets)}")
        taken = self.replay(presets[preset])
        self.preset = preset
        return taken

    def replay(self, order: tuple[str, ...] | list[str]) -> list[Step]:
        """Reset, then take ``order``; the first step the pump's order forbids raises ValueError."""
        self.reset()
        return [self.step(step) for step in order]

    def _read(self, before: Snapshot) -> tuple[str, Outcome | None]:
        tick = self._tick = self.pump.begin()
        rows = tick.read()
        if not rows:
            return "nothing due: the pump holds nothing this tick", None
        row = rows[0]
        every = "no record" if row.every_ms is None else f"every {duration(row.every_ms)}"
        return f"due: {row.name} @ {hhmm(row.slot_ms)} ({every}); the pump now holds it", None

    def _cancel(self, before: Snapshot) -> tuple[str, Outcome | None]:
        outcome = self.repeat.cancel(self.name)
        if outcome is not Outcome.CANCELLED:
            return f"{outcome.tuple}: nothing to delete", outcome
        next_ms = dict(before.registry).get(self.name)
        member = "" if next_ms is None else f"member (next run {hhmm(next_ms)}) and "
        return f"{outcome.tuple}: {member}record of {self.name} deleted", outcome

    def _register(self, before: Snapshot) -> tuple[str, Outcome | None]:
        outcome = self.repeat.register(self.name, REREGISTER_EVERY_MS, self.template, REREGISTER_FIRST_IN_MS)
        first = dict(self.repeat.entries()).get(self.name)
        when = f", first run {hhmm(first)}" if first is not None else ""
        return f"{outcome.tuple}: {self.name} every {duration(REREGISTER_EVERY_MS)}{when}", outcome

    def _begun_tick(self) -> Tick:
        """The pump's tick this round, begun at the read (enqueue and advance come after it)."""
        assert self._tick is not None  # why_not: enqueue and advance come after the read
        return self._tick

    def _enqueue(self, before: Snapshot) -> tuple[str, Outcome | None]:
        tick = self._begun_tick()
        fired = tick.enqueue()
        if not tick.rows:
            return "the pump holds nothing: no occurrence", None
        made = {o.name: o for o in fired}
        cancelled = any(s.step == "cancel" for s in self.taken)
        late = " (from what the read held; the cancel came too late)" if cancelled else ""
        notes = []
        for row in tick.rows:
            occurrence = made.get(row.name)
            if occurrence is None:
                notes.append(f"{row.name}: no new job")
            else:
                notes.append(f"{occurrence.job_id} enqueued for the {hhmm(row.slot_ms)} slot{late}")
        return "; ".join(notes), Outcome.ENQUEUED if fired else None

    def _advance(self, before: Snapshot) -> tuple[str, Outcome | None]:
        tick = self._begun_tick()
        outcomes = dict(tick.advance())
        if not tick.rows:
            return "the pump holds nothing: no advance", None
        notes = []
        members = dict(before.registry)
        for row in tick.rows:
            outcome = outcomes[row.name]
            if outcome is Outcome.ADVANCED:
                notes.append(f"{outcome.tuple}: next run of {row.name} @ {hhmm(tick.next_run(row))}")
            elif outcome is Outcome.MOVED:
                current = hhmm(members[row.name]) if row.name in members else "?"
                notes.append(
                    f"{outcome.tuple}: the row holds {row.name} @ {current}, not the {hhmm(row.slot_ms)} the read saw;"
                    " the compare-and-set wrote nothing"
                )
            elif row.name in members:
                notes.append(f"{outcome.tuple}: record gone, the dangling member {row.name} swept")
            else:
                notes.append(f"{outcome.tuple}: record gone, so the guard re-adds nothing (the cancel took the member)")
        return "; ".join(notes), self.advance_outcome

    def verdict(self) -> str:
        """One line: occurrences fired, what the advance answered, the registry, the invariant."""
        state = snapshot(self.lab, self.queue)
        label = PRESET_LABELS.get(self.preset or "", "your order")
        advance = self.advance_outcome.tuple if self.advance_outcome else "nothing (the pump held nothing)"
        registry = entries_text(state.registry, empty="empty")
        holds = "holds" if state.consistent else "BROKEN"
        return (
            f"{label}: {len(self.fired)} occurrence(s) fired, advance answered {advance}, "
            f"registry {registry}, invariant {holds}"
        )

    def text(self) -> str:
        """The multi-line readout: steps taken, their answers, the keyspace, the invariant."""
        lines = [f"race on {self.name} (every {duration(self.every_ms)}), queue {self.queue}"]
        if self.preset:
            lines[0] += f" - preset: {PRESET_LABELS[self.preset]}"
        lines.append(f"steps: {' -> '.join(s.step for s in self.taken) or '(none yet)'}")
        lines += [f"  {ALL_LABELS[s.step]:<14} {s.note}" for s in self.taken]
        lines.append(f"advance outcome: {self.advance_outcome.tuple if self.advance_outcome else '-'}")
        lines.append(f"occurrences fired: {len(self.fired)}")
        lines.append(str(snapshot(self.lab, self.queue)))
        left = [LABELS[s] for s in STEPS if self.may_take(s)]
        lines.append(f"next: {', '.join(left)}" if left else "next: round complete (reset or pick a preset)")
        return "\n".join(lines)


@dataclass(frozen=True)
class Orders:
    """Every order of the four steps: those the pump's order allows or refuses, and if the invariant always held."""

    allowed: tuple[tuple[tuple[str, ...], int], ...]  # (order, occurrences fired)
    refused: tuple[tuple[str, ...], ...]
    invariant_after_every_step: bool

    def __str__(self) -> str:
        holds = "yes" if self.invariant_after_every_step else "NO"
        lines = [
            f"{len(self.allowed) + len(self.refused)} orders of the four steps",
            f"  refused by the pump's order (enqueue before read, advance before enqueue): {len(self.refused)}",
            f"  allowed: {len(self.allowed)}",
            *(f"    {' -> '.join(order):<38} {fired} occurrence(s)" for order, fired in self.allowed),
            f"every registry member had a record after every step: {holds}",
        ]
        return "\n".join(lines)


def every_order(race: Race) -> Orders:
    """Replay every permutation of STEPS on ``race`` and check the invariant after each step."""
    allowed: list[tuple[tuple[str, ...], int]] = []
    refused: list[tuple[str, ...]] = []
    holds = True
    for order in permutations(STEPS):
        try:
            taken = race.replay(order)
        except ValueError:
            refused.append(order)
            continue
        holds = holds and race.start.consistent and all(s.after.consistent for s in taken)
        allowed.append((order, len(race.fired)))
    race.reset()
    return Orders(tuple(allowed), tuple(refused), holds)


@dataclass(frozen=True)
class Mark:
    """The race's name after one step: its score (None: no member), its record, the jobs it made, the invariant."""

    step: str  # "start" for the keyspace before the first step
    next_ms: int | None
    has_record: bool
    jobs_made: int
    consistent: bool

    @property
    def has_member(self) -> bool:
        return self.next_ms is not None


def preset_marks(race: Race) -> dict[str, tuple[Mark, ...]]:
    """Each of ``PRESETS`` played on ``race`` (reset at the end): the marks of its start and of each step, by label."""
    rounds: dict[str, tuple[Mark, ...]] = {}
    name = race.name
    for preset in PRESETS:
        taken = race.play(preset)
        marks, before = [], race.start
        for step, state in [("start", race.start), *((s.step, s.after) for s in taken)]:
            made = max(0, len(state.jobs) - len(before.jobs))
            marks.append(Mark(step, dict(state.registry).get(name), name in state.records, made, state.consistent))
            before = state
        rounds[PRESET_LABELS[preset]] = tuple(marks)
    race.reset()
    return rounds


def without_compare_and_set(lab: Lab, queue: str) -> list[str]:
    """The ``re-register`` preset on an emptied ``queue`` finished by an advance that does not compare
    (advance.lua with ARGV[3] = "", as the pump's advance was before): what it overwrote."""
    race = Race(lab, queue)
    name = race.name
    for step in EXTRA_PRESETS["re-register"][:-1]:
        race.step(step)
    tick = race._begun_tick()
    assert tick.rows  # the read held the name
    row = tick.rows[0]
    fresh = dict(race.repeat.entries())[name]
    written = tick.next_run(row)
    outcome = race.repeat.advance_to(name, written)
    every = duration(int(race.repeat.record(name)["every_ms"]))
    return [
        f"steps: {' -> '.join(EXTRA_PRESETS['re-register'][:-1])} -> advance without the compare",
        f"  registered anew: {name} every {every}, first run {hhmm(fresh)}",
        f"  pump advances  {outcome.tuple}: wrote {name} @ {hhmm(written)} "
        f"(the tick's now {hhmm(tick.now_ms)} + the old period, {duration(row.every_ms or 0)})",
        f"registry: {entries_text(race.repeat.entries())}; record: every {every}",
        f"the new registration's first run ({hhmm(fresh)}) is overwritten: it fires at {hhmm(written)}, "
        "on the old period's beat",
    ]
