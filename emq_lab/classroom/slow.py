"""The class guard's eye on holds: a learner whose commands held the server too long.

No ACL rule bounds a command's work: a learner's ``LRANGE`` of all of its own 2,000,000-entry list
holds every learner 0.1 to 0.6 s (the output-buffer limit closes the connection only after the
server built the reply), and a loop of them starves the class. The server's ``SLOWLOG`` names each
command that ran ``slowlog-log-slower-than`` µs or more: its id, start, duration, arguments (cut
at 32, each at 128 bytes) and client address, but not its user. Each sweep reads the entries that
started in the last :data:`WINDOW_S` seconds (a quiet sweep reads the newest only, and keeps
nothing: a sweep of a quiet class writes nothing) and gives each a user (:func:`attribute`): the
one of the connection at its address if it is still open, else the learner whose key it names (the
output-buffer limit closed it). A command counts when there is work behind it, one of the learner's
keys it names holds :data:`BIG_KEY` bytes or more, or it had :data:`MAX_ARGS` arguments or more
(:func:`weigh`): the duration is wall-clock, which a loaded machine stretches. A learner whose
counted commands held the server :data:`MAX_HOLD_MS` or more in all (one long read, or many shorter
ones, as sent at once, which hold everyone for their sum; each sweep adds those of the
last :data:`WINDOW_S` seconds), or who sent one of MAX_ARGS arguments
(SLOWLOG times the running, not the reading of the arguments), is held to have starved the class
(:func:`over`). The guard suspends the learners among them not suspended already, as past its
quota (an entry seen again at the next sweep names a learner suspended by then; the window is
shorter than the cooldown); commands under the limit in all are allowed."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import keys, validate
from .logins import number
from .users import ALLOWED_COMMANDS, learner_test

#: A learner's commands that held the server this long (ms) or more in all suspend it. Measured with SLOWLOG on
#: Valkey 8.0, a 2-core machine: the course's heaviest calls take at most 9 ms (a drain's tick of 1,000
#: rows 7.5-9.0, a tick of 1,000 6.8-7.4, register_many of 1,000 5.6-6.6, a fast-forward's hundred
#: ticks 1.8-2.5, the overview of 30 learners under 0.1), and at most 36 ms with three more processes
#: spinning on its two cores; the LRANGE of all of a 2,000,000-entry list 100-160 ms (1,000,000: 66-80),
#: 0.53-0.63 s so loaded. Well under 0.5 s, so a loop of holds just under it leaves the class answering.
MAX_HOLD_MS = 100
#: A hold counts only on a key of the learner's of this many bytes or more (``MEMORY USAGE``): the work
#: behind it. SLOWLOG's duration is wall-clock, and a machine loaded past its cores stretches any call
#: (a fast-forward's 2 ms call took 248 ms, an HSET 44 ms, with the load at 15 on two cores). The
#: course's biggest key is about 0.1 MiB (a registry of 1,000 names, a wait list of 10,000 jobs);
#: 100,000 waiting jobs (what the overview flags) take 0.94 MiB, 2,000,000 take 19 MiB.
BIG_KEY = 2**20
#: A command with this many arguments or more is a hold whatever its keys and whatever SLOWLOG says it
#: took: SLOWLOG times the running only, and reading the arguments is the work (a learner's ``EXISTS`` of
#: one small key 1,000,000 times held the server 0.7 s; SLOWLOG said 76 ms). About 70 ms of reading, 50
#: times what a course script takes at most: 2,007 (register_many.lua's 1,000 names: EVALSHA, the sha, the
#: key count, 1,001 keys and 1,003 arguments; the course itself sends 500 names a call, 1,007).
MAX_ARGS = 100_000
#: Seconds back a sweep looks in SLOWLOG: longer than most sweeps take (a memory walk and freeing of
#: 400,000 keys: 1-3 s; of 2,600,000: 11-19 s, when a hold at its start may go unseen), shorter than a
#: suspension (``guard.COOLDOWN_S``).
WINDOW_S = 10
#: SLOWLOG entries read on each node each sweep: ``slowlog-max-len``'s default, what doctor asks for.
SLOW_ENTRIES = 128
#: The first word of each command a learner may send: a hold by another (the admin's EVAL) is no learner's.
LEARNER_COMMANDS = frozenset(command.partition("|")[0] for command in ALLOWED_COMMANDS)


@dataclass(frozen=True)
class Entry:
    """One ``SLOWLOG GET`` entry: id, start (server s), duration (µs), arguments, client address."""

    id: int
    start_s: int
    duration_us: int
    args: tuple[str, ...]
    addr: str


@dataclass(frozen=True)
class Slow:
    """A learner's command that held the server: who, what, on which key (of its ``keys``, the
    biggest), how long, that key's bytes (-1: a key SLOWLOG cut, which cannot be weighed) and how
    many arguments it had."""

    user: str
    command: str
    key: str
    duration_us: int
    addr: str = ""
    keys: tuple[str, ...] = ()
    size: int = 0
    argc: int = 0  # the command's arguments, its name included (SLOWLOG shows 32 at most: :func:`argc`)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def parse(reply: Iterable[Any]) -> list[Entry]:
    """``SLOWLOG GET``'s raw reply (each entry ``[id, start, duration, [args], addr, name]``) as entries,
    newest first; a malformed entry is skipped."""
    entries = []
    for raw in reply:
        try:
            ident, start, duration, args = int(raw[0]), int(raw[1]), int(raw[2]), tuple(map(_text, raw[3]))
        except (TypeError, ValueError, IndexError):
            continue
        entries.append(Entry(ident, start, duration, args, _text(raw[4]) if len(raw) > 4 else ""))
    return entries


def argc(args: Sequence[str]) -> int:
    """The arguments of a SLOWLOG entry's command, its name included: past 32 the server keeps 31 and
    says ``... (N more arguments)`` in the last."""
    more = _MORE.fullmatch(args[-1]) if len(args) == 32 else None
    return 31 + int(more.group(1)) if more else len(args)


_MORE = re.compile(r"\.\.\. \((\d+) more arguments\)")


def owner(args: Sequence[str], *, learner: Callable[[str], bool]) -> str | None:
    """The learner whose namespaced key is among ``args`` (a learner's ACL user is its namespace),
    when the command is one a learner may send; else None."""
    if not args or args[0].lower() not in LEARNER_COMMANDS:
        return None
    return next((name for name in map(keys.namespace_of, args[1:]) if name is not None and learner(name)), None)


def attribute(
    entries: Iterable[Entry],
    clients: Iterable[dict[str, Any]],
    *,
    learner: Callable[[str], bool],
    now_s: int,
) -> list[Slow]:
    """Whose each of ``entries`` is (:func:`over` judges them), from ``CLIENT LIST`` (parsed) of the
    same sweep: the user of the connection at the entry's address when it was open at the entry's
    start (an ``age`` that reaches back to it; a newer one only reuses the port); when it is gone
    (the output-buffer limit closed it), the learner whose key the command names. An entry of a user
    not a learner (the admin, the observer, the guard) is no one's; so is one whose connection is
    gone and that names no learner's key."""
    by_addr = {str(entry.get("addr", "")): entry for entry in clients}
    held = []
    for entry in entries:
        client = by_addr.get(entry.addr)
        if client is not None and number(client, "age") + 1 >= now_s - entry.start_s:
            user: str | None = str(client.get("user", ""))
        else:
            user = owner(entry.args, learner=learner)
        if user and learner(user):
            named = tuple(dict.fromkeys(arg for arg in entry.args[1:] if keys.namespace_of(arg) == user))[:8]
            command = entry.args[0].upper() if entry.args else "?"
            key = named[0] if named else ""
            held.append(Slow(user, command, key, entry.duration_us, entry.addr, named, argc=argc(entry.args)))
    return held


def cut(key: str) -> bool:
    """Whether SLOWLOG cut ``key`` (past 128 bytes it keeps the start and says ``... (N more bytes)``)."""
    return key.endswith(" more bytes)") and "... (" in key


def weigh(held: Iterable[Slow], sizes: dict[str, int | None], *, big_key: int = BIG_KEY) -> list[Slow]:
    """The holds with work behind them: one of the keys the command names holds ``big_key`` bytes or
    more (``sizes``: MEMORY USAGE of each, None for a key gone), or SLOWLOG cut one (a name past 128
    bytes, which no course queue has: it cannot be weighed, so the hold counts), or it had
    :data:`MAX_ARGS` arguments or more (far more than the course sends). A hold on small keys only, or on
    none, with as many arguments as the course's, is the machine's load stretching a call, not the
    learner's work."""
    weighed = []
    for slow in held:
        if slow.argc >= MAX_ARGS:
            weighed.append(slow)
            continue
        if any(cut(key) for key in slow.keys):
            weighed.append(replace(slow, key=next(key for key in slow.keys if cut(key)), size=-1))
            continue
        size, key = max(((sizes.get(key) or 0, key) for key in slow.keys), default=(0, ""))
        if size >= big_key:
            weighed.append(replace(slow, key=key, size=size))
    return weighed


def holds(
    node: Any,
    clients: list[dict[str, Any]],
    prefix: str,
    *,
    now_s: int,
    max_hold_ms: int = MAX_HOLD_MS,
    window_s: int = WINDOW_S,
) -> list[Slow]:
    """The holds in ``node``'s SLOWLOG that started in the last ``window_s`` seconds (``now_s``: the
    server's time; the guard passes its cooldown when shorter, so a learner back from a suspension
    is not suspended again for the same hold), of learners (users named ``prefix...``) whose ACL
    user the node has (``ACL SETUSER`` of a revoked one would make it again), weighed (:func:`weigh`)
    and summed per learner (:func:`over`)."""
    # Raw (parse decodes, U+FFFD for what is not UTF-8): a learner's arguments may be any bytes.
    entries = parse(node.execute_command("SLOWLOG", "GET", 1, NEVER_DECODE=True))  # a quiet sweep: the newest only
    if not entries or entries[0].start_s < now_s - window_s:
        return []
    raw = node.execute_command("SLOWLOG", "GET", SLOW_ENTRIES, NEVER_DECODE=True)
    entries = [entry for entry in parse(raw) if entry.start_s >= now_s - window_s]
    learner = learner_test(prefix)
    held = attribute(entries, clients, learner=learner, now_s=now_s)
    if not held:
        return []
    users = {slow.user for slow in held}  # a key's namespace whose user is gone (revoked): no one to suspend
    there = {user for user in users if node.execute_command("ACL", "GETUSER", user) is not None}
    held = [slow for slow in held if slow.user in there]
    named = sorted({key for slow in held for key in slow.keys if not cut(key)})
    pipe = node.pipeline(transaction=False)
    for key in named:
        pipe.execute_command("MEMORY", "USAGE", key)  # 5 samples of a big key: a few µs
    replies = pipe.execute(raise_on_error=False)
    sizes = {key: size if isinstance(size, int) else None for key, size in zip(named, replies, strict=True)}
    return over(weigh(held, sizes), max_hold_ms=max_hold_ms)


def over(weighed: Iterable[Slow], *, max_hold_ms: int = MAX_HOLD_MS) -> list[Slow]:
    """The weighed holds of the learners whose commands held the server ``max_hold_ms`` or more in all
    (those of the window :func:`holds` reads: one long read, or many shorter ones: 30 reads of 65 ms
    each, sent together, held another learner 1.9 s), or whose one command had :data:`MAX_ARGS`
    arguments or more."""
    weighed = list(weighed)
    total: dict[str, int] = {}
    for slow in weighed:
        total[slow.user] = total.get(slow.user, 0) + slow.duration_us
    return [slow for slow in weighed if total[slow.user] >= max_hold_ms * 1000 or slow.argc >= MAX_ARGS]


def lines(when: str, held: Sequence[Slow], *, cooldown_s: int, max_hold_ms: int) -> list[str]:
    """One line per learner, its longest hold: ``09:41:03 suspended room01 for 30 s: its LRANGE on
    emq:ns:{room01:q}:wait (19 MiB) held the server 0.61 s (the class's limit is 0.1 s)``, and how many
    there were and their time in all when more than one."""
    longest: dict[str, Slow] = {}
    count: dict[str, int] = {}
    total: dict[str, int] = {}
    for slow in held:
        count[slow.user] = count.get(slow.user, 0) + 1
        total[slow.user] = total.get(slow.user, 0) + slow.duration_us
        if slow.user not in longest or slow.duration_us > longest[slow.user].duration_us:
            longest[slow.user] = slow
    said = []
    for user, slow in sorted(longest.items()):
        key = validate.shorten(slow.key, 60)
        on = f" on {key}" + (f" ({slow.size / 2**20:.0f} MiB)" if slow.size > 0 else "") if key else ""
        more = f"; {count[user]} such commands, {total[user] / 1e6:.2f} s in all" if count[user] > 1 else ""
        if slow.argc >= MAX_ARGS:  # SLOWLOG's time leaves out the reading of the arguments
            how = f"held the server {slow.duration_us / 1e6:.2f} s and longer to read its {slow.argc:,} arguments"
            limit = f"{max_hold_ms / 1000:g} s, or {MAX_ARGS:,} arguments"
        else:
            how, limit = f"held the server {slow.duration_us / 1e6:.2f} s", f"{max_hold_ms / 1000:g} s"
        said.append(
            f"{when} suspended {user[:40]} for {cooldown_s} s: its {slow.command[:20]}{on} {how} "
            f"(the class's limit is {limit}){more}"
        )
    return said
