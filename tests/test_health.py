"""Health, without I/O: one retry chain, backoff, clicks kept in order, retrying for as long as
the panel lives. The retries are fired by hand (``Timers``), so minutes of outage take no time."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from redis import exceptions

from emq_lab import BackendUnavailable
from emq_lab.errors import BackendBusy, is_transient, translate
from emq_lab.health import MAX_WAITING, UNAVAILABLE, Health, call_later


class Timer:
    def __init__(self, delay: float, fn: Callable[[], None]) -> None:
        self.delay, self.fn, self.cancelled = delay, fn, False

    def cancel(self) -> None:
        self.cancelled = True


class Timers:
    """A stand-in for ``call_later``: records what is scheduled; ``fire()`` runs the next one and
    adds its delay to ``elapsed`` (the simulated seconds of outage)."""

    def __init__(self) -> None:
        self.made: list[Timer] = []
        self.elapsed = 0.0

    def __call__(self, delay: float, fn: Callable[[], None]) -> Timer:
        timer = Timer(delay, fn)
        self.made.append(timer)
        return timer

    @property
    def live(self) -> list[Timer]:
        return [t for t in self.made if not t.cancelled and t.fn is not None]

    def fire(self) -> None:
        (timer,) = self.live  # exactly one retry chain
        fn = timer.fn
        timer.fn = None  # type: ignore[assignment]
        self.elapsed += timer.delay
        fn()


class Server:
    """A backend that is up or down; its actions append to ``log``."""

    def __init__(self) -> None:
        self.up = True
        self.log: list[str] = []

    def action(self, label: str) -> Callable[[], str]:
        def run() -> str:
            if not self.up:
                raise BackendUnavailable("redis://127.0.0.1:6379/0", "connection refused")
            self.log.append(label)
            return label

        return run


def test_an_outage_longer_than_a_minute_recovers_with_one_chain_and_says_what_it_does() -> None:
    timers, server = Timers(), Server()
    health: Health[str] = Health(later=timers)
    server.up = False
    assert health.run(server.action("boot 1")) is None
    assert health.status.startswith(UNAVAILABLE)
    assert "retrying every 1 s" in health.status
    assert "last error: connection refused (redis://127.0.0.1:6379/0)" in health.status
    while timers.elapsed <= 75:
        timers.fire()
        assert len(timers.live) == 1
        assert health.waiting and health.status
    assert "retrying every 5 s" in health.status
    assert health.retries > 15
    server.up = True
    timers.fire()
    assert not health.status and not health.waiting and not timers.live
    assert server.log == ["boot 1"]


def test_clicks_while_down_wait_in_order_and_each_runs_once() -> None:
    timers, server = Timers(), Server()
    health: Health[str] = Health(later=timers)
    server.up = False
    for label in ("boot 1", "reset", "boot 2"):
        assert health.run(server.action(label)) is None
    assert len(timers.live) == 1  # every click tried at once, but one chain
    assert health.waiting == 3
    assert "3 actions waiting" in health.status
    server.up = True
    timers.fire()
    assert server.log == ["boot 1", "reset", "boot 2"]
    assert not health.status and not timers.live


def test_a_click_after_recovery_runs_the_waiting_ones_first() -> None:
    timers, server = Timers(), Server()
    health: Health[str] = Health(later=timers)
    server.up = False
    health.run(server.action("boot 1"))
    server.up = True
    assert health.run(server.action("boot 2")) is None  # joined the line, which ran now
    assert server.log == ["boot 1", "boot 2"]
    assert not health.status
    assert all(t.cancelled for t in timers.made)  # the chain stopped
    assert health.run(server.action("boot 3")) == "boot 3"


def test_past_max_waiting_a_click_is_refused_with_words() -> None:
    timers, server = Timers(), Server()
    health: Health[str] = Health(later=timers)
    server.up = False
    labels = [f"click {n}" for n in range(MAX_WAITING + 1)]
    for label in labels:
        health.run(server.action(label))
    assert health.waiting == MAX_WAITING and health.refused == 1
    assert "this one was not kept" in health.note
    server.up = True
    timers.fire()
    assert server.log == labels[:MAX_WAITING]


def test_a_waiting_action_that_fails_for_good_is_dropped_and_named() -> None:
    timers, server = Timers(), Server()
    health: Health[str] = Health(later=timers)
    server.up = False
    health.run(server.action("a"))

    def bad() -> str:
        if not server.up:
            raise BackendUnavailable("embedded", "the embedded server is switched off")
        raise ValueError("step: 'advance' is not allowed now")

    health.run(bad)
    health.run(server.action("c"))
    server.up = True
    timers.fire()
    assert server.log == ["a", "c"]
    assert "'advance' is not allowed now" in health.note
    assert not health.status


def test_a_first_attempt_that_fails_for_good_raises_and_nothing_waits() -> None:
    health: Health[str] = Health(later=Timers())

    def bad() -> str:
        raise ValueError("minutes: one of 5, 15")

    with pytest.raises(ValueError, match="minutes"):
        health.run(bad)
    assert not health.status and not health.waiting


def test_close_stops_the_chain() -> None:
    timers, server = Timers(), Server()
    health: Health[str] = Health(later=timers)
    server.up = False
    health.run(server.action("a"))
    health.close()
    assert not timers.live and not health.waiting


def test_an_action_s_own_callbacks_run_inside_it() -> None:
    timers = Timers()
    health: Health[str] = Health(later=timers)
    seen: list[str] = []

    def outer() -> str:
        health.run(lambda: seen.append("inner") or "inner")  # a widget observer fired by the action
        seen.append("outer")
        return "outer"

    assert health.run(outer) == "outer"
    assert seen == ["inner", "outer"]


def test_transient_faults() -> None:
    assert is_transient(exceptions.ConnectionError("Error 111 connecting. Connection refused."))
    assert is_transient(exceptions.TimeoutError("Timeout reading from socket"))
    assert is_transient(exceptions.ClusterDownError("CLUSTERDOWN"))
    assert is_transient(
        exceptions.RedisClusterException(
            "Redis Cluster cannot be connected. Please provide at least one reachable node"
        )
    )
    assert not is_transient(exceptions.RedisClusterException("Keys in request don't hash to the same slot"))
    assert not is_transient(exceptions.AuthenticationError("invalid username-password pair"))
    assert not is_transient(ValueError("every_ms"))
    # A script past the busy threshold, and a reshard redis-py gave up following: both pass.
    assert is_transient(exceptions.ResponseError("BUSY Valkey is busy running a script. You can only call SCRIPT KILL"))
    assert is_transient(exceptions.ClusterError("TTL exhausted."))
    assert not is_transient(exceptions.ResponseError("BUSYKEY Target key name already exists."))


def test_a_busy_server_is_a_retry_line_not_an_outage() -> None:
    timers, busy = Timers(), [True]

    def action() -> str:
        if busy[0]:
            raise translate(exceptions.ResponseError("BUSY Valkey is busy running a script."), "redis://:pw@h:1/0")
        return "done"

    health: Health[str] = Health(later=timers)
    assert health.run(action) is None
    assert health.status == "the server is busy running a script — retrying every 1 s"
    timers.fire()
    assert health.status == "the server is busy running a script — retrying every 2 s"
    busy[0] = False
    timers.fire()
    assert not health.status and health.retries == 2
    with pytest.raises(
        BackendBusy, match=r"the server is busy running a script — retrying is safe \(redis://:\*\*\*@h"
    ):
        raise translate(exceptions.ResponseError("BUSY Valkey is busy running a script."), "redis://:pw@h:1/0")


def test_call_later_uses_the_running_event_loop() -> None:
    ran: list[str] = []

    async def main() -> None:
        handle = call_later(0.01, lambda: ran.append(threading.current_thread().name))
        assert isinstance(handle, asyncio.TimerHandle)
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert ran == [threading.main_thread().name]  # on the loop's own thread, no thread made


def test_call_later_falls_back_to_a_timer_thread() -> None:
    done = threading.Event()
    names: list[Any] = []
    handle = call_later(0.01, lambda: (names.append(threading.current_thread().name), done.set()))
    assert isinstance(handle, threading.Timer)
    assert done.wait(10)
    assert names and names[0] != threading.main_thread().name
