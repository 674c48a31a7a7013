"""Faults in words a learner can act on: what went wrong, where (the URL, never its password),
and what to do about it. ``translate`` is pure; :func:`emq_lab.backend.fault` calls it for a
server's reply (and ``backend`` once more while a cluster client is made), so a verb, a panel or a
batch raises the same words on every backend."""

from __future__ import annotations

import builtins
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from redis import exceptions

from .urls import redact


class BackendUnavailable(exceptions.ConnectionError, builtins.ConnectionError):
    """The server cannot be reached, stopped answering, or (a cluster) has no serving primary: both
    redis-py's and Python's ``ConnectionError``. ``url`` has no password, ``reason`` is one short
    phrase (``"connection refused"``) and ``fix`` what to try."""

    def __init__(self, url: str, reason: str, fix: str = "") -> None:
        self.url, self.reason, self.fix = url, reason, fix
        text = f"backend unavailable at {url}: {reason}"
        super().__init__(f"{text}; {fix}" if fix else text)


class LoginRefused(BackendUnavailable, exceptions.AuthenticationError):
    """The server refused the login (AUTH): both a :class:`BackendUnavailable` saying what to do and
    redis-py's ``AuthenticationError``. Not transient: trying again at once meets the same refusal."""


BUSY = "the server is busy running a script"
BUSY_FIX = "a BUSY reply means the command did not run, so trying again is safe; try again in a few seconds"


class BackendBusy(BackendUnavailable):
    """The server answered BUSY: a script ran past its busy threshold, and the server runs nothing
    else until it ends (or is killed). Transient: a panel retries, a call may retry."""

    def __init__(self, url: str) -> None:
        super().__init__(url, f"{BUSY} — retrying", BUSY_FIX)
        self.args = (f"{BUSY} — retrying is safe ({url}): {BUSY_FIX}",)


RESHARDING = "the cluster is moving this queue's keys to another node (a reshard); try again in a moment"


def _text(exc: BaseException) -> str:
    return str(exc.args[0]) if exc.args else str(exc)


def busy(exc: BaseException) -> bool:
    """True for a BUSY reply (a script ran past the server's busy threshold)."""
    return isinstance(exc, BackendBusy) or (
        isinstance(exc, exceptions.ResponseError) and _text(exc).startswith("BUSY ")
    )


def _waiting(exc: BaseException) -> str | None:
    """The phrase for a fault that a wait cures and that redis-py raises as no ConnectionError."""
    text = _text(exc)
    if isinstance(exc, exceptions.BusyLoadingError):
        return "the server is still loading its data"
    if isinstance(exc, exceptions.TryAgainError):
        return RESHARDING
    if isinstance(exc, exceptions.ClusterDownError):
        return "the cluster has no serving primary for this queue's hash slot (a failover under way?)"
    if busy(exc):
        return f"{BUSY} — retrying"
    # redis-py 5 when no node of a cluster answers ("not enabled": a cluster URL to a plain server)
    if isinstance(exc, exceptions.RedisClusterException) and "not enabled" not in text:
        if text.startswith("No targets were found"):  # after every node was down, until it reads the map again
            return "the cluster client knows no live node yet (it reads the slot map again)"
        if "cannot be connected" in text:
            return "no node of the cluster answers"
    if isinstance(exc, exceptions.ClusterError) and "TTL exhausted" in text:  # it gave up following a moving hash slot
        return RESHARDING
    return None


def is_transient(exc: BaseException) -> bool:
    """True for a fault that waiting can cure: a server down, restarting, loading, stalled or
    failing over. A refused password is a ConnectionError to redis-py, but not transient."""
    if isinstance(exc, exceptions.AuthenticationError):
        return False
    return isinstance(exc, exceptions.ConnectionError | exceptions.TimeoutError | socket.timeout) or bool(_waiting(exc))


