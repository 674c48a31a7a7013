"""The sandbox's worker process: ``main(<dir>)``, on the command line :func:`emq_lab.sandbox.command` gives.

It serves one private fakeredis (:func:`.lua.server`, the allowlist's commands only) on the unix
socket ``<dir>/socket``, and writes the line a script is on into ``<dir>/line`` (8 bytes, by mmap)
for the parent to name after a kill. Limits count its own CPU time; its address space is bounded.
On stdin, ``wipe [<seconds>]`` makes a new, empty server whose scripts stop after ``<seconds>`` more
CPU time, answered ``wiped``; the end of stdin ends it. Once it listens, :func:`confine` runs.
"""

from __future__ import annotations

import contextlib
import ctypes  # imported here, before confine(): a worker that was root may not read the stdlib after
import mmap
import os
import selectors
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

import redis.exceptions as rex

from . import lua
from .allow import connection_class

#: Address space the worker may grow by, past what it holds once started.
GROWTH_BYTES = 1 << 30
#: A reply larger than this is refused with an error (a script's huge reply stays here).
REPLY_BYTES = 8 << 20


def _encode(value: Any) -> bytes:
    """One RESP2 reply."""
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, Exception):
        text = _error_text(value).split("\nstack traceback:", 1)[0]
        return b"-" + text.replace("\r", " ").replace("\n", " ").encode() + b"\r\n"
    if isinstance(value, int):  # a bool too: True is :1
        return b":%d\r\n" % value
    if isinstance(value, float):
        value = repr(value)
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    if isinstance(value, (list, tuple)):
        return b"*%d\r\n" % len(value) + b"".join(_encode(item) for item in value)
    raise TypeError(f"no RESP2 form for {type(value).__name__}")


def _error_text(error: Exception) -> str:
    """An error reply's text with the code redis-py's parser took off put back."""
    codes = {rex.NoScriptError: "NOSCRIPT", rex.BusyLoadingError: "LOADING", rex.ReadOnlyError: "READONLY"}
    for kind, code in codes.items():
        if isinstance(error, kind):
            return f"{code} {error}"
    return f"ERR {error}"


class Worker:
    def __init__(self, directory: Path) -> None:
        self._line = mmap.mmap(os.open(directory / "line", os.O_RDWR), 8)
        self.server = lua.server(self._tick)
        self.connections: dict[socket.socket, Any] = {}

    def _tick(self, line: int) -> float:
        struct.pack_into("q", self._line, 0, line)
        return time.process_time()  # this worker's CPU time: what other processes do does not count

    def wipe(self, check_s: float | None) -> None:
        for sock in list(self.connections):
            self.drop(sock)
        self.server = lua.server(self._tick, check_s)

    def accept(self, sock: socket.socket) -> None:
        connection = lua.client(self.server).connection_pool.make_connection()
        connection.connect()
        self.connections[sock] = connection

    def drop(self, sock: socket.socket) -> None:
        self.connections.pop(sock).disconnect()
        sock.close()

    def serve(self, sock: socket.socket, data: bytes) -> None:
        connection = self.connections[sock]
        try:
            connection.send_packed_command([data])  # fakeredis runs the command(s) here
        except MemoryError:
            self.reply(sock, Exception(f"user_script:{self.line()}: emq-lab memory"))
            return
        except Exception as error:  # noqa: BLE001 - a fakeredis failure is the command's error reply
            self.reply(sock, Exception(f"{type(error).__name__}: {error}"))
            return
        out = []
        while connection.can_read(0):
            try:
                reply = connection.read_response(disable_decoding=True)
            except Exception as error:  # noqa: BLE001 - an error reply goes back as one
                reply = error
            encoded = _encode(reply)
            if len(encoded) > REPLY_BYTES:
                size = len(encoded) / (1 << 20)
                encoded = _encode(Exception(f"emq-lab reply: {size:.0f} MB, more than the sandbox's 8 MB"))
            out.append(encoded)
        if out:
            sock.sendall(b"".join(out))

    def reply(self, sock: socket.socket, error: Exception) -> None:
        """Answer ``error`` on a fresh connection (the old one may be mid-command)."""
        self.connections.pop(sock).disconnect()
        self.accept(sock)
        sock.sendall(_encode(error))

    def line(self) -> int:
        return int(struct.unpack_from("q", self._line, 0)[0])


def _bound_memory() -> None:
    import resource

    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    held = pages * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (held + GROWTH_BYTES, held + GROWTH_BYTES))


#: The uid and gid a worker started as root runs as (``nobody`` where there is one).
NOBODY = 65534
_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS = 4, 38


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value})")


def confine() -> None:
    """Drop root (to nobody), new privileges, dumpability, core files, file writes and new processes, where allowed."""
    if not sys.platform.startswith("linux"):
        return
    import pwd
    import resource

    if os.geteuid() == 0:
        try:
            uid, gid = pwd.getpwnam("nobody")[2:4]
        except KeyError:
            uid = gid = NOBODY
        with contextlib.suppress(OSError):
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
    for option, value in ((_PR_SET_NO_NEW_PRIVS, 1), (_PR_SET_DUMPABLE, 0)):
        with contextlib.suppress(OSError):
            _prctl(option, value)
    for limit in (resource.RLIMIT_CORE, resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC):
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(limit, (0, 0))


def main(directory: Path | str) -> None:
    directory = Path(directory)
    worker = Worker(directory)
    if sys.platform.startswith("linux"):
        _bound_memory()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(directory / "socket"))
    listener.listen()
    connection_class()
    lua._runner()  # every file the worker reads, read before it is confined (then it may reach none)
    confine()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(sys.stdin, selectors.EVENT_READ, "control")
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.data == "listener":
                sock, _ = listener.accept()
                worker.accept(sock)
                selector.register(sock, selectors.EVENT_READ, "client")
            elif key.data == "control":
                command = sys.stdin.readline().split()
                if not command:
                    return
                for sock in list(worker.connections):
                    selector.unregister(sock)
                worker.wipe(float(command[1]) if len(command) > 1 else None)
                print("wiped", flush=True)
            else:
                sock = key.fileobj  # type: ignore[assignment]
                data = sock.recv(1 << 16)
                if data:
                    worker.serve(sock, data)
                else:
                    selector.unregister(sock)
                    worker.drop(sock)
