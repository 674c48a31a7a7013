"""What the dives share: how a registry entry and the clock's now are written, a queue's record names,
the set-up every step-through starts from (one registration due now), and moving a SimClock."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..clock import AdvancingClock, hhmm, moment

if TYPE_CHECKING:
    from ..lab import Lab
    from ..repeat import Repeat


def entries_text(entries: Iterable[tuple[str, int]], *, empty: str = "(empty)") -> str:
    """Registry entries (each name and its next run) as the dives write them: ``report @ 09:15, digest @ 09:20``."""
    return ", ".join(f"{name} @ {hhmm(ms)}" for name, ms in entries) or empty


def record_names(lab: Lab, queue: str) -> list[str]:
    """The names that have a record on ``queue``, sorted."""
    prefix = lab.keyspace(queue).record("")
    return sorted(key[len(prefix) :] for key in lab.keys(queue) if key.startswith(prefix))


def one_registration(lab: Lab, queue: str, name: str, every_ms: int, template: str) -> Repeat:
    """Empty ``queue`` (its own keys only) and register ``name`` due now on it."""
    lab.reset(queue)
    rep = lab.repeat(queue)
    rep.register(name, every_ms, template)
    return rep


def lab_start_ms(lab: Lab) -> int:
    """Where a demo starts: a SimClock's start instant, else now."""
    return lab.clock.start_ms if isinstance(lab.clock, AdvancingClock) else lab.clock.now_ms()


def move_to(lab: Lab, target_ms: int) -> None:
    """Move a SimClock forward to ``target_ms`` (never back; a clock that cannot move stays)."""
    if isinstance(lab.clock, AdvancingClock) and target_ms > lab.clock.now_ms():
        lab.clock.set(target_ms)


def now_text(lab: Lab) -> str:
    """The lab clock's now as the dives print it: ``09:15``, with the date after a SimClock's first day."""
    return moment(lab.clock.now_ms(), day_ms=lab_start_ms(lab))
