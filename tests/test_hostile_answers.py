"""No answer escapes a checker: hypothesis draws about 1,000 hostile answers (Lua built from
pieces that break things, random text, lone surrogates, values of the wrong type; rules that
return None, NaN, huge or negative numbers, text, or raise) and every one ends as a Check whose
text says why. ``pytest --deep`` draws ten times more. The learner's code runs in the sandbox
only, so this runs once, on the embedded backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import emq_lab
from emq_lab import exercises
from emq_lab.exercises import Check

REGISTER = exercises.solution("register")
ADVANCE = exercises.solution("advance")
assert isinstance(REGISTER, str) and isinstance(ADVANCE, str)

# Pieces of Lua that each break something: Valkey's read-only globals, odd replies, odd
# arguments to redis.call, errors of every shape, the libraries' corners, bounded busy work.
PIECES = [
    "string.x = 1",
    "rawset(_G, 'x', 1)",
    "setmetatable(_G, {})",
    "x = 1",
    "redis.call = nil",
    "table.insert(string, 1)",
    "getmetatable('').__index = {}",
    "return {err = 'boom'}",
    "return {ok = {}}",
    "return {err = 1}",
    "return 1e300",
    "return -1e300",
    "return 0/0",
    "return 2^63",
    "return {}",
    "return {1, {2, {3}}}",
    "return 'x'",
    "return nil",
    "return true",
    "return cjson.null",
    "return function() end",
    "return coroutine.create(function() end)",
    "local t = {} t[1] = t return t",
    "error('x')",
    "error({})",
    "error(nil)",
    "error(setmetatable({}, {__tostring = function() error('deeper') end}))",
    "return redis.call()",
    "return redis.call('NOPE')",
    "return redis.call('GET', nil)",
    "return redis.call('SET', KEYS[1], {})",
    "return redis.call('ZADD', KEYS[1], 'inf', ARGV[1])",
    "return redis.call('ZADD', KEYS[1], '-inf', ARGV[1])",
    "redis.call('SET', KEYS[1], 'x')",
    "redis.call('HSET', KEYS[2], 'every_ms', 'soon')",
    "redis.call('HSET', KEYS[2], 'every_ms', '\\255\\254')",
    "redis.call('LPUSH', KEYS[1] .. ':x', 1)",
    "redis.call('PEXPIRE', KEYS[1], 1)",
    "redis.call('DEL', KEYS[1], KEYS[2])",
    "redis.call('SET', 'elsewhere', string.rep('\\0', 100))",
    "return redis.pcall('INCR', KEYS[1])",
    "redis.set_repl(99)",
    "redis.log()",
    "return cjson.decode(ARGV[3])",
    "return cjson.encode({[20] = 1})",
    "return cjson.decode(string.rep('[', 2000))",
    "return bit.band('x')",
    "return struct.pack('>I', 1)",
    "return loadstring('return (')()",
    "return load('x')",
    "return string.rep('x', 1e6)",
    "return tostring(#string.format('%099d', 1))",
    "for i = 1, 1e4 do local _ = i * i end",
    "local co = coroutine.wrap(function() error('in a coroutine') end) co()",
    "return select('#', unpack({1, 2, 3}, 1, 1e6))",
    "return ('%s'):rep(1e3, ',')",
    "return ARGV[99] .. 'x'",
    "#!lua flags=no-writes",
    "#!lua flags=bogus",
    "#!js",
    "\\ud800",
]
SURROGATES = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
LUA = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("\n".join),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=2).map(lambda ps: "\n".join(ps) + "\n" + REGISTER),
    st.text(max_size=80),
    st.builds(lambda a, b: a + b, st.text(max_size=20), SURROGATES),
)
NOT_TEXT = st.one_of(
    st.none(), st.integers(), st.floats(), st.binary(max_size=20), st.lists(st.integers(), max_size=3), st.booleans()
)
ANSWERS = st.one_of(LUA, LUA, LUA, NOT_TEXT)


def _raises(kind: type[BaseException]) -> Callable[..., Any]:
    def rule(release_ms: int, every_ms: int) -> int:
        raise kind("from the rule")

    return rule


class _Weird:
    """A value whose every conversion fails."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __int__(self) -> int:
        raise RuntimeError("no int")


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**62, max_value=2**70),
    st.just(10**5000),
    st.floats(),
    st.text(max_size=10),
    st.binary(max_size=10),
    st.just(_Weird()),
    st.lists(st.integers(), max_size=2),
)
RULES = st.one_of(
    VALUES.map(lambda value: lambda release_ms, every_ms: value),
    VALUES.map(lambda value: lambda release_ms, every_ms, finish_ms: value),
    st.integers(-(10**6), 10**6).map(lambda shift: lambda release_ms, every_ms: release_ms + every_ms + shift),
    st.sampled_from([ZeroDivisionError, KeyError, RecursionError, ValueError, OverflowError]).map(_raises),
    st.sampled_from([lambda: 1, lambda a, b, c, d: 1, 42, None, "lambda r, e: r + e", print]),
)


@pytest.fixture(scope="module")
def lab() -> Iterator[emq_lab.Lab]:
    here = emq_lab.connect("embedded", clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    yield here
    here.close()


def examples(deep: bool, count: int) -> settings:
    return settings(
        max_examples=count * (10 if deep else 1),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def ends_as_a_check(check: object, exercise: str) -> None:
    assert isinstance(check, Check), f"{exercise}: {type(check).__name__} {check!r}"
    text = str(check)
    assert text.startswith(f"{exercise}:"), text
    assert check.passed or "FAILED" in text, text


def test_every_register_answer_ends_as_a_check(lab: emq_lab.Lab, deep: bool) -> None:
    @examples(deep, 400)
    @given(ANSWERS)
    def run(answer: object) -> None:
        ends_as_a_check(exercises.register(answer, lab), "register")  # type: ignore[arg-type]

    run()


def test_every_advance_answer_ends_as_a_check(lab: emq_lab.Lab, deep: bool) -> None:
    @examples(deep, 250)
    @given(ANSWERS)
    def run(answer: object) -> None:
        ends_as_a_check(exercises.advance(answer, lab), "advance")  # type: ignore[arg-type]

    run()


def test_every_next_run_rule_ends_as_a_check(lab: emq_lab.Lab, deep: bool) -> None:
    @examples(deep, 350)
    @given(RULES)
    def run(rule: Any) -> None:
        ends_as_a_check(exercises.next_run(rule, lab), "next_run")

    run()
