from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from servers import ValkeyServer, required, server_binary

import emq_lab

BACKENDS = ["fakeredis", "valkey"]
START = "2026-01-05T09:00:00Z"
_queues = itertools.count(1)


@pytest.fixture(scope="session")
def valkey_server() -> Iterator[ValkeyServer]:
    if server_binary() is None:
        message = (
            "VALKEY TESTS SKIPPED: no valkey-server on PATH. Install it (Debian: "
            "apt-get install -t bookworm-backports valkey-server) or run .ci/run."
        )
        if required():
            pytest.fail(message.replace("SKIPPED", "REQUIRED (EMQ_LAB_REQUIRE_VALKEY=1)"))
        pytest.skip(message)
    server = ValkeyServer()
    yield server
    server.close()


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest) -> str | None:
    """None for the embedded fakeredis, a loopback URL for the throwaway Valkey."""
    if request.param == "valkey":
        server: ValkeyServer = request.getfixturevalue("valkey_server")
        return server.url
    return "embedded"


@pytest.fixture
def queue() -> str:
    """A queue name no other test uses."""
    return f"t{next(_queues)}"


@pytest.fixture
def lab(backend_url: str, queue: str) -> Iterator[emq_lab.Lab]:
    lab = emq_lab.connect(backend_url, clock=emq_lab.SimClock(START))
    yield lab
    lab.reset(queue)
    lab.close()
