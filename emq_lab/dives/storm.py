"""The upsert dive's boots at scale: many services booting at once (the register is atomic), two
boots interleaving the register's steps from the client, and what "writes nothing" is worth in a
boot storm. Notebook 01 calls these as ``storm.<name>``."""

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
    flat = [outcome for outcomes in answers for outcome in outcomes]
    winners = [sum(outcomes[i] is Outcome.REGISTERED for outcomes in answers) for i in range(names)]
    records = sum(1 for key in lab.keys(queue) if key.startswith(lab.keyspace(queue).record("")))
    return Stampede(
        boots=boots,
        names=names,
        registered=flat.count(Outcome.REGISTERED),
        exists=flat.count(Outcome.EXISTS),
        registry_rows=lab.repeat(queue).count(),
        records=records,
        won_twice=sum(1 for count in winners if count > 1),
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

    def __str__(self) -> str:
        lines = [f"boot storm: {self.names:,} names, each boot one register_many call"]
        for boot in self.boots:
            lines.append(
                f"  boot #{boot.number}: {boot.registered:>7,} registered {boot.exists:>7,} exists"
                f"  -> {boot.writes:>7,} server writes"
            )
        return "\n".join(lines)


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
    width = len(str(names - 1))
    items = [(f"service-{i:0{width}d}", every_ms, template) for i in range(names)]
    first = lab.repeat(queue).register_many(items).count(Outcome.REGISTERED)  # boot #1
    second = lab.repeat(queue).register_many(items).count(Outcome.REGISTERED)  # boot #2: the same call
    return StormResult(names, (StormBoot(1, first, names - first), StormBoot(2, second, names - second)))
