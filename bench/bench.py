"""Throughput figures: register, tick and a 10,000-tick fast-forward, on the embedded fakeredis
and on a throwaway loopback valkey-server (skipped when none is on PATH).

    .venv/bin/python bench/bench.py [--names 1000] [--ticks 10000]

Numbers only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from servers import ValkeyServer, server_binary  # noqa: E402

import emq_lab  # noqa: E402

MIN = 60_000


def timed(action: Callable[[], int]) -> tuple[int, float]:
    start = time.perf_counter()
    count = action()
    return count, time.perf_counter() - start


def bench(url: str, label: str, names: int, ticks: int) -> None:
    lab = emq_lab.connect(url, clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    q = "bench"
    lab.reset(q)
    rep = lab.repeat(q)

    def register() -> int:
        for i in range(names):
            rep.register(f"n{i}", 15 * MIN, "t")
        return names

    def boot_again() -> int:
        for i in range(names):
            rep.register(f"n{i}", 15 * MIN, "t")  # every one answers EXISTS
        return names

    def tick_all() -> int:
        return len(lab.pump(q, batch=names).tick())

    def fast_forward() -> int:
        lab.reset(q)
        rep.register("heartbeat", 1000, "t")
        pump = lab.pump(q)
        fired = 0
        for _ in range(ticks):
            fired += len(pump.tick())
            lab.clock.advance(1000)  # type: ignore[attr-defined]
        return fired

    rows = [
        ("register (fresh)", timed(register), "registrations"),
        ("register (exists)", timed(boot_again), "registrations"),
        (f"tick of {names} due names", timed(tick_all), "occurrences"),
        (f"fast-forward {ticks} ticks", timed(fast_forward), "ticks"),
    ]
    for what, (count, seconds), unit in rows:
        print(f"{label:10} {what:28} {count:>7} {unit:14} {seconds:7.3f} s  {count / seconds:>9,.0f}/s")
    lab.reset(q)
    lab.close()


def bench_exercises(url: str, label: str) -> None:
    """How long each exercise checker takes to answer, on the reference and on the buggy version
    (the budget is 3 s on the embedded backend)."""
    from emq_lab import exercises

    lab = emq_lab.connect(url, clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    checkers: list[tuple[str, Callable[..., exercises.Check]]] = [
        ("register", exercises.register),
        ("next_run", exercises.next_run),
        ("advance", exercises.advance),
    ]
    for name, checker in checkers:
        for version, answer in (("reference", exercises.solution(name)), ("buggy", exercises.buggy(name))):
            start = time.perf_counter()
            check = checker(answer, lab)
            seconds = time.perf_counter() - start
            verdict = "passed" if check.passed else "failed"
            print(f"{label:10} exercise {name:<9} {version:<10} {verdict:<7} {seconds:7.3f} s")
    lab.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=10_000)
    args = parser.parse_args()
    bench("embedded", "fakeredis", args.names, args.ticks)
    bench_exercises("embedded", "fakeredis")
    if server_binary() is None:
        print("valkey     skipped: no valkey-server on PATH")
        return
    server = ValkeyServer()
    try:
        bench(server.url, "valkey", args.names, args.ticks)
        bench_exercises(server.url, "valkey")
    finally:
        server.close()


if __name__ == "__main__":
    main()
