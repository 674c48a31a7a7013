"""Which local process holds a TCP socket, read from Linux's ``/proc`` (the class guard's way from a
loopback socket that never logged in to the process behind it), and :func:`kill_holders`.

``/proc/net/tcp`` (``tcp6``) names the inode of the socket on a port; its holder has a link
``socket:[<inode>]`` in ``/proc/<pid>/fd``. Linux-only, and never raises: where ``/proc`` cannot be
read (elsewhere, another user's processes) it finds nothing."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PROC = "/proc"
#: The variable JupyterHub puts in a single-user server's environment: the hub user it runs for.
HUB_USER_ENV = "JUPYTERHUB_USER"
#: Processes up the tree :func:`learner` looks at, at most (a kernel's sandbox is three below the server).
DEPTH = 12
#: Sockets not logged in past their grace that one local process (or one hub user's processes) may hold
#: before ``kill_local`` kills it: twice a kernel's connections, half the quota (an emq-lab client logs in
#: at once). One process holding that many not logged in at once, young or not, is killed too.
KILL_AT = 16
#: Command names of the server, never killed.
SERVERS = ("valkey-server", "redis-server")


def _tcp_inodes(ports: set[int], peer: int | None, proc: str) -> set[int]:
    """The inodes of the TCP sockets whose local port is in ``ports`` (and remote port ``peer``, if given)."""
    inodes: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            with open(os.path.join(proc, "net", table), encoding="ascii", errors="replace") as rows:
                next(rows, None)  # the header
                for row in rows:
                    fields = row.split()
                    if len(fields) < 10:
                        continue
                    try:
                        local = int(fields[1].rpartition(":")[2], 16)
                        remote = int(fields[2].rpartition(":")[2], 16)
                        inode = int(fields[9])
                    except ValueError:
                        continue
                    if inode and local in ports and (peer is None or remote == peer):
                        inodes.add(inode)
        except OSError:
            continue
    return inodes


def holders(ports: Iterable[int], *, peer: int | None = None, proc: str = PROC) -> dict[int, int]:
    """``{pid: sockets held}`` of the processes holding TCP sockets on one of ``ports`` (to ``peer``, if given)."""
    wanted = {int(port) for port in ports}
    if not wanted or not sys.platform.startswith("linux"):
        return {}
    inodes = _tcp_inodes(wanted, peer, proc)
    if not inodes:
        return {}
    found: dict[int, int] = {}
    pids: list[int] = []
    with contextlib.suppress(OSError):
        pids = [int(name) for name in os.listdir(proc) if name.isdigit()]
    for pid in pids:
        folder = os.path.join(proc, str(pid), "fd")
        try:
            names = os.listdir(folder)
        except OSError:  # gone, or another user's
            continue
        held = 0
        for name in names:
            try:
                link = os.readlink(os.path.join(folder, name))
            except OSError:
                continue
            if link.startswith("socket:[") and link[8:-1].isdigit() and int(link[8:-1]) in inodes:
                held += 1
        if held:
            found[pid] = held
    return found


def _read(pid: int, name: str, proc: str) -> bytes:
    """The file ``/proc/<pid>/<name>``, or nothing when it cannot be read (gone, or another user's)."""
    try:
        with open(os.path.join(proc, str(pid), name), "rb") as file:
            return file.read()
    except OSError:
        return b""


def command(pid: int, *, proc: str = PROC) -> str:
    """The process's command name (``/proc/<pid>/comm``), or ``""``."""
    return _read(pid, "comm", proc).decode("utf-8", "replace").strip()


def parent(pid: int, *, proc: str = PROC) -> int:
    """The process's parent pid (``/proc/<pid>/stat``), or 0."""
    after = _read(pid, "stat", proc).rpartition(b")")[2].split()  # the command, in parentheses, may hold spaces
    try:
        return int(after[1])
    except (IndexError, ValueError):
        return 0


def ancestors(pid: int, *, proc: str = PROC) -> list[int]:
    """The process's parent, its parent's parent, ... up to pid 1 (those ``/proc`` shows)."""
    found: list[int] = []
    here = parent(pid, proc=proc)
    while here > 0 and here not in found and len(found) < 64:
        found.append(here)
        here = parent(here, proc=proc)
    return found


def learner(pid: int, *, proc: str = PROC) -> str | None:
    """The hub user a process runs for: :data:`HUB_USER_ENV` in the environment it or its nearest ancestor had."""
    key = HUB_USER_ENV.encode() + b"="
    for here in [pid, *ancestors(pid, proc=proc)][: DEPTH + 1]:
        for entry in _read(here, "environ", proc).split(b"\0"):
            if entry.startswith(key):
                return entry[len(key) :].decode("utf-8", "replace") or None
    return None


@dataclass(frozen=True)
class Killed:
    """One local process the guard killed, the sockets it held that the guard closed, and for whom."""

    pid: int
    command: str
    sockets: int
    hub_user: str | None = None  # None: not known
    suspended: str | None = None  # the ACL user suspended for it
    why: str = "login"  # "login": never logged in; "password": trying passwords


def loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (an IPv4-mapped one too)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def port(addr: str) -> int:
    """The port of a ``CLIENT LIST`` address, or 0."""
    try:
        return int(addr.rpartition(":")[2])
    except ValueError:
        return 0


def local_holders(entries: Iterable[Mapping[str, Any]], ids: Iterable[int]) -> dict[int, int]:
    """``{pid: sockets}`` of the local processes holding the client end of the loopback connections ``ids``."""
    wanted = {str(ident) for ident in ids}
    local = [e for e in entries if str(e.get("id", "")) in wanted and loopback(host(str(e.get("addr", ""))))]
    ports = {port(str(e.get("addr", ""))) for e in local} - {0}
    if not ports:
        return {}
    served = {port(str(e.get("laddr", ""))) for e in local} - {0}
    return holders(ports, peer=served.pop() if len(served) == 1 else None)


def host(addr: str) -> str:
    """The host of a ``CLIENT LIST`` address (``127.0.0.1:5001`` -> ``127.0.0.1``)."""
    return addr.rpartition(":")[0] or addr


def kill_holders(held: dict[int, int], *, kill_at: int = KILL_AT, why: str = "login") -> list[Killed]:
    """The processes of ``held`` killed (``SIGKILL``) for ``kill_at`` sockets, alone or with their hub user's
    others; never this process, its ancestors (the hub, the shell) or the server."""
    spared = {os.getpid(), *ancestors(os.getpid())}
    users = {pid: learner(pid) for pid in held if pid not in spared}
    per_user: Counter[str | None] = Counter()
    for pid, user in users.items():
        per_user[user] += held[pid]
    killed: list[Killed] = []
    for pid, user in sorted(users.items()):
        if held[pid] < kill_at and (user is None or per_user[user] < kill_at):
            continue
        name = command(pid)
        if name in SERVERS:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # gone meanwhile, or another Unix user's
            continue
        killed.append(Killed(pid, name, held[pid], user, why=why))
    return killed
