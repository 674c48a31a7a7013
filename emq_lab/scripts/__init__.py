"""The Lua scripts, one file per verb, and the one place that knows each script's interface:
the order of its KEYS, how its ARGV is encoded and what its reply means (as BullMQ's
``scripts.ts`` does for its commands).

Each function takes a ``runner`` (a client, or a pipeline to queue the call on), the
:class:`Scripts` registered on that connection and the :class:`~emq_lab.keys.QueueKeys` of
the queue. Called on a client, it returns the mapped reply; queued on a pipeline, the mapping
is applied to the pipeline's result with the matching ``*_reply`` function. redis-py's
``Script`` does EVALSHA and loads the script on NOSCRIPT (at ``execute()`` for a pipeline).
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any, NamedTuple

from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from ..keys import QueueKeys
from ..outcome import Outcome, outcome_of

#: The scripts a Lab loads, by the name ``source()`` takes.
NAMES = {
    "register": "register",
    "register_many": "register_many",
    "advance": "advance",
    "cancel": "cancel",
    "enqueue": "enqueue",
    "due": "due",
    "fire": "fire",
    "ticks": "ticks",
    "naive": "contrast/naive",
    "upsert": "contrast/upsert",
}


#: A line that ``source()`` replaces with the text of a shared file under ``scripts/``, as
#: BullMQ's ``includes/``: ``-- @include lib/advance.lua``.
_INCLUDE = re.compile(r"^-- @include (\S+\.lua)[ \t]*$", re.MULTILINE)


def source(name: str) -> str:
    """The text of ``<name>.lua`` (``contrast/<x>`` for a contrast script) as it is loaded: each
    ``-- @include lib/<x>.lua`` line replaced by that file's text (enqueue.lua, advance.lua,
    fire.lua and ticks.lua share the functions of ``lib/``, so the pump's batches run the very Lua
    of its phases)."""
    return _expanded(f"{name}.lua", ())


def _expanded(path: str, within: tuple[str, ...]) -> str:
    if path in within:
        raise ValueError(f"include: {path} includes itself (via {' -> '.join(within)})")
    text = resources.files(__package__).joinpath(path).read_text(encoding="utf-8")

    def included(found: re.Match[str]) -> str:
        return _expanded(found.group(1), (*within, path)).rstrip("\n")

    return _INCLUDE.sub(included, text)


@dataclass(frozen=True)
class Slot:
    """One KEYS or ARGV entry of a script's header: ``KEYS[1]``, its local name, what it holds."""

    slot: str
    name: str
    meaning: str


@dataclass(frozen=True)
class Header:
    """What a script's opening comment block says: its purpose, KEYS, ARGV and returns."""

    script: str
    purpose: str
    keys: tuple[Slot, ...]
    argv: tuple[Slot, ...]
    returns: tuple[str, ...]


_RETURN_START = re.compile(r"^(-?\d|\{|error reply|a flat array)")
_SLOT = re.compile(r"^(KEYS|ARGV)\[(\d+)\]\s+(\S+)\s*(.*)$")


def header(name: str) -> Header:
    """Parse the comment block that opens ``<name>.lua`` (see ``source``): the first line's
    purpose, each ``KEYS[i]`` / ``ARGV[i]`` line (continuation lines joined to it) and the
    lines under ``Returns``. A script whose header names no KEYS is refused (ValueError)."""
    comments = []
    for line in source(name).splitlines():
        if not line.startswith("--"):
            break
        comments.append(line[2:].removeprefix(" "))
    purpose_lines: list[str] = []
    for line in comments:
        if not line.strip():
            break
        purpose_lines.append(line.strip())
    slots: list[Slot] = []
    returns: list[str] = []
    section = ""
    for line in comments[len(purpose_lines) :]:
        found = _SLOT.match(line)
        if found:
            kind, number, local, meaning = found.groups()
            slots.append(Slot(f"{kind}[{number}]", local, _joined(meaning)))
            section = "slot"
        elif line.startswith("Returns"):
            section = "returns"
            if line.removeprefix("Returns").strip():
                returns.append(line.removeprefix("Returns").strip())
        elif not line.strip():
            section = "" if section == "slot" else section
        elif section == "slot" and line.startswith(" ") and slots:
            last = slots[-1]
            slots[-1] = Slot(last.slot, last.name, f"{last.meaning} {' '.join(line.split())}")
        elif section == "returns":
            entry = line.strip()
            if returns and not _RETURN_START.match(entry):
                returns[-1] = f"{returns[-1]} {' '.join(entry.split())}"  # a continuation line
            else:
                returns.append(" ".join(entry.split()))
    purpose = " ".join(purpose_lines)
    keys = tuple(s for s in slots if s.slot.startswith("KEYS"))
    if not keys:
        raise ValueError(f"name: {name}.lua has no KEYS lines in its header")
    return Header(name, purpose, keys, tuple(s for s in slots if s.slot.startswith("ARGV")), tuple(returns))


