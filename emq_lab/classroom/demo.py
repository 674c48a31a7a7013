"""What the instructor's page shows: the class on the server it is given, or, on the embedded
backend (no server), three demo learners it plays itself. A server is only ever read."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .. import keys, progress, validate
from ..backend import in_process
from ..clock import SimClock
from ..lab import Lab
from ..schedule import MINUTE_MS

ENV_PREFIX = "EMQ_LAB_CLASS_PREFIX"
DEMO_PREFIX = "demo-"
DEMO_LEARNERS = ("demo-ada", "demo-bo", "demo-cy")
DEMO_QUEUES = ("reports", "cadence-live", "cancel")
START = "2026-01-05T09:00:00Z"


@dataclass(frozen=True)
class Setting:
    """The lab the page reads with, whose learners it lists (``prefix``, and ``learners`` listed
    even with no key), whether they are demo learners, and one sentence saying which."""

    lab: Lab
    prefix: str
    learners: tuple[str, ...]
    demo: bool
    note: str


def prepare(lab: Lab, *, prefix: str | None = None) -> Setting:
    """On the embedded backend: play the demo learners on a SimClock from 09:00 (so the page reads
    the same every run) and list them. On a server: write nothing, and list the learners named
    ``prefix`` (else ``$EMQ_LAB_CLASS_PREFIX``, else ``learner``)."""
    if not in_process(lab.client):
        chosen = validate.namespace(prefix or os.environ.get(ENV_PREFIX, "").strip() or "learner")
        return Setting(
            lab,
            chosen,
            (),
            False,
            f"The class on {lab.describe()}: the learners are its ACL users named {chosen}…; this page only reads.",
        )
    demo = lab.with_clock(SimClock(START))
    _play(demo)
    return Setting(
        demo,
        DEMO_PREFIX,
        DEMO_LEARNERS,
        True,
        "The embedded backend: three demo learners played by this notebook (set EMQ_LAB_URL to see a class).",
    )


def _play(lab: Lab) -> None:
    """Ada did the upsert dive and passed its register check; Bo did cadence and cancel and got
    the cadence prediction wrong; Cy has not started."""
    clock = lab.clock if isinstance(lab.clock, SimClock) else SimClock(lab.clock.now_ms())
    ada, bo, cy = (Lab(lab.client, clock, lab.describe(), namespace=n, scripts=lab.scripts) for n in DEMO_LEARNERS)
    for learner in (ada, bo, cy):
        learner.reset_all(DEMO_QUEUES)
        learner.client.delete(keys.progress(learner.namespace))
    ada.repeat("reports").register("digest", 15 * MINUTE_MS, '{"report": "digest"}')
    progress.record(ada, "upsert.predict", True, at_ms=clock.now_ms())
    bo.repeat("cadence-live").register("report", 15 * MINUTE_MS, '{"report": "daily"}')
    bo.repeat("cancel").register("report", 15 * MINUTE_MS, '{"report": "daily"}')
    progress.record(bo, "cadence.predict", False, at_ms=clock.now_ms())
    clock.advance(minutes=15)
    bo.pump("cancel").tick()
    ada.pump("reports").tick()
    progress.record(ada, "register", True, at_ms=clock.now_ms())
