"""What every checker shares: its Check, its sandbox and queues, its search; and :func:`with_scripts`."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from hypothesis import HealthCheck, Phase, Verbosity, configuration, find, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky, NoSuchExample

from .. import sandbox
from .._browser import sandbox as browser_sandbox
from ..clock import COURSE_START, SimClock
from ..keys import QueueKeys
from ..lab import Lab
from ..scripts import Scripts
from ..validate import printable, shorten, shown

T = TypeVar("T")

#: Random scenarios hypothesis draws per checker (fixed seed): small, so a check answers in seconds.
EXAMPLES = 30
#: How hypothesis searches: a fixed seed, no example database, no deadline, nothing printed.
SEARCH = settings(
    derandomize=True, database=None, deadline=None, verbosity=Verbosity.quiet,
    suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
)  # fmt: skip


@dataclass(frozen=True)
class Check:
    """A checker's answer: ``passed``, and ``str(check)`` explains it in plain words."""

    exercise: str
    passed: bool
    text: str
    scenario: str | None = None  # the failing scenario's name (None when passed)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", printable(self.text, keep="\n"))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<Check {self.exercise}: {'passed' if self.passed else 'failed'}>"


def passed(exercise: str, *lines: str) -> Check:
    """A passed Check: its first line, then what the scenarios showed, each line indented."""
    return Check(exercise, True, "\n  ".join(lines))


def unsteady(exercise: str, scenario: str) -> Check:
    """The failed Check for a script whose answers change from run to run."""
    text = (
        f'{exercise}: FAILED in scenario "{scenario}"\n'
        "  what went wrong: the script behaves differently from run to run: the same steps failed once "
        "and passed when run again (math.random, os.clock, or a limit it only sometimes reaches?); "
        "a script's answer must follow from its keys and arguments alone"
    )
    return Check(exercise, False, text, scenario=scenario)


def with_scripts(lab: Lab, **sources: str) -> Lab:
    """``lab``'s clock and namespace, its verbs and pump running the Lua given, on the sandbox (never its server)."""
    for name, source in sources.items():
        if (why := refused(name, source)) is not None:
            raise ValueError(f"{name}: the script's text {why}")
    client = lab.client if sandbox.owns(lab.client) else sandbox.shared().client
    base = lab.scripts if client is lab.client else Scripts.load(client)
    scripts = base.replacing(client, **sources)
    return Lab(client, lab.clock, "a sandbox (private fakeredis)", namespace=lab.namespace, scripts=scripts)


def checked(exercise: str, refusal: str | None, run: Callable[[Lab, Lab], Check], *, lua: bool = False) -> Check:
    """``run(sandbox's lab, reference's lab)`` (:func:`session`) unless refused: a Check, whatever the answer does."""
    if refusal is not None:
        return Check(exercise, False, f"{exercise}: FAILED: your answer {refusal}")
    with session(exercise, lua=lua) as (sandboxed, reference):  # a sandbox that cannot start is no verdict: it raises
        try:
            return run(sandboxed, reference)
        except (Exception, SystemExit, GeneratorExit) as error:  # noqa: BLE001 - no answer may break the checker
            text = f"{exercise}: FAILED: the check could not finish on this answer ({type(error).__name__}: {error})"
            return Check(exercise, False, text[:2000])


def lua_check(exercise: str, lua_source: object, compare: Callable[[Lab, Lab], Check]) -> Check:
    """:func:`checked`: ``compare(learner, reference)``, the learner's lab running ``lua_source``."""
    scripts = {exercise: cast(str, lua_source)}
    return checked(
        exercise, refused(exercise, lua_source), lambda mine, ref: compare(with_scripts(mine, **scripts), ref), lua=True
    )


def failed(
    exercise: str, scenario: str, head: str, steps: list[str], step: str | None = None, what: str = "", **states: str
) -> Check:
    """A failed Check: ``head``, the steps taken, the ``step`` that failed and ``what`` went wrong, then ``states``."""
    lines = [head, *(f"  {taken}" for taken in steps)]
    if step is not None:
        lines += [f"  {step}", f"    what went wrong: {what}"]
        lines += [f"    {label + ':':<10}{state}" for label, state in states.items()]
    return Check(exercise, False, "\n".join(lines), scenario=scenario)


