"""The upsert dive: a service registers its schedule at every boot under one of three strategies,
each a real Lua script; what each boot did, which the BootPanel shows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from .. import scripts, validate
from ..backend import fields, scored
from ..clock import SimClock, duration, hhmm
from ..outcome import Outcome, outcome_of
from ..pump import Occurrence
from ..schedule import MINUTE_MS
from ..scripts import source

if TYPE_CHECKING:
    from ..lab import Lab


class Strategy(StrEnum):
    """How a boot registers its schedule. The value is what ``panel.use()`` takes."""

    GUARD = "guard"
    NAIVE = "naive"
    UPSERT = "upsert"

    @property
    def label(self) -> str:
        return {"guard": "EXISTS guard", "naive": "naive append", "upsert": "ZSCORE upsert"}[self]

    @property
    def script(self) -> str:
        """The script's name for ``emq_lab.scripts.source``: register, contrast/naive, contrast/upsert."""
        return "register" if self is Strategy.GUARD else f"contrast/{self}"


# The code lines each reply ran, each found in the script's source by a piece of its code.
_RAN: dict[Strategy, dict[int, tuple[str, ...]]] = {
    Strategy.GUARD: {
        1: ("redis.call('EXISTS'", "redis.call('HSET'", "redis.call('ZADD'", "return 1"),
        0: ("redis.call('EXISTS'", "return 0"),
    },
    Strategy.NAIVE: {
        1: ("redis.call('HSET', record", "redis.call('ZADD', registry", "redis.call('HSET', registry",
            "redis.call('ZADD', delayed", "return 1"),
    },
    Strategy.UPSERT: {
        1: ("redis.call('ZSCORE'", "redis.call('HSET'", "redis.call('ZADD', registry", "redis.call('ZADD', delayed",
            "return 1"),
        0: ("redis.call('ZSCORE'", "redis.call('ZREM'", "redis.call('HSET'", "redis.call('ZADD', registry",
            "redis.call('ZADD', delayed", "return 0"),
    },
}  # fmt: skip


def code_line(text: str, needle: str) -> int:
    """The 1-based number of the one code line (comments aside) of ``text`` containing ``needle``."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if needle in line.split("--", 1)[0]]
    if len(found) != 1:
        raise ValueError(f"needle: {needle!r} is on {len(found)} code lines of the script; expected exactly one")
    return found[0]


def lit_lines(strategy: Strategy | str, raw: int) -> tuple[int, ...]:
    """The source lines that ran for a reply of ``raw``, in line order."""
    chosen = Strategy(strategy)
    try:
        needles = _RAN[chosen][raw]
    except KeyError:
        raise ValueError(f"raw: {chosen.script}.lua never returns {raw!r}") from None
    text = source(chosen.script)
    return tuple(sorted(code_line(text, needle) for needle in needles))


@dataclass(frozen=True)
class Schedule:
    """What the service registers at each boot; its first run is one period after the boot."""

    name: str = "digest"
    every_ms: int = 15 * MINUTE_MS
    template: str = '{"report": "digest"}'

    def __post_init__(self) -> None:
        validate.name(self.name)
        validate.every_ms(self.every_ms)
        validate.template(self.template)


@dataclass(frozen=True)
class QueueState:
    """What a boot reads of its queue: the registry's entries, the schedule's record, the pending occurrences."""

    registry: tuple[tuple[str, int], ...]
    record: tuple[tuple[str, str], ...]
    pending: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:
        """ZCARD of the registry."""
        return len(self.registry)


@dataclass(frozen=True)
class Boot:
    """What one boot did: when, how, the script's answer, the lines that ran, the state before and after."""

    number: int
    strategy: Strategy
    name: str
    at_ms: int
    every_ms: int
    raw: int
    outcome: Outcome
    lit: tuple[int, ...]
    lit_text: tuple[str, ...]
    before: QueueState
    after: QueueState

    @property
    def tuple(self) -> str:
        return self.outcome.tuple

    @property
    def size(self) -> int:
        return self.after.size

    @property
    def verdict(self) -> str:
        """One line a reader can check: ``boot #2 → EXISTS = 1, script returns 0, ...``."""
        still = " still" if self.size == self.before.size and self.before.size else ""
        size = f"registry size{still} {self.size}"
        if self.strategy is Strategy.GUARD:
            probe = "EXISTS = 1" if self.before.record else "record absent"
            steps = f"{probe}, script returns 0" if self.raw == 0 else f"{probe}, HSET + ZADD"
        elif self.strategy is Strategy.NAIVE:
            steps = "no probe, HSET + ZADD appends a row"
        else:
            prior = dict(self.before.registry).get(self.name)
            if prior is None:
                steps = "ZSCORE = nil, HSET + ZADD"
            else:
                steps = f"ZSCORE = {hhmm(prior)}, ZREM repeat:{self.name}:{prior}, HSET + ZADD the same member"
        return f"boot #{self.number} → {steps}, {self.tuple}, {size}"


