"""The fast-forward: many ticks of a pump in one round trip, for the cadence dive's fast-forward
panel and the explorer's lanes. The ticks are the pump's (``Pump.tick`` then
``clock.advance(step_ms)`` in a loop), run by ``scripts/fast/ticks.lua``, which does in one call
what due.lua, enqueue.lua and advance.lua do a call at a time; the equivalence tests keep them
in step. Read :mod:`emq_lab.pump` to learn the tick; this module only makes ten thousand quick."""

from __future__ import annotations

from collections.abc import Iterator

from . import scripts, validate
from .clock import AdvancingClock
from .outcome import Outcome
from .pump import Occurrence, Pump
from .schedule import Measure

#: The most ticks one ticks.lua call takes: it bounds how long the server runs one call (the
#: script refuses more than ``scripts.MAX_READS``, and stops itself at its work bound).
TICKS_PER_CALL = scripts.MAX_READS


def forward(
    pump: Pump, occurrences: int, *, step_ms: int, finish_ms: int | None = None, per_call: int = 100
) -> Iterator[list[Occurrence]]:
    """Tick ``pump`` from its SimClock's now every ``step_ms`` (0: at each moment a row falls due)
    until ``occurrences`` have fired, ``per_call`` of them a round trip (at most
    ``scripts.MAX_WANT``: one call's work stays small on a shared server); yields what each call
    fired and leaves the clock at the tick after the last one taken. A tick that would find
    nothing due is passed over (it would read nothing and write nothing). ``finish_ms``
    (start-to-finish only): each run finishes that long after its release, and its finish
    advances the row (next = finish + period). Stops early when nothing is registered, or when
    a call's ticks only replayed slot-keyed ids already enqueued."""
    clock = pump.lab.clock
    if not isinstance(clock, AdvancingClock):
        raise ValueError("clock: forward() needs a SimClock (one that can advance)")
    validate.limit(occurrences, field="occurrences")
    validate.limit(per_call, field="per_call")
    validate.integer(step_ms, "step_ms", 0, unit=" ms")
    if not isinstance(pump.rule, Measure):
        raise ValueError("rule: forward() computes the measures in the script; tick a function rule with tick()")
    if finish_ms is not None:
        if pump.rule is not Measure.START_TO_FINISH:
            raise ValueError(f"finish_ms: a run's length, for start-to-finish only; got {finish_ms!r}")
        validate.integer(finish_ms, "finish_ms", 0, unit=" ms")
    if not (pump.lab.scripts.stock("enqueue") and pump.lab.scripts.stock("advance")):
        raise ValueError("scripts: forward() runs the shipped enqueue and advance; tick a learner's with tick()")
    left = occurrences
    while left > 0:
        want = min(left, per_call, scripts.MAX_WANT)
        call = scripts.ticks(
            pump.k,
            now_ms=clock.now_ms(),
            tick_ms=step_ms,
            batch=pump.batch,
            reads=TICKS_PER_CALL,
            want=want,
            slot_keyed=pump.slot_keyed,
            rule=str(pump.rule),
            finish_ms=finish_ms,
        )
        done = scripts.ticked(scripts.run(pump.lab.scripts, call, pump.lab.client))
        clock.advance(done.next_now_ms - clock.now_ms())
        fired = [
            Occurrence(row.job_id, row.name, row.fired_at_ms, row.slot_ms)
            for row in done.rows
            if row.enqueued is Outcome.ENQUEUED
        ]
        left -= len(fired)
        yield fired
        if not done.more and len(fired) < want:
            return  # nothing is registered, or the ticks only replayed slots already enqueued
