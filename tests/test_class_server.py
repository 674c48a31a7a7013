"""A class server set up as the README says, attacked as a class would: no learner runs Lua of
its own (the metatable plant, a runaway script, SCRIPT KILL), the open default user is refused,
no admin password is printed, the scripts come back after a restart with the instructor's
command, BUSY is a retry, and one learner's broken keys never break the instructor's view."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from class_server import ADMIN_PASSWORD, ClassServer, started_class_server
from helpers import MIN, START
from redis.exceptions import NoPermissionError
from servers import ValkeyServer

import emq_classroom as classroom
import emq_lab
from emq_classroom import cli as classroom_cli
from emq_classroom.doctor import Row, lua_fixed
from emq_classroom.overview import MAX_QUEUES_SHOWN
from emq_classroom.panel import ClassroomPanel
from emq_lab import keys, progress, scripts
from emq_lab.errors import BackendBusy, BackendUnavailable
from emq_lab.exercises import with_scripts

pytestmark = pytest.mark.xdist_group("class-server")  # one worker takes the module: its server starts once

_runs = itertools.count(1)


@pytest.fixture(scope="module")
def class_server() -> Iterator[ClassServer]:
    with started_class_server() as server:
        yield server


@pytest.fixture
def learners(class_server: ClassServer) -> Iterator[list[classroom.Learner]]:
    prefix = f"att{next(_runs)}x"
    admin, _ = emq_lab.backend.open_client(class_server.admin_url)
    made = classroom.create_users(admin, learners=2, prefix=prefix)
    classroom.load_scripts(admin)
    yield made
    for learner in made:
        lab = emq_lab.connect(learner.url(class_server.admin_url), namespace=learner.namespace)
        lab.reset_all(["q", "reports"])
        lab.client.delete(keys.progress(learner.namespace))
        lab.close()
    classroom.revoke_users(admin, prefix=prefix)
    admin.close()


def raw(url: str) -> redis.Redis:
    """A plain client as the learner: what someone typing commands by hand has."""
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)


PLANT = "getmetatable('').__index = function(s, k) return function() return 'planted' end end return 1"


def test_no_learner_lua_reaches_the_server(class_server: ClassServer, learners: list[classroom.Learner]) -> None:
    url = class_server.admin_url
    eve, bob = learners
    hand = raw(eve.url(url))
    attacks = [
        ("EVAL", PLANT, 0),  # CVE-2025-46818's shape: code planted in the Lua state every user shares
        ("EVAL_RO", PLANT, 0),
        ("SCRIPT", "LOAD", PLANT),  # load it, then EVALSHA it
        ("FUNCTION", "LOAD", "#!lua name=eve\nserver.register_function('x', function() return 1 end)"),
        ("FCALL", "x", 0),
        ("EVAL", "while true do end", 0),  # a runaway that would block the class
        ("SCRIPT", "KILL"),  # another learner's legitimate script
        ("SCRIPT", "FLUSH"),
    ]
    for attack in attacks:
        with pytest.raises(NoPermissionError):
            hand.execute_command(*attack)
    # Bob's PING answers at once (nothing runs), his verbs work, and the Lua state is the stock one.
    other = raw(bob.url(url))
    for _ in range(3):
        started = time.monotonic()
        assert other.ping()
        assert time.monotonic() - started < 0.5
    lab = emq_lab.connect(bob.url(url), clock=emq_lab.SimClock(START), namespace=bob.namespace)
    assert lab.repeat("q").register("digest", MIN, "bob's") is emq_lab.Outcome.REGISTERED
    lab.clock.advance(MIN)  # type: ignore[attr-defined]
    assert len(lab.pump("q").tick()) == 1  # a pipelined batch: the scripts are found, not loaded
    admin = class_server.admin()
    assert admin.eval("return getmetatable('').__index == string", 0) == 1
    # Through emq-lab, a learner's own script runs in the sandbox: the class server never sees it.
    mine = emq_lab.connect(eve.url(url), clock=emq_lab.SimClock(START), namespace=eve.namespace)
    with pytest.raises(redis.ResponseError, match="Attempt to modify a readonly table"):  # as Valkey 9 refuses it
        with_scripts(mine, register=PLANT).repeat("q").register("x", MIN, "t")
    assert admin.eval("return getmetatable('').__index == string", 0) == 1
    assert mine.keys("q") == []
    for client in (hand, other, admin):
        client.close()
    lab.close()
    mine.close()


def test_the_course_sends_a_learner_nothing_the_acl_refuses(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    """The server's ACL LOG keeps every refusal: the guard reads its failed logins there, and the
    instructor reads it. A learner using the course adds nothing to it."""
    url = class_server.admin_url
    learner = learners[0]
    admin = class_server.admin()
    admin.execute_command("ACL", "LOG", "RESET")
    lab = emq_lab.connect(learner.url(url), clock=emq_lab.SimClock(START), namespace=learner.namespace)
    queue = lab.repeat("q")
    assert queue.register("digest", MIN, "t") is emq_lab.Outcome.REGISTERED
    lab.clock.advance(MIN)  # type: ignore[attr-defined]
    assert len(lab.pump("q").tick()) == 1
    assert lab.keys("q")
    lab.close()
    assert [entry for entry in admin.acl_log() if entry.get("username") == learner.name] == []
    admin.close()


def test_after_a_restart_a_learner_reads_the_command_that_loads_the_scripts(
    class_server: ClassServer, learners: list[classroom.Learner], capsys: pytest.CaptureFixture[str]
) -> None:
    (ann, _) = learners
    lab = emq_lab.connect(ann.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=ann.namespace)
    admin = class_server.admin()
    admin.script_flush()  # what a restart does to the script cache
    with pytest.raises(NoPermissionError, match=r"python -m emq_classroom scripts --url"):
        lab.repeat("q").register("digest", MIN, "t")
    assert classroom.main(["scripts", "--url", class_server.admin_url]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("loaded ") and ADMIN_PASSWORD not in out + err
    assert lab.repeat("q").register("digest", MIN, "t") is emq_lab.Outcome.REGISTERED
    admin.close()
    lab.close()


def test_users_refuses_an_open_default_user_naming_the_two_lines(
    valkey_server: ValkeyServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert classroom.main(["users", "--url", valkey_server.url, "--learners", "2", "--prefix", "open"]) == 2
    err = capsys.readouterr().err
    assert "default user is on with no password" in err
    assert "ACL SETUSER admin on >" in err and "ACL SETUSER default off" in err
    admin, _ = emq_lab.backend.open_client(valkey_server.url)
    assert classroom.existing_users(admin, prefix="open") == []  # nothing written
    admin.close()


def test_users_prints_shell_lines_that_work_and_no_admin_password(
    class_server: ClassServer, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = f"cli{next(_runs)}x"
    port = class_server.server.port
    encoded = ADMIN_PASSWORD.replace("/", "%2F")
    # The admin's credentials in the query string too: none of it may reach a learner's line.
    url = f"redis://127.0.0.1:{port}/0?username=admin&password={encoded}"
    assert classroom.main(["users", "--url", url, "--learners", "3", "--prefix", prefix]) == 0
    out, err = capsys.readouterr()
    assert ADMIN_PASSWORD not in out + err and encoded not in out + err and "admin" not in out
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(lines) == 3
    for i, line in enumerate(lines, start=1):
        words = shlex.split(line)
        assert words[0] == "export"
        env = dict(word.split("=", 1) for word in words[1:])
        assert env["EMQ_LAB_NAMESPACE"] == f"{prefix}0{i}"
        lab = emq_lab.connect(env["EMQ_LAB_URL"], clock=emq_lab.SimClock(START), namespace=env["EMQ_LAB_NAMESPACE"])
        assert lab.repeat("q").register("n", MIN, "t") is emq_lab.Outcome.REGISTERED
        lab.reset("q")
        lab.close()
    assert classroom.main(["revoke", "--url", class_server.admin_url, "--prefix", prefix]) == 0
    assert capsys.readouterr().out.startswith("removed 3 user(s)")


def test_doctor_names_what_is_wrong_and_the_fix(
    class_server: ClassServer, valkey_server: ValkeyServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert classroom.main(["doctor", "--url", valkey_server.url]) == 1  # the open default user, no limits
    table = capsys.readouterr().out
    rows = {line.split("  ")[0]: line for line in table.splitlines()}
    assert "FIX" in rows["default user"] and "ACL SETUSER default off" in rows["default user"]
    assert "FIX" in rows["maxmemory"] and "CONFIG SET maxmemory" in rows["maxmemory"]
    assert {"version, Lua CVEs", "busy threshold", "persistence", "protected mode", "maxmemory-policy"} <= set(rows)
    admin = class_server.admin()
    settings = {"maxmemory": "256mb", "maxmemory-policy": "noeviction", "appendonly": "yes"}
    before = {name: admin.config_get(name)[name] for name in settings}
    admin.config_set("busy-reply-threshold", 500)
    for name, value in settings.items():
        admin.config_set(name, value)
    try:
        classroom.main(["doctor", "--url", class_server.admin_url])
        out = capsys.readouterr().out
        fixed = {line.split("  ")[0]: line for line in out.splitlines()}
        for row in ("default user", "maxmemory", "maxmemory-policy", "persistence", "busy threshold"):
            assert " ok" in fixed[row], fixed[row]
        assert ADMIN_PASSWORD not in out
    finally:
        admin.config_set("busy-reply-threshold", 5000)
        for name, value in before.items():
            admin.config_set(name, value)
        admin.close()
    assert lua_fixed("valkey", "8.0.1") is False
    assert lua_fixed("valkey", "8.0.6") is True and lua_fixed("valkey", "9.0.0")


def test_busy_is_a_retry_for_calls_and_panels(class_server: ClassServer, learners: list[classroom.Learner]) -> None:
    ann, _ = learners
    admin = class_server.admin()
    admin.config_set("busy-reply-threshold", 100)
    lab = emq_lab.connect(ann.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=ann.namespace)
    instructor = emq_lab.connect(class_server.admin_url, clock=emq_lab.SimClock(START))
    panel = ClassroomPanel(instructor, prefix=ann.name[:-2], every_s=None)
    # The instructor's own long script (a learner cannot send one): it reads TIME until 1.5 s pass.
    runaway = (
        "local s = redis.call('TIME') "
        "repeat local n = redis.call('TIME') until (n[1] - s[1]) * 1000000 + (n[2] - s[2]) > 1500000"
    )
    thread = threading.Thread(target=lambda: class_server.admin().eval(runaway, 0))
    thread.start()
    try:
        time.sleep(0.4)  # past the 100 ms threshold
        with pytest.raises(BackendBusy, match="the server is busy running a script — retrying"):
            lab.repeat("q").count()
        assert isinstance(BackendBusy("x"), emq_lab.BackendUnavailable)
        panel.click("Refresh")
        assert panel.status.startswith("the server is busy running a script — retrying every")
    finally:
        thread.join()
        admin.config_set("busy-reply-threshold", 5000)
    assert panel.retry() and panel.status == ""
    assert lab.repeat("q").count() == 0
    panel.close()
    for closing in (lab, instructor):
        closing.close()
    admin.close()


def test_overview_survives_broken_keys_and_hostile_names(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    ann, bob = learners
    prefix = ann.name[:-2]
    hostile = "evil\n\x1b[31mforged: 0 queue(s)"
    a = emq_lab.connect(ann.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=ann.namespace)
    hand = raw(ann.url(class_server.admin_url))  # by hand: a name no emq-lab verb would take
    hand.zadd(keys.QueueKeys(hostile, ann.namespace).registry, {"n": 1})
    hand.close()
    assert progress.record(a, "register", True, at_ms=emq_lab.SimClock(START).now_ms())
    b = emq_lab.connect(bob.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=bob.namespace)
    b.client.hset(b.keyspace("reports").registry, "not", "a sorted set")  # Bob's own keys, the wrong types
    b.client.zadd(keys.progress(bob.namespace), {"nor a hash": 1})
    instructor = emq_lab.connect(class_server.admin_url, clock=emq_lab.SimClock(START))
    try:
        view = classroom.overview(instructor.client, prefix=prefix, learners=(f"{prefix}99",))
        lines = view.readout.splitlines()
        assert not any(line.startswith("forged") or "\x1b" in line for line in lines)
        assert any("evil\\n\\x1b[31mforged" in line for line in lines)
        rows = {learner.namespace: learner for learner in view.learners}
        assert ("register", "passed", START_MS) in rows[ann.name].exercises()
        assert rows[bob.name].queues[0].problem.endswith("is not a sorted set (registry)")
        assert any("hash (progress)" in problem for problem in rows[bob.name].problems)
        assert rows[f"{prefix}99"].lines() == [f"{prefix}99: not started"]
        html = ClassroomPanel(instructor, prefix=prefix, every_s=None).html()
        assert "\x1b" not in html and "evil\\n" in html
    finally:
        a.client.delete(keys.QueueKeys(hostile, ann.namespace).registry)
        b.client.delete(b.keyspace("reports").registry)
        for closing in (a, b, instructor):
            closing.close()


START_MS = emq_lab.SimClock(START).now_ms()


def test_the_auto_refresh_outlives_a_failing_refresh_and_says_when_it_last_worked(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    """The instructor's user loses SCAN for a moment: the panel says so and keeps refreshing."""
    admin = class_server.admin()
    admin.execute_command("ACL", "SETUSER", "watcher", "on", ">w", "~*", "+@all")
    url = f"redis://watcher:w@127.0.0.1:{class_server.server.port}/0"
    lab = emq_lab.connect(url, clock=emq_lab.SimClock(START))

    async def scenario() -> tuple[str, str, str]:
        panel = ClassroomPanel(lab, prefix=learners[0].name[:-2], every_s=0.02)
        first = panel.html("emq-refreshed")
        admin.execute_command("ACL", "SETUSER", "watcher", "-scan")
        for _ in range(500):
            await asyncio.sleep(0.02)
            if "failed" in panel.html("emq-refreshed"):
                break
        failing = panel.html("emq-refreshed")
        admin.execute_command("ACL", "SETUSER", "watcher", "+scan")
        lab.clock.advance(seconds=30)  # type: ignore[attr-defined]
        for _ in range(500):
            await asyncio.sleep(0.02)
            if panel.html("emq-refreshed") != failing:
                break
        again = panel.html("emq-refreshed")
        panel.stop()
        return first, failing, again

    try:
        first, failing, again = asyncio.run(scenario())
    finally:
        admin.execute_command("ACL", "DELUSER", "watcher")
        admin.close()
        lab.close()
    assert first == "last refreshed 09:00:00 UTC"
    assert failing.startswith("last refreshed 09:00:00 UTC — <b>the last refresh failed</b>") and "SCAN" in failing
    assert again == "last refreshed 09:00:30 UTC"