#: The time between two boots of a Service (a simulated restart).
RESTART_MS = 5 * MINUTE_MS


class Service:
    """A service registering its :class:`Schedule` on ``queue`` at every boot: #1 at the lab's now, each
    later one :data:`RESTART_MS` after the one before (the lab's clock is not moved)."""

    def __init__(self, lab: Lab, queue: str, *, strategy: Strategy | str = Strategy.GUARD) -> None:
        self.lab = lab
        self.queue = validate.name(queue, field="queue")
        self.schedule = Schedule()
        self.strategy = Strategy(strategy)
        self.history: list[Boot] = []

    def use(self, strategy: Strategy | str) -> None:
        """Switch strategy and start over on an empty queue."""
        self.strategy = Strategy(strategy)
        self.reset()

    def reset(self) -> None:
        """Delete every key of the queue and forget the boots."""
        # no registry member names the naive append's record (its rows are <name>:<first_ms>)
        self.lab.client.delete(self.lab.keyspace(self.queue).record(self.schedule.name))
        self.lab.reset(self.queue)
        self.history.clear()

    def state(self) -> QueueState:
        """The registry, the schedule's record and the pending occurrences of the queue."""
        client, k = self.lab.client, self.lab.keyspace(self.queue)
        return QueueState(
            registry=tuple(scored(client.zrange(k.registry, 0, -1, withscores=True))),
            record=tuple(sorted(fields(client.hgetall(k.record(self.schedule.name))).items())),
            pending=tuple(scored(client.zrange(k.delayed, 0, -1, withscores=True))),
        )

    def boot(self, *, every_ms: int | None = None) -> Boot:
        """The next boot: one real script call registering the schedule (period ``every_ms`` if given)."""
        schedule = self.schedule if every_ms is None else replace(self.schedule, every_ms=every_ms)
        now = self.history[-1].at_ms + RESTART_MS if self.history else self.lab.clock.now_ms()
        before = self.state()
        raw = self._call(schedule, now + schedule.every_ms)
        lit = lit_lines(self.strategy, raw)
        text = source(self.strategy.script).splitlines()
        boot = Boot(
            number=len(self.history) + 1,
            strategy=self.strategy,
            name=schedule.name,
            at_ms=now,
            every_ms=schedule.every_ms,
            raw=raw,
            outcome=outcome_of(self.strategy.script, raw),
            lit=lit,
            lit_text=tuple(text[n - 1].strip() for n in lit),
            before=before,
            after=self.state(),
        )
        self.history.append(boot)
        return boot

    def boot_until(self, number: int, *, every_ms: int | None = None) -> Boot:
        """Boot #``number``: runs the boots still missing up to it; one already run is returned as is."""
        validate.limit(number, field="boot")
        if every_ms is not None:
            validate.every_ms(every_ms)
        while len(self.history) < number:
            self.boot(every_ms=every_ms)
        return self.history[number - 1]

    def _call(self, schedule: Schedule, first_ms: int) -> int:
        """One real script call for this strategy; its raw integer reply."""
        lab, k = self.lab, self.lab.keyspace(self.queue)
        args = (schedule.name, schedule.every_ms, schedule.template, first_ms)
        if self.strategy is Strategy.GUARD:
            call = scripts.register(k, *args)
        else:
            call = scripts.contrast(self.strategy.value, k, *args)
        return scripts.int_reply(scripts.send(lab.scripts, call, lab.client))


