"""A panel whose backend dies shows one status line instead of a traceback, and recovers."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from servers import ValkeyServer, required, server_binary

import emq_lab
from emq_lab.health import UNAVAILABLE
from emq_lab.widgets import BootPanel


@pytest.fixture
def own_server() -> Iterator[ValkeyServer]:
    if server_binary() is None:
        if required():
            pytest.fail("VALKEY REQUIRED (EMQ_LAB_REQUIRE_VALKEY=1): no valkey-server on PATH")
        pytest.skip("VALKEY TESTS SKIPPED: no valkey-server on PATH")
    server = ValkeyServer()
    yield server
    server.close()


def test_boot_click_on_a_dead_backend_then_recovery(own_server: ValkeyServer) -> None:
    lab = emq_lab.connect(own_server.url, clock=emq_lab.SimClock())
    panel = BootPanel(lab, "health-demo")
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle

    own_server.stop()
    panel._buttons[1].click()  # the button's own callback path, as a learner's click
    assert panel.health.status == UNAVAILABLE
    assert UNAVAILABLE in panel._status.value
    assert panel.history == []

    own_server.start()
    deadline = time.monotonic() + 30
    while not panel.health.ok and time.monotonic() < deadline:
        time.sleep(0.1)  # the panel retries in the background
    assert panel.health.ok
    assert panel._status.value == ""
    assert [boot.tuple for boot in panel.history] == ["{:ok, :registered}"]
    assert lab.repeat("health-demo").count() == 1
    lab.reset("health-demo")
    lab.close()
