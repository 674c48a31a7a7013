"""What every checker shares: the Check it returns, its own queues, the fixed start instant,
how an instant is written, and the settings hypothesis searches with."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from ..clock import SimClock
from ..lab import connect
from .sandbox import cleanup

if TYPE_CHECKING:
    from ..lab import Lab

T = TypeVar("T")

#: Every scenario starts here (the notebooks' SimClock start), so the text is the same each run.
START = "2026-01-05T09:00:00Z"
#: Random scenarios hypothesis draws per checker (fixed seed): small, so a check answers in seconds.
EXAMPLES = 30


@dataclass(frozen=True)
class Check:
    """A checker's answer: ``passed``, and ``str(check)`` explains it in plain words."""

    exercise: str
    passed: bool
    text: str
    scenario: str | None = None  # the failing scenario's name (None when passed)
    detail: Any = None  # exercise-specific data a figure draws (next_run: the Timelines)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<Check {self.exercise}: {'passed' if self.passed else 'failed'}>"


def at(ms: int) -> str:
    """An instant as the explanations write it: 09:15, 09:15:30, or 09:15:00.001 when it
    falls between seconds (an off-by-one must be visible)."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    if ms % 60_000 == 0:
        return moment.strftime("%H:%M")
    if ms % 1000 == 0:
        return moment.strftime("%H:%M:%S")
    return moment.strftime("%H:%M:%S.") + f"{ms % 1000:03d}"


def span(ms: int) -> str:
    """A duration: ``15 min``, ``90 s``, ``1 ms``."""
    if ms % 60_000 == 0:
        return f"{ms // 60_000} min"
    if ms % 1000 == 0:
        return f"{ms // 1000} s"
    return f"{ms} ms"


def queues(exercise: str) -> tuple[str, str]:
    """The learner's queue and the reference's queue of one exercise."""
    return f"exercise-{exercise}", f"exercise-{exercise}-ref"


def clear(lab: Lab, queue: str, names: tuple[str, ...] = ()) -> None:
    """Empty ``queue``: ``lab.reset`` finds its keys from the registry's members, and a wrong
    script can leave a record no member names, so the records of ``names`` (the scenario's
    names, exact keys of this queue) are deleted too."""
    lab.reset(queue)
    k = lab.keyspace(queue)
    if names:
        lab.client.delete(*(k.record(name) for name in names))


@contextmanager
def session(lab: Lab | None, exercise: str, names: tuple[str, ...] = ()) -> Iterator[Lab]:
    """The lab a checker runs on (the given one, else a fresh connection), with the exercise's
    two queues cleared before and after; the embedded Lua state is cleaned at the end."""
    base = lab if lab is not None else connect(clock=SimClock(START))
    owned = lab is None
    mine = queues(exercise)
    for queue in mine:
        clear(base, queue, names)
    try:
        yield base
    finally:
        try:
            for queue in mine:
                clear(base, queue, names)
            cleanup(base.client)
        finally:
            if owned:
                base.close()


def smallest(strategy: st.SearchStrategy[T], fails: Callable[[T], bool], *, examples: int = EXAMPLES) -> T | None:
    """The smallest value of ``strategy`` for which ``fails`` is true, shrunk by hypothesis
    (fixed seed, no example database), or None when ``examples`` draws found none."""
    search = settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        phases=(Phase.generate, Phase.shrink),
    )
    try:
        return find(strategy, fails, settings=search)
    except NoSuchExample:
        return None


def sim(lab: Lab) -> tuple[Lab, SimClock]:
    """``lab`` reading now from a fresh SimClock at START."""
    clock = SimClock(START)
    return lab.with_clock(clock), clock
