"""What a script answered, as the course names it: ``outcome_of`` maps each script's integer reply
to its Outcome (ticks.lua answers enqueue's and advance's codes for each row, or -1 for none)."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    REGISTERED = "registered"
    EXISTS = "exists"
    ADVANCED = "advanced"
    MOVED = "moved"  # the advance's compare-and-set found the row moved: nothing written
    ABSENT = "absent"
    CANCELLED = "cancelled"
    ENQUEUED = "enqueued"
    DUPLICATE = "duplicate"
    UPDATED = "updated"  # the contrast ZSCORE upsert rewrote a live name
    OVERSIZED = "oversized"  # the stored template is over what register allows: never read, no job stored

    @property
    def tuple(self) -> str:
        """The Elixir form the course prints, e.g. ``{:ok, :exists}``."""
        return f"{{:ok, :{self.value}}}"

    @property
    def reply(self) -> int:
        """The script's raw integer return that maps to this outcome."""
        return _REPLY_OF[self]


_REPLIES: dict[str, dict[int, Outcome]] = {
    "register": {1: Outcome.REGISTERED, 0: Outcome.EXISTS},
    "advance": {1: Outcome.ADVANCED, 0: Outcome.ABSENT, 2: Outcome.MOVED},
    "cancel": {1: Outcome.CANCELLED, 0: Outcome.ABSENT},
    # 2 is ticks.lua's answer only (its enqueued column); enqueue.lua never sees such a row: the tick
    # leaves it out before enqueue (Row.template_bytes)
    "enqueue": {1: Outcome.ENQUEUED, 0: Outcome.DUPLICATE, 2: Outcome.OVERSIZED},
    "contrast/naive": {1: Outcome.REGISTERED},
    "contrast/upsert": {1: Outcome.REGISTERED, 0: Outcome.UPDATED},
}
_REPLY_OF = {outcome: code for table in _REPLIES.values() for code, outcome in table.items()}


def outcome_of(script: str, reply: int) -> Outcome:
    """Map a script's integer reply to its Outcome."""
    try:
        return _REPLIES[script][int(reply)]
    except KeyError:
        raise RuntimeError(f"{script}.lua returned {reply!r}, which no Outcome maps") from None
