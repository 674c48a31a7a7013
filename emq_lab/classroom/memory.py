"""The class guard under memory pressure: one learner may not hold the server's ``maxmemory`` with
its own keys.

Valkey has no quota of memory per user: with ``noeviction`` (what ``doctor`` asks for) a learner
who fills ``maxmemory`` with their own keys (a long list, many registrations) gets every other
learner's writes refused until memory is freed. Each sweep reads ``INFO memory`` of every primary
(cheap); only on a primary at :data:`PRESSURE` of its ``maxmemory`` or more (none without a
``maxmemory``) does it walk the learners' keys there (``SCAN MATCH emq:ns:{<prefix>*``,
:data:`SCAN_COUNT` a batch, ``MEMORY USAGE ... SAMPLES 0`` of each: every element counted) and sum them per learner (a
namespace is its learner's ACL user). A learner's fair share is that ``maxmemory`` divided by the
number of learners (the ACL users named ``<prefix>...``); each learner holding more is freed
(``UNLINK``, lazy, so the server is not held) of its biggest keys first until it holds no more than
its share (its progress last), then suspended like a learner past its connection quota. Freeing
comes first: while the server is past ``maxmemory`` it refuses the write that records a suspension.

A walk that finds no learner past its share is said once, and kept (:func:`emq_lab.keys.guard_memory`):
that primary is walked again only after the cooldown, or once its memory has grown by :data:`RISE`
of its ``maxmemory`` since, so a class that fills the server evenly is not walked every second.
:func:`plan` is the decision, with no I/O."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from .. import keys, validate
from .logins import number
from .users import acl_users

#: Share of ``maxmemory`` in use from which the guard walks the learners' keys.
PRESSURE = 0.8
#: Growth of used memory (a share of ``maxmemory``) after a walk that found no learner past its
#: share, from which the next sweep walks again before the cooldown is over.
RISE = 0.02
#: Keys asked for per ``SCAN`` (and ``MEMORY USAGE`` calls per pipeline).
SCAN_COUNT = 1000
#: Looks at ``lazyfree_pending_objects`` (5 ms apart) after freeing, before suspending.
FREE_CHECKS = 200


@dataclass(frozen=True)
class Over:
    """A learner holding more than its share: the keys to free (biggest first) and their bytes."""

    learner: str
    held: int  # bytes of its keys, by MEMORY USAGE
    share: int
    free: tuple[str, ...]
    freeing: int


@dataclass(frozen=True)
class Pressed:
    """One primary at :data:`PRESSURE` or more, walked: what the learners held and who was freed."""

    where: str  # "the server", or "primary host:port" on a cluster
    used: int
    maxmemory: int
    learners: int
    share: int
    keys: int  # the learners' keys walked
    freed: tuple[Over, ...] = ()
    most: tuple[str, int] = ("", 0)  # the learner holding the most, and its bytes

    def lines(self, when: str, cooldown_s: int) -> list[str]:
        """``09:41:03 the server at 93% of maxmemory: suspended room01 for 30 s (it held 210 MiB of
        keys, its share 85 MiB) and freed 3 key(s) (205 MiB), biggest first``; or, none past its
        share, one line saying so."""
        head = f"{when} {self.where} at {self.used * 100 // self.maxmemory}% of maxmemory:"
        if not self.freed:
            most = f"; the most, {self.most[0]}, {mib(self.most[1])}" if self.most[0] else ""
            return [
                f"{head} no learner holds more than its share of keys ({mib(self.share)}{most}; "
                f"{self.keys:,} key(s) walked); the guard walks them again in {cooldown_s} s or once memory grows"
            ]
        return [
            f"{head} suspended {over.learner} for {cooldown_s} s (it held {mib(over.held)} of keys, its share "
            f"{mib(over.share)}) and freed {len(over.free):,} key(s) ({mib(over.freeing)}), biggest first"
            for over in self.freed
        ]


def mib(size: int) -> str:
    """Bytes in MiB: ``210 MiB``, ``3.4 MiB``."""
    return f"{size / 2**20:.0f} MiB" if size >= 10 * 2**20 else f"{size / 2**20:.1f} MiB"


def holdings(sizes: Mapping[str, int], learners: Collection[str]) -> dict[str, int]:
    """Bytes per learner: the sizes of the keys in each learner's namespace, summed (others' ignored)."""
    held = dict.fromkeys(learners, 0)
    for key, size in sizes.items():
        namespace = keys.namespace_of(key)
        if namespace in held:
            held[namespace] += size
    return held


def plan(sizes: Mapping[str, int], *, learners: Collection[str], share: int) -> list[Over]:
    """From the sizes of keys (key -> bytes): each of ``learners`` holding more than ``share`` bytes,
    with its keys to free, biggest first (ties in the order given), until it holds ``share`` or
    less; its progress (:func:`emq_lab.keys.progress`) last, so only when the rest does not bring it
    under its share (junk in the progress hash); never a key outside the learners' namespaces."""
    validate.integer(share, "share", 0, unit=" byte(s)")
    held = dict.fromkeys(learners, 0)
    mine: dict[str, list[tuple[int, str]]] = {learner: [] for learner in learners}
    for key, size in sizes.items():
        namespace = keys.namespace_of(key)
        if namespace in held:
            held[namespace] += size
            mine[namespace].append((-size, key))
    over: list[Over] = []
    for learner in sorted(name for name, total in held.items() if total > share):
        progress = keys.progress(learner)
        free: list[str] = []
        freeing = 0
        # The biggest first, the progress last: a learner whose progress hash alone holds past the share
        # (junk fields: it is in their key pattern) loses it too, else the server stays full for good.
        for minus, key in sorted(mine[learner], key=lambda pair: (pair[1] == progress, pair[0])):
            if held[learner] - freeing <= share:
                break
            free.append(key)
            freeing -= minus
        over.append(Over(learner, held[learner], share, tuple(free), freeing))
    return over


