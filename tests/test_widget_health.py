"""A panel whose backend dies shows one status line instead of a traceback, keeps the clicks in
order under one retry chain, and recovers however long the outage (issue 15, items 2, 3, 9).

Each test runs on the embedded fakeredis (its server switched off) and on a throwaway Valkey
(stopped and started by PID). The retries are fired by hand, so an outage of 75 simulated
seconds takes no time."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from enum import IntEnum

import pytest
from helpers import START, clickable, shown
from servers import ValkeyServer, required, server_binary
from test_health import Timers

import emq_lab
from emq_lab import health
from emq_lab.backend import embedded_server
from emq_lab.health import PROBE_S, UNAVAILABLE
from emq_lab.plots.timeline import timeline
from emq_lab.widgets import BootPanel, CadenceExplorer, CancelPanel, CrashPanel
from emq_lab.widgets.boot import BootCounter
from emq_lab.widgets.view import View


class Outage:
    """A backend this test may switch off and on."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.server: ValkeyServer | None = None
        if kind == "valkey":
            if server_binary() is None:
                if required():
                    pytest.fail("VALKEY REQUIRED (EMQ_LAB_REQUIRE_VALKEY=1): no valkey-server on PATH")
                pytest.skip("VALKEY TESTS SKIPPED: no valkey-server on PATH")
            self.server = ValkeyServer()
        self.url = self.server.url if self.server else "embedded"

    def down(self) -> None:
        if self.server:
            self.server.stop()
        else:
            embedded_server().connected = False

    def up(self) -> None:
        if self.server:
            if self.server.process is None or self.server.process.poll() is not None:
                self.server.start()
        else:
            embedded_server().connected = True

    def close(self) -> None:
        if self.server:
            self.server.close()
        else:
            embedded_server().connected = True


@pytest.fixture(params=["fakeredis", "valkey"])
def outage(request: pytest.FixtureRequest) -> Iterator[Outage]:
    backend = Outage(request.param)
    yield backend
    backend.close()


@pytest.fixture
def lab(outage: Outage, queue: str) -> Iterator[emq_lab.Lab]:
    lab = emq_lab.connect(outage.url, clock=emq_lab.SimClock(START))
    yield lab
    outage.up()
    lab.reset(queue)
    lab.close()


@pytest.fixture
def timers(monkeypatch: pytest.MonkeyPatch) -> Timers:
    """Every panel's retries, scheduled here and fired by the test: no timer thread, no waiting."""
    made = Timers()
    monkeypatch.setattr(health, "call_later", made)
    return made


def test_boot_click_recovers_after_an_outage_longer_than_a_minute(
    outage: Outage, lab: emq_lab.Lab, queue: str, timers: Timers
) -> None:
    panel = BootPanel(lab, queue)
    assert "application/vnd.jupyter.widget-view+json" in shown(panel)

    outage.down()
    panel.click("Boot #1")  # the button's own callback path, as a learner's click
    assert panel.status.startswith(UNAVAILABLE)
    assert "retrying every 1 s — last error:" in panel.html("emq-status")
    assert panel.history == []
    while timers.elapsed <= 75:
        timers.fire()
    assert "retrying every 5 s" in panel.status
    assert panel.history == []

    outage.up()
    timers.fire()
    assert not panel.health.status and panel.html("emq-status") == ""
    assert [boot.tuple for boot in panel.history] == ["{:ok, :registered}"]
    assert lab.repeat(queue).count() == 1
    assert not timers.live


def test_clicks_while_down_run_in_order_once_from_one_chain(
    outage: Outage, lab: emq_lab.Lab, queue: str, timers: Timers
) -> None:
    panel = BootPanel(lab, queue)
    outage.down()
    panel.click("Boot #1")
    panel.click("Reset")
    panel.click("Boot #2")
    assert len(timers.live) == 1 and panel.health.waiting == 3
    outage.up()
    timers.fire()
    # Boot #1, Reset, Boot #2 in that order: the reset forgot boot #1, so boot #2 ran boots 1 and 2
    # on an empty queue. (Boot #2 first would have left one boot after the reset.)
    assert [(b.number, b.tuple) for b in panel.history] == [(1, "{:ok, :registered}"), (2, "{:ok, :exists}")]
    assert lab.repeat(queue).count() == 1
    assert not panel.health.status and not timers.live


