"""Backend health for the panels: a status line, not a traceback, while the server is down; the actions retried."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import redis

from ._browser import platform
from .backend import Client, fault
from .errors import BUSY, BackendUnavailable, busy, is_transient, reason
from .validate import shorten

UNAVAILABLE = "backend unavailable"
RETRY_DELAYS_S: tuple[float, ...] = (1, 2, 5)  # then the last one, for as long as the panel lives
MAX_WAITING = 20  # clicks kept while the backend is down; later ones are refused with words
PROBE_S = 0.5  # how long a panel's background retry waits for a PING before it tries its actions
T = TypeVar("T")


def probe(client: redis.Redis | redis.RedisCluster) -> None:
    """One PING on a fresh connection of a standalone server: a stalled one costs ``PROBE_S``, not a command
    timeout; raises :class:`emq_lab.errors.BackendUnavailable` when it does not answer."""
    if not isinstance(client, Client):
        return
    pool = client.connection_pool
    options = {**pool.connection_kwargs, "socket_timeout": PROBE_S, "socket_connect_timeout": PROBE_S}
    connection = pool.connection_class(**options)
    try:
        connection.connect()
        connection.send_command("PING")
        connection.read_response()
    except redis.exceptions.ResponseError:
        return  # refused (no permission to PING), so it answered
    except Exception as exc:
        raise fault(exc, client, [("PING",)], timeout_s=PROBE_S)  # noqa: B904 - fault sets the cause
    finally:
        connection.disconnect()


class Cancellable(Protocol):
    def cancel(self) -> object: ...


Later = Callable[[float, Callable[[], None]], Cancellable]


def call_later(delay_s: float, fn: Callable[[], None]) -> Cancellable:
    """Run ``fn()`` once after ``delay_s`` seconds, on the kernel's (or Pyodide's) loop, else a daemon timer."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:  # Pyodide's WebLoop runs callbacks off the browser's timers, not running here
        loop = asyncio.get_event_loop() if platform.active() else None
    if loop is not None:
        return loop.call_later(delay_s, fn)
    timer = threading.Timer(delay_s, fn)
    timer.daemon = True
    timer.start()
    return timer


class Health(Generic[T]):
    """Runs a panel's actions; ``status`` is ``""`` while the backend answers. An action failing on a transient error
    waits in line, and one retry chain runs the line after each of :data:`RETRY_DELAYS_S` (``probe`` first) until it
    goes through or ``close()``; a click meanwhile joins the line (past :data:`MAX_WAITING`: refused). Other errors
    propagate, or, for a retried action, drop it into ``note``. ``later`` schedules retries (tests pass their own)."""

    def __init__(
        self,
        *,
        later: Later | None = None,
        on_change: Callable[[], None] | None = None,
        probe: Callable[[], object] | None = None,
    ) -> None:
        self.later: Later = later if later is not None else call_later
        self.on_change = on_change or (lambda: None)
        self.probe = probe or (lambda: None)
        self.status = ""
        self.note = ""  # a waiting action that failed for good, or a refused click
        self.failures = 0  # transient failures since the last success
        self.retries = 0  # scheduled retries that ran
        self.refused = 0  # clicks refused because MAX_WAITING actions already waited
        self._waiting: deque[Callable[[], T]] = deque()
        self._last: T | None = None
        self._handle: Cancellable | None = None
        self._step = 0
        self._every_s = RETRY_DELAYS_S[0]  # the delay of the scheduled retry
        self._busy = False
        self._closed = False
        self._lock = threading.RLock()

    @property
    def waiting(self) -> int:
        """How many actions wait for the backend."""
        return len(self._waiting)

    def run(self, action: Callable[[], T]) -> T | None:
        """``action()``; None with a status line when the backend is down (the action waits)."""
        with self._lock:
            if self._busy:  # an action's own callbacks: part of that action, run as is
                return action()
            self.note = ""
            if self._waiting:
                if len(self._waiting) >= MAX_WAITING:
                    self.refused += 1
                    self.note = (
                        f"{len(self._waiting)} clicks already wait for the backend; "
                        "this one was not kept (click again once it answers)"
                    )
                else:
                    self._waiting.append(action)
                self._flush()
                self.on_change()
                return None
            try:
                value = self._call(action)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self._waiting.append(action)
                self._down(exc)
                return None
            self._up()
            return value

    def retry(self) -> T | None:
        """Run the waiting actions now, in order: the last one's value once all went through, else None."""
        with self._lock:
            return self._last if self._waiting and self._flush() else None

    def close(self) -> None:
        """Stop retrying and forget the waiting actions (the panel is gone)."""
        with self._lock:
            self._closed = True
            self._cancel()
            self._waiting.clear()

    def _call(self, action: Callable[[], T]) -> T:
        self._busy = True
        try:
            return action()
        finally:
            self._busy = False

    def _flush(self) -> bool:
        self._last = None
        while self._waiting:
            try:
                self._last = self._call(self._waiting[0])
            except Exception as exc:
                if is_transient(exc):
                    self._down(exc)
                    return False
                self.note = f"a waiting action failed and was dropped: {shorten(str(exc), 200)}"
            self._waiting.popleft()
        self._up()
        return True

    def _down(self, exc: BaseException) -> None:
        self.failures += 1
        if self._handle is None and not self._closed:
            self._every_s = RETRY_DELAYS_S[min(self._step, len(RETRY_DELAYS_S) - 1)]
            self._step += 1
            self._handle = self.later(self._every_s, self._on_timer)
        waiting = f" — {len(self._waiting)} actions waiting" if len(self._waiting) > 1 else ""
        if busy(exc):  # the server answers, but runs nothing until a script ends
            self.status = f"{BUSY} — retrying every {self._every_s:g} s{waiting}"
        else:
            said = f"{exc.reason} ({exc.url})" if isinstance(exc, BackendUnavailable) else reason(exc)
            self.status = f"{UNAVAILABLE} — retrying every {self._every_s:g} s — last error: {said}{waiting}"
        self.on_change()

    def _up(self) -> None:
        changed = bool(self.status)
        self._cancel()
        self._step = 0
        self.status = ""
        self.failures = 0
        if changed:
            self.on_change()

    def _cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _on_timer(self) -> None:
        with self._lock:
            self._handle = None
            if self._closed or not self._waiting:
                return
            self.retries += 1
            try:
                self.probe()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self._down(exc)  # still down: the actions wait for the next retry
                return
            self._flush()

    def __repr__(self) -> str:
        return f"Health({self.status or 'ok'!r})"
