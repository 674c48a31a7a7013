"""Verdicts true both ways, through the public checkers: an answer Valkey 9 would refuse, or one
that changes what a scheduler depends on (a TTL, the wait list, the jobs), fails; an answer
Valkey 9 runs as the reference runs (server.call, redis.replicate_commands, redis.set_repl,
redis.REDIS_VERSION, a #!lua first line) passes. The learner's Lua runs in the sandbox only,
so these run once, on the embedded backend."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

import emq_lab
from emq_lab import exercises

REGISTER = exercises.solution("register")
ADVANCE = exercises.solution("advance")
assert isinstance(REGISTER, str) and isinstance(ADVANCE, str)

TAG = "local tag = KEYS[1]:sub(1, -8)  -- emq:{q} of emq:{q}:repeat\n"


def edited(text: str, old: str, new: str) -> str:
    """``text`` with one edit that must apply (an edit that misses proves nothing)."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


@pytest.fixture(scope="module")
def lab() -> Iterator[emq_lab.Lab]:
    """Where a check records its result: the embedded server (the checks run in the sandbox)."""
    here = emq_lab.connect("embedded", clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    yield here
    here.close()


# -- register ------------------------------------------------------------------------------------

HSET = "redis.call('HSET', record, 'every_ms', every_ms, 'template', template)\n"
ZADD = "redis.call('ZADD', registry, first_ms, name)\n"

REGISTER_WRONG: dict[str, tuple[str, str]] = {
    "writes to string.*": (
        "string.trim = function(s) return s end\n" + REGISTER,
        "line 1: assigns a global variable or changes a library table (string, redis, ...), which Valkey keeps "
        "read-only",
    ),
    "rawset(_G, ...)": ("rawset(_G, 'seen', true)\n" + REGISTER, "which Valkey keeps read-only"),
    "a global through _G": ("_G.count = 1\n" + REGISTER, "which Valkey keeps read-only"),
    "changes redis.call": ("redis.call = redis.pcall\n" + REGISTER, "which Valkey keeps read-only"),
    "a TTL on the record": (
        edited(REGISTER, HSET, HSET + "redis.call('PEXPIRE', record, 3600000)\n"),
        "boot #1 set a TTL on the record of report: it would expire, and the schedule with it",
    ),
    "a TTL on the registry": (
        edited(REGISTER, ZADD, ZADD + "redis.call('PEXPIRE', registry, 3600000)\n"),
        "boot #1 set a TTL on the registry",
    ),
    "pushes a job": (
        TAG + edited(REGISTER, ZADD, ZADD + "redis.call('LPUSH', tag .. ':wait', name)\n"),
        "boot #1 changed the wait list: it holds ['report', 'JOB-000001']; it should hold ['JOB-000001']",
    ),
    "deletes the wait list": (
        TAG + edited(REGISTER, ZADD, ZADD + "redis.call('DEL', tag .. ':wait')\n"),
        "boot #1 deleted the wait list",
    ),
    "writes a key of its own": (
        TAG + edited(REGISTER, ZADD, ZADD + "redis.call('SET', tag .. ':last', name)\n"),
        "boot #1 wrote the key 'emq:{{q}}:last' (string), which should not exist",
    ),
    "ZADD NX over a row left without a record": (
        edited(REGISTER, ZADD, "redis.call('ZADD', registry, 'NX', first_ms, name)\n"),
        'FAILED in scenario "a registry row left without a record"',
    ),
    "a guard on ZSCORE": (
        edited(REGISTER, "redis.call('EXISTS', record) == 1", "redis.call('ZSCORE', registry, name)"),
        "boot #1 answered {:ok, :exists} (0); it has no record, so the answer is {:ok, :registered} (1)",
    ),
    "ZADD NX on an existing record": (
        edited(REGISTER, "  return 0\n", "  redis.call('ZADD', registry, 'NX', first_ms, name)\n  return 0\n"),
        "boot #1 added a registry row though the record exists: then register writes nothing",
    ),
    "a template cut to 200 bytes": (
        edited(REGISTER, HSET, "redis.call('HSET', record, 'every_ms', every_ms, 'template', template:sub(1, 200))\n"),
        'FAILED in scenario "a long template"',
    ),
    "a record of another type": (
        edited(REGISTER, HSET, "redis.call('SET', record, every_ms)\n"),
        "the record of report is a string",
    ),
}

REGISTER_RIGHT: dict[str, str] = {
    "server.call": REGISTER.replace("redis.call(", "server.call("),
    "redis.replicate_commands()": "redis.replicate_commands()\n" + REGISTER,
    "redis.set_repl(redis.REPL_ALL)": "redis.set_repl(redis.REPL_ALL)\n" + REGISTER,
    "redis.REDIS_VERSION": "assert(redis.REDIS_VERSION and redis.REDIS_VERSION_NUM > 0)\n" + REGISTER,
    "a #!lua first line": "#!lua\n" + REGISTER,
    "#!lua flags=allow-oom": "#!lua flags=allow-oom\n" + REGISTER,
    "server.pcall and server.error_reply": edited(
        REGISTER,
        HSET,
        "local ok = server.pcall('HSET', record, 'every_ms', every_ms, 'template', template)\n"
        "if type(ok) == 'table' and ok.err then return server.error_reply(ok.err) end\n",
    ),
    "a table of its own": "local seen = {}\nseen.count = 1\n" + REGISTER,
}


@pytest.mark.parametrize("form", list(REGISTER_WRONG))
def test_register_fails_a_wrong_answer(lab: emq_lab.Lab, form: str) -> None:
    source, expected = REGISTER_WRONG[form]
    check = exercises.register(source, lab)
    assert not check.passed, f"{form}: passed\n{check}"
    assert expected in str(check), str(check)


@pytest.mark.parametrize("form", list(REGISTER_RIGHT))
def test_register_passes_a_right_answer(lab: emq_lab.Lab, form: str) -> None:
    check = exercises.register(REGISTER_RIGHT[form], lab)
    assert check.passed, f"{form}: failed\n{check}"


def test_register_fails_a_no_writes_script(lab: emq_lab.Lab) -> None:
    check = exercises.register("#!lua flags=no-writes\n" + REGISTER, lab)
    assert not check.passed
    assert "Write commands are not allowed from read-only scripts" in str(check), str(check)


# -- advance -------------------------------------------------------------------------------------

ADVANCE_ZADD = "redis.call('ZADD', registry, next_ms, name)\n"

ADVANCE_WRONG: dict[str, tuple[str, str]] = {
    "writes to string.*": ("string.x = 1\n" + ADVANCE, "which Valkey keeps read-only"),
    "rawset(_G, ...)": ("rawset(_G, 'x', 1)\n" + ADVANCE, "which Valkey keeps read-only"),
    "a TTL on the record": (
        edited(ADVANCE, ADVANCE_ZADD, ADVANCE_ZADD + "redis.call('PEXPIRE', record, 3600000)\n"),
        "it set a TTL on the record of report: it would expire, and the schedule with it",
    ),
    "a TTL on the registry": (
        edited(ADVANCE, ADVANCE_ZADD, ADVANCE_ZADD + "redis.call('PEXPIRE', registry, 3600000)\n"),
        "it set a TTL on the registry",
    ),
    "pushes a job": (
        TAG + edited(ADVANCE, ADVANCE_ZADD, ADVANCE_ZADD + "redis.call('LPUSH', tag .. ':wait', 'again')\n"),
        "it pushed a job: the wait list holds again, ",
    ),
    "deletes the wait list": (
        TAG + edited(ADVANCE, ADVANCE_ZADD, ADVANCE_ZADD + "redis.call('DEL', tag .. ':wait')\n"),
        "it deleted the waiting jobs: the wait list holds (none); it should hold ",
    ),
    "DEL of the registry for the sweep": (
        edited(ADVANCE, "redis.call('ZREM', registry, name)", "redis.call('DEL', registry)"),
        "it removed the row of digest, another registration",
    ),
    "ZINCRBY by the period": (
        edited(ADVANCE, ADVANCE_ZADD, "redis.call('ZINCRBY', registry, read_every, name)\n"),
        "the pump 50 min late",
    ),
    "rewrites the record": (
        edited(ADVANCE, ADVANCE_ZADD, ADVANCE_ZADD + "redis.call('HSET', record, 'every_ms', next_ms)\n"),
        "it changed the record of report",
    ),
}

ADVANCE_RIGHT: dict[str, str] = {
    "server.call": ADVANCE.replace("redis.call(", "server.call("),
    "redis.replicate_commands()": "redis.replicate_commands()\n" + ADVANCE,
    "redis.set_repl(redis.REPL_ALL)": "redis.set_repl(redis.REPL_ALL)\n" + ADVANCE,
    "redis.REDIS_VERSION": "local version = redis.REDIS_VERSION .. ' ' .. server.VALKEY_VERSION\n" + ADVANCE,
    "a #!lua first line": "#!lua\n" + ADVANCE,
}


@pytest.mark.parametrize("form", list(ADVANCE_WRONG))
def test_advance_fails_a_wrong_answer(lab: emq_lab.Lab, form: str) -> None:
    source, expected = ADVANCE_WRONG[form]
    check = exercises.advance(source, lab)
    assert not check.passed, f"{form}: passed\n{check}"
    assert expected in str(check), str(check)


@pytest.mark.parametrize("form", list(ADVANCE_RIGHT))
def test_advance_passes_a_right_answer(lab: emq_lab.Lab, form: str) -> None:
    check = exercises.advance(ADVANCE_RIGHT[form], lab)
    assert check.passed, f"{form}: failed\n{check}"


def test_an_advance_that_also_deletes_every_job_is_told_what_it_did(lab: emq_lab.Lab) -> None:
    deletes = TAG + edited(
        ADVANCE,
        ADVANCE_ZADD,
        ADVANCE_ZADD + "for _, id in ipairs(redis.call('LRANGE', tag .. ':wait', 0, -1)) do\n"
        "  redis.call('DEL', tag .. ':job:' .. id)\nend\nredis.call('DEL', tag .. ':wait')\n",
    )
    text = str(exercises.advance(deletes, lab))
    assert "it deleted the waiting jobs" in text, text
    assert "answered {:ok, :advanced}; here it should answer {:ok, :advanced}" not in text


# -- the lab's verbs: an int the protocol cannot carry is refused before anything is sent ------


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda rep: rep.due(10**5000), "limit: expected an int from 1 to 5,000, got an int of 16610 bits"),
        (lambda rep: rep.due(2**63), "limit: expected an int from 1 to 5,000, got an int of 64 bits"),
        (
            lambda rep: rep.register("report", 10**5000, "{}"),
            "every_ms: expected an int from 1 to 315,360,000,000 ms, got an int of 16610 bits",
        ),
        (lambda rep: rep.register("report", 60_000, "{}", 10**5000), "first_in_ms: expected an int from 0 to"),
        (lambda rep: rep.advance("report", 10**5000), "every_ms: expected an int from 1 to"),
        (lambda rep: rep.lab.jobs("verbs").browse(10**5000), "limit: an int of 16610 bits"),
        (lambda rep: rep.advance_to("report", 10**5000), "next_ms: an int of 16610 bits is outside a signed 64-bit"),
        (lambda rep: rep.advance_to("report", 5, read_ms=10**5000), "read_ms: an int of 16610 bits is outside"),
        (
            lambda rep: rep.advance_to("report", 1.5),
            "next_ms: expected an int >= -9,223,372,036,854,775,808, got float",
        ),
        (lambda rep: rep.lab.pump("verbs", batch=-(10**5000)), "batch: expected an int >= 1, got an int of 16610"),
    ],
)
def test_a_verb_refuses_an_int_the_protocol_cannot_carry(lab: emq_lab.Lab, call: Any, said: str) -> None:
    rep = lab.repeat("verbs")
    with pytest.raises(ValueError, match=re.escape(said)):
        call(rep)
    assert lab.keys("verbs") == []  # nothing was written


