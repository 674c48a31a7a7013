"""A drain that meets a fault: the server killed (AOF, ``appendfsync always``), paused (SIGSTOP)
or the drain's connection dropped, each once some jobs are out. The drain raises the fault's
error carrying every occurrence it fired before it (``.fired``) and the names of the batch whose
reply was lost (``.in_doubt``); the caller's lists are then compared with the server's jobs:
everything the caller holds is on the server, the server holds beyond it only names in doubt, no
call was sent twice (no name fired twice, no job id twice), and at most the row in flight was
enqueued but not advanced (each row's advance follows its enqueue), so the next drain fires at
most that one name again."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
import redis
from helpers import MIN, START
from servers import ValkeyServer, kill

import emq_lab
from emq_lab import SimClock, scripts

pytestmark = pytest.mark.xdist_group("server-kill")

NAMES = 4000
BATCH = 50
OUT_BEFORE_FAULT = 1000  # jobs on the wait list when the fault strikes


@pytest.fixture
def server(valkey_server: ValkeyServer) -> Iterator[ValkeyServer]:
    """A server of this test's own, fsyncing every write to its AOF (so a kill loses no ack)."""
    own = ValkeyServer("--appendonly", "yes", "--appendfsync", "always")
    yield own
    if own.process is not None and own.process.poll() is None:
        os.kill(own.process.pid, signal.SIGCONT)  # a paused server, if the test failed mid-way
    own.close()


def due_names(url: str, queue: str) -> emq_lab.Lab:
    lab = emq_lab.connect(url, clock=SimClock(START), timeout_s=1.0)
    lab.repeat(queue).register_many([(f"n{i:05d}", 15 * MIN, "t") for i in range(NAMES)])
    return lab


def when_out(url: str, queue: str, fault: Callable[[], None]) -> threading.Thread:
    """A thread that strikes ``fault`` once the wait list holds OUT_BEFORE_FAULT jobs."""
    watcher = redis.Redis.from_url(url, socket_timeout=5)
    wait = emq_lab.connect(url).keyspace(queue).wait

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and watcher.llen(wait) < OUT_BEFORE_FAULT:
            time.sleep(0.0005)
        fault()
        watcher.close()

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def drained_until_fault(lab: emq_lab.Lab, queue: str) -> tuple[list[emq_lab.Occurrence], list[str]]:
    with pytest.raises(redis.RedisError) as caught:
        lab.pump(queue, batch=BATCH).drain()
    fired: list[emq_lab.Occurrence] = caught.value.fired  # type: ignore[attr-defined]
    in_doubt: list[str] = caught.value.in_doubt  # type: ignore[attr-defined]
    assert any(".in_doubt" in note for note in getattr(caught.value, "__notes__", []))
    assert len(fired) >= OUT_BEFORE_FAULT - BATCH
    assert len(in_doubt) <= BATCH and not {o.name for o in fired} & set(in_doubt)
    return fired, in_doubt


def compare(url: str, queue: str, fired: list[emq_lab.Occurrence], in_doubt: list[str]) -> None:
    lab = emq_lab.connect(url, clock=SimClock(START))
    jobs = lab.jobs(queue)
    wait = jobs.browse(limit=10 * NAMES)
    on_server = {job_id: jobs.get(job_id)["name"] for job_id in wait}
    assert len(wait) == len(on_server), "a job id on the wait list twice"
    assert Counter(on_server.values()).most_common(1)[0][1] == 1, "a name fired twice: a call was sent again"
    held = {o.job_id: o.name for o in fired}
    assert held.items() <= on_server.items()  # every occurrence the caller holds is stored
    assert set(on_server.values()) - set(held.values()) <= set(in_doubt)  # the rest was in doubt
    due = {name for name, ms in lab.repeat(queue).entries() if ms <= lab.clock.now_ms()}
    assert len(due & set(on_server.values())) <= 1, "rows enqueued but not advanced: beyond the one in flight"
    again = [o.name for o in lab.pump(queue, batch=BATCH).drain()]
    assert sorted(again) == sorted(due)  # the next drain fires what was left, each name once
    assert len(set(again) & set(on_server.values())) <= 1  # again: at most the row in flight
    lab.close()