def reason(exc: BaseException, *, timeout_s: float | None = None) -> str:
    """One short phrase for a transient fault."""
    if isinstance(exc, BackendUnavailable):
        return exc.reason
    lowered = _text(exc).lower()
    if waiting := _waiting(exc):
        return waiting
    if isinstance(exc, exceptions.TimeoutError | socket.timeout):
        within = f" within {timeout_s:g} s" if timeout_s else ""
        return f"no answer{within} (the server is stalled or overloaded)"
    if "refused" in lowered:
        return "connection refused"
    if "emulating a connection error" in lowered:
        return "the embedded server is switched off"
    if "name or service not known" in lowered or "nodename nor servname" in lowered:
        return "the host name does not resolve"
    if "closed by server" in lowered or "reset by peer" in lowered or "broken pipe" in lowered:
        return "the server closed the connection"
    return _text(exc)


def _user(url: str) -> str:
    try:
        return urlsplit(url).username or "default"
    except ValueError:
        return "default"


def _keys(command: Sequence[object]) -> str:
    """The keys of one command as sent, joined by ", " (EVALSHA and kin declare theirs; most others name one first)."""
    if len(command) > 2 and str(command[0]).upper().startswith(("EVAL", "FCALL")):  # EVALSHA, FCALL_RO, ...
        count = str(command[2])
        return ", ".join(str(key) for key in command[3 : 3 + int(count)]) if count.isdigit() else ""
    return str(command[1]) if len(command) > 1 else ""


def _command(command: Sequence[object]) -> str:
    if not command:
        return "a command"
    name = str(command[0]).upper()
    if name in ("SCRIPT", "FUNCTION") and len(command) > 1:  # the subcommand sent apart
        name = f"{name} {str(command[1]).upper()}"
    return name


# Commands that run (or load) Lua: a learner on a class server runs none, only EVALSHA of the instructor's scripts.
_LUA_COMMANDS = frozenset(("EVAL", "EVAL_RO", "SCRIPT LOAD", "FCALL", "FCALL_RO", "FUNCTION LOAD"))


#: What a server says when it wants a password that the URL did not give.
NOAUTH = ("authentication required", "noauth", "must be called with the client already authenticated")
ROOM_FIX = "nothing else was changed; try again in a minute, and if it lasts tell whoever runs the server"