# -- with_scripts ----------------------------------------------------------------------------------


def test_with_scripts_refuses_text_it_cannot_encode_naming_the_script(lab: emq_lab.Lab) -> None:
    with pytest.raises(ValueError, match=r"register: the script's text cannot be encoded as UTF-8"):
        exercises.with_scripts(lab, register="\ud800")


# -- next_run: whatever the rule is or does, a Check --------------------------------------------


class Quiet(int):
    """An int holding the right value whose text says nothing."""

    def __str__(self) -> str:
        return "x"

    __repr__ = __str__


def test_next_run_takes_an_int_subclass_for_its_value(lab: emq_lab.Lab) -> None:
    check = exercises.next_run(lambda r, e: Quiet(r + e), lab)
    assert check.passed, str(check)


def _throws(error: BaseException) -> Any:
    def rule(release_ms: int, every_ms: int) -> int:
        raise error

    return rule


@pytest.mark.parametrize("error", [SystemExit(3), GeneratorExit()], ids=["SystemExit", "GeneratorExit"])
def test_next_run_fails_a_rule_that_raises_an_exit(lab: emq_lab.Lab, error: BaseException) -> None:
    check = exercises.next_run(_throws(error), lab)
    assert not check.passed
    assert f"your rule raised {type(error).__name__}" in str(check), str(check)


