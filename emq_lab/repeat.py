"""Repeat: the registry of recurring registrations of one queue."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import keys, validate
from .outcome import Outcome, outcome_of

if TYPE_CHECKING:
    from .lab import Lab


@dataclass(frozen=True)
class Due:
    """A registration whose next run is at or before now."""

    name: str
    every_ms: int
    template: str
    due_ms: int = field(default=0, compare=False)  # the registry score that made it due


@dataclass(frozen=True)
class Row:
    """One registry member as read, with its record (None when the record is gone)."""

    name: str
    next_ms: int
    every_ms: int | None
    template: str | None


class Repeat:
    """register / cancel / due / advance / count / entries for queue ``queue``."""

    def __init__(self, lab: Lab, queue: str) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.registry_key = keys.registry(self.queue)

    def _keys(self, name: str) -> list[str]:
        return [self.registry_key, keys.record(self.queue, name)]

    def register(self, name: str, every_ms: int, template: str, first_in_ms: int = 0) -> Outcome:
        """Store ``name`` once, first run at now + first_in_ms; a live name answers EXISTS."""
        validate.name(name)
        validate.every_ms(every_ms)
        validate.template(template)
        validate.first_in_ms(first_in_ms)
        first_ms = self.lab.clock.now_ms() + first_in_ms
        reply = self.lab.scripts.register(keys=self._keys(name), args=[name, every_ms, template, first_ms])
        return outcome_of("register", reply)

    def cancel(self, name: str) -> Outcome:
        """Remove the registry row and the record; afterwards ``name`` registers as fresh."""
        validate.name(name)
        return outcome_of("cancel", self.lab.scripts.cancel(keys=self._keys(name), args=[name]))

    def advance(self, name: str, every_ms: int) -> Outcome:
        """Start-to-start: next run = now + every_ms. A missing record sweeps the member."""
        validate.name(name)
        validate.every_ms(every_ms)
        return self.advance_to(name, self.lab.clock.now_ms() + every_ms)

    def advance_to(self, name: str, next_ms: int) -> Outcome:
        """The advance script with a next run the caller computed (the pump's rules do)."""
        return outcome_of("advance", self.lab.scripts.advance(keys=self._keys(name), args=[name, next_ms]))

    def rows(self, *, due_only: bool = False, limit: int | None = None) -> list[Row]:
        """Registry members in score order with their records (None where gone)."""
        top = self.lab.clock.now_ms() if due_only else "+inf"
        if limit is None:
            members = self.lab.client.zrangebyscore(self.registry_key, "-inf", top, withscores=True)
        else:
            validate.limit(limit)
            members = self.lab.client.zrangebyscore(self.registry_key, "-inf", top, start=0, num=limit, withscores=True)
        if not members:
            return []
        pipe = self.lab.client.pipeline(transaction=False)
        for name, _ in members:
            pipe.hmget(keys.record(self.queue, name), "every_ms", "template")
        records = pipe.execute()
        return [
            Row(name, int(score), None if every is None else int(every), template)
            for (name, score), (every, template) in zip(members, records, strict=True)
        ]

    def due(self, limit: int = 100) -> list[Due]:
        """Registrations scored at or before now, by score; members without a record are left out."""
        return [
            Due(row.name, row.every_ms, row.template or "", due_ms=row.next_ms)
            for row in self.rows(due_only=True, limit=limit)
            if row.every_ms is not None
        ]

    def count(self) -> int:
        """Registry rows (ZCARD): one per registration, however often it fired."""
        return int(self.lab.client.zcard(self.registry_key))

    def entries(self) -> list[tuple[str, int]]:
        """``(name, next_ms)`` for every registry row, in score order."""
        members = self.lab.client.zrange(self.registry_key, 0, -1, withscores=True)
        return [(name, int(score)) for name, score in members]

    def record(self, name: str) -> dict[str, str]:
        """The record hash of ``name`` ({} when there is none)."""
        validate.name(name)
        return dict(self.lab.client.hgetall(keys.record(self.queue, name)))