def _joined(meaning: str) -> str:
    """A header's columns (separated by two or more spaces) as ``a · b``, spaces within kept."""
    return " · ".join(part for part in re.split(r"\s{2,}", meaning.strip()) if part)


@dataclass(frozen=True)
class Scripts:
    """The scripts registered on one client (EVALSHA, loading on NOSCRIPT)."""

    register: Script
    register_many: Script
    advance: Script
    cancel: Script
    enqueue: Script
    due: Script
    fire: Script
    ticks: Script
    naive: Script
    upsert: Script

    @classmethod
    def load(cls, client: Any) -> Scripts:
        return cls(**{field: client.register_script(source(path)) for field, path in NAMES.items()})

    def replacing(self, client: Any, **sources: str) -> Scripts:
        """The same scripts with some replaced by other Lua source (a learner's, say)."""
        unknown = sorted(set(sources) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"scripts: no script named {', '.join(unknown)}; use one of {', '.join(NAMES)}")
        for field, text in sources.items():
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{field}: expected Lua source text, got {text!r:.60}")
        return replace(self, **{field: client.register_script(text) for field, text in sources.items()})


# -- register / cancel / advance: KEYS = registry, record ----------------------------------------


def register(
    runner: Any, scripts: Scripts, k: QueueKeys, name: str, every_ms: int, template: str, first_ms: int
) -> Any:
    """register.lua -> Outcome.REGISTERED | Outcome.EXISTS."""
    reply = _call(scripts.register, runner, [k.registry, k.record(name)], [name, every_ms, template, first_ms])
    return reply if _queued(runner) else outcome_of("register", reply)


#: Names per register_many.lua call: a few thousand names are a few calls in one round trip.
MANY = 500


def register_many(
    runner: Any, scripts: Scripts, k: QueueKeys, names: list[str], every_ms: int, template: str, first_ms: int
) -> Any:
    """register_many.lua for ``names`` (at most :data:`MANY`) sharing a period, a template and
    a first run -> one Outcome.REGISTERED | Outcome.EXISTS per name, in order."""
    keys = [k.registry, *(k.record(name) for name in names)]
    reply = _call(scripts.register_many, runner, keys, [every_ms, template, first_ms, *names])
    return reply if _queued(runner) else register_many_reply(reply)


def register_many_reply(reply: Any) -> list[Outcome]:
    """register_many.lua's string of ``1`` (REGISTERED) and ``0`` (EXISTS) -> the Outcomes."""
    text = _text(reply)
    outcomes = {code: outcome_of("register", int(code)) for code in set(text)}
    return [outcomes[code] for code in text]


def stock(scripts: Scripts, field: str) -> bool:
    """True when ``field`` still runs the shipped script (not a learner's, via ``with_scripts``)."""
    return bool(getattr(scripts, field).script == _stock_text(field))


@functools.cache
def _stock_text(field: str) -> str:
    return source(NAMES[field])


def cancel(runner: Any, scripts: Scripts, k: QueueKeys, name: str) -> Any:
    """cancel.lua -> Outcome.CANCELLED | Outcome.ABSENT."""
    reply = _call(scripts.cancel, runner, [k.registry, k.record(name)], [name])
    return reply if _queued(runner) else outcome_of("cancel", reply)


def advance(
    runner: Any,
    scripts: Scripts,
    k: QueueKeys,
    name: str,
    next_ms: int,
    read_ms: int | None = None,
    read_every: int | None = None,
) -> Any:
    """advance.lua -> Outcome.ADVANCED | Outcome.ABSENT | Outcome.MOVED (the row no longer holds
    ``read_ms``, or its record no longer ``read_every``; None skips that check)."""
    args: list[str | int] = [
        name,
        next_ms,
        "" if read_ms is None else read_ms,
        "" if read_every is None else read_every,
    ]
    reply = _call(scripts.advance, runner, [k.registry, k.record(name)], args)
    return reply if _queued(runner) else outcome_of("advance", reply)


