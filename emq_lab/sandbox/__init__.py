"""Where a learner's Lua runs: a private, disposable fakeredis, never the lab's server.

On CPython the sandbox is a worker process (:mod:`emq_lab.sandbox.worker`) serving its own
fakeredis on a unix socket in a private temp directory; a client here talks to it with
redis-py, so every verb, the pump and the checkers run on it unchanged. Its Lua (see
``runner.lua``) has Valkey's globals and no more, and a line hook the script cannot reach stops
it after :data:`LIMIT_S` seconds or :data:`~emq_lab.sandbox.lua.MEMORY_BYTES` of Lua memory, and
every script of one check once the check has run :data:`CHECK_S` seconds in all. No Python object
is reachable from its Lua, and the worker inherits nothing of the kernel's environment. What
the hook cannot stop (a long call into the server), the parent does: a reply that has not come
after :data:`HARD_S` seconds, or a Ctrl-C / Jupyter interrupt, kills the worker at once. Then
the sandbox is spent: every later call raises :class:`Stopped` with the line the script was on.

In the browser (Pyodide, no processes) the sandbox is a second fakeredis in this process with the
same Lua environment and hook; the hook is the only limit there.

- :func:`for_checks`: the kernel's warm worker for the exercises' checkers, wiped before each check
  (the checkers run their reference side elsewhere: never in a Lua state a learner's script ran in).
- :func:`shared`: the worker ``Lab.with_scripts`` runs a learner's scripts on (not wiped).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .lua import LIMIT_S, MEMORY_BYTES

__all__ = ["CHECK_S", "HARD_S", "LIMIT_S", "MEMORY_BYTES", "Sandbox", "Stopped", "for_checks", "owns", "shared"]

T = TypeVar("T")

#: Seconds a call may wait for the worker's reply before the worker is killed.
HARD_S = LIMIT_S + 2.0
#: Seconds all the scripts of one check may run in all (a check stops within CHECK_S + HARD_S).
CHECK_S = 6.0
#: Seconds a new worker may take to start (import fakeredis and lupa).
START_S = 30.0
BROWSER = sys.platform == "emscripten"


class Stopped(Exception):
    """A script outran a limit and the sandbox stopped it; ``str()`` is
    ``user_script:<line>: emq-lab stop`` (time) or ``... emq-lab memory``."""


class _Client(redis.Redis):
    """redis-py's client on a sandbox: a call that outlives :data:`HARD_S`, or is interrupted,
    kills the worker and raises :class:`Stopped`."""

    emq_sandbox: Sandbox

    def execute_command(self, *args: Any, **options: Any) -> Any:
        call = super().execute_command
        return self.emq_sandbox.guard(lambda: call(*args, **options))

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)
        execute, box = pipe.execute, self.emq_sandbox
        pipe.execute = lambda *a, **k: box.guard(lambda: execute(*a, **k))  # type: ignore[method-assign]
        return pipe


class Sandbox:
    """One worker process (CPython) or one in-process fakeredis (browser), and ``client`` on it."""

    def __init__(self) -> None:
        self.spent: str | None = None  # why it was stopped, once it was
        self._ready = False
        if BROWSER:
            self._dir = None
            self._process = None
            self.client = self._in_process()
            return
        self._dir = Path(tempfile.mkdtemp(prefix="emq-lab-sandbox-"))
        (self._dir / "line").write_bytes(bytes(8))
        self._process = subprocess.Popen(
            [sys.executable, "-m", "emq_lab.sandbox.worker", str(self._dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # its errors come back as error replies, not on the kernel's stderr
            cwd=self._dir,
            env=_environment(),
            start_new_session=True,  # a terminal's Ctrl-C reaches the kernel, which kills this
            text=True,
        )
        client = _Client(
            unix_socket_path=str(self._dir / "socket"),
            decode_responses=True,
            protocol=2,
            socket_timeout=HARD_S,
            socket_connect_timeout=HARD_S,
            retry=Retry(NoBackoff(), 0),
        )
        client.emq_sandbox = self
        self.client = client

    @staticmethod
    def _in_process(check_s: float | None = None) -> Any:
        from .. import _browser

        _browser.install()
        import fakeredis

        from . import lua
        from .allow import connection_class

        server = lua.server(None, check_s)
        return fakeredis.FakeRedis(server=server, decode_responses=True, protocol=2, connection_class=connection_class())

    def _wait(self, answer: str) -> None:
        assert self._process is not None and self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], START_S)
        said = self._process.stdout.readline().strip() if ready else ""
        if said != answer:
            self.kill()
            raise RuntimeError(f"the sandbox's worker did not start (it said {said!r}); run the cell again")

    def ready(self) -> None:
        """Wait for the worker to listen (it starts in the background)."""
        if not self._ready and self._process is not None:
            self._wait("ready")
            self._ready = True

    def wipe(self, check_s: float | None = None) -> None:
        """Empty the sandbox: a new server, its data and Lua state fresh, whose scripts stop
        ``check_s`` seconds from now (None: no limit but each script's own)."""
        if self.spent is not None:
            raise Stopped(self.spent)
        if self._process is None:
            self.client = self._in_process(check_s)
            return
        self.ready()
        assert self._process.stdin is not None
        self.client.connection_pool.disconnect()
        self._process.stdin.write(f"wipe {check_s or ''}\n")
        self._process.stdin.flush()
        self._wait("wiped")

    def guard(self, call: Callable[[], T]) -> T:
        """``call()`` on the worker, killing it when the reply is late or the call interrupted."""
        if self.spent is not None:
            raise Stopped(self.spent)
        self.ready()
        try:
            return call()
        except KeyboardInterrupt:
            self.kill()
            _replace(self)
            raise
        except (redis.TimeoutError, redis.ConnectionError) as exc:
            line, died = self.line(), self._process is not None and self._process.poll() is not None
            self.kill()
            self.spent = f"user_script:{line}: emq-lab {'memory' if died else 'stop'}"
            _replace(self)
            raise Stopped(self.spent) from exc

    @property
    def alive(self) -> bool:
        """False once the worker has ended (killed, or gone on its own)."""
        return self._process is None or self._process.poll() is None

    def line(self) -> int:
        """The line the worker's script was on when it last said."""
        if self._dir is None:
            return 0
        with contextlib.suppress(OSError):
            return int(struct.unpack("q", (self._dir / "line").read_bytes()[:8])[0])
        return 0

    def kill(self) -> None:
        """End the worker now (nothing to do in the browser)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._process is not None:
            for stream in (self._process.stdin, self._process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()  # type: ignore[union-attr]
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self.spent = self.spent or "user_script:0: emq-lab stop"


def _environment() -> dict[str, str]:
    """The worker's environment: where Python finds emq_lab and its packages, and nothing else
    of the kernel's (no EMQ_LAB_URL, no password, no token)."""
    return {"PYTHONPATH": os.pathsep.join(path for path in sys.path if path), "LC_ALL": "C.UTF-8"}


_lock = threading.Lock()
_boxes: dict[str, Sandbox] = {}


@atexit.register
def _close_all() -> None:
    """At the kernel's end: stop the workers and remove their temp dirs."""
    for box in list(_boxes.values()):
        box.kill()


def _box(role: str) -> Sandbox:
    with _lock:
        box = _boxes.get(role)
        if box is None or box.spent is not None or not box.alive:
            if box is not None:
                box.kill()  # its temp dir goes too
            box = _boxes[role] = Sandbox()
        return box


def _replace(spent: Sandbox) -> None:
    """Start the successor of a spent worker at once, so that the next check finds it warm."""
    if spent._process is None:
        return
    with _lock:
        for role, box in list(_boxes.items()):
            if box is spent:
                _boxes[role] = Sandbox()


def for_checks(check_s: float | None = None) -> Sandbox:
    """The worker a check runs on, wiped; a new one (started at once) when the last was spent.
    With ``check_s`` (a check that runs a learner's Lua: :data:`CHECK_S`), every script stops
    ``check_s`` seconds from now."""
    box = _box("checks")
    box.wipe(check_s)
    return box


def shared() -> Sandbox:
    """The worker ``Lab.with_scripts`` runs on: one per kernel, a new one once it was spent."""
    return _box("scripts")


def owns(client: Any) -> bool:
    """True when ``client`` talks to a sandbox."""
    return any(box.client is client for box in list(_boxes.values())) or isinstance(client, _Client)
