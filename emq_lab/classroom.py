"""A class on one Valkey: one ACL user and one namespace per learner, and the instructor's overview.

``python -m emq_lab.classroom users --url redis://127.0.0.1:6379/0 --learners 30`` creates the
users ``learner01`` ... ``learner30``; each may run only the commands emq-lab sends (scripts
included) and only on the keys of its own namespace (``emq:ns:{learner07:*``), so no learner can
read, write or delete another's keys, by hand or from a script. It prints, for each learner, the
``EMQ_LAB_URL`` and ``EMQ_LAB_NAMESPACE`` to hand out; that printout is the only place the random
passwords appear. ``revoke`` removes the users again; ``overview`` prints what the instructor's
panel shows.
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from redis import RedisCluster

from . import keys, validate
from .backend import open_client
from .dives import QUEUES

MAX_LEARNERS = 500
SCAN_COUNT = 500
MAX_SCANNED = 100_000

# What emq-lab sends from Python, and nothing else. Connection: PING and HELLO, CLIENT SETINFO
# (redis-py names itself on connect). Scripts: EVALSHA (EVAL for a learner's own script in an
# exercise), SCRIPT LOAD/EXISTS (redis-py's Script and pipelines). The reads of the verbs,
# keys() and the panels; DEL/UNLINK for reset and the crash dive, LTRIM for the fast-forward's
# clean-up (Jobs.trim); SCRIPT KILL for the exercises' watchdog, which stops a learner's endless
# loop (it would block every learner on the server). Cluster clients also ask for the slot map
# and the command table.
CLIENT_COMMANDS: tuple[str, ...] = (
    "ping", "hello", "client|setinfo",
    "evalsha", "eval", "script|load", "script|exists",
    "zrange", "zrangebyscore", "zcard", "zscore", "hgetall", "hmget", "lrange", "llen", "exists", "type",
    "del", "unlink", "ltrim", "script|kill",
    "cluster|slots", "cluster|shards", "cluster|nodes", "command",
)  # fmt: skip

_CALL = re.compile(r"""redis\.p?call\(\s*['"]([A-Za-z]+)['"]""")


def script_commands() -> tuple[str, ...]:
    """Every command the Lua scripts call (the ACL checks each call inside a script again), read
    from the scripts themselves so a script that starts using a command cannot be forgotten here."""
    root = resources.files("emq_lab.scripts")
    sources = [entry for entry in root.iterdir() if entry.name.endswith(".lua")]
    for folder in ("contrast", "fast"):
        sources += [entry for entry in root.joinpath(folder).iterdir() if entry.name.endswith(".lua")]
    return tuple(sorted({m.lower() for entry in sources for m in _CALL.findall(entry.read_text(encoding="utf-8"))}))


ALLOWED_COMMANDS: tuple[str, ...] = tuple(dict.fromkeys((*CLIENT_COMMANDS, *script_commands())))

# The queues each dive's notebook uses: a learner "got to" a dive when one of them exists.
# Each dive and the queues its notebook uses: the dives' own list, so the two never disagree.
DIVES: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (f"{number:02d} {dive}", queues) for number, (dive, queues) in enumerate(QUEUES.items(), start=1)
)


@dataclass(frozen=True)
class Learner:
    """One learner's account: the ACL user (also the namespace) and its password."""

    name: str
    password: str

    @property
    def namespace(self) -> str:
        return self.name

    def url(self, server_url: str) -> str:
        """``server_url`` with this learner's user and password in place of any credentials."""
        parts = urlsplit(server_url)
        host = parts.hostname or "127.0.0.1"
        where = f"[{host}]" if ":" in host else host
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{quote(self.name, safe='')}:{quote(self.password, safe='')}@{where}{port}"
        return urlunsplit(parts._replace(netloc=netloc, path=parts.path or "/0"))

    def env(self, server_url: str) -> str:
        """The two variables this learner sets (shell syntax)."""
        return f"EMQ_LAB_URL='{self.url(server_url)}' EMQ_LAB_NAMESPACE={self.namespace}"


