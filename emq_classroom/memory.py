"""The class guard under memory pressure: one learner may not hold ``maxmemory`` with its own keys.

Valkey has no memory quota per user, and with ``noeviction`` a learner who fills ``maxmemory``
gets every other learner's writes refused. Only on a primary at :data:`PRESSURE` of its
``maxmemory`` does the guard walk the learners' keys, in the server (``walk.lua``, beside this
module, never among the learners' scripts); each learner past its share (``maxmemory`` divided by
the learners) is freed of its biggest keys, then if need be of all the rest (``unlink.lua``), its
progress last (:func:`plan`, no I/O), and suspended. A walk that finds no one is kept
(:func:`emq_lab.keys.guard_memory`) and repeated only after the cooldown or a :data:`RISE`."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from emq_lab import keys, validate
from emq_lab.scripts import source

from .logins import number
from .users import acl_users, learner_test

#: Share of ``maxmemory`` in use from which the guard walks the learners' keys.
PRESSURE = 0.8
#: Growth of used memory (a share of ``maxmemory``) after a quiet walk from which the next walks before the cooldown.
RISE = 0.02
#: Keys asked for per ``SCAN`` (one call of ``walk.lua`` or ``unlink.lua``: a few ms of the server).
SCAN_COUNT = 1000
#: Calls of ``walk.lua`` or ``unlink.lua`` between two of ``meanwhile`` (the guard closes connections then).
MEANWHILE = 100
#: Keys of this many bytes or more come back from the walk by name, to be freed biggest first; the smaller
#: ones only in their learner's count and bytes (the course's keys are at most about 0.1 MiB).
BIG = 64 * 2**10
#: Looks at ``lazyfree_pending_objects`` (5 ms apart) after freeing, before suspending.
FREE_CHECKS = 200


@dataclass(frozen=True)
class Walk:
    """A walk of one primary: each namespace's bytes and keys; the bytes of each progress and key of :data:`BIG`+."""

    held: Mapping[str, int]
    counts: Mapping[str, int]
    sized: Mapping[str, int]

    @property
    def keys(self) -> int:
        """The keys walked."""
        return sum(self.counts.values())


@dataclass(frozen=True)
class Over:
    """A learner past its share: the keys to free by name, then ``rest`` other keys freed unnamed, and their bytes."""

    learner: str
    held: int  # bytes of its keys, by MEMORY USAGE
    share: int
    free: tuple[str, ...]
    freeing: int
    rest: int = 0


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
        """One line per learner freed and suspended, or one saying that none is past its share."""
        head = f"{when} {self.where} at {self.used * 100 // self.maxmemory}% of maxmemory:"
        if not self.freed:
            most = f"; the most, {self.most[0]}, {mib(self.most[1])}" if self.most[0] else ""
            return [
                f"{head} no learner holds more than its share of keys ({mib(self.share)}{most}; "
                f"{self.keys:,} key(s) walked); the guard walks them again in {cooldown_s} s or once memory grows"
            ]
        return [
            f"{head} suspended {over.learner} for {cooldown_s} s (it held {mib(over.held)} of keys, its share "
            f"{mib(over.share)}) and freed {len(over.free) + over.rest:,} key(s) ({mib(over.freeing)}), {_order(over)}"
            for over in self.freed
        ]


def _order(over: Over) -> str:
    """The order its keys were freed in: ``biggest first`` and so on."""
    if not over.rest:
        return "biggest first"
    progress = keys.progress(over.learner)
    named = sum(key != progress for key in over.free)
    last = ", its progress last" if progress in over.free else " but its progress"
    if not named:
        return f"every key{last}"
    return f"its {named:,} of {BIG // 2**10} KiB or more biggest first, then every other key{last}"


def mib(size: int) -> str:
    """Bytes in MiB: ``210 MiB``, ``3.4 MiB``."""
    return f"{size / 2**20:.0f} MiB" if size >= 10 * 2**20 else f"{size / 2**20:.1f} MiB"


