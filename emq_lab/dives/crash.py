"""The cancel dive's fault: a pump that crashes between an enqueue and its advance, and what the restart
makes with fresh ids (a duplicate) and with slot-keyed ids (none); the CrashPanel shows a :class:`CrashBench`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import validate
from ..clock import AdvancingClock, duration, hhmm
from ..outcome import Outcome
from ..pump import Occurrence, Tick
from ..schedule import MINUTE_MS
from .common import entries_text, move_to, one_registration

if TYPE_CHECKING:
    from ..lab import Lab


class PumpCrash(RuntimeError):
    """The fault this dive injects: raised after a tick's enqueue, before its advance."""

    def __init__(self, occurrences: list[Occurrence]) -> None:
        super().__init__("pump crashed after enqueue, before advance (fault injected)")
        self.occurrences = occurrences


def crash_after_enqueue(tick: Tick) -> None:
    """The ``after_enqueue`` hook of a crashing pump: die once something live was read."""
    if any(row.every_ms is not None for row in tick.rows):
        raise PumpCrash(list(tick.fired))


@dataclass(frozen=True)
class CrashReplay:
    """A tick that crashed after its enqueue, the restarted pump's tick on the same slot, the slot's jobs."""

    slot_keyed: bool
    crashed: CrashTick
    restarted: CrashTick
    jobs: tuple[str, ...]

    @property
    def duplicates(self) -> int:
        return max(0, len(self.jobs) - 1)

    def __str__(self) -> str:
        mode = "slot-keyed ids <name>:<slot_ms>" if self.slot_keyed else "fresh ids from the counter"
        lines = [
            f"pump with {mode}, fault switch on",
            f"  {self.crashed}",
            f"  registry after the crash: {entries_text(self.crashed.registry)} - the name is still due",
            f"  {self.restarted}",
            f"  jobs for the {hhmm(self.crashed.slot_ms or 0)} slot: {', '.join(self.jobs)}",
            f"verdict: {self.duplicates} duplicate(s)",
        ]
        return "\n".join(lines)


def replay_crash(
    lab: Lab,
    queue: str,
    *,
    slot_keyed: bool,
    every_ms: int = 15 * MINUTE_MS,
    restart_after_ms: int = MINUTE_MS,
) -> CrashReplay:
    """Two clicks of a :class:`CrashBench` with the fault on, on an emptied ``queue``: a tick that crashes
    after its enqueue, then the restarted pump's tick ``restart_after_ms`` later on a SimClock."""
    if restart_after_ms and not isinstance(lab.clock, AdvancingClock):
        raise ValueError("restart_after_ms: moving the clock needs a SimClock; pass 0 otherwise")
    bench = CrashBench(
        lab, queue, every_ms=every_ms, restart_after_ms=restart_after_ms, crash=True, slot_keyed=slot_keyed
    )
    crashed = bench.tick()
    if crashed.kind != CRASH or crashed.slot_ms is None:
        raise RuntimeError("replay_crash: the pump did not crash; is the fault switch wired?")
    return CrashReplay(slot_keyed, crashed, bench.tick(), tuple(reversed(lab.jobs(queue).browse(limit=100))))


TICK = "tick"  # a running pump's tick
CRASH = "crash"  # a running pump's tick with the fault on: enqueued, then died before the advance
RESTART = "restart"  # the restarted pump's first tick


@dataclass(frozen=True)
class CrashTick:
    """One :class:`CrashBench` tick: its kind, when, the slot, what it enqueued and advanced, the registry after it."""

    kind: str
    at_ms: int
    slot_ms: int | None  # the slot the name was due for; None when nothing was due
    occurrences: tuple[Occurrence, ...]
    advance_outcome: Outcome | None  # None: it crashed first, or nothing was due
    registry: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        at = f"{hhmm(self.at_ms)} {'restart' if self.kind == RESTART else 'tick'}"
        if self.slot_ms is None:
            return f"{at}: nothing due"
        made = ", ".join(o.job_id for o in self.occurrences)
        again = " again" if self.kind == RESTART else ""
        enqueued = f"enqueued {made} for the {hhmm(self.slot_ms)} slot{again}"
        if not made:
            enqueued = "the slot's id is already stored: nothing enqueued"
        if self.kind == CRASH:
            return f"{at}: {enqueued}, then crashed before advance"
        advance = self.advance_outcome.tuple if self.advance_outcome else "-"
        upcoming = ", ".join(f"next run {hhmm(ms)}" for _, ms in self.registry)
        return f"{at}: {enqueued}; advance {advance}" + (f", {upcoming}" if upcoming else "")


