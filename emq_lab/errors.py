"""Faults in words a learner can act on: what went wrong, where (the URL, never its password),
and what to do about it.

``translate`` turns what redis-py raises into these messages; the clients that
``emq_lab.backend`` opens run every command and pipeline through it, so a verb, a panel's twin
or a script call raises the same clear exception whatever the backend."""

from __future__ import annotations

import builtins
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from redis import exceptions

EMBEDDED_FIX = "or call emq_lab.connect() with no URL to use the embedded backend"


class BackendUnavailable(exceptions.ConnectionError, builtins.ConnectionError):
    """The server cannot be reached, stopped answering, or (a cluster) has no serving primary.

    Both a redis-py ``ConnectionError`` and Python's own ``ConnectionError``, so either
    ``except`` catches it. ``url`` is the backend's URL without its password, ``reason`` one
    short phrase (``"connection refused"``) and ``fix`` what to try."""

    def __init__(self, url: str, reason: str, fix: str = "") -> None:
        self.url = url
        self.reason = reason
        self.fix = fix
        text = f"backend unavailable at {url}: {reason}"
        super().__init__(f"{text}; {fix}" if fix else text)


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (the user name is kept)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _text(exc: BaseException) -> str:
    return str(exc.args[0]) if exc.args else str(exc)


def cluster_unreachable(exc: BaseException) -> bool:
    """True for the ``RedisClusterException`` redis-py raises when no node of a cluster answers."""
    text = _text(exc)
    return (
        isinstance(exc, exceptions.RedisClusterException)
        # redis-py 5, after every node was down, until it reads the slot map again
        and ("cannot be connected" in text or text.startswith("No targets were found"))
        and "not enabled" not in text  # redis-py 5: a cluster URL to a plain server says so here
    )


def is_transient(exc: BaseException) -> bool:
    """True for a fault that waiting can cure: a server down, restarting, loading, stalled or
    failing over. A refused password is a ConnectionError to redis-py, but not transient."""
    if isinstance(exc, exceptions.AuthenticationError):
        return False
    if isinstance(exc, BackendUnavailable | exceptions.ConnectionError | exceptions.TimeoutError):
        return True
    if isinstance(exc, exceptions.ClusterDownError | exceptions.TryAgainError):
        return True
    return cluster_unreachable(exc) or isinstance(exc, socket.timeout)


def reason(exc: BaseException, *, timeout_s: float | None = None) -> str:
    """One short phrase for a transient fault."""
    if isinstance(exc, BackendUnavailable):
        return exc.reason
    text = _text(exc)
    lowered = text.lower()
    if isinstance(exc, exceptions.BusyLoadingError):
        return "the server is still loading its data"
    if isinstance(exc, exceptions.TimeoutError | socket.timeout):
        within = f" within {timeout_s:g} s" if timeout_s else ""
        return f"no answer{within} (the server is stalled or overloaded)"
    if cluster_unreachable(exc):
        if text.startswith("No targets"):
            return "the cluster client knows no live node yet (it reads the slot map again)"
        return "no node of the cluster answers"
    if isinstance(exc, exceptions.ClusterDownError | exceptions.TryAgainError):
        return "the cluster has no serving primary for this queue's slot (a failover under way?)"
    if "refused" in lowered:
        return "connection refused"
    if "emulating a connection error" in lowered:
        return "the embedded server is switched off"
    if "name or service not known" in lowered or "nodename nor servname" in lowered:
        return "the host name does not resolve"
    if "closed by server" in lowered or "reset by peer" in lowered or "broken pipe" in lowered:
        return "the server closed the connection"
    return text


def _noauth(text: str) -> bool:
    lowered = text.lower()
    return (
        "authentication required" in lowered
        or "noauth" in lowered
        or "must be called with the client already authenticated" in lowered
    )


def _user(url: str) -> str:
    try:
        return urlsplit(url).username or "default"
    except ValueError:
        return "default"


def _keys(command: Sequence[object]) -> list[str]:
    """The keys of one command as redis-py sent it (EVALSHA/EVAL declare theirs; most others
    name one key first)."""
    if not command:
        return []
    name = str(command[0]).upper()
    if name in ("EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "FCALL", "FCALL_RO") and len(command) > 2:
        try:
            count = int(str(command[2]))
        except ValueError:
            return []
        return [str(key) for key in command[3 : 3 + count]]
    return [str(command[1])] if len(command) > 1 else []


def _command(command: Sequence[object]) -> str:
    return str(command[0]).upper() if command else "a command"


def translate(
    exc: BaseException, url: str, command: Sequence[object] = (), *, timeout_s: float | None = None
) -> BaseException:
    """The exception to raise instead of ``exc`` (``exc`` itself when it needs no words).

    ``url`` is the backend's URL (its password is never shown), ``command`` the arguments of
    the command that failed, when known, so an ACL refusal can name the command and its keys."""
    where = redact(url)
    text = _text(exc)
    if isinstance(exc, BackendUnavailable):
        return exc
    if isinstance(exc, exceptions.AuthenticationError) or (isinstance(exc, exceptions.ResponseError) and _noauth(text)):
        if _noauth(text):
            message = (
                f"{where}: the server asks for a password and the URL gives none; put it in the URL: "
                "redis://:PASSWORD@host:port/0 (or redis://USER:PASSWORD@host:port/0 for an ACL user)"
            )
        elif "without any password configured" in text or "no password is set" in text.lower():
            message = f"{where}: the server has no password; drop the password from the URL"
        else:
            message = (
                f"{where}: the server refused user {_user(url)!r} and the password in the URL "
                "(wrong password, unknown user, or the user is disabled); check both"
            )
        return exceptions.AuthenticationError(message)
    if isinstance(exc, exceptions.NoPermissionError) or "ACL failure in script" in text:
        user = _user(url)
        fix = (
            "use the namespace you were given (emq_lab.connect(url, namespace=...)), "
            "or ask whoever runs the server for a user whose ACL allows it"
        )
        if "key" in text.lower():
            keys = _keys(command)
            named = f" {', '.join(keys)}" if keys else ""
            what = f"touch key(s){named} (in {_command(command)})" if command else "touch a key of this call"
            message = f"{where}: the server's ACL does not let user {user!r} {what}; {fix} [{text}]"
        else:
            what = _command(command) if command else "one command of this call"
            message = f"{where}: the server's ACL does not let user {user!r} run {what}; {fix} [{text}]"
        return exceptions.NoPermissionError(message)
    if isinstance(exc, exceptions.MovedError | exceptions.AskError) or (
        isinstance(exc, exceptions.ResponseError) and text.startswith(("MOVED ", "ASK "))  # redis-py 5
    ):
        return ValueError(f"url: {where} is a node of a cluster; {cluster_fix(url)}")
    if is_transient(exc):
        return BackendUnavailable(
            where,
            reason(exc, timeout_s=timeout_s),
            "start the server (or wait for it), check the host and port, " + EMBEDDED_FIX,
        )
    return exc


def cluster_fix(url: str) -> str:
    """``use valkey+cluster://host:port`` for the host and port of ``url``."""
    try:
        parts = urlsplit(url)
        host = f"{parts.hostname or '127.0.0.1'}:{parts.port or 6379}"
    except ValueError:
        host = "host:port"
    return f"use valkey+cluster://{host} (a cluster client follows the queue's keys to their node)"
