"""The Lua scripts, one file per verb, and the one place that knows each script's interface (as
BullMQ's ``scripts.ts``): a function per script builds its :class:`Call` (KEYS in header order,
ARGV encoded), :func:`send` hands it to redis-py's ``Script`` (EVALSHA, loading the script when the
server lacks it), and a function per reply decodes the answer. A call whose reply was lost is never
sent again; only a cluster's batch that a node refused whole (a reshard) goes again (:mod:`.cluster`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from importlib import resources

from redis.client import Pipeline, Redis
from redis.cluster import RedisCluster
from redis.commands.core import Script

from ..keys import QueueKeys
from ..outcome import Outcome, outcome_of
from . import cluster

#: A client (fakeredis's is a ``Redis``), and what a call is sent on: a client or a pipeline.
Client = Redis | RedisCluster
Target = Client | Pipeline
#: What redis-py hands back for a call (``decode_responses=True``).
Reply = int | str | list["Reply"] | None

#: The scripts a Lab loads, by field of ``Scripts``: the file under ``emq_lab/scripts/``.
FILES = {
    **{verb: verb for verb in ("register", "register_many", "advance", "cancel", "enqueue", "due")},
    "ticks": "fast/ticks", "naive": "contrast/naive", "upsert": "contrast/upsert",
}  # fmt: skip


@functools.cache
def source(name: str, package: str = __package__) -> str:
    """The text of ``<name>.lua`` in ``package`` (``contrast/<x>``, ``fast/<x>``: in a folder), read once."""
    return resources.files(package).joinpath(f"{name}.lua").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Scripts:
    """The scripts registered on one client (redis-py's ``Script``: EVALSHA, loading on NOSCRIPT)."""

    register: Script
    register_many: Script
    advance: Script
    cancel: Script
    enqueue: Script
    due: Script
    ticks: Script
    naive: Script
    upsert: Script

    @classmethod
    def load(cls, client: Client) -> Scripts:
        return cls(**{field: client.register_script(source(path)) for field, path in FILES.items()})

    def replacing(self, client: Client, **sources: str) -> Scripts:
        """The same scripts with some replaced by Lua source (a learner's: ``exercises.with_scripts`` checks it)."""
        if unknown := sorted(set(sources) - {f.name for f in fields(self)}):
            raise ValueError(f"scripts: no script named {', '.join(unknown)}; use one of {', '.join(FILES)}")
        return replace(self, **{field: client.register_script(text) for field, text in sources.items()})

    def stock(self, field: str) -> bool:
        """True when ``field`` still runs the shipped script (not a learner's, via ``with_scripts``)."""
        return bool(getattr(self, field).script == source(FILES[field]))


@dataclass(frozen=True)
class Call:
    """One script call as data: which script, its KEYS and its ARGV."""

    script: str  # a field of Scripts
    keys: tuple[str, ...]
    args: tuple[str | int, ...]


def send(scripts: Scripts, call: Call, target: Target) -> Reply:
    """Send ``call`` on a client (its reply) or queue it on a pipeline (the reply comes at execute())."""
    script: Script = getattr(scripts, call.script)
    return script(keys=list(call.keys), args=list(call.args), client=target)


def send_all(client: Client, scripts: Scripts, calls: Sequence[Call]) -> list[Reply]:
    """``calls`` in one pipeline, their replies in order; the first error reply raises, as a single
    call's would. Every call is on one queue, so on one hash slot: on a cluster the batch goes
    to that hash slot's node (:mod:`.cluster`)."""
    if not calls:
        return []
    if isinstance(client, RedisCluster):
        hash_slots = {client.keyslot(key) for call in calls for key in call.keys}
        if len(hash_slots) > 1:
            raise ValueError(f"calls: a batch is one queue's, on one hash slot; these keys span {sorted(hash_slots)}")
        return cluster.pipelined(client, hash_slots.pop(), lambda pipe: [send(scripts, call, pipe) for call in calls])
    pipe = client.pipeline(transaction=False)
    for call in calls:
        send(scripts, call, pipe)
    return list(pipe.execute())


#: Names per register_many.lua call: a few thousand names are a few calls in one round trip.
MANY = 500
# What one call may do, whatever its ARGV (the scripts refuse more): a long call holds a class's shared server.
MAX_MANY, MAX_MANY_BYTES = 1000, 4 * 1024 * 1024  # register_many.lua's own bounds: names, names x template bytes
MAX_DUE = 5000  # due.lua: its limit (it also stops adding rows past 1 MiB of names and templates)
MAX_BATCH, MAX_READS, MAX_WANT = 1000, 10_000, 10_000  # rows a tick (any pump); ticks.lua: ticks, occurrences a call


# -- the calls, one function per script ----------------------------------------------------------
def register(k: QueueKeys, name: str, every_ms: int, template: str, first_ms: int) -> Call:
    """register.lua -> reply for :func:`outcome`."""
    return Call("register", (k.registry, k.record(name)), (name, every_ms, template, first_ms))


def register_many(k: QueueKeys, names: Sequence[str], every_ms: int, template: str, first_ms: int) -> Call:
    """register_many.lua for ``names`` (at most :data:`MAX_MANY`, and at most
    :data:`MAX_MANY_BYTES` of template in all) sharing a period, template and first run."""
    return Call(
        "register_many", (k.registry, *(k.record(name) for name in names)), (every_ms, template, first_ms, *names)
    )


def cancel(k: QueueKeys, name: str) -> Call:
    """cancel.lua -> reply for :func:`outcome`."""
    return Call("cancel", (k.registry, k.record(name)), (name,))


def advance(k: QueueKeys, name: str, next_ms: int, read_ms: int | None = None, read_every: int | None = None) -> Call:
    """advance.lua: move ``name`` to ``next_ms`` if the row still holds ``read_ms`` and the record
    ``read_every`` (None skips that check) -> reply for :func:`outcome`."""
    args = (name, next_ms, "" if read_ms is None else read_ms, "" if read_every is None else read_every)
    return Call("advance", (k.registry, k.record(name)), args)


def enqueue(k: QueueKeys, name: str, fired_at_ms: int, template: str, job_id: str | None = None) -> Call:
    """enqueue.lua; ``job_id=None`` mints a fresh ``JOB-`` id in the script -> reply for :func:`enqueued`."""
    args = ("" if job_id is None else job_id, name, fired_at_ms, template)
    return Call("enqueue", (k.counter, k.wait, k.job_prefix), args)


def due(k: QueueKeys, now_ms: int, limit: int) -> Call:
    """due.lua: the rows scored at or before ``now_ms``, by score, at most ``limit`` -> :func:`rows`."""
    return Call("due", (k.registry,), (now_ms, limit))


def contrast(script: str, k: QueueKeys, name: str, every_ms: int, template: str, first_ms: int) -> Call:
    """A contrast script, ``naive`` or ``upsert`` -> reply for :func:`outcome_of` ``contrast/<script>``."""
    return Call(script, (k.registry, k.record(name), k.delayed), (name, every_ms, template, first_ms))


def ticks(
    k: QueueKeys, *, now_ms: int, tick_ms: int, batch: int, reads: int, want: int, slot_keyed: bool, rule: str,
    finish_ms: int | None,
) -> Call:  # fmt: skip
    """fast/ticks.lua: ticks from ``now_ms`` every ``tick_ms`` until ``want`` fired -> :func:`ticked`;
    ``rule`` a Measure's value (the script refuses another)."""
    ids = "slot" if slot_keyed else "fresh"
    finish = "" if finish_ms is None else finish_ms
    args = (now_ms, tick_ms, batch, reads, want, ids, rule, finish)
    return Call("ticks", (k.registry, k.counter, k.wait, k.job_prefix), args)


# -- the replies: outcome() for an integer code, one function for each other reply ---------------
def int_reply(reply: Reply) -> int:
    """An integer reply (a Lua number; a learner's script may answer it as a string). A TypeError
    for nil or an array, a ValueError for other text, as ``int()`` raises (the exercises say which)."""
    if not isinstance(reply, int | str):
        raise TypeError(f"a script answered {reply!r:.60} where an integer belongs")
    return int(reply)


def _array(reply: Reply) -> list[Reply]:
    if not isinstance(reply, list):
        raise TypeError(f"a script answered {reply!r:.60} where an array belongs")
    return reply


def outcome(script: str, reply: Reply) -> Outcome:
    """The Outcome of ``script``'s integer code: register, cancel, advance, enqueue (its pair, a ticks.lua row)."""
    return outcome_of(script, int_reply(reply))


def registered_many(reply: Reply) -> list[Outcome]:
    """register_many.lua's array of 1 (REGISTERED) and 0 (EXISTS), one per name."""
    return [outcome("register", code) for code in _array(reply)]


def enqueued(reply: Reply) -> tuple[Outcome, str]:
    """enqueue.lua's ``{code, job_id}``."""
    code, job_id = _array(reply)
    return outcome("enqueue", code), str(job_id)


@dataclass(frozen=True)
class Row:
    """One registry member as read, with its record (None when the record is gone). A record whose
    stored template is over :data:`emq_lab.validate.MAX_TEMPLATE_BYTES` (a learner's own HSET,
    past register's check) is refused: ``template`` None, ``template_bytes`` its size, no job."""

    name: str
    slot_ms: int  # its score as read: the run this row is due for
    every_ms: int | None
    template: str | None
    template_bytes: int | None = None


def rows(reply: Reply) -> list[Row]:
    """due.lua's flat array, four entries a row: name, score, every_ms, template (an int: its size; see Row)."""
    flat = _array(reply)
    return [
        Row(
            str(name),
            int(float(str(score))),
            None if every is None else int_reply(every),
            None if template is None or isinstance(template, int) else str(template),
            template if isinstance(template, int) else None,
        )
        for name, score, every, template in zip(flat[0::4], flat[1::4], flat[2::4], flat[3::4], strict=True)
    ]


@dataclass(frozen=True)
class TickedRow:
    """One row a ticks.lua call took: its job (``job_id`` "" and ``enqueued`` None when the record
    was gone) and the advance's outcome (None when left for its finish)."""

    name: str
    job_id: str
    slot_ms: int
    fired_at_ms: int
    enqueued: Outcome | None
    advanced: Outcome | None


@dataclass(frozen=True)
class Ticked:
    """What one ticks.lua call did: its rows in order, the now the next call takes up from, and
    whether it stopped at its bound of ticks (``more``: there may be more)."""

    rows: list[TickedRow]
    next_now_ms: int
    more: bool


def ticked(reply: Reply) -> Ticked:
    """ticks.lua's ``{next_now, more, then name, job_id, slot_ms, fired_at_ms, enqueued, advanced a row}``."""
    next_now, more, *flat = _array(reply)
    if len(flat) % 6:
        raise RuntimeError(f"ticks.lua answered {len(flat)} entries, not six a row")

    def coded(script: str, code: Reply) -> Outcome | None:
        return None if int_reply(code) == -1 else outcome(script, code)

    out = [
        TickedRow(str(name), str(job_id), int_reply(slot), int_reply(at), coded("enqueue", e), coded("advance", a))
        for name, job_id, slot, at, e, a in zip(*(flat[i::6] for i in range(6)), strict=True)
    ]
    return Ticked(out, int_reply(next_now), bool(int_reply(more)))
