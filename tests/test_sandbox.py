"""A learner's Lua runs in the sandbox, never on the lab's server: every hostile answer comes
back as a failed Check within the limit, the lab's server answers a second client throughout,
nothing is written to the lab or into the working directory, and the reference passes after.
The sandbox's Lua has Valkey's globals and no way out, and words its errors as Valkey does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from servers import ValkeyServer

import emq_lab
from emq_lab import exercises, sandbox
from emq_lab.exercises import with_scripts
from emq_lab.exercises.explain import CHECK_LIMIT, MEMORY_LIMIT, TIME_LIMIT, explain_error

# A learner's Lua runs in the sandbox whatever the lab's server: these run once, on the embedded lab
# (the lab's server only records a check's result there).
pytestmark = pytest.mark.embedded_only

REGISTER = exercises.solution("register")
ADVANCE = exercises.solution("advance")
# A hostile answer is a failed check within CPU_S of the sandbox's CPU time (its limits count CPU
# time: a machine busy with other work makes a check slower, never wrong); the wall clock only
# has to show it ended, however loaded the machine.
CPU_S = sandbox.CHECK_S + sandbox.CALL_CPU_S + 2.0  # a check, a call killed from outside, a new worker
WALL_S = 120.0
STOPPED = f"{TIME_LIMIT}"

# (the learner's register.lua, a piece its check's text must hold)
HOSTILE: dict[str, tuple[str, str]] = {
    "endless loop": ("local x = 0\nwhile true do x = x + 1 end", f"line 2: {TIME_LIMIT}"),
    "debug.sethook() then a loop": (
        "pcall(function() debug.sethook() end)\nwhile true do end",
        f"line 2: {TIME_LIMIT}",
    ),
    "a pcall that swallows the stop": (
        "local x = 0\nwhile true do\n  pcall(function() while true do x = x + 1 end end)\nend",
        TIME_LIMIT,
    ),
    "a loop in a coroutine": (
        "local co = coroutine.wrap(function()\n  while true do end\nend)\nco()",
        f"line 2: {TIME_LIMIT}",
    ),
    "a loop resuming a coroutine": (
        "local co = coroutine.create(function() while true do end end)\nwhile true do coroutine.resume(co) end",
        TIME_LIMIT,
    ),
    "string.rep in a loop": ("local n = 0\nwhile true do local s = string.rep('x', 1e6) n = n + 1 end", TIME_LIMIT),
    "a table of strings growing forever": (
        "local t = {}\nwhile true do t[#t + 1] = string.rep('x', 1e7) .. #t end",  # 10 MB strings: the
        f"line 2: {MEMORY_LIMIT}",  # memory limit comes first, however slow a loaded machine is
    ),
    "one huge string": ("local s = string.rep('x', 1e9)\nreturn 1", f"line 1: {MEMORY_LIMIT}"),
    "a loop of redis.call": ("while true do\n  redis.call('GET', KEYS[2])\nend", TIME_LIMIT),
    "a loop in loadstring": ("return loadstring('while true do end')()", TIME_LIMIT),
    "a loop in a chunk named as the runner": ("return loadstring('while true do end', '<python>')()", TIME_LIMIT),
    "a C call longer than any hook (killed from outside)": (
        "local s = string.rep('a', 30000)\nreturn string.find(s, '.-.-.-.-b')",
        f"line 2: {TIME_LIMIT}",
    ),
    "a wrong-typed registry": (
        "redis.call('HSET', KEYS[1], 'x', 'y')\nreturn 1",
        "emq:{exercise-register}:repeat is a hash",
    ),
    "an error inside redis.call": (
        "return redis.call('ZADD', KEYS[1], 'soon', ARGV[1])",
        "the script failed: line 1: value is not a valid float",
    ),
    "a huge reply": (
        "return string.rep('x', 24 * 2^20)",
        "the script's reply is 24 MB, more than the sandbox's 8 MB limit",
    ),
    "a reply of the wrong type": ("return {1, 2}", "the script returned nil or text; register returns 1"),
    "keys outside KEYS": ("redis.call('SET', 'elsewhere', 1)\nreturn 1", "left no registry row for report"),
    "python.eval": ("return python.eval('1')", "line 1: 'python' is not defined"),
    "io.open": ("local f = io.open('written-by-lua', 'w')\nreturn 1", "line 1: 'io' is not defined"),
    "os.execute": (
        "os.execute('touch written-by-lua')\nreturn 1",
        "line 1: attempt to call field 'execute' (a nil value)",
    ),
    "require": ("local m = require('os')\nreturn 1", "line 1: 'require' is not defined"),
    "a binary chunk": (
        "local f = loadstring(string.dump(function() return 1 end))\nreturn f()",
        "attempt to call local 'f'",
    ),
}


def server_keys(lab: emq_lab.Lab) -> dict[str, Any]:
    """Every key of the lab's server but progress records, with its serialized value."""
    client = lab.client
    return {key: client.dump(key) for key in client.scan_iter(count=1000) if "progress" not in key}


