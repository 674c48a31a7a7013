"""Where a learner's Lua runs: a private, disposable fakeredis, never the lab's server.

On CPython, a worker process (:mod:`.worker`) serves its fakeredis on a unix socket in a private
temp dir, running only an allowlist's commands (:mod:`.allow`); its Lua (``runner.lua``) has
Valkey's globals and no Python object, under a hook that stops a script after :data:`LIMIT_S` CPU
seconds or :data:`MEMORY_BYTES` of Lua memory, and every script of a check after :data:`CHECK_S`.
The worker starts with an empty environment and no descriptor of the kernel's, then drops root,
privileges and file writes; the kernel makes itself non-dumpable. What the hook cannot stop, the
parent does: a call costing :data:`CALL_CPU_S` CPU seconds, a reply :data:`HARD_S` seconds late or
an interrupt kills the worker, and every later call raises :class:`Stopped`. In the browser
(Pyodide), the same server runs in-process and the hook is the only limit (:func:`in_process`).

- :func:`for_checks`: the checkers' worker, wiped before each check (their reference runs elsewhere).
- :func:`shared`: the worker ``exercises.with_scripts`` runs a learner's scripts on (not wiped).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .._browser import platform
from . import lua
from .lua import LIMIT_S, MEMORY_BYTES

__all__ = ["CALL_CPU_S", "CHECK_S", "HARD_S", "LIMIT_S", "MEMORY_BYTES", "Sandbox", "Stopped", "for_checks", "owns",
           "shared"]  # fmt: skip

T = TypeVar("T")

#: CPU seconds the worker may spend on one call before the parent kills it (what the hook misses).
CALL_CPU_S = LIMIT_S + 1.0
#: Seconds of the wall clock a call may wait for the worker's reply before the worker is killed:
#: a backstop for a worker that does not run at all, far past what a loaded machine takes.
HARD_S = 30.0
#: CPU seconds all the scripts of one check may run in all.
CHECK_S = 6.0
#: How often the parent looks at the CPU time of a worker that is answering a call.
_WATCH_S = 0.05
#: Seconds a new worker may take to start (import fakeredis and lupa).
START_S = 30.0
BROWSER = platform.active()


class Stopped(Exception):
    """A script outran a limit: ``user_script:<line>: emq-lab stop`` (time) or ``... emq-lab memory``."""


class _Client(redis.Redis):
    """redis-py's client on a sandbox: a call too long or interrupted kills the worker and raises Stopped."""

    emq_sandbox: Sandbox

    def execute_command(self, *args: Any, **options: Any) -> Any:
        call = super().execute_command
        return self.emq_sandbox.guard(lambda: call(*args, **options))

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)
        execute, box = pipe.execute, self.emq_sandbox
        pipe.execute = lambda *a, **k: box.guard(lambda: execute(*a, **k))  # type: ignore[method-assign]
        return pipe


def in_process(check_s: float | None = None) -> Any:
    """A client of a new sandbox server in this process (the browser's: the hook is its only limit)."""
    return lua.client(lua.server(None, check_s), decode_responses=True)


