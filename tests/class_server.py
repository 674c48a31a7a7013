"""A throwaway class server, set up as the README's Classroom section says: an admin user and
the default user off (the two lines `classroom users` asks for)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import redis
from servers import ValkeyServer, server_binary

ADMIN_PASSWORD = "admin-S3cret/pw"  # a "/" too: it must be percent-encoded in a URL, and never shown


@dataclass
class ClassServer:
    server: ValkeyServer
    admin_url: str

    def admin(self) -> redis.Redis:
        """A plain client logged in as the admin."""
        return redis.Redis(
            host="127.0.0.1", port=self.server.port, username="admin", password=ADMIN_PASSWORD, decode_responses=True
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
