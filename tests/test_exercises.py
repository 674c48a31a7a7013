"""The exercises: every known-wrong variant is caught with its counterexample, the reference
solutions pass, the text is the same on every backend, a runaway script is stopped, and a
checker writes nothing to the lab (its scripts run in the sandbox; tests/test_sandbox.py)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from helpers import MIN, snapshot

import emq_lab
from emq_lab import exercises
from emq_lab.exercises import explain, with_scripts

REGISTER = exercises.solution("register")
ADVANCE = exercises.solution("advance")


def mutant(text: str, old: str, new: str) -> str:
    """``text`` with one edit; the edit must apply (a mutant equal to the solution proves nothing)."""
    assert text.count(old) == 1, old
    return text.replace(old, new)


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` holding ``needle`` (once)."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(found) == 1, needle
    return found[0]


def embedded() -> emq_lab.Lab:
    return emq_lab.connect("embedded", clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))


# The *_text_is_the_same_on_every_backend tests compare a check on a server's lab with one on the
# embedded lab: on the embedded backend they would compare it with itself.
ON_SERVERS = pytest.mark.parametrize("backend_url", ["valkey", "cluster"], indirect=True)


# -- register ----------------------------------------------------------------------------------

GUARD = "if redis.call('EXISTS', record) == 1 then\n  return 0\nend\n"
HSET = "redis.call('HSET', record, 'every_ms', every_ms, 'template', template)\n"
ZADD = "redis.call('ZADD', registry, first_ms, name)\n"

REGISTER_VARIANTS: dict[str, tuple[str, list[str]]] = {
    "ZADD before the guard": (
        exercises.buggy("register"),  # type: ignore[dict-item]
        [
            'scenario "two boots"',
            "boot #2 moved the row of report from 09:15 to 09:20",
            "after:    registry = report @ 09:20",
        ],
    ),
    "HSET on every call": (
        mutant(
            mutant(REGISTER, HSET, ""),
            GUARD,
            HSET + GUARD.replace("'EXISTS', record) == 1", "'ZSCORE', registry, name)"),
        ),
        ['scenario "a changed period"', "boot #2 rewrote the record", "every_ms=1800000"],
    ),
    "member = name:timestamp": (
        mutant(REGISTER, ZADD, "redis.call('ZADD', registry, first_ms, name .. ':' .. first_ms)\n"),
        ["boot #1", "the registry member is 'report:1767604500000'; the member must be the name itself"],
    ),
    "first run off by one": (
        mutant(REGISTER, ZADD, "redis.call('ZADD', registry, first_ms + 1, name)\n"),
        ["the first run of report is 09:15:00.001; it must be now + first_in_ms = 09:15"],
    ),
    "answers registered on a live name": (
        mutant(REGISTER, "  return 0\n", "  return 1\n"),
        ["boot #2 answered {:ok, :registered} (1); its record exists, so the answer is {:ok, :exists} (0)"],
    ),
    "guard probes the registry key": (
        mutant(REGISTER, "'EXISTS', record", "'EXISTS', registry"),
        [
            'FAILED in scenario "a registry row left without a record"',  # caught before the random search
            "answered {:ok, :exists} (0); it has no record, so the answer is {:ok, :registered} (1)",
        ],
    ),
    "template not stored": (
        mutant(REGISTER, ", 'template', template)", ")"),
        ["boot #1", "the record should hold every_ms and template as given"],
    ),
    "the skeleton as given": (exercises.skeleton("register"), ["boot #1", "left no registry row for report"]),
    "ZADD arguments swapped": (
        mutant(REGISTER, ZADD, "redis.call('ZADD', registry, name, first_ms)\n"),
        ["boot #1", f"the script failed: line {line_of(REGISTER, 'ZADD')}: value is not a valid float"],
    ),
}


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
@pytest.mark.parametrize("variant", list(REGISTER_VARIANTS))
def test_register_catches_each_wrong_variant(lab: emq_lab.Lab, variant: str) -> None:
    source, expected = REGISTER_VARIANTS[variant]
    check = exercises.register(source, lab)
    assert not check.passed
    for piece in expected:
        assert piece in str(check), f"{variant}: {piece!r} not in\n{check}"


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
def test_register_reference_passes_and_lists_the_properties(lab: emq_lab.Lab) -> None:
    check = exercises.register(REGISTER, lab)
    assert check.passed, str(check)
    assert "one row per name" in str(check) and "a second boot writes nothing" in str(check)


@ON_SERVERS
def test_register_text_is_the_same_on_every_backend(lab: emq_lab.Lab) -> None:
    here = embedded()
    try:
        for source in (exercises.buggy("register"), REGISTER_VARIANTS["ZADD arguments swapped"][0], REGISTER):
            assert str(exercises.register(source, lab)) == str(exercises.register(source, here))  # type: ignore[arg-type]
    finally:
        here.close()


def test_a_checker_writes_nothing_to_the_lab(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    rep.register("report", 15 * MIN, "{}")
    before = snapshot(lab, queue)
    exercises.register(exercises.buggy("register"), lab)  # type: ignore[arg-type]
    exercises.advance(ADVANCE, lab)
    assert snapshot(lab, queue) == before
    for own in ("exercise-register", "exercise-register-ref", "exercise-advance", "exercise-advance-ref"):
        assert lab.keys(own) == []


SANDBOX_CANNOT_START = """
import tempfile
import emq_lab
from emq_lab import exercises, keys, progress
tempfile.tempdir = "/nonexistent-emq-lab-tmp"  # the machine's temp dir gone: no worker can start
lab = emq_lab.connect("embedded")
for name, answer in (("register", exercises.solution("register")), ("next_run", lambda start, every: start + every)):
    try:
        print(name, "verdict", getattr(exercises, name)(answer, lab=lab).text.splitlines()[0])
    except OSError as error:
        print(name, "raised", type(error).__name__)
