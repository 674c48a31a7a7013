"""The pump: each tick reads the due registrations, enqueues one occurrence per
name and advances its single registry row, start-to-start unless told otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import validate
from .cadence import Measure, next_on_grid, next_start_to_start
from .jobs import Jobs
from .outcome import Outcome
from .repeat import Repeat, Row

if TYPE_CHECKING:
    from .lab import Lab


@dataclass(frozen=True)
class Occurrence:
    """One run produced by a tick."""

    job_id: str
    name: str
    fired_at_ms: int


class PumpCrash(RuntimeError):
    """Raised by a pump whose fault switch is on: after an enqueue, before its advance."""

    def __init__(self, occurrences: list[Occurrence]) -> None:
        super().__init__("pump crashed after enqueue, before advance (fault injected)")
        self.occurrences = occurrences


def slot_id(name: str, slot_ms: int) -> str:
    """The slot-keyed occurrence id: the same slot always gets the same id."""
    return f"{name}:{slot_ms}"


class Pump:
    """Drives one queue. ``batch`` bounds the names read per tick; ``slot_keyed``
    names each occurrence ``<name>:<slot_ms>`` so a replayed slot collides.

    ``rule`` is what the advance measures the next run from:

    - ``start-to-start`` (the default): the release, next = now + every_ms;
    - ``fixed grid``: the slot that fired, next = slot + every_ms, a missed slot skipped forward;
    - ``start-to-finish``: not the pump's to compute. The pump only releases (it still sweeps a
      member whose record is gone); whoever finishes the run advances the row then, with
      ``Repeat.advance`` (next = finish + every_ms). Until then the row stays due, so a tick
      meanwhile would release it again: ``emq_lab.cadence`` models one worker whose finish
      comes before the pump's next look at the row.
    """

    def __init__(
        self,
        lab: Lab,
        queue: str,
        *,
        batch: int = 100,
        slot_keyed: bool = False,
        rule: Measure | str = Measure.START_TO_START,
    ) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.batch = validate.limit(batch, field="batch")
        try:
            self.rule = Measure(rule)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in Measure)
            raise ValueError(f"rule: {rule!r} is not a measure; use one of {choices}") from None
        self.slot_keyed = slot_keyed
        self.crash_after_enqueue = False
        self.repeat = Repeat(lab, queue)
        self.jobs = Jobs(lab, queue)
        self.advanced: list[tuple[str, Outcome]] = []  # what each advance of the last tick answered

    def read(self) -> list[Row]:
        """The due read: members scored at or before now, in score order, one batch."""
        return self.repeat.rows(due_only=True, limit=self.batch)

    def produce(self, row: Row, now_ms: int) -> Occurrence | None:
        """Mint an id and enqueue one occurrence of ``row``; None for a replayed slot or a gone record."""
        if row.every_ms is None:
            return None
        job_id = slot_id(row.name, row.next_ms) if self.slot_keyed else self.jobs.mint()
        outcome = self.jobs.enqueue(job_id, row.name, now_ms, row.template or "")
        return Occurrence(job_id, row.name, now_ms) if outcome is Outcome.ENQUEUED else None

    def next_run(self, row: Row, now_ms: int) -> int:
        """The score the rule gives ``row`` after a release at ``now_ms``."""
        every = row.every_ms if row.every_ms is not None else 0
        if self.rule is Measure.START_TO_FINISH and row.every_ms is not None:
            raise ValueError("rule: under start-to-finish the run's finish advances the row, not the pump")
        if self.rule is Measure.GRID and every > 0:
            return next_on_grid(row.next_ms, every, now_ms)
        return next_start_to_start(now_ms, every)

    def finish(self, row: Row, now_ms: int) -> Outcome:
        """Advance ``row`` by the rule, or sweep it when its record is gone."""
        outcome = self.repeat.advance_to(row.name, self.next_run(row, now_ms))
        self.advanced.append((row.name, outcome))
        return outcome

    def leaves_for_finish(self, row: Row) -> bool:
        """True when the tick must not advance ``row``: a live row under start-to-finish."""
        return self.rule is Measure.START_TO_FINISH and row.every_ms is not None

    def tick(self) -> list[Occurrence]:
        """One pass: due read -> mint -> enqueue -> advance (by the rule). A late name fires once."""
        now = self.lab.clock.now_ms()
        self.advanced = []
        fired: list[Occurrence] = []
        for row in self.read():
            occurrence = self.produce(row, now)
            if occurrence is not None:
                fired.append(occurrence)
            if self.crash_after_enqueue and row.every_ms is not None:
                raise PumpCrash(fired)
            if not self.leaves_for_finish(row):
                self.finish(row, now)
        return fired

    def run(self, *, until_ms: int, step_ms: int) -> list[Occurrence]:
        """Tick, then move a SimClock by ``step_ms``, until now passes ``until_ms``."""
        validate.limit(step_ms, field="step_ms")
        clock = self.lab.clock
        advance = getattr(clock, "advance", None)
        if advance is None:
            raise ValueError("clock: run() needs a SimClock (one that can advance)")
        fired: list[Occurrence] = []
        while clock.now_ms() <= until_ms:
            fired.extend(self.tick())
            advance(step_ms)
        return fired