def readout_lines(boot: Boot, *, queue: str, of: int, lab: Lab) -> list[str]:
    """The readout lines of one boot of ``of`` boots run, with the key names of ``lab``'s namespace."""
    k = lab.keyspace(queue)
    after = boot.after
    lines = [
        f"strategy  {boot.strategy.label} ({boot.strategy.script}.lua)",
        f"boot #{boot.number} of {of} at {hhmm(boot.at_ms)} · {boot.name} every {duration(boot.every_ms)}",
        f"outcome   {boot.tuple}  raw {boot.raw}",
        f"registry  {k.registry} · size {after.size}",
    ]
    lines += [f"  {member}  next {hhmm(score)} ({score})" for member, score in after.registry]
    record = "  ".join(f"{field}={value}" for field, value in after.record) or "(absent)"
    lines.append(f"record    {k.record(boot.name)}  {record}")
    lines.append(f"pending   {k.delayed} · {len(after.pending)}")
    lines += [f"  {member}  at {hhmm(score)}" for member, score in after.pending]
    ran = [f"L{n:<3} {text}" for n, text in zip(boot.lit, boot.lit_text, strict=True)]
    lines += [f"{'ran' if i == 0 else '':<9} {line}" for i, line in enumerate(ran)]
    lines.append(f"verdict   {boot.verdict}")
    return lines


def _each_strategy(lab: Lab, queue: str, boots: int) -> Iterator[Service]:
    """The service after ``boots`` boots under each strategy in turn, each on an emptied ``queue``."""
    validate.limit(boots, field="boots")
    service = Service(lab, queue)
    for strategy in Strategy:
        service.use(strategy)
        service.boot_until(boots)
        yield service
    service.reset()


def tally(lab: Lab, queue: str, boots: int) -> dict[Strategy, QueueState]:
    """The state after ``boots`` boots under each strategy, each on an emptied ``queue`` (emptied again after)."""
    return {service.strategy: service.state() for service in _each_strategy(lab, queue, boots)}


def tally_text(states: dict[Strategy, QueueState], boots: int) -> str:
    """``after N boots: EXISTS guard 1 row ...`` — one line per strategy."""
    lines = [f"after {boots} boot{'s' if boots != 1 else ''}:"]
    for strategy, state in states.items():
        rows = f"{state.size} row{'s' if state.size != 1 else ''}"
        lines.append(f"  {strategy.label:<14} {rows:<8} {len(state.pending)} pending")
    return "\n".join(lines)


@dataclass(frozen=True)
class Fired:
    """The occurrences the real pump fired after the same boots under each strategy, from boot #1 to ``until_ms``."""

    boots: int
    start_ms: int
    until_ms: int
    occurrences: dict[Strategy, tuple[Occurrence, ...]]

    def count(self, strategy: Strategy | str) -> int:
        return len(self.occurrences[Strategy(strategy)])


def fire_after_boots(lab: Lab, queue: str, boots: int = 2) -> Fired:
    """Each strategy's ``boots`` boots on an emptied ``queue``, then the real pump ticking whenever a row
    is due for 30 minutes from boot #1, on a SimClock of its own; the queue is emptied again at the end."""
    start = lab.clock.now_ms()
    until = start + 30 * MINUTE_MS
    occurrences: dict[Strategy, tuple[Occurrence, ...]] = {}
    for service in _each_strategy(lab, queue, boots):
        clock = SimClock(start)
        sim = lab.with_clock(clock)
        rep, pump = sim.repeat(queue), sim.pump(queue)
        fired: list[Occurrence] = []
        while (upcoming := min((ms for _, ms in rep.entries()), default=None)) is not None and upcoming < until:
            clock.set(max(upcoming, clock.now_ms()))
            fired.extend(pump.tick())
        occurrences[service.strategy] = tuple(fired)
    return Fired(boots, start, until, occurrences)


def deploy_day(lab: Lab, queue: str) -> list[str]:
    """Deploy day on an emptied ``queue``, a line per strategy (guard, upsert): boot #2 declares every 30 min."""
    every_ms = 30 * MINUTE_MS
    service = Service(lab, queue)
    lines = []
    for strategy in (Strategy.GUARD, Strategy.UPSERT):
        service.use(strategy)
        service.boot()
        second = service.boot(every_ms=every_ms)
        kept = dict(second.after.record).get("every_ms", "0")
        (_, next_ms), *_ = second.after.registry
        lines.append(
            f"{strategy.label:<14} boot #2 declares every {duration(every_ms)} -> {second.tuple}; "
            f"the registry keeps every {duration(int(kept))}, next run {hhmm(next_ms)}"
        )
    service.reset()
    return lines
