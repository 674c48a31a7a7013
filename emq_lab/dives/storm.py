"""The upsert dive's boots at scale: many services booting at once (the register is atomic),
the two boots of a deploy day, and what "writes nothing" is worth in a boot storm beside a stored
BullMQ run. Split from :mod:`emq_lab.dives.upsert`, which re-exports these names."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import validate
from .._browser import platform
from ..clock import duration
from ..outcome import Outcome
from ..schedule import MINUTE_MS

if TYPE_CHECKING:
    from ..lab import Lab


# -- the register is atomic: many boots at once ------------------------------------------------


@dataclass(frozen=True)
class Stampede:
    """What ``boots`` concurrent boots of the same ``names`` names left behind."""

    boots: int
    names: int
    registered: int
    exists: int
    registry_rows: int
    records: int
    won_twice: int  # names that more than one boot was told it registered

    def __str__(self) -> str:
        return "\n".join(
            [
                f"{self.boots} boots at once, each registering the same {self.names} names:",
                f"  answers: {self.registered} registered, {self.exists} exists",
                f"  names that more than one boot registered: {self.won_twice}",
                f"  registry rows: {self.registry_rows}; records: {self.records} (one each: "
                + ("yes)" if self.registry_rows == self.records == self.names else "NO)"),
            ]
        )


def stampede(lab: Lab, queue: str, *, boots: int = 8, names: int = 300, every_ms: int = 15 * MINUTE_MS) -> Stampede:
    """Empty ``queue``, then start ``boots`` threads that each register the same ``names`` names
    (``job-0`` ...) at the same moment, in one pipeline each, on the lab's backend. Every
    register is one script call, so the server runs each whole, one at a time.

    Where no thread can start (the browser edition: Pyodide has none), the boots run one after
    another: the answers are the same, since the server serialises them either way."""
    validate.limit(boots, field="boots")
    validate.limit(names, field="names")
    lab.reset(queue)
    items = [(f"job-{i:04d}", every_ms, '{"boot": "stampede"}') for i in range(names)]
    gate = threading.Barrier(boots)
    answers: list[list[Outcome]] = [[] for _ in range(boots)]
    failures: list[BaseException] = []

    def boot(slot: int) -> None:
        try:
            gate.wait(timeout=30)
            answers[slot] = lab.repeat(queue).register_many(items)
        except BaseException as error:  # reported below, in the caller's thread
            failures.append(error)

    if platform.active():  # the browser edition has no threads: one boot after the other
        for slot in range(boots):
            answers[slot] = lab.repeat(queue).register_many(items)
    else:
        threads = [threading.Thread(target=boot, args=(i,)) for i in range(boots)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failures:
        raise RuntimeError(f"stampede: a boot failed: {failures[0]}") from failures[0]
    winners: dict[int, int] = {}
    for outcomes in answers:
        for i, outcome in enumerate(outcomes):
            winners[i] = winners.get(i, 0) + (outcome is Outcome.REGISTERED)
    flat = [outcome for outcomes in answers for outcome in outcomes]
    k = lab.keyspace(queue)
    records = sum(1 for key in lab.keys(queue) if key.startswith(k.record("")))
    return Stampede(
        boots=boots,
        names=names,
        registered=flat.count(Outcome.REGISTERED),
        exists=flat.count(Outcome.EXISTS),
        registry_rows=lab.repeat(queue).count(),
        records=records,
        won_twice=sum(1 for count in winners.values() if count > 1),
    )


def split_register(lab: Lab, queue: str, *, name: str = "digest", every_ms: int = 15 * MINUTE_MS) -> list[str]:
    """Two boots running the register's steps as separate commands from the client, interleaved
    the unlucky way (both probe, then both write): each is told it registered. The script form
    cannot interleave, because the server runs a script from its first line to its last. Empties
    ``queue`` first and leaves the result in it."""
    lab.reset(queue)
    k, client, now = lab.keyspace(queue), lab.client, lab.clock.now_ms()
    lines = []
    probes = {}
    for boot in ("A", "B"):
        probes[boot] = client.exists(k.record(name))
        lines.append(f"boot {boot}: EXISTS {k.record(name)} -> {probes[boot]}")
    for boot, every in (("A", every_ms), ("B", 2 * every_ms)):
        client.hset(k.record(name), mapping={"every_ms": every, "template": "{}"})
        client.zadd(k.registry, {name: now + every})
        lines.append(f"boot {boot}: HSET every_ms={every} + ZADD -> thinks it registered")
    lines.append(
        "both were told 'registered'; the record says every "
        f"{duration(int(lab.repeat(queue).record(name)['every_ms']))}"
        " (the last writer won)"
    )
    return lines


# -- what "writes nothing" is worth: a boot storm --------------------------------------------------

#: What one fresh registration writes, counted as the server counts changes (INFO's
#: ``rdb_changes_since_last_save``): HSET of two fields (2) and ZADD of one new member (1).
#: An EXISTS answer writes nothing. The tests check this figure against INFO on a real server.
WRITES_PER_REGISTRATION = 3
MAX_STORM = 100_000


@dataclass(frozen=True)
class StormBoot:
    """One boot of a storm: how many names registered and how many answered EXISTS."""

    number: int
    registered: int
    exists: int

    @property
    def writes(self) -> int:
        """The server's changes during this boot: 3 per registration, none per EXISTS."""
        return self.registered * WRITES_PER_REGISTRATION