def test_a_drain_whose_server_is_killed_raises_with_what_it_fired(server: ValkeyServer, queue: str) -> None:
    lab = due_names(server.url, queue)
    watcher = when_out(server.url, queue, lambda: kill(server))
    fired, in_doubt = drained_until_fault(lab, queue)
    watcher.join()
    server.start()  # same port, same AOF
    compare(server.url, queue, fired, in_doubt)


def test_a_drain_whose_server_pauses_raises_with_what_it_fired(server: ValkeyServer, queue: str) -> None:
    assert server.process is not None
    pid = server.process.pid
    lab = due_names(server.url, queue)
    watcher = when_out(server.url, queue, lambda: os.kill(pid, signal.SIGSTOP))
    fired, in_doubt = drained_until_fault(lab, queue)  # the call in flight times out after 1 s
    watcher.join()
    os.kill(pid, signal.SIGCONT)  # the server finishes what it was sent, and no more
    compare(server.url, queue, fired, in_doubt)


def test_a_drain_whose_connection_drops_sends_no_call_twice(server: ValkeyServer, queue: str) -> None:
    # Dropped between two calls, the connection is replaced when the pool hands it out and the
    # drain goes on; dropped while a call is out, the drain raises. Either way, nothing twice.
    lab = due_names(server.url, queue)
    admin = redis.Redis.from_url(server.url)
    done = threading.Event()

    def drop_again_and_again() -> None:  # every connection of the drain's, every 2 ms, until it ends
        while not done.is_set():
            admin.client_kill_filter(_type="normal", skipme=True)
            time.sleep(0.002)

    watcher = when_out(server.url, queue, drop_again_and_again)
    in_doubt: list[str] = []
    try:
        fired = lab.pump(queue, batch=BATCH).drain()
        assert len(fired) == NAMES
    except redis.ConnectionError as fault:
        fired, in_doubt = fault.fired, fault.in_doubt  # type: ignore[attr-defined]
    done.set()
    watcher.join()
    admin.close()
    compare(server.url, queue, fired, in_doubt)


def test_a_server_that_lost_some_scripts_runs_each_call_once(server: ValkeyServer, queue: str) -> None:
    # The server's script cache is emptied, then only advance.lua is loaded again (another client
    # of the stock scripts, say): the tick's pipeline holds one missing script and one present.
    # redis-py's Script loads what is missing before sending; every call runs once.
    lab = due_names(server.url, queue)
    mine = lab.scripts.replacing(lab.client, enqueue=scripts.source("enqueue") + "\n-- a copy of mine\n")
    mine_lab = emq_lab.Lab(lab.client, lab.clock, "mine", scripts=mine)
    lab.client.script_flush()
    lab.client.script_load(scripts.source("advance"))
    fired = mine_lab.pump(queue, batch=BATCH).drain()
    assert sorted(o.name for o in fired) == [f"n{i:05d}" for i in range(NAMES)]
    compare(server.url, queue, fired, [])


def test_each_rows_advance_follows_its_enqueue_in_the_pipeline(server: ValkeyServer, queue: str) -> None:
    # The server runs a pipeline in order; cut anywhere, at most the row whose enqueue ran last
    # is enqueued but not advanced (and fires again on the next drain). The slow log, set to log
    # every command, shows the order the server ran them in.
    lab = emq_lab.connect(server.url, clock=SimClock(START))
    names = [f"n{i}" for i in range(5)]
    lab.repeat(queue).register_many([(name, 15 * MIN, "t") for name in names])
    script_of = {getattr(lab.scripts, field).sha: field for field in ("enqueue", "advance")}
    admin = redis.Redis.from_url(server.url, decode_responses=True)
    admin.config_set("slowlog-max-len", 1000)
    admin.config_set("slowlog-log-slower-than", 0)
    admin.slowlog_reset()
    try:
        assert sorted(o.name for o in lab.pump(queue).tick()) == names
        ran = [bytes(entry["command"]).decode().split() for entry in reversed(admin.slowlog_get(1000))]
    finally:
        admin.config_set("slowlog-log-slower-than", 10_000)
        admin.close()
    calls = [
        (script_of[words[1]], next(word for word in words if word in names))
        for words in ran
        if words[0].upper() == "EVALSHA" and words[1] in script_of
    ]
    assert calls == [(script, name) for name in names for script in ("enqueue", "advance")]
    lab.close()