def pressed(info: Mapping[str, Any], *, pressure: float = PRESSURE) -> bool:
    """Whether ``INFO memory`` (parsed) shows ``used_memory`` at ``pressure`` of ``maxmemory`` or more
    (never with no ``maxmemory``)."""
    maxmemory, used = number(info, "maxmemory"), number(info, "used_memory")
    return maxmemory > 0 and used >= pressure * maxmemory


def walk_again(info: Mapping[str, Any], kept: str | None, *, now_ms: int, cooldown_s: int) -> bool:
    """Whether a pressed primary is walked this sweep: not walked since its last walk found no one
    (``kept``: ``<used_memory> <ms>`` then), or that walk is ``cooldown_s`` old, or memory grew by
    :data:`RISE` of ``maxmemory`` since."""
    used_then, _, then_ms = (kept or "").partition(" ")
    if not used_then.isdigit() or not then_ms.isdigit():
        return True
    grown = number(info, "used_memory") - int(used_then) >= RISE * number(info, "maxmemory")
    return grown or now_ms - int(then_ms) >= cooldown_s * 1000


def sizes(node: Any, *, prefix: str) -> dict[str, int]:
    """The learners' keys on ``node`` (a plain client on one primary) and their ``MEMORY USAGE``."""
    found: dict[str, int] = {}
    for batch in _batches(node, keys.namespaces_pattern(prefix)):
        for key, size in zip(batch, _memory_usage(node, batch), strict=True):
            if isinstance(size, int):  # None: gone meanwhile
                found[key] = size
    return found


def _memory_usage(node: Any, batch: list[str]) -> list[Any]:
    """``MEMORY USAGE`` of each key, sent at once on one connection and read back in order: half the
    CPU of a redis-py pipeline, which wraps each of 400,000 commands and its reply in objects."""
    connection = node.connection_pool.get_connection()
    try:
        # SAMPLES 0: every element counted. The default samples 5, and a key whose few sampled elements
        # are small hides the rest (a sorted set of 1 MiB members after 100,000 tiny ones: 9.6 MiB of 252).
        commands = [("MEMORY", "USAGE", key, "SAMPLES", "0") for key in batch]
        connection.send_packed_command(connection.pack_commands(commands))
        return [connection.read_response() for _ in batch]
    except BaseException:
        connection.disconnect()  # replies may be left unread on it
        raise
    finally:
        node.connection_pool.release(connection)