print("recorded", sorted(progress.parse(lab.client.hgetall(keys.progress(lab.namespace)))[0]))
"""


def test_a_sandbox_that_cannot_start_is_an_error_never_a_failed_verdict() -> None:
    ran = subprocess.run([sys.executable, "-c", SANDBOX_CANNOT_START], capture_output=True, text=True, timeout=120)
    assert ran.stdout.splitlines() == [
        "register raised FileNotFoundError",
        "next_run raised FileNotFoundError",
        "recorded []",
    ], ran.stderr


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
def test_an_endless_loop_is_stopped_with_a_clear_message(lab: emq_lab.Lab) -> None:
    check = exercises.register("local x = 0\nwhile true do x = x + 1 end\nreturn 1", lab)
    assert not check.passed
    assert f"the script failed: line 2: {explain.TIME_LIMIT}" in str(check), str(check)
    assert "the script was still running after 1 s of CPU time, the time limit" in explain.TIME_LIMIT
    assert exercises.register(REGISTER, lab).passed  # the sandbox works normally afterwards


@pytest.mark.embedded_only
def test_an_answer_that_is_not_lua_text_is_a_failed_check(lab: emq_lab.Lab) -> None:
    for bad, said in (
        ("", "your answer is empty"),
        ("   ", "your answer is empty"),
        (None, "must be the Lua text of register.lua (a str); got NoneType None"),
        (42, "got int 42"),
        ("return 1\n-- \ud800", "line 2 holds '\\ud800', a character that has no UTF-8 form"),
    ):
        check = exercises.register(bad, lab)  # type: ignore[arg-type]
        assert not check.passed and said in str(check), str(check)
        advance = exercises.advance(bad, lab)  # type: ignore[arg-type]
        assert not advance.passed and said.replace("register", "advance") in str(advance), str(advance)


# -- next_run ------------------------------------------------------------------------------------


def _raises(release_ms: int, every_ms: int) -> int:
    return release_ms // 0


NEXT_RUN_VARIANTS: dict[str, tuple[Callable[..., Any], list[str]]] = {
    "finish-based": (
        exercises.buggy("next_run"),  # type: ignore[dict-item]
        ["yours:     09:00 09:19 09:38 09:57 10:16", "run #2 is where they part: your rule gave next = 09:19"],
    ),
    "off by one ms": (lambda r, e: r + e + 1, ["yours released it at 09:15:00.001, start-to-start at 09:15"]),
    "off by one tick": (lambda r, e: r + e + MIN, ["run #2", "yours released it at 09:16, start-to-start at 09:15"]),
    "the period alone": (
        lambda r, e: e,
        ["your rule gave next = 1970-01-01 00:15", "yours released it at 09:00:00.001"],
    ),
    "two periods": (lambda r, e: r + 2 * e, ["yours released it at 09:30, start-to-start at 09:15"]),
    "on the grid": (
        lambda r, e: (r // e + 1) * e,
        ["random settings (shrunk to the smallest)", "the pump starts 7 s late", "yours released it at 09:01,"],
    ),
    "answers text": (lambda r, e: str(r + e), ["your rule's answer is not a time in whole milliseconds: expected"]),
    "raises": (_raises, ["your rule raised ZeroDivisionError"]),
}


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
@pytest.mark.parametrize("variant", list(NEXT_RUN_VARIANTS))
def test_next_run_catches_each_wrong_variant(lab: emq_lab.Lab, variant: str) -> None:
    fn, expected = NEXT_RUN_VARIANTS[variant]
    check = exercises.next_run(fn, lab)
    assert not check.passed
    for piece in expected:
        assert piece in str(check), f"{variant}: {piece!r} not in\n{check}"


def test_a_rule_that_changes_from_run_to_run_is_a_failed_check() -> None:
    calls = itertools.count(1)

    def once_wrong(release_ms: int, every_ms: int) -> int:  # right but on its 37th call, in the random search
        return release_ms + every_ms + (1 if next(calls) == 37 else 0)

    check = exercises.next_run(once_wrong)  # the backend plays no part: the rule runs in this process
    assert not check.passed and "random settings" in str(check), str(check)
    assert "behaves differently from run to run" in str(check), str(check)


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
def test_next_run_reference_passes_in_either_shape(lab: emq_lab.Lab) -> None:
    assert exercises.next_run(exercises.solution("next_run"), lab).passed
    assert exercises.next_run(lambda release_ms, every_ms: release_ms + every_ms, lab).passed


@pytest.mark.embedded_only
def test_next_run_fails_what_is_not_a_rule(lab: emq_lab.Lab) -> None:
    for bad, said in (
        (42, "your answer must be a function (release_ms, every_ms[, finish_ms]) -> next_ms; got int 42"),
        (lambda release_ms: release_ms, "got one of 1 argument(s)"),
    ):
        check = exercises.next_run(bad, lab)  # type: ignore[arg-type]
        assert not check.passed and said in str(check), str(check)


@pytest.mark.embedded_only
@pytest.mark.parametrize(
    ("rule", "said"),
    [
        (lambda r, e: None, "your rule returned None: a missing return?"),
        (lambda r, e: 1e300, "your rule's answer (1e+300) is not an instant in ms the clock can reach"),
        (lambda r, e: -(10**15), "your rule's answer (-1000000000000000) is not an instant"),
        (lambda r, e: float("nan"), "nan is not a whole number of milliseconds"),
        (lambda r, e: 10**5000, "your rule's answer (an int of 16610 bits) is not an instant"),
        (lambda r, e: 2**63, "(an int of 64 bits) is not an instant"),
        (lambda r, e: True, "expected milliseconds as an int, got bool True"),
    ],
)
def test_next_run_explains_an_answer_that_is_no_instant(lab: emq_lab.Lab, rule: Callable[..., Any], said: str) -> None:
    check = exercises.next_run(rule, lab)
    assert not check.passed
    assert said in str(check), str(check)


@ON_SERVERS
def test_next_run_text_is_the_same_on_every_backend(lab: emq_lab.Lab) -> None:
    here = embedded()
    try:
        fn = NEXT_RUN_VARIANTS["on the grid"][0]
        assert str(exercises.next_run(fn, lab)) == str(exercises.next_run(fn, here))
    finally:
        here.close()


# -- advance -------------------------------------------------------------------------------------

SWEEP = "  redis.call('ZREM', registry, name)\n"
SCORE_CAS = "if read_ms ~= '' and (not score or tonumber(score) ~= tonumber(read_ms)) then\n  return 2\nend\n"
PERIOD_CAS = "if read_every ~= '' and every ~= read_every then\n  return 2\nend\n"
CAS = (
    "local score = redis.call('ZSCORE', registry, name)\n"
    "local every = redis.call('HGET', record, 'every_ms')\n" + SCORE_CAS + PERIOD_CAS
)
# What a compare with ARGV[3] or ARGV[4] = "" (rep.advance: no check) is told.
NO_CHECK = (
    "rep.advance(name, every_ms) reads nothing before it advances, so it sends ARGV[3] (read_ms) and ARGV[4] "
    '(read_every) as "": no check'
)
SAME_SCORE = "registered anew at the same score"
PERIOD = "only the period (ARGV[4], the every_ms the tick read) tells it from the old one"

TYPO = "'raed_ms' is not defined (a typo, or a missing local?)"

ADVANCE_VARIANTS: dict[str, tuple[str, list[str]]] = {
    "without the compare-and-set": (
        exercises.buggy("advance"),  # type: ignore[dict-item]
        [
            "registered anew",
            "it overwrote a newer registration: report was registered anew (first run 09:30) after the read, "
            "and the advance wrote 09:15 over it",
        ],
    ),
    "without the period compare": (
        mutant(ADVANCE, PERIOD_CAS, ""),
        [
            f"pump reads due -> cancel lands -> {SAME_SCORE}",
            "it overwrote a newer registration: report was registered anew (first run 09:00) after the read, "
            "and the advance wrote 09:15 over it",
            PERIOD,
        ],
    ),
    "a period check that never fires": (
        mutant(
            mutant(ADVANCE, "'every_ms')", "'every')"), "and every ~= read_every", "and every and every ~= read_every"
        ),
        [SAME_SCORE, PERIOD, "before:   registry = report @ 09:00", "expected: registry = report @ 09:00"],
    ),
    'compares with ARGV[3] and ARGV[4] = ""': (  # the reference solution before it said "" = no check
        mutant(ADVANCE, SCORE_CAS + PERIOD_CAS, SCORE_CAS.replace("read_ms ~= '' and ", "") + PERIOD_CAS),
        [
            "advance: the sweep passes all 10 of its orders",
            "FAILED in the order rep.advance\n",
            NO_CHECK,
            "The advance answered {:ok, :moved}; here it should answer {:ok, :advanced}",
            "expected: registry = report @ 10:05",  # the late pump (50 min) came first
        ],
    ),
    'compares the period with ARGV[4] = ""': (
        mutant(ADVANCE, PERIOD_CAS, PERIOD_CAS.replace("read_every ~= '' and ", "")),
        ["FAILED in the order rep.advance\n", NO_CHECK, "Compare the score only when ARGV[3] is not"],
    ),
    'skips the compare only when ARGV[3] and ARGV[4] are both ""': (
        mutant(
            ADVANCE,
            SCORE_CAS + PERIOD_CAS,
            "if read_ms ~= '' or read_every ~= '' then\n"
            + SCORE_CAS.replace("read_ms ~= '' and ", "")
            + PERIOD_CAS.replace("read_every ~= '' and ", "")
            + "end\n",
        ),
        [
            "FAILED in the order rep.advance(read_ms=)\n",
            'sends the score it read as ARGV[3], but ARGV[4] (read_every) as "": no check of the period',
            "expected: registry = report @ 10:05",  # the late pump (50 min) came first
        ],
    ),
    "rep.advance skips the sweep": (
        mutant(
            ADVANCE,
            "if redis.call('EXISTS'",
            "if read_ms == '' then\n  redis.call('ZADD', registry, next_ms, name)\n"
            "  return 1\nend\nif redis.call('EXISTS'",
        ),
        ["FAILED in the order record deleted out of band -> rep.advance", "it left a dangling member"],
    ),
    "without the sweep": (
        mutant(ADVANCE, SWEEP, ""),
        ["pump reads due -> cancel's DEL", "it left a dangling member: the cancel's DEL took report's record"],
    ),
    "without any guard": (
        "redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])\nreturn 1",
        ["pump reads due -> cancel lands", "it resurrected the cancelled report"],
    ),
    "guards the member, not the record": (
        mutant(
            ADVANCE, "if redis.call('EXISTS', record) == 0 then", "if not redis.call('ZSCORE', registry, name) then"
        ),
        ["pump reads due -> cancel's DEL", "it left a dangling member"],
    ),
    "compares with next_ms": (
        mutant(ADVANCE, "tonumber(read_ms)", "tonumber(next_ms)"),
        [
            "pump reads due -> pump enqueues -> pump advances",
            "the registry holds report @ 09:00; it should hold report @ 09:15",
        ],
    ),
    "answers advanced for a sweep": (
        mutant(ADVANCE, SWEEP + "  return 0\n", SWEEP + "  return 1\n"),
        ["cancel lands", "the advance answered {:ok, :advanced}; here it should answer {:ok, :absent}"],
    ),
    "answers an unknown code": (
        mutant(ADVANCE, SCORE_CAS, SCORE_CAS.replace("return 2", "return 3")),
        ["registered anew", "the script returned 3; advance returns 1 (advanced), 0 (absent) or 2 (moved)"],
    ),
    "a typo": (
        mutant(ADVANCE, CAS, CAS.replace("read_ms", "raed_ms", 1)),
        [f"the script failed: line {line_of(ADVANCE, 'tonumber(read_ms)')}: {TYPO}"],
    ),
}


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
@pytest.mark.parametrize("variant", list(ADVANCE_VARIANTS))
def test_advance_catches_each_wrong_variant(lab: emq_lab.Lab, variant: str) -> None:
    source, expected = ADVANCE_VARIANTS[variant]
    check = exercises.advance(source, lab)
    assert not check.passed
    for piece in expected:
        assert piece in str(check), f"{variant}: {piece!r} not in\n{check}"


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
def test_advance_reference_passes_every_order(lab: emq_lab.Lab) -> None:
    check = exercises.advance(ADVANCE, lab)
    assert check.passed, str(check)
    assert "passed all 25 orders" in str(check)


@pytest.mark.embedded_only  # learner Lua runs in the sandbox, never on the lab's server
def test_the_reference_advance_runs_the_verbs_under_with_scripts(lab: emq_lab.Lab, queue: str) -> None:
    """``with_scripts(lab, advance=<the solution>)``: ``rep.advance`` sends ARGV[3] and ARGV[4] as "" (it
    read nothing) and advances, as with the course's own advance.lua; with ``read_ms`` it still compares."""
    learner = with_scripts(lab, advance=ADVANCE)
    rep = learner.repeat(queue)
    try:
        assert rep.register("report", 15 * MIN, "t") is emq_lab.Outcome.REGISTERED
        now = lab.clock.now_ms()
        assert rep.advance("report", 15 * MIN) is emq_lab.Outcome.ADVANCED
        assert rep.entries() == [("report", now + 15 * MIN)]
        assert rep.advance_to("report", now + 30 * MIN) is emq_lab.Outcome.ADVANCED
        assert rep.advance("report", 15 * MIN, read_ms=now + 30 * MIN) is emq_lab.Outcome.ADVANCED
        assert rep.advance("report", 5 * MIN, read_ms=now + 30 * MIN) is emq_lab.Outcome.MOVED  # it holds now + 15 min
        assert rep.entries() == [("report", now + 15 * MIN)]
        assert rep.cancel("report") is emq_lab.Outcome.CANCELLED
        assert rep.advance("report", 15 * MIN) is emq_lab.Outcome.ABSENT
        assert rep.entries() == []
    finally:
        learner.reset(queue)