def learner_names(prefix: str, learners: int) -> list[str]:
    """``prefix01`` ... (zero-padded to the width of ``learners``, at least two digits)."""
    if isinstance(learners, bool) or not isinstance(learners, int) or not 1 <= learners <= MAX_LEARNERS:
        raise ValueError(f"learners: expected an int from 1 to {MAX_LEARNERS}, got {learners!r}")
    width = max(2, len(str(learners)))
    names = [f"{prefix}{i:0{width}d}" for i in range(1, learners + 1)]
    for name in names:
        validate.namespace(name)  # the prefix must leave names a namespace may have
    return names


def acl_rules(namespace: str, password: str) -> list[str]:
    """The ``ACL SETUSER`` rules of a learner: start from nothing, switch on, one password, the
    namespace's key pattern, no channels, no commands but :data:`ALLOWED_COMMANDS`."""
    return [
        "reset",
        "on",
        f">{password}",
        f"~{keys.namespace_pattern(validate.namespace(namespace))}",
        "resetchannels",
        "-@all",
        *(f"+{command}" for command in ALLOWED_COMMANDS),
    ]


def _on_every_node(client: Any, *args: Any) -> Any:
    """Run an ACL command on every node of a cluster (users are per node), else on the server."""
    if isinstance(client, RedisCluster):
        return client.execute_command(*args, target_nodes=RedisCluster.ALL_NODES)
    return client.execute_command(*args)


def create_users(client: Any, *, learners: int, prefix: str = "learner") -> list[Learner]:
    """One ACL user per learner with a fresh random password (running it again rotates them)."""
    created = []
    for name in learner_names(prefix, learners):
        learner = Learner(name, secrets.token_urlsafe(18))
        _on_every_node(client, "ACL", "SETUSER", name, *acl_rules(learner.namespace, learner.password))
        created.append(learner)
    return created


def existing_users(client: Any, *, prefix: str = "learner") -> list[str]:
    """The server's ACL users named ``<prefix><digits>`` (what :func:`create_users` made)."""
    validate.namespace(prefix)
    users = client.execute_command("ACL", "USERS")
    if isinstance(users, dict):  # a cluster client answers per node
        users = sorted({user for per_node in users.values() for user in per_node})
    named = re.compile(re.escape(prefix) + r"\d+")
    return sorted(user for user in users if named.fullmatch(user))


def revoke_users(client: Any, *, prefix: str = "learner") -> list[str]:
    """Delete the learners' ACL users (their connections are closed); their keys stay."""
    users = existing_users(client, prefix=prefix)
    if users:
        _on_every_node(client, "ACL", "DELUSER", *users)
    return users


# -- the instructor's overview ------------------------------------------------------------------


@dataclass(frozen=True)
class QueueSummary:
    """One learner's queue: its registry size, jobs waiting and how many keys it has."""

    queue: str
    registrations: int
    waiting: int
    keys: int


@dataclass(frozen=True)
class LearnerSummary:
    namespace: str
    queues: tuple[QueueSummary, ...]

    @property
    def dives(self) -> tuple[str, ...]:
        """The dives whose queues exist in this namespace, in course order."""
        present = {q.queue for q in self.queues}
        return tuple(dive for dive, names in DIVES if present.intersection(names))


@dataclass(frozen=True)
class Overview:
    """Every namespace found, and whether the scan saw the whole server (``complete``)."""

    learners: tuple[LearnerSummary, ...]
    scanned: int
    complete: bool

    def lines(self) -> list[str]:
        if not self.learners:
            lines = ["no learner has a key yet"]
        else:
            lines = []
            for learner in self.learners:
                got = ", ".join(learner.dives) or "no dive yet"
                lines.append(f"{learner.namespace}: {len(learner.queues)} queue(s) · dives: {got}")
                lines += [
                    f"  {q.queue:<14} registry {q.registrations:>3} · waiting {q.waiting:>4} · keys {q.keys:>4}"
                    for q in learner.queues
                ]
        if not self.complete:
            lines.append(f"(stopped after {self.scanned} keys: the list may be incomplete)")
        return lines

    @property
    def readout(self) -> str:
        return "\n".join(self.lines())


