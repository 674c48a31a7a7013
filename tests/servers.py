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


def kill(server: ValkeyServer) -> None:
    """SIGKILL ``server`` by its PID: no shutdown, no final fsync (a crash, not a stop)."""
    if server.process is None or server.process.poll() is not None:
        return
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()


def restart(server: ValkeyServer, *, crash: bool = True) -> None:
    """Kill (or stop) ``server`` and start it again on the same port and directory (AOF kept)."""
    if crash:
        kill(server)
    else:
        server.stop()
    server.start()


def cluster_binary() -> str | None:
    return shutil.which("valkey-cli")


class ValkeyCluster:
    """Three cluster-enabled primaries on loopback, no replicas, joined by ``valkey-cli --cluster create``."""

    def __init__(self, primaries: int = 3) -> None:
        cli = cluster_binary()
        if cli is None:
            raise FileNotFoundError("valkey-cli is not on PATH")
        self.nodes: list[ValkeyServer] = []
        try:
            for _ in range(primaries):
                self.nodes.append(
                    ValkeyServer(
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--cluster-port",
                        str(free_port()),
                        "--cluster-node-timeout",
                        "5000",
                    )
                )
            where = [f"127.0.0.1:{node.port}" for node in self.nodes]
            subprocess.run(
                [cli, "--cluster", "create", *where, "--cluster-replicas", "0", "--cluster-yes"],
                check=True,
                capture_output=True,
                timeout=60,
            )
            self._wait_ok()
        except BaseException:
            self.close()
            raise

    @property
    def port(self) -> int:
        return self.nodes[0].port

    @property
    def url(self) -> str:
        return f"valkey+cluster://127.0.0.1:{self.port}"

    def _wait_ok(self) -> None:
        deadline = time.monotonic() + 30
        for node in self.nodes:
            client = redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True)
            while True:
                info = client.execute_command("CLUSTER", "INFO")
                text = info if isinstance(info, str) else info.decode()
                if "cluster_state:ok" in text and "cluster_known_nodes:" + str(len(self.nodes)) in text:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cluster did not reach cluster_state:ok:\n{text}")
                time.sleep(0.05)
            client.close()

    def close(self) -> None:
        for node in self.nodes:
            node.close()
