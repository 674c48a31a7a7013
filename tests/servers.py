"""Throwaway valkey-server processes on loopback for the test suite."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

REQUIRE_ENV = "EMQ_LAB_REQUIRE_VALKEY"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_binary() -> str | None:
    return shutil.which("valkey-server")


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


class ValkeyServer:
    """One valkey-server on 127.0.0.1, no persistence unless asked, in a temp dir."""

    def __init__(self, *extra: str, port: int | None = None) -> None:
        binary = server_binary()
        if binary is None:
            raise FileNotFoundError("valkey-server is not on PATH")
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="emq-valkey-"))
        args = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir)]
        if not any(a == "--save" for a in extra):
            args += ["--save", ""]
        if not any(a == "--appendonly" for a in extra):
            args += ["--appendonly", "no"]
        self._args = args + list(extra)
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.dir / "server.log", "ab")  # noqa: SIM115 - kept for the process's life
        self.process = subprocess.Popen(self._args, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                if client.ping():
                    break
            except (redis.ConnectionError, redis.TimeoutError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"valkey-server did not start: {(self.dir / 'server.log').read_text()}")
            time.sleep(0.02)
        client.close()

    def stop(self) -> None:
        """Stop the server by its PID (SIGKILL after 5 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