def test_next_run_stops_a_rule_that_waits(lab: emq_lab.Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from emq_lab.exercises import next_run_check

    monkeypatch.setattr(next_run_check, "RULE_WALL_S", 0.5)  # 20 s in the course: a rule that sleeps 12 s a call
    calls = []

    def sleepy(release_ms: int, every_ms: int) -> int:
        calls.append(release_ms)
        time.sleep(0.3)
        return release_ms + every_ms

    check = exercises.next_run(sleepy, lab)
    assert not check.passed
    assert "your rule took too long" in str(check) and "mostly waiting" in str(check), str(check)
    assert len(calls) == 2  # stopped at the call that went past the budget, not called again


def test_next_run_stops_a_rule_that_spins(lab: emq_lab.Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from emq_lab.exercises import next_run_check

    monkeypatch.setattr(next_run_check, "RULE_CPU_S", 0.3)

    def spins(release_ms: int, every_ms: int) -> int:
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
        return release_ms + every_ms

    check = exercises.next_run(spins, lab)
    assert not check.passed
    assert "your rule took too long" in str(check) and "of CPU time" in str(check), str(check)


def test_next_run_feedback_shows_the_date_of_a_run_on_another_day() -> None:
    late = exercises.next_run(lambda release, every: release + every + 625 * 24 * 3600 * 1000)
    assert not late.passed
    assert "yours:     09:00 2027-09-22 09:15" in str(late), str(late)  # not "09:00 09:15", as if on time
    assert "your rule gave next = 2027-09-22 09:15 for the run released at 09:00" in str(late)