class CrashBench:
    """One name on an emptied queue ticked a click at a time. With the fault on, a tick crashes after its
    enqueue and the next is the restarted pump's, ``restart_after_ms`` later; ``slot_keyed`` picks
    ``<name>:<slot_ms>`` ids over ``JOB-`` ones, and switching it starts a new round."""

    def __init__(
        self,
        lab: Lab,
        queue: str,
        *,
        name: str = "report",
        every_ms: int = 15 * MINUTE_MS,
        restart_after_ms: int = MINUTE_MS,
        crash: bool = False,
        slot_keyed: bool = False,
    ) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.name, self.every_ms, self.template = validate.registration(name, every_ms, '{"report": "daily"}')
        # below every_ms, so the restart meets the same slot
        self.restart_after_ms = validate.integer(restart_after_ms, "restart_after_ms", 0, every_ms - 1, unit=" ms")
        self.crash = validate.switch(crash, "crash")
        self.slot_keyed = validate.switch(slot_keyed, "slot_keyed")
        self.reset()

    def set(self, *, crash: bool | None = None, slot_keyed: bool | None = None) -> None:
        """Flip the fault switch and/or the id mode. A new id mode starts a new round (reset)."""
        new_crash = self.crash if crash is None else validate.switch(crash, "crash")
        if slot_keyed is not None and validate.switch(slot_keyed, "slot_keyed") != self.slot_keyed:
            self.reset()  # first, so a failed reset leaves the old mode in place
            self.slot_keyed = slot_keyed
        self.crash = new_crash

    def reset(self) -> None:
        """Empty the queue, register the name due now, forget the ticks and any pending restart."""
        one_registration(self.lab, self.queue, self.name, self.every_ms, self.template)
        self.ticks: list[CrashTick] = []
        self.restart_pending = False  # the last tick crashed: the next one is the restarted pump's

    def tick(self) -> CrashTick:
        """One click: the restarted pump's tick after a crash, else a tick at the name's next run (on a SimClock)."""
        rep = self.lab.repeat(self.queue)
        restart = self.restart_pending
        upcoming = dict(rep.entries()).get(self.name)
        if restart:
            move_to(self.lab, self.lab.clock.now_ms() + self.restart_after_ms)
        elif upcoming is not None:
            move_to(self.lab, upcoming)
        now = self.lab.clock.now_ms()
        slot = upcoming if upcoming is not None and upcoming <= now else None  # None: nothing due
        pump = self.lab.pump(self.queue, slot_keyed=self.slot_keyed)
        fault = crash_after_enqueue if self.crash and not restart else None
        kind = RESTART if restart else TICK
        advanced: dict[str, Outcome] = {}
        try:
            result = pump.begin().run(after_enqueue=fault)
            fired, advanced = result.fired, dict(result.advanced)
        except PumpCrash as died:
            fired, kind = list(died.occurrences), CRASH
        self.restart_pending = kind == CRASH
        taken = CrashTick(kind, now, slot, tuple(fired), advanced.get(self.name), tuple(rep.entries()))
        self.ticks.append(taken)
        return taken

    @property
    def per_slot(self) -> dict[int, tuple[str, ...]]:
        """The job ids enqueued for each slot of the round, slots in time order."""
        slots: dict[int, list[str]] = {}
        for tick in self.ticks:
            if tick.slot_ms is not None:
                slots.setdefault(tick.slot_ms, []).extend(o.job_id for o in tick.occurrences)
        return {slot: tuple(ids) for slot, ids in sorted(slots.items()) if ids}

    @property
    def duplicates(self) -> int:
        """Jobs beyond the first in every slot."""
        return sum(len(ids) - 1 for ids in self.per_slot.values())

    @property
    def id_mode(self) -> str:
        """How this round's occurrences are named: slot-keyed ``<name>:<slot_ms>`` or fresh ``JOB-`` ids."""
        return f"slot-keyed {self.name}:<slot_ms>" if self.slot_keyed else "fresh JOB- ids from the counter"

    def next_click(self) -> str:
        """What the next tick will be."""
        if self.restart_pending:
            return "the restarted pump's tick (it runs clean)"
        upcoming = dict(self.lab.repeat(self.queue).entries()).get(self.name)
        if upcoming is None:
            return "a tick with nothing due"
        at = hhmm(max(upcoming, self.lab.clock.now_ms()))
        return f"a tick at {at}" + (" that crashes after its enqueue" if self.crash else "")

    def text(self) -> str:
        """The multi-line readout: the switches, every tick, the jobs per slot, the duplicates."""
        lines = [
            f"crash bench: {self.name} every {duration(self.every_ms)}, queue {self.queue}",
            f"fault (crash after enqueue): {'on' if self.crash else 'off'} | occurrence ids: {self.id_mode}",
            "ticks:" if self.ticks else "ticks: (none yet)",
        ]
        lines.extend(f"  {tick}" for tick in self.ticks)
        per_slot = self.per_slot
        lines.append("jobs per slot:" if per_slot else "jobs per slot: (none)")
        for slot, ids in per_slot.items():
            lines.append(f"  {hhmm(slot)} slot: {', '.join(ids)} - {len(ids) - 1} duplicate(s)")
        lines.append(f"duplicates: {self.duplicates}")
        lines.append(f"next click: {self.next_click()}")
        return "\n".join(lines)