def translate(
    exc: BaseException, url: str, command: Sequence[object] = (), *, timeout_s: float | None = None
) -> BaseException:
    """The exception to raise instead of ``exc`` (``exc`` itself when it needs no words). ``url``
    is the backend's (its password never shown), ``command`` the arguments of the command that
    failed, when known, so an ACL refusal can name the command and its keys."""
    where = redact(url)
    text = _text(exc)
    lowered = text.lower()
    if isinstance(exc, BackendUnavailable):
        return exc
    if busy(exc):
        return BackendBusy(where)
    if "db index is out of range" in lowered:
        return ValueError(
            f"url: {where} names a database this server does not have (a server has 16 by default, "
            "0 to 15, and a cluster only 0); write /0"
        )
    noauth = any(said in lowered for said in NOAUTH)
    if noauth and isinstance(exc, exceptions.AuthenticationError | exceptions.ResponseError):
        return LoginRefused(
            where,
            "the server asks for a password and the URL gives none",
            "put it in the URL: redis://:PASSWORD@host:port/0 (or redis://USER:PASSWORD@host:port/0 for an ACL user)",
        )
    if isinstance(exc, exceptions.AuthenticationError):
        if "without any password configured" in text or "no password is set" in lowered:
            return LoginRefused(where, "the server has no password", "drop the password from the URL")
        refused = f"the server refused user {_user(url)!r} and the password in the URL"
        if _user(url) == "default":
            return LoginRefused(where, f"{refused} (wrong password, or the user is disabled)", "check the password")
        return LoginRefused(
            where,
            f"{refused} (the user is turned off, removed, or the password is wrong)",
            "on a class server the guard turns a learner off for about 30 s after too many connections: close "
            "the notebooks you do not need and try again in a minute; if it is still refused, the instructor "
            "may have removed your user (ask them); otherwise check the user and password in the URL",
        )
    if isinstance(exc, exceptions.NoPermissionError) and _command(command) == "SCRIPT LOAD":
        return exceptions.NoPermissionError(
            f"{where}: the server does not hold this script and user {_user(url)!r} may not load scripts (a "
            "class server runs only emq-lab's own scripts, loaded by the instructor). If emq-lab's own verbs "
            "say this, the server lost its scripts (a restart): ask the instructor to run: python -m "
            "emq_classroom scripts --url <the instructor's URL>. Your own Lua runs in the exercises' sandbox "
            f"[{text}]"
        )
    if isinstance(exc, exceptions.NoPermissionError) and _command(command) in _LUA_COMMANDS:
        return exceptions.NoPermissionError(
            f"{where}: user {_user(url)!r} may not run {_command(command)}: a class server runs only emq-lab's "
            f"own scripts, loaded by the instructor; run your own Lua in the exercises' sandbox [{text}]"
        )
    if isinstance(exc, exceptions.NoPermissionError) or "ACL failure in script" in text:
        if "key" in lowered:
            named = f" {_keys(command)}" if _keys(command) else ""
            what = f"touch key(s){named} (in {_command(command)})" if command else "touch a key of this call"
        else:
            what = "run " + (_command(command) if command else "one command of this call")
        return exceptions.NoPermissionError(
            f"{where}: the server's ACL does not let user {_user(url)!r} {what}; use the namespace you were given"
            f" (emq_lab.connect(url, namespace=...)), or ask whoever runs the server for a user whose ACL allows it"
            f" [{text}]"
        )
    if text.startswith("WRONGTYPE"):
        named = f" ({_keys(command)})" if _keys(command) else ""
        return exceptions.ResponseError(
            f"{where}: a key of this queue{named} holds another type than emq-lab keeps there (did another "
            f"program write it?); see it with TYPE <key>, delete it if it is not yours, or use another queue [{text}]"
        )
    if isinstance(exc, exceptions.MovedError | exceptions.AskError) or (
        isinstance(exc, exceptions.ResponseError) and text.startswith(("MOVED ", "ASK "))  # redis-py 5
    ):
        return ValueError(f"url: {where} is a node of a cluster; {cluster_fix(url)}")
    # Turned away for want of room: out of memory, maxclients reached, or this connection closed.
    if isinstance(exc, exceptions.OutOfMemoryError) or "oom command not allowed" in lowered:
        why = "the server is out of memory (its maxmemory is used up, by keys or by replies clients left unread), "
        return BackendUnavailable(where, why + "so it refuses writes", ROOM_FIX)
    if "max number of clients reached" in lowered:
        why = "too many clients: the server already holds as many connections as its maxclients allows"
        return BackendUnavailable(where, why, ROOM_FIX)
    if isinstance(exc, exceptions.ConnectionError) and "closed by server" in lowered:
        return BackendUnavailable(
            where,
            "the server closed the connection (a class server's guard closes a learner's connections past its "
            "quota, or one holding a huge unread reply; or the server stopped)",
            "try again (with fewer connections, or reading each reply); if the server is down, start it",
        )
    if not is_transient(exc):
        return exc
    fix = "start the server (or wait for it), check the host and port, or call emq_lab.connect() with no URL"
    fix += " to use the embedded backend"
    if _user(url) != "default":  # an ACL user: a class server, which the learner does not run
        fix = (
            "the server may be busy (another call holding it) or stalled; nothing else was changed; "
            "try again in a minute, and if it lasts tell the instructor (whoever runs the server)"
        )
    return BackendUnavailable(where, reason(exc, timeout_s=timeout_s), fix)


def cluster_fix(url: str) -> str:
    """``use valkey+cluster://host:port`` for the host and port of ``url``."""
    try:
        parts = urlsplit(url)
        host = f"{parts.hostname or '127.0.0.1'}:{parts.port or 6379}"
    except ValueError:
        host = "host:port"
    return f"use valkey+cluster://{host} (a cluster client follows the queue's keys to their node)"
