"""Dive 3's exercise: the learner writes advance.lua, the tick's last phase: its sweep, then (the
stretch) its compare-and-set. The cancel race (``dives.race.Race``) is replayed in every order the
pump allows, their script against the package's own on a second queue; :func:`why` explains the first
step where the two keyspaces part."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from itertools import permutations
from typing import TYPE_CHECKING

from ..clock import duration, hhmm, moment
from ..dives.race import ALL_LABELS, REGISTER, REREGISTER_EVERY_MS, STEPS, Race, Snapshot, Step, drop_record, snapshot
from ..outcome import Outcome
from ..sandbox import Stopped
from ..schedule import MINUTE_MS
from ..validate import printable
from .check import Check, clear, failed, key_differences, keyspace, lua_check, passed, queues
from .explain import attempt, explain_error

if TYPE_CHECKING:
    from ..lab import Lab

TICK = ("read", "enqueue", "advance")  # the pump's phases, in the only order it takes them
VANISHED = "vanished"  # the record deleted out of band before the tick: the sweep's scenario
# Before the tick: a second name due later (so a dropped registry shows), or a late pump (next run != score + every).
OTHER, LATE = "other", "late"
OTHER_NAME, LATE_MS = "digest", 50 * MINUTE_MS
# Registered anew at the very score the tick read, with another period: only ARGV[4] tells the two apart.
SAME_SCORE = "register_same_score"
# A cancel split in two, DEL the record then ZREM the member: a tick between them is the sweep's real work.
SPLIT_DEL, SPLIT_ZREM = "cancel_record", "cancel_member"
# Outside any tick: ``Repeat.advance``, which sends "" for what it did not read (SENT): a compare with "" fails.
VERB, VERB_READ = "rep_advance", "rep_advance_read"
SENT = {
    VERB: "rep.advance(name, every_ms) reads nothing before it advances, so it sends ARGV[3] (read_ms) and "
    'ARGV[4] (read_every) as "": no check',
    VERB_READ: "rep.advance(name, every_ms, read_ms=...) sends the score it read as ARGV[3], but ARGV[4] "
    '(read_every) as "": no check of the period',
}
LABELS = {
    **ALL_LABELS,
    SAME_SCORE: "registered anew at the same score",
    SPLIT_DEL: "cancel's DEL",
    SPLIT_ZREM: "cancel's ZREM",
    VERB: "rep.advance",
    VERB_READ: "rep.advance(read_ms=)",
    VANISHED: "record deleted out of band",
    OTHER: f"{OTHER_NAME} registered too",
    LATE: f"the pump {duration(LATE_MS)} late",
}
BEFORE_THE_TICK: dict[str, Callable[[Race], object]] = {
    VANISHED: lambda race: drop_record(race.lab, race.queue, race.name),
    OTHER: lambda race: race.repeat.register(OTHER_NAME, race.every_ms, '{"job": "digest"}', 2 * LATE_MS),
    LATE: lambda race: race.lab.clock.advance(LATE_MS),  # type: ignore[attr-defined]
}


class CheckRace(Race):
    """The dive's race with steps more: a registration anew at the same score, the split cancel, rep.advance."""

    def why_not(self, step: str) -> str | None:
        done = {s.step for s in self.taken}
        if step in SENT:
            return f"{step}: once a round, outside the tick" if done else None
        if step in (SPLIT_DEL, SPLIT_ZREM):
            if step in done or "cancel" in done:
                return f"{step}: once a round, and not beside a whole cancel"
            if step == SPLIT_ZREM and SPLIT_DEL not in done:
                return f"{step}: the split cancel deletes the record first"
            return None
        if step != SAME_SCORE:
            return super().why_not(step)
        if "cancel" not in done or step in done or REGISTER in done:
            return f"{step}: only once, after the cancel, instead of register"
        return None

    def _cancel_record(self, before: Snapshot) -> tuple[str, Outcome | None]:
        gone = drop_record(self.lab, self.queue, self.name)
        said = f"record of {self.name} deleted" if gone else "no record to delete"
        return f"{said}; its member stays until the cancel's ZREM", None

    def _cancel_member(self, before: Snapshot) -> tuple[str, Outcome | None]:
        removed = self.lab.client.zrem(self.lab.keyspace(self.queue).registry, self.name)
        return ("member removed" if removed else "no member left to remove"), None

    def _rep_advance(self, before: Snapshot, *, read: bool = False) -> tuple[str, Outcome | None]:
        read_ms = dict(before.registry).get(self.name) if read else None
        outcome = self.repeat.advance(self.name, self.every_ms, read_ms=read_ms)
        said = f'{outcome.tuple}: ARGV[3] = {"" if read_ms is None else read_ms!r}, ARGV[4] = ""'
        if outcome is Outcome.ADVANCED:
            said += f", next run of {self.name} @ {hhmm(dict(self.repeat.entries())[self.name])}"
        return said, outcome

    def _rep_advance_read(self, before: Snapshot) -> tuple[str, Outcome | None]:
        return self._rep_advance(before, read=True)

    def _register_same_score(self, before: Snapshot) -> tuple[str, Outcome | None]:
        outcome = self.repeat.register(self.name, REREGISTER_EVERY_MS, self.template)
        first = dict(self.repeat.entries()).get(self.name)
        when = f", first run {hhmm(first)}" if first is not None else ""
        return f"{outcome.tuple}: {self.name} every {duration(REREGISTER_EVERY_MS)}{when}", outcome