def _batches(node: Any, pattern: str) -> Iterator[list[str]]:
    cursor = 0
    while True:
        cursor, batch = node.scan(cursor, match=pattern, count=SCAN_COUNT)
        if batch:
            yield [str(key) for key in batch]
        if int(cursor) == 0:
            return


def relieve(
    admin: Any,
    nodes: list[Any],
    *,
    prefix: str,
    now_ms: int,
    cooldown_s: int,
    suspend: Callable[[str], None],
    pressure: float = PRESSURE,
) -> tuple[Pressed, ...]:
    """On each primary of ``nodes`` under ``pressure`` (and due a walk: :func:`walk_again`), walk the
    learners' keys, free each learner past its share (:func:`plan`) with ``UNLINK``, then
    ``suspend`` it; what each walk saw and did. Nothing but ``INFO memory`` when no primary is pressed."""
    infos = [node.info("memory") for node in nodes]
    if not prefix or not any(pressed(info, pressure=pressure) for info in infos):
        return ()
    kept = {str(k): str(v) for k, v in admin.hgetall(keys.guard_memory()).items()}
    learners = sorted(user for user in acl_users(admin) if user.startswith(prefix))
    done: list[Pressed] = []
    for index, (node, info) in enumerate(zip(nodes, infos, strict=True)):
        if not learners or not pressed(info, pressure=pressure):
            continue
        if not walk_again(info, kept.get(str(index)), now_ms=now_ms, cooldown_s=cooldown_s):
            continue
        found = sizes(node, prefix=prefix)
        maxmemory = number(info, "maxmemory")
        share = maxmemory // len(learners)
        over = plan(found, learners=learners, share=share)
        for each in over:
            _unlink(node, each.free)
        if over:
            _freed(node)
        for each in over:
            suspend(each.learner)
        most = ("", 0) if over else max(holdings(found, learners).items(), key=lambda item: (item[1], item[0]))
        where = "the server" if len(nodes) == 1 else f"primary {_address(node)}"
        done.append(Pressed(where, number(info, "used_memory"), maxmemory, len(learners), share, len(found),
                            tuple(over), most))  # fmt: skip
        with contextlib.suppress(RedisError):  # still past maxmemory: walked again next sweep
            if over:
                admin.hdel(keys.guard_memory(), str(index))
            else:
                admin.hset(keys.guard_memory(), str(index), f"{number(info, 'used_memory')} {now_ms}")
    return tuple(done)


def _unlink(node: Any, doomed: tuple[str, ...]) -> None:
    """``UNLINK`` the keys, :data:`SCAN_COUNT` of one hash tag a command (a cluster node refuses keys of
    several slots at once; a queue's keys share one tag)."""
    by_tag: dict[str, list[str]] = {}
    for key in doomed:
        start = key.find("{")
        end = key.find("}", start + 1) if start >= 0 else -1
        by_tag.setdefault(key[start + 1 : end] if end > start + 1 else key, []).append(key)  # the slot's hash tag
    pipe = node.pipeline(transaction=False)
    for slotted in by_tag.values():
        for start in range(0, len(slotted), SCAN_COUNT):
            pipe.unlink(*slotted[start : start + SCAN_COUNT])
    pipe.execute(raise_on_error=False)


def _freed(node: Any) -> None:
    """Wait until the server's background thread has freed what ``UNLINK`` handed it (at most
    :data:`FREE_CHECKS` looks): till then the server may still be past ``maxmemory``, and it refuses
    the write that records a suspension."""
    for _ in range(FREE_CHECKS):
        if number(node.info("memory"), "lazyfree_pending_objects") == 0:
            return
        time.sleep(0.005)


def _address(node: Any) -> str:
    kwargs = node.connection_pool.connection_kwargs
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