def workers_cpu_s() -> float:
    """CPU seconds the sandbox's workers have run: the live ones (from /proc) and those that ended
    (this process's children, once waited for)."""
    times = os.times()
    live = [box._process.pid for box in list(sandbox._boxes.values()) if box._process is not None and box.alive]
    return times.children_user + times.children_system + sum(sandbox._cpu_s(pid) or 0.0 for pid in live)


class Cost:
    """The wall-clock seconds a block took and the CPU seconds the sandbox's workers ran in it."""

    wall = cpu = 0.0

    def __enter__(self) -> Cost:
        self._start = time.monotonic(), workers_cpu_s()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.monotonic() - self._start[0]
        self.cpu = workers_cpu_s() - self._start[1]

    def within(self, cpu_s: float = CPU_S) -> bool:
        return self.cpu < cpu_s and self.wall < WALL_S

    def __str__(self) -> str:
        return f"{self.cpu:.1f} CPU s of the sandbox, {self.wall:.1f} s on the wall clock"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory, as a notebook's folder."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


class Pinger:
    """A second client that PINGs the lab's server every 50 ms while a check runs; the slowest answer."""

    def __init__(self, url: str) -> None:
        self.lab = emq_lab.connect(url)
        self.slowest = 0.0
        self.count = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            start = time.monotonic()
            self.lab.client.ping()
            self.slowest = max(self.slowest, time.monotonic() - start)
            self.count += 1
            if self._done.wait(0.05):
                return

    def __enter__(self) -> Pinger:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()
        self.lab.close()


@pytest.mark.parametrize("form", list(HOSTILE))
def test_a_hostile_answer_is_a_failed_check_within_the_limit(
    lab: emq_lab.Lab, backend_url: str, workdir: Path, form: str
) -> None:
    source, expected = HOSTILE[form]
    before = server_keys(lab)
    with Pinger(backend_url) as pinger, Cost() as cost:
        check = exercises.register(source, lab)
    assert not check.passed
    assert cost.within(), f"{form}: {cost}"
    assert expected in str(check), str(check)
    # The server answered all along: a script holding it would hold one PING for most of the check. Measured
    # against the check's own time (0.5 s at least), as a busy machine slows both alike.
    bound = max(0.5, cost.wall / 3)
    assert pinger.count and pinger.slowest < bound, f"a PING took {pinger.slowest:.2f} s of the check's {cost}"
    assert list(workdir.iterdir()) == []  # no file, no .hypothesis
    assert server_keys(lab) == before
    assert exercises.register(REGISTER, lab).passed


def test_a_hostile_advance_is_a_failed_check_too(lab: emq_lab.Lab, workdir: Path) -> None:
    with Cost() as cost:
        check = exercises.advance("local n = 0\nwhile true do n = n + 1 end", lab)
    assert cost.within(), str(cost)
    assert not check.passed and f"line 2: {TIME_LIMIT}" in str(check), str(check)
    assert list(workdir.iterdir()) == []
    assert exercises.advance(ADVANCE, lab).passed


