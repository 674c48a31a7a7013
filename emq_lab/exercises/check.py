"""What every checker shares: the Check it returns, the sandbox it runs on, its own queues, the
fixed start instant and the settings hypothesis searches with; and :func:`with_scripts`, a lab that
runs a learner's Lua in place of the course's scripts."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

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

#: Every scenario starts here (the notebooks' SimClock start), so the text is the same each run.
START = COURSE_START
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
    """``lab`` with some scripts replaced by Lua source, e.g. ``with_scripts(lab, advance=text)``:
    every verb and the pump of the lab returned run that text. A learner's Lua never runs on the
    lab's server: the lab returned lives in the sandbox (:func:`emq_lab.sandbox.shared`, a private
    fakeredis in a worker process, empty at first, shared by every such lab of this kernel), with
    ``lab``'s clock and namespace. A lab already in a sandbox stays in it."""
    for name, source in sources.items():
        if not isinstance(source, str):
            raise ValueError(f"{name}: expected the script's Lua source as text, got {type(source).__name__}")
        try:
            source.encode()
        except UnicodeEncodeError as error:
            raise ValueError(
                f"{name}: the script's text cannot be encoded as UTF-8 (a lone surrogate "
                f"{source[error.start]!r} at character {error.start})"
            ) from None
    client = lab.client if sandbox.owns(lab.client) else sandbox.shared().client
    base = lab.scripts if client is lab.client else Scripts.load(client)
    scripts = base.replacing(client, **sources)
    return Lab(client, lab.clock, "a sandbox (private fakeredis)", namespace=lab.namespace, scripts=scripts)


def lua_check(exercise: str, lua_source: object, compare: Callable[[Lab, Lab], Check]) -> Check:
    """The frame of a check of a learner's ``<exercise>.lua``: an answer that is not Lua text is
    refused; else ``compare(learner, reference)`` runs in the sandbox (:func:`session`), the
    learner's lab running the script; whatever the script does, the answer is a Check."""
    refused = lua_text(exercise, f"{exercise}.lua", lua_source)
    if refused is not None:
        return refused
    assert isinstance(lua_source, str)
    with session(exercise, lua=True) as (sandboxed, reference):
        try:
            return compare(with_scripts(sandboxed, **{exercise: lua_source}), reference)
        except Exception as error:  # noqa: BLE001 - no answer may break the checker
            return unexpected(exercise, error)


def failed(
    exercise: str, scenario: str, head: str, steps: list[str], step: str | None = None, what: str = "", **states: str
) -> Check:
    """A failed Check laid out as every checker lays it out: ``head``, the steps that went as they
    should, the ``step`` that failed and ``what`` went wrong, then the keyspace ``before``, ``after``
    and ``expected`` of it (those given)."""
    lines = [head, *(f"  {taken}" for taken in steps)]
    if step is not None:
        lines += [f"  {step}", f"    what went wrong: {what}"]
        lines += [f"    {label + ':':<10}{state}" for label, state in states.items()]
    return Check(exercise, False, "\n".join(lines), scenario=scenario)


def unexpected(exercise: str, error: BaseException) -> Check:
    """The failed Check for an answer that made the checker itself fail: no exception escapes."""
    text = f"{exercise}: FAILED: the check could not finish on this answer ({type(error).__name__}: {error})"
    return Check(exercise, False, text[:2000])


def lua_text(exercise: str, script: str, answer: object) -> Check | None:
    """None when ``answer`` can be run as a Lua script; else the failed Check that says why (not
    text, empty, or text that cannot be sent: a lone surrogate has no UTF-8 form)."""
    if not isinstance(answer, str):
        got = f"{type(answer).__name__} {shown(answer)}"
        why = f"your answer must be the Lua text of {script} (a str); got {got}"
    elif not answer.strip():
        why = f"your answer is empty; write the Lua text of {script}"
    else:
        try:
            answer.encode("utf-8")
            return None
        except UnicodeEncodeError as error:
            line, char = answer.count("\n", 0, error.start) + 1, ascii(answer[error.start])
            why = (
                f"line {line} holds {char}, a character that has no UTF-8 form (a lone surrogate), so the script "
                "cannot be sent to a server; remove it"
            )
    return Check(exercise, False, f"{exercise}: FAILED: {why}")


