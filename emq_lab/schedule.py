"""Pure next-run math, milliseconds in and milliseconds out, no I/O. The pump reads its clock
once per tick and hands "now" to these."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

MINUTE_MS = 60_000


class Measure(StrEnum):
    """What the next run is measured from."""

    START_TO_START = "start-to-start"  # the release: next = release + period (the pump's default)
    START_TO_FINISH = "start-to-finish"  # the finish: next = finish + period (the worker advances)
    GRID = "fixed grid"  # the previous slot: next = slot + period, missed slots skipped


def next_start_to_start(release_ms: int, every_ms: int) -> int:
    """Anchored to the release: the next run is one period after this one started."""
    return release_ms + every_ms


def next_start_to_finish(finish_ms: int, every_ms: int) -> int:
    """Anchored to the finish: the next run is one period after this one ended."""
    return finish_ms + every_ms


def next_on_grid(slot_ms: int, every_ms: int, now_ms: int) -> int:
    """Anchored to the grid: the slot after ``slot_ms``; if that slot is already behind
    ``now_ms`` (missed), jump to the first grid slot after now instead of firing a burst."""
    following = slot_ms + every_ms
    if following >= now_ms:
        return following
    return slot_ms + ((now_ms - slot_ms) // every_ms + 1) * every_ms


#: A pump rule: a Measure (or its value), or a function ``(release_ms, every_ms) -> next_ms``.
Rule = Measure | str | Callable[[int, int], int]


def first_tick_at_or_after(instant_ms: int, *, start_ms: int, tick_ms: int) -> int:
    """The first pump tick at or after ``instant_ms`` for a pump ticking every ``tick_ms``
    from ``start_ms`` (``tick_ms == 0``: an ideal pump that ticks exactly when a run is due)."""
    if tick_ms == 0 or instant_ms <= start_ms:
        return max(instant_ms, start_ms)
    ticks = -((start_ms - instant_ms) // tick_ms)  # ceiling division
    return start_ms + ticks * tick_ms


def rule_of(rule: Rule) -> Measure | Callable[[int, int], int]:
    """``rule`` as a Measure or a function; a ValueError naming the measures for anything else."""
    if callable(rule):
        return rule
    try:
        return Measure(rule)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in Measure)
        raise ValueError(f"rule: {rule!r} is not a measure; use one of {choices} or a function") from None


def next_run(rule: Measure | Callable[[int, int], int], slot_ms: int, every_ms: int, now_ms: int) -> int | None:
    """The score ``rule`` gives a row due at ``slot_ms`` and released at ``now_ms``; None under
    start-to-finish, where the run's finish advances the row (:func:`next_start_to_finish`)."""
    if not isinstance(rule, Measure):
        return rule(now_ms, every_ms)
    if rule is Measure.START_TO_FINISH:
        return None
    if rule is Measure.GRID:
        return next_on_grid(slot_ms, every_ms, now_ms)
    return next_start_to_start(now_ms, every_ms)