FRESH_KERNEL = """
from emq_lab import exercises
assert exercises.register(exercises.solution("register")).passed
assert not exercises.register(exercises.buggy("register")).passed
assert exercises.next_run(exercises.solution("next_run")).passed
assert not exercises.next_run(exercises.buggy("next_run")).passed
"""


def test_checks_in_a_fresh_kernel_leave_no_file(lab: emq_lab.Lab, tmp_path: Path) -> None:
    # A fresh process: hypothesis writes its cache (.hypothesis/constants) on its first search only.
    run = subprocess.run(
        [sys.executable, "-c", FRESH_KERNEL], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_a_check_works_when_the_lab_refuses_scripts(valkey_server: ValkeyServer) -> None:
    admin = redis.Redis.from_url(valkey_server.url, decode_responses=True)
    admin.acl_setuser(
        "nolua", enabled=True, passwords=["+pw"], keys=["*"], channels=["*"], commands=["+@all", "-@scripting"]
    )
    try:
        url = valkey_server.url.replace("redis://", "redis://nolua:pw@", 1)
        lab = emq_lab.connect(url)
        with pytest.raises(redis.exceptions.NoPermissionError):
            lab.client.eval("return 1", 0)
        assert exercises.register(REGISTER, lab).passed
        assert exercises.advance(ADVANCE, lab).passed
        lab.close()
    finally:
        admin.acl_deluser("nolua")
        admin.close()


def test_an_interrupt_kills_the_worker_at_once_and_the_next_check_runs() -> None:
    main = threading.main_thread().ident
    assert main is not None
    worker = sandbox.for_checks()  # the worker the check below runs on
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # a kernel's interrupt, whatever ran before
    timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            exercises.register("local s = string.rep('a', 30000)\nreturn string.find(s, '.-.-.-.-b')")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert not worker.alive and worker.spent  # not waited for: killed at once
    assert exercises.register(REGISTER).passed


# -- the sandbox's Lua on its own ------------------------------------------------------------------


@pytest.fixture
def box() -> Iterator[Any]:
    yield sandbox.for_checks().client


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("return type(python)", "'python' is not defined"),
        ("return type(io)", "'io' is not defined"),
        ("return type(debug)", "'debug' is not defined"),
        ("return type(package)", "'package' is not defined"),
        ("return type(require)", "'require' is not defined"),
        ("return type(loadfile)", "'loadfile' is not defined"),
        ("return type(dofile)", "'dofile' is not defined"),
        ("return type(getfenv)", "'getfenv' is not defined"),
        ("return type(newproxy)", "'newproxy' is not defined"),
        ("return type(os.execute)", "nil"),
        ("return type(os.clock)", "function"),
        ("return tostring(loadstring(string.dump(function() return 1 end)))", "nil"),
        (
            "local n, f = 0, string.dump(function() return 1 end)\n"
            "return tostring(load(function() n = n + 1 if n == 1 then return f end end))",
            "nil",
        ),
        (
            "rawset(string, 'byte', function() return 0 end)\n"
            "return tostring(loadstring(string.dump(function() return 1 end)))",
            "line 1: assigns a global variable or changes a library table",
        ),
    ],
)
def test_the_sandbox_offers_no_way_out(box: Any, script: str, expected: str) -> None:
    try:
        reply = box.eval(script, 0)
    except redis.ResponseError as error:
        reply = explain_error(error)
    assert expected in str(reply if reply is not None else "none"), reply


