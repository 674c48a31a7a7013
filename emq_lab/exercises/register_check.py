"""Dive 1's exercise: the learner writes register.lua. Their script runs through the real
``Repeat.register`` on a queue of its own, the package's own script on a second queue, the same
scenarios on both; the first step where the two part is the counterexample."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from ..backend import scored
from ..clock import duration, moment
from ..outcome import Outcome
from ..sandbox import Stopped
from ..schedule import MINUTE_MS
from .check import (
    Check,
    Key,
    Unsteady,
    clear,
    key_differences,
    keyspace,
    lua_text,
    printable,
    queues,
    session,
    sim,
    smallest,
    unexpected,
    unsteady,
)
from .explain import attempt, explain_error
from .learner import with_scripts

if TYPE_CHECKING:
    from ..lab import Lab

NAMES = ("report", "digest")


def template_of(name: str) -> str:
    return f'{{"job": "{name}"}}'


@dataclass(frozen=True)
class BootOp:
    """A service boots and registers ``name``."""

    name: str
    every_ms: int = 15 * MINUTE_MS
    first_in_ms: int = 15 * MINUTE_MS
    template: str | None = None  # None: template_of(name)


@dataclass(frozen=True)
class CancelOp:
    name: str


@dataclass(frozen=True)
class LeftOp:
    """What a crash or a cancel half done left of ``name``: its registry row, due ``ago_ms`` ago, with
    no record (``row``), or its record with no row (not ``row``); written as is, through no script."""

    name: str
    row: bool
    ago_ms: int = 60 * MINUTE_MS


@dataclass(frozen=True)
class WaitOp:
    ms: int


Op = BootOp | CancelOp | WaitOp | LeftOp


def short(text: str, width: int = 40) -> str:
    """``text``, cut to ``width`` characters (a wrong script can write a long one, or one with
    control characters: escaped)."""
    text = printable(text)
    return text if len(text) <= width else f"{text[: width - 3]}..."


@dataclass(frozen=True)
class State:
    """The queue as the learner reads it: the registry's entries and each name's record."""

    registry: tuple[tuple[str, int], ...]
    records: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    odd: str = ""  # a registry or record key of the wrong type
    keys: tuple[Key, ...] = ()  # every key of the server: types, TTLs, the wait list, anything else

    def text(self) -> str:
        rows = ", ".join(f"{short(member)} @ {moment(score)}" for member, score in self.registry) or "(empty)"
        records = [
            f"{name} {{{', '.join(f'{short(field)}={short(value)}' for field, value in fields)}}}"
            for name, fields in self.records
            if fields
        ]
        text = f"registry = {rows}; records: {'; '.join(records) or '(none)'}"
        return f"{text}; {self.odd}" if self.odd else text


def read_state(lab: Lab, queue: str, names: tuple[str, ...]) -> State:
    """The registry rows and the records of ``names`` as the learner reads them, and every key
    of the server (one round trip)."""
    k = lab.keyspace(queue)
    keys = keyspace(lab, queue)
    found = {key.name: key for key in keys}

    def key(name: str) -> Key | None:
        return found.get(name.replace(queue, "{q}"))

    registry = key(k.registry)
    odd = [f"{k.registry} is a {registry.kind}"] if registry is not None and registry.kind != "zset" else []
    rows: tuple[tuple[str, int], ...] = ()
    if registry is not None and registry.kind == "zset":
        rows = tuple(scored(registry.read))
    records = []
    for name in names:
        record = key(k.record(name))
        if record is None:
            continue
        if record.kind == "hash":
            records.append((name, tuple(record.read)))  # sorted (field, value) pairs
        else:
            odd.append(f"the record of {name} is a {record.kind}")
    return State(rows, tuple(records), "; ".join(odd), keys)


@dataclass(frozen=True)
class Played:
    op: Op
    label: str
    at_ms: int
    answer: Outcome | None
    error: str | None
    before: State
    after: State


def describe(op: Op, number: int, now_ms: int) -> str:
    if isinstance(op, BootOp):
        first = f"first run in {duration(op.first_in_ms)}" if op.first_in_ms else "first run now"
        return f"boot #{number} at {moment(now_ms)}: register {op.name} every {duration(op.every_ms)}, {first}"
    if isinstance(op, CancelOp):
        return f"cancel {op.name} at {moment(now_ms)}"
    if isinstance(op, LeftOp):
        if op.row:
            return f"left over: a registry row of {op.name} @ {moment(now_ms - op.ago_ms)} with no record"
        return f"left over: a record of {op.name} (every 30 min) with no registry row"
    return f"wait {duration(op.ms)}"


def seed(lab: Lab, queue: str) -> None:
    """What a queue holds besides its registrations: a job a tick enqueued and no worker took
    yet (register must leave it, and the wait list, as they are)."""
    k = lab.keyspace(queue)
    pipe = lab.client.pipeline(transaction=False)
    pipe.set(k.counter, 1)
    pipe.hset(k.job("JOB-000001"), mapping={"id": "JOB-000001", "name": "digest", "fired_at_ms": "0", "template": "{}"})
    pipe.lpush(k.wait, "JOB-000001")
    pipe.execute()


def run(lab: Lab, queue: str, ops: tuple[Op, ...]) -> list[Played]:
    """Run ``ops`` on an emptied ``queue`` (a job waiting) from START; stops after a step that failed."""
    clear(lab, queue)
    seed(lab, queue)
    sim_lab, clock = sim(lab)
    rep = sim_lab.repeat(queue)
    names = tuple(sorted({op.name for op in ops if not isinstance(op, WaitOp)}))
    state = read_state(lab, queue, names)
    steps: list[Played] = []
    boots = 0
    for op in ops:
        if isinstance(op, WaitOp):
            clock.advance(op.ms)
            continue
        if isinstance(op, LeftOp):
            leave(lab, queue, op, clock.now_ms())
            state = read_state(lab, queue, names)
            continue
        boots += isinstance(op, BootOp)
        label = describe(op, boots, clock.now_ms())
        if isinstance(op, BootOp):
            verb = partial(rep.register, op.name, op.every_ms, op.template or template_of(op.name), op.first_in_ms)
        else:
            verb = partial(rep.cancel, op.name)
        try:
            answer, error = _call(verb)
        except Stopped as stop:
            steps.append(Played(op, label, clock.now_ms(), None, explain_error(stop), state, state))
            stop.steps = steps  # type: ignore[attr-defined]
            raise
        before, state = state, read_state(lab, queue, names)
        steps.append(Played(op, label, clock.now_ms(), answer, error, before, state))
        if error:
            break
    return steps


def leave(lab: Lab, queue: str, op: LeftOp, now_ms: int) -> None:
    """Write what ``op`` says was left of its name, straight to the server."""
    k = lab.keyspace(queue)
    if op.row:
        lab.client.zadd(k.registry, {op.name: now_ms - op.ago_ms})
    else:
        lab.client.hset(k.record(op.name), mapping={"every_ms": str(30 * MINUTE_MS), "template": '{"job": "old"}'})


def _call(verb: Callable[[], Outcome]) -> tuple[Outcome | None, str | None]:
    try:
        return attempt(verb)
    except RuntimeError as exc:  # a reply no Outcome maps: "register.lua returned 2, ..."
        said = str(exc).split("returned ", 1)[-1].split(",", 1)[0]
        return None, f"the script returned {said}; register returns 1 (registered) or 0 (exists)"
    except (TypeError, ValueError):
        return None, "the script returned nil or text; register returns 1 (registered) or 0 (exists)"


# -- the scenarios -------------------------------------------------------------------------------

REPORT = BootOp("report")
LONG_TEMPLATE = '{"job": "report", "note": "' + "Grüße, 東京 — ünïcödé; " * 100 + '"}'  # 3.3 KB, not ASCII
FIXED: tuple[tuple[str, tuple[Op, ...]], ...] = (
    ("two boots", (REPORT, WaitOp(5 * MINUTE_MS), REPORT)),
    (
        "a changed period",
        (REPORT, WaitOp(5 * MINUTE_MS), BootOp("report", every_ms=30 * MINUTE_MS, first_in_ms=30 * MINUTE_MS)),
    ),
    ("register after cancel", (REPORT, WaitOp(5 * MINUTE_MS), CancelOp("report"), WaitOp(5 * MINUTE_MS), REPORT)),
    # A name is registered when its record exists, whatever the registry holds (register.lua's header):
    ("a registry row left without a record", (LeftOp("report", row=True), REPORT, WaitOp(5 * MINUTE_MS), REPORT)),
    ("a record left without a registry row", (LeftOp("report", row=False), REPORT)),
    # A template is stored verbatim, however long (to 64 KB) and whatever its bytes.
    ("a long template", (BootOp("report", template=LONG_TEMPLATE), WaitOp(5 * MINUTE_MS), REPORT)),
)
TWENTY = ("twenty boots", tuple(op for _ in range(20) for op in (REPORT, WaitOp(5 * MINUTE_MS))))

_ops = st.one_of(
    st.builds(
        BootOp,
        st.sampled_from(NAMES),
        st.sampled_from((15 * MINUTE_MS, MINUTE_MS, 30 * MINUTE_MS)),
        st.sampled_from((15 * MINUTE_MS, 0, 5 * MINUTE_MS)),
    ),
    st.builds(CancelOp, st.sampled_from(NAMES)),
    st.builds(WaitOp, st.sampled_from((5 * MINUTE_MS, MINUTE_MS))),
)
INTERLEAVINGS = st.lists(_ops, min_size=1, max_size=8).map(tuple)


def _parted(yours: list[Played], ref: list[Played]) -> int | None:
    """The index of the first step where the learner's run leaves the reference's, else None."""
    for i, (mine, theirs) in enumerate(zip(yours, ref, strict=False)):
        if mine.error or mine.answer != theirs.answer or mine.after != theirs.after:
            return i
    return None


def check(lua_source: str, lab: Lab | None = None) -> Check:
    """Run ``lua_source`` as register.lua against every scenario; the first, smallest that fails
    is explained, with the keyspace before and after."""
    refused = lua_text("register", "register.lua", lua_source)
    if refused is not None:
        return refused
    with session(lab, "register", lua=True) as (sandboxed, reference):
        scenario = [""]
        try:
            learner = with_scripts(sandboxed, register=lua_source)
            return _search(reference, learner, scenario)
        except Stopped as stop:
            return _stopped(scenario[0], getattr(stop, "steps", []))
        except Unsteady:
            return unsteady("register", scenario[0])
        except Exception as error:  # noqa: BLE001 - no answer may break the checker
            return unexpected("register", error)


def _search(reference: Lab, learner: Lab, scenario: list[str]) -> Check:
    """Every scenario in turn (``scenario[0]`` names the one running), the first that fails explained."""
    mine, theirs = queues("register")

    def compare(ops: tuple[Op, ...]) -> tuple[list[Played], list[Played], int | None]:
        yours = run(learner, mine, ops)
        ref = run(reference, theirs, ops)
        return yours, ref, _parted(yours, ref)

    for name, ops in FIXED:
        scenario[0] = name
        yours, ref, at_step = compare(ops)
        if at_step is not None:
            return _failed(name, yours, ref, at_step)
    tried = 0
    scenario[0] = "random interleavings (the first that ran into the limit)"

    def fails(ops: tuple[Op, ...]) -> bool:
        nonlocal tried
        tried += 1
        return compare(ops)[2] is not None

    found = smallest(INTERLEAVINGS, fails)
    if found is not None:
        scenario[0] = "random interleavings (shrunk to the smallest)"
        yours, ref, at_step = compare(found)
        if at_step is None:  # it failed in the search, and passes now
            raise Unsteady(scenario[0])
        return _failed("random interleavings (shrunk to the smallest)", yours, ref, at_step)
    name, ops = TWENTY
    scenario[0] = name
    yours, ref, at_step = compare(ops)
    if at_step is not None:
        return _failed(name, yours, ref, at_step)
    scenarios = len(FIXED) + 1
    text = "\n".join(
        [
            f"register: passed {scenarios} scenarios and {tried} random interleavings of boots, cancels and waits",
            "  one row per name, however many boots (20 boots: 1 row)",
            "  a second boot writes nothing and answers exists (0)",
            "  the record carries every_ms and template; a changed period keeps the first",
            "  the first run is now + first_in",
            "  after a cancel the name registers fresh",
        ]
    )
    return Check("register", True, text)


def _stopped(scenario: str, steps: list[Played]) -> Check:
    """The check ends where a limit stopped the script: the steps up to it, and the limit."""
    lines = [f'register: FAILED in scenario "{scenario}"']
    lines += [f"  {step.label} -> {step.answer.tuple if step.answer else '?'}" for step in steps[:-1]]
    if steps:
        lines += [f"  {steps[-1].label}", f"    what went wrong: the script failed: {steps[-1].error}"]
        lines.append(f"    before:   {steps[-1].before.text()}")
    return Check("register", False, "\n".join(lines), scenario=scenario)


def _failed(scenario: str, yours: list[Played], ref: list[Played], i: int) -> Check:
    mine, theirs = yours[i], ref[i]
    lines = [f'register: FAILED in scenario "{scenario}"']
    lines += [f"  {step.label} -> {step.answer.tuple if step.answer else '?'}" for step in yours[:i]]
    lines.append(f"  {mine.label}")
    lines.append(f"    what went wrong: {why(mine, theirs)}")
    lines.append(f"    before:   {mine.before.text()}")
    lines.append(f"    after:    {mine.after.text()}")
    lines.append(f"    expected: {theirs.after.text()}")
    return Check("register", False, "\n".join(lines), scenario=scenario)


def why(mine: Played, ref: Played) -> str:
    """The difference between the learner's step and the reference's, in words."""
    if mine.error:
        return f"the script failed: {mine.error}"
    what = mine.label.split(" at ", 1)[0]
    if mine.answer != ref.answer:
        assert ref.answer is not None
        reason = "its record exists" if ref.answer is Outcome.EXISTS else "it has no record"
        if isinstance(mine.op, CancelOp):
            reason = "it was registered" if ref.answer is Outcome.CANCELLED else "nothing was registered"
        said = f"{mine.answer.tuple} ({mine.answer.reply})" if mine.answer else "nothing"
        return f"{what} answered {said}; {reason}, so the answer is {ref.answer.tuple} ({ref.answer.reply})"
    got, want = dict(mine.after.registry), dict(ref.after.registry)
    if len(mine.after.registry) > len(ref.after.registry):
        if ref.answer is Outcome.EXISTS and not isinstance(mine.op, CancelOp):
            return f"{what} added a registry row though the record exists: then register writes nothing"
        return f"{what} added a row: there should be one row per name"
    stray = sorted(set(got) - set(want))
    if stray:
        return f"the registry member is {stray[0]!r}; the member must be the name itself"
    for name, score in want.items():
        if name not in got:
            return f"{what} left no registry row for {name}"
        if got[name] != score:
            earlier = dict(mine.before.registry).get(name)
            if earlier is not None and dict(ref.before.registry).get(name) == score:
                moved = f"from {moment(earlier)} to {moment(got[name])}"
                return f"{what} moved the row of {name} {moved}; a live name's row stays put"
            return f"the first run of {name} is {moment(got[name])}; it must be now + first_in = {moment(score)}"
    if mine.after.records != ref.after.records:
        unchanged = mine.before.records == ref.before.records and ref.before.records == ref.after.records
        if unchanged:
            return f"{what} rewrote the record; a live name's record stays as it was"
        return "the record should hold every_ms and template as given"
    differences = key_differences(mine.after.keys, ref.after.keys)
    if differences:
        return f"{what} {differences[0]}; register writes only the registry row and the record"
    return f"{what} left the keyspace different from the reference"
