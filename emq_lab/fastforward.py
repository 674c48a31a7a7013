"""The fast-forward: many ticks of a pump (``Pump.tick`` then ``clock.advance(step_ms)``), for the
cadence dive's fast-forward panel and the explorer's lanes. With the shipped scripts,
``scripts/fast/ticks.lua`` fires a hundred occurrences (up to 10,000 ticks) a round trip (the
equivalence tests keep it in step with due.lua, enqueue.lua and advance.lua); a lab running a
learner's due, enqueue or advance ticks the pump itself, so the learner's scripts answer. Read
:mod:`emq_lab.pump` to learn the tick."""

from __future__ import annotations

from collections.abc import Iterator

from . import scripts, validate
from .backend import scored
from .clock import AdvancingClock
from .outcome import Outcome
from .pump import Occurrence, Pump
from .schedule import Measure, first_tick_at_or_after, next_start_to_finish

#: A round: what it fired, and whether it stopped at its bound (more may be due).
Round = tuple[list[Occurrence], bool]


def forward(
    pump: Pump, occurrences: int, *, step_ms: int, finish_ms: int | None = None, per_call: int = 100
) -> Iterator[list[Occurrence]]:
    """Tick ``pump`` from its SimClock's now every ``step_ms`` (0: at each moment a row falls due)
    until ``occurrences`` have fired, ``per_call`` a round (at most ``scripts.MAX_WANT``); yields
    what each round fired, the clock left at the tick after the last. ``finish_ms`` (start-to-finish
    only): each run's length, its finish advancing the row. Stops early on a round short of its want
    with nothing more due."""
    clock = pump.lab.clock
    if not isinstance(clock, AdvancingClock):
        raise ValueError("clock: forward() needs a SimClock (one that can advance)")
    validate.limit(occurrences, field="occurrences")
    validate.limit(per_call, field="per_call")
    validate.integer(step_ms, "step_ms", 0, unit=" ms")
    if finish_ms is not None:
        if pump.rule is not Measure.START_TO_FINISH:
            raise ValueError(f"finish_ms: a run's length, for start-to-finish only; got {finish_ms!r}")
        validate.integer(finish_ms, "finish_ms", 0, unit=" ms")
    if not isinstance(pump.rule, Measure):
        raise ValueError("rule: forward() computes the measures; tick a function rule with tick()")
    stock = all(pump.lab.scripts.stock(s) for s in ("due", "enqueue", "advance"))
    left = occurrences
    while left > 0:
        want = min(left, per_call, scripts.MAX_WANT)
        fired, more = (_in_script if stock else _by_tick)(pump, clock, want, step_ms, finish_ms)
        left -= len(fired)
        yield fired
        if not more and len(fired) < want:
            return


def _in_script(pump: Pump, clock: AdvancingClock, want: int, step_ms: int, finish_ms: int | None) -> Round:
    """One ticks.lua call."""
    call = scripts.ticks(
        pump.k, now_ms=clock.now_ms(), tick_ms=step_ms, batch=pump.batch, want=want, slot_keyed=pump.slot_keyed,
        rule=str(pump.rule), finish_ms=finish_ms, reads=scripts.MAX_READS,  # reads bounds how long one call runs
    )  # fmt: skip
    done = scripts.ticked(scripts.send(pump.lab.scripts, call, pump.lab.client))
    clock.advance(done.next_now_ms - clock.now_ms())
    fired = [
        Occurrence(r.job_id, r.name, r.fired_at_ms, r.slot_ms) for r in done.rows if r.enqueued is Outcome.ENQUEUED
    ]
    return fired, done.more and bool(fired)  # a call of refused rows only would repeat for ever


def _by_tick(pump: Pump, clock: AdvancingClock, want: int, step_ms: int, finish_ms: int | None) -> Round:
    """The same round as the pump's own ticks, with the lab's scripts (a learner's where installed)."""
    fired: list[Occurrence] = []
    for _ in range(scripts.MAX_READS):
        first = scored(pump.lab.client.zrange(pump.k.registry, 0, 0, withscores=True))
        if not first:
            return fired, False
        now = clock.now_ms()
        if first[0][1] > now:  # the ticks before the first row falls due would find nothing: pass them over
            clock.advance(first_tick_at_or_after(first[0][1], start_ms=now, tick_ms=step_ms) - now)
        tick = pump.begin().run()
        if not tick.rows:  # a row is due, but the (learner's) due answers none: so would the next ticks
            return fired, False
        if finish_ms is not None:  # the worker finishes each run, then advances its row
            for row in tick.rows:
                if row.every_ms is not None:
                    next_ms = next_start_to_finish(tick.now_ms + finish_ms, row.every_ms)
                    pump.lab.repeat(pump.queue).advance_to(row.name, next_ms)
        fired += tick.fired
        clock.advance(step_ms)
        if len(fired) >= want:
            return fired, False
    return fired, bool(fired)
