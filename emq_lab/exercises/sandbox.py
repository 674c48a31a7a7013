"""Running a learner's Lua safely: on a queue of its own, stopped when it runs too long, and
with its errors turned into one readable line that is the same on fakeredis and on Valkey.

fakeredis has no script timeout, so on the embedded backend the learner's text gets a one-line
prefix (on the text's first line, so line numbers do not move) that installs a Lua hook: it
keeps the current line and stops the script after a budget of instructions. The prefix also
gives the script Valkey's globals protection (reading an undefined global or assigning a new
one fails at that line) and a ``redis.call`` that names the line of a failed command, as
Valkey does. A real server stops a script itself only after its busy threshold; there a
watchdog on a second connection sends SCRIPT KILL once the limit has passed.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import redis
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

T = TypeVar("T")

#: Seconds a learner's script may run on a real server before the watchdog sends SCRIPT KILL
#: (the server answers it once its own busy threshold, 5 s by default, has passed).
LIMIT_S = 1.0
#: The embedded backend's budget: hook calls (one per line run, one per 1000 instructions).
BUDGET = 1_000_000
TIME_LIMIT = "the script was still running at the time limit (an endless loop?), so the lab stopped it"
_MARK = "emq-lab stop"

_PREFIX = (
    "local redis, emq_line, emq_n = redis, 1, 0; "
    "do local r, c, hook, info = redis, redis.call, debug and debug.sethook, debug and debug.getinfo; "
    "local function fail(m) error('user_script:' .. emq_line .. ': ' .. tostring(m), 0) end; "
    "redis = setmetatable({call = function(...) local ok, res = pcall(c, ...) "
    "if ok then return res end fail(res) end}, {__index = r}); "
    "setmetatable(_G, {__index = function(_, k) "
    'fail("Script attempted to access nonexistent global variable \'" .. tostring(k) .. "\'") end, '
    "__newindex = function() fail('Attempt to modify a readonly table') end}); "
    f"if hook and info then hook(function(event, line) emq_n = emq_n + 1 if emq_n > {BUDGET} then hook() "
    f"fail('{_MARK}') end if event == 'line' and (line > 1 or info(2, 'S').what == 'main') then "
    "emq_line = line end end, 'l', 1000) end end; "
)
_CLEANUP = "if debug and debug.sethook then debug.sethook() end setmetatable(_G, nil) return 0"


def embedded(client: Any) -> bool:
    """True for the in-process fakeredis backend (its client class, or a subclass of it)."""
    return any(kind.__module__.startswith("fakeredis") for kind in type(client).__mro__)


def guarded(client: Any, lua_source: str) -> str:
    """The text to register for ``lua_source`` on ``client``: prefixed on the embedded backend
    (the learner's line 1 stays line 1), unchanged on a real server."""
    return _PREFIX + lua_source if embedded(client) else lua_source


def cleanup(client: Any) -> None:
    """Remove the hook and the globals guard a prefixed script left in the embedded Lua state."""
    if embedded(client):
        client.eval(_CLEANUP, 0)


# -- errors ------------------------------------------------------------------------------------

# fakeredis and Valkey word some command errors differently; the learner reads one wording.
_CANON: tuple[tuple[str, str], ...] = (
    (
        r"^Script attempted to access nonexistent global variable '(.*)'$",
        r"'\1' is not defined (a typo, or a missing local?)",
    ),
    (r"^attempt to \w+ global '(.*)' \(a nil value\)$", r"'\1' is not defined (a typo, or a missing local?)"),
    (r"^Attempt to modify a readonly table$", "assigns a global variable; declare every variable with local"),
    (r"^Script attempted to set global variables: (.*)$", r"assigns the global variable \1; declare it with local"),
    (r"^Wrong number of args calling (Redis )?command from script$", "a redis.call has the wrong number of arguments"),
    (
        r"^(Lua redis lib )?[Cc]ommand arguments must be strings or integers$",
        "a redis.call argument is nil or not a string or number (a missing KEYS or ARGV entry?)",
    ),
    (r"^[Uu]nknown command.*$", "a redis.call names an unknown command"),
    (r"^.*missing 1 required positional argument: 'op'$", "redis.call needs a command name"),
    (r"^Please specify at least one argument for this call$", "redis.call needs a command name"),
    (r"^Script killed by user with SCRIPT KILL.*$", TIME_LIMIT),
    (r"^BUSY .*$", TIME_LIMIT),  # a client that retried found the server still running the script
    (rf"^{_MARK}$", TIME_LIMIT),
)


def _canonical(message: str) -> str:
    message = message.strip().removeprefix("ERR ").strip()
    for pattern, replacement in _CANON:
        if re.match(pattern, message, flags=re.DOTALL):
            return re.sub(pattern, replacement, message, flags=re.DOTALL)
    return message


def explain_error(exc: BaseException) -> str:
    """One line for a script error, the same on fakeredis and Valkey: ``line 3: <what>``, or
    ``syntax error on line 1: <what>``, or the message alone when no line is known."""
    text = str(exc)
    piped = re.search(r"of pipeline caused error: (.*)$", text, flags=re.DOTALL)
    if piped:
        text = piped.group(1)
    text = text.split("\nstack traceback:", 1)[0].strip()
    compiled = re.search(
        r"(?:error loading code|Error compiling script[^:]*): (?:\[string \"[^\"]*\"\]|user_script):(\d+): (.*)$",
        text,
        flags=re.DOTALL,
    )
    if compiled:
        return f"syntax error on line {compiled.group(1)}: {compiled.group(2).strip()}"
    # Valkey 8 names the script's sha before its line; Valkey 9 leaves it out.
    text = re.sub(r" script:(?: [0-9a-f]{40},)? on @user_script:(\d+)\.$", r" @line \1", text)
    at_end = re.search(r" @line (\d+)$", text)
    line = at_end.group(1) if at_end else None
    text = text[: at_end.start()] if at_end else text
    text = re.sub(r"^Error running script \(call to f_[0-9a-f]+\): @user_script:\?: ", "", text)
    inner = re.match(r"^(?:ERR )?(?:\[string \"[^\"]*\"\]|user_script):(\d+): (.*)$", text, flags=re.DOTALL)
    if inner:
        line, text = inner.group(1), inner.group(2)
    message = _canonical(text)
    if line is None or message == TIME_LIMIT:  # where a loop was stopped differs by backend
        return message
    return f"line {line}: {message}"


# -- the time limit on a real server -------------------------------------------------------------


def _node_client(client: Any, key: str) -> Any:
    """A client on the server (on a cluster: the node) that holds ``key``."""
    if isinstance(client, RedisCluster):
        return client.get_redis_connection(client.get_node_from_key(key))
    return client


@contextmanager
def time_limit(client: Any, key: str, *, limit_s: float = LIMIT_S) -> Iterator[list[str]]:
    """Run the block; on a real server, a learner's script still running after ``limit_s`` is
    stopped with SCRIPT KILL sent on a second connection. Yields a list that receives what the
    server answered the kill (empty when none was needed)."""
    answers: list[str] = []
    if embedded(client):
        yield answers
        return
    pool = _node_client(client, key).connection_pool
    done = threading.Event()

    def watchdog() -> None:
        if done.wait(limit_s):
            return
        # the server takes the kill only after its busy threshold (5 s by default): wait for that
        kwargs = {**pool.connection_kwargs, "socket_timeout": 30}
        killer = redis.Redis(connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs))
        try:
            # Kill until the server says no script runs and the block is over: a client that
            # retries re-sends the script, and the next call must find the server free.
            while True:
                try:
                    answers.append(str(killer.script_kill()))
                except ResponseError as exc:
                    if "NOTBUSY" not in str(exc):
                        answers.append(str(exc))
                        if "UNKILLABLE" in str(exc):
                            return
                    elif done.is_set():
                        return
                done.wait(0.2)
        finally:
            killer.close()

    thread = threading.Thread(target=watchdog, name="emq-lab script watchdog", daemon=True)
    thread.start()
    try:
        yield answers
    finally:
        done.set()
        thread.join(timeout=60)  # the kills finish first, so the next call finds the server free
    if any("UNKILLABLE" in answer for answer in answers):
        raise RuntimeError(
            "your script wrote to the server and then kept running; a server refuses SCRIPT KILL after a "
            "write, so it stays busy until it is restarted (SHUTDOWN NOSAVE on a lab server). Look for a loop "
            "that never ends after a redis.call that writes."
        )


def attempt(run: Callable[[], T]) -> tuple[T | None, str | None]:
    """``run()``; a script error comes back as its explanation instead of an exception."""
    try:
        return run(), None
    except ResponseError as exc:
        return None, explain_error(exc)
    except (RedisTimeoutError, RedisConnectionError) as exc:
        # the call gave up waiting before the server's busy threshold let the kill in (the lab's
        # client reports a timeout as BackendUnavailable, caused by redis-py's TimeoutError)
        if isinstance(exc, RedisTimeoutError) or isinstance(exc.__cause__, RedisTimeoutError | socket.timeout):
            return None, TIME_LIMIT
        raise