@ON_SERVERS
def test_advance_text_is_the_same_on_every_backend(lab: emq_lab.Lab) -> None:
    here = embedded()
    try:
        for source in (exercises.buggy("advance"), ADVANCE_VARIANTS["a typo"][0]):
            assert str(exercises.advance(source, lab)) == str(exercises.advance(source, here))  # type: ignore[arg-type]
    finally:
        here.close()


# -- predict ---------------------------------------------------------------------------------------


def test_predictions_say_right_and_wrong_with_the_reason(lab: emq_lab.Lab) -> None:
    check = exercises.upsert.predict(
        lab=lab, size_after_boot_2=1, boot_2_answers="{:ok, :exists}", registry_after_boot_2="digest @ 09:15"
    )  # the reason comes once the questions it would answer are answered too
    assert check.passed
    assert "size_after_boot_2: right - boot #2 finds the record (EXISTS = 1)" in str(check)
    wrong = exercises.upsert.predict(lab=lab, naive_rows_after_3_boots=1, period_after_redeploy_min=30)
    assert not wrong.passed
    assert "naive_rows_after_3_boots: not quite - you said 1, it is 3" in str(wrong)
    assert "you said 30, it is 15" in str(wrong)
    runs = exercises.cadence.predict(lab=lab, next_runs=["09:00", "09:15", "09:30", "09:45"])
    assert runs.passed
    drift = exercises.cadence.predict(lab=lab, finish_based_runs=["09:00", "09:15", "09:30", "09:45"])
    assert "it is [09:00, 09:19, 09:38, 09:57]" in str(drift)
    race = exercises.cancel.predict(
        lab=lab, advance_answers="absent", advance_after_reregister=":moved", registry_after_reregister="report @ 09:45"
    )
    assert race.passed, str(race)
    assert "it is 1" in str(exercises.cancel.predict(lab=lab, occurrences_if_cancel_after_read=0))


