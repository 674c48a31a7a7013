"""A throwaway class server, set up as the README's Classroom section says: an admin user and
the default user off (the two lines `classroom users` asks for)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from servers import ValkeyServer, server_binary

ADMIN_PASSWORD = "admin-S3cret/pw"  # a "/" too: it must be percent-encoded in a URL, and never shown


@dataclass
class ClassServer:
    server: ValkeyServer
    admin_url: str

    def admin(self) -> redis.Redis:
        """A plain client logged in as the admin. Never re-sent: redis-py 8 re-sends a command
        after a 5 s timeout by default, and a test's fill of 2,000,000 entries on a busy machine
        ran five times."""
        return redis.Redis(
            host="127.0.0.1",
            port=self.server.port,
            username="admin",
            password=ADMIN_PASSWORD,
            decode_responses=True,
            socket_timeout=120,
            retry=Retry(NoBackoff(), 0),
        )


@contextmanager
def started_class_server() -> Iterator[ClassServer]:
    if server_binary() is None:
        pytest.skip("VALKEY TESTS SKIPPED: no valkey-server")
    server = ValkeyServer()
    try:
        raw = redis.Redis(host="127.0.0.1", port=server.port)
        raw.execute_command("ACL", "SETUSER", "admin", "on", f">{ADMIN_PASSWORD}", "~*", "&*", "+@all")
        raw.execute_command("ACL", "SETUSER", "default", "off")
        raw.close()
        yield ClassServer(server, f"redis://admin:{ADMIN_PASSWORD.replace('/', '%2F')}@127.0.0.1:{server.port}/0")
    finally:
        server.close()


def send_unread(port: int, user: str, password: str, commands: list[list[str]]) -> socket.socket:
    """A learner's raw socket that logs in, then sends ``commands`` pipelined and reads nothing:
    the replies pile up in the server's output buffer for this client."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(resp(["AUTH", user, password]))
    assert sock.recv(64).startswith(b"+OK")
    sock.sendall(b"".join(resp(command) for command in commands))
    return sock


def resp(words: list[str]) -> bytes:
    """One command in the server's protocol."""
    out = [f"*{len(words)}\r\n".encode()]
    for word in words:
        data = word.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def closed_by_server(sock: socket.socket, *, within_s: float = 10) -> bool:
    """True when the server closes ``sock`` (its replies drained and discarded) within ``within_s``."""
    sock.settimeout(within_s)
    try:
        while sock.recv(1 << 20):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    finally:
        sock.close()
    return True


def fill(
    admin: redis.Redis, namespace: str, *, keys_held: int = 0, long_names: int = 0, name_bytes: int = 2**21
) -> None:
    """What a learner could store, written fast by the admin in its namespace: ``keys_held`` job
    keys of one queue (what many ticks leave), and ``long_names`` queues whose names are
    ``name_bytes`` long."""
    from emq_lab import keys

    k = keys.QueueKeys("q", namespace)
    pipe = admin.pipeline(transaction=False)
    for start in range(0, keys_held, 1000):
        pipe.mset({f"{k.job_prefix}JOB-{i:07d}": "1" for i in range(start, min(start + 1000, keys_held))})
        if len(pipe) == 50:
            pipe.execute()
    for i in range(long_names):
        pipe.zadd(keys.QueueKeys(f"{i:02d}" + "n" * name_bytes, namespace).registry, {"x": 1})
    pipe.execute()