def max_ping_while(url: str, action: Callable[[], object]) -> tuple[float, object]:
    """The slowest PING a second learner's client sees while ``action`` runs, and what it gave
    (the exception it raised, when it raised one)."""
    other = raw(url)
    other.ping()
    slowest, done = 0.0, threading.Event()

    def ping() -> None:
        nonlocal slowest
        while not done.is_set():
            start = time.monotonic()
            try:
                other.ping()
            except redis.RedisError:
                slowest = max(slowest, 99.0)  # BUSY or no answer: the class is frozen
            slowest = max(slowest, time.monotonic() - start)
            time.sleep(0.01)

    thread = threading.Thread(target=ping)
    thread.start()
    try:
        result: object = action()
    except redis.RedisError as exc:
        result = exc
    finally:
        done.set()
        thread.join()
        other.close()
    return slowest, result


def test_the_worst_arguments_a_stock_script_takes_keep_the_class_answering(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    """B1: each stock script's work per call is bounded inside the script, so a learner calling it
    by hand with the largest ARGV it accepts (or the reviewer's huge ones) never holds the server:
    another learner's PING answers within 0.5 s."""
    eve, bob = learners
    url = class_server.admin_url
    hand = redis.Redis.from_url(eve.url(url), decode_responses=True, socket_timeout=30)
    lab = emq_lab.connect(eve.url(url), namespace=eve.namespace)
    k = lab.keyspace("q")
    sha = {field: getattr(lab.scripts, field).sha for field in ("register", "register_many", "due", "ticks")}
    pipe = hand.pipeline(transaction=False)
    for i in range(6000):  # 6000 names due at once, every 1 ms, 1 KB templates: a tick fires a whole batch
        pipe.evalsha(sha["register"], 2, k.registry, k.record(f"n{i}"), f"n{i}", 1, "t" * 1000, 0)
    pipe.execute()
    ticks_keys = (k.registry, k.counter, k.wait, k.job_prefix)

    def ticks(batch: int, reads: int, want: int) -> object:
        args = (0, 0, batch, reads, want, "fresh", "start-to-start", "")
        return hand.evalsha(sha["ticks"], 4, *ticks_keys, *args)

    many = [f"m{i}" for i in range(scripts.MAX_MANY)]
    calls: dict[str, Callable[[], object]] = {
        "ticks, the reviewer's ARGV": lambda: ticks(100_000, 30_000, 10**9),
        "ticks, the largest accepted": lambda: ticks(scripts.MAX_BATCH, scripts.MAX_READS, scripts.MAX_WANT),
        "register_many, the most names": lambda: hand.evalsha(
            sha["register_many"], 1 + len(many), k.registry, *(k.record(m) for m in many),
            1, "t" * (scripts.MAX_MANY_BYTES // len(many)), 0, *many,
        ),
        "due, the largest limit": lambda: hand.evalsha(sha["due"], 1, k.registry, 10**15, scripts.MAX_DUE),
    }  # fmt: skip
    for label, call in calls.items():
        slowest, result = max_ping_while(bob.url(url), call)
        assert slowest < 0.5, f"{label}: the other learner's PING took {slowest:.2f} s"
        if label == "ticks, the reviewer's ARGV":
            assert isinstance(result, redis.ResponseError) and "batch must be an integer from 1 to 1000" in str(result)
        else:
            assert not isinstance(result, Exception), f"{label}: {result}"
    done = scripts.ticked(ticks(scripts.MAX_BATCH, scripts.MAX_READS, scripts.MAX_WANT))
    assert done.more  # stopped at its work bound, with more to do
    with pytest.raises(redis.ResponseError, match="at most 1000 names"):
        more = [*many, "one-too-many"]
        hand.evalsha(sha["register_many"], 1 + len(more), k.registry, *(k.record(m) for m in more), 1, "t", 0, *more)
    with pytest.raises(redis.ResponseError, match="limit must be an integer from 1 to 5000"):
        hand.evalsha(sha["due"], 1, k.registry, 10**15, scripts.MAX_DUE + 1)
    admin = class_server.admin()
    for key in admin.scan_iter(match=f"emq:ns:{{{eve.namespace}:q}}:*", count=1000):
        admin.unlink(key)
    admin.close()
    hand.close()
    lab.close()


BAD_PROGRESS = ("passed 99999999999999999999999999", "passed 253402300800000", "passed ²", "failed -1")


def test_a_bad_progress_value_is_reported_on_its_learners_row(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    """B2: a progress value whose time no date can show (too many digits, past year 9999, not
    ASCII digits) is a problem on that learner's row; the overview, its command and the panel
    show the whole class."""
    ann, bob = learners
    prefix = ann.name[:-2]
    hand = raw(ann.url(class_server.admin_url))
    b = emq_lab.connect(bob.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=bob.namespace)
    assert progress.record(b, "register", True, at_ms=START_MS)
    instructor = emq_lab.connect(class_server.admin_url, clock=emq_lab.SimClock(START))
    try:
        for value in BAD_PROGRESS:
            hand.hset(keys.progress(ann.namespace), "register", value)
            rows = {s.namespace: s for s in classroom.overview(instructor.client, prefix=prefix).learners}
            assert any(value in problem for problem in rows[ann.name].problems), value
            assert ("register", "passed", START_MS) in rows[bob.name].exercises()
            panel = ClassroomPanel(instructor, prefix=prefix, every_s=None)
            assert bob.name in panel.readout and "register passed 09:00" in panel.readout
            assert panel.status == ""
            panel.close()
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                assert classroom_cli.main(["overview", "--url", class_server.admin_url, "--prefix", prefix]) == 0
            assert f"{bob.name}: 0 queue(s)" in printed.getvalue()
    finally:
        hand.delete(keys.progress(ann.namespace))
        hand.close()
        for closing in (b, instructor):
            closing.close()


def test_one_learners_junk_keys_never_hide_another_learner(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    """B3: the course's queues and checks are read by name, so Ann's thousands of junk keys (past
    her own bound, or past the search's whole bound) leave Bob's queue and Ann's passed check in
    view; Ann's row counts her queues up to her bound, lists 20 and says how many more."""
    ann, bob = learners
    prefix = ann.name[:-2]
    hand = raw(ann.url(class_server.admin_url))
    junk = [keys.QueueKeys(f"j{i:04d}", ann.namespace).counter for i in range(1500)]
    pipe = hand.pipeline(transaction=False)
    for key in junk:
        pipe.set(key, "1")
    pipe.execute()
    a = emq_lab.connect(ann.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=ann.namespace)
    assert progress.record(a, "register", True, at_ms=START_MS)
    b = emq_lab.connect(bob.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=bob.namespace)
    b.repeat("reports").register("r", MIN, "t")
    instructor = emq_lab.connect(class_server.admin_url, clock=emq_lab.SimClock(START))
    try:
        view = classroom.overview(instructor.client, prefix=prefix, per_learner=1200)
        rows = {s.namespace: s for s in view.learners}
        assert [(q.queue, q.registrations) for q in rows[bob.name].queues] == [("reports", 1)]
        assert ("register", "passed", START_MS) in rows[ann.name].exercises()
        assert len(rows[ann.name].queues) == MAX_QUEUES_SHOWN
        lines = rows[ann.name].lines()
        counted = MAX_QUEUES_SHOWN + len(rows[ann.name].unlisted)
        assert counted in (1199, 1200)  # 1200 keys counted: her progress key may be one of them
        assert lines[0].startswith(f"{ann.name}: {counted} queue(s)")
        assert lines[0].endswith(f"… and {counted - 3} more")  # the text line names three
        assert any("more than 1200 keys" in line for line in lines)
        assert len(view.readout.splitlines()) < 40
        # A search cut short (1,000 keys) still shows every named learner's queues and checks.
        cut = classroom.overview(instructor.client, prefix=prefix, max_keys=1000)
        rows = {s.namespace: s for s in cut.learners}
        assert not cut.complete and [(q.queue, q.registrations) for q in rows[bob.name].queues] == [("reports", 1)]
        assert ("register", "passed", START_MS) in rows[ann.name].exercises()
        assert (
            f"… and {len(junk) - MAX_QUEUES_SHOWN} more</i>"
            in ClassroomPanel(instructor, prefix=prefix, every_s=None).html()
        )
    finally:
        instructor.client.delete(*junk)
        for closing in (a, b, instructor):
            closing.close()
        hand.close()


def test_any_user_on_without_a_password_is_refused_and_flagged(
    class_server: ClassServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """B4: not only the default user: a ``guest`` on with no password (default off) lets anyone
    in as well; users refuses (nothing written) and doctor says FIX, each naming the command."""
    admin = class_server.admin()
    admin.execute_command("ACL", "SETUSER", "guest", "on", "nopass", "~*", "&*", "+@all")
    admin.execute_command("ACL", "SETUSER", "boss", "on", ">boss-pw", "~*", "&*", "+@all")
    try:
        url = class_server.admin_url
        assert classroom.main(["users", "--url", url, "--learners", "2", "--prefix", "guestcls"]) == 2
        err = capsys.readouterr().err
        assert "guest are on with no password" in err and "ACL SETUSER guest off" in err
        assert classroom.existing_users(admin, prefix="guestcls") == []  # nothing written
        assert classroom.main(["doctor", "--url", url]) == 1
        rows = {line.split("  ")[0]: line for line in capsys.readouterr().out.splitlines()}
        assert "FIX" in rows["users, no password"] and "ACL SETUSER guest off" in rows["users, no password"]
        assert "warn" in rows["admins"] and "ACL DELUSER boss" in rows["admins"]
    finally:
        admin.execute_command("ACL", "DELUSER", "guest", "boss")
    assert classroom.main(["doctor", "--url", class_server.admin_url]) in (0, 1)
    rows = {line.split("  ")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert " ok" in rows["users, no password"] and " ok" in rows["admins"]
    admin.close()


def test_scripts_and_users_empty_the_script_cache_so_no_admin_script_stays_callable(
    class_server: ClassServer, learners: list[classroom.Learner], capsys: pytest.CaptureFixture[str]
) -> None:
    """B6: a script the admin once sent with EVAL is in the server's cache, where a learner could
    EVALSHA it; the instructor's ``scripts`` (and ``users``) empty the cache, then load the stock
    scripts, so after them only those run."""
    eve, _ = learners
    url = class_server.admin_url
    admin = class_server.admin()
    hand = raw(eve.url(url))
    lab = emq_lab.connect(eve.url(url), clock=emq_lab.SimClock(START), namespace=eve.namespace)
    for command in (["scripts", "--url", url], ["users", "--url", url, "--learners", "1", "--prefix", "flush"]):
        admin.eval("return 'admin only'", 0)
        sha = admin.script_load("return 'admin only'")
        assert hand.evalsha(sha, 0) == "admin only"  # the hole: a learner may run it
        assert classroom.main(command) == 0
        capsys.readouterr()
        with pytest.raises(redis.exceptions.NoScriptError):
            hand.evalsha(sha, 0)
        assert lab.repeat("q").register(f"after-{command[0]}", MIN, "t") is emq_lab.Outcome.REGISTERED
    classroom.revoke_users(admin, prefix="flush")
    for closing in (hand, admin, lab):
        closing.close()


def test_doctor_checks_the_limits_that_keep_one_learner_from_starving_the_class(
    class_server: ClassServer, learners: list[classroom.Learner], capsys: pytest.CaptureFixture[str]
) -> None:
    """On a server started with no config file: maxmemory-clients, the output buffers and
    maxclients are flagged with CONFIG SET and the flag for the next start (never CONFIG
    REWRITE); users sets them; a server started with the flags it prints passes; a learner who
    runs doctor is told it needs the admin."""
    admin = class_server.admin()
    assert admin.info("server")["config_file"] == ""
    names = ("maxmemory-clients", "client-output-buffer-limit", "maxclients")
    before = {name: admin.config_get(name)[name] for name in names}
    admin.config_set("maxmemory-clients", "0")
    admin.config_set("client-output-buffer-limit", "normal 0 0 0")
    admin.config_set("maxclients", "10")
    try:
        assert classroom.main(["doctor", "--url", class_server.admin_url]) == 1
        out = capsys.readouterr().out
        rows = {line.split("  ")[0]: line for line in out.splitlines()}
        assert "FIX" in rows["maxmemory-clients"] and "--maxmemory-clients 64mb" in rows["maxmemory-clients"]
        assert "FIX" in rows["output buffers"] and "--client-output-buffer-limit normal 4mb 1mb 10" in out
        assert "FIX" in rows["maxclients"] and "fewer than the class needs" in rows["maxclients"]
        assert "CONFIG REWRITE" not in out and "config file" in rows
        made = classroom.main(["users", "--url", class_server.admin_url, "--learners", "2", "--prefix", "lim"])
        printed = capsys.readouterr().out
        assert made == 0 and "# no config file: start the server next time with --maxmemory-clients" in printed
        flags = printed.split("start the server next time with ", 1)[1].splitlines()[0].split()
        rows = {row.setting: row for _, table in classroom.doctor(admin, learners=2) for row in table}
        assert [rows[s].verdict for s in ("maxmemory-clients", "output buffers", "maxclients")] == ["ok"] * 3
    finally:
        for name, value in before.items():
            admin.config_set(name, value)
        classroom.revoke_users(admin, prefix="lim")
        admin.close()
    started = ValkeyServer(*flags)
    try:
        fresh = redis.Redis(host="127.0.0.1", port=started.port, decode_responses=True)
        rows = {row.setting: row for _, table in classroom.doctor(fresh, learners=2) for row in table}
        assert [rows[s].verdict for s in ("maxmemory-clients", "output buffers", "maxclients")] == ["ok"] * 3
        fresh.close()
    finally:
        started.close()
    ann, _ = learners
    assert classroom.main(["doctor", "--url", ann.url(class_server.admin_url)]) == 1
    out = capsys.readouterr().out
    assert "doctor needs the server's admin" in out and f"user {ann.name} may not read" in out
    assert "namespace" not in out


def test_doctor_checks_the_guard_can_see_a_hold_and_users_sets_only_what_is_wrong(class_server: ClassServer) -> None:
    """The server's defaults (10 ms, 128 entries) let the guard see a hold; a threshold above the
    guard's limit or below 0, or a log that keeps too few entries, is FIX with CONFIG SET and the flag
    for the next start (no config file); 0 (every command logged) a warning. ``users`` sets the
    wrong one and keeps an admin's right choice."""
    admin = class_server.admin()
    names = ("slowlog-log-slower-than", "slowlog-max-len", "maxmemory-clients", "client-output-buffer-limit")
    before = {name: admin.config_get(name)[name] for name in (*names, "maxclients")}

    def rows() -> dict[str, Row]:
        return {row.setting: row for _, table in classroom.doctor(admin, learners=2) for row in table}

    try:
        assert (before["slowlog-log-slower-than"], before["slowlog-max-len"]) == ("10000", "128")
        assert [rows()[s].verdict for s in ("slowlog threshold", "slowlog length")] == ["ok", "ok"]
        admin.config_set("slowlog-log-slower-than", 200_000)
        admin.config_set("slowlog-max-len", 0)
        threshold, length = rows()["slowlog threshold"], rows()["slowlog length"]
        assert threshold.verdict == "FIX"
        assert "misses holds under it (the guard's limit is 100,000 µs)" in threshold.found
        assert threshold.fix.startswith("CONFIG SET slowlog-log-slower-than 10000 ; at the next start: --slowlog-log")
        assert length.verdict == "FIX" and length.fix.startswith("CONFIG SET slowlog-max-len 128 ;")
        admin.config_set("slowlog-log-slower-than", -1)
        assert rows()["slowlog threshold"].verdict == "FIX" and "logs nothing" in rows()["slowlog threshold"].found
        admin.config_set("slowlog-log-slower-than", 0)
        assert rows()["slowlog threshold"].verdict == "warn"
        admin.config_set("slowlog-log-slower-than", 20_000)  # an admin's choice the guard can work with
        said = classroom.apply_limits(admin, learners=2)
        assert "slowlog-max-len 128" in said[0] and "slowlog-log-slower-than" not in " ".join(said)
        assert "--slowlog-max-len 128" in said[1]
        assert admin.config_get("slowlog-max-len")["slowlog-max-len"] == "128"
        assert admin.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"] == "20000"
        assert [rows()[s].verdict for s in ("slowlog threshold", "slowlog length")] == ["ok", "ok"]
    finally:
        for name, value in before.items():
            admin.config_set(name, value)
        admin.close()


def test_a_revoked_learner_is_marked_and_the_class_is_summed_up(class_server: ClassServer) -> None:
    admin, _ = emq_lab.backend.open_client(class_server.admin_url)
    prefix = f"rev{next(_runs)}x"
    ann, bob, cy = classroom.create_users(admin, learners=3, prefix=prefix)
    classroom.load_scripts(admin)
    labs = [
        emq_lab.connect(m.url(class_server.admin_url), clock=emq_lab.SimClock(START), namespace=m.namespace)
        for m in (ann, bob)
    ]
    labs[0].repeat("reports").register("digest", MIN, "t")
    assert progress.record(labs[0], "register", True, at_ms=START_MS)
    assert progress.record(labs[1], "register", False, at_ms=START_MS)
    for lab in labs:
        lab.close()
    admin.execute_command("ACL", "DELUSER", bob.name)
    try:
        view = classroom.overview(admin, prefix=prefix)
        rows = {learner.namespace: learner for learner in view.learners}
        assert rows[bob.name].revoked and not rows[ann.name].revoked and rows[cy.name].mark == "not started"
        lines = view.readout.splitlines()
        assert lines[0] == "class: 3 learner(s) · 1 started · 1 not started · 1 revoked"
        assert lines[1].startswith("reached: 01 upsert 1/3 · 02 cadence 0/3")
        assert ("register", 1, 1, 1) in view.check_counts()
        assert any(line.startswith(f"{bob.name} (revoked): 0 queue(s)") for line in lines)
        html = ClassroomPanel(emq_lab.connect(class_server.admin_url), prefix=prefix, every_s=None).html()
        assert html.index("The class") < html.index(ann.name) and "(revoked)" in html
    finally:
        classroom.revoke_users(admin, prefix=prefix)
        for member in (ann, bob):
            admin.delete(keys.progress(member.namespace), keys.QueueKeys("reports", member.namespace).registry)
            admin.delete(keys.QueueKeys("reports", member.namespace).record("digest"))
        admin.close()


def test_the_overview_of_thirty_learners_is_bounded_whatever_one_stores() -> None:
    """30 learners; one holds 20 queues named with 2 MB each, one 400,000 keys. A pass reads the
    course's queues by name, examines a bounded number of keys in its search, never sends a long
    name back, cuts it on the page, and costs less than 0.5 s of CPU (this process and the server)."""
    from class_server import fill

    from emq_classroom.overview import MAX_SCANNED, SCAN_COUNT

    with started_class_server() as server:
        admin = server.admin()
        classroom.create_users(admin, learners=30, prefix="big")
        fill(admin, "big02", long_names=20)
        view = classroom.overview(admin, prefix="big")
        rows = {learner.namespace: learner for learner in view.learners}
        assert len(rows) == 30 and view.complete
        assert len(rows["big02"].queues) == 20 and all(
            q.problem.startswith("a name longer") for q in rows["big02"].queues
        )
        assert max(len(line) for line in view.readout.splitlines()) < 600 and "(2,097,154 characters)" in view.readout
        fill(admin, "big01", keys_held=400_000)

        def cpu() -> float:
            used = admin.info("cpu")
            return time.process_time() + float(used["used_cpu_user"]) + float(used["used_cpu_sys"])

        admin.config_resetstat()
        sent = int(admin.info("stats")["total_net_input_bytes"])
        spent = cpu()
        view = classroom.overview(admin, prefix="big")
        spent = cpu() - spent
        sent = int(admin.info("stats")["total_net_input_bytes"]) - sent
        assert len(view.learners) == 30 and not view.complete
        assert admin.info("commandstats")["cmdstat_scan"]["calls"] <= MAX_SCANNED // SCAN_COUNT
        assert sent < 2**20  # a long name is never sent back to the server
        assert spent < 0.5, f"{spent:.2f} s of CPU"
        admin.close()


def test_doctor_before_users_says_to_make_the_learners_first() -> None:
    """A server with no learner yet: doctor does not size maxclients for "0 learner(s)" (32
    connections for a class); it says to run ``users`` first, or to give the class's size."""
    started = ValkeyServer()
    try:
        fresh = redis.Redis(host="127.0.0.1", port=started.port, decode_responses=True)
        rows = {row.setting: row for _, table in classroom.doctor(fresh) for row in table}
        assert "users --learners N" in rows["maxclients"].fix and "0 learner(s)" not in rows["maxclients"].found
        sized = {row.setting: row for _, table in classroom.doctor(fresh, learners=3) for row in table}
        assert "3 learner(s) x 32 + 32" in sized["maxclients"].found
        fresh.close()
    finally:
        started.close()


def test_the_guard_command_suspends_a_learner_past_its_quota_until_ctrl_c(class_server: ClassServer) -> None:
    """``python -m emq_classroom guard`` (the admin password from the environment, not the URL)
    sweeps until Ctrl-C and prints what it does: a learner holding more than its quota is
    suspended, by name."""
    admin = class_server.admin()
    (grd,) = classroom.create_users(admin, learners=1, prefix="grd")
    url = f"redis://admin@127.0.0.1:{class_server.server.port}/0"
    env = {**os.environ, "EMQ_LAB_ADMIN_PASSWORD": ADMIN_PASSWORD}
    # As from a terminal, where Ctrl-C raises KeyboardInterrupt. A run in the background (CI, `make test &`)
    # has SIGINT ignored, which a child Python inherits and keeps: SIGINT would never stop the guard.
    terminal = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'emq_classroom'; runpy.run_module('emq_classroom', run_name='__main__', alter_sys=True)"
    )
    command = [sys.executable, "-c", terminal, "guard", "--url", url, "--prefix", "grd", "--every", "0.2"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    held: list[redis.Redis] = []
    try:
        assert proc.stdout is not None and "guarding" in proc.stdout.readline()
        for _ in range(classroom.guard.QUOTA + 1):  # one past: a sweep may come at any moment after it
            client = redis.Redis.from_url(grd.url(class_server.admin_url))
            client.ping()
            held.append(client)
        line = proc.stdout.readline()  # bounded: the sweep runs every 0.2 s
        assert f"closed 1 connection(s) of {grd.name}" in line
        assert f"suspended {grd.name}" in proc.stdout.readline()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis.from_url(grd.url(class_server.admin_url)).ping()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # bounded; a busy CI is slow
        assert proc.returncode == 0, f"{out[-2000:]}\n{err[-2000:]}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for client in held:
            client.close()
        admin.delete(keys.guard_suspended(), keys.guard_log())
        classroom.revoke_users(admin, prefix="grd")
        admin.close()


def test_a_guard_that_cannot_write_its_log_says_so_and_still_suspends(class_server: ClassServer) -> None:
    admin = class_server.admin()
    (lone,) = classroom.create_users(admin, learners=1, prefix="nolog")
    admin.execute_command("ACL", "SETUSER", "nolog-guard", "on", ">guard-pw", "~*", "&*", "+@all", "-lpush")
    guard_client = redis.Redis(
        host="127.0.0.1",
        port=class_server.server.port,
        username="nolog-guard",
        password="guard-pw",
        decode_responses=True,
    )
    held = [redis.Redis.from_url(lone.url(class_server.admin_url)) for _ in range(classroom.guard.QUOTA + 1)]
    said: list[str] = []
    stop = threading.Event()
    try:
        for client in held:
            client.ping()
        classroom.guard.watch(
            guard_client, stop, every_s=0.1, report=lambda line: said.append(line) or stop.set(), prefix="nolog"
        )
        assert any(f"suspended {lone.name}" in line for line in said)
        assert any(line.startswith("could not write the guard's log") and "LPUSH" in line.upper() for line in said)
        assert not admin.lrange(keys.guard_log(), 0, -1)
    finally:
        for client in held:
            client.close()
        guard_client.close()
        admin.delete(keys.guard_suspended(), keys.guard_log())
        admin.execute_command("ACL", "DELUSER", "nolog-guard")
        classroom.revoke_users(admin, prefix="nolog")
        admin.close()


def test_a_learner_whose_call_times_out_on_a_class_server_is_told_to_retry_and_tell_the_instructor(
    class_server: ClassServer, learners: list[classroom.Learner]
) -> None:
    """The class server held (CLIENT PAUSE, as a long call of another learner would): the learner's
    call times out with advice for a class (busy or stalled, try again, tell the instructor), not
    "start the server"."""
    ann, _ = learners
    lab = emq_lab.connect(ann.url(class_server.admin_url), namespace=ann.namespace, timeout_s=0.3)
    admin = class_server.admin()
    try:
        admin.execute_command("CLIENT", "PAUSE", 1500, "ALL")
        with pytest.raises(BackendUnavailable) as stalled:
            lab.repeat("q").count()
        advice = str(stalled.value)
        assert "tell the instructor" in advice and "busy" in advice and "start the server" not in advice
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")
        admin.close()
        lab.close()


def test_two_mb_names_never_blind_the_overview_and_a_big_keyspace_is_searched_over_a_few_passes() -> None:
    """Under the 4 MiB output-buffer limit ``users`` sets (the instructor's replies too), eve's
    twenty 2 MB queue names cut the search's SCAN reply off: the step is taken again in parts, the
    class halved by name down to eve, so only eve's keys of it are skipped (her row says so) and
    bob's own queue (no course queue, found only by the search) is listed, in one pass bounded in
    CPU. With eve's 400,000 keys as well, one pass examines a bounded number of keys; a search kept
    between passes (as the panel keeps it) walks on and finds bob's queue within the passes the
    keyspace needs, each pass
    bounded, and the course queue of cy is read by name in every pass."""
    from class_server import fill

    from emq_classroom.overview import MAX_SCANNED, Search

    with started_class_server() as server:
        admin = server.admin()
        made = classroom.create_users(admin, learners=30, prefix="lng")
        eve, bob, cy = made[0], made[1], made[2]
        classroom.apply_limits(admin, learners=30)
        fill(admin, eve.namespace, long_names=20)
        admin.zadd(keys.QueueKeys("mine", bob.namespace).registry, {"report": 1})
        emq_lab.connect(server.admin_url, namespace=cy.namespace).repeat("reports").register("a", 1000, "t")
        instructor = emq_lab.connect(server.admin_url)

        def cpu() -> float:
            used = admin.info("cpu")
            return time.process_time() + float(used["used_cpu_user"]) + float(used["used_cpu_sys"])

        def rows_of(view: classroom.Overview) -> dict[str, classroom.LearnerSummary]:
            return {learner.namespace: learner for learner in view.learners}

        admin.config_resetstat()
        spent = cpu()
        view = classroom.overview(instructor.client, prefix="lng")
        spent = cpu() - spent
        rows = rows_of(view)
        # The cut step is halved by name (lng0*, lng1*, ...), not taken once per learner (31 SCANs).
        assert admin.info("commandstats")["cmdstat_scan"]["calls"] < 20
        assert view.complete and len(rows) == 30
        assert [q.queue for q in rows[bob.namespace].queues] == ["mine"] and rows[bob.namespace].mark == ""
        assert [q.queue for q in rows[cy.namespace].queues] == ["reports"]
        assert "names too long to read" in " ".join(rows[eve.namespace].problems)
        assert all(not rows[f"lng{i:02d}"].problems for i in range(2, 31))
        assert spent < 0.5, f"{spent:.2f} s of CPU"

        fill(admin, eve.namespace, keys_held=400_000)
        one = classroom.overview(instructor.client, prefix="lng")
        assert not one.complete and one.scanned <= MAX_SCANNED + 31 * 1000
        search, passes, slowest = Search(), 0, 0.0
        while passes < 400_000 // MAX_SCANNED + 3:  # the walk's passes, and some to spare
            spent = cpu()
            view = classroom.overview(instructor.client, prefix="lng", search=search)
            slowest = max(slowest, cpu() - spent)
            passes += 1
            assert [q.queue for q in rows_of(view)[cy.namespace].queues] == ["reports"]
            if view.complete:
                break
        rows = rows_of(view)
        assert view.complete and search.walks == 1, f"not searched whole in {passes} passes"
        assert [q.queue for q in rows[bob.namespace].queues] == ["mine"]
        assert slowest < 0.5, f"a pass took {slowest:.2f} s of CPU"
        # The next walk starts over; meanwhile what the whole walk found stays listed.
        view = classroom.overview(instructor.client, prefix="lng", search=search)
        assert view.complete and [q.queue for q in rows_of(view)[bob.namespace].queues] == ["mine"]
        # The instructor's panel keeps its search the same way, refresh after refresh.
        panel = ClassroomPanel(instructor, prefix="lng", every_s=None)
        assert "the next refresh looks further" in panel.readout
        for _ in range(passes + 1):
            if panel.overview.complete:
                break
            panel.refresh()
        assert panel.overview.complete and f"{bob.namespace}: 1 queue(s)" in panel.readout
        panel.close()
        instructor.close()
        admin.close()


def test_acl_users_of_hub_users_gone_while_the_hub_was_down_are_deleted_at_start_and_by_reconcile(
    class_server: ClassServer, tmp_path: Path
) -> None:
    """The hub's database holds ann and the instructor; the server still has the ACL users the hub
    once made for bob and for a former instructor (deleted while the hub was down). The hub's
    start (its init_users, no browser) deletes those two and keeps ann's, the instructor's
    observer and the users `users` made; `reconcile` does the same from the command line."""
    pytest.importorskip("jupyterhub")
    from jupyterhub import orm
    from traitlets.config import Config

    from emq_classroom import hub

    db_url = f"sqlite:///{tmp_path / 'jupyterhub.sqlite'}"
    session = orm.new_session_factory(db_url)()
    session.add_all([orm.User(name="ann"), orm.User(name="teacher", admin=True)])
    session.commit()
    session.close()
    admin = class_server.admin()
    settings = hub.HubSettings(f"redis://admin@127.0.0.1:{class_server.server.port}/0", ADMIN_PASSWORD)

    def made() -> dict[str, classroom.Learner]:
        return {
            "ann": classroom.users.make_learner(admin, "learner-ann"),
            "bob": classroom.users.make_learner(admin, "learner-bob"),
            "teacher": classroom.users.make_observer(admin, "observer-teacher"),
            "former": classroom.users.make_observer(admin, "observer-former"),
        }

    (kept,) = classroom.create_users(admin, learners=1, prefix="rec")
    try:
        for how in ("start", "reconcile"):
            users = made()
            if how == "start":
                config = Config()
                config.JupyterHub.db_url = db_url
                app = classroom_cli.class_hub(settings)(config=config)
                app.init_db()
                asyncio.run(app.init_users())
            else:
                env = {**os.environ, "EMQ_LAB_ADMIN_PASSWORD": ADMIN_PASSWORD}
                command = [sys.executable, "-m", "emq_classroom", "reconcile", "--url", settings.server_url]
                done = subprocess.run(
                    [*command, "--hub-db", db_url], env=env, capture_output=True, text=True, timeout=60, check=True
                )
                assert done.stdout.strip() == "removed 2 user(s): learner-bob observer-former"
            for name, user in users.items():
                client = redis.Redis.from_url(user.url(class_server.admin_url))
                if name in ("bob", "former"):
                    with pytest.raises(redis.AuthenticationError):
                        client.ping()
                else:
                    assert client.ping(), (how, name)
                client.close()
            assert kept.name in classroom.existing_users(admin, prefix="rec")
    finally:
        classroom.revoke_users(admin, prefix="rec")
        for name in ("learner-ann", "learner-bob", "observer-teacher", "observer-former"):
            classroom.users.revoke_learner(admin, name)
        admin.close()


@pytest.mark.parametrize("maxmemory", ["0", "256mb"])
def test_doctor_advises_the_very_maxmemory_clients_users_sets(class_server: ClassServer, maxmemory: str) -> None:
    """With or without maxmemory, doctor's fix for maxmemory-clients names the value ``users``
    then sets, and doctor passes it."""
    admin = class_server.admin()
    names = ("maxmemory", "maxmemory-clients", "maxclients", "client-output-buffer-limit")
    before = {name: admin.config_get(name)[name] for name in names}
    admin.config_set("maxmemory", maxmemory)
    admin.config_set("maxmemory-clients", "0")
    try:
        rows = {row.setting: row for _, table in classroom.doctor(admin, learners=2) for row in table}
        advised = rows["maxmemory-clients"].fix.split("maxmemory-clients ", 1)[1].split()[0]
        classroom.apply_limits(admin, learners=2)
        set_now = admin.config_get("maxmemory-clients")["maxmemory-clients"]
        assert int(set_now) == int(advised.removesuffix("mb")) * 2**20
        rows = {row.setting: row for _, table in classroom.doctor(admin, learners=2) for row in table}
        assert rows["maxmemory-clients"].verdict == "ok"
    finally:
        for name, value in before.items():
            admin.config_set(name, value)
        admin.close()


def test_the_overview_command_walks_the_search_whole_and_ends_quietly_when_its_reader_goes() -> None:
    """One learner holds more keys than a pass examines: one pass marks the other "not seen"; the
    CLI walks on (pass after pass, each bounded) and prints "not started", as the page does after
    its refreshes. Its reader gone (``overview | head``), it ends without a traceback."""
    from class_server import fill

    from emq_classroom.overview import MAX_SCANNED

    with started_class_server() as server:
        admin = server.admin()
        classroom.create_users(admin, learners=2, prefix="walk")
        fill(admin, "walk01", keys_held=2 * MAX_SCANNED + 5000)
        one = {learner.namespace: learner.mark for learner in classroom.overview(admin, prefix="walk").learners}
        assert one["walk02"] == "not seen"
        url = f"redis://admin@127.0.0.1:{server.server.port}/0"
        env = {**os.environ, "EMQ_LAB_ADMIN_PASSWORD": ADMIN_PASSWORD}
        command = [sys.executable, "-m", "emq_classroom", "overview", "--url", url, "--prefix", "walk"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "walk02: not started" in done.stdout and "search stopped" not in done.stdout
        assert "may be incomplete" not in done.stdout
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the command writes: as head after its lines
        try:
            gone = subprocess.run(command, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
        finally:
            os.close(write)
        assert "Traceback" not in gone.stderr and "BrokenPipe" not in gone.stderr, gone.stderr
        admin.close()
