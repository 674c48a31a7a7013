"""What every checker shares: the Check it returns, the sandbox it runs on, its own queues, the
fixed start instant, how an instant is written, and the settings hypothesis searches with."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, configuration, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from .. import sandbox
from ..clock import SimClock
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


@contextmanager
def session(lab: Lab | None, exercise: str, names: tuple[str, ...] = ()) -> Iterator[Lab]:
    """The lab a checker runs on: the kernel's sandbox (:func:`emq_lab.sandbox.for_checks`),
    wiped, reading now from START. The learner's ``lab`` is not touched: nothing is read from
    it or written to it, whatever its server (one that refuses a learner's EVAL included)."""
    box = sandbox.for_checks()
    if sandbox.BROWSER:  # the tab's kernel is busy until the check ends: say so, and for how long at most
        print(
            f"checking {exercise} in the sandbox; a script still running after {sandbox.LIMIT_S:g} s is stopped there",
            flush=True,
        )
    yield Lab(box.client, SimClock(START), "the exercises' sandbox")


def clear(lab: Lab, queue: str) -> None:
    """Empty ``queue`` in the sandbox: every key that carries its hash tag, whatever its type or
    whether any structure names it (a wrong script can leave either behind)."""
    found = lab.client.keys(f"*{{{queue}}}*")
    if found:
        lab.client.delete(*found)


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
    with _hypothesis_home():
        try:
            return find(strategy, fails, settings=search)
        except NoSuchExample:
            return None


_home: list[str] = []


@contextmanager
def _hypothesis_home() -> Iterator[None]:
    """hypothesis writes a cache (``.hypothesis/constants``) into the working directory, which is
    the learner's notebook folder: while a checker searches, it writes into a temp dir of its own."""
    if not _home:
        _home.append(tempfile.mkdtemp(prefix="emq-lab-hypothesis-"))
        atexit.register(shutil.rmtree, _home[0], True)
    found: Any = configuration.storage_directory()
    previous: Path = getattr(found, "home_directory", found)
    configuration.set_hypothesis_home_dir(_home[0])
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)


def sim(lab: Lab) -> tuple[Lab, SimClock]:
    """``lab`` reading now from a fresh SimClock at START."""
    clock = SimClock(START)
    return lab.with_clock(clock), clock