SAME_AS_VALKEY = [
    "return x",
    "x = 1",
    "return redis.call('ZADD', KEYS[1], 'x', 'm')",
    "return redis.call('GET')",
    "return redis.call('NOPE', KEYS[1])",
    "return redis.call('SET', KEYS[1], nil)",
    "return (",
    "local a = 1\nif a then\n",
    "return {1, 'two', {3}}",
    "return tostring(loadstring(string.dump(function() return 1 end)))",
    "return type(debug)",
    "return os.clock() >= 0",
    "local ok, e = pcall(function() return undefined_thing end) return ok and 1 or 0",
    "error('boom')",
    "return redis.pcall('INCR', KEYS[1] .. 'h')",
    # the outside check's findings: cjson.null, errors without a line, a stack overflow, replies read raw
    "return cjson.null",
    "return cjson.null.foo",
    "return {1, cjson.null, 3}",
    "return {type(cjson.null), tostring(cjson.null == cjson.decode('null'))}",
    "local ok, e = pcall(cjson.decode, '{')\nreturn {tostring(ok), type(e)}",
    "error('boom', 0)",
    "local function f() return f() + 1 end\nreturn f()",
    "return setmetatable({}, {__index = function(_, k) if k == 'err' then return 'boom' end end})",
    "return {1 / 0, -1 / 0}",
]


@pytest.mark.parametrize("script", SAME_AS_VALKEY)
def test_the_sandbox_answers_as_valkey_does(box: Any, valkey_server: ValkeyServer, script: str) -> None:
    valkey = redis.Redis.from_url(valkey_server.url, decode_responses=True)
    try:
        valkey.delete("k", "kh")
        valkey.hset("kh", "f", "v")
        box.hset("kh", "f", "v")
        answers = []
        for client in (box, valkey):
            try:
                answers.append(("reply", client.eval(script, 1, "k")))
            except redis.ResponseError as error:
                answers.append(("error", explain_error(error)))
        assert answers[0] == answers[1]
    finally:
        valkey.delete("k", "kh")
        valkey.close()


def test_with_scripts_runs_the_learners_script_in_the_sandbox(lab: emq_lab.Lab, queue: str) -> None:
    before = server_keys(lab)
    learner = with_scripts(
        lab, register="redis.call('SET', 'stray', 1)\nreturn redis.call('ZADD', KEYS[1], 5, ARGV[1])"
    )
    assert learner.repeat(queue).register("a", 1000, "t") is emq_lab.Outcome.REGISTERED
    assert learner.repeat(queue).count() == 1  # the learner's lab sees what its script wrote
    assert server_keys(lab) == before  # the lab's server saw none of it
    assert with_scripts(learner, advance="return 2").client is learner.client  # a sandbox lab stays in it
    looping = with_scripts(lab, register="while true do end")
    with Cost() as cost, pytest.raises(redis.ResponseError) as stopped:
        looping.repeat(queue).register("a", 1000, "t")
    assert cost.within(), str(cost)
    assert explain_error(stopped.value) == f"line 1: {TIME_LIMIT}"
    learner.reset(queue)
    learner.client.delete("stray")


def test_a_spent_worker_is_replaced_for_the_next_check() -> None:
    first = sandbox.for_checks()
    check = exercises.register("local s = string.rep('a', 30000)\nreturn string.find(s, '.-.-.-.-b')")
    assert f"line 2: {TIME_LIMIT}" in str(check)
    assert first.spent is not None
    with pytest.raises(sandbox.Stopped):
        first.client.ping()
    assert sandbox.for_checks() is not first
    check = exercises.register(REGISTER)
    assert check.passed, str(check)


# -- the outside check's findings (A1-A7) ----------------------------------------------------------

NO_PYTHON = [
    ("return tostring(cjson.encode.args)", "attempt to index field 'encode' (a function value)"),
    ("return tostring(redis.setresp.__closure__)", "attempt to index field 'setresp' (a function value)"),
    ("return tostring(redis.pcall.__globals__)", "attempt to index field 'pcall' (a function value)"),
    ("return tostring(redis.log.func)", "attempt to index field 'log' (a function value)"),
    ("return tostring(cjson.null.__class__)", "attempt to index field 'null' (a userdata value)"),
    ("local ok, e = pcall(cjson.decode, '{')\nreturn type(e)", "string"),
    ("local ok, e = pcall(redis.call, 'NOPE')\nreturn type(e)", "string"),
    ("return type(redis.pcall('NOPE').err)", "string"),
]


