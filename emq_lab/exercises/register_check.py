"""Dive 1's exercise: the learner's register.lua runs through the real ``Repeat.register`` on a queue of its
own, the package's own on a second, the same scenarios on both; the first step where they part is explained."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from hypothesis import strategies as st

from ..backend import scored
from ..clock import duration, moment
from ..outcome import Outcome
from ..sandbox import Stopped
from ..schedule import MINUTE_MS
from ..validate import shorten
from .check import Check, clear, failed, key_differences, keyspace, lua_check, passed, queues, search, sim
from .explain import attempt, explain_error

if TYPE_CHECKING:
    from ..lab import Lab
    from .check import Key

NAMES = ("report", "digest")


@dataclass(frozen=True)
class BootOp:
    """A service boots and registers ``name``."""

    name: str
    every_ms: int = 15 * MINUTE_MS
    first_in_ms: int = 15 * MINUTE_MS
    template: str | None = None  # None: {"job": "<name>"}


@dataclass(frozen=True)
class CancelOp:
    name: str


@dataclass(frozen=True)
class LeftOp:
    """What a crash or a half-done cancel left of ``name``: its row, due an hour ago (``row``), or its record."""

    name: str
    row: bool


@dataclass(frozen=True)
class WaitOp:
    ms: int


Op = BootOp | CancelOp | WaitOp | LeftOp


@dataclass(frozen=True)
class State:
    """The queue as the learner reads it: the registry's entries and each name's record."""

    registry: tuple[tuple[str, int], ...]
    records: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    odd: str = ""  # a registry or record key of the wrong type
    keys: tuple[Key, ...] = ()  # every key of the server: types, TTLs, the wait list, anything else

    def text(self) -> str:
        rows = ", ".join(f"{shorten(member, 40)} @ {moment(score)}" for member, score in self.registry) or "(empty)"
        records = [
            f"{name} {{{', '.join(f'{shorten(field, 40)}={shorten(value, 40)}' for field, value in fields)}}}"
            for name, fields in self.records
            if fields
        ]
        text = f"registry = {rows}; records: {'; '.join(records) or '(none)'}"
        return f"{text}; {self.odd}" if self.odd else text


def read_state(lab: Lab, queue: str, names: tuple[str, ...]) -> State:
    """The registry rows and the records of ``names``, and every key of the server."""
    k = lab.keyspace(queue)
    keys = keyspace(lab, queue)
    found = {key.name: key for key in keys}

    def key(name: str) -> Key | None:
        return found.get(name.replace(queue, "{q}"))

    registry = key(k.registry)
    zset = registry is not None and registry.kind == "zset"
    rows: tuple[tuple[str, int], ...] = tuple(scored(registry.read)) if registry is not None and zset else ()
    odd = [f"{k.registry} is a {registry.kind}"] if registry is not None and not zset else []
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
    answer: Outcome | None
    error: str | None
    before: State
    after: State


def seed(lab: Lab, queue: str) -> None:
    """A job a tick enqueued and no worker took yet: register must leave it, and the wait list, as they are."""
    k = lab.keyspace(queue)
    pipe = lab.client.pipeline(transaction=False)
    pipe.set(k.counter, 1)
    pipe.hset(k.job("JOB-000001"), mapping={"id": "JOB-000001", "name": "digest", "fired_at_ms": "0", "template": "{}"})
    pipe.lpush(k.wait, "JOB-000001")
    pipe.execute()


def run(lab: Lab, queue: str, ops: tuple[Op, ...]) -> list[Played]:
    """Run ``ops`` on an emptied ``queue`` (a job waiting) from COURSE_START; stops after a step that failed."""
    clear(lab)
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
        now = moment(clock.now_ms())
        if isinstance(op, BootOp):
            boots += 1
            first = f"first run in {duration(op.first_in_ms)}" if op.first_in_ms else "first run now"
            label = f"boot #{boots} at {now}: register {op.name} every {duration(op.every_ms)}, {first}"
            template = op.template or f'{{"job": "{op.name}"}}'
            verb = partial(rep.register, op.name, op.every_ms, template, op.first_in_ms)
        else:
            label = f"cancel {op.name} at {now}"
            verb = partial(rep.cancel, op.name)
        try:
            answer, error = attempt(verb, "register returns 1 (registered) or 0 (exists)")
        except Stopped as stop:
            steps.append(Played(op, label, None, explain_error(stop), state, state))
            stop.steps = steps  # type: ignore[attr-defined]
            raise
        before, state = state, read_state(lab, queue, names)
        steps.append(Played(op, label, answer, error, before, state))
        if error:
            break
    return steps


def leave(lab: Lab, queue: str, op: LeftOp, now_ms: int) -> None:
    """Write what ``op`` says was left of its name, straight to the server."""
    k = lab.keyspace(queue)
    if op.row:
        lab.client.zadd(k.registry, {op.name: now_ms - 60 * MINUTE_MS})
    else:
        lab.client.hset(k.record(op.name), mapping={"every_ms": str(30 * MINUTE_MS), "template": '{"job": "old"}'})


REPORT = BootOp("report")
WAIT = WaitOp(5 * MINUTE_MS)
LONG_TEMPLATE = '{"job": "report", "note": "' + "Grüße, 東京 — ünïcödé; " * 100 + '"}'  # 3.3 KB, not ASCII
FIXED: tuple[tuple[str, tuple[Op, ...]], ...] = (
    ("two boots", (REPORT, WAIT, REPORT)),
    ("a changed period", (REPORT, WAIT, BootOp("report", every_ms=30 * MINUTE_MS, first_in_ms=30 * MINUTE_MS))),
    ("register after cancel", (REPORT, WAIT, CancelOp("report"), WAIT, REPORT)),
    # A name is registered when its record exists, whatever the registry holds (register.lua's header):
    ("a registry row left without a record", (LeftOp("report", row=True), REPORT, WAIT, REPORT)),
    ("a record left without a registry row", (LeftOp("report", row=False), REPORT)),
    # A template is stored verbatim, however long (to 64 KB) and whatever its bytes.
    ("a long template", (BootOp("report", template=LONG_TEMPLATE), WAIT, REPORT)),
)
TWENTY = ("twenty boots", tuple(op for _ in range(20) for op in (REPORT, WAIT)))

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


def check(lua_source: str) -> Check:
    """The first, smallest scenario where ``lua_source`` as register.lua parts from the reference, explained."""
    return lua_check("register", lua_source, _search)


def _search(learner: Lab, reference: Lab) -> Check:
    """Every scenario in turn, the first that fails explained."""
    mine, theirs = queues("register")
    scenario = ""

    def failure(name: str, ops: tuple[Op, ...]) -> Check | None:
        nonlocal scenario
        scenario = name
        yours, ref = run(learner, mine, ops), run(reference, theirs, ops)
        for i, (step, expected) in enumerate(zip(yours, ref, strict=False)):
            if step.error or step.answer != expected.answer or step.after != expected.after:
                return _failed(name, yours[: i + 1], ref)
        return None

    try:
        found, tried = search("register", FIXED, INTERLEAVINGS, failure, random="random interleavings", last=(TWENTY,))
    except Stopped as stop:
        return _failed(scenario, getattr(stop, "steps", []))
    if found is not None:
        return found
    return passed(
        "register",
        f"register: passed {len(FIXED) + 1} scenarios and {tried} random interleavings of boots, cancels and waits",
        "one row per name, however many boots (20 boots: 1 row)",
        "a second boot writes nothing and answers exists (0)",
        "the record carries every_ms and template; a changed period keeps the first",
        "the first run is now + first_in_ms",
        "after a cancel the name registers fresh",
    )


def _failed(scenario: str, yours: list[Played], ref: list[Played] | None = None) -> Check:
    """The steps that went right, then the last of ``yours``: where it parts from ``ref`` (None: a limit stopped it)."""
    head = f'register: FAILED in scenario "{scenario}"'
    if not yours:
        return failed("register", scenario, head, [])
    *went, mine = yours
    steps = [f"{step.label} -> {step.answer.tuple if step.answer else '?'}" for step in went]
    if ref is None:
        what = f"the script failed: {mine.error}"
        return failed("register", scenario, head, steps, mine.label, what, before=mine.before.text())
    theirs = ref[len(went)]
    states = {"before": mine.before.text(), "after": mine.after.text(), "expected": theirs.after.text()}
    return failed("register", scenario, head, steps, mine.label, why(mine, theirs), **states)


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
            return f"the first run of {name} is {moment(got[name])}; it must be now + first_in_ms = {moment(score)}"
    if mine.after.records != ref.after.records:
        if mine.before.records == ref.before.records == ref.after.records:  # the reference changed no record
            return f"{what} rewrote the record; a live name's record stays as it was"
        return "the record should hold every_ms and template as given"
    differences = key_differences(mine.after.keys, ref.after.keys)
    if differences:
        return f"{what} {differences[0]}; register writes only the registry row and the record"
    return f"{what} left the keyspace different from the reference"