def sweep_orders() -> list[tuple[str, ...]]:
    """The sweep's orders: a plain tick, the cancel anywhere, the split cancel, the record gone before the tick."""
    cancel = [order for order in permutations(STEPS) if [s for s in order if s in TICK] == list(TICK)]
    split = [  # (its DEL before the read is the vanished record's order, below)
        ("read", SPLIT_DEL, "enqueue", "advance", SPLIT_ZREM),
        ("read", "enqueue", SPLIT_DEL, "advance", SPLIT_ZREM),
    ]
    return [TICK, *cancel, *split, (VANISHED, *TICK), (OTHER, VANISHED, *TICK), (OTHER, LATE, *TICK)]


def stretch_orders() -> list[tuple[str, ...]]:
    """The compare-and-set's orders: cancel and register anew anywhere, anew at the same score, rep.advance."""
    out = [
        order
        for order in permutations((*STEPS, REGISTER))
        if [s for s in order if s in TICK] == list(TICK) and order.index(REGISTER) > order.index("cancel")
    ]
    same_score = [
        ("read", "cancel", SAME_SCORE, "enqueue", "advance"),
        ("read", "enqueue", "cancel", SAME_SCORE, "advance"),
    ]
    return [*out, *same_score, (VERB,), (VERB_READ,), (VANISHED, VERB)]


def orders() -> list[tuple[str, ...]]:
    """Every order the pump allows: the ticks, the late tick's last (it moves the clock on), then rep.advance."""
    every = [*sweep_orders(), *stretch_orders()]
    return sorted(every, key=lambda order: (bool(set(order) & set(SENT)), LATE in order))  # stable: the rest as listed


def replay(race: Race, order: tuple[str, ...]) -> tuple[Snapshot, list[Step], str | None]:
    """Reset the race and take ``order``; stops at a step whose script failed (or a limit stopped)."""
    clear(race.lab)  # a wrong script may have left a key reset cannot read
    start = race.reset()
    taken: list[Step] = []
    for step in order:
        if step in BEFORE_THE_TICK:
            BEFORE_THE_TICK[step](race)
            start = snapshot(race.lab, race.queue)
            continue
        try:
            took, error = attempt(partial(race.step, step), "advance returns 1 (advanced), 0 (absent) or 2 (moved)")
        except Stopped as stop:  # the sandbox is spent: the order ends here, and the check with it
            return start, taken, explain_error(stop)
        if error:
            return start, taken, error
        assert took is not None
        taken.append(took)
    return start, taken, None


