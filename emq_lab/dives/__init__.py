"""The dives' logic, one module each (upsert and storm, cadence, race and crash) driving the core's real
phases, ``common`` what they share; ``setup(lab, dive)`` empties every queue a dive's notebook uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .common import now_text

if TYPE_CHECKING:
    from ..lab import Lab

#: The queues each dive's notebook works on (each panel and each demo has its own).
QUEUES: dict[str, tuple[str, ...]] = {
    "upsert": (
        "reports", "reports-naive", "reports-upsert", "reports-deploy", "reports-try", "reports-fire",
        "reports-boots", "reports-split", "reports-storm",
    ),
    "cadence": (
        "cadence-live", "cadence-ff", "cadence-s2s", "cadence-s2f", "cadence-grid",
        "explore-s2s", "explore-s2f", "explore-grid", "outage-s2s", "outage-grid",
    ),
    "cancel": (
        "cancel", "race-read", "race-presets", "race-reregister", "presets", "orders", "orphan",
        "crash", "crash-slot", "crash-panel",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Setup:
    """What ``setup`` did: the dive, the queues it emptied, the clock's now as the dives print it."""

    dive: str
    queues: tuple[str, ...]
    now_text: str

    def __repr__(self) -> str:
        return f"{self.dive} dive ready: {len(self.queues)} queues emptied, clock at {self.now_text}"


def setup(lab: Lab, dive: str) -> Setup:
    """Every queue of ``dive`` (``upsert``, ``cadence`` or ``cancel``) emptied of its own keys: a clean re-run."""
    if dive not in QUEUES:
        raise ValueError(f"dive: {dive!r} is not a dive; use one of {', '.join(QUEUES)}")
    for queue in QUEUES[dive]:
        lab.reset(queue)  # a backend that does not answer raises emq_lab.errors.BackendUnavailable
    return Setup(dive, QUEUES[dive], now_text(lab))
