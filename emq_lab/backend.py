"""Clients: the embedded fakeredis server, or a real Valkey/Redis by URL. Every client here has
explicit timeouts (redis-py has none by default: a stalled server would hang a kernel), never
sends a command twice, and raises every fault through :func:`fault`."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.client import Pipeline
from redis.cluster import ClusterPipeline
from redis.retry import Retry

from . import errors, urls
from .urls import redact

if TYPE_CHECKING:
    import fakeredis

ENV_URL = "EMQ_LAB_URL"
EMBEDDED = "embedded"
LOCAL_SCHEMES = ("valkey+local", "redis+local")  # a private valkey-server for this process
TIMEOUT_S = 5.0  # socket timeout: how long a command may wait for its reply
CONNECT_TIMEOUT_S = 2.0  # at most this long to open a connection (and for connect()'s PING)
# A call is never sent twice: one whose reply was lost may have run (an enqueue sent twice is two jobs).
# A connection the server dropped while idle (a restart) is replaced when the pool hands it out.
RETRIES = 0

_server: fakeredis.FakeServer | None = None
_server_lock = threading.Lock()


def embedded_server() -> fakeredis.FakeServer:
    """The one process-wide FakeServer: every embedded client in a kernel sees the same data."""
    global _server
    import fakeredis  # only here: a lab on a URL never imports it

    with _server_lock:
        if _server is None:
            _server = fakeredis.FakeServer()
        return _server


# Every client here decodes replies to str, where redis-py's types say bytes | str: these narrow a reply.
def text(reply: object) -> str:
    """A string reply."""
    if not isinstance(reply, str):
        raise TypeError(f"expected a decoded reply (str), got {reply!r:.60}: open the client with decode_responses")
    return reply


def scored(reply: Iterable[object]) -> list[tuple[str, int]]:
    """ZRANGE ... WITHSCORES: ``(member, score in ms)`` pairs."""
    out = []
    for pair in reply:
        member, score = pair if isinstance(pair, tuple | list) else (pair, None)
        if not isinstance(score, int | float):
            raise TypeError(f"expected (member, score) pairs, got {pair!r:.60}; ask ZRANGE with withscores=True")
        out.append((text(member), int(score)))
    return out


def fields(reply: Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    """HGETALL: a hash's fields and values."""
    return {text(key): text(value) for key, value in reply.items()}


def resolve_url(url: object) -> str:
    """The argument, else ``$EMQ_LAB_URL``, else ``"embedded"``; ValueError for a non-str."""
    if url is not None and not isinstance(url, str):
        raise ValueError(
            f"url: expected a str such as 'redis://127.0.0.1:6379/0' (or None), got {type(url).__name__} {url!r:.60}"
        )
    chosen = url if url is not None else os.environ.get(ENV_URL, "")
    return chosen.strip() or EMBEDDED


# redis-py pins a pipeline's error reply on its command: "Command # 2 (EVALSHA ...) of pipeline caused error: ..."
_PINNED = re.compile(r"Command # (\d+) \(.*?\) of pipeline caused error: ", re.DOTALL)


def fault(
    exc: BaseException, client: object, commands: Sequence[Sequence[object]] = (), *, timeout_s: float | None = None
) -> BaseException:
    """What a learner sees for ``exc``, raised while ``client`` ran ``commands`` (one command's
    arguments, or a pipeline's): :func:`emq_lab.errors.translate`'s exception, caused by ``exc``.
    The one door: a single call, a batch and a cluster's batch all raise through it."""
    command = commands[0] if len(commands) == 1 else ()
    said = str(exc.args[0]) if exc.args else ""
    pinned = _PINNED.match(said)
    if pinned and 0 < int(pinned[1]) <= len(commands):  # back to the command and the server's own words
        command = commands[int(pinned[1]) - 1]
        exc.args = (said[pinned.end() :], *exc.args[1:])
    waited = timeout_s or getattr(client, "emq_timeout_s", None)
    better = errors.translate(exc, getattr(client, "emq_url", ""), command, timeout_s=waited)
    if better is not exc:
        better.__cause__ = exc
    return better


P = TypeVar("P", Pipeline, ClusterPipeline)


def guarded(pipe: P, client: object) -> P:
    """``pipe`` whose ``execute()`` raises through :func:`fault`, knowing each command it queued."""
    queue, execute = pipe.execute_command, pipe.execute
    commands: list[tuple[object, ...]] = []

    def queued(*args: Any, **options: Any) -> Any:
        commands.append(args)
        return queue(*args, **options)

    def guarded_execute(raise_on_error: bool = True) -> list[Any]:
        sent = commands.copy()
        commands.clear()
        try:
            return execute(raise_on_error)
        except Exception as exc:
            raise fault(exc, client, sent)  # noqa: B904 - fault sets the cause

    pipe.execute_command, pipe.execute = queued, guarded_execute  # type: ignore[method-assign]
    return pipe


class Guarded:
    """Mixed into redis-py's clients: every command and pipeline raises through :func:`fault`."""

    emq_url = ""  # what a message names the backend by (its password never shown)
    emq_timeout_s: float | None = None

    def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute_command(*args, **options)  # type: ignore[misc]
        except Exception as exc:
            self.emq_recover(exc)
            raise fault(exc, self, [args])  # noqa: B904 - fault sets the cause

    def emq_recover(self, exc: Exception) -> None:
        """After a failed command, before it is raised: nothing (a cluster client re-reads its map)."""

    def pipeline(self, *args: Any, **options: Any) -> Any:
        return guarded(super().pipeline(*args, **options), self)  # type: ignore[misc]