def contrast(runner: Any, script: Script, k: QueueKeys, name: str, every_ms: int, template: str, first_ms: int) -> int:
    """A contrast script (naive append or ZSCORE upsert): KEYS registry, record, delayed; raw reply."""
    keys = [k.registry, k.record(name), k.delayed]
    return int(_call(script, runner, keys, [name, every_ms, template, first_ms]))


# -- enqueue: KEYS = counter, wait, job prefix ----------------------------------------------------


def enqueue(
    runner: Any, scripts: Scripts, k: QueueKeys, name: str, fired_at_ms: int, template: str, job_id: str | None = None
) -> Any:
    """enqueue.lua -> (Outcome.ENQUEUED | Outcome.DUPLICATE, job_id). ``job_id=None`` mints a
    fresh ``JOB-`` id inside the script."""
    args: list[str | int] = ["" if job_id is None else job_id, name, fired_at_ms, template]
    reply = _call(scripts.enqueue, runner, [k.counter, k.wait, k.job_prefix], args)
    return reply if _queued(runner) else enqueue_reply(reply)


def enqueue_reply(reply: Any) -> tuple[Outcome, str]:
    code, job_id = reply
    return outcome_of("enqueue", code), str(job_id)


# -- due: KEYS = registry ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One registry member as read, with its record (None when the record is gone)."""

    name: str
    next_ms: int
    every_ms: int | None
    template: str | None


def due(runner: Any, scripts: Scripts, k: QueueKeys, now_ms: int, limit: int) -> Any:
    """due.lua -> [Row] scored at or before ``now_ms``, by score, at most ``limit``."""
    reply = _call(scripts.due, runner, [k.registry], [now_ms, limit])
    return reply if _queued(runner) else due_reply(reply)


def due_reply(reply: Any) -> list[Row]:
    flat = list(reply)
    return [
        Row(str(name), int(float(score)), None if every is None else int(every), template)
        for name, score, every, template in zip(flat[0::4], flat[1::4], flat[2::4], flat[3::4], strict=True)
    ]


def advance_reply(reply: Any) -> Outcome:
    return outcome_of("advance", reply)


# -- fire: KEYS = registry, counter, wait, job prefix ---------------------------------------------


@dataclass(frozen=True)
class Fired:
    """What fire.lua did for one row: the enqueue's outcome and id (None and "" when the row's
    record was gone at the read) and the advance's outcome (None when the row was left alone)."""

    name: str
    enqueued: Outcome | None
    job_id: str
    advanced: Outcome | None


def fire(
    runner: Any,
    scripts: Scripts,
    k: QueueKeys,
    fired_at_ms: int,
    rows: list[tuple[Row, int | None]],
    *,
    slot_keyed: bool = False,
) -> Any:
    """fire.lua: for each ``(row, next_ms)``, in order, what enqueue.lua then advance.lua do for
    it, in one call -> [Fired], one per row. ``row`` is as the due read returned it: a live row
    is enqueued (a fresh ``JOB-`` id, or ``<name>:<slot_ms>`` when ``slot_keyed``), a row whose
    record was gone is not; ``next_ms`` None leaves the row (start-to-finish), else the row is
    advanced to it by the compare-and-set (a gone record: the member is swept)."""
    if not rows:
        raise ValueError("rows: fire.lua needs at least one row")
    args: list[str | int] = [fired_at_ms, "slot" if slot_keyed else "fresh"]
    for row, next_ms in rows:
        every: str | int = "" if row.every_ms is None else row.every_ms
        args += [row.name, row.next_ms, every, row.template or "", "" if next_ms is None else next_ms]
    reply = _call(scripts.fire, runner, [k.registry, k.counter, k.wait, k.job_prefix], args)
    return reply if _queued(runner) else fire_reply(reply, rows)


def fire_reply(reply: Any, rows: list[tuple[Row, int | None]]) -> list[Fired]:
    """fire.lua's ``{codes, id_1, ..., id_n}`` -> one :class:`Fired` per row, in order: a row's
    two code characters are enqueue.lua's and advance.lua's replies ("-": not called)."""
    codes, *ids = reply
    codes = _text(codes)
    if len(codes) != 2 * len(rows) or len(ids) != len(rows):
        raise RuntimeError(f"fire.lua answered {len(ids)} rows for {len(rows)} sent")
    return [
        Fired(row.name, _coded("enqueue", codes[2 * i]), _text(job_id), _coded("advance", codes[2 * i + 1]))
        for i, ((row, _), job_id) in enumerate(zip(rows, ids, strict=True))
    ]