def _name(order: tuple[str, ...]) -> str:
    return " -> ".join(LABELS[s] for s in order)


def check(lua_source: str) -> Check:
    """Replay the cancel race in every order with ``lua_source`` as advance.lua."""
    return _sweep_first(lua_check("advance", lua_source, _replay_all))


def _sweep_first(found: Check) -> Check:
    """A script that fails only an order of the stretch is told first that its sweep passes."""
    if found.passed or found.scenario not in {_name(order) for order in stretch_orders()}:
        return found
    head = (
        f"advance: the sweep passes all {len(sweep_orders())} of its orders (a plain tick, a cancel anywhere, "
        "a cancel split into DEL and ZREM around the advance, a vanished record); the stretch, the "
        "compare-and-set, does not yet:"
    )
    return replace(found, text=f"{head}\n{found.text}")


def _replay_all(learner: Lab, reference: Lab) -> Check:
    """Every order on the learner's side and the reference's; the first where they part explained."""
    every, (mine, theirs) = orders(), queues("advance")
    yours, ref = CheckRace(learner, mine), CheckRace(reference, theirs)  # each on its own SimClock, at COURSE_START
    for order in every:
        _, ref_steps, _ = replay(ref, order)
        try:
            start, steps, error = replay(yours, order)
        except Stopped as stop:  # outside a step (resetting the race): no keys to show
            return _laid_out(order, [], "", f"the script failed: {explain_error(stop)}")
        for i, theirs_step in enumerate(ref_steps):
            mine_step = steps[i] if i < len(steps) else None
            if mine_step is None or mine_step.outcome != theirs_step.outcome or mine_step.after != theirs_step.after:
                return _failed(yours, order, start, steps[:i], mine_step, theirs_step, error)
        # The same rows, records and jobs: now the rest of the keyspace (TTLs, fields, hashes, stray keys).
        differences = key_differences(keyspace(yours.lab, mine), keyspace(ref.lab, theirs))
        if differences and steps:
            return _failed(yours, order, start, steps[:-1], steps[-1], ref_steps[-1], None, differences[0])
    return passed(
        "advance",
        f"advance: passed all {len(every)} orders of the race (a plain tick, a cancel anywhere in the tick, "
        "a cancel split into DEL and ZREM around the advance, a vanished record, a cancel and a "
        "registration anew anywhere in the tick, one anew at the score the tick read with another period, "
        "rep.advance outside a tick)",
        "no order leaves a registry member without its record (the sweep)",
        "no cancelled name comes back (the record guard)",
        "a registration made after the tick's read keeps its own first run and period (the compare-and-set)",
        'an advance that read nothing (rep.advance: ARGV[3], ARGV[4] "") moves the row unchecked',
        "the answers: 1 advanced, 0 absent (swept), 2 moved (nothing written)",
    )


def _failed(
    race: Race,
    order: tuple[str, ...],
    start: Snapshot,
    taken: list[Step],
    mine: Step | None,
    theirs: Step,
    error: str | None,
    difference: str | None = None,
) -> Check:
    """The order failed at ``theirs.step``: the keys before it, after it and as they should be."""
    before = taken[-1].after if taken else start
    if mine is None:
        return _laid_out(order, taken, theirs.step, f"the script failed: {error}", before=_keys(before))
    said = f"it {difference}" if difference else why(race, order, mine, theirs)
    return _laid_out(
        order, taken, theirs.step, said, before=_keys(before), after=_keys(mine.after), expected=_keys(theirs.after)
    )


def _laid_out(order: tuple[str, ...], taken: list[Step], step: str, what: str, **states: str) -> Check:
    scenario = _name(order)
    steps = [f"{LABELS[s.step]:<16} {s.note}".rstrip() for s in taken]
    label = LABELS.get(step, "pump advances")
    return failed("advance", scenario, f"advance: FAILED in the order {scenario}", steps, label, what, **states)


