"""Repeat: the registry of recurring registrations of one queue."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import scripts, validate
from .backend import fields, scored
from .outcome import Outcome
from .scripts import Row

if TYPE_CHECKING:
    from .lab import Lab


@dataclass(frozen=True)
class Due:
    """What ``due()`` returns for a due :class:`Row` with its record, not refused (``rows()``: the whole row)."""

    name: str
    every_ms: int
    template: str


class Repeat:
    """register(_many) / cancel / due / rows / advance(_to) / count / entries / record for ``queue``."""

    def __init__(self, lab: Lab, queue: str) -> None:
        self.lab, self.k = lab, lab.keyspace(queue)  # keyspace checks the name
        self.queue = self.k.queue

    def register(self, name: str, every_ms: int, template: str, first_in_ms: int = 0) -> Outcome:
        """Store ``name`` once, first run at now + first_in_ms; a live name answers EXISTS."""
        name, every_ms, template, first_in_ms = _checked((name, every_ms, template, first_in_ms))
        call = scripts.register(self.k, name, every_ms, template, self.lab.clock.now_ms() + first_in_ms)
        return scripts.outcome("register", scripts.send(self.lab.scripts, call, self.lab.client))

    def register_many(self, items: Iterable[tuple[str, int, str] | tuple[str, int, str, int]]) -> list[Outcome]:
        """``register`` for many names in one round trip, one Outcome each, in order; one bad item
        writes nothing. Neighbouring items with the same period, template and first run go to
        register_many.lua together; a lab running a learner's register script runs it per name."""
        checked = [_checked(item, index=index) for index, item in enumerate(items)]
        if not checked:
            return []
        lab, k, now = self.lab, self.k, self.lab.clock.now_ms()
        if not lab.scripts.stock("register"):
            calls = [scripts.register(k, name, every, text, now + first) for name, every, text, first in checked]
            return [scripts.outcome("register", reply) for reply in scripts.send_all(lab.client, lab.scripts, calls)]
        groups: list[tuple[list[str], int, str, int]] = []
        for name, every_ms, template, first_in_ms in checked:
            last = groups[-1] if groups else None
            if last and len(last[0]) < _group_size(template) and last[1:] == (every_ms, template, now + first_in_ms):
                last[0].append(name)
            else:
                groups.append(([name], every_ms, template, now + first_in_ms))
        replies = scripts.send_all(lab.client, lab.scripts, [scripts.register_many(k, *group) for group in groups])
        return [outcome for reply in replies for outcome in scripts.registered_many(reply)]

    def cancel(self, name: str) -> Outcome:
        """Remove the registry row and the record; afterwards ``name`` registers as fresh."""
        validate.name(name)
        return scripts.outcome("cancel", scripts.send(self.lab.scripts, scripts.cancel(self.k, name), self.lab.client))

    def advance(self, name: str, every_ms: int, *, read_ms: int | None = None) -> Outcome:
        """Start-to-start: next run = now + every_ms. A missing record sweeps the member. With
        ``read_ms`` (the score you read) the row moves only if it still holds it (else MOVED)."""
        validate.every_ms(every_ms)
        return self.advance_to(name, self.lab.clock.now_ms() + every_ms, read_ms=read_ms)

    def advance_to(self, name: str, next_ms: int, *, read_ms: int | None = None) -> Outcome:
        """The advance script with a next run the caller computed (a worker's finish under
        start-to-finish: finish + every_ms)."""
        validate.name(name)
        validate.integer(next_ms, "next_ms", validate.MIN_INT64)
        if read_ms is not None:
            validate.integer(read_ms, "read_ms", validate.MIN_INT64)
        call = scripts.advance(self.k, name, next_ms, read_ms)
        return scripts.outcome("advance", scripts.send(self.lab.scripts, call, self.lab.client))

    def rows(self, *, limit: int | None = None) -> list[Row]:
        """The rows due (scored at or before now) by score, with their records (None where gone):
        what a tick reads, at most ``limit`` (due.lua reads at most MAX_DUE a call)."""
        most = scripts.MAX_DUE if limit is None else validate.integer(limit, "limit", 1, scripts.MAX_DUE)
        call = scripts.due(self.k, self.lab.clock.now_ms(), most)
        return scripts.rows(scripts.send(self.lab.scripts, call, self.lab.client))

    def due(self, limit: int = 100) -> list[Due]:
        """Registrations scored at or before now, by score; members without a record, and refused
        rows (a stored template over register's size, see :class:`Row`), are left out."""
        return [
            Due(row.name, row.every_ms, row.template or "")
            for row in self.rows(limit=limit)
            if row.every_ms is not None and row.template_bytes is None
        ]

    def count(self) -> int:
        """Registry rows (ZCARD): one per registration, however often it fired."""
        return int(self.lab.client.zcard(self.k.registry))

    def entries(self) -> list[tuple[str, int]]:
        """``(name, next_ms)`` for every registry row, in score order."""
        return scored(self.lab.client.zrange(self.k.registry, 0, -1, withscores=True))

    def record(self, name: str) -> dict[str, str]:
        """The record hash of ``name`` ({} when there is none)."""
        validate.name(name)
        return fields(self.lab.client.hgetall(self.k.record(name)))


def _checked(item: Sequence[object], *, index: int | None = None) -> tuple[str, int, str, int]:
    """One registration's fields, each checked as ``register`` checks it."""
    where = "" if index is None else f"items[{index}]: "
    if isinstance(item, str | bytes) or not isinstance(item, Sequence) or len(item) not in (3, 4):
        raise ValueError(f"{where}expected (name, every_ms, template[, first_in_ms]), got {validate.shown(item, 80)}")
    try:
        name, every_ms, template = validate.registration(item[0], item[1], item[2])
        first_in_ms = validate.first_in_ms(item[3] if len(item) == 4 else 0)
    except ValueError as exc:
        raise ValueError(f"{where}{exc}") from None
    return name, every_ms, template, first_in_ms


def _group_size(template: str) -> int:
    """How many names one register_many.lua call takes with ``template``: :data:`scripts.MANY`,
    fewer when their templates together would pass what one call may write."""
    return max(1, min(scripts.MANY, scripts.MAX_MANY_BYTES // max(len(template.encode("utf-8")), 1)))