class Sandbox:
    """One worker process (CPython) or one in-process fakeredis (browser), and ``client`` on it."""

    def __init__(self) -> None:
        self.spent: str | None = None  # why it was stopped, once it was
        self._ready, self._dir, self._process = False, None, None
        if BROWSER:
            self.client = in_process()
            return
        _first_start()
        self._dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        (self._dir / "line").write_bytes(bytes(8))
        self._process = subprocess.Popen(
            command(self._dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # its errors come back as error replies, not on the kernel's stderr
            cwd=self._dir,
            env={},  # nothing of the kernel's: no EMQ_LAB_URL, no password, no token
            close_fds=True,  # and no descriptor but its pipes
            start_new_session=True,  # a terminal's Ctrl-C reaches the kernel, which kills this
            text=True,
        )
        self._watch = _Watch(self._process)
        self.client = _Client(
            unix_socket_path=str(self._dir / "socket"),
            decode_responses=True,
            protocol=2,
            socket_timeout=HARD_S,
            socket_connect_timeout=HARD_S,
            retry=Retry(NoBackoff(), 0),
        )
        self.client.emq_sandbox = self

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
        """Empty the sandbox (data and Lua state); with ``check_s``, its scripts stop that many seconds from now."""
        if self.spent is not None:
            raise Stopped(self.spent)
        if self._process is None:
            self.client = in_process(check_s)
            return
        self.ready()
        assert self._process.stdin is not None
        self.client.connection_pool.disconnect()
        self._process.stdin.write(f"wipe {check_s or ''}\n")
        self._process.stdin.flush()
        self._wait("wiped")

    def guard(self, call: Callable[[], T]) -> T:
        """``call()``'s answer; the worker is killed when the call is too costly, too late or interrupted."""
        if self.spent is not None:
            raise Stopped(
                f"the sandbox was stopped during an earlier call, not this one ({self.spent}); what it held went "
                "with it: call with_scripts again for a fresh sandbox"
            )
        self.ready()
        self._watch.begin()
        try:
            return call()
        except KeyboardInterrupt:
            self.kill()
            _replace(self)
            raise
        except (redis.TimeoutError, redis.ConnectionError) as exc:
            line, died = self.line(), not self.alive
            self.kill()
            ran_out = not died or self._watch.killed  # the watch or the wall clock; else it ran out of memory
            self.spent = f"user_script:{line}: emq-lab {'stop' if ran_out else 'memory'}"
            _replace(self)
            raise Stopped(self.spent) from exc
        finally:
            self._watch.end()

    @property
    def alive(self) -> bool:
        """False once the worker has ended."""
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
        if self._process is not None:
            self._process.kill()  # nothing to do when it has ended
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()  # type: ignore[union-attr]
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self.spent = self.spent or "user_script:0: emq-lab stop"


PREFIX = "emq-lab-sandbox-"
#: How the worker starts: isolated (-I: no PYTHON* variable, no user site), no bytecode written, with
#: this emq_lab and the kernel's sys.path handed over on its command line (its environment is empty).
_BOOT = "import sys; sys.path[:] = sys.argv[2:]; from emq_lab.sandbox.worker import main; main(sys.argv[1])"


def command(directory: Path) -> list[str]:
    """The worker's command line for the temp dir ``directory``."""
    package = str(Path(__file__).resolve().parents[2])  # the emq_lab this kernel runs, first
    paths = [os.path.abspath(path) for path in sys.path if path]
    return [sys.executable, "-I", "-B", "-X", "utf8", "-c", _BOOT, str(directory), package, *paths]


@functools.cache
def _first_start() -> None:
    """Before the first worker: make the kernel non-dumpable (unreadable through /proc), remove stale dirs."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            from .worker import _PR_SET_DUMPABLE, _prctl

            _prctl(_PR_SET_DUMPABLE, 0)
    remove_stale()


def remove_stale(root: Path | None = None) -> list[Path]:
    """The sandbox temp dirs under ``root`` removed: their kernel ended (no pid: untouched for a day)."""
    removed = []
    for path in (root or Path(tempfile.gettempdir())).glob(f"{PREFIX}*"):
        try:
            if not path.is_dir() or path.is_symlink() or path.stat().st_uid != os.geteuid():
                continue
            owner, dash, _ = path.name.removeprefix(PREFIX).partition("-")
            if owner.isdigit() and dash:
                with contextlib.suppress(ProcessLookupError):  # its kernel ended: the dir is removed
                    os.kill(int(owner), 0)  # its kernel lives (or is another user's: an OSError): the dir is kept
                    continue
            elif time.time() - path.stat().st_mtime < 86400:
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _cpu_s(pid: int) -> float | None:
    """CPU seconds process ``pid`` has run (user and system), from /proc; None where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Watch:
    """Kills the worker when one call has cost it :data:`CALL_CPU_S` CPU seconds (no /proc: HARD_S alone)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        self._since: tuple[float] | None = None
        self._wake = threading.Condition()
        self.killed = False
        self._thread: threading.Thread | None = None

    def begin(self) -> None:
        cpu = _cpu_s(self._process.pid)
        if cpu is None:
            return
        with self._wake:
            self._since = (cpu,)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="emq-lab sandbox watch", daemon=True)
                self._thread.start()
            self._wake.notify()

    def end(self) -> None:
        with self._wake:
            self._since = None

    def _run(self) -> None:
        while self._process.poll() is None:
            with self._wake:
                while self._since is None:
                    self._wake.wait(1.0)
                    if self._process.poll() is not None:
                        return
                since = self._since
                self._wake.wait(_WATCH_S)
                if self._since is not since:
                    continue
            used = _cpu_s(self._process.pid)
            if used is not None and used - since[0] > CALL_CPU_S:
                self.killed = True
                with contextlib.suppress(OSError):
                    self._process.kill()
                return


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
    with _lock:
        for role, box in list(_boxes.items()):
            if box is spent:
                _boxes[role] = Sandbox()


def for_checks(check_s: float | None = None) -> Sandbox:
    """The checks' worker, wiped (a new one once spent); with ``check_s``, scripts stop that many seconds on."""
    box = _box("checks")
    box.wipe(check_s)
    return box


def shared() -> Sandbox:
    """The worker ``exercises.with_scripts`` runs on: one per kernel, a new one once spent."""
    return _box("scripts")


def owns(client: Any) -> bool:
    """True when ``client`` talks to a sandbox."""
    return any(box.client is client for box in list(_boxes.values())) or isinstance(client, _Client)
