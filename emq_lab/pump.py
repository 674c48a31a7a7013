"""The pump: each tick reads the due registrations, enqueues one occurrence per name and
advances its single registry row (start-to-start unless told otherwise), only if the row still
holds the run the tick read.

A tick has three phases, and the dives step through exactly these: ``read`` (due.lua: the due
rows and their records, one call), ``enqueue`` (enqueue.lua per live row, the job id minted in
the script) and ``advance`` (advance.lua per row: a compare-and-set against the score and period
read, or the sweep of a member whose record is gone). ``Pump.tick()`` runs the three; the
enqueues and advances go in one pipeline, each row's advance right after its enqueue.
``Pump.drain()`` is a loop of ticks.

A fault mid-tick or mid-drain raises the backend's error with ``.fired``: the occurrences stored
before it, and ``.in_doubt``: the names whose enqueue was in the pipeline whose reply was lost
(each may or may not have a job). Nothing is sent twice: the client's retry policy does not
re-send a call whose reply was lost (see ``backend.retry_policy``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from redis.exceptions import RedisError

from . import scripts, validate
from .clock import AdvancingClock, whole_ms
from .outcome import Outcome
from .schedule import Measure, next_on_grid, next_start_to_start
from .scripts import Call, Row

if TYPE_CHECKING:
    from .lab import Lab

#: A pump rule: a Measure (or its value), or ``(release_ms, every_ms) -> next_ms``.
Rule = Measure | str | Callable[[int, int], int]


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
    advanced: list[tuple[str, Outcome]]

    @property
    def moved(self) -> list[str]:
        """Names whose row was no longer the one read (cancelled and registered again): left alone."""
        return [name for name, outcome in self.advanced if outcome is Outcome.MOVED]


def carrying(error: RedisError, fired: list[Occurrence], in_doubt: list[str] | None = None) -> None:
    """``error`` with ``fired`` (the occurrences stored before it) on its ``.fired``, the names
    whose enqueue was in the step that failed on its ``.in_doubt`` (kept from an inner call when
    not given), and a note saying so. The calls of the step that failed may or may not have run
    on the server (a reply lost is not a call undone), and none is sent again: read the wait list
    before ticking on."""
    if not hasattr(error, "fired"):
        error.add_note(
            "the occurrences fired before this error are on its .fired, the names that may or may not"
            " have fired on its .in_doubt; read the wait list first"
        )
    error.fired = fired  # type: ignore[attr-defined]
    if in_doubt is not None or not hasattr(error, "in_doubt"):
        error.in_doubt = list(in_doubt or [])  # type: ignore[attr-defined]


def slot_id(name: str, slot_ms: int) -> str:
    """The slot-keyed occurrence id: the same slot always gets the same id."""
    return f"{name}:{slot_ms}"


PHASES = ("read", "enqueue", "advance")


@dataclass
class Tick:
    """One pass of a pump, phase by phase: ``read()``, ``enqueue()``, ``advance()`` (each once, in
    that order), or ``run()`` for all three. ``now_ms`` is read once, when the tick begins."""

    pump: Pump
    now_ms: int
    rows: list[Row] = field(default_factory=list)
    fired: list[Occurrence] = field(default_factory=list)
    advanced: list[tuple[str, Outcome]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # phases taken, in order
    more: bool = False  # the read was full: more rows may be due

    def read(self, *, skip: int = 0, passing: Collection[str] = ()) -> list[Row]:
        """The due read: members scored at or before now, in score order, one batch, with records.
        A drain passes what it fired and is still due: ``skip`` rows at the front (left at their
        score), and ``passing``, names to pass over wherever they sit (moved, still due)."""
        self._enter("read")
        p = self.pump
        call = scripts.due(p.k, self.now_ms, min(p.batch + len(passing), scripts.MAX_DUE), skip)
        try:
            found = scripts.rows(scripts.run(p.lab.scripts, call, p.lab.client))
        except RedisError as exc:
            carrying(exc, list(self.fired), [])
            raise
        self.rows = [row for row in found if row.name not in passing][: p.batch]
        self.more = len(found) == call.args[1]  # the read was full: more may be due
        return self.rows

    def enqueue(self) -> list[Occurrence]:
        """Enqueue one occurrence per live row read (a gone record, or a replayed slot, makes none)."""
        self._enter("enqueue")
        self._send(enqueue=True, advance=False)
        return self.fired

    def advance(self) -> list[tuple[str, Outcome]]:
        """Advance each row read by the pump's rule if it still holds the score read (MOVED if
        not), sweep each whose record is gone. Under start-to-finish a live row is left for the
        worker that finishes the run."""
        self._enter("advance")
        self._send(enqueue=False, advance=True)
        return self.advanced

    def fire(self) -> list[Occurrence]:
        """The enqueue and advance phases at once, in one pipeline: each row's enqueue, then its advance."""
        self._enter("enqueue")
        self._enter("advance")
        self._send(enqueue=True, advance=True)
        return self.fired

    def run(self, *, after_enqueue: Callable[[Tick], None] | None = None) -> TickResult:
        """read -> enqueue -> advance. Without a hook the enqueues and advances share one
        pipeline; ``after_enqueue(tick)`` runs between them (the crash dive's fault goes there)."""
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
        """The score the pump's rule gives ``row`` after this tick's release."""
        return self.pump.next_run(row, self.now_ms)

    def left(self) -> list[str]:
        """Names this tick read and left at their score for the finish (start-to-finish): no
        advance was sent, so each keeps its place in the score order."""
        return [row.name for row in self.rows if self.pump.leaves_for_finish(row)]

    def still_due(self) -> set[str]:
        """Names this tick fired whose row moved and may still be due at its now: moved by someone
        else, or to a next run at or before now (the grid's next slot, a rule's). Not the ``left``."""
        outcomes = dict(self.advanced)
        return {
            row.name
            for row, nxt in self._plan()
            if row.every_ms is not None
            and not self.pump.leaves_for_finish(row)
            and (nxt <= self.now_ms or outcomes.get(row.name) is not Outcome.ADVANCED)
        }

    # -- inside -------------------------------------------------------------------------------

    def _enter(self, phase: str) -> None:
        expected = PHASES[len(self.done)] if len(self.done) < len(PHASES) else None
        if phase != expected:
            if phase in self.done:
                raise ValueError(f"{phase}: this tick already took it; begin a new tick")
            raise ValueError(f"{phase}: a tick goes read -> enqueue -> advance; take {expected} first")
        self.done.append(phase)

    def _calls(self, *, enqueue: bool, advance: bool) -> list[tuple[str, Row, Call]]:
        """Per row, in order: its enqueue (a live row), then its advance (unless left for its
        finish). A cut pipeline then leaves at most the row in flight enqueued but not advanced."""
        p = self.pump
        calls: list[tuple[str, Row, Call]] = []
        for row, nxt in self._plan():  # a rule that fails, fails before the tick writes anything
            if enqueue and row.every_ms is not None:
                job = scripts.enqueue(p.k, row.name, self.now_ms, row.template or "", self._job_id(row))
                calls.append(("enqueue", row, job))
            if advance and not p.leaves_for_finish(row):
                calls.append(("advance", row, scripts.advance(p.k, row.name, nxt, row.next_ms, row.every_ms)))
        return calls

    def _plan(self) -> list[tuple[Row, int]]:
        """Each row with the score its advance writes (a dangling member is swept whatever the score)."""
        p = self.pump
        return [
            (row, self.now_ms if row.every_ms is None or p.leaves_for_finish(row) else self._next(row))
            for row in self.rows
        ]

    def _next(self, row: Row) -> int:
        return whole_ms(self.pump.next_run(row, self.now_ms), "rule: the next run")

    def _job_id(self, row: Row) -> str | None:
        return slot_id(row.name, row.next_ms) if self.pump.slot_keyed else None

    def _send(self, *, enqueue: bool, advance: bool) -> None:
        """One pipeline of the phase's calls, row by row; their replies go into ``fired`` and
        ``advanced``. A fault raises the error carrying what was fired before this pipeline and,
        in doubt, the names whose enqueue was in it."""
        p = self.pump
        calls = self._calls(enqueue=enqueue, advance=advance)
        try:
            replies = scripts.run_all(p.lab.client, p.lab.scripts, [call for _, _, call in calls])
        except RedisError as exc:
            carrying(exc, list(self.fired), [row.name for kind, row, _ in calls if kind == "enqueue"])
            raise
        for (kind, row, _), reply in zip(calls, replies, strict=True):
            if kind == "advance":
                self.advanced.append((row.name, scripts.advanced(reply)))
                continue
            outcome, job_id = scripts.enqueued(reply)
            if outcome is Outcome.ENQUEUED:
                self.fired.append(Occurrence(job_id, row.name, self.now_ms, row.next_ms))