# -- ticks: KEYS = registry, counter, wait, job prefix --------------------------------------------


@dataclass(frozen=True)
class Ticked:
    """What one ticks.lua call did: the rows it took, in order, as columns (a drain turns
    thousands of rows into occurrences, and columns spare it an object a row on the way). Row i
    was read at ``slots_ms[i]``, is now at ``nexts_ms[i]`` (None: swept) and fired at
    ``fired_at_ms[i]`` as ``job_ids[i]`` ("" when the record was gone), with the enqueue's and the
    advance's outcomes as fire.lua reports them (None: not called). Then the now the next call
    takes up from, and whether it stopped at its bound of reads (``more``: there may be more).
    The names a drain's next call passes over are in the reply's head (:func:`ticks_head`)."""

    names: list[str]
    slots_ms: list[int]
    nexts_ms: list[int | None]
    job_ids: list[str]
    fired_at_ms: list[int]
    enqueued: list[Outcome | None]
    advanced: list[Outcome | None]
    next_now_ms: int
    more: bool


#: ticks.lua's rule names, by the pump's Measure values.
TICK_RULES = ("start-to-start", "fixed grid", "start-to-finish")


def ticks(
    runner: Any,
    scripts: Scripts,
    k: QueueKeys,
    *,
    drain: bool,
    now_ms: int,
    tick_ms: int = 0,
    batch: int,
    reads: int,
    want: int = 0,
    slot_keyed: bool = False,
    rule: str = "start-to-start",
    finish_ms: int | None = None,
    passing: list[str] | tuple[str, ...] = (),
    mapped: bool = True,
) -> Any:
    """ticks.lua: ticks from ``now_ms`` every ``tick_ms`` (0: at each moment a row falls due),
    one batch a tick, until ``want`` occurrences fired; or, with ``drain``, one tick at
    ``now_ms`` whose batches go on while fresh rows are due (``passing``: names an earlier call of
    the drain fired that are still due). At most ``reads`` due reads -> :class:`Ticked`.
    ``rule`` is one of :data:`TICK_RULES`; ``finish_ms`` (start-to-finish ticks) has each run
    finish that long after its release and advance its row then. ``mapped=False``: the reply as
    it came, for :func:`ticks_head` now and :func:`ticks_reply` later (a drain maps one call's
    rows while its next call runs)."""
    if rule not in TICK_RULES:
        raise ValueError(f"rule: ticks.lua computes {', '.join(TICK_RULES)}, not {rule!r}")
    args: list[str | int] = [
        "drain" if drain else "ticks",
        now_ms,
        tick_ms,
        batch,
        reads,
        want,
        "slot" if slot_keyed else "fresh",
        rule,
        "" if finish_ms is None else finish_ms,
        *passing,
    ]
    reply = _call(scripts.ticks, runner, [k.registry, k.counter, k.wait, k.job_prefix], args)
    return reply if _queued(runner) or not mapped else ticks_reply(reply)


class Head(NamedTuple):
    """What a drain's next call needs from ticks.lua's reply, read without mapping its rows:
    whether a fresh row is still due, how many rows are due (``due``, the names to pass over
    among them; 0 for ticks) and the names to pass over."""

    more: bool
    due: int
    passing: list[str]


def ticks_head(reply: Any) -> Head:
    """ticks.lua's reply -> its :class:`Head`."""
    rows = len(_text(reply[0])) // 2
    due = _text(reply[4])
    return Head(_text(reply[2]) == "1", int(due) if due else 0, [_text(each) for each in reply[5 + 2 * rows :]])


