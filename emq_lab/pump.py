"""The pump. A tick has three phases, which the dives step through: ``read`` (due.lua: the due rows
with their records), ``enqueue`` (enqueue.lua a live row: one job) and ``advance`` (advance.lua a
row: its next run by the pump's rule, only if it still holds the score and the period read).
``Pump.tick()`` runs them, each row's advance right after its enqueue in one pipeline.

A fault raises the backend's error carrying ``.fired`` (the occurrences stored before it) and
``.in_doubt`` (the names whose enqueue was in the pipeline whose reply was lost, never sent again)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from redis.exceptions import RedisError

from . import scripts, validate
from .clock import AdvancingClock, whole_ms
from .outcome import Outcome
from .schedule import Measure, Rule, next_run, rule_of
from .scripts import Call, Row

if TYPE_CHECKING:
    from .lab import Lab


class Occurrence(NamedTuple):
    """One run produced by a tick."""

    job_id: str
    name: str
    fired_at_ms: int
    slot_ms: int  # the registry score that made it due


@dataclass(frozen=True)
class TickResult:
    """What one tick did: its now, the rows it read, the occurrences it stored and what each
    advance answered (``(name, Outcome)``; a row left for its finish has none)."""

    now_ms: int
    rows: list[Row]
    fired: list[Occurrence]
    advanced: list[tuple[str, Outcome]]  # MOVED: the row was no longer the one read, left alone


class Pump:
    """Drives one queue. ``batch`` bounds the rows a tick takes; ``slot_keyed`` names each
    occurrence ``<name>:<slot_ms>`` so a replayed slot collides. ``rule`` measures the next run (a
    :data:`~emq_lab.schedule.Rule`; start-to-finish leaves the row for ``Repeat.advance`` at the run's finish)."""

    def __init__(
        self, lab: Lab, queue: str, *, batch: int = 100, slot_keyed: bool = False, rule: Rule = Measure.START_TO_START
    ) -> None:
        self.lab, self.k = lab, lab.keyspace(queue)  # keyspace checks the name
        self.queue = self.k.queue
        self.batch = validate.limit(batch, field="batch")
        if self.batch > scripts.MAX_BATCH:
            raise ValueError(f"batch: at most {scripts.MAX_BATCH} rows a tick, got {batch}")
        self.rule = rule_of(rule)
        self.slot_keyed = validate.switch(slot_keyed, "slot_keyed")

    def begin(self) -> Tick:
        """A tick, its "now" read from the lab's clock; take its phases or ``run()`` it."""
        return Tick(self, self.lab.clock.now_ms())

    def tick(self) -> list[Occurrence]:
        """One pass: due read -> enqueue -> advance (by the rule). A late name fires once."""
        return self.begin().run().fired

    def run(self, *, until_ms: int, step_ms: int) -> list[Occurrence]:
        """Tick, then move a SimClock by ``step_ms``, until now passes ``until_ms``."""
        validate.integer(until_ms, "until_ms", 0, unit=" ms")
        validate.limit(step_ms, field="step_ms")
        clock = self.lab.clock
        if not isinstance(clock, AdvancingClock):
            raise ValueError("clock: run() needs a SimClock (one that can advance)")
        fired: list[Occurrence] = []
        while clock.now_ms() <= until_ms:
            try:
                fired.extend(self.tick())
            except RedisError as exc:
                carrying(exc, fired + getattr(exc, "fired", []))  # the earlier ticks' too
                raise
            clock.advance(step_ms)
        return fired

    def drain(self) -> list[Occurrence]:
        """Ticks at one now until one has nothing new to fire (``while pump.tick(): ...`` on a clock
        that stands still). It stops before a tick that would fire again a slot this drain fired (a
        row left due where it was: a run left for its finish, a rule that keeps the row at now)."""
        now = self.lab.clock.now_ms()
        fired: list[Occurrence] = []
        slots: set[tuple[str, int]] = set()  # the (name, slot) pairs this drain fired
        while True:
            tick = Tick(self, now)
            try:
                rows = tick.read()
                if not rows or any((row.name, row.slot_ms) in slots for row in rows):
                    return fired
                tick.fire()
            except RedisError as exc:
                carrying(exc, fired + tick.fired)
                raise
            fired += tick.fired
            slots.update((row.name, row.slot_ms) for row in rows)


PHASES = ("read", "enqueue", "advance")


@dataclass
class Tick:
    """One pass of a pump, phase by phase: ``read()``, ``enqueue()``, ``advance()`` (each once, in
    that order), or ``run()`` for all three. ``now_ms`` is read once, when the tick begins."""

    pump: Pump
    now_ms: int
    rows: list[Row] = field(default_factory=list)  # the rows this tick takes
    fired: list[Occurrence] = field(default_factory=list)
    advanced: list[tuple[str, Outcome]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # phases taken, in order
    planned: list[tuple[Row, int | None]] | None = field(default=None, init=False, repr=False)

    def read(self) -> list[Row]:
        """The due rows: scored at or before now, in score order, one batch, with their records."""
        self._enter("read")
        p = self.pump
        try:
            self.rows = scripts.rows(scripts.send(p.lab.scripts, scripts.due(p.k, self.now_ms, p.batch), p.lab.client))
        except RedisError as exc:
            carrying(exc, [], [])
            raise
        return self.rows

    def enqueue(self) -> list[Occurrence]:
        """Enqueue one occurrence per live row read (a gone record, a replayed slot, or a refused row
        whose stored template is over register's size makes none; the refused row still advances)."""
        self._send("enqueue")
        return self.fired

    def advance(self) -> list[tuple[str, Outcome]]:
        """Advance each row read by the pump's rule if it still holds the score and period read (MOVED if
        not), sweep each whose record is gone; under start-to-finish a live row is left for the
        worker that finishes the run."""
        self._send("advance")
        return self.advanced

    def fire(self) -> list[Occurrence]:
        """The enqueue and advance phases at once, in one pipeline: each row's enqueue, then its advance."""
        self._send("enqueue", "advance")
        return self.fired

    def run(self, *, after_enqueue: Callable[[Tick], None] | None = None) -> TickResult:
        """read, then enqueue -> advance in one pipeline (row by row) without a hook;
        ``after_enqueue(tick)`` runs between the two (the cancel dive's crash goes there)."""
        self.read()
        if after_enqueue is None:
            self.fire()
        else:
            self.enqueue()
            after_enqueue(self)
            self.advance()
        return self.result

    @property
    def result(self) -> TickResult:
        return TickResult(self.now_ms, list(self.rows), list(self.fired), list(self.advanced))

    def next_run(self, row: Row) -> int:
        """The score this tick's advance sends for ``row``, one of the rows it read (see :meth:`_plan`)."""
        if row not in self.rows:
            raise ValueError(f"row: {row.name!r} is not a row this tick read")
        nxt = next(planned for read, planned in self._plan() if read == row)
        if nxt is None:
            raise ValueError("rule: under start-to-finish the run's finish advances the row, not the pump")
        return nxt

    def _enter(self, phase: str) -> None:
        if phase in self.done:
            raise ValueError(f"{phase}: this tick already took it; begin a new tick")
        if phase != PHASES[len(self.done)]:  # done is always a prefix of PHASES
            raise ValueError(f"{phase}: a tick goes read -> enqueue -> advance; take {PHASES[len(self.done)]} first")
        self.done.append(phase)

    def _plan(self) -> list[tuple[Row, int | None]]:
        """Each row read with the score its advance writes: the rule's next run, now for a member
        whose record is gone (advance.lua sweeps it), None for a run left for its finish. Worked
        out once, before the tick's first write (a rule that fails writes nothing)."""
        if self.planned is None:
            rule, now, planned = self.pump.rule, self.now_ms, []
            for row in self.rows:
                nxt = now if row.every_ms is None else next_run(rule, row.slot_ms, row.every_ms, now)
                planned.append((row, None if nxt is None else whole_ms(nxt, "rule: the next run")))
            self.planned = planned
        return self.planned

    def _send(self, *phases: str) -> None:
        """The phases' calls in one pipeline, row by row (its enqueue, then its advance, so a cut
        pipeline leaves at most the row in flight enqueued but not advanced); the replies go into
        ``fired`` and ``advanced``."""
        for phase in phases:
            self._enter(phase)
        p = self.pump
        calls: list[tuple[Row, Call]] = []
        for row, nxt in self._plan():
            if "enqueue" in phases and row.every_ms is not None and row.template_bytes is None:
                job_id = f"{row.name}:{row.slot_ms}" if p.slot_keyed else None  # a replayed slot collides
                calls.append((row, scripts.enqueue(p.k, row.name, self.now_ms, row.template or "", job_id)))
            if "advance" in phases and nxt is not None:
                calls.append((row, scripts.advance(p.k, row.name, nxt, row.slot_ms, row.every_ms)))
        try:
            replies = scripts.send_all(p.lab.client, p.lab.scripts, [call for _, call in calls])
        except RedisError as exc:
            carrying(exc, list(self.fired), [row.name for row, call in calls if call.script == "enqueue"])
            raise
        for (row, call), reply in zip(calls, replies, strict=True):
            if call.script == "advance":
                self.advanced.append((row.name, scripts.outcome("advance", reply)))
                continue
            outcome, job_id = scripts.enqueued(reply)
            if outcome is Outcome.ENQUEUED:
                self.fired.append(Occurrence(job_id, row.name, self.now_ms, row.slot_ms))


def carrying(error: RedisError, fired: list[Occurrence], in_doubt: list[str] | None = None) -> None:
    """``error`` with ``fired`` and ``in_doubt`` (kept from an inner call when None) and a note."""
    if not hasattr(error, "fired"):
        error.add_note(
            "the occurrences fired before this error are on its .fired, the names that may or may not"
            " have fired on its .in_doubt; read the wait list first"
        )
    error.fired = fired  # type: ignore[attr-defined]
    if in_doubt is not None or not hasattr(error, "in_doubt"):
        error.in_doubt = list(in_doubt or [])  # type: ignore[attr-defined]