def _keys(state: Snapshot) -> str:
    rows = ", ".join(f"{printable(name)} @ {moment(ms)}" for name, ms in state.registry) or "(empty)"
    records = ", ".join(printable(record) for record in state.records) or "(none)"
    return f"registry = {rows}; records: {records}"


def why(race: Race, order: tuple[str, ...], mine: Step, theirs: Step) -> str:
    """The difference, in the words of the dive: dangling, resurrected, overwritten, or the answer."""
    name = race.name
    rows, want = dict(mine.after.registry), dict(theirs.after.registry)
    taken = order[: order.index(mine.step) + 1]
    answered = mine.outcome.tuple if mine.outcome else "nothing"
    if mine.after.dangling and not theirs.after.dangling:
        if SPLIT_DEL in taken and SPLIT_ZREM not in taken:
            return (
                f"it left a dangling member: the cancel's DEL took {name}'s record and its ZREM has not come yet, "
                "so the advance must sweep the member (ZREM) itself"
            )
        if "cancel" in taken and REGISTER not in taken:
            return f"it resurrected the cancelled {name}: its row is back with no record (a dangling member)"
        return f"it left a dangling member: {name} has a registry row but no record"
    if mine.step in SENT and theirs.outcome is Outcome.ADVANCED and (mine.outcome, rows) != (theirs.outcome, want):
        return (
            f"{SENT[mine.step]}. The advance answered {answered}; here it should answer {theirs.outcome.tuple} and "
            'move the row to its next run. Compare the score only when ARGV[3] is not "", the period only when '
            'ARGV[4] is not "" (tonumber(\'\') is nil: a compare with "" never holds)'
        )
    if {REGISTER, SAME_SCORE} & set(taken) and name in want and rows.get(name) != want[name]:
        first = moment(want[name])
        got = moment(rows[name]) if name in rows else "no row"
        said = (
            f"it overwrote a newer registration: {name} was registered anew (first run {first}) after the read, "
            f"and the advance wrote {got} over it"
        )
        if SAME_SCORE in taken:
            said += (
                f"; the new registration is due at the score the tick read but every "
                f"{duration(REREGISTER_EVERY_MS)}, so only the period (ARGV[4], the every_ms the tick read) "
                "tells it from the old one"
            )
        return said
    others = sorted(other for other in want if other != name and other not in rows)
    if others:
        return (
            f"it removed the row of {printable(others[0])}, another registration: an advance touches only its own "
            "name's member (ZREM registry name), never the rest of the registry"
        )
    if rows != want:
        got = ", ".join(f"{n} @ {moment(ms)}" for n, ms in rows.items()) or "(empty)"
        exp = ", ".join(f"{n} @ {moment(ms)}" for n, ms in want.items()) or "(empty)"
        return f"the registry holds {got}; it should hold {exp}"
    if mine.after.jobs != theirs.after.jobs:
        got = ", ".join(printable(job) for job in mine.after.jobs) or "(none)"
        exp = ", ".join(printable(job) for job in theirs.after.jobs) or "(none)"
        did = "pushed a job" if len(mine.after.jobs) > len(theirs.after.jobs) else "deleted the waiting jobs"
        return (
            f"it {did}: the wait list holds {got}; it should hold {exp} "
            "(an advance moves the registry row only: the pump enqueues, a worker takes jobs)"
        )
    if mine.after.records != theirs.after.records:
        gone = sorted(set(theirs.after.records) - set(mine.after.records))
        if gone:
            return f"it deleted the record of {printable(gone[0])}; an advance never deletes a record (cancel does)"
        return f"it wrote a record for {printable(sorted(set(mine.after.records))[0])}, which should not exist"
    expected = theirs.outcome.tuple if theirs.outcome else "nothing"
    return f"the advance answered {answered}; here it should answer {expected} ({MEANING.get(theirs.outcome, '')})"


MEANING: dict[Outcome | None, str] = {
    Outcome.ADVANCED: "the row held what the tick read: moved to the next run",
    Outcome.ABSENT: "the record is gone: the member is swept",
    Outcome.MOVED: "the row no longer holds what the tick read: nothing written",
}
