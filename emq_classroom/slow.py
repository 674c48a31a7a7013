"""The class guard's eye on holds: a learner whose commands held the server too long.

No ACL rule bounds a command's work (an ``LRANGE`` of all of a learner's own 2,000,000-entry list
holds every learner for 0.1 to 0.6 s). ``SLOWLOG`` names each slow command, its arguments and
client address, but not its user: :func:`attribute` gives each entry of the last :data:`WINDOW_S`
seconds a learner, :func:`weigh` keeps those with work behind them (a big key, or
:data:`MAX_ARGS` arguments: the duration is wall-clock, which a loaded machine stretches), and
:func:`over` the learners whose holds add up to :data:`MAX_HOLD_MS`; the guard suspends them.
The measurements behind the limits are in the README (Classroom: known limits)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from emq_lab import keys, validate

from .logins import number, text
from .users import ALLOWED_COMMANDS, has_user, learner_test

#: A learner's commands that held the server this long (ms) or more in all suspend it: the course's
#: heaviest call takes at most 9 ms (36 ms on a loaded machine), an LRANGE of 2,000,000 entries 100-160.
MAX_HOLD_MS = 100
#: A hold counts only on a key of the learner's of this many bytes or more (``MEMORY USAGE``): the
#: course's biggest key is about 0.1 MiB; 100,000 waiting jobs take 0.94 MiB.
BIG_KEY = 2**20
#: A command with this many arguments or more is a hold whatever its keys and time (SLOWLOG does not time
#: the reading of the arguments); the course sends at most 2,007.
MAX_ARGS = 100_000
#: Seconds back a sweep looks in SLOWLOG: longer than most sweeps, shorter than a suspension (so a learner
#: back from one is not suspended again for the same hold).
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
    """A learner's command that held the server: who, what, on which of its ``keys``, how long, how big."""

    user: str
    command: str
    key: str  # the biggest of keys
    duration_us: int
    addr: str = ""
    keys: tuple[str, ...] = ()
    size: int = 0  # key's bytes; -1: a key SLOWLOG cut, which cannot be weighed
    argc: int = 0  # the command's arguments, its name included (SLOWLOG shows 32 at most: :func:`argc`)


def parse(reply: Iterable[Any]) -> list[Entry]:
    """``SLOWLOG GET``'s raw reply as entries, newest first; a malformed entry is skipped."""
    entries = []
    for raw in reply:
        try:
            ident, start, duration, args = int(raw[0]), int(raw[1]), int(raw[2]), tuple(map(text, raw[3]))
        except (TypeError, ValueError, IndexError):
            continue
        entries.append(Entry(ident, start, duration, args, text(raw[4]) if len(raw) > 4 else ""))
    return entries


_MORE = re.compile(r"\.\.\. \((\d+) more arguments\)")


def argc(args: Sequence[str]) -> int:
    """The arguments of a SLOWLOG entry's command, its name included (past 32 the last says how many more)."""
    more = _MORE.fullmatch(args[-1]) if len(args) == 32 else None
    return 31 + int(more.group(1)) if more else len(args)


def owner(args: Sequence[str], *, learner: Callable[[str], bool]) -> str | None:
    """The learner whose namespaced key is among ``args``, if a learner may send the command; else None."""
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
    """The learners' entries: the user of the connection at the entry's address if open since its
    start (``CLIENT LIST``, parsed), else the learner whose key it names; others are no one's."""
    by_addr = {str(entry.get("addr", "")): entry for entry in clients}
    held = []
    for entry in entries:
        client = by_addr.get(entry.addr)
        if client is not None and number(client, "age") + 1 >= now_s - entry.start_s:
            user: str | None = str(client.get("user", ""))
        else:  # gone (the output-buffer limit closed it), or a newer connection on the same port
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


def weigh(held: Iterable[Slow], sizes: dict[str, int | None]) -> list[Slow]:
    """The holds with work behind them: a key of :data:`BIG_KEY` bytes or more (``sizes``), a key SLOWLOG
    cut (no course queue has one), or :data:`MAX_ARGS` arguments; the rest is the machine's load."""
    weighed = []
    for slow in held:
        if slow.argc >= MAX_ARGS:
            weighed.append(slow)
            continue
        if any(cut(key) for key in slow.keys):
            weighed.append(replace(slow, key=next(key for key in slow.keys if cut(key)), size=-1))
            continue
        size, key = max(((sizes.get(key) or 0, key) for key in slow.keys), default=(0, ""))
        if size >= BIG_KEY:
            weighed.append(replace(slow, key=key, size=size))
    return weighed


def holds(
    node: Any,
    clients: list[dict[str, Any]],
    prefix: str,
    *,
    now_s: int,
    max_hold_ms: int = MAX_HOLD_MS,
) -> list[Slow]:
    """The holds over the limit in ``node``'s SLOWLOG of the last :data:`WINDOW_S`, of learners it has the user of."""
    # Raw (parse decodes, U+FFFD for what is not UTF-8): a learner's arguments may be any bytes.
    entries = parse(node.execute_command("SLOWLOG", "GET", 1, NEVER_DECODE=True))  # a quiet sweep: the newest only
    if not entries or entries[0].start_s < now_s - WINDOW_S:
        return []
    raw = node.execute_command("SLOWLOG", "GET", SLOW_ENTRIES, NEVER_DECODE=True)
    entries = [entry for entry in parse(raw) if entry.start_s >= now_s - WINDOW_S]
    held = attribute(entries, clients, learner=learner_test(prefix), now_s=now_s)
    if not held:
        return []
    # A revoked learner's key names no one to suspend (ACL SETUSER would make the user again).
    there = {user for user in {slow.user for slow in held} if has_user(node, user)}
    held = [slow for slow in held if slow.user in there]
    named = sorted({key for slow in held for key in slow.keys if not cut(key)})
    pipe = node.pipeline(transaction=False)
    for key in named:
        pipe.execute_command("MEMORY", "USAGE", key)  # 5 samples of a big key: a few µs
    replies = pipe.execute(raise_on_error=False)
    sizes = {key: size if isinstance(size, int) else None for key, size in zip(named, replies, strict=True)}
    return over(weigh(held, sizes), max_hold_ms=max_hold_ms)


def _totals(held: Iterable[Slow]) -> Counter[str]:
    """The µs each learner's holds took in all."""
    total: Counter[str] = Counter()
    for slow in held:
        total[slow.user] += slow.duration_us
    return total


def over(weighed: Iterable[Slow], *, max_hold_ms: int = MAX_HOLD_MS) -> list[Slow]:
    """The weighed holds of learners whose holds took ``max_hold_ms`` in all, or of :data:`MAX_ARGS` arguments."""
    weighed = list(weighed)
    total = _totals(weighed)
    return [slow for slow in weighed if total[slow.user] >= max_hold_ms * 1000 or slow.argc >= MAX_ARGS]


def lines(when: str, held: Sequence[Slow], *, cooldown_s: int, max_hold_ms: int) -> list[str]:
    """One line per learner, its longest hold (and how many and their time in all when more than one)."""
    count = Counter(slow.user for slow in held)
    total = _totals(held)
    longest: dict[str, Slow] = {}
    for slow in sorted(held, key=lambda slow: slow.duration_us, reverse=True):  # stable: the first of equals
        longest.setdefault(slow.user, slow)
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
