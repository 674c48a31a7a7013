"""Hostile input, fuzzed: every value is either refused with a ValueError that names the field
before anything is written, or accepted and stored exactly. Never a Lua error, never a partial write.

The second half calls the Lua scripts raw, the way a caller that bypasses Python would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from helpers import records, scanned, slot, snapshot
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

import emq_lab
from emq_lab import Outcome
from emq_lab.keys import QueueKeys
from emq_lab.schedule import Measure
from emq_lab.scripts import ticked
from emq_lab.validate import MAX_EVERY_MS, MAX_TEMPLATE_BYTES

FORBIDDEN = set("{}*?[]")
EXAMPLES = 120
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
TRIED: dict[str, int] = {}

# --- strategies --------------------------------------------------------------------------------

ANY_CHAR = st.characters(codec=None, exclude_categories=())  # includes surrogates, NUL, controls
NOT_A_STRING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=20),
    st.lists(st.text(max_size=3), max_size=2),
)
TRICKY = st.sampled_from(["{", "}", ":", "\n", "\x00", "*", "?", "[", "]", "\\", " ", "é", "\ud800", "\udcff"])
NAMES = st.one_of(
    st.text(alphabet=ANY_CHAR, max_size=250),
    st.lists(st.one_of(TRICKY, st.text(max_size=4)), max_size=12).map("".join),
    st.integers(180, 10_240).map(lambda n: "n" * n),
    NOT_A_STRING,
)
PERIODS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-3, 3),
    st.integers(MAX_EVERY_MS - 2, MAX_EVERY_MS + 2),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=12),
    st.none(),
    st.just(2**63),
)
WIDTHS = {1: "a", 2: "é", 3: "€", 4: "😀"}


@st.composite
def templates_near_the_limit(draw: st.DrawFn) -> str:
    """A template whose UTF-8 size is within a few bytes of 64 KiB, ending in a 1-4 byte character."""
    width = draw(st.sampled_from(sorted(WIDTHS)))
    size = draw(st.integers(MAX_TEMPLATE_BYTES - 6, MAX_TEMPLATE_BYTES + 6))
    return "a" * (size - width) + WIDTHS[width]


TEMPLATES = st.one_of(
    st.text(alphabet=ANY_CHAR, max_size=200),
    templates_near_the_limit(),
    st.binary(max_size=20).map(lambda raw: raw.decode("utf-8", "surrogateescape")),  # non-UTF-8 bytes
    NOT_A_STRING,
)
FIRST_IN = st.one_of(st.integers(-3, 3), st.integers(-(2**70), 2**70), st.floats(), st.booleans(), st.none())


# --- the specification, written out again independently of emq_lab.validate ------------------


def _utf8_ok(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _int_ok(value: object, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def name_ok(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 200 and not FORBIDDEN & set(value) and _utf8_ok(value)


def template_ok(value: object) -> bool:
    return isinstance(value, str) and _utf8_ok(value) and len(value.encode("utf-8")) <= MAX_TEMPLATE_BYTES


def _count(kind: str) -> None:
    TRIED[kind] = TRIED.get(kind, 0) + 1


# --- fuzzing the Python surface ----------------------------------------------------------------


@FUZZ
@given(name=NAMES, every_ms=PERIODS, template=TEMPLATES, first_in_ms=FIRST_IN)
@example(name="a{b}", every_ms=1000, template="t", first_in_ms=0)
@example(name="x" * 10_240, every_ms=1000, template="t", first_in_ms=0)
@example(name="nul\x00and\nnewline:colon", every_ms=1, template="", first_in_ms=0)
@example(name="ok", every_ms=True, template="t", first_in_ms=0)
@example(name="ok", every_ms=1000.0, template="t", first_in_ms=0)
@example(name="ok", every_ms=MAX_EVERY_MS, template="é" * (MAX_TEMPLATE_BYTES // 2), first_in_ms=MAX_EVERY_MS)
@example(name="ok", every_ms=1000, template="\udcff", first_in_ms=0)
def test_register_refuses_or_stores_exactly(
    lab: emq_lab.Lab, queue: str, name: Any, every_ms: Any, template: Any, first_in_ms: Any
) -> None:
    _count("register")
    rep = lab.repeat(queue)
    if not rep.count():
        rep.register("existing", 1000, "t")
    before = snapshot(lab, queue)
    valid = {
        "name": name_ok(name),
        "every_ms": _int_ok(every_ms, 1, MAX_EVERY_MS),
        "template": template_ok(template),
        "first_in_ms": _int_ok(first_in_ms, 0, MAX_EVERY_MS),
    }
    if not all(valid.values()):
        with pytest.raises(ValueError) as refused:
            rep.register(name, every_ms, template, first_in_ms=first_in_ms)
        field = str(refused.value).split(":", 1)[0]
        assert field in valid and not valid[field], str(refused.value)
        assert snapshot(lab, queue) == before
        return
    outcome = rep.register(name, every_ms, template, first_in_ms=first_in_ms)
    if name == "existing":
        assert outcome is Outcome.EXISTS
        assert snapshot(lab, queue) == before
        return
    assert outcome is Outcome.REGISTERED
    assert rep.record(name) == {"every_ms": str(every_ms), "template": template}
    assert (name, lab.clock.now_ms() + first_in_ms) in rep.entries()
    assert rep.count() == 2
    assert rep.cancel(name) is Outcome.CANCELLED
    assert snapshot(lab, queue) == before


@FUZZ
@given(name=NAMES, every_ms=PERIODS)
def test_cancel_and_advance_refuse_or_act(lab: emq_lab.Lab, queue: str, name: Any, every_ms: Any) -> None:
    _count("cancel/advance")
    rep = lab.repeat(queue)
    if not rep.count():
        rep.register("existing", 1000, "t")
    before = snapshot(lab, queue)
    if not name_ok(name):
        with pytest.raises(ValueError, match="^name:"):
            rep.cancel(name)
        with pytest.raises(ValueError, match="^name:"):
            rep.advance(name, 1000)
    elif name != "existing":
        assert rep.cancel(name) is Outcome.ABSENT
        if _int_ok(every_ms, 1, MAX_EVERY_MS):
            assert rep.advance(name, every_ms) is Outcome.ABSENT  # no record: sweeps nothing
        else:
            with pytest.raises(ValueError, match="^every_ms:"):
                rep.advance(name, every_ms)
    assert snapshot(lab, queue) == before


@FUZZ
@given(queue_name=NAMES)
def test_queue_names_refuse_or_stay_in_their_slot(lab: emq_lab.Lab, queue: str, queue_name: Any) -> None:
    _count("queue")
    lab.repeat(queue).register("neighbour", 1000, "t")
    before = snapshot(lab, queue)
    if not name_ok(queue_name):
        for make in (lab.repeat, lab.jobs, lab.pump, lab.keys, lab.reset):
            with pytest.raises(ValueError, match="^queue:"):
                make(queue_name)
    elif queue_name != queue:
        rep = lab.repeat(queue_name)
        rep.register("n", 1000, "t")
        lab.pump(queue_name).tick()
        found = lab.keys(queue_name)
        assert len(found) == 5
        assert {slot(k) for k in found} == {slot(QueueKeys(queue_name).registry)}
        assert lab.reset(queue_name) == 5
    assert snapshot(lab, queue) == before


# --- the Lua scripts on their own --------------------------------------------------------------

CANONICAL_MS = re.compile(r"-?(0|[1-9][0-9]*)")


def _raw(lab: emq_lab.Lab, script: str, queue: str, name: str, args: list[Any]) -> Any:
    keyset = [QueueKeys(queue).registry, QueueKeys(queue).record(name)]
    return getattr(lab.scripts, script)(keys=keyset, args=args)


REFUSED_RAW = [
    ("register", ["n", "0", "t", "0"]),
    ("register", ["n", "-5", "t", "0"]),
    ("register", ["n", "1.5", "t", "0"]),
    ("register", ["n", "abc", "t", "0"]),
    ("register", ["n", "inf", "t", "0"]),
    ("register", ["n", "nan", "t", "0"]),
    ("register", ["n", "", "t", "0"]),
    ("register", ["n", "1000", "t", "soon"]),
    ("register", ["n", "1000", "t", "0.5"]),
    ("register", ["n", "1000", "t"]),
    ("register", ["n"]),
    ("register", []),
    ("advance", ["n", "later"]),
    ("advance", ["n", "1.5"]),
    ("advance", ["n", "inf"]),
    ("advance", ["n"]),
    ("advance", []),
    ("due", ["0", "-1"]),
    ("due", ["0", "1.5"]),
    ("due", ["0", "ten"]),
    ("due", ["0", "5001"]),
    ("due", ["0", "00000000001"]),
    ("due", ["soon", "10"]),
]


@pytest.mark.parametrize(("script", "args"), REFUSED_RAW, ids=[f"{s}-{a}" for s, a in REFUSED_RAW])
def test_a_script_refuses_malformed_argv_itself(lab: emq_lab.Lab, queue: str, script: str, args: list[Any]) -> None:
    if script == "advance":
        lab.repeat(queue).register("n", 1000, "t")
    before = snapshot(lab, queue)
    with pytest.raises(redis.ResponseError, match=f"emq {script}:"):
        _raw(lab, script, queue, "n", args)
    assert snapshot(lab, queue) == before


# Raw calls Python never sends: a caller bypassing Python still cannot corrupt the registry.
CORRUPTING_RAW = [
    pytest.param("register", "n", ["n", "5.0", "t", "0"], id="register-every_ms-5.0-stored-verbatim"),
    pytest.param("register", "n", ["n", "1e3", "t", "0"], id="register-every_ms-1e3-stored-verbatim"),
    pytest.param("register", "n", ["n", " 5", "t", "0"], id="register-every_ms-space-stored-verbatim"),
    pytest.param("register", "n", ["n", "0x10", "t", "0"], id="register-every_ms-hex-stored-verbatim"),
    pytest.param("register", "n", ["n", str(MAX_EVERY_MS + 1), "t", "0"], id="register-every_ms-over-ten-years"),
    pytest.param("register", "n", ["other", "1000", "t", "0"], id="register-argv-name-not-the-record-key"),
    pytest.param("advance", "n", ["other", "1000"], id="advance-argv-name-not-the-record-key"),
    pytest.param("cancel", "n", ["other"], id="cancel-argv-name-not-the-record-key"),
    pytest.param("cancel", "n", [], id="cancel-no-argv-lua-error"),
]


@pytest.mark.parametrize(("script", "name", "args"), CORRUPTING_RAW)
def test_a_script_refuses_argv_that_would_corrupt(
    lab: emq_lab.Lab, queue: str, script: str, name: str, args: list[Any]
) -> None:
    if script != "register":
        lab.repeat(queue).register("n", 1000, "t")
        lab.repeat(queue).register("other", 1000, "t")
    before = snapshot(lab, queue)
    with pytest.raises(redis.ResponseError, match=f"emq {script}:"):
        _raw(lab, script, queue, name, args)
    assert snapshot(lab, queue) == before


def well_formed(lab: emq_lab.Lab, queue: str) -> None:
    """Every registry member has a record whose every_ms Python can read back, and vice versa."""
    rep = lab.repeat(queue)
    members = {name for name, _ in rep.entries()}
    assert members == records(lab, queue)
    for name in members:
        every = rep.record(name)["every_ms"]
        assert CANONICAL_MS.fullmatch(every) and 1 <= int(every) <= MAX_EVERY_MS, every
    rep.rows()  # Python can read every due row


RAW_TEXT = st.one_of(
    st.from_regex(r"-?[0-9]{1,22}(\.[0-9]{0,3})?(e[0-9])?", fullmatch=True),
    st.sampled_from(["inf", "-inf", "nan", "0x1f", " 7", "7 ", "", "1e3", "5.0", "+5"]),
    st.text(max_size=6),
)


def jobs_consistent(lab: emq_lab.Lab, queue: str) -> None:
    """Every id on the wait list is stored once, as a job hash that names it, and there is no
    other job hash; every minted id's number is at most the counter."""
    k = lab.keyspace(queue)
    waiting = lab.client.lrange(k.wait, 0, -1)
    assert len(waiting) == len(set(waiting))
    stored = {key.removeprefix(k.job_prefix) for key in scanned(lab, queue) if key.startswith(k.job_prefix)}
    assert stored == set(waiting)
    assert all(lab.client.hget(k.job(job_id), "id") == job_id for job_id in waiting)
    minted = [int(job_id.removeprefix("JOB-")) for job_id in waiting if job_id.startswith("JOB-")]
    assert max(minted, default=0) <= int(lab.client.get(k.counter) or 0)


