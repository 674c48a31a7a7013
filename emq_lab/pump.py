"""The pump: each tick reads the due registrations, enqueues one occurrence per name and
advances its single registry row (start-to-start unless told otherwise), only if the row still
holds the run the tick read.

A tick has three phases, and the cancel dive steps through exactly these:
``read`` (due.lua: the due rows and their records, one round trip), ``enqueue`` (enqueue.lua per
live row, the job id minted in the script) and ``advance`` (advance.lua per row: a
compare-and-set against the score and period read, or the sweep of a member whose record is
gone).
``Pump.tick()`` is ``begin().run()``: the enqueues and advances go in one pipeline, so a tick
costs two round trips whatever the number of names.

The fast path, ticks.lua, reads and fires in one call with the rule's next run computed in the
script: ``Pump.drain()`` (up to 1,000 rows a call) and ``Pump.forward()`` (many ticks a call) use it.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from itertools import chain, compress
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from . import backend, scripts, validate
from .clock import AdvancingClock, whole_ms
from .outcome import Outcome
from .schedule import Measure, next_on_grid, next_start_to_start
from .scripts import Row

if TYPE_CHECKING:
    from .lab import Lab

#: The most due reads one ``forward`` call takes: it bounds how long the server runs one call.
FORWARD_READS = 10_000

#: The most rows one ``drain`` call of ticks.lua takes, by default (about 10 ms of the server's
#: time): fewer round trips, and still no long stall for the others on the server.
DRAIN_ROWS = 1_000

#: A pump rule: a Measure (or its value), or ``(release_ms, every_ms) -> next_ms``.
Rule = Measure | str | Callable[[int, int], int]

T = TypeVar("T")


class Occurrence(NamedTuple):
    """One run produced by a tick (a named tuple: a drain makes thousands)."""

    job_id: str
    name: str
    fired_at_ms: int
    slot_ms: int  # the registry score that made it due


def slot_id(name: str, slot_ms: int) -> str:
    """The slot-keyed occurrence id: the same slot always gets the same id."""
    return f"{name}:{slot_ms}"


PHASES = ("read", "enqueue", "advance")


class Tick:
    """One pass of a pump, phase by phase: ``read()``, ``enqueue()``, ``advance()`` (each once,
    in that order), or ``run()`` for all three. ``now_ms`` is read once, when the tick begins."""

    def __init__(self, pump: Pump) -> None:
        self.pump = pump
        self.now_ms = pump.lab.clock.now_ms()
        self.rows: list[Row] = []
        self.fired: list[Occurrence] = []
        self.advanced: list[tuple[str, Outcome]] = []
        self.done: list[str] = []  # phases taken, in order
        self._plan: list[tuple[Row, int]] | None = None
        self._queued: tuple[list[Row], list[tuple[Row, int]]] | None = None

    # -- the phases ---------------------------------------------------------------------------

    def read(self) -> list[Row]:
        """The due read: members scored at or before now, in score order, one batch, with records."""
        self._enter("read")
        p = self.pump
        self.rows = scripts.due(p.lab.client, p.lab.scripts, p.k, self.now_ms, p.batch)
        return self.rows

    def enqueue(self) -> list[Occurrence]:
        """Enqueue one occurrence per live row read (a gone record, or a replayed slot, makes none)."""
        self._enter("enqueue")
        self._flush(enqueue=True, advance=False)
        return self.fired

    def advance(self) -> list[tuple[str, Outcome]]:
        """Advance each row read by the pump's rule if it still holds the score read (MOVED if
        not), sweep each whose record is gone. Under start-to-finish a live row is left for the
        worker that finishes the run."""
        self._enter("advance")
        self._flush(enqueue=False, advance=True)
        return self.advanced

    def run(self, *, after_enqueue: Callable[[Tick], None] | None = None) -> list[Occurrence]:
        """read -> enqueue -> advance. Without a hook the enqueues and advances share one
        pipeline; ``after_enqueue(tick)`` runs between them (the crash dive's fault goes there)."""
        self.read()
        if after_enqueue is None:
            self._enter("enqueue")
            self._enter("advance")
            self._flush(enqueue=True, advance=True)
        else:
            self.enqueue()
            after_enqueue(self)
            self.advance()
        return self.fired

    # -- what the tick did --------------------------------------------------------------------

    @property
    def moved(self) -> list[str]:
        """Names whose row was no longer the one read (cancelled and registered again): left alone."""
        return [name for name, outcome in self.advanced if outcome is Outcome.MOVED]

    def next_run(self, row: Row) -> int:
        """The score the pump's rule gives ``row`` after this tick's release."""
        return self.pump.next_run(row, self.now_ms)

    # -- inside -------------------------------------------------------------------------------

    def _enter(self, phase: str) -> None:
        expected = PHASES[len(self.done)] if len(self.done) < len(PHASES) else None
        if phase != expected:
            if phase in self.done:
                raise ValueError(f"{phase}: this tick already took it; begin a new tick")
            raise ValueError(f"{phase}: a tick goes read -> enqueue -> advance; take {expected} first")
        self.done.append(phase)

    def plan(self) -> list[tuple[Row, int]]:
        """Each row read with the score its advance will write, all computed and checked before
        the tick writes anything (so a tick never enqueues what it could not advance)."""
        if self._plan is None:
            self._plan = [(row, self._checked_next(row)) for row in self.rows]
        return self._plan

    def _checked_next(self, row: Row) -> int:
        if row.every_ms is None:
            return self.now_ms  # a dangling member: the advance sweeps it whatever the score
        if self.pump.leaves_for_finish(row):
            return row.next_ms
        return whole_ms(self.pump.next_run(row, self.now_ms), "rule: the next run")

    def _split(self, *, enqueue: bool, advance: bool) -> tuple[list[Row], list[tuple[Row, int]]]:
        """The rows to enqueue (the live ones) and the rows to advance with their next score."""
        p = self.pump
        plan = self.plan()
        live = [row for row, _ in plan if row.every_ms is not None] if enqueue else []
        moving = [(row, nxt) for row, nxt in plan if not p.leaves_for_finish(row)] if advance else []
        return live, moving

    def _queue(
        self, pipe: Any, live: list[Row], moving: list[tuple[Row, int]], read_ms: int | None, limit: int = 0
    ) -> None:
        p = self.pump
        for row in live:
            job_id = slot_id(row.name, row.next_ms) if p.slot_keyed else None
            scripts.enqueue(pipe, p.lab.scripts, p.k, row.name, self.now_ms, row.template or "", job_id)
        for row, nxt in moving:
            scripts.advance(pipe, p.lab.scripts, p.k, row.name, nxt, row.next_ms, row.every_ms)
        if read_ms is not None:
            scripts.due(pipe, p.lab.scripts, p.k, read_ms, limit or p.batch)

    def _take(self, replies: list[Any], live: list[Row], moving: list[tuple[Row, int]], read: bool) -> list[Row]:
        for row, reply in zip(live, replies, strict=False):
            outcome, job_id = scripts.enqueue_reply(reply)
            if outcome is Outcome.ENQUEUED:
                self.fired.append(Occurrence(job_id, row.name, self.now_ms, row.next_ms))
        for (row, _), reply in zip(moving, replies[len(live) :], strict=False):
            self.advanced.append((row.name, scripts.advance_reply(reply)))
        self.pump.advanced = list(self.advanced)
        return scripts.due_reply(replies[len(live) + len(moving)]) if read else []

    def _flush(
        self,
        *,
        enqueue: bool,
        advance: bool,
        read_next: bool = False,
        read_at: int | None = None,
        fire: bool = False,
        limit: int = 0,
    ) -> list[Row]:
        """Send this tick's enqueues and/or advances in one pipeline; with ``read_next`` (or a
        ``read_at`` "now") the next due read (of ``limit`` rows, else a batch) goes last in the
        same pipeline and its rows are returned.
        With ``fire`` (enqueue and advance both) the rows go to fire.lua in one call instead of
        two scripts a row: the same functions, the same outcomes."""
        p = self.pump
        read_ms = read_at if read_at is not None else self.now_ms if read_next else None
        if fire:
            return self._fire(read_ms, limit)
        live, moving = self._split(enqueue=enqueue, advance=advance)
        if not live and not moving and read_ms is None:
            return []
        replies = scripts.batch(
            p.lab.client, p.lab.scripts, lambda pipe: self._queue(pipe, live, moving, read_ms, limit), key=p.k.registry
        )
        return self._take(replies, live, moving, read_ms is not None)

    def _fire(self, read_ms: int | None, limit: int = 0) -> list[Row]:
        """The fast path of ``_flush``: fire.lua for the whole plan (a row left for its finish
        goes with no next run), then the due read at ``read_ms`` (if any), in one pipeline."""
        p = self.pump
        rows = [(row, None if p.leaves_for_finish(row) else nxt) for row, nxt in self.plan()]
        if not rows and read_ms is None:
            self._took([], [])
            return []

        def build(pipe: Any) -> None:
            if rows:
                scripts.fire(pipe, p.lab.scripts, p.k, self.now_ms, rows, slot_keyed=p.slot_keyed)
            if read_ms is not None:
                scripts.due(pipe, p.lab.scripts, p.k, read_ms, limit or p.batch)

        replies = scripts.batch(p.lab.client, p.lab.scripts, build, key=p.k.registry)
        self._took(scripts.fire_reply(replies[0], rows) if rows else [], [row.next_ms for row, _ in rows])
        return scripts.due_reply(replies[-1]) if read_ms is not None else []

    def _took(self, fired: list[scripts.Fired], slots: list[int]) -> None:
        """fire.lua's answers -> ``fired`` and ``advanced``, as the two scripts' answers give them."""
        for each, slot in zip(fired, slots, strict=True):
            if each.enqueued is Outcome.ENQUEUED:
                self.fired.append(Occurrence(each.job_id, each.name, self.now_ms, slot))
        self.advanced += [(each.name, each.advanced) for each in fired if each.advanced is not None]
        self.pump.advanced = list(self.advanced)

    # -- a tick inside a larger pipeline (several pumps' ticks in one round trip) -------------

    def given(self, rows: list[Row]) -> None:
        """Take ``rows`` as this tick's read: what a due read at this tick's now, sent in a
        pipeline of the caller's, answered (``scripts.due`` / ``scripts.due_reply``)."""
        self._enter("read")
        self.rows = rows

    def queue(self, pipe: Any) -> int:
        """Queue the rest of this tick, its enqueues then its advances, on the caller's ``pipe``;
        returns how many replies they take. Hand those replies, in order, to :meth:`take`.
        Queueing again (a pipeline built twice) queues the same calls."""
        if self._queued is None:
            self._enter("enqueue")
            self._enter("advance")
            self._queued = self._split(enqueue=True, advance=True)
        live, moving = self._queued
        self._queue(pipe, live, moving, None)
        return len(live) + len(moving)

    def take(self, replies: list[Any]) -> list[Occurrence]:
        """This tick's share of the pipeline's replies -> what it fired (``advanced`` is set too)."""
        if self._queued is None:
            raise ValueError("replies: queue this tick on a pipeline first")
        live, moving = self._queued
        self._take(replies, live, moving, False)
        return self.fired


_threads: dict[str, tuple[int, ThreadPoolExecutor]] = {}  # by role: (the pid that started it, it)
_threads_lock = threading.Lock()


def _threads_for(role: str, count: int) -> ThreadPoolExecutor:
    """The process's ``count`` threads for ``role``, started by the first drain that needs them
    and idle between drains (a thread started in the middle of a drain would hold up its next
    call). A forked child has no copy of its parent's threads, so it starts its own."""
    with _threads_lock:
        found = _threads.get(role)
        if found is None or found[0] != os.getpid():
            found = (os.getpid(), ThreadPoolExecutor(count, thread_name_prefix=f"emq-{role}"))
            for each in [found[1].submit(int) for _ in range(count)]:
                each.result()  # its threads run from here on
            _threads[role] = found
        return found[1]


def _map_behind(replies: Iterable[Any], map_: Callable[[Any], T]) -> list[T]:
    """``map_`` over ``replies``, in order, each reply mapped on a worker thread while the
    caller's thread makes the next call: that thread waits on the server's socket (redis-py lets
    go of the GIL there), and the worker maps in that wait."""
    worker = _threads_for("map", 1)
    pending = [worker.submit(map_, reply) for reply in replies]
    return [each.result() for each in pending]


def _two_in_flight(call: Callable[[], Any], left: Callable[[Any], int], per_call: int) -> Iterator[Any]:
    """The replies of ``call()``, made again while its replies leave rows due (``left``, each call
    taking up to ``per_call``), with a call sent before the last one's reply is read, two at most
    out at once: the server goes from one call to the next with no wait for the client, whose
    thread maps each reply while the next calls are out. Two calls out may run in either order
    (each takes the due rows still there when it runs), so the fewest rows any reply left is
    what is left (rows that fall due meanwhile are the next drain's). No call outlives the
    drain: when one fails, the other is waited for before the failure goes on."""
    reply = call()
    yield reply
    rows = left(reply)
    out: deque[Future[Any]] = deque()
    try:
        while True:
            while len(out) < 2 and rows > per_call * len(out):
                out.append(_threads_for("call", 2).submit(call))
            if not out:
                return
            reply = out.popleft().result()
            yield reply
            rows = min(rows, left(reply))
    finally:
        wait(out)


class Pump:
    """Drives one queue. ``batch`` bounds the names read per tick; ``slot_keyed`` names each
    occurrence ``<name>:<slot_ms>`` so a replayed slot collides.

    ``rule`` is what the advance measures the next run from:

    - ``start-to-start`` (the default): the release, next = now + every_ms;
    - ``fixed grid``: the slot that fired, next = slot + every_ms, a missed slot skipped forward;
    - ``start-to-finish``: not the pump's to compute. The pump only releases (it still sweeps a
      member whose record is gone); whoever finishes the run advances the row then, with
      ``Repeat.advance`` (next = finish + every_ms);
    - a function ``(release_ms, every_ms) -> next_ms``, used as start-to-start is (the exercises
      run a learner's rule through the real pump this way).
    """

    def __init__(
        self, lab: Lab, queue: str, *, batch: int = 100, slot_keyed: bool = False, rule: Rule = Measure.START_TO_START
    ) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.k = lab.keyspace(self.queue)
        self.batch = validate.limit(batch, field="batch")
        self.rule: Measure | Callable[[int, int], int]
        if callable(rule):
            self.rule = rule
        else:
            try:
                self.rule = Measure(rule)
            except ValueError:
                choices = ", ".join(repr(m.value) for m in Measure)
                raise ValueError(f"rule: {rule!r} is not a measure; use one of {choices} or a function") from None
        if not isinstance(slot_keyed, bool):
            raise ValueError(f"slot_keyed: expected True or False, got {slot_keyed!r}")
        self.slot_keyed = slot_keyed
        self.advanced: list[tuple[str, Outcome]] = []  # what each advance of the last tick answered

    def begin(self) -> Tick:
        """A tick, its "now" read from the lab's clock; take its phases or ``run()`` it."""
        return Tick(self)

    def tick(self, *, after_enqueue: Callable[[Tick], None] | None = None) -> list[Occurrence]:
        """One pass: due read -> enqueue -> advance (by the rule). A late name fires once."""
        return self.begin().run(after_enqueue=after_enqueue)

    def drain(self, *, per_call: int = DRAIN_ROWS) -> list[Occurrence]:
        """Every occurrence due now, batch after batch, with the rules of ``tick``. A name fires
        once per drain; names that stay due (left for the finish, on the grid's next slot, or
        registered anew due now by someone else) are left for the next drain or tick.

        Under start-to-start and the grid, ticks.lua reads each batch and fires it (the functions
        of enqueue.lua, the rule's next run, the advance) with nothing in between to move a row;
        one call takes ``per_call // batch`` batches (at least one), so ``per_call`` rows bound
        how long the server runs one call. On a server, each reply is turned into occurrences
        while the next call runs; under start-to-start (where a fired row moves past now, so a
        call has nothing to pass over) the next call also goes out before the last reply is read,
        two at most at once, and the server goes from call to call without waiting for the
        client. The occurrences come in the order the rows fired.

        Under start-to-finish or a function rule, the host computes the next runs: each batch
        goes to fire.lua with the next batch's read behind it.
        A lab whose enqueue or advance script a learner replaced (``with_scripts``) runs those
        scripts per row instead, so the learner's script is what answers."""
        validate.limit(per_call, field="per_call")
        if self.fast and self.rule in (Measure.START_TO_START, Measure.GRID):
            return self._drain_in_script(min(FORWARD_READS, max(1, per_call // self.batch)))
        fast = self.fast
        tick = self.begin()
        tick.read()
        fired: list[Occurrence] = []
        seen: set[str] = set()
        while tick.rows:
            tick.done += ["enqueue", "advance"]
            seen.update(row.name for row in tick.rows)
            # the next read takes a batch past the names fired so far, which may still be due
            following = tick._flush(enqueue=True, advance=True, read_next=True, fire=fast, limit=self.batch + len(seen))
            fired.extend(tick.fired)
            fresh = [row for row in following if row.name not in seen][: self.batch]
            if not fresh:
                break
            tick = self.begin()
            tick.done.append("read")
            tick.rows = fresh
        return fired

    def _drain_in_script(self, reads: int) -> list[Occurrence]:
        now = self.lab.clock.now_ms()
        passing: list[str] = []  # fired, and still due at now (the grid's next slot is now)

        def call() -> Any:
            return scripts.ticks(
                self.lab.client,
                self.lab.scripts,
                self.k,
                drain=True,
                now_ms=now,
                batch=self.batch,
                reads=reads,
                slot_keyed=self.slot_keyed,
                rule=str(self.rule),
                passing=passing,
                mapped=False,
            )

        def one_by_one() -> Iterator[Any]:  # each call passes over the names fired before it
            while True:
                reply = call()
                yield reply
                head = scripts.ticks_head(reply)
                if not head.more:
                    return
                passing.extend(head.passing)

        def mapped(reply: Any) -> tuple[tuple[float, bytes], list[Occurrence], list[tuple[str, Outcome]]]:
            done = scripts.ticks_reply(reply)
            advanced: list[tuple[str, Outcome]] = []
            first = (done.slots_ms[0], done.names[0].encode()) if done.names else (float("inf"), b"")
            return first, self._occurrences(done, advanced), advanced

        if backend.in_process(self.lab.client):  # nothing to wait on: one call after the other
            calls = [mapped(reply) for reply in one_by_one()]
        elif self.rule is Measure.START_TO_START:  # a fired row moves past now: nothing to pass over

            def left(reply: Any) -> int:
                head = scripts.ticks_head(reply)
                return head.due if head.more else 0

            calls = [mapped(reply) for reply in _two_in_flight(call, left, reads * self.batch)]
            # in the order the calls ran: each took the due rows that sort first when it ran
            calls.sort(key=lambda each: each[0])
        else:
            calls = _map_behind(one_by_one(), mapped)
        self.advanced = list(chain.from_iterable(advanced for _, _, advanced in calls))
        return list(chain.from_iterable(fired for _, fired, _ in calls))

    def _occurrences(self, done: scripts.Ticked, advanced: list[tuple[str, Outcome]]) -> list[Occurrence]:
        """ticks.lua's rows -> the occurrences stored (``advanced`` gets each advance's outcome)."""
        advanced += [(name, a) for name, a in zip(done.names, done.advanced, strict=True) if a is not None]
        rows = zip(done.job_ids, done.names, done.fired_at_ms, done.slots_ms, strict=True)
        stored = [each is Outcome.ENQUEUED for each in done.enqueued]
        return list(map(Occurrence._make, compress(rows, stored)))

    # -- many ticks in one call -------------------------------------------------------------

    def forward(
        self, occurrences: int, *, step_ms: int, finish_ms: int | None = None, per_call: int = 100
    ) -> Iterator[list[Occurrence]]:
        """Tick from the SimClock's now every ``step_ms`` (0: at each moment a row falls due)
        until ``occurrences`` have fired, ``per_call`` of them a round trip; yields what each call
        fired and leaves the clock at the tick after the last one taken. The same ticks as
        ``ticks(step_ms=...)``: a tick that would find nothing due is passed over, since it would
        read nothing and write nothing. ``finish_ms`` (start-to-finish): each run finishes that
        long after its release, and its finish advances the row (next = finish + period).
        Stops early when nothing is registered, or when a call's ticks only replayed slot-keyed
        ids already enqueued (ticks.lua counts a replay toward ``per_call``; it stores nothing)."""
        validate.limit(occurrences, field="occurrences")
        validate.limit(per_call, field="per_call")
        left = occurrences
        while left > 0:
            want = min(left, per_call)
            done = scripts.ticks(self.lab.client, self.lab.scripts, self.k, **self.ahead(want, step_ms, finish_ms))
            fired = self.forwarded(done)
            left -= len(fired)
            yield fired
            if not done.more and len(fired) < want:
                return  # nothing is registered, or the ticks only replayed slots already enqueued

    def ahead(self, want: int, step_ms: int, finish_ms: int | None = None) -> dict[str, Any]:
        """The arguments of ``scripts.ticks`` for ticks from the clock's now until ``want`` fired
        (queue them on a pipeline with ``scripts.ticks(pipe, ..., **pump.ahead(...))`` and hand
        the reply, through ``scripts.ticks_reply``, to :meth:`forwarded`)."""
        if not isinstance(self.lab.clock, AdvancingClock):
            raise ValueError("clock: forward() needs a SimClock (one that can advance)")
        if isinstance(step_ms, bool) or not isinstance(step_ms, int) or step_ms < 0:
            raise ValueError(f"step_ms: expected an int of milliseconds >= 0, got {step_ms!r}")
        if not isinstance(self.rule, Measure):
            raise ValueError("rule: forward() computes the measures in the script; tick a function rule with ticks()")
        if finish_ms is not None and (
            self.rule is not Measure.START_TO_FINISH
            or isinstance(finish_ms, bool)
            or not isinstance(finish_ms, int)
            or finish_ms < 0
        ):
            raise ValueError(f"finish_ms: a run's length in ms >= 0, for start-to-finish only; got {finish_ms!r}")
        if not self.fast:
            raise ValueError("scripts: forward() runs the shipped enqueue and advance; tick a learner's with ticks()")
        return {
            "drain": False,
            "now_ms": self.lab.clock.now_ms(),
            "tick_ms": step_ms,
            "batch": self.batch,
            "reads": FORWARD_READS,
            "want": validate.limit(want, field="want"),
            "slot_keyed": self.slot_keyed,
            "rule": str(self.rule),
            "finish_ms": finish_ms,
        }

    def forwarded(self, done: scripts.Ticked) -> list[Occurrence]:
        """A ticks.lua call's reply -> what it fired; the SimClock moves to the next tick."""
        clock = self.lab.clock
        assert isinstance(clock, AdvancingClock)
        clock.advance(done.next_now_ms - clock.now_ms())
        self.advanced = []
        return self._occurrences(done, self.advanced)

    @property
    def fast(self) -> bool:
        """True when the lab runs the shipped enqueue and advance scripts, whose functions
        fire.lua and ticks.lua share: then a batch may go to one of them in one call."""
        return scripts.stock(self.lab.scripts, "enqueue") and scripts.stock(self.lab.scripts, "advance")

    def ticks(self, *, step_ms: int) -> Iterator[list[Occurrence]]:
        """Tick, move the SimClock on by ``step_ms``, tick again, ... for as long as the caller
        takes from this iterator; each step yields what its tick fired. The same ticks as
        ``tick()`` then ``clock.advance(step_ms)`` in a loop, in one round trip a tick: each
        tick's enqueues and advances share a pipeline with the next tick's due read, sent after
        the clock has moved (as the loop would have moved it before that read). The next read
        happens before the step is yielded: change the queue between steps and the next tick
        fires what the read saw. This is the tick the dives show, a tick at a time; for many ticks
        at once (the fast-forward, the cadence lanes) :meth:`forward` sends them to ticks.lua,
        many a round trip."""
        validate.limit(step_ms, field="step_ms")
        clock = self.lab.clock
        if not isinstance(clock, AdvancingClock):
            raise ValueError("clock: ticks() needs a SimClock (one that can advance)")
        tick = self.begin()
        tick.read()
        while True:
            clock.advance(step_ms)
            following = self.begin()
            tick.done += ["enqueue", "advance"]
            following.rows = tick._flush(enqueue=True, advance=True, read_at=following.now_ms)
            following.done.append("read")
            yield tick.fired
            tick = following

    def next_run(self, row: Row, now_ms: int) -> int:
        """The score the rule gives ``row`` after a release at ``now_ms``."""
        every = row.every_ms if row.every_ms is not None else 0
        if callable(self.rule) and not isinstance(self.rule, Measure):
            return self.rule(now_ms, every)
        if self.rule is Measure.START_TO_FINISH and row.every_ms is not None:
            raise ValueError("rule: under start-to-finish the run's finish advances the row, not the pump")
        if self.rule is Measure.GRID and every > 0:
            return next_on_grid(row.next_ms, every, now_ms)
        return next_start_to_start(now_ms, every)

    def leaves_for_finish(self, row: Row) -> bool:
        """True when the tick must not advance ``row``: a live row under start-to-finish."""
        return self.rule is Measure.START_TO_FINISH and row.every_ms is not None

    def run(self, *, until_ms: int, step_ms: int) -> list[Occurrence]:
        """Tick, then move a SimClock by ``step_ms``, until now passes ``until_ms``."""
        validate.limit(step_ms, field="step_ms")
        clock = self.lab.clock
        if not isinstance(clock, AdvancingClock):
            raise ValueError("clock: run() needs a SimClock (one that can advance)")
        fired: list[Occurrence] = []
        while clock.now_ms() <= until_ms:
            fired.extend(self.tick())
            clock.advance(step_ms)
        return fired