@pytest.mark.parametrize(("script", "expected"), NO_PYTHON)
def test_no_python_object_is_reachable_from_lua(box: Any, script: str, expected: str) -> None:
    try:
        reply = box.eval(script, 0)
    except redis.ResponseError as error:
        reply = explain_error(error)
    assert expected in str(reply), reply


def test_the_sandboxs_functions_are_lua_functions(box: Any) -> None:
    names = ["redis.call", "redis.pcall", "redis.log", "redis.setresp", "cjson.encode", "cjson.decode"]
    kinds = box.eval("return {" + ", ".join(f"type({name})" for name in names) + ", type(cjson.null)}", 0)
    assert kinds == ["function"] * len(names) + ["userdata"]


RCE = """local G = cjson.encode.args[0].globals()
G.os.execute('touch {path}')
return 1"""


def test_an_answer_that_reaches_for_python_writes_nothing(lab: emq_lab.Lab, workdir: Path) -> None:
    written = workdir.parent / f"{workdir.name}-written"
    check = exercises.register(RCE.replace("{path}", str(written)), lab)
    assert not check.passed
    assert "line 1: attempt to index field 'encode' (a function value)" in str(check), str(check)
    assert not written.exists()
    assert exercises.register(REGISTER, lab).passed


PLANTS = {
    "redis.call": "redis.call = function() return 0 end\nreturn 1",
    "redis.call through _G": "_G.redis.call = function() return 0 end\nreturn 1",
    "the string metatable": (
        "getmetatable('').__index = setmetatable({}, {__index = function() return function() end end})\nreturn 1"
    ),
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_a_wrong_answer_that_plants_lua_does_not_pass(lab: emq_lab.Lab, plant: str) -> None:
    assert not exercises.register(PLANTS[plant], lab).passed
    assert not exercises.advance(PLANTS[plant], lab).passed
    assert exercises.register(REGISTER, lab).passed
    assert exercises.advance(ADVANCE, lab).passed


def test_what_a_script_plants_ends_with_it(box: Any) -> None:
    for plant in ("redis.call = function() return 0 end", "getmetatable('').__index = {}"):
        with pytest.raises(redis.ResponseError, match="Attempt to modify a readonly table"):  # as on Valkey 9
            box.eval(plant + "\nreturn 1", 0)
    assert box.eval("return redis.call('SET', KEYS[1], 'v')", 1, "k") == "OK"
    assert box.eval("return ('abc'):upper()", 0) == "ABC"
    assert box.eval("return tostring(getmetatable('').__index == string)", 0) == "true"


def test_a_check_has_one_deadline(lab: emq_lab.Lab, workdir: Path) -> None:
    slow = "local t0 = os.clock()\nwhile os.clock() - t0 < 0.2 do end\n" + REGISTER  # correct, 0.2 s a call
    with Cost() as cost:
        check = exercises.register(slow, lab)
    assert not check.passed
    assert cost.within(), str(cost)
    assert CHECK_LIMIT in str(check), str(check)  # in whichever script ran at that moment
    assert exercises.register(REGISTER, lab).passed


UNSTEADY = {  # a register.lua that fails on its 40th call only (in the random search), and one that loops there
    "a wrong answer once": ("local n = redis.call('INCR', 'calls')\nif n == 40 then return 2 end\n" + REGISTER, None),
    "a loop once": ("local n = redis.call('INCR', 'calls')\nif n == 40 then while true do end end\n" + REGISTER, None),
}


@pytest.mark.parametrize("form", list(UNSTEADY))
def test_an_answer_that_changes_from_run_to_run_is_a_failed_check(lab: emq_lab.Lab, form: str) -> None:
    check = exercises.register(UNSTEADY[form][0], lab)
    assert not check.passed
    # Its counter is a key of its own, which the check names first (register writes no other key);
    # without it, the change from run to run or the loop is what the check would name.
    named = (
        "wrote the key 'calls'",
        "the script behaves differently from run to run" if form == "a wrong answer once" else f"line 2: {TIME_LIMIT}",
    )
    assert any(reason in str(check) for reason in named), str(check)
    assert exercises.register(REGISTER, lab).passed


CRASHES = {  # each one ended the worker with a Python traceback before
    "cjson.decode of text that is not JSON": (
        "local cfg = cjson.decode('every_ms=' .. ARGV[2])\n" + REGISTER,
        "line 1: Expected value but found invalid token at character 1",
    ),
    "cjson.decode nested too deep": (
        "return cjson.decode(string.rep('[', 1e5) .. string.rep(']', 1e5))",
        "line 1: Found too many nested data structures",
    ),
    "a table that holds itself": ("local t = {}\nt[1] = t\nreturn t", "line 3: the reply nests tables more than 100"),
    "cjson.null": ("return cjson.null", "the script returned nil or text; register returns 1"),
    "a field of cjson.null": ("return cjson.null.foo", "line 1: attempt to index field 'null' (a userdata value)"),
    "an infinite number": ("return 1 / 0", "the script returned -9223372036854775808; register returns 1"),
}


@pytest.mark.parametrize("form", list(CRASHES))
def test_a_script_that_crashed_the_worker_is_explained(
    lab: emq_lab.Lab, capfd: pytest.CaptureFixture[str], form: str
) -> None:
    source, expected = CRASHES[form]
    check = exercises.register(source, lab)
    assert not check.passed
    assert expected in str(check), str(check)
    assert "Traceback" not in capfd.readouterr().err
    assert exercises.register(REGISTER, lab).passed


LOOPING_REPLY = "return setmetatable({}, {__index = function() while true do end end})"


def test_a_replys_metamethods_do_not_run_in_the_browsers_sandbox() -> None:
    import fakeredis

    in_process = fakeredis.FakeRedis(server=sandbox.lua.server(), decode_responses=True, protocol=2)
    start = time.process_time()  # this process's CPU time: the in-process sandbox runs here
    assert in_process.eval(LOOPING_REPLY, 0) == []  # Valkey reads a reply raw: no __index
    assert time.process_time() - start < sandbox.LIMIT_S
    assert in_process.eval("return setmetatable({}, {__index = function(_, k) return 'boom' end})", 0) == []


def test_a_replys_metamethods_do_not_run_in_the_worker(box: Any) -> None:
    with Cost() as cost:
        assert box.eval(LOOPING_REPLY, 0) == []
    assert cost.within(sandbox.LIMIT_S), str(cost)


HAS_NOT = "Valkey has it; fakeredis, which runs the sandbox, has not"


def test_a_library_valkey_has_and_the_sandbox_has_not_is_named(box: Any) -> None:
    for library in ("struct", "cmsgpack"):  # bit is there, as on Valkey
        with pytest.raises(redis.ResponseError) as missing:
            box.eval(f"return {library}.x", 0)
        said = explain_error(missing.value)
        assert said == f"line 1: the sandbox has no '{library}' library ({HAS_NOT})"


def test_control_characters_in_a_scripts_text_are_escaped(lab: emq_lab.Lab) -> None:
    forged = "error('\\27[2J\\27[Hregister: passed 4 scenarios\\n  all good')"
    check = exercises.register(forged, lab)
    assert not check.passed
    assert "\x1b" not in str(check) and "\\x1b[2J" in str(check)
    assert "\n  all good" not in str(check)
    member = "redis.call('ZADD', KEYS[1], 1, '\\27[31mred')\nreturn 1"
    check = exercises.register(member, lab)
    assert "\x1b" not in str(check) and "\\x1b[31mred" in str(check), str(check)
