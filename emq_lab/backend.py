"""Connections: the embedded fakeredis server, or a real Valkey/Redis by URL."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import redis

if TYPE_CHECKING:
    import fakeredis

ENV_URL = "EMQ_LAB_URL"
EMBEDDED = "embedded"
LOCAL_SCHEMES = ("valkey+local", "redis+local")

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


def resolve_url(url: str | None) -> str:
    """The argument, else ``$EMQ_LAB_URL``, else ``"embedded"``."""
    chosen = url if url is not None else os.environ.get(ENV_URL, "")
    return chosen.strip() or EMBEDDED


def open_client(url: str | None = None) -> tuple[Any, str]:
    """A decoding redis-py client for ``url`` and a short description of the backend."""
    target = resolve_url(url)
    if target == EMBEDDED:
        import fakeredis

        client: Any = fakeredis.FakeRedis(server=embedded_server(), decode_responses=True)
        return client, "embedded fakeredis (in this Python process)"
    parts = urlsplit(target)
    scheme = parts.scheme.lower()
    if scheme in LOCAL_SCHEMES:
        from . import local  # only here: starts a private valkey-server on first use

        client = redis.Redis.from_url(local.url(), decode_responses=True)
        return client, "private valkey-server (started for this process)"
    cluster = scheme.endswith("+cluster")
    base = scheme.removesuffix("+cluster")
    if base not in ("redis", "rediss", "valkey", "valkeys"):
        raise ValueError(
            f"url: {target!r} has scheme {parts.scheme!r}; use redis://, rediss://, valkey://, "
            "valkeys://, a +cluster variant of these, valkey+local:// (a private server), "
            "or leave it empty for the embedded backend"
        )
    plain = urlunsplit(parts._replace(scheme="rediss" if base in ("rediss", "valkeys") else "redis"))
    where = f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
    if cluster:
        client = redis.RedisCluster.from_url(plain, decode_responses=True)
        return client, f"cluster at {where}"
    client = redis.Redis.from_url(plain, decode_responses=True)
    return client, f"server at {where}"