def overview(client: Any, *, prefix: str = "", count: int = SCAN_COUNT, max_keys: int = MAX_SCANNED) -> Overview:
    """Every namespace starting with ``prefix`` and its queues, found by SCAN (``count`` keys a
    step, at most ``max_keys`` in all; never KEYS), then one pipelined ZCARD and LLEN per queue."""
    if prefix:
        validate.namespace(prefix)
    validate.limit(count, field="count")
    validate.limit(max_keys, field="max_keys")
    found: dict[tuple[str, str], int] = {}
    scanned = 0
    complete = True
    for key in client.scan_iter(match=keys.namespaces_pattern(prefix), count=count):
        if scanned >= max_keys:
            complete = False
            break
        scanned += 1
        parts = keys.split_namespaced(key)
        if parts is not None:
            namespace, queue, _ = parts
            found[(namespace, queue)] = found.get((namespace, queue), 0) + 1
    ordered = sorted(found)
    pipe = client.pipeline(transaction=False)
    for namespace, queue in ordered:
        k = keys.QueueKeys(queue, namespace)
        pipe.zcard(k.registry)
        pipe.llen(k.wait)
    replies = pipe.execute() if ordered else []
    by_namespace: dict[str, list[QueueSummary]] = {}
    for i, (namespace, queue) in enumerate(ordered):
        summary = QueueSummary(queue, int(replies[2 * i]), int(replies[2 * i + 1]), found[(namespace, queue)])
        by_namespace.setdefault(namespace, []).append(summary)
    learners = tuple(LearnerSummary(ns, tuple(qs)) for ns, qs in sorted(by_namespace.items()))
    return Overview(learners, scanned, complete)


# -- the command line ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m emq_lab.classroom",
        description="Set up a class on one Valkey: one ACL user and namespace per learner.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    users = commands.add_parser(
        "users",
        help="create (or re-create, with new passwords) one ACL user per learner and print their settings",
        description="Create one ACL user per learner, limited to its namespace's keys and emq-lab's "
        "commands, and print each learner's EMQ_LAB_URL and EMQ_LAB_NAMESPACE (the only copy of the passwords).",
    )
    users.add_argument("--url", required=True, help="the server, as a user allowed to run ACL SETUSER")
    users.add_argument("--learners", type=int, required=True, help=f"how many learners (1 to {MAX_LEARNERS})")
    users.add_argument(
        "--prefix", default="learner", help="user and namespace names: <prefix>01, ... (default: learner)"
    )
    revoke = commands.add_parser("revoke", help="delete the learners' ACL users (their keys stay)")
    revoke.add_argument("--url", required=True, help="the server, as a user allowed to run ACL DELUSER")
    revoke.add_argument("--prefix", default="learner", help="delete the users <prefix><digits> (default: learner)")
    show = commands.add_parser("overview", help="print every learner's queues, registry sizes and dives")
    show.add_argument("--url", required=True, help="the server, as a user allowed to SCAN every key")
    show.add_argument("--prefix", default="", help="only namespaces starting with this (default: all)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        client, _ = open_client(args.url)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        if args.command == "users":
            learners = create_users(client, learners=args.learners, prefix=args.prefix)
            print(f"# {len(learners)} learner(s); each sets these two variables, then runs make lab")
            for learner in learners:
                print(f"{learner.name}: {learner.env(args.url)}")
        elif args.command == "revoke":
            removed = revoke_users(client, prefix=args.prefix)
            print(f"removed {len(removed)} user(s)" + (f": {' '.join(removed)}" if removed else ""))
        else:
            print(overview(client, prefix=args.prefix).readout)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