def test_predict_names_unknown_questions_and_unreadable_answers() -> None:
    misnamed = exercises.upsert.predict(size_after_boot_3=1)  # a misspelled keyword is a line, not an exception
    assert not misnamed.passed and "size_after_boot_3 is not a question; did you mean size_after_boot_2?" in str(
        misnamed
    )
    unread = exercises.cadence.predict(next_runs=["nine"])  # an answer it cannot read is a line, not an exception
    assert not unread.passed and "next_runs: could not read ['nine']" in str(unread)
    with pytest.raises(ValueError, match="answer: give at least one"):
        exercises.cancel.predict()
    assert "size_after_boot_2" in {field.key for field in exercises.upsert.fields()}


# -- hints, solutions, figure, error text: no I/O --------------------------------------------------


def test_hints_come_in_two_levels_and_solutions_only_when_asked() -> None:
    for name in ("register", "next_run", "advance"):
        assert exercises.hint(name, 1) != exercises.hint(name, 2)
    with pytest.raises(ValueError, match="level"):
        exercises.hint("register", 3)
    with pytest.raises(ValueError, match="exercise"):
        exercises.solution("upsert")
    assert "redis.call('EXISTS', record)" in exercises.solution("register")
    assert callable(exercises.solution("next_run"))


@pytest.mark.parametrize(
    ("fake", "valkey", "expected"),
    [
        (
            "Error running script (call to f_ab): @user_script:?: user_script:3: ERR value is not a valid float"
            "\nstack traceback:\n\t[C]: in ?",
            "value is not a valid float script: 1e6e1d71eb840582f2da7e71f3d184491099cf8e, on @user_script:3.",
            "line 3: value is not a valid float",
        ),
        (
            'Error running script (call to f_ab): @user_script:?: error loading code: [string "<python>"]:2: '
            "'end' expected near '<eof>'",
            "Error compiling script (new function): user_script:2: 'end' expected near '<eof>'",
            "syntax error on line 2: 'end' expected near '<eof>'",
        ),
        (
            "Command # 2 (EVALSHA ab 2 k r) of pipeline caused error: Error running script (call to f_ab): "
            "@user_script:?: user_script:4: Script attempted to access nonexistent global variable 'x'"
            "\nstack traceback:\n\t[C]: in ?",
            "Command # 2 (EVALSHA ab 2 k r) of pipeline caused error: user_script:4: Script attempted to access "
            "nonexistent global variable 'x' script: 1e6e1d71eb840582f2da7e71f3d184491099cf8e, on @user_script:4.",
            "line 4: 'x' is not defined (a typo, or a missing local?)",
        ),
        (
            "Error running script (call to f_ab): @user_script:?: user_script:2: emq-lab stop"
            "\nstack traceback:\n\t[C]: in ?",
            "Script killed by user with SCRIPT KILL... script: 1e6e1d71eb840582f2da7e71f3d184491099cf8e, "
            "on @user_script:2.",
            f"line 2: {explain.TIME_LIMIT}",
        ),
    ],
)
def test_error_texts_of_both_backends_read_the_same(fake: str, valkey: str, expected: str) -> None:
    assert explain.explain_error(Exception(fake)) == expected
    assert explain.explain_error(Exception(valkey)) == expected