def ticks_reply(reply: Any) -> Ticked:
    """ticks.lua's ``{codes, next_now, more, numbers, due, name, id, ..., passing...}`` -> Ticked
    (``numbers``: slot, next and fired_at of each row, comma-separated; numbers in one string
    make the reply two entries a row, which the server builds and the client reads faster than
    five)."""
    codes, next_now, numbers = _text(reply[0]), _text(reply[1]), _text(reply[3])
    rows = len(codes) // 2
    flat = reply[5 : 5 + 2 * rows]
    flat = [_text(each) for each in flat] if flat and isinstance(flat[0], bytes) else flat
    values = numbers.split(",") if numbers else []
    if len(codes) % 2 or len(flat) != 2 * rows or len(values) != 3 * rows:
        raise RuntimeError(f"ticks.lua answered {len(flat)} entries and {len(values)} numbers for {rows} rows")
    enqueued = {code: _coded("enqueue", code) for code in set(codes[0::2])}  # a few codes, many rows
    advanced = {code: _coded("advance", code) for code in set(codes[1::2])}
    nexts = values[1::3]  # "" for a swept row
    return Ticked(
        flat[0::2],
        list(map(int, values[0::3])),
        list(map(int, nexts)) if "" not in nexts else [int(each) if each else None for each in nexts],
        flat[1::2],
        list(map(int, values[2::3])),
        list(map(enqueued.__getitem__, codes[0::2])),
        list(map(advanced.__getitem__, codes[1::2])),
        int(next_now),
        ticks_head(reply).more,
    )


def _coded(script: str, code: str) -> Outcome | None:
    if code == "-":
        return None
    if not code.isdigit():
        raise RuntimeError(f"the pump's script returned the code {code!r} for {script}, which no Outcome maps")
    return outcome_of(script, int(code))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


_primed: weakref.WeakSet[Scripts] = weakref.WeakSet()


def _load(client: Any, scripts: Scripts) -> None:
    """SCRIPT LOAD every script (on a cluster: on every primary)."""
    for field in fields(scripts):
        script = getattr(scripts, field.name)
        script.sha = client.script_load(script.script)
    _primed.add(scripts)


def _call(script: Script, runner: Any, keys: list[str], args: list[Any]) -> Any:
    """Run ``script`` on a client (redis-py's ``Script``: EVALSHA, loading it on NOSCRIPT), or
    queue its EVALSHA on a pipeline. A pipeline is left to :func:`batch`, which loads the scripts
    only if the server answers NOSCRIPT, instead of asking SCRIPT EXISTS before every batch
    (one round trip saved on each)."""
    if _queued(runner):
        return runner.evalsha(script.sha, len(keys), *keys, *args)
    return script(keys=keys, args=args, client=runner)


def _queued(runner: Any) -> bool:
    """True when ``runner`` is a pipeline: the call was queued, its reply comes at execute()."""
    return hasattr(runner, "execute") and hasattr(runner, "command_stack")


def batch(client: Any, scripts: Scripts, build: Any, *, key: str) -> list[Any]:
    """One round trip: ``build(pipe)`` queues calls on a pipeline, which is then executed.

    Every call of a batch is on one queue, so on one slot: ``key`` (any key of that queue) names
    it. On a cluster the pipeline goes to that slot's primary directly (redis-py's cluster
    pipeline refuses EVALSHA; a queue never spans two nodes, so none is needed).

    The batch's EVALSHAs are sent as they are. When the server answers NOSCRIPT (a new server,
    or one that restarted and lost its script cache: every EVALSHA of the batch fails alike),
    every script is loaded (on a cluster, on every primary) and the batch runs once more. A
    batch holds scripts and reads only, so running it again repeats no write.
    """
    if scripts not in _primed:
        _load(client, scripts)  # once per Lab, so the server never holds some scripts and not others
    target = client.get_redis_connection(client.get_node_from_key(key)) if isinstance(client, RedisCluster) else client
    pipe = target.pipeline(transaction=False)
    build(pipe)
    try:
        return list(pipe.execute())
    except NoScriptError:
        _load(client, scripts)
        pipe = target.pipeline(transaction=False)
        build(pipe)
        return list(pipe.execute())


def batches(client: Any, scripts: Scripts, builds: list[tuple[str, Callable[[Any], None]]]) -> list[list[Any]]:
    """Several batches, each on one queue (``key``, any key of it, names the queue), their replies
    handed back apart: one round trip for all of them on a single server, one round trip each on
    a cluster (where the queues may live on different primaries)."""
    if isinstance(client, RedisCluster):
        return [batch(client, scripts, build, key=key) for key, build in builds]
    if not builds:
        return []
    sizes: list[int] = []

    def build_all(pipe: Any) -> None:
        sizes.clear()  # batch() builds again after a NOSCRIPT
        for _, build in builds:
            before = len(pipe.command_stack)
            build(pipe)
            sizes.append(len(pipe.command_stack) - before)

    replies = batch(client, scripts, build_all, key=builds[0][0])
    out: list[list[Any]] = []
    at = 0
    for size in sizes:
        out.append(replies[at : at + size])
        at += size
    return out
