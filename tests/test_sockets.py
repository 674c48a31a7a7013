"""From a client's port to the local process holding its socket (Linux's /proc), and from a process
to the hub user it runs for, on sockets and processes the test makes itself (no server)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from emq_classroom import sockets

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")


@contextmanager
def listening() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    try:
        yield server
    finally:
        server.close()


HOLDER = """
import socket, sys
held = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(int(sys.argv[2]))]
print(" ".join(str(s.getsockname()[1]) for s in held), flush=True)
sys.stdin.read()
"""


def test_holders_finds_this_process_and_a_child_behind_their_client_ports() -> None:
    with listening() as server:
        port = server.getsockname()[1]
        mine = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
        child = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(port), "3"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        accepted = []
        try:
            assert child.stdout is not None
            theirs = [int(word) for word in child.stdout.readline().split()]
            accepted = [server.accept()[0] for _ in range(8)]
            ports = [s.getsockname()[1] for s in mine]
            assert sockets.holders(ports, peer=port) == {os.getpid(): 5}
            assert sockets.holders(ports[:2] + theirs, peer=port) == {os.getpid(): 2, child.pid: 3}
            # The server's end of each connection has the server's port as its local port: not a client's.
            assert sockets.holders(ports, peer=port + 1 if port < 65535 else 1) == {}
            # Without a peer, the server's port finds the server's own sockets (its listener and the 8
            # it accepted): why the guard names the server's port as the peer.
            assert sockets.holders([port]) == {os.getpid(): 9}
            assert sockets.holders([port], peer=port) == {}
            assert sockets.holders([]) == {}
        finally:
            child.communicate("", timeout=30)
            for sock in mine + accepted:
                sock.close()
    assert sockets.command(os.getpid()).startswith("python")


def test_holders_finds_nothing_where_proc_cannot_be_read(tmp_path: Path) -> None:
    with listening() as server:
        client = socket.create_connection(server.getsockname())
        try:
            port = client.getsockname()[1]
            assert sockets.holders([port], proc=str(tmp_path)) == {}
            assert sockets.holders([port], proc=str(tmp_path / "missing")) == {}
            assert sockets.learner(os.getpid(), proc=str(tmp_path)) is None
            assert sockets.command(os.getpid(), proc=str(tmp_path)) == ""
            assert sockets.ancestors(os.getpid(), proc=str(tmp_path)) == []
        finally:
            client.close()


def test_holders_listed_sockets_of_pid_1_it_may_not_read_are_left_out_without_a_fault() -> None:
    """Another Unix user's processes (pid 1, when not root) cannot be read: no fault, no entry."""
    found = sockets.holders(range(1, 65536))  # every port: whatever this user may read
    assert all(isinstance(pid, int) and count >= 1 for pid, count in found.items())
    if os.geteuid() != 0 and not os.access("/proc/1/fd", os.R_OK):
        assert 1 not in found


SHELL = """
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if k != "JUPYTERHUB_USER"}
child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, env=env)
print(child.pid, flush=True)
sys.stdin.read()
child.communicate("")
"""


def test_learner_is_the_hub_user_of_the_process_or_of_its_nearest_ancestor_that_has_it() -> None:
    env = {**os.environ, "JUPYTERHUB_USER": "ada"}
    server = subprocess.Popen(  # a learner's server; its child, a kernel, started without the variable
        [sys.executable, "-c", SHELL], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert server.stdout is not None
        kernel = int(server.stdout.readline())
        assert sockets.learner(server.pid) == "ada"
        assert sockets.parent(kernel) == server.pid
        assert server.pid in sockets.ancestors(kernel) and os.getpid() in sockets.ancestors(kernel)
        assert sockets.learner(kernel) == "ada"
        assert sockets.learner(os.getpid()) == os.environ.get("JUPYTERHUB_USER")
    finally:
        server.communicate("", timeout=30)


def test_holders_reads_tcp6_too_for_clients_of_a_server_on_ipv6_loopback() -> None:
    try:
        server = socket.socket(socket.AF_INET6)
        server.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    server.listen(8)
    port = server.getsockname()[1]
    clients = [socket.create_connection(("::1", port)) for _ in range(3)]
    try:
        ports = [client.getsockname()[1] for client in clients]
        assert sockets.holders(ports, peer=port) == {os.getpid(): 3}
    finally:
        for client in clients:
            client.close()
        server.close()
