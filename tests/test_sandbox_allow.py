"""The sandbox runs only the commands on its allowlist (emq_lab/sandbox/allow.py): a script's
RESTORE of a pickle that would run Python is refused by name, from a check and from
``with_scripts``, and writes nothing and reads nothing of the kernel; every command fakeredis
emulates is either on the list or refused; the list is the README's; and the fakeredis internals
the allowlist rests on are the ones it was audited against."""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import os
import pickle
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from emq_lab import sandbox
from emq_lab.sandbox import allow

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cret-of-the-kernel"


class _Eval:
    """A pickle whose loading evaluates ``expression`` (what fakeredis's RESTORE would unpickle)."""

    def __init__(self, expression: str) -> None:
        self.expression = expression

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (eval, (self.expression,))


def dump_payload(written: Path) -> bytes:
    """A DUMP payload for fakeredis's RESTORE: a pickle that writes ``written`` and evaluates to the
    environment of the process's parent (the kernel, seen from the sandbox's worker)."""
    expression = (
        f"__import__('pathlib').Path({str(written)!r}).write_text('pwned') and "
        "open('/proc/%d/environ' % __import__('os').getppid(), 'rb').read()"
    )
    body = pickle.dumps(_Eval(expression), protocol=2)
    return hashlib.sha1(body).digest() + body


def lua_literal(data: bytes) -> str:
    return '"' + "".join(f"\\{byte}" for byte in data) + '"'


def attack(written: Path) -> str:
    """A register.lua of Lua text alone that restores the payload and hands back what it read."""
    return (
        f"redis.call('RESTORE', KEYS[1] .. ':loot', 0, {lua_literal(dump_payload(written))})\n"
        "return redis.call('GET', KEYS[1] .. ':loot')"
    )


def test_the_payload_runs_python_in_fakeredis_without_the_allowlist(tmp_path: Path) -> None:
    # The control: the same payload, restored by a plain fakeredis, runs the Python it carries.
    import fakeredis

    written = tmp_path / "written"
    plain = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    plain.restore("loot", 0, dump_payload(written))
    assert written.read_text() == "pwned"
    assert plain.get("loot") == Path(f"/proc/{os.getppid()}/environ").read_bytes()


KERNEL = """
import sys
import emq_lab
from emq_lab import exercises

answer = open(sys.argv[1]).read()
lab = emq_lab.connect("embedded")
print("check:", exercises.register(answer, lab))
learner = exercises.with_scripts(lab, register=answer)
try:
    print("with_scripts:", learner.repeat("q").register("a", 1000, "t"))
except Exception as error:
    print("with_scripts:", type(error).__name__, error)
box = learner.client
for command in (("RESTORE", "loot", 0, open(sys.argv[2], "rb").read()), ("GET", "loot")):
    try:
        print("client:", box.execute_command(*command))
    except Exception as error:
        print("client:", type(error).__name__, error)
"""