def queues(exercise: str) -> tuple[str, str]:
    """The learner's queue and the reference's queue of one exercise."""
    return f"exercise-{exercise}", f"exercise-{exercise}-ref"


@contextmanager
def session(exercise: str, *, lua: bool = False) -> Iterator[tuple[Lab, Lab]]:
    """The two labs a checker runs on, reading now from START: the kernel's sandbox
    (:func:`emq_lab.sandbox.for_checks`, wiped; with ``lua``, the check of a learner's Lua, its
    scripts all stop after :data:`~emq_lab.sandbox.CHECK_S`), where the learner's script runs, and the
    reference's: a private fakeredis of this check's own in this process, where no learner's
    script ever runs, so nothing a script plants in its Lua state can reach the reference. No
    check touches the learner's own lab: nothing is read from it or written to it, whatever its
    server (one that refuses a learner's EVAL included)."""
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
                Lab(box.client, SimClock(START), "the exercises' sandbox"),
                Lab(reference, SimClock(START), "the exercises' reference (private fakeredis)"),
            )
    finally:
        reference.close()


@dataclass(frozen=True)
class Key:
    """One key of a checker's private server, as a scheduler depends on it: its name (the
    queue's name written ``{q}``, so the learner's and the reference's compare), its type,
    whether it expires, and its value as text."""

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


def _guess(name: str) -> str:
    """The type a key of a queue has when every script was right (the read sent with TYPE)."""
    if name.endswith(":repeat") or name.endswith(":delayed"):
        return "zset"
    if ":repeat:" in name or ":job:" in name:
        return "hash"
    return "list" if name.endswith(":wait") else "string"


def keyspace(lab: Lab, queue: str) -> tuple[Key, ...]:
    """Every key of ``lab``'s server (a checker's own: the sandbox or the private reference),
    sorted by name: whatever a script may have written, inside its queue or not. Two round
    trips when every key has the type its name says (the read is sent with TYPE and PTTL), a
    third for the keys that have not."""
    client = lab.client
    names = sorted(str(name) for name in client.keys("*"))  # both clients decode replies: str already
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.type(name)
        pipe.pttl(name)
        _READS[_guess(name)](pipe, name)
    found = pipe.execute(raise_on_error=False)
    kinds, ttls, values = found[0::3], found[1::3], found[2::3]
    wrong = [i for i, (name, kind) in enumerate(zip(names, kinds, strict=True)) if kind != _guess(name)]
    if wrong:
        pipe = client.pipeline(transaction=False)
        for i in wrong:
            read = _READS.get(kinds[i], lambda pipe, key: pipe.type(key))  # a stream: its type is enough
            read(pipe, names[i])
        for i, value in zip(wrong, pipe.execute(raise_on_error=False), strict=True):
            values[i] = value
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
    """Empty a checker's private server (the sandbox, or the reference's own) before a scenario:
    every key, whatever its type or name (a wrong script can write anywhere on it)."""
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
    """A checker's search: each scenario of ``fixed`` in turn, then ``random`` ones drawn from
    ``strategy`` (hypothesis, with a fixed seed and no example database: the first that fails,
    shrunk to the smallest), then each of ``last``; ``failure(scenario, value)`` runs one and
    answers its failed Check, or None. The first failed Check (None: every one passed) and how
    many random scenarios ran. A script whose answers change from run to run is a failed Check; a
    script stopped at a limit ends the search at once and raises :class:`~emq_lab.sandbox.Stopped`."""
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