def test_a_twin_while_down_raises_backend_unavailable_naming_the_url(
    outage: Outage, lab: emq_lab.Lab, queue: str, timers: Timers
) -> None:
    panel = BootPanel(lab, queue)
    outage.down()
    with pytest.raises(emq_lab.BackendUnavailable, match="backend unavailable at ") as caught:
        panel.boot(2)
    assert caught.value.url == outage.url
    assert isinstance(caught.value, ConnectionError)  # Python's own, as well as redis-py's
    outage.up()
    assert panel.boot(2).tuple == "{:ok, :exists}"


@pytest.mark.parametrize("kind", ["boot", "counter", "cancel", "crash", "cadence"])
def test_a_panel_made_and_shown_while_down_shows_its_status_then_starts(
    outage: Outage, lab: emq_lab.Lab, queue: str, timers: Timers, kind: str
) -> None:
    outage.down()
    panel: View
    if kind == "boot":
        panel = BootPanel(lab, queue)
    elif kind == "counter":
        panel = BootCounter(lab, queue)
    elif kind == "cadence":
        panel = CadenceExplorer(lab, prefix=queue)
    elif kind == "cancel":
        panel = CancelPanel(lab, queue)
    else:
        panel = CrashPanel(lab, queue)
    assert panel.status.startswith(UNAVAILABLE)
    bundle = shown(panel)
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"].startswith(UNAVAILABLE)
    with pytest.raises(emq_lab.BackendUnavailable):
        panel.readout  # noqa: B018 - the twin of the readout says it too

    outage.up()
    assert panel.retry()  # the twin of the retry timer
    assert not panel.health.status and not timers.live
    assert UNAVAILABLE not in shown(panel)["text/plain"]
    if isinstance(panel, CancelPanel):
        assert panel.race.repeat.count() == 1 and clickable(panel)["read"]
    elif isinstance(panel, CrashPanel):
        assert panel.bench.lab.repeat(queue).count() == 1
    elif isinstance(panel, CadenceExplorer):
        assert len(panel.figure.plotted) == len(timeline(panel.trace).data)
    elif isinstance(panel, BootCounter):
        assert "1 row" in panel.readout


def test_a_step_clicked_before_the_panel_could_start_runs_after_it(
    outage: Outage, lab: emq_lab.Lab, queue: str, timers: Timers
) -> None:
    outage.down()
    panel = CancelPanel(lab, queue)
    panel.control("pump reads due").click()  # a click the page sent before it showed the step off
    assert panel.health.waiting == 2  # the panel's start, then the click
    outage.up()
    timers.fire()
    assert [step.step for step in panel.race.taken] == ["read"]


class Period(IntEnum):
    QUARTER = 15 * 60_000


def test_an_intenum_period_is_its_int(lab: emq_lab.Lab, queue: str) -> None:
    panel = CancelPanel(lab, queue, every_ms=Period.QUARTER)
    assert lab.repeat(queue).record("report")["every_ms"] == "900000"
    panel.step("read")
    assert panel.race.taken[0].step == "read"


def test_a_stalled_server_costs_a_retry_the_probe_s_half_second_not_a_command_timeout(
    timers: Timers, queue: str
) -> None:
    """Background retries run on the kernel's own loop: before its actions, each asks one PING
    that waits PROBE_S (0.5 s), so a SIGSTOPped server does not freeze the kernel for the
    lab's whole timeout (2 s here) at every retry."""
    backend = Outage("valkey")
    server = backend.server
    assert server is not None and server.process is not None
    lab = emq_lab.connect(backend.url, clock=emq_lab.SimClock(START), timeout_s=2)
    panel = BootPanel(lab, queue)
    pid = server.process.pid
    os.kill(pid, signal.SIGSTOP)
    watchdog = threading.Timer(60, os.kill, (pid, signal.SIGCONT))
    watchdog.start()
    try:
        panel.click("Boot #1")  # the click itself waits the lab's timeout
        assert "no answer within 2 s" in panel.status
        timers.fire()
        assert f"no answer within {PROBE_S:g} s" in panel.status  # the probe's, not the action's
        assert panel.health.waiting == 1 and panel.history == []
    finally:
        watchdog.cancel()
        os.kill(pid, signal.SIGCONT)
    timers.fire()
    assert not panel.health.status
    assert [boot.tuple for boot in panel.history] == ["{:ok, :registered}"]
    lab.reset(queue)
    lab.close()
    backend.close()
