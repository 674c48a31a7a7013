"""The class guard: one learner may not hold the class server's connections or its memory.

A sweep reads ``CLIENT LIST`` (as an admin) and closes, with ``CLIENT KILL ID``:
- a learner's connections past its quota (the newest first: the oldest are its notebooks' own);
  that learner is also suspended: ``ACL SETUSER <learner> off`` and all of its connections
  closed (a loop that reconnects at once would otherwise keep ``maxclients`` full), and a sweep
  after ``cooldown_s`` seconds turns it on again (the suspensions are kept in
  :func:`emq_lab.keys.guard_suspended`),
- any connection holding a huge reply (``omem`` or ``tot-mem`` past ``max_reply`` bytes: replies
  asked for and never read, which count against ``maxmemory`` like keys),
- connections still not logged in ``grace_s`` seconds or more after they were accepted, when the
  default user is off (so every connection whose user is ``default`` has not logged in): a socket
  opened to fill ``maxclients``, or to try passwords. The server counts a connection's ``age`` in
  whole seconds from the second it was accepted (Valkey 8.0 shows ``age=1`` 7 ms after an accept
  at a second's end), so the guard waits for ``age > grace_s``: a client in its handshake
  (connect, then AUTH at once) is never closed,
- a connection that failed to log in ``max_failed`` times or more since the last sweep, counted
  from the server's ``ACL LOG`` (its ``auth`` entries: the user tried, how many times, and the
  client-info of the last try), and every other connection from that address whose login failed.
  It counts failures, not time: a learner whose old password fails a few times is left alone.

Under memory pressure (a primary's ``used_memory`` at 80% of its ``maxmemory`` or more) it walks the
learners' keys there (in the server, a Lua call per 1,000 keys), and each learner holding more than its
share (``maxmemory`` divided by the learners) is freed of its biggest keys (``UNLINK``) until it holds
no more (if those are not enough, of all its keys but its progress; its progress last), and suspended
like a learner past its quota (:mod:`emq_lab.classroom.memory`). The walk comes after the connections
are closed and before any write (a full server refuses them); a long one closes connections again
every 100 calls.
A learner whose commands on big keys of its own held the server
:data:`~emq_lab.classroom.slow.MAX_HOLD_MS` ms or more in all within the window (the server's
``SLOWLOG``: a read of all of a huge list, which no ACL rule bounds, or many at once), or whose
command had :data:`~emq_lab.classroom.slow.MAX_ARGS` arguments or more, is suspended too, so such a
hold happens once, not in a loop (:mod:`emq_lab.classroom.slow`). ``ACL LOG`` and ``SLOWLOG`` are
read raw (anyone may try a username, and a learner may send arguments, of bytes that are not UTF-8).

With ``kill_local`` (the ``hub`` command's guard on a class server on this machine; ``guard
--kill-local``), it also stops the processes behind the sockets it closes unlogged: for those from a
loopback address (so from this machine, when the server runs here too) it finds, on Linux, the local
process holding each and kills every one holding :data:`~emq_lab.classroom.sockets.KILL_AT` or more,
or whose hub user's processes together hold that many
(:func:`emq_lab.classroom.sockets.kill_holders`), and every one holding that many not logged in at
once, whatever their age (young ones too, inside the grace: a process closing each itself before the
guard would; counted per process, never per hub user: a client in its handshake holds one or a few,
briefly), never the guard's own process, its ancestors (the hub) or the server. It names the hub
user when the process or one of its ancestors started with ``JUPYTERHUB_USER`` (a learner's server
sets it) and suspends that learner's ACL user (``<prefix><hub user>``) as past its quota. A
learner's processes each under the hub's open-files limit would otherwise hold ``maxclients``
between them. It kills, the same way, the local process behind a loopback socket trying passwords
(one is enough: it failed ``max_failed`` logins since the last sweep), never one whose login failed
only a few times from the same address.

It also counts the connections the server refused at ``maxclients`` since the last sweep (``INFO
stats`` ``rejected_connections``). It writes one line per learner and reason (and one for the
refusals) to :func:`emq_lab.keys.guard_log` (capped), which the instructor's page shows. While
connections are being refused or closed unlogged, :func:`watch` sweeps every
:data:`FLOOD_EVERY_S` seconds instead of every second. Run it from the hub (:func:`watch`, a
loop) or from the instructor's page (``ClassroomPanel(..., guard=True)``, once per refresh);
either way it needs the admin. The server's own limits (``doctor``) bound what happens between
two sweeps, and on a hub each process of a learner may hold only so many sockets
(:data:`emq_lab.classroom.hub.OPEN_FILES`). Without ``kill_local`` (or from another machine), a
process that opens them again as fast as the guard closes them, or closes each itself within the
grace, keeps ``maxclients`` full; with it, a local one lives until the next sweep."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from redis import RedisCluster
from redis.exceptions import OutOfMemoryError, RedisError

from .. import keys, validate
from ..clock import hhmmss
from . import memory, slow, sockets
from .logins import ACL_LOG_ENTRIES, MAX_FAILED, failed_logins, number
from .users import default_user, learner_test

#: Connections one learner may hold: a dive's kernel holds up to 7 (bench/README.md), and a learner
#: may have four notebooks open.
QUOTA = 32
#: Bytes of unread reply (``omem``) or of all buffers (``tot-mem``) past which a connection is closed.
MAX_REPLY = 32 * 2**20
#: Seconds a connection may stay unauthenticated (the default user off) before it is closed: at least
#: this long (the server's ``age`` past it), at most this plus one and a sweep.
GRACE_S = 1
#: Seconds between sweeps while a flood lasts (the last sweep closed unlogged connections, or the server
#: refused some at ``maxclients``).
FLOOD_EVERY_S = 0.2
#: Seconds a learner past its quota stays suspended (its ACL user off).
COOLDOWN_S = 30
#: Lines the guard's log keeps.
LOG_LINES = 50


@dataclass(frozen=True)
class Closed:
    """One connection the guard closed: its id, user, address and why."""

    id: int
    user: str
    addr: str
    why: str  # "quota", "reply", "login" or "password"


@dataclass(frozen=True)
class Sweep:
    """What one sweep saw and did: connections per user, the ones it closed, and when (server time)."""

    clients: int
    per_user: dict[str, int] = field(default_factory=dict)
    closed: tuple[Closed, ...] = ()
    at_ms: int = 0
    quota: int = QUOTA
    max_reply: int = MAX_REPLY
    note: str = ""
    grace_s: int = GRACE_S
    suspended: tuple[str, ...] = ()  # learners this sweep turned off
    resumed: tuple[str, ...] = ()  # learners this sweep turned on again
    cooldown_s: int = COOLDOWN_S
    failed_logins: dict[str, int] = field(default_factory=dict)  # user tried -> failures since the last sweep
    max_failed: int = MAX_FAILED
    refused: int = 0  # connections the server refused at maxclients since the last sweep
    unlogged: int = 0  # connections not logged in (any age) this sweep saw
    killed: tuple[sockets.Killed, ...] = ()  # local processes killed for the sockets not logged in they held
    memory: tuple[memory.Pressed, ...] = ()  # primaries under memory pressure this sweep walked
    held: tuple[slow.Slow, ...] = ()  # learners' commands that held the server max_hold_ms or more in all
    max_hold_ms: int = slow.MAX_HOLD_MS

    @property
    def flooded(self) -> bool:
        """Whether this sweep met a flood: connections refused at ``maxclients``, or unlogged ones closed."""
        return self.refused > 0 or any(closed.why == "login" for closed in self.closed)

    def lines(self) -> list[str]:
        """One sentence per user and reason: ``09:41:03 closed 120 connection(s) of learner07 (past its quota
        of 32); learner07 suspended for 30 s``; connections not logged in by how many and from where."""
        groups: dict[tuple[str, str], int] = {}
        strangers: dict[str, int] = {}
        guessers: dict[str, int] = {}
        for closed in self.closed:
            if closed.why in ("login", "password"):
                host = sockets.host(closed.addr)
                into = strangers if closed.why == "login" else guessers
                into[host] = into.get(host, 0) + 1
            else:
                groups[(closed.user, closed.why)] = groups.get((closed.user, closed.why), 0) + 1
        when = hhmmss(self.at_ms)
        why = {
            "quota": f"past its quota of {self.quota}",
            "reply": f"holding more than {self.max_reply // 2**20} MiB of replies it did not read",
        }
        lines = [
            f"{when} closed {count} connection(s) of {user} ({why[reason]})"
            for (user, reason), count in sorted(groups.items())
        ]
        lines += [
            f"{when} suspended {user} for {self.cooldown_s} s (its user off, all its connections closed)"
            for user in self.suspended
            if user not in {held.user for held in self.held}
        ]
        lines += slow.lines(when, self.held, cooldown_s=self.cooldown_s, max_hold_ms=self.max_hold_ms)
        if strangers:
            hosts = ", ".join(f"{host} ({count})" for host, count in sorted(strangers.items())[:5])
            more = f" and {len(strangers) - 5} more address(es)" if len(strangers) > 5 else ""
            lines.append(
                f"{when} closed {sum(strangers.values())} connection(s) not logged in after {self.grace_s} s, "
                f"from {hosts}{more}"
            )
        if self.refused:
            lines.append(
                f"{when} the server refused {self.refused:,} new connection(s) at maxclients since the last sweep "
                f"({self.unlogged:,} connection(s) not logged in now)"
            )
        tried = ", ".join(f"{user[:40]} {count:,}" for user, count in sorted(self.failed_logins.items())[:5])
        failures = f"{sum(self.failed_logins.values()):,} failed logins since the last sweep: {tried}"
        if guessers:
            hosts = ", ".join(f"{host} ({count})" for host, count in sorted(guessers.items())[:5])
            shut = sum(guessers.values())
            lines.append(f"{when} closed {shut} connection(s) trying passwords ({failures}), from {hosts}")
        elif self.failed_logins:  # each try on a connection of its own, gone before the sweep: said, not stopped
            lines.append(f"{when} {failures}, each connection gone before the sweep (nothing to close)")
        for gone in self.killed:
            whose = f" of hub user {gone.hub_user[:40]}" if gone.hub_user else ""
            doing = "not logged in" if gone.why == "login" else "trying passwords"  # young ones too, any age
            lines.append(
                f"{when} killed process {gone.pid} ({gone.command[:40] or '?'}){whose}, holding {gone.sockets} "
                f"socket(s) {doing}"
            )
        lines += [line for pressed in self.memory for line in pressed.lines(when, self.cooldown_s)]
        lines += [f"{when} {user} may connect again (suspension over)" for user in self.resumed]
        return lines


def _nodes(client: Any) -> list[Any]:
    """A plain client per primary of a cluster (connections are per node), else the client."""
    if isinstance(client, RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


def choose(
    entries: Iterable[dict[str, Any]],
    *,
    me: int,
    learner: Callable[[str], bool],
    quota: int = QUOTA,
    max_reply: int = MAX_REPLY,
    login_open: bool = False,
    grace_s: int = GRACE_S,
    guessing: Iterable[int] = (),
) -> list[Closed]:
    """The connections of ``CLIENT LIST`` (parsed) to close: never ``me``; a huge reply whoever holds
    it; the ids in ``guessing`` (trying passwords: :func:`failed_logins`) and, when ``login_open``
    (the default user is off, so no one may stay as it), every one from their addresses whose
    login failed; a learner's (``learner(user)``) past ``quota``, the newest first; unauthenticated
    ones when ``login_open`` and their ``age`` is past ``grace_s`` (the server counts whole seconds
    from the second of the accept, so an ``age`` of ``grace_s`` may be a few ms)."""
    validate.integer(quota, "quota", 1, unit=" connection(s)")
    validate.integer(max_reply, "max_reply", 1, unit=" byte(s)")
    closing: dict[int, Closed] = {}
    mine: dict[str, list[dict[str, Any]]] = {}
    entries = list(entries)
    guessers = set(guessing) - {me}
    hosts = {sockets.host(str(entry.get("addr", ""))) for entry in entries if number(entry, "id") in guessers}
    for entry in entries:
        ident, user = number(entry, "id"), str(entry.get("user", ""))
        if ident == me:
            continue
        if max(number(entry, "omem"), number(entry, "tot-mem")) > max_reply:
            closing[ident] = Closed(ident, user, str(entry.get("addr", "")), "reply")
        elif ident in guessers or (login_open and _failed(entry) and sockets.host(str(entry.get("addr", ""))) in hosts):
            closing[ident] = Closed(ident, user, str(entry.get("addr", "")), "password")
        elif login_open and user == "default" and number(entry, "age") > grace_s:
            closing[ident] = Closed(ident, user, str(entry.get("addr", "")), "login")
        elif learner(user):
            mine.setdefault(user, []).append(entry)
    for user, held in mine.items():
        held.sort(key=lambda entry: number(entry, "id"))  # the oldest stay
        for entry in held[quota:]:
            closing[number(entry, "id")] = Closed(number(entry, "id"), user, str(entry.get("addr", "")), "quota")
    return sorted(closing.values(), key=lambda closed: closed.id)


def _failed(entry: dict[str, Any]) -> bool:
    """A connection whose last command was a login and that is still not logged in (the default
    user off): its login failed. One opened a moment ago, mid-handshake, has sent no command yet."""
    return str(entry.get("user", "")) == "default" and str(entry.get("cmd", "")) in ("auth", "hello")


def sweep(
    admin: Any,
    *,
    quota: int = QUOTA,
    max_reply: int = MAX_REPLY,
    prefix: str = "learner",
    grace_s: int = GRACE_S,
    cooldown_s: int = COOLDOWN_S,
    log: bool = True,
    max_failed: int = MAX_FAILED,
    kill_local: bool = False,
    kill_at: int = sockets.KILL_AT,
    max_hold_ms: int = slow.MAX_HOLD_MS,
) -> Sweep:
    """Turn on again the learners whose suspension is over, read ``ACL LOG`` (the failed logins
    since the last sweep: :func:`failed_logins`) and ``CLIENT LIST`` on every primary, close what
    :func:`choose` picks (users named ``prefix...`` are learners), suspend for ``cooldown_s``
    seconds each learner past its quota or whose commands held the server ``max_hold_ms`` or more in
    all (:func:`slow.holds`), with ``kill_local`` kill the local processes holding ``kill_at`` or more
    of the loopback sockets it closes unlogged (:func:`sockets.kill_holders`), or, one process alone,
    of all not logged in now (only where the server runs on this machine: a loopback address is then
    this machine's), under memory pressure free
    and suspend each learner past its share (:func:`memory.relieve`), and log it all; returns what
    it saw and did."""
    validate.integer(kill_at, "kill_at", 1, unit=" socket(s)")
    validate.integer(max_hold_ms, "max_hold_ms", 1, unit=" ms")
    seen = 0
    per_user: dict[str, int] = {}
    closed: list[Closed] = []
    login_open = "on" not in default_user(admin)
    seconds, micros = _node_time(admin)
    now_ms = seconds * 1000 + micros // 1000
    resumed = _resume(admin, now_ms)
    seen_logins = {str(k): int(v) for k, v in admin.hgetall(keys.guard_logins()).items()}
    counted: dict[str, int] = {}
    tried: dict[str, int] = {}
    refused = 0
    held: dict[int, int] = {}  # local pid -> loopback sockets not logged in past the grace
    trying: dict[int, int] = {}  # local pid -> loopback sockets that failed max_failed logins or more
    waiting: dict[int, int] = {}  # local pid -> loopback sockets not logged in now, whatever their age
    holds: list[slow.Slow] = []

    def pick(node: Any, entries: list[dict[str, Any]], guessing: Iterable[int] = ()) -> list[Closed]:
        return choose(entries, me=int(node.client_id()), learner=learner_test(prefix), quota=quota,
                      max_reply=max_reply, login_open=login_open, grace_s=grace_s, guessing=guessing)  # fmt: skip

    for index, node in enumerate(_nodes(admin)):
        rejected = number(node.info("stats"), "rejected_connections")
        # Kept once there is one, so a sweep of a quiet class writes nothing; none kept counts as 0
        # (a guard's first sweep of a server that refused connections before it says so once).
        if rejected:
            counted[f"refused:{index}"] = rejected
        before = seen_logins.get(f"refused:{index}", 0)
        refused += rejected - before if rejected >= before else rejected  # smaller: the server restarted
        # Read raw, and decoded with U+FFFD for what is not UTF-8 (redis-py's ACL LOG parser does): anyone
        # may try a username of any bytes, and a decoding error would stop every sweep.
        acl_entries = node.acl_log(count=ACL_LOG_ENTRIES, NEVER_DECODE=True)
        guessing, failed, now = failed_logins(acl_entries, seen_logins, node=index, max_failed=max_failed)
        counted.update(now)
        for user, failures in failed.items():
            tried[user] = tried.get(user, 0) + failures
        entries = node.client_list()
        seen += len(entries)
        window = min(slow.WINDOW_S, cooldown_s)
        holds += slow.holds(node, entries, prefix, now_s=seconds, max_hold_ms=max_hold_ms, window_s=window)
        for entry in entries:
            per_user[str(entry.get("user", ""))] = per_user.get(str(entry.get("user", "")), 0) + 1
        picked = pick(node, entries, guessing)
        if kill_local:  # waiting: every socket not logged in now, young ones too (inside their grace)
            unlogged = [number(e, "id") for e in entries if login_open and str(e.get("user", "")) == "default"]
            for into, ids in (
                (held, [c.id for c in picked if c.why == "login"]),
                (trying, [c.id for c in picked if c.id in guessing]),
                (waiting, unlogged),
            ):
                for pid, count in sockets.local_holders(entries, ids).items():
                    into[pid] = into.get(pid, 0) + count
        closed += _close(node, picked)

    def meanwhile() -> None:  # during a long memory walk: what choose picks now (no writes, no ACL LOG)
        for node in _nodes(admin):
            closed.extend(_close(node, pick(node, node.client_list())))

    # Memory after the connections closed above (no writes), before every write below: while the
    # server is past maxmemory it refuses them. A long walk closes connections meanwhile.
    pressed = memory.relieve(
        admin, _nodes(admin), prefix=prefix, now_ms=now_ms, cooldown_s=cooldown_s,
        suspend=lambda user: _suspend(admin, user, now_ms + cooldown_s * 1000), meanwhile=meanwhile,
    )  # fmt: skip
    if counted != seen_logins:
        pipe = admin.pipeline(transaction=False)
        pipe.delete(keys.guard_logins())
        if counted:
            pipe.hset(keys.guard_logins(), mapping=counted)
        with contextlib.suppress(OutOfMemoryError):  # still full (no learner past its share): counted again
            pipe.execute()
    killed = sockets.kill_holders(held, kill_at=kill_at) if held else []
    # One process holding kill_at or more at once, young or not, is flooding (a client in its handshake
    # holds one or a few, briefly); counted per process, never per hub user (a learner's kernels connecting).
    flooding = {pid: n for pid, n in waiting.items() if n >= kill_at and pid not in {k.pid for k in killed}}
    killed += sockets.kill_holders(flooding, kill_at=kill_at) if flooding else []
    killed += sockets.kill_holders(trying, kill_at=1, why="password") if trying else []
    if holds:  # a hold seen again at the next sweep: its learner suspended by then
        holds = [hold for hold in holds if hold.user not in suspended(admin)]
    offenders = {closing.user for closing in closed if closing.why == "quota"} | {hold.user for hold in holds}
    for index, gone in enumerate(killed):
        acl = _acl_user(admin, prefix, gone.hub_user)
        if acl is not None:
            offenders.add(acl)
            killed[index] = dataclasses.replace(gone, suspended=acl)
    for user in sorted(offenders):
        _suspend(admin, user, now_ms + cooldown_s * 1000)
    # Failed logins said when a connection was closed for them, or when they reach max_failed in all; a
    # suspended learner's are not counted (its notebooks keep trying to log in until it is back).
    if tried:
        off = suspended(admin)
        tried = {user: count for user, count in tried.items() if user not in off}
    guessed = any(c.why == "password" for c in closed) or sum(tried.values()) >= max_failed
    done = Sweep(
        seen, per_user, tuple(closed), now_ms, quota, max_reply, grace_s=grace_s,
        suspended=tuple(sorted(offenders)), resumed=tuple(resumed), cooldown_s=cooldown_s,
        failed_logins=tried if guessed else {}, max_failed=max_failed,
        refused=refused, unlogged=per_user.get("default", 0) if login_open else 0, killed=tuple(killed),
        memory=pressed, held=tuple(holds), max_hold_ms=max_hold_ms,
    )  # fmt: skip
    if log and (closed or resumed or refused or pressed or holds or guessed or killed):
        done = _log(admin, done)
    return done


def _close(node: Any, picked: list[Closed]) -> list[Closed]:
    """``CLIENT KILL ID`` each of ``picked`` on ``node`` (one already gone is no fault); ``picked``."""
    if picked:
        pipe = node.pipeline(transaction=False)
        for closing in picked:
            pipe.execute_command("CLIENT", "KILL", "ID", closing.id)
        pipe.execute(raise_on_error=False)
    return picked


def _acl_user(admin: Any, prefix: str, hub_user: str | None) -> str | None:
    """The learner's ACL user of ``hub_user`` (``<prefix><hub user>``) if the server has it."""
    if not hub_user or not prefix:
        return None
    try:
        user = validate.namespace(prefix + hub_user)
        return user if _nodes(admin)[0].execute_command("ACL", "GETUSER", user) is not None else None
    except (ValueError, RedisError):
        return None


def _suspend(admin: Any, user: str, until_ms: int) -> None:
    """``user`` off on every primary, the time it comes back kept, then all its connections closed
    (the ones it opens meanwhile are refused at AUTH)."""
    admin.hset(keys.guard_suspended(), user, until_ms)
    for node in _nodes(admin):
        node.execute_command("ACL", "SETUSER", user, "off")
    for node in _nodes(admin):
        with contextlib.suppress(RedisError):
            node.execute_command("CLIENT", "KILL", "USER", user)


def _resume(admin: Any, now_ms: int) -> list[str]:
    """Turn on again each suspended learner whose time is up (one revoked meanwhile stays gone)."""
    due = [str(user) for user, until in admin.hgetall(keys.guard_suspended()).items() if int(until) <= now_ms]
    for user in sorted(due):
        for node in _nodes(admin):
            if node.execute_command("ACL", "GETUSER", user) is not None:
                node.execute_command("ACL", "SETUSER", user, "on")
        admin.hdel(keys.guard_suspended(), user)
    return sorted(due)


def suspended(client: Any) -> dict[str, int]:
    """The learners the guard suspended and when (server ms) each may connect again (a user that
    may not read it: none)."""
    try:
        return {str(user): int(until) for user, until in client.hgetall(keys.guard_suspended()).items()}
    except (RedisError, ValueError):
        return {}


def _node_time(admin: Any) -> tuple[int, int]:
    reply = _nodes(admin)[0].time()
    return int(reply[0]), int(reply[1])


def _log(admin: Any, done: Sweep) -> Sweep:
    """Push the sweep's lines to the guard's log (newest first, :data:`LOG_LINES` kept)."""
    try:
        pipe = admin.pipeline(transaction=False)
        pipe.lpush(keys.guard_log(), *reversed(done.lines()))
        pipe.ltrim(keys.guard_log(), 0, LOG_LINES - 1)
        pipe.execute()
    except RedisError as exc:  # the server still out of memory: the sweep itself says it
        return dataclasses.replace(done, note=f"could not write the guard's log: {str(exc)[:120]}")
    return done


def read_log(client: Any, *, lines: int = 10) -> list[str]:
    """The guard's last ``lines`` lines, newest first (a user that may not read them: none)."""
    try:
        return [str(line)[:300] for line in client.lrange(keys.guard_log(), 0, lines - 1)]
    except RedisError:
        return []


def watch(
    admin: Any,
    stop: threading.Event,
    *,
    every_s: float = 1.0,
    report: Callable[[str], object] | None = None,
    **options: Any,
) -> None:
    """Sweep every ``every_s`` seconds until ``stop`` is set (the hub runs this in a thread, the
    ``guard`` command in the foreground), passing each line a sweep logs to ``report``; a sweep
    that fails (the server down a moment, or anything else) is tried again at the next turn. After a sweep that met
    a flood (:attr:`Sweep.flooded`) the next comes after :data:`FLOOD_EVERY_S` seconds at most, so
    sockets that never log in are closed soon after their grace, not up to a second later."""
    while not stop.is_set():
        wait = every_s
        try:
            done = sweep(admin, **options)
            said = done.lines()
            if done.flooded:
                wait = min(every_s, FLOOD_EVERY_S)
        except Exception as exc:  # noqa: BLE001 - no sweep's fault (a learner's odd input) ends the guard
            said = [f"sweep failed ({type(exc).__name__}), trying again: {validate.shorten(str(exc), 160)}"]
        if report is not None:
            for line in said:
                report(line)
        stop.wait(wait)