def test_a_restore_of_a_pickle_is_refused_by_name_and_reaches_nothing(tmp_path: Path) -> None:
    written = tmp_path / "written"
    (tmp_path / "answer.lua").write_text(attack(written))
    (tmp_path / "payload").write_bytes(dump_payload(written))
    environment = {**os.environ, "EMQ_LAB_URL": f"redis://learner:{SECRET}@127.0.0.1:1/"}
    run = subprocess.run(
        [sys.executable, "-c", KERNEL, str(tmp_path / "answer.lua"), str(tmp_path / "payload")],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    said = run.stdout
    refused = "'RESTORE' is not available in the course's sandbox"
    check, rest = said.split("\nwith_scripts: ", 1)
    lines = rest.splitlines()
    assert check.startswith("check: register: FAILED") and f"line 1: {refused}" in check, said
    assert [line.split(":", 1)[0] for line in lines[1:]] == ["client", "client"], said
    assert refused in lines[0] and refused in lines[1], said
    assert lines[2] == "client: None", said  # nothing was restored
    assert SECRET not in said + run.stderr and "EMQ_LAB_URL" not in said + run.stderr
    assert not written.exists()


# -- the list itself -------------------------------------------------------------------------------

MODULES = ["JSON.SET", "BF.ADD", "CF.ADD", "CMS.INCRBY", "TOPK.ADD", "TDIGEST.ADD", "TS.ADD", "FT.SEARCH", "VADD"]
REFUSED = ["RESTORE", "DUMP", "MIGRATE", "DEBUG", "OBJECT", "FUNCTION", "FCALL", "CONFIG", "FLUSHALL", "SELECT"]
REFUSED += ["BLPOP", "SORT", "SWAPDB", "SUBSCRIBE", "PUBLISH", "ACL", "CLIENT", "SAVE", "XADD", "GEOADD"]


@pytest.fixture
def box() -> Iterator[Any]:
    yield sandbox.for_checks().client


def refusal_of(box: Any, words: list[str], *, in_script: bool) -> str:
    try:
        if in_script:
            quoted = ", ".join(f"'{word}'" for word in words)
            return str(box.eval(f"return redis.call({quoted})", 0))
        return str(box.execute_command(*words))
    except redis.ResponseError as error:
        return str(error)


@pytest.mark.parametrize("name", MODULES + REFUSED)
def test_a_command_off_the_list_is_refused_by_name(box: Any, name: str) -> None:
    for in_script in (True, False):
        said = refusal_of(box, [name, "k", "1", "2"], in_script=in_script)
        assert f"'{name.split()[0]}" in said and "is not available in the course's sandbox" in said, said


@pytest.mark.parametrize("name", ["SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER"])
def test_a_random_pick_of_millions_is_refused_at_once(box: Any, name: str) -> None:
    # With the pick allowed, SRANDMEMBER s -5000000 held a check for about 30 s building its reply.
    add = {"SRANDMEMBER": "SADD s a", "HRANDFIELD": "HSET s a 1", "ZRANDMEMBER": "ZADD s 1 a"}[name]
    quoted = "', '".join(add.split())
    script = f"redis.call('{quoted}')\nreturn redis.call('{name}', 's', -5000000)"
    started = time.process_time()
    try:
        said = str(box.eval(script, 0))
    except redis.ResponseError as error:
        said = str(error)
    assert f"'{name}' is not available in the course's sandbox" in said, said
    assert time.process_time() - started < 1


def test_every_command_fakeredis_emulates_is_listed_or_refused(box: Any) -> None:
    from fakeredis._commands import SUPPORTED_COMMANDS

    listed = allow.SCRIPT_COMMANDS | allow.CLIENT_COMMANDS
    off = sorted(set(SUPPORTED_COMMANDS) - listed)
    assert len(off) > 150  # the server's administration, modules, streams, blocking commands, ...
    for name in off:
        said = refusal_of(box, [*name.split(), "k", "1"], in_script=False)
        assert "is not available in the course's sandbox" in said, f"{name}: {said}"
    for name in sorted(set(SUPPORTED_COMMANDS) - allow.SCRIPT_COMMANDS):
        said = refusal_of(box, [*name.split(), "k", "1"], in_script=True)
        if name in allow.CLIENT_COMMANDS and "is not available" not in said:  # Valkey's refusal of EVAL in a script
            assert "not allowed from script" in said or "Wrong number of args" in said, f"{name}: {said}"
        else:
            assert "is not available in the course's sandbox" in said, f"{name}: {said}"


def test_the_in_process_sandbox_of_the_browser_refuses_too() -> None:
    # The browser's sandbox (a fakeredis in the kernel's process), built here as Pyodide builds it.
    in_process = sandbox.in_process()
    assert in_process.eval("return redis.call('SET', KEYS[1], 'v')", 1, "k") == "OK"
    for words in (["RESTORE", "k2", "0", "x"], ["JSON.SET", "k", "$", "1"], ["DEBUG", "SLEEP", "0"]):
        for in_script in (True, False):
            said = refusal_of(in_process, words, in_script=in_script)
            assert f"'{words[0]}' is not available in the course's sandbox" in said, said


def test_every_listed_command_is_one_fakeredis_runs() -> None:
    from fakeredis._commands import SUPPORTED_COMMANDS

    assert sorted((allow.SCRIPT_COMMANDS | allow.CLIENT_COMMANDS) - set(SUPPORTED_COMMANDS)) == []


def test_a_listed_command_runs_from_a_script_and_a_client(box: Any) -> None:
    assert box.eval("redis.call('ZADD', KEYS[1], 5, 'a') return redis.call('ZSCORE', KEYS[1], 'a')", 1, "z") == "5"
    assert box.eval("return redis.call('PEXPIRE', KEYS[1], 1000)", 1, "z") == 1
    assert 0 < box.pttl("z") <= 1000
    assert box.keys("*") == ["z"]
    with pytest.raises(redis.ResponseError, match="'KEYS' is not available"):  # a client's, not a script's
        box.eval("return redis.call('KEYS', '*')", 0)


def test_no_listed_command_unpickles_or_evaluates() -> None:
    # What each listed command runs, read from fakeredis's source: no pickle, eval, exec or import.
    from fakeredis._commands import SUPPORTED_COMMANDS
    from fakeredis._socket import FakeSocket

    for name in sorted(allow.SCRIPT_COMMANDS | allow.CLIENT_COMMANDS):
        method = getattr(FakeSocket, SUPPORTED_COMMANDS[name].func_name)
        source = inspect.getsource(method)
        for word in ("pickle", "marshal", "eval(", "exec(", "import_module", "__import__", "literal_eval"):
            if word in ("eval(", "exec(") and name in ("eval", "exec", "evalsha", "multi"):
                continue  # EVAL hands the script to Lua (the runner); EXEC runs the queued commands
            assert word not in source, f"{name} ({method.__qualname__}) uses {word}"


def readme_table() -> str:
    """The allowlist as the README prints it."""
    rows = [
        f"| {family} | {', '.join(f'`{n.upper()}`' for n in names)} |"
        for family, names in allow.SCRIPT_FAMILIES.items()
    ]
    client = ", ".join(f"`{name.upper()}`" for name in sorted(allow.CLIENT_COMMANDS))
    return "\n".join(
        ["| from a script | commands |", "|---|---|", *rows, "", f"From the sandbox's clients only: {client}."]
    )


def test_the_readme_publishes_the_allowlist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_table() in readme, "README's allowlist differs from emq_lab/sandbox/allow.py:\n" + readme_table()


# -- the fakeredis internals the allowlist rests on ------------------------------------------------


def test_fakeredis_is_the_minor_release_the_sandbox_was_audited_against() -> None:
    version = importlib.metadata.version("fakeredis")
    assert version.startswith(allow.AUDITED + "."), f"fakeredis {version}: audit the sandbox again (allow.py)"
    pins = re.findall(r'"fakeredis(?:\[lua\])?([^;"]*);', (ROOT / "pyproject.toml").read_text())
    major, minor = allow.AUDITED.split(".")
    assert pins == [f">={allow.AUDITED},<{major}.{int(minor) + 1}"] * 2, pins


def test_every_command_reaches_fakeredis_through_name_to_func() -> None:
    # The one dispatch point: a client's command, a script's redis.call and a function's.
    import fakeredis
    from fakeredis._socket import FakeSocket

    package = Path(fakeredis.__file__).parent
    callers = sorted(
        f"{path.relative_to(package)}:{line.strip()}"
        for path in package.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if "_name_to_func(" in line and "def _name_to_func" not in line
    )
    assert callers == [
        "_socket/_base.py:func, sig = self._name_to_func(cmd)",
        "commands_mixins/scripting_mixin.py:func, sig = self._name_to_func(cmd)",
        "commands_mixins/scripting_mixin.py:func, sig = self._name_to_func(cmd)",
    ], callers
    assert list(inspect.signature(FakeSocket._name_to_func).parameters) == ["self", "cmd_name"]
    eval_source = inspect.getsource(FakeSocket.eval)
    assert "self._script_resp = 2" in eval_source and "self._script_resp = None" in eval_source
    assert "s._lua_current_socket[0] = self" in eval_source  # redis.call runs on the socket that runs EVAL
    connect = inspect.getsource(fakeredis._clients._sync.FakeBaseConnection._connect)
    assert connect.count("return FakeSocket(") == 1  # allow.py swaps the class of the socket it makes


def test_the_lua_internals_the_sandbox_rests_on_are_there() -> None:
    # lua.py wraps fakeredis's Lua module and replaces the server's runtime after its first script.
    import fakeredis
    from fakeredis.commands_mixins import scripting_mixin

    assert hasattr(scripting_mixin, "LUA_MODULE") and hasattr(scripting_mixin.LUA_MODULE, "LuaRuntime")
    runtime = inspect.getsource(scripting_mixin.ScriptingCommandsMixin._get_server_runtime)
    assert 'if not hasattr(s, "_lua_runtime"):' in runtime and "LUA_MODULE.LuaRuntime(" in runtime
    server = fakeredis.FakeServer()
    client = fakeredis.FakeRedis(server=server)
    client.eval("return 1", 0)
    assert hasattr(server, "_lua_runtime") and hasattr(server, "_lua_current_socket")
    assert 'lua_runtime.execute("collectgarbage()")' in inspect.getsource(scripting_mixin.ScriptingCommandsMixin.eval)
