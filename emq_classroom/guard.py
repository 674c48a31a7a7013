"""The class guard: one learner may not hold the class server's connections, memory or time.

Each sweep reads ``CLIENT LIST``, ``ACL LOG`` and ``INFO stats`` as an admin and closes (``CLIENT
KILL ID``) a learner's connections past its quota, any connection holding a huge unread reply,
connections not logged in past the grace (the default user off) and connections trying passwords
(:mod:`.logins`). A learner past its quota, past its share of ``maxmemory`` (:mod:`.memory`) or
whose commands held the server too long (:mod:`.slow`) is suspended: its ACL user off, all its
connections closed, until the cooldown is over. With ``kill_local`` it also kills the local
processes behind floods of loopback sockets (:mod:`.sockets`). It writes one line per learner and
reason to :func:`emq_lab.keys.guard_log`, which the instructor's page shows. Between two sweeps
only the server's own limits (``doctor``) hold; without ``kill_local`` a process that reopens
sockets as fast as they close keeps ``maxclients`` full (README, Classroom: known limits)."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import OutOfMemoryError, RedisError

from emq_lab import keys, validate
from emq_lab.clock import hhmmss

from . import memory, slow, sockets
from .logins import ACL_LOG_ENTRIES, MAX_FAILED, failed_logins, number, since
from .users import default_user, has_user, learner_test, primaries

#: Connections one learner may hold: a dive's kernel holds up to 7 (bench/README.md), and a learner
#: may have four notebooks open.
QUOTA = 32
#: Bytes of unread reply (``omem``) or of all buffers (``tot-mem``) past which a connection is closed.
MAX_REPLY = 32 * 2**20
#: Seconds a connection may stay unauthenticated (the default user off) before it is closed: the
#: server counts ``age`` in whole seconds from the second of the accept, so it is closed at ``age >
#: GRACE_S`` and a client in its handshake never is.
GRACE_S = 1
#: Seconds between sweeps while a flood lasts (unlogged connections closed, or refused at ``maxclients``).
FLOOD_EVERY_S = 0.2
#: Seconds a suspended learner stays off.
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
    refused: int = 0  # connections the server refused at maxclients since the last sweep
    unlogged: int = 0  # connections not logged in (any age) this sweep saw
    killed: tuple[sockets.Killed, ...] = ()  # local processes killed for the sockets not logged in they held
    memory: tuple[memory.Pressed, ...] = ()  # primaries under memory pressure this sweep walked
    held: tuple[slow.Slow, ...] = ()  # learners' commands that held the server max_hold_ms or more in all
    max_hold_ms: int = slow.MAX_HOLD_MS

    @property
    def flooded(self) -> bool:
        """Whether connections were refused at ``maxclients`` or unlogged ones closed."""
        return self.refused > 0 or any(closed.why == "login" for closed in self.closed)

    def lines(self) -> list[str]:
        """One sentence per user and reason, e.g. ``09:41:03 closed 120 connection(s) of learner07 (past ...)``."""
        groups = Counter((c.user, c.why) for c in self.closed if c.why in ("quota", "reply"))
        strangers = Counter(sockets.host(c.addr) for c in self.closed if c.why == "login")
        guessers = Counter(sockets.host(c.addr) for c in self.closed if c.why == "password")
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
            more = f" and {len(strangers) - 5} more address(es)" if len(strangers) > 5 else ""
            lines.append(
                f"{when} closed {strangers.total()} connection(s) not logged in after {self.grace_s} s, "
                f"from {_hosts(strangers)}{more}"
            )
        if self.refused:
            lines.append(
                f"{when} the server refused {self.refused:,} new connection(s) at maxclients since the last sweep "
                f"({self.unlogged:,} connection(s) not logged in now)"
            )
        tried = ", ".join(f"{user[:40]} {count:,}" for user, count in sorted(self.failed_logins.items())[:5])
        failures = f"{sum(self.failed_logins.values()):,} failed logins since the last sweep: {tried}"
        if guessers:
            shut = guessers.total()
            lines.append(f"{when} closed {shut} connection(s) trying passwords ({failures}), from {_hosts(guessers)}")
        elif self.failed_logins:  # each try on a connection of its own, gone before the sweep: said, not stopped
            lines.append(f"{when} {failures}, each connection gone before the sweep (nothing to close)")
        for gone in self.killed:
            whose = f" of hub user {gone.hub_user[:40]}" if gone.hub_user else ""
            doing = "not logged in" if gone.why == "login" else "trying passwords"
            lines.append(
                f"{when} killed process {gone.pid} ({gone.command[:40] or '?'}){whose}, holding {gone.sockets} "
                f"socket(s) {doing}"
            )
        lines += [line for pressed in self.memory for line in pressed.lines(when, self.cooldown_s)]
        lines += [f"{when} {user} may connect again (suspension over)" for user in self.resumed]
        return lines


def _hosts(counts: Counter[str]) -> str:
    """The first five hosts and their counts: ``127.0.0.1 (120), 10.0.0.5 (3)``."""
    return ", ".join(f"{host} ({count})" for host, count in sorted(counts.items())[:5])


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
    """The connections of ``CLIENT LIST`` (parsed) to close, never ``me``: a huge reply; trying passwords (``guessing``,
    and, the default user off, failed logins from their hosts); not logged in past ``grace_s``; past the quota."""
    validate.integer(quota, "quota", 1, unit=" connection(s)")
    validate.integer(max_reply, "max_reply", 1, unit=" byte(s)")
    closing: dict[int, Closed] = {}
    mine: dict[str, list[dict[str, Any]]] = {}
    entries = list(entries)
    guessers = set(guessing) - {me}
    hosts = {sockets.host(str(entry.get("addr", ""))) for entry in entries if number(entry, "id") in guessers}
    for entry in entries:
        ident, user, addr = number(entry, "id"), str(entry.get("user", "")), str(entry.get("addr", ""))
        if ident == me:
            continue
        if max(number(entry, "omem"), number(entry, "tot-mem")) > max_reply:
            closing[ident] = Closed(ident, user, addr, "reply")
        elif ident in guessers or (login_open and _failed(entry) and sockets.host(addr) in hosts):
            closing[ident] = Closed(ident, user, addr, "password")
        elif login_open and user == "default" and number(entry, "age") > grace_s:
            closing[ident] = Closed(ident, user, addr, "login")
        elif learner(user):
            mine.setdefault(user, []).append(entry)
    for user, held in mine.items():
        held.sort(key=lambda entry: number(entry, "id"))  # the oldest stay
        for entry in held[quota:]:
            closing[number(entry, "id")] = Closed(number(entry, "id"), user, str(entry.get("addr", "")), "quota")
    return sorted(closing.values(), key=lambda closed: closed.id)


def _failed(entry: dict[str, Any]) -> bool:
    """Whether a connection still not logged in last sent a login: its login failed."""
    return str(entry.get("user", "")) == "default" and str(entry.get("cmd", "")) in ("auth", "hello")


def sweep(
    admin: Any,
    *,
    prefix: str = "learner",
    grace_s: int = GRACE_S,
    log: bool = True,
    kill_local: bool = False,
    kill_at: int = sockets.KILL_AT,
    max_hold_ms: int = slow.MAX_HOLD_MS,
) -> Sweep:
    """One sweep of every primary (users named ``prefix...`` are learners); what it saw and did."""
    validate.integer(kill_at, "kill_at", 1, unit=" socket(s)")
    validate.integer(max_hold_ms, "max_hold_ms", 1, unit=" ms")
    per_user: Counter[str] = Counter()
    closed: list[Closed] = []
    login_open = "on" not in default_user(admin)
    seconds, micros = (int(part) for part in primaries(admin)[0].time())
    now_ms = seconds * 1000 + micros // 1000
    resumed = _resume(admin, now_ms)
    seen_logins = {str(k): int(v) for k, v in admin.hgetall(keys.guard_logins()).items()}
    counted: dict[str, int] = {}
    tried: Counter[str] = Counter()
    refused = 0
    held: Counter[int] = Counter()  # local pid -> loopback sockets not logged in past the grace
    trying: Counter[int] = Counter()  # local pid -> loopback sockets that failed max_failed logins or more
    waiting: Counter[int] = Counter()  # local pid -> loopback sockets not logged in now, whatever their age
    holds: list[slow.Slow] = []

    learner = learner_test(prefix)

    def pick(node: Any, entries: list[dict[str, Any]], guessing: Iterable[int] = ()) -> list[Closed]:
        me = int(node.client_id())
        return choose(entries, me=me, learner=learner, login_open=login_open, grace_s=grace_s, guessing=guessing)

    for index, node in enumerate(primaries(admin)):
        rejected = number(node.info("stats"), "rejected_connections")
        if rejected:  # kept once there is one, so a sweep of a quiet class writes nothing
            counted[f"refused:{index}"] = rejected
        refused += since(rejected, seen_logins.get(f"refused:{index}", 0))
        # Raw, decoded with U+FFFD: anyone may try a username of any bytes, and an error would stop every sweep.
        acl_entries = node.acl_log(count=ACL_LOG_ENTRIES, NEVER_DECODE=True)
        guessing, failed, now = failed_logins(acl_entries, seen_logins, node=index)
        counted.update(now)
        tried.update(failed)
        entries = node.client_list()
        holds += slow.holds(node, entries, prefix, now_s=seconds, max_hold_ms=max_hold_ms)
        per_user.update(str(entry.get("user", "")) for entry in entries)
        picked = pick(node, entries, guessing)
        if kill_local:
            unlogged = [number(e, "id") for e in entries if login_open and str(e.get("user", "")) == "default"]
            held.update(sockets.local_holders(entries, [c.id for c in picked if c.why == "login"]))
            trying.update(sockets.local_holders(entries, [c.id for c in picked if c.id in guessing]))
            waiting.update(sockets.local_holders(entries, unlogged))
        closed += _close(node, picked)

    def meanwhile() -> None:  # during a long memory walk: what choose picks now (no writes, no ACL LOG)
        for node in primaries(admin):
            closed.extend(_close(node, pick(node, node.client_list())))

    # Memory after the connections closed above, before every write below: a server past maxmemory refuses them.
    until_ms = now_ms + COOLDOWN_S * 1000
    pressed = memory.relieve(
        admin, primaries(admin), prefix=prefix, now_ms=now_ms, cooldown_s=COOLDOWN_S,
        suspend=lambda user: _suspend(admin, user, until_ms), meanwhile=meanwhile,
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
        _suspend(admin, user, until_ms)
    # A suspended learner's failed logins are not counted (its notebooks keep trying until it is back).
    if tried:
        off = suspended(admin)
        tried = Counter({user: count for user, count in tried.items() if user not in off})
    guessed = any(c.why == "password" for c in closed) or tried.total() >= MAX_FAILED
    done = Sweep(
        per_user.total(), dict(per_user), tuple(closed), now_ms, grace_s=grace_s, suspended=tuple(sorted(offenders)),
        resumed=tuple(resumed), failed_logins=dict(tried) if guessed else {}, refused=refused,
        unlogged=per_user["default"] if login_open else 0, killed=tuple(killed), memory=pressed, held=tuple(holds),
        max_hold_ms=max_hold_ms,
    )  # fmt: skip
    if log and (closed or resumed or refused or pressed or holds or guessed or killed):
        done = _log(admin, done)
    return done


def _close(node: Any, picked: list[Closed]) -> list[Closed]:
    """``picked``, each closed on ``node`` with ``CLIENT KILL ID`` (one already gone is no fault)."""
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
        return user if has_user(primaries(admin)[0], user) else None
    except (ValueError, RedisError):
        return None


def _suspend(admin: Any, user: str, until_ms: int) -> None:
    """Turn ``user`` off on every primary until ``until_ms``, then close all its connections."""
    admin.hset(keys.guard_suspended(), user, until_ms)
    for node in primaries(admin):
        node.execute_command("ACL", "SETUSER", user, "off")
    for node in primaries(admin):
        with contextlib.suppress(RedisError):
            node.execute_command("CLIENT", "KILL", "USER", user)


def _resume(admin: Any, now_ms: int) -> list[str]:
    """The suspended learners whose time is up, each turned on again (one revoked meanwhile stays gone)."""
    due = [str(user) for user, until in admin.hgetall(keys.guard_suspended()).items() if int(until) <= now_ms]
    for user in sorted(due):
        for node in primaries(admin):
            if has_user(node, user):
                node.execute_command("ACL", "SETUSER", user, "on")
        admin.hdel(keys.guard_suspended(), user)
    return sorted(due)


def suspended(client: Any) -> dict[str, int]:
    """The suspended learners and when (server ms) each may connect again (none for a user that may not read it)."""
    try:
        return {str(user): int(until) for user, until in client.hgetall(keys.guard_suspended()).items()}
    except (RedisError, ValueError):
        return {}


def _log(admin: Any, done: Sweep) -> Sweep:
    """``done``, its lines pushed to the guard's log (newest first, :data:`LOG_LINES` kept), or a note why not."""
    try:
        pipe = admin.pipeline(transaction=False)
        pipe.lpush(keys.guard_log(), *reversed(done.lines()))
        pipe.ltrim(keys.guard_log(), 0, LOG_LINES - 1)
        pipe.execute()
    except RedisError as exc:  # the server still out of memory: the sweep itself says it
        return dataclasses.replace(done, note=f"could not write the guard's log: {str(exc)[:120]}")
    return done


def read_log(client: Any, *, lines: int = 10) -> list[str]:
    """The guard's last ``lines`` lines, newest first (none for a user that may not read them)."""
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
    """Sweep every ``every_s`` seconds (:data:`FLOOD_EVERY_S` after a flood) until ``stop``, each line to ``report``."""
    while not stop.is_set():
        wait = every_s
        try:
            done = sweep(admin, **options)
            said = done.lines() + ([done.note] if done.note else [])
            if done.flooded:
                wait = min(every_s, FLOOD_EVERY_S)
        except Exception as exc:  # noqa: BLE001 - no sweep's fault (a learner's odd input) ends the guard
            said = [f"sweep failed ({type(exc).__name__}), trying again: {validate.shorten(str(exc), 160)}"]
        if report is not None:
            for line in said:
                report(line)
        stop.wait(wait)