def refused(script: str, text: object) -> str | None:
    """Why ``text`` cannot run as ``<script>.lua`` (not text, empty, a character with no UTF-8 form), or None."""
    if not isinstance(text, str):
        return f"must be the Lua text of {script}.lua (a str); got {type(text).__name__} {shown(text)}"
    if not text.strip():
        return f"is empty; write the Lua text of {script}.lua"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        line, char = text.count("\n", 0, error.start) + 1, ascii(text[error.start])
        return (
            f"cannot be encoded as UTF-8: line {line} holds {char}, a character that has no UTF-8 form (a lone "
            "surrogate), so the script cannot be sent to a server; remove it"
        )
    return None


def queues(exercise: str) -> tuple[str, str]:
    return f"exercise-{exercise}", f"exercise-{exercise}-ref"


@contextmanager
def session(exercise: str, *, lua: bool = False) -> Iterator[tuple[Lab, Lab]]:
    """The sandbox's lab (wiped; with ``lua``, under the check's limit) and the reference's: a private
    fakeredis where no learner's script runs. Nothing is read from or written to the learner's own lab."""
    import fakeredis

    box = sandbox.for_checks(sandbox.CHECK_S if lua else None)
    reference = fakeredis.FakeRedis(server=fakeredis.FakeServer(), decode_responses=True, protocol=2)
    try:
        with (
            browser_sandbox.checking(exercise, limit_s=sandbox.LIMIT_S, check_s=sandbox.CHECK_S)
            if sandbox.BROWSER and lua
            else nullcontext()
        ):
            yield (
                Lab(box.client, SimClock(COURSE_START), "the exercises' sandbox"),
                Lab(reference, SimClock(COURSE_START), "the exercises' reference (private fakeredis)"),
            )
    finally:
        reference.close()


@dataclass(frozen=True)
class Key:
    """One key of a checker's server: its name (the queue written ``{q}``), type, whether it expires, value."""

    name: str
    kind: str
    expires: bool
    value: str
    read: Any = field(default=None, compare=False)  # the value as redis-py reads it


_READS: dict[str, Callable[[Any, str], Any]] = {
    "string": lambda pipe, key: pipe.get(key),
    "hash": lambda pipe, key: pipe.hgetall(key),
    "list": lambda pipe, key: pipe.lrange(key, 0, -1),
    "set": lambda pipe, key: pipe.smembers(key),
    "zset": lambda pipe, key: pipe.zrange(key, 0, -1, withscores=True),
}


def keyspace(lab: Lab, queue: str) -> tuple[Key, ...]:
    """Every key of ``lab``'s server (whatever a script wrote, inside its queue or not), sorted by name."""
    names = sorted(str(name) for name in lab.client.keys("*"))  # both clients decode replies: str already
    pipe = lab.client.pipeline(transaction=False)
    for name in names:
        pipe.type(name)
        pipe.pttl(name)
    found = pipe.execute(raise_on_error=False)
    kinds, ttls = found[0::2], found[1::2]
    pipe = lab.client.pipeline(transaction=False)
    for name, kind in zip(names, kinds, strict=True):
        _READS.get(kind, lambda pipe, key: pipe.type(key))(pipe, name)  # a stream: its type is enough
    values = pipe.execute(raise_on_error=False)
    out = []
    for name, kind, ttl, value in zip(names, kinds, ttls, values, strict=True):
        if isinstance(value, dict):
            value = sorted(value.items())
        elif isinstance(value, set):
            value = sorted(value)
        text = str(value).replace(queue, "{q}")
        out.append(Key(name.replace(queue, "{q}"), kind, isinstance(ttl, int) and ttl >= 0, text, value))
    return tuple(out)


