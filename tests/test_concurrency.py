"""Concurrent boots on a real Valkey: eight processes register the same names at the same moment
(a barrier), round after round; and a pump ticking while boots and cancels land."""

from __future__ import annotations

import multiprocessing
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from helpers import MIN, START, scanned
from servers import ValkeyServer

import emq_lab
from emq_lab import Outcome, SimClock
from emq_lab.keys import QueueKeys

PROCESSES = 8
NAMES = 1000
WAIT_S = 120  # bound on every barrier and result wait (never a timing assertion)


def template_of(name: str) -> str:
    return f'{{"report": "{name}"}}'


def boot_worker(url: str, index: int, prefix: str, rounds: int, barrier: Any, results: Any) -> None:
    """One booting process: each round, wait at the barrier, then register every name."""
    lab = emq_lab.connect(url, clock=SimClock(START))
    names = [f"report:{i:04d}" for i in range(NAMES)]
    if index % 2:
        names.reverse()  # half the processes walk the names backwards: they meet in the middle
    try:
        for round_ in range(rounds):
            rep = lab.repeat(f"{prefix}-{round_}")
            barrier.wait(timeout=WAIT_S)
            registered = [name for name in names if rep.register(name, 15 * MIN, template_of(name)) == "registered"]
            results.put((index, round_, registered))
    finally:
        lab.close()


def run_processes(
    target: Callable[..., None], args_of: Callable[[int], tuple[Any, ...]], count: int, results: Any, expected: int
) -> list[Any]:
    """Start ``count`` spawned processes, collect ``expected`` results (before joining: a child
    cannot exit while its queue buffer is unread), then join them."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=target, args=args_of(i)) for i in range(count)]
    for proc in procs:
        proc.start()
    collected = [results.get(timeout=WAIT_S * 5) for _ in range(expected)]
    for proc in procs:
        proc.join(timeout=600)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
            proc.join()
    assert all(proc.exitcode == 0 for proc in procs), [proc.exitcode for proc in procs]
    return collected


def test_eight_processes_boot_the_same_names(
    valkey_server: ValkeyServer, queue: str, deep: bool, figure: Callable[[str, object], None]
) -> None:
    rounds = 60 if deep else 10
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    prefix = f"{queue}-boot"
    url = valkey_server.url
    reports = run_processes(
        boot_worker, lambda i: (url, i, prefix, rounds, barrier, results), PROCESSES, results, PROCESSES * rounds
    )
    seen: dict[int, Counter[str]] = {r: Counter() for r in range(rounds)}
    for _, round_, registered in reports:
        seen[round_].update(registered)
    lab = emq_lab.connect(url, clock=SimClock(START))
    names = {f"report:{i:04d}" for i in range(NAMES)}
    try:
        for round_ in range(rounds):
            q = f"{prefix}-{round_}"
            assert set(seen[round_]) == names and set(seen[round_].values()) == {1}  # one winner per name
            rep = lab.repeat(q)
            assert rep.count() == NAMES
            found = scanned(lab, q)
            records = {k.removeprefix(QueueKeys(q).record("")) for k in found if k != QueueKeys(q).registry}
            assert records == names and len(found) == NAMES + 1  # one row and one record per name
            for name in random.Random(round_).sample(sorted(names), 5):
                assert rep.record(name) == {"every_ms": str(15 * MIN), "template": template_of(name)}
    finally:
        for round_ in range(rounds):
            lab.reset(f"{prefix}-{round_}")
        lab.close()
    figure(
        "concurrent boots",
        f"{PROCESSES} processes x {NAMES} names x {rounds} rounds: "
        f"{PROCESSES * NAMES * rounds} register calls, one row + one record + one 'registered' per name",
    )


# --- a pump ticking while boots and cancels land -----------------------------------------------

MIXED_NAMES = 300


def mixed_worker(url: str, index: int, q: str, rounds: int, barrier: Any, results: Any) -> None:
    """Index 0 pumps; 1-2 cancel (and re-register some); the rest boot."""
    clock = SimClock(START)
    lab = emq_lab.connect(url, clock=clock)
    rep = lab.repeat(q)
    names = [f"n{i:03d}" for i in range(MIXED_NAMES)]
    chooser = random.Random(index)
    fired = 0
    cancelled: set[str] = set()
    try:
        for _ in range(rounds):
            barrier.wait(timeout=WAIT_S)
            if index == 0:
                pump = lab.pump(q, batch=50, slot_keyed=True)
                for _ in range(40):
                    fired += len(pump.tick())
                    clock.advance(250)
            elif index in (1, 2):
                for name in chooser.sample(names, 60):
                    rep.cancel(name)
                    cancelled.add(name)
                    if chooser.random() < 0.5:
                        rep.register(name, 1000, template_of(name))
            else:
                for name in chooser.sample(names, len(names)):
                    rep.register(name, 1000, template_of(name))
        results.put((index, fired, sorted(cancelled)))
    finally:
        lab.close()


def test_a_pump_runs_while_boots_and_cancels_land(
    valkey_server: ValkeyServer, queue: str, deep: bool, figure: Callable[[str, object], None]
) -> None:
    rounds = 20 if deep else 5
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    url = valkey_server.url
    reports = run_processes(
        mixed_worker, lambda i: (url, i, queue, rounds, barrier, results), PROCESSES, results, PROCESSES
    )
    cancelled = set().union(*(set(c) for _, _, c in reports))
    fired = sum(f for _, f, _ in reports)
    clock = SimClock(START)
    lab = emq_lab.connect(url, clock=clock)
    try:
        rep = lab.repeat(q := queue)
        found = scanned(lab, q)
        records = {k.removeprefix(QueueKeys(q).record("")) for k in found if k.startswith(QueueKeys(q).record(""))}
        members = {name for name, _ in rep.entries()}
        assert members == records  # every row has its record, every record its row
        assert rep.count() == len(members)
        never_cancelled = {f"n{i:03d}" for i in range(MIXED_NAMES)} - cancelled
        assert never_cancelled <= members  # a boot that nobody cancelled is there, once
        for name in members:
            assert rep.record(name) == {"every_ms": "1000", "template": template_of(name)}
        wait = lab.jobs(q).browse(limit=1_000_000)
        assert len(wait) == len(set(wait)) == fired  # slot-keyed ids: no occurrence twice
        assert {k.removeprefix(QueueKeys(q).job("")) for k in found if k.startswith(QueueKeys(q).job(""))} == set(wait)
        # Afterwards the registry is a normal one: a tick far ahead fires every member once.
        clock.advance(minutes=60)
        pump = lab.pump(q, batch=MIXED_NAMES)
        result = pump.begin().run()
        assert sorted(o.name for o in result.fired) == sorted(members)
        assert all(outcome is Outcome.ADVANCED for _, outcome in result.advanced)
        assert rep.count() == len(members)
    finally:
        lab.reset(queue)
        lab.close()
    figure(
        "pump during boots and cancels",
        f"{PROCESSES} processes x {rounds} rounds, {fired} occurrences, {len(cancelled)} names cancelled; "
        "rows == records, no id twice",
    )