TICKS_ENTRIES = ("now_ms", "tick_ms", "batch", "reads", "want", "ids", "rule", "finish")


@FUZZ
@given(
    entry=st.integers(0, len(TICKS_ENTRIES) - 1),
    text=RAW_TEXT,
    rule=st.sampled_from([str(m) for m in Measure]),
    ids=st.sampled_from(["fresh", "slot"]),
)
@example(entry=0, text="-0", rule="fixed grid", ids="slot")
@example(entry=1, text="0", rule="start-to-finish", ids="fresh")
@example(entry=7, text="0", rule="start-to-finish", ids="slot")
def test_raw_ticks_never_corrupts(lab: emq_lab.Lab, queue: str, entry: int, text: str, rule: str, ids: str) -> None:
    """fast/ticks.lua with one ARGV entry replaced by hostile text: refused with nothing written,
    or taken as the call it spells: the registry left well formed, every job on the wait list
    stored, and a reply Python reads."""
    _count("raw ticks")
    note(f"ARGV[{entry + 1}] ({TICKS_ENTRIES[entry]}) = {text!r}")
    rep, k, now = lab.repeat(queue), lab.keyspace(queue), lab.clock.now_ms()
    rep.register_many([("a", 1000, "t"), ("n", 1000, "t"), ("z", 1000, "t")])
    args: list[Any] = [now, 1000, 2, 50, 4, ids, rule, ""]  # ticks a second apart until 4 fired
    args[entry] = text
    before = snapshot(lab, queue)
    try:
        reply = lab.scripts.ticks(keys=[k.registry, k.counter, k.wait, k.job_prefix], args=args)
    except redis.ResponseError as refused:
        assert str(refused).startswith("emq ticks: "), str(refused)
        assert snapshot(lab, queue) == before
    else:
        assert {row.name for row in ticked(reply).rows} <= {"a", "n", "z"}
    well_formed(lab, queue)
    jobs_consistent(lab, queue)
    lab.reset(queue)


@FUZZ
@given(every=RAW_TEXT, first=RAW_TEXT)
def test_raw_register_never_corrupts(lab: emq_lab.Lab, queue: str, every: str, first: str) -> None:
    _count("raw register")
    try:
        _raw(lab, "register", queue, "n", ["n", every, "t", first])
    except redis.ResponseError as refused:
        assert "emq register:" in str(refused)
    well_formed(lab, queue)
    lab.repeat(queue).cancel("n")


@pytest.fixture(autouse=True)
def _report_tried(request: pytest.FixtureRequest) -> Iterator[None]:
    """How many hostile inputs each test tried, summed over the run (whatever order, or worker,
    the tests ran in) into one line of the summary."""
    TRIED.clear()
    yield
    request.node.user_properties.append(("tally", ("hostile inputs tried (all backends)", dict(TRIED))))