class Pump:
    """Drives one queue. ``batch`` bounds the names read per tick; ``slot_keyed`` names each
    occurrence ``<name>:<slot_ms>`` so a replayed slot collides.

    ``rule`` is what the advance measures the next run from:

    - ``start-to-start`` (the default): the release, next = now + every_ms;
    - ``fixed grid``: the slot that fired, next = slot + every_ms, a missed slot skipped forward;
    - ``start-to-finish``: not the pump's to compute. The pump only releases (it still sweeps a
      member whose record is gone); whoever finishes the run advances the row then, with
      ``Repeat.advance`` (next = finish + every_ms);
    - a function ``(release_ms, every_ms) -> next_ms``, used as start-to-start is (the exercises
      run a learner's rule through the real pump this way).
    """

    def __init__(
        self, lab: Lab, queue: str, *, batch: int = 100, slot_keyed: bool = False, rule: Rule = Measure.START_TO_START
    ) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.k = lab.keyspace(self.queue)
        self.batch = validate.limit(batch, field="batch")
        if self.batch > scripts.MAX_BATCH:
            raise ValueError(f"batch: at most {scripts.MAX_BATCH} rows a tick, got {batch}")
        self.rule: Measure | Callable[[int, int], int]
        if callable(rule):
            self.rule = rule
        else:
            try:
                self.rule = Measure(rule)
            except ValueError:
                choices = ", ".join(repr(m.value) for m in Measure)
                raise ValueError(f"rule: {rule!r} is not a measure; use one of {choices} or a function") from None
        if not isinstance(slot_keyed, bool):
            raise ValueError(f"slot_keyed: expected True or False, got {slot_keyed!r}")
        self.slot_keyed = slot_keyed

    def begin(self) -> Tick:
        """A tick, its "now" read from the lab's clock; take its phases or ``run()`` it."""
        return Tick(self, self.lab.clock.now_ms())

    def tick(self) -> list[Occurrence]:
        """One pass: due read -> enqueue -> advance (by the rule). A late name fires once."""
        return self.begin().run().fired

    def drain(self) -> list[Occurrence]:
        """Every occurrence due now, tick after tick at the same now, with the rules of ``tick``.
        A name fires once per drain; names that stay due (left for the finish, on the grid's next
        slot, or registered anew due now by someone else) are left for the next drain or tick.

        Each read passes over what the drain fired and is still due. The rows left at their
        score for the finish sit at the front of the due rows and are skipped by count (due.lua's
        offset, so the work stays linear in the rows due); the rare names moved to a later score
        still due are passed over by name. A finish, cancel or registration by someone else during
        a drain shifts that front, so a due row may wait for the next drain (none fires twice). A drain
        that cannot see past what it passed (more than ``scripts.MAX_OFFSET`` rows left, or the
        names moved fill a read) raises ``RuntimeError`` rather than return short.

        A fault raises its error carrying every occurrence the drain fired before it
        (``.fired``) and the names whose enqueue was in the pipeline whose reply was lost
        (``.in_doubt``: each may or may not have a job on the wait list; read it first)."""
        now = self.lab.clock.now_ms()
        fired: list[Occurrence] = []
        left: set[str] = set()  # rows this drain left at their score: the front of the due rows
        passing: set[str] = set()  # names this drain fired and moved, still due
        while True:
            if len(left) > scripts.MAX_OFFSET:
                raise RuntimeError(f"drain: {len(left)} rows left due, past due.lua's bound {scripts.MAX_OFFSET}")
            tick = Tick(self, now)
            try:
                tick.read(skip=len(left), passing=passing)
                tick.rows = [row for row in tick.rows if row.name not in left]  # shifted by someone else
                tick.fire()
            except RedisError as exc:
                carrying(exc, fired + tick.fired)
                raise
            fired += tick.fired
            left.update(tick.left())
            passing |= tick.still_due()
            if not tick.more:
                return fired
            if not tick.rows:
                raise RuntimeError(
                    f"drain: the read holds only names it fired and are still due ({len(passing)} moved,"
                    f" {len(left)} left); the rows after them were not read: tick, or drain again later"
                )

    def run(self, *, until_ms: int, step_ms: int) -> list[Occurrence]:
        """Tick, then move a SimClock by ``step_ms``, until now passes ``until_ms``."""
        validate.limit(step_ms, field="step_ms")
        clock = self.lab.clock
        if not isinstance(clock, AdvancingClock):
            raise ValueError("clock: run() needs a SimClock (one that can advance)")
        fired: list[Occurrence] = []
        while clock.now_ms() <= until_ms:
            fired.extend(self.tick())
            clock.advance(step_ms)
        return fired

    def next_run(self, row: Row, now_ms: int) -> int:
        """The score the rule gives ``row`` after a release at ``now_ms``."""
        every = row.every_ms if row.every_ms is not None else 0
        if callable(self.rule) and not isinstance(self.rule, Measure):
            return self.rule(now_ms, every)
        if self.rule is Measure.START_TO_FINISH and row.every_ms is not None:
            raise ValueError("rule: under start-to-finish the run's finish advances the row, not the pump")
        if self.rule is Measure.GRID and every > 0:
            return next_on_grid(row.next_ms, every, now_ms)
        return next_start_to_start(now_ms, every)

    def leaves_for_finish(self, row: Row) -> bool:
        """True when the tick must not advance ``row``: a live row under start-to-finish."""
        return self.rule is Measure.START_TO_FINISH and row.every_ms is not None