def holdings(walked: Walk, learners: Collection[str]) -> dict[str, int]:
    """Bytes per learner: its namespace's, as walked (others' ignored)."""
    return {learner: walked.held.get(learner, 0) for learner in learners}


def plan(walked: Walk, *, learners: Collection[str], share: int) -> list[Over]:
    """Each of ``learners`` past ``share`` bytes, what to free: named keys biggest first, the rest, progress last."""
    validate.integer(share, "share", 0, unit=" byte(s)")
    held = holdings(walked, learners)
    named: dict[str, list[tuple[int, str]]] = {learner: [] for learner, total in held.items() if total > share}
    for key, size in walked.sized.items():
        namespace = keys.namespace_of(key)
        if namespace in named and key != keys.progress(namespace):
            named[namespace].append((size, key))
    over: list[Over] = []
    for learner in sorted(named):
        progress = keys.progress(learner)
        free: list[str] = []
        freeing = rest = 0
        for size, key in sorted(named[learner], key=lambda pair: -pair[0]):
            if held[learner] - freeing <= share:
                break
            free.append(key)
            freeing += size
        if held[learner] - freeing > share:  # every key by name freed, and still past: all but its progress
            rest = walked.counts.get(learner, 0) - len(free) - (progress in walked.sized)
            freeing = held[learner] - walked.sized.get(progress, 0)
        # A learner whose progress hash alone holds past the share (junk fields: it is in their key pattern)
        # loses it too, else the server stays full for good.
        if held[learner] - freeing > share and progress in walked.sized:
            free.append(progress)
            freeing = held[learner]
        over.append(Over(learner, held[learner], share, tuple(free), freeing, rest))
    return over


def pressed(info: Mapping[str, Any]) -> bool:
    """Whether ``INFO memory`` (parsed) shows ``used_memory`` at :data:`PRESSURE` of a ``maxmemory`` or more."""
    maxmemory, used = number(info, "maxmemory"), number(info, "used_memory")
    return maxmemory > 0 and used >= PRESSURE * maxmemory


def walk_again(info: Mapping[str, Any], kept: str | None, *, now_ms: int, cooldown_s: int) -> bool:
    """Whether a pressed primary is walked: never walked quiet (``kept``: ``<used> <ms>``), long ago, or grown since."""
    used_then, _, then_ms = (kept or "").partition(" ")
    if not used_then.isdigit() or not then_ms.isdigit():
        return True
    grown = number(info, "used_memory") - int(used_then) >= RISE * number(info, "maxmemory")
    return grown or now_ms - int(then_ms) >= cooldown_s * 1000


def _calls(node: Any, name: str, args: tuple[Any, ...], meanwhile: Callable[[], object]) -> Iterator[list[Any]]:
    """The replies, cursor left out, of ``<name>.lua`` called on ``node`` for each SCAN batch (cursor: ARGV[1])."""
    script = node.register_script(source(name, package=__package__))
    cursor = "0"
    for call in itertools.count(1):
        if call % MEANWHILE == 0:
            meanwhile()
        cursor, *reply = script(args=[cursor, *args])
        yield reply
        if str(cursor) == "0":
            return


def walk(node: Any, *, prefix: str, big: int = BIG, meanwhile: Callable[[], object] = lambda: None) -> Walk:
    """The learners' keys on ``node`` (a primary), walked by ``walk.lua``: the one place knowing its ARGV and reply."""
    args = (keys.namespaces_pattern(prefix), SCAN_COUNT, big, keys.namespace_head(), keys.PROGRESS_TAIL)
    held: dict[str, int] = {}
    counts: dict[str, int] = {}
    sized: dict[str, int] = {}
    for totals, found in _calls(node, "walk", args, meanwhile):
        for at in range(0, len(totals), 3):
            namespace = _name(totals[at])
            held[namespace] = held.get(namespace, 0) + int(totals[at + 1])
            counts[namespace] = counts.get(namespace, 0) + int(totals[at + 2])
        for at in range(0, len(found), 2):
            sized[_name(found[at])] = int(found[at + 1])
    return Walk(held, counts, sized)


