"""The upsert dive's boots at scale: many boots at once (the register is atomic), two boots interleaving
its steps from the client, and what "writes nothing" is worth in a boot storm."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import validate
from .._browser import platform
from ..clock import duration
from ..outcome import Outcome
from ..schedule import MINUTE_MS
from .common import record_names

if TYPE_CHECKING:
    from ..lab import Lab


@dataclass(frozen=True)
class Stampede:
    """What ``boots`` concurrent boots of the same ``names`` names left behind."""

    boots: int
    names: int
    registered: int
    exists: int
    registry_rows: int
    record_count: int
    won_twice: int  # names that more than one boot was told it registered

    def __str__(self) -> str:
        lines = [
            f"{self.boots} boots at once, each registering the same {self.names} names:",
            f"  answers: {self.registered} registered, {self.exists} exists",
            f"  names that more than one boot registered: {self.won_twice}",
            f"  registry rows: {self.registry_rows}; records: {self.record_count} (one each: "
            + ("yes)" if self.registry_rows == self.record_count == self.names else "NO)"),
        ]
        return "\n".join(lines)


def stampede(lab: Lab, queue: str, *, boots: int = 8, names: int = 300) -> Stampede:
    """Empty ``queue``, then ``boots`` threads each register the same ``names`` names at the same moment,
    one ``register_many`` each (the browser edition has no threads: one boot after another, same answers)."""
    validate.limit(boots, field="boots")
    validate.limit(names, field="names")
    lab.reset(queue)
    items = [(f"job-{i:04d}", 15 * MINUTE_MS, '{"boot": "stampede"}') for i in range(names)]
    gate = threading.Barrier(boots)

    def boot(_: int) -> list[Outcome]:
        gate.wait(timeout=30)
        return lab.repeat(queue).register_many(items)

    if platform.active():
        answers = [lab.repeat(queue).register_many(items) for _ in range(boots)]
    else:
        with ThreadPoolExecutor(boots) as pool:
            answers = list(pool.map(boot, range(boots)))
    flat = [outcome for outcomes in answers for outcome in outcomes]
    winners = [sum(outcomes[i] is Outcome.REGISTERED for outcomes in answers) for i in range(names)]
    return Stampede(
        boots=boots,
        names=names,
        registered=flat.count(Outcome.REGISTERED),
        exists=flat.count(Outcome.EXISTS),
        registry_rows=lab.repeat(queue).count(),
        record_count=len(record_names(lab, queue)),
        won_twice=sum(1 for count in winners if count > 1),
    )


def split_register(lab: Lab, queue: str) -> list[str]:
    """Two boots on an emptied ``queue`` sending the register's steps as separate commands, both probes
    first: each is told it registered (a script cannot interleave so)."""
    lab.reset(queue)
    k, client, now = lab.keyspace(queue), lab.client, lab.clock.now_ms()
    name, every_ms = "digest", 15 * MINUTE_MS
    lines = []
    for boot in ("A", "B"):
        probe = client.exists(k.record(name))
        lines.append(f"boot {boot}: EXISTS {k.record(name)} -> {probe}")
    for boot, every in (("A", every_ms), ("B", 2 * every_ms)):
        client.hset(k.record(name), mapping={"every_ms": every, "template": "{}"})
        client.zadd(k.registry, {name: now + every})
        lines.append(f"boot {boot}: HSET every_ms={every} + ZADD -> thinks it registered")
    kept = duration(int(lab.repeat(queue).record(name)["every_ms"]))
    lines.append(f"both were told 'registered'; the record says every {kept} (the last writer won)")
    return lines


#: What one fresh registration writes, as the server counts changes (INFO's ``rdb_changes_since_last_save``): HSET of
#: two fields (2), ZADD of one new member (1); an EXISTS answer writes nothing (the tests check it against INFO).
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

    def __str__(self) -> str:
        lines = [f"boot storm: {self.names:,} names, each boot one register_many call"]
        for boot in self.boots:
            lines.append(
                f"  boot #{boot.number}: {boot.registered:>7,} registered {boot.exists:>7,} exists"
                f"  -> {boot.writes:>7,} server writes"
            )
        return "\n".join(lines)


def boot_storm(lab: Lab, queue: str, *, names: int = 1_000) -> StormResult:
    """A service with ``names`` schedules booted twice on an emptied ``queue`` (left registered), its writes
    counted from the answers (3 per registration, 0 per EXISTS), so they read the same on every backend."""
    validate.name(queue, field="queue")
    validate.integer(names, "names", 1, MAX_STORM)
    lab.reset(queue)
    width = len(str(names - 1))
    items = [(f"service-{i:0{width}d}", 15 * MINUTE_MS, '{"report": "storm"}') for i in range(names)]
    first = lab.repeat(queue).register_many(items).count(Outcome.REGISTERED)  # boot #1
    second = lab.repeat(queue).register_many(items).count(Outcome.REGISTERED)  # boot #2: the same call
    return StormResult(names, (StormBoot(1, first, names - first), StormBoot(2, second, names - second)))
