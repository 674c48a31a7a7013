"""What the instructor's page shows: the class on the server it is given, or, on the embedded
backend (no server), three demo learners it plays itself. A server is only ever read."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from redis.exceptions import RedisError

from emq_lab import keys, progress, validate
from emq_lab.clock import COURSE_START, SimClock
from emq_lab.lab import Lab
from emq_lab.schedule import MINUTE_MS

from .users import all_powerful_users

ENV_PREFIX = "EMQ_LAB_CLASS_PREFIX"
DEMO_PREFIX = "demo-"
DEMO_LEARNERS = ("demo-ada", "demo-bo", "demo-cy")
DEMO_QUEUES = ("reports", "cadence-live", "cancel")
START = COURSE_START


@dataclass(frozen=True)
class Setting:
    """The lab the page reads with, whose learners it lists, whether they are demo ones, and a sentence saying so."""

    lab: Lab
    prefix: str
    learners: tuple[str, ...]
    demo: bool
    note: str
    guard: bool = False  # the lab is the server's admin: the page may run the class guard


def prepare(lab: Lab, *, prefix: str | None = None) -> Setting:
    """The page's setting: on the embedded backend (fakeredis), demo learners played from 09:00; on a server,
    nothing written, the learners named ``prefix`` (else ``$EMQ_LAB_CLASS_PREFIX``, else ``learner``)."""
    if not any(each.__module__.partition(".")[0] == "fakeredis" for each in type(lab.client).__mro__):
        chosen = validate.namespace(prefix or os.environ.get(ENV_PREFIX, "").strip() or "learner")
        admin = _is_admin(lab)
        note = f"The class on {lab.describe()}: the learners are its ACL users named {chosen}…; this page only reads"
        note += " (its class guard stops what one learner holds past the class's limits)." if admin else "."
        return Setting(lab, chosen, (), False, note, admin)
    demo = lab.with_clock(SimClock(START))
    _play(demo)
    note = "The embedded backend: three demo learners played by this notebook (set EMQ_LAB_URL to see a class)."
    return Setting(demo.with_clock(MovingClock(demo.clock.now_ms())), DEMO_PREFIX, DEMO_LEARNERS, True, note)


def _is_admin(lab: Lab) -> bool:
    """Whether ``lab`` logs in as an admin (it may run the guard)."""
    try:
        return str(lab.client.execute_command("ACL", "WHOAMI")) in all_powerful_users(lab.client)
    except RedisError:
        return False


class MovingClock:
    """A clock from ``start_ms`` that moves on with the time that passes (the demo page's "last refreshed")."""

    def __init__(self, start_ms: int) -> None:
        self.start_ms = int(start_ms)
        self._made = time.monotonic()

    def now_ms(self) -> int:
        return self.start_ms + int((time.monotonic() - self._made) * 1000)

    def __repr__(self) -> str:
        return f"MovingClock(from {self.start_ms})"


def _play(lab: Lab) -> None:
    """Play the demo: Ada passes register; Bo does cadence and cancel, its prediction wrong; Cy starts nothing."""
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