def _name(hexed: str) -> str:
    """A name walk.lua sent in hex, as str; bytes not UTF-8 kept (``surrogateescape``) for :func:`_unlink`."""
    return bytes.fromhex(hexed).decode("utf-8", "surrogateescape")


def free_rest(node: Any, learner: str, *, meanwhile: Callable[[], object] = lambda: None) -> int:
    """The keys freed: every one of ``learner``'s namespace on ``node`` but its progress, by ``unlink.lua``."""
    args = (keys.namespace_pattern(learner), SCAN_COUNT, keys.progress(learner))
    return sum(int(count) for (count,) in _calls(node, "unlink", args, meanwhile))


def relieve(
    admin: Any,
    nodes: list[Any],
    *,
    prefix: str,
    now_ms: int,
    cooldown_s: int,
    suspend: Callable[[str], None],
    meanwhile: Callable[[], object] = lambda: None,
) -> tuple[Pressed, ...]:
    """What each walk of a pressed primary of ``nodes`` saw; each learner past its share freed, then ``suspend``-ed."""
    infos = [node.info("memory") for node in nodes]
    if not prefix or not any(pressed(info) for info in infos):
        return ()
    kept = {str(k): str(v) for k, v in admin.hgetall(keys.guard_memory()).items()}
    learners = sorted(filter(learner_test(prefix), acl_users(admin)))
    done: list[Pressed] = []
    for index, (node, info) in enumerate(zip(nodes, infos, strict=True)):
        if not learners or not pressed(info):
            continue
        if not walk_again(info, kept.get(str(index)), now_ms=now_ms, cooldown_s=cooldown_s):
            continue
        walked = walk(node, prefix=prefix, meanwhile=meanwhile)
        maxmemory = number(info, "maxmemory")
        share = maxmemory // len(learners)
        over = plan(walked, learners=learners, share=share)
        for at, each in enumerate(over):
            _unlink(node, each.free)
            if each.rest:  # the count the server freed, not the walk's
                over[at] = dataclasses.replace(each, rest=free_rest(node, each.learner, meanwhile=meanwhile))
        if over:
            _freed(node)
        for each in over:
            suspend(each.learner)
        most = ("", 0) if over else max(holdings(walked, learners).items(), key=lambda item: (item[1], item[0]))
        where = "the server" if len(nodes) == 1 else f"primary {_address(node)}"
        done.append(Pressed(where, number(info, "used_memory"), maxmemory, len(learners), share, walked.keys,
                            tuple(over), most))  # fmt: skip
        with contextlib.suppress(RedisError):  # still past maxmemory: walked again next sweep
            if over:
                admin.hdel(keys.guard_memory(), str(index))
            else:
                admin.hset(keys.guard_memory(), str(index), f"{number(info, 'used_memory')} {now_ms}")
    return tuple(done)


def _unlink(node: Any, doomed: tuple[str, ...]) -> None:
    """``UNLINK`` the keys, :data:`SCAN_COUNT` of one hash tag a command (a cluster refuses several slots at once)."""
    by_tag: dict[str, list[str]] = {}
    for key in doomed:
        start = key.find("{")
        end = key.find("}", start + 1) if start >= 0 else -1
        by_tag.setdefault(key[start + 1 : end] if end > start + 1 else key, []).append(key)  # the hash tag
    pipe = node.pipeline(transaction=False)
    for slotted in by_tag.values():
        for start in range(0, len(slotted), SCAN_COUNT):
            pipe.unlink(*(key.encode("utf-8", "surrogateescape") for key in slotted[start : start + SCAN_COUNT]))
    pipe.execute(raise_on_error=False)


def _freed(node: Any) -> None:
    """Wait until the background thread freed what ``UNLINK`` handed it: till then a suspension's write is refused."""
    for _ in range(FREE_CHECKS):
        if number(node.info("memory"), "lazyfree_pending_objects") == 0:
            return
        time.sleep(0.005)


def _address(node: Any) -> str:
    kwargs = node.connection_pool.connection_kwargs
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
