"""Server faults on a real Valkey with AOF (``appendfsync always``): SIGKILL the server mid-tick and
mid-write, restart it, and check that the registry is intact, the same client reconnects, a panel
shows one status line instead of a traceback, and nothing is half-written."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from helpers import MIN, records, scanned
from servers import ValkeyServer, kill
from test_health import Timers

import emq_lab
from emq_lab import Outcome, SimClock
from emq_lab.health import UNAVAILABLE, Health
from emq_lab.keys import QueueKeys

pytestmark = pytest.mark.xdist_group("server-kill")  # under -n, one worker takes the module: its fixtures start once

NAMES = [f"job:{i:03d}" for i in range(200)]


@pytest.fixture(scope="module")
def aof_server(valkey_server: ValkeyServer) -> Iterator[ValkeyServer]:
    """A server of its own (the shared one is never killed), fsyncing every write to its AOF."""
    server = ValkeyServer("--appendonly", "yes", "--appendfsync", "always")
    yield server
    server.close()


@pytest.fixture
def aof_lab(aof_server: ValkeyServer, queue: str) -> Iterator[emq_lab.Lab]:
    if aof_server.process is None or aof_server.process.poll() is not None:
        aof_server.start()
    lab = emq_lab.connect(aof_server.url, clock=SimClock("2026-01-05T09:00:00Z"))
    yield lab
    if aof_server.process is None or aof_server.process.poll() is not None:
        aof_server.start()
    lab.reset(queue)
    lab.close()


def check_intact(lab: emq_lab.Lab, queue: str) -> tuple[set[str], list[str]]:
    """Members == records; job hashes == wait-list ids, each once. Returns (members, wait list)."""
    registry = QueueKeys(queue).registry
    job_prefix = QueueKeys(queue).job("")
    found = scanned(lab, queue)
    members = {name for name, _ in lab.repeat(queue).entries()}
    assert members == records(lab, queue), "a registry row without its record, or a record without its row"
    jobs = {k.removeprefix(job_prefix) for k in found if k.startswith(job_prefix)}
    wait = lab.jobs(queue).browse(limit=1_000_000)
    assert len(wait) == len(set(wait)), "a job id on the wait list twice"
    assert set(wait) == jobs, "a job hash without its wait-list entry, or the reverse"
    assert registry in found or not members
    return members, wait


@pytest.mark.parametrize("slot_keyed", [True, False], ids=["slot-keyed", "fresh-ids"])
def test_kill_mid_tick_then_restart(
    aof_server: ValkeyServer,
    aof_lab: emq_lab.Lab,
    queue: str,
    slot_keyed: bool,
    figure: Callable[[str, object], None],
) -> None:
    lab = aof_lab
    rep = lab.repeat(queue)
    for name in NAMES:
        rep.register(name, 15 * MIN, f"payload of {name}")
    pump = lab.pump(queue, batch=len(NAMES), slot_keyed=slot_keyed)

    def die(tick: emq_lab.Tick) -> None:
        kill(aof_server)  # after the tick's enqueues, before its advances

    faults = [die]  # the first tick dies; the restarted pump's runs clean

    def tick() -> list[emq_lab.Occurrence]:
        return pump.begin().run(after_enqueue=faults.pop() if faults else None).fired

    health: Health[list[emq_lab.Occurrence]] = Health(later=Timers())

    assert health.run(tick) is None  # no traceback: a status line instead
    assert health.status.startswith(f"{UNAVAILABLE} — retrying every 1 s — last error: connection refused")
    assert health.retry() is None and health.failures == 2  # still down

    aof_server.start()  # same port, same AOF: the same lab reconnects by itself
    members, wait = check_intact(lab, queue)
    assert members == set(NAMES)
    assert len(wait) == len(NAMES)  # every acknowledged enqueue survived the SIGKILL
    advanced = [name for name, score in rep.entries() if score > lab.clock.now_ms()]
    assert advanced == []  # enqueued, but killed before the advances

    fired = health.retry()  # the restarted pump: the same tick, run again (no fault this time)
    assert not health.status and fired is not None
    members, wait = check_intact(lab, queue)
    assert members == set(NAMES)
    assert all(score == lab.clock.now_ms() + 15 * MIN for _, score in rep.entries())
    by_name: dict[str, int] = {}
    for job_id in wait:
        name = lab.jobs(queue).get(job_id)["name"]
        by_name[name] = by_name.get(name, 0) + 1
    assert set(by_name) == set(NAMES)  # no slot lost
    duplicates = sum(count - 1 for count in by_name.values())
    if slot_keyed:
        assert duplicates == 0 and fired == []  # every replayed slot collides with its stored id
    else:
        assert duplicates == len(NAMES) and len(fired) == len(NAMES)  # each slot again: reported, not hidden
    mode = "slot-keyed" if slot_keyed else "fresh ids"
    figure(f"kill mid-tick [{mode}]: slots / lost / duplicated", f"{len(NAMES)} / 0 / {duplicates}")


def test_status_line_while_the_backend_is_down(aof_server: ValkeyServer, aof_lab: emq_lab.Lab, queue: str) -> None:
    rep = aof_lab.repeat(queue)
    rep.register("daily-report", 15 * MIN, "t")
    health: Health[int] = Health(later=Timers())
    assert health.run(rep.count) == 1 and health.status == ""
    kill(aof_server)
    for attempt in range(1, 4):
        assert (health.run(rep.count) if attempt == 1 else health.retry()) is None
        assert health.status.startswith(UNAVAILABLE) and "\n" not in health.status
        assert health.failures == attempt and health.waiting
    aof_server.start()
    assert health.retry() == 1
    assert not health.status and not health.waiting and health.failures == 0
    with pytest.raises(ValueError, match="^name:"):  # only a dead backend becomes a status line
        Health[Outcome]().run(lambda: rep.register("", 1000, "t"))
    assert rep.register("daily-report", 15 * MIN, "t") is Outcome.EXISTS


def _writer(lab: emq_lab.Lab, queue: str, tag: str, acked: list[str], progress: threading.Event, quota: int) -> None:
    rep = lab.repeat(queue)
    pump = lab.pump(queue, batch=20)
    big = "x" * 8192
    for i in range(5000):  # bounded; a kill ends it much sooner
        name = f"{tag}-{i}"
        try:
            if rep.register(name, 1000, f"{name}:{big}") is Outcome.REGISTERED:
                acked.append(name)
            if i % 5 == 4:
                pump.tick()
        except (redis.ConnectionError, redis.TimeoutError):
            return
        if len(acked) >= quota:
            progress.set()
    progress.set()


def test_a_crash_during_writes_leaves_nothing_half_written(
    aof_server: ValkeyServer, aof_lab: emq_lab.Lab, queue: str, deep: bool, figure: Callable[[str, object], None]
) -> None:
    rounds = 20 if deep else 4
    chooser = random.Random(7)
    acknowledged: list[str] = []
    for round_ in range(rounds):
        labs = [emq_lab.connect(aof_server.url, clock=SimClock("2026-01-05T09:00:00Z")) for _ in range(3)]
        acked: list[list[str]] = [[] for _ in labs]
        progress = [threading.Event() for _ in labs]
        quota = chooser.randint(20, 120)
        writers = [
            threading.Thread(target=_writer, args=(lab, queue, f"r{round_}w{i}", acked[i], progress[i], quota))
            for i, lab in enumerate(labs)
        ]
        for writer in writers:
            writer.start()
        for event in progress:
            event.wait(timeout=60)
        kill(aof_server)  # lands wherever the writers are: between scripts or inside one
        for writer in writers:
            writer.join(timeout=60)
        aof_server.start()
        for lab in labs:
            lab.close()
        members, _ = check_intact(aof_lab, queue)
        acknowledged += [name for names in acked for name in names]
        assert set(acknowledged) <= members  # appendfsync always: an acknowledged write is durable
        rep = aof_lab.repeat(queue)
        for name in chooser.sample(sorted(set(acknowledged)), 10):
            assert rep.record(name) == {"every_ms": "1000", "template": f"{name}:{'x' * 8192}"}
    figure("SIGKILL during concurrent writes (AOF always)", f"{rounds} kills, {len(acknowledged)} acked writes kept")


def _last_incr_file(server: ValkeyServer) -> Path:
    folder = server.dir / "appendonlydir"
    manifest = (folder / "appendonly.aof.manifest").read_text().splitlines()
    incr = [line.split()[1] for line in manifest if line.split()[-1] == "i"]
    return folder / incr[-1]


def test_a_script_is_one_transaction_in_the_aof(aof_server: ValkeyServer, aof_lab: emq_lab.Lab, queue: str) -> None:
    """A script's writes reach the AOF as one MULTI/EXEC; cut the file inside it (a torn write at
    the moment of a crash) and the server loads none of that script's writes."""
    rep = aof_lab.repeat(queue)
    rep.register("before", 1000, "t")
    aof = _last_incr_file(aof_server)
    mark = aof.stat().st_size
    assert rep.register("torn", 1000, "t") is Outcome.REGISTERED
    tail = aof.read_bytes()[mark:]
    lines = tail.split(b"\r\n")  # RESP: *<argc>, $<len>, <command>, ...
    words = [lines[i + 2] for i, line in enumerate(lines[:-2]) if line.startswith(b"*")]
    assert words[0] == b"MULTI" and words[-1] == b"EXEC" and b"HSET" in words and b"ZADD" in words
    kill(aof_server)
    exec_at = mark + tail.rindex(b"*1\r\n$4\r\nEXEC\r\n")
    with aof.open("r+b") as handle:
        handle.truncate(exec_at)  # HSET and ZADD are on disk, the EXEC is not
    aof_server.start()
    assert rep.entries()[0][0] == "before"
    assert rep.record("torn") == {} and "torn" not in dict(rep.entries())
    check_intact(aof_lab, queue)
    assert rep.register("torn", 1000, "t") is Outcome.REGISTERED  # nothing left behind