def _key_words(name: str) -> str:
    """A key of the queue in the words of the course: the registry, the record of report, ..."""
    tag = QueueKeys("{q}").tag  # the queue's hash tag, its name written {q}
    for suffix, words in ((":repeat", "the registry"), (":wait", "the wait list"), (":id", "the job counter")):
        if name == tag + suffix:
            return words
    if name.startswith(tag + ":repeat:"):
        return f"the record of {printable(name.split(':repeat:', 1)[1])}"
    if name.startswith(tag + ":job:"):
        return f"job {printable(name.split(':job:', 1)[1])}"
    return f"the key {printable(name)!r}"


def key_differences(mine: tuple[Key, ...], reference: tuple[Key, ...]) -> list[str]:
    """What the learner's keyspace has that the reference's has not, in words (empty: the same)."""
    ours, theirs = {key.name: key for key in mine}, {key.name: key for key in reference}
    said = []
    for name in sorted(set(ours) | set(theirs)):
        a, b = ours.get(name), theirs.get(name)
        what = _key_words(name)
        if b is None:
            assert a is not None
            if what == "the wait list" or what.startswith("job "):
                said.append(f"pushed a job: {what} should not exist here")
            else:
                said.append(f"wrote {what} ({a.kind}), which should not exist")
        elif a is None:
            said.append(f"deleted {what}")
        elif a.kind != b.kind:
            said.append(f"left {what} a {a.kind}; it should be a {b.kind}")
        elif a.expires != b.expires:
            if a.expires:
                said.append(f"set a TTL on {what}: it would expire, and the schedule with it")
            else:
                said.append(f"removed the TTL of {what}")
        elif a.value != b.value:
            said.append(f"changed {what}: it holds {shorten(a.value, 60)}; it should hold {shorten(b.value, 60)}")
    return said


def clear(lab: Lab) -> None:
    """Empty a checker's private server (a wrong script can write anywhere on it)."""
    found = lab.client.keys("*")
    if found:
        lab.client.delete(*found)


def search(
    exercise: str,
    fixed: Iterable[tuple[str, T]],
    strategy: st.SearchStrategy[T],
    failure: Callable[[str, T], Check | None],
    *,
    random: str,
    examples: int = EXAMPLES,
    last: Iterable[tuple[str, T]] = (),
) -> tuple[Check | None, int]:
    """The first failed Check of ``fixed``, then ``random``'s draws (shrunk), then ``last``; and how many were
    drawn. A script whose answers change from run to run fails; one stopped at a limit raises Stopped."""
    for name, value in fixed:
        if (found := failure(name, value)) is not None:
            return found, 0
    drawn, tried = f"{random} (the first that ran into the limit)", 0
    stopped: list[sandbox.Stopped] = []

    def fails(value: T) -> bool:
        nonlocal tried
        if stopped:  # the rest of the search would only meet the limit again: end it
            return True
        tried += 1
        try:
            return failure(drawn, value) is not None
        except sandbox.Stopped as stop:
            stopped.append(stop)
            return True

    with _hypothesis_home():
        try:
            shrunk = find(strategy, fails, settings=settings(SEARCH, max_examples=examples))
        except NoSuchExample:
            shrunk = None
        except Flaky:
            return unsteady(exercise, drawn), tried
    if stopped:
        raise stopped[0]
    if shrunk is not None:
        name = f"{random} (shrunk to the smallest)"
        return failure(name, shrunk) or unsteady(exercise, name), tried
    for name, value in last:
        if (found := failure(name, value)) is not None:
            return found, tried
    return None, tried


@functools.cache
def _hypothesis_dir() -> str:
    """A temp dir of the check's own, removed when the kernel ends."""
    home = tempfile.mkdtemp(prefix="emq-lab-hypothesis-")
    atexit.register(shutil.rmtree, home, True)
    return home


@contextmanager
def _hypothesis_home() -> Iterator[None]:
    """hypothesis's cache goes to a temp dir of its own, not the learner's notebook folder."""
    found: Any = configuration.storage_directory()
    previous: Path = getattr(found, "home_directory", found)
    configuration.set_hypothesis_home_dir(_hypothesis_dir())
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(previous)


def sim(lab: Lab) -> tuple[Lab, SimClock]:
    """``lab`` reading now from a fresh SimClock at COURSE_START: a scenario's text is the same each run."""
    clock = SimClock(COURSE_START)
    return lab.with_clock(clock), clock