@dataclass(frozen=True)
class StormResult:
    """A service with ``names`` schedules booted twice, each boot one ``register_many``."""

    names: int
    boots: tuple[StormBoot, StormBoot]

    def lines(self) -> list[str]:
        lines = [f"boot storm: {self.names:,} names, each boot one register_many call"]
        for boot in self.boots:
            lines.append(
                f"  boot #{boot.number}: {boot.registered:>7,} registered {boot.exists:>7,} exists"
                f"  -> {boot.writes:>7,} server writes"
            )
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class MeasuredBoot:
    """One boot as ``make bench`` measured it: names per second and the server's changes."""

    per_s: float
    writes: int


def rate(per_s: float) -> str:
    """A rate as ``make bench``'s table prints it (the bench calls this): ``12.1k/s``."""
    return f"{per_s / 1000:,.1f}k/s" if per_s >= 1000 else f"{per_s:,.0f}/s"


@dataclass(frozen=True)
class Measured:
    """A stored table from one ``make bench`` run (figures, not computed here): BullMQ's
    ``upsertJobScheduler`` and emq-lab's ``register_many`` booting the same ids twice, one after
    the other on the same server, with the server's changes counted by INFO."""

    when: str
    machine: str
    peer: str
    names: int
    bullmq: tuple[MeasuredBoot, MeasuredBoot]
    emq: tuple[MeasuredBoot, MeasuredBoot]

    def lines(self) -> list[str]:
        lines = [
            f"measured by `make bench` on {self.when}, not run here ({self.machine})",
            f"{self.peer}, and emq-lab's register_many:",
            f"{self.names:,} ids booted twice on the same server, writes counted by INFO",
        ]
        for number, (theirs, ours) in enumerate(zip(self.bullmq, self.emq, strict=True), 1):
            lines.append(
                f"  boot #{number}: BullMQ {rate(theirs.per_s):>7} {theirs.writes:>8,} writes "
                f"({theirs.writes / self.names:.0f}/id) | emq-lab {rate(ours.per_s):>8} {ours.writes:>7,} writes"
            )
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


#: One stored ``make bench`` run (its date and machine in the fields, rates as the bench rounded
#: them): notebook 01 prints it beside the learner's own storm. Later runs are in bench/README.md.
BULLMQ_MEASURED = Measured(
    when="2026-12-01",
    machine="2 cores, Intel Xeon, Valkey 8.0.1",
    peer="BullMQ 6.7.0 upsertJobScheduler (ioredis 6.0.0), 500 in flight",
    names=10_000,
    bullmq=(MeasuredBoot(15_900, 170_003), MeasuredBoot(2_900, 190_000)),
    emq=(MeasuredBoot(140_300, 30_000), MeasuredBoot(213_000, 0)),
)


def writes_per_name(storm: StormResult, measured: Measured = BULLMQ_MEASURED) -> dict[str, tuple[float, float]]:
    """Server writes per name on boot #1 and boot #2: this storm's, then the stored BullMQ run's."""
    return {
        "emq-lab register (here)": (storm.boots[0].writes / storm.names, storm.boots[1].writes / storm.names),
        "BullMQ upsert (measured)": (
            measured.bullmq[0].writes / measured.names,
            measured.bullmq[1].writes / measured.names,
        ),
    }


def beside(storm: StormResult, measured: Measured = BULLMQ_MEASURED) -> str:
    """Server writes per name on each boot: this storm beside the stored BullMQ figures."""
    rows = [f"{'server writes per name':<30}{'boot #1':>9}{'boot #2':>9}"]
    for label, boots in writes_per_name(storm, measured).items():
        rows.append(f"{label:<30}" + "".join(f"{each:>9,.0f}" for each in boots))
    return "\n".join(rows)


def boot_storm(
    lab: Lab,
    queue: str = "reports-storm",
    *,
    names: int = 1_000,
    every_ms: int = 15 * MINUTE_MS,
    template: str = '{"report": "storm"}',
) -> StormResult:
    """Empty ``queue`` (its own keys only), then boot a service with ``names`` schedules twice,
    each boot one ``register_many`` of every name. The writes of each boot are counted from
    what the script answered (3 per registration, 0 per EXISTS), so they read the same on every
    backend. The names stay registered afterwards."""
    validate.name(queue, field="queue")
    validate.integer(names, "names", 1, MAX_STORM)
    validate.every_ms(every_ms)
    validate.template(template)
    lab.reset(queue)
    rep = lab.repeat(queue)
    width = len(str(names - 1))
    items = [(f"service-{i:0{width}d}", every_ms, template) for i in range(names)]
    boots = []
    for number in (1, 2):
        outcomes = rep.register_many(items)
        registered = sum(1 for outcome in outcomes if outcome is Outcome.REGISTERED)
        boots.append(StormBoot(number, registered, len(outcomes) - registered))
    return StormResult(names, (boots[0], boots[1]))