class Client(Guarded, redis.Redis):
    """redis-py's client, raising through :func:`fault`."""


class ClusterClient(Guarded, redis.RedisCluster):
    """redis-py's cluster client, raising through :func:`fault`."""

    emq_startup: dict[str, Any] = {}  # noqa: RUF012 - replaced per client in open_client

    def emq_recover(self, exc: Exception) -> None:
        # redis-py 5, after every node was down: a command for all primaries finds none until a keyed
        # command reads the slot map again. Read it now, with the startup nodes (it may have dropped them).
        if isinstance(exc, redis.exceptions.RedisClusterException) and str(exc).startswith("No targets were found"):
            for name, node in self.emq_startup.items():
                self.nodes_manager.startup_nodes.setdefault(name, node)
            with contextlib.suppress(Exception):  # still down: the error raised says so
                self.nodes_manager.initialize()


@functools.cache
def _embedded_class() -> type[fakeredis.FakeRedis]:
    import fakeredis  # only here: a lab on a URL never imports it

    class EmbeddedClient(Guarded, fakeredis.FakeRedis):
        emq_url = EMBEDDED

    return EmbeddedClient


def embedded_client() -> redis.Redis:
    """A fakeredis client on the process-wide server that raises faults as the real clients do
    (switch the server off, ``embedded_server().connected = False``, to rehearse an outage)."""
    return _embedded_class()(server=embedded_server(), decode_responses=True)


def open_client(url: object = None, *, timeout_s: float = TIMEOUT_S) -> tuple[redis.Redis | redis.RedisCluster, str]:
    """A decoding client for ``url`` and a short description of the backend. A real server must
    accept a connection within ``min(timeout_s, 2 s)`` and answer (a PING and CLUSTER SLOTS, or a
    cluster's slot map) within ``timeout_s``, else :class:`emq_lab.errors.BackendUnavailable`; a plain URL to
    a cluster node, or a cluster URL to a plain server, is a ValueError saying which URL to use."""
    target = resolve_url(url)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s <= 300:
        raise ValueError(f"timeout_s: expected seconds from above 0 to 300, got {timeout_s!r}")
    if target == EMBEDDED:
        return embedded_client(), "embedded fakeredis (in this Python process)"
    if target.partition("://")[0].lower() in LOCAL_SCHEMES:
        from . import local  # only here: starts the private valkey-server on first use

        private, _ = open_client(local.url(), timeout_s=timeout_s)
        return private, "private valkey-server (started for this process)"
    parts, scheme, cluster = urls.parse(target, timeout_s=TIMEOUT_S)
    connect_s = min(float(timeout_s), CONNECT_TIMEOUT_S)
    if scheme == "rediss":
        urls.refuse_plain(parts, redact(target), connect_s)
    plain = urlunsplit(parts._replace(scheme=scheme))
    where = f"{parts.hostname}:{parts.port or 6379}"
    options: dict[str, object] = {
        "decode_responses": True,
        "socket_timeout": float(timeout_s),
        "socket_connect_timeout": connect_s,
        "retry": Retry(NoBackoff(), RETRIES),
    }
    kind: type[Client] | type[ClusterClient] = ClusterClient if cluster else Client
    try:  # a cluster client reads its slot map here, a plain one connects at its first command
        client = cast(Client | ClusterClient, kind.from_url(plain, **options))  # redis-py types it as the base class
    except Exception as exc:
        raise _connect_error(exc, target, connect_s) from exc
    client.emq_url, client.emq_timeout_s = target, float(timeout_s)  # a plain client's PING waits the socket timeout
    if isinstance(client, ClusterClient):
        client.emq_startup = dict(client.nodes_manager.startup_nodes)
        return client, f"cluster at {where}"
    try:
        with contextlib.suppress(redis.exceptions.NoPermissionError):  # refused, so it answered
            client.ping()
        # A plain client on a cluster node half-works (keys on other nodes answer MOVED): refuse it. CLUSTER SLOTS
        # asks (a class's learners may run it; a refused INFO would stay in ACL LOG). An error passes: a plain
        # server, or a user who may not ask (then the first MOVED says it instead).
        with contextlib.suppress(redis.ResponseError):
            client.execute_command("CLUSTER", "SLOTS")
            raise ValueError(f"url: {redact(target)} is a node of a cluster; {errors.cluster_fix(target)}")
    except BaseException:
        client.close()
        raise
    return client, f"server at {where}"


def _connect_error(exc: Exception, url: str, timeout_s: float) -> BaseException:
    if isinstance(exc, redis.exceptions.RedisClusterException) and "not enabled" in str(exc).lower():
        parts = urlsplit(url)
        return ValueError(
            f"url: {redact(url)} is a cluster URL, but the server at {parts.hostname}:{parts.port or 6379} "
            f"is not in cluster mode; use valkey://{parts.hostname}:{parts.port or 6379}/0"
        )
    if type(exc).__name__.startswith("SSL"):  # ssl.SSLError; ssl is not imported (Pyodide lacks it)
        return errors.BackendUnavailable(redact(url), f"TLS failed ({exc})", "check the URL's scheme and port")
    return errors.translate(exc, url, (), timeout_s=timeout_s)
