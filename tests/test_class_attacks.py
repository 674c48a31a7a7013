"""One learner against the class: replies never read, connections up to maxclients, a big key,
keys of their own up to maxmemory.

A class server set up as the README says, with the limits ``users`` sets and ``doctor`` checks
(maxmemory-clients, the normal clients' output-buffer limit, maxclients for the class). One
learner (eve) attacks with only what her ACL user may send; meanwhile another learner's PING
must answer within 0.5 s and the instructor's overview must keep working. A learner who meets
the server overloaded hears BackendUnavailable saying what happened, and the guard's closing of
connections shows on the instructor's page. Every attack is bounded in count and time."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from class_server import ADMIN_PASSWORD, ClassServer, closed_by_server, send_unread, started_class_server
from helpers import MIN, START
from redis.backoff import NoBackoff
from redis.retry import Retry

import emq_classroom as classroom
import emq_lab
from emq_classroom import guard, memory, sockets
from emq_classroom.doctor import class_clients
from emq_classroom.panel import ClassroomPanel
from emq_lab import keys
from emq_lab.dives import cadence
from emq_lab.errors import BackendUnavailable

pytestmark = pytest.mark.xdist_group("class-attacks")  # one worker: the module's server starts once

LEARNERS = 3
MAXMEMORY = 256 * 2**20
PREFIX = "room"


@dataclass
class Class:
    server: ClassServer
    eve: classroom.Learner
    bob: classroom.Learner
    cy: classroom.Learner
    instructor: emq_lab.Lab = field(repr=False)


@pytest.fixture(scope="module")
def room() -> Iterator[Class]:
    """Three learners on a server with doctor's settings: maxmemory with noeviction, and the
    class limits ``users`` sets."""
    with started_class_server() as server:
        admin, _ = emq_lab.backend.open_client(server.admin_url)
        admin.config_set("maxmemory", MAXMEMORY)
        eve, bob, cy = classroom.create_users(admin, learners=LEARNERS, prefix=PREFIX)
        classroom.load_scripts(admin)
        classroom.apply_limits(admin, learners=LEARNERS)
        rows = {row.setting: row for _, table in classroom.doctor(admin, learners=LEARNERS) for row in table}
        for setting in ("maxmemory-clients", "output buffers", "maxclients", "maxmemory", "lazy deletes"):
            assert rows[setting].verdict == "ok", rows[setting]
        admin.close()
        instructor = emq_lab.connect(server.admin_url, clock=emq_lab.SimClock(START))
        yield Class(server, eve, bob, cy, instructor)
        instructor.close()


PINGER = """
import select, sys, time
import redis
r = redis.Redis.from_url(sys.argv[1], socket_timeout=5)
r.ping()
print("ready", flush=True)
slowest, faults = 0.0, []
while not select.select([sys.stdin], [], [], 0)[0]:
    start = time.monotonic()
    try:
        r.ping()
    except redis.RedisError as exc:
        faults.append(str(exc))
    slowest = max(slowest, time.monotonic() - start)
    time.sleep(0.01)
print(slowest, faults[:3], flush=True)
"""


class Watch:
    """While an attack runs: bob's PING every 10 ms from his own process (the slowest kept) and
    the instructor's overview every 50 ms (each must list the class)."""

    def __init__(self, room: Class) -> None:
        self.room = room
        self.slowest = 0.0
        self.overviews = 0
        self.faults: list[str] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._overview)
        url = room.bob.url(room.server.admin_url)
        self._bob = subprocess.Popen(
            [sys.executable, "-c", PINGER, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._bob.stdout is not None and self._bob.stdout.readline().strip() == "ready"

    def _overview(self) -> None:
        while not self._done.is_set():
            try:
                view = classroom.overview(self.room.instructor.client, prefix=PREFIX)
                if [learner.namespace for learner in view.learners] != [f"{PREFIX}0{i}" for i in (1, 2, 3)]:
                    self.faults.append(f"the overview lost a learner: {view.readout[:200]}")
                self.overviews += 1
            except Exception as exc:  # noqa: BLE001 - any fault of the instructor's view is the finding
                self.faults.append(f"overview: {type(exc).__name__}: {exc}")
            time.sleep(0.05)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        out, _ = self._bob.communicate("stop\n", timeout=30)
        slowest, _, faults = out.strip().partition(" ")
        self.slowest = float(slowest)
        if faults != "[]":
            self.faults.append(f"bob's PING: {faults}")

    def assert_held(self) -> None:
        assert not self.faults, self.faults[:3]
        assert self.slowest < 0.5, f"bob's PING took {self.slowest:.2f} s"
        assert self.overviews >= 1


def used_memory(room: Class) -> int:
    admin = room.server.admin()
    try:
        return int(admin.info("memory")["used_memory"])
    finally:
        admin.close()


def test_replies_never_read_are_cut_off_and_the_class_goes_on(room: Class) -> None:
    """3,000 COMMAND DOCS (about 600 MB of replies) and then 40 due(limit=5000) of 4 KB templates
    (about 160 MB) sent without reading: the output-buffer limit closes eve's connection at 4 MiB,
    memory stays far below maxmemory, bob's writes and PING go on."""
    eve, port = room.eve, room.server.server.port
    lab = emq_lab.connect(eve.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=eve.namespace)
    names = [f"n{i:04d}" for i in range(1000)]
    lab.repeat("big").register_many([(name, MIN, "t" * 4000) for name in names])
    due = lab.scripts.due.sha
    registry = lab.keyspace("big").registry
    bob = emq_lab.connect(
        room.bob.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=room.bob.namespace
    )
    try:
        with Watch(room) as watch:
            peak = 0
            for commands in (
                [["COMMAND", "DOCS"]] * 3000,
                [["EVALSHA", due, "1", registry, str(10**15), "5000"]] * 40,
            ):
                sock = send_unread(port, eve.name, eve.password, commands)
                peak = max(peak, used_memory(room))
                assert closed_by_server(sock), "the server kept eve's connection"
                peak = max(peak, used_memory(room))
                assert bob.repeat("q").register(f"after-{len(commands)}", MIN, "t") is emq_lab.Outcome.REGISTERED
        watch.assert_held()
        assert peak < MAXMEMORY // 2, f"used memory reached {peak / 2**20:.0f} MiB"
    finally:
        lab.reset("big")
        bob.reset("q")
        lab.close()
        bob.close()


def test_memory_behind_tiny_sampled_members_or_in_her_progress_hash_is_counted_and_freed(room: Class) -> None:
    """The outside check's two ways to keep the server full for good. A sorted set of eve's whose
    lowest members, the ones MEMORY USAGE samples by default, are tiny while 1 MiB members follow
    (the sample reports a fraction): the guard counts every element (SAMPLES 0) and frees it, her
    progress kept. Then 1 MiB junk fields in her progress hash (inside her key pattern): with
    nothing else to free, her progress goes too. Each time the server is no longer pressed."""
    eve = room.eve
    admin = room.server.admin()
    mine = redis.Redis(port=room.server.server.port, username=eve.name, password=eve.password, retry=None)
    progress, hidden = keys.progress(eve.namespace), keys.QueueKeys("hide", eve.namespace).registry
    limit = used_memory(room) + 36 * 2**20

    def freed() -> tuple[str, ...]:
        (pressed,) = guard.sweep(admin, prefix=PREFIX).memory
        (over,) = pressed.freed
        assert over.learner == eve.name and over.held - over.freeing <= over.share
        assert used_memory(room) < memory.PRESSURE * limit
        return over.free

    try:
        admin.config_set("maxmemory", limit)
        mine.hset(progress, "register", "passed 1")
        for start in range(0, 20_000, 5_000):
            mine.zadd(hidden, {f"s{i}": i for i in range(start, start + 5_000)})
        for i in range(36):  # one command each (a 1 MiB query buffer at a time), until the pressure line
            if used_memory(room) >= 0.85 * limit:
                break
            mine.zadd(hidden, {f"big{i}-" + "x" * 2**20: 10**6 + i})
        assert admin.memory_usage(hidden) < 8 * 2**20 < admin.memory_usage(hidden, samples=0)  # the sample hides it
        assert freed() == (hidden,) and admin.hget(progress, "register") == "passed 1"
        admin.hset(keys.guard_suspended(), eve.name, 0)
        guard.sweep(admin, prefix=PREFIX)  # eve back
        mine = redis.Redis(port=room.server.server.port, username=eve.name, password=eve.password, retry=None)
        for i in range(36):  # bounded: until the guard's pressure line, with room left
            if used_memory(room) >= 0.85 * limit:
                break
            mine.hset(progress, f"junk{i}", "y" * 2**20)
        assert freed() == (progress,)
    finally:
        mine.close()
        admin.config_set("maxmemory", MAXMEMORY)
        admin.unlink(hidden, progress, keys.guard_memory())
        eve_back(room, admin)


def test_a_learner_meets_an_out_of_memory_server_with_backend_unavailable_and_the_guard_frees_it(
    room: Class,
) -> None:
    """Without the output-buffer limit (a server doctor has not fixed yet), eve's unread replies
    push memory past maxmemory: bob's next write is BackendUnavailable saying the server is out of
    memory (no raw OutOfMemoryError, no "start the server"); the guard closes eve's connection
    (its unread replies past 32 MiB), says so on the instructor's page, and bob writes again."""
    admin = room.server.admin()
    before = {name: admin.config_get(name)[name] for name in ("client-output-buffer-limit", "maxmemory-clients")}
    admin.config_set("client-output-buffer-limit", "normal 0 0 0")
    admin.config_set("maxmemory-clients", "0")
    admin.config_set("maxmemory", used_memory(room) + 40 * 2**20)
    bob = emq_lab.connect(
        room.bob.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=room.bob.namespace
    )
    sock = None
    try:
        sock = send_unread(room.server.server.port, room.eve.name, room.eve.password, [["COMMAND", "DOCS"]] * 300)
        for _ in range(100):  # until the server has run them all (about 60 MB held for eve)
            if any(int(c["omem"]) > 50 * 2**20 for c in admin.client_list() if c["user"] == room.eve.name):
                break
            time.sleep(0.05)
        with pytest.raises(BackendUnavailable, match="out of memory") as refused:
            bob.repeat("q").register("digest", MIN, "t")
        assert "start the server" not in str(refused.value) and "OOM" not in str(refused.value)
        panel = ClassroomPanel(room.instructor, prefix=PREFIX, every_s=None, guard=True)
        assert panel.swept is not None
        assert [(c.user, c.why) for c in panel.swept.closed] == [(room.eve.name, "reply")]
        shown = [line for line in panel.readout.splitlines() if line.startswith("guard: ")]
        assert shown and shown[0].endswith(
            f"closed 1 connection(s) of {room.eve.name} (holding more than 32 MiB of replies it did not read)"
        )
        assert "Class guard" in panel._table.value and room.eve.name in panel._table.value
        assert bob.repeat("q").register("digest", MIN, "t") is emq_lab.Outcome.REGISTERED
        panel.close()
    finally:
        if sock is not None:
            sock.close()
        for name, value in before.items():
            admin.config_set(name, value)
        admin.config_set("maxmemory", MAXMEMORY)
        admin.delete(keys.guard_log())
        bob.reset("q")
        bob.close()
        admin.close()


def test_a_learner_filling_maxmemory_with_her_own_keys_is_freed_and_suspended_by_one_guard_sweep(room: Class) -> None:
    """Eve pushes 100 KB values onto lists of her own (as her ACL user) until the server, 40 MiB
    from maxmemory, refuses her: bob's write is BackendUnavailable "out of memory". One guard
    sweep frees eve's biggest keys until she holds no more than her share (maxmemory / 3), keeps
    her progress, suspends her, and says so; bob writes again, bob's and cy's keys untouched. The
    next sweep frees nothing more."""
    eve, port = room.eve, room.server.server.port
    admin = room.server.admin()
    arriving = None
    mine = redis.Redis(port=port, username=eve.name, password=eve.password, decode_responses=True, retry=None)
    labs = {
        learner.name: emq_lab.connect(
            learner.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=learner.namespace
        )
        for learner in (room.bob, room.cy)
    }
    progress = keys.progress(eve.namespace)
    filled = [keys.QueueKeys(f"fill{i}", eve.namespace).wait for i in range(4)]
    try:
        for lab in labs.values():
            assert lab.repeat("q").register("kept", MIN, "t") is emq_lab.Outcome.REGISTERED
        mine.hset(progress, "register", "passed 1")

        def others() -> dict[str, Any]:
            found = [k for n in ("bob", "cy") for k in admin.scan_iter(keys.namespace_pattern(getattr(room, n).name))]
            return {key: admin.dump(key) for key in sorted(found)}

        before = others()
        admin.config_set("maxmemory", used_memory(room) + 40 * 2**20)
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            for n in range(1000):  # about 420 fit; bounded whatever the server does
                mine.lpush(filled[n % len(filled)], "x" * 100_000)
        # Each refused push's memory is freed after the refusal, so the server may be a few bytes under
        # its limit again; her next push, still arriving, holds its 1 MiB meanwhile and keeps it past.
        arriving = send_unread(port, eve.name, eve.password, [])
        arriving.sendall(b"*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$%d\r\nxx" % (len(filled[0]), filled[0].encode(), 2**20))
        for _ in range(100):
            if used_memory(room) > int(admin.config_get("maxmemory")["maxmemory"]):
                break
            time.sleep(0.02)
        with pytest.raises(BackendUnavailable, match="out of memory"):
            labs[room.bob.name].repeat("q").register("digest", MIN, "t")

        swept = guard.sweep(admin, prefix=PREFIX)
        (pressed,) = swept.memory
        (over,) = pressed.freed
        assert over.learner == eve.name and pressed.learners == LEARNERS
        assert over.held > over.share and over.held - over.freeing <= over.share
        assert set(over.free) <= set(filled) and 0 < len(over.free) < len(filled)  # freed until under, no more
        assert sorted(k for k in filled if not admin.exists(k)) == sorted(over.free)
        assert admin.hget(progress, "register") == "passed 1"  # her progress stays
        assert eve.name in guard.suspended(admin)
        with pytest.raises(redis.exceptions.AuthenticationError):
            mine.ping()  # her connection closed, her user off
        said = [line for line in guard.read_log(admin) if "of maxmemory" in line]
        assert said == swept.lines() and said[0].endswith(
            f"suspended {eve.name} for {guard.COOLDOWN_S} s (it held {memory.mib(over.held)} of keys, its share "
            f"{memory.mib(over.share)}) and freed {len(over.free)} key(s) ({memory.mib(over.freeing)}), biggest first"
        )
        rows = {row.namespace: row for row in classroom.overview(admin, prefix=PREFIX).learners}
        assert rows[eve.namespace].guard_mark.startswith("suspended until") and rows[eve.namespace].guarded == said[0]
        assert others() == before  # bob's and cy's keys untouched

        again = guard.sweep(admin, prefix=PREFIX)
        assert not any(p.freed for p in again.memory) and not again.suspended
        assert sorted(k for k in filled if not admin.exists(k)) == sorted(over.free)
        assert labs[room.bob.name].repeat("q").register("digest", MIN, "t") is emq_lab.Outcome.REGISTERED
    finally:
        mine.close()
        if arriving is not None:
            arriving.close()
        admin.config_set("maxmemory", MAXMEMORY)
        admin.unlink(*filled, progress, keys.guard_memory())
        for lab in labs.values():
            lab.reset("q")
            lab.close()
        eve_back(room, admin)


SMALL_FILL = "for i = 1, ARGV[1] do redis.call('SET', ARGV[2 + i % 20] .. i, 'y') end return tonumber(ARGV[1])"


def test_a_learner_holding_400_000_small_keys_loses_them_all_but_her_progress_in_one_sweep(room: Class) -> None:
    """Eve fills the server with 400,000 small keys of her own beside two lists of about 1 MiB: one guard
    sweep walks them in the server (a batch of keys a call: bob's PING stays under 0.5 s), frees her two
    lists biggest first and, still past her share, every other key of hers but her progress, suspends
    her and says so; bob's and cy's keys untouched, the server no longer pressed."""
    eve = room.eve
    admin = room.server.admin()
    mine = redis.Redis(port=room.server.server.port, username=eve.name, password=eve.password, retry=None)
    progress = keys.progress(eve.namespace)
    lists = [keys.QueueKeys(f"big{i}", eve.namespace).wait for i in range(2)]
    small = 400_000
    held: list[redis.Redis] = []
    try:
        before = {
            k: admin.dump(k) for n in (room.bob, room.cy) for k in admin.scan_iter(keys.namespace_pattern(n.name))
        }
        mine.hset(progress, "register", "passed 1")
        for i, key in enumerate(lists):
            mine.lpush(key, *["x" * 1000] * (1000 + 200 * i))  # the second the bigger
        prefixes = [keys.QueueKeys(f"q{i}", eve.namespace).job_prefix for i in range(20)]  # written by the admin
        assert admin.eval(SMALL_FILL, 0, small, *prefixes) == small  # for speed: 0.5 s, not 8 s of pipelined SETs
        limit = int(used_memory(room) / 0.9)  # at 90%: pressed
        admin.config_set("maxmemory", limit)
        calls = _evalsha_calls(admin)
        flood = threading.Thread(target=_flood_once_walking, args=(room, calls, held))
        flood.start()
        with Watch(room) as watch:
            swept = guard.sweep(admin, prefix=PREFIX)
        flood.join()
        watch.assert_held()
        # Her connections past the quota, opened while the guard walked, closed before its walk was over
        assert len(held) == guard.QUOTA + 7 and [c.why for c in swept.closed if c.user == eve.name] == ["quota"] * 8
        (pressed,) = swept.memory
        (over,) = pressed.freed
        assert pressed.keys >= small + 3
        assert over.learner == eve.name and over.free == (lists[1], lists[0]) and over.rest == small
        assert over.held - over.freeing <= over.share and used_memory(room) < memory.PRESSURE * limit
        assert [k for k in admin.scan_iter(keys.namespace_pattern(eve.name))] == [progress]
        assert admin.hget(progress, "register") == "passed 1"
        assert swept.lines()[-1].endswith(
            f"and freed {small + 2:,} key(s) ({memory.mib(over.freeing)}), its 2 of 64 KiB or more biggest first, "
            "then every other key but its progress"
        )
        assert eve.name in guard.suspended(admin)
        after = {k: admin.dump(k) for n in (room.bob, room.cy) for k in admin.scan_iter(keys.namespace_pattern(n.name))}
        assert after == before
    finally:
        mine.close()
        for client in held:
            client.close()
        admin.config_set("maxmemory", MAXMEMORY)
        doomed = list(admin.scan_iter(keys.namespace_pattern(eve.name), count=10_000))
        for start in range(0, len(doomed), 10_000):
            admin.unlink(*doomed[start : start + 10_000])
        admin.delete(keys.guard_memory())
        eve_back(room, admin)


def _evalsha_calls(admin: redis.Redis) -> int:
    return int(admin.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


def _flood_once_walking(room: Class, calls: int, held: list[redis.Redis]) -> None:
    """Once the guard's walk has begun (the server's EVALSHA count past ``calls``), eve opens connections
    up to 8 past her quota, each logged in (bounded: 10 s of waiting)."""
    admin = room.server.admin()
    try:
        for _ in range(1000):
            if _evalsha_calls(admin) > calls:
                break
            time.sleep(0.01)
        for _ in range(guard.QUOTA + 8 - 1):  # her own `mine` is one
            # No retry: one the guard closes before its PING's reply would come back as a 41st connection
            client = redis.Redis(
                port=room.server.server.port, username=room.eve.name, password=room.eve.password, retry=None
            )
            held.append(client)
            with contextlib.suppress(redis.ConnectionError):
                client.ping()
    finally:
        admin.close()


def test_a_learners_command_of_a_million_arguments_on_a_tiny_key_is_her_hold(room: Class) -> None:
    """Eve's EXISTS of one tiny key of hers 1,000,000 times: SLOWLOG times only its running (tens of ms,
    under the guard's limit) and shows 32 arguments, the last saying how many more; reading them held
    the server far longer. The guard's next sweep counts it as her hold (far more arguments than the
    course ever sends), suspends her and says why."""
    eve = room.eve
    admin = room.server.admin()
    tiny = keys.QueueKeys("q", eve.namespace).counter
    sock = None
    slower = admin.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"]
    try:
        admin.config_set("slowlog-log-slower-than", 1000)  # logged on a fast machine too: it ran 13-76 ms here
        admin.set(tiny, 1)
        name = tiny.encode()
        command = b"*1000001\r\n$6\r\nEXISTS\r\n" + b"$%d\r\n%s\r\n" % (len(name), name) * 1_000_000
        sock = send_unread(room.server.server.port, eve.name, eve.password, [])
        sock.sendall(command)
        sock.settimeout(60)
        assert sock.recv(64) == b":1000000\r\n"
        (entry,) = admin.slowlog_get(1)
        assert bytes(entry["command"]).endswith(b"... (999970 more arguments)")
        swept = guard.sweep(admin, prefix=PREFIX)
        assert swept.suspended == (eve.name,)
        assert [(h.user, h.command, h.key, h.argc) for h in swept.held] == [(eve.name, "EXISTS", tiny, 1_000_001)]
        assert any("and longer to read its 1,000,001 arguments" in line for line in guard.read_log(admin))
    finally:
        if sock is not None:
            sock.close()
        admin.delete(tiny)
        admin.config_set("slowlog-log-slower-than", slower)
        admin.slowlog_reset()  # else the sweep that turns her on again reads her hold again
        eve_back(room, admin)


def test_a_username_or_an_argument_that_is_not_utf8_does_not_stop_the_guard(room: Class) -> None:
    """Anyone may try to log in with a username of any bytes (it lands in ACL LOG), and a learner's
    command may carry any bytes (in SLOWLOG): the guard reads both raw, so its sweep goes on and still
    finds her hold (a decoding error used to end every sweep, and the guard's thread with it)."""
    eve = room.eve
    admin = room.server.admin()
    stranger = socket.create_connection(("127.0.0.1", room.server.server.port), timeout=5)
    raw = redis.Redis(port=room.server.server.port, username="admin", password=ADMIN_PASSWORD)
    slower = admin.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"]
    try:
        admin.config_set("slowlog-log-slower-than", 1000)  # logged on a fast machine too
        stranger.sendall(b"*3\r\n$4\r\nAUTH\r\n$2\r\n\xff\xfe\r\n$1\r\nx\r\n")
        assert stranger.recv(64).startswith(b"-WRONGPASS")
        name = keys.QueueKeys("q", eve.namespace).wait.encode() + b"\xff"
        raw.set(name, 1)
        command = b"*1000001\r\n$6\r\nEXISTS\r\n" + b"$%d\r\n%s\r\n" % (len(name), name) * 1_000_000
        sock = send_unread(room.server.server.port, eve.name, eve.password, [])
        sock.sendall(command)
        sock.settimeout(60)
        assert sock.recv(64) == b":1000000\r\n"
        sock.close()
        swept = guard.sweep(admin, prefix=PREFIX)
        assert [(h.user, h.command, h.argc) for h in swept.held] == [(eve.name, "EXISTS", 1_000_001)]
        assert swept.suspended == (eve.name,)
    finally:
        stranger.close()
        raw.delete(keys.QueueKeys("q", eve.namespace).wait.encode() + b"\xff")
        raw.close()
        admin.config_set("slowlog-log-slower-than", slower)
        admin.slowlog_reset()  # else the sweep that turns her on again reads her hold again
        admin.acl_log_reset()
        eve_back(room, admin)


def test_her_big_key_named_with_bytes_that_are_not_utf8_is_walked_and_freed(room: Class) -> None:
    """Eve's big list whose name ends in a byte that is not UTF-8: the guard's walk (its
    reply read raw) finds it, frees it by its exact name and suspends her; the sweep goes on."""
    eve = room.eve
    admin = room.server.admin()
    mine = redis.Redis(port=room.server.server.port, username=eve.name, password=eve.password, retry=None)
    raw = redis.Redis(port=room.server.server.port, username="admin", password=ADMIN_PASSWORD)
    name = keys.QueueKeys("q", eve.namespace).wait.encode() + b"\xff"
    limit = used_memory(room) + 24 * 2**20
    try:
        admin.config_set("maxmemory", limit)
        for _ in range(40):  # bounded: until the guard's pressure line, with room left
            if used_memory(room) >= 0.85 * limit:
                break
            mine.lpush(name, *["x" * 1000] * 500)
        (pressed,) = guard.sweep(admin, prefix=PREFIX).memory
        (over,) = pressed.freed
        assert over.learner == eve.name and over.free == (name.decode("utf-8", "surrogateescape"),)
        assert not raw.exists(name) and eve.name in guard.suspended(admin)
    finally:
        mine.close()
        admin.config_set("maxmemory", MAXMEMORY)
        raw.delete(name)
        raw.close()
        admin.delete(keys.guard_memory())
        eve_back(room, admin)


def test_connections_up_to_maxclients_refuse_newcomers_until_the_guard_closes_the_extra(room: Class) -> None:
    """Eve opens connections (logged in, and not) until maxclients refuses them: bob and the
    instructor, already connected, go on; cy, connecting now, hears BackendUnavailable "too many
    clients"; one sweep of the guard closes eve's past her quota and the unauthenticated ones,
    and cy connects."""
    admin = room.server.admin()
    admin.ping()
    most = int(admin.config_get("maxclients")["maxclients"])
    assert most == class_clients(LEARNERS)
    port = room.server.server.port
    held: list[socket.socket] = []
    try:
        with Watch(room) as watch:
            for i in range(most + 20):  # bounded: past maxclients, each is refused at once
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                if i % 2 == 0:  # logged in as eve; the others never log in
                    sock.sendall(b"AUTH %s %s\r\n" % (room.eve.name.encode(), room.eve.password.encode()))
                    reply = sock.recv(128)
                    if not reply.startswith(b"+OK"):
                        assert b"max number of clients reached" in reply
                        sock.close()
                        continue
                held.append(sock)
            with pytest.raises(BackendUnavailable, match="too many clients") as refused:
                emq_lab.connect(room.cy.url(room.server.admin_url), namespace=room.cy.namespace)
            assert "start the server" not in str(refused.value)
            for _ in range(50):  # until the sockets that never logged in are past the grace (bounded: 5 s)
                if min(_unlogged(admin).values()) > 1:
                    break
                time.sleep(0.1)
            swept = guard.sweep(admin, prefix=PREFIX, grace_s=1)
        watch.assert_held()
        why = {(c.user, c.why) for c in swept.closed}
        assert why == {(room.eve.name, "quota"), ("default", "login")}
        assert swept.suspended == (room.eve.name,)  # her user off, every connection of hers closed
        assert not [c for c in admin.client_list() if c["user"] == room.eve.name]
        assert any(f"of {room.eve.name} (past its quota of {guard.QUOTA})" in line for line in swept.lines())
        assert any(f"suspended {room.eve.name}" in line for line in swept.lines())
        assert any("not logged in after 1 s, from 127.0.0.1" in line for line in swept.lines())
        cy = emq_lab.connect(
            room.cy.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=room.cy.namespace
        )
        assert cy.repeat("q").count() == 0
        cy.close()
        assert any("past its quota" in line for line in classroom.overview(admin, prefix=PREFIX).guard)
    finally:
        for sock in held:
            sock.close()
        admin.hset(keys.guard_suspended(), room.eve.name, 0)  # her cooldown over: the next sweep turns her on
        assert room.eve.name in guard.sweep(admin, prefix=PREFIX).resumed
        admin.delete(keys.guard_log())
        admin.close()
    redis.Redis.from_url(room.eve.url(room.server.admin_url)).ping()  # eve connects again


def test_a_learner_reconnecting_at_once_is_suspended_and_newcomers_get_in(room: Class) -> None:
    """Eve reconnects as fast as she can, keeping every connection, while the guard sweeps every
    0.2 s: the first sweep past her quota suspends her (her AUTH refused), so maxclients stays free;
    cy connects while the loop still runs, bob's PING stays under 0.5 s, and the page shows it."""
    admin = room.server.admin()
    admin.ping()  # the guard's connection is open before the attack, as the hub's and `guard`'s are
    stop = threading.Event()
    held: list[socket.socket] = []
    counts = {"in": 0, "refused": 0}

    def reconnect() -> None:
        deadline = time.monotonic() + 8  # bounded whatever happens
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                sock = socket.create_connection(("127.0.0.1", room.server.server.port), timeout=2)
                sock.sendall(b"AUTH %s %s\r\n" % (room.eve.name.encode(), room.eve.password.encode()))
                reply = sock.recv(128)
            except OSError:
                time.sleep(0.005)
                continue
            if reply.startswith(b"+OK"):
                counts["in"] += 1
                held.append(sock)
            else:
                counts["refused"] += 1
                sock.close()

    attacker = threading.Thread(target=reconnect)
    sweeping = threading.Thread(target=guard.watch, args=(admin, stop), kwargs={"every_s": 0.2, "prefix": PREFIX})
    try:
        with Watch(room) as watch:
            attacker.start()
            sweeping.start()
            time.sleep(1.5)
            cy = emq_lab.connect(
                room.cy.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=room.cy.namespace
            )
            assert cy.repeat("q").count() == 0
            cy.close()
            time.sleep(0.5)
            stop.set()
            attacker.join()
            sweeping.join()
        watch.assert_held()
        assert counts["refused"] > 0  # suspended: her AUTH refused while the loop ran
        assert room.eve.name in guard.suspended(admin)
        view = classroom.overview(admin, prefix=PREFIX)
        assert any(f"suspended {room.eve.name}" in line for line in view.guard)
        rows = {learner.namespace: learner for learner in view.learners}
        assert rows[room.eve.namespace].guard_mark.startswith("suspended until")  # her row marked, not only the log
        assert f"{room.eve.namespace} (suspended until" in view.readout
        assert not rows[room.bob.namespace].guard_mark
    finally:
        stop.set()
        for sock in held:
            sock.close()
        eve_back(room, admin)


def eve_back(room: Class, admin: redis.Redis) -> None:
    """After an attack: eve's cooldown over, a sweep turns her on; the guard's kept log and counts
    deleted (the next test starts from a quiet class); the admin's client closed."""
    admin.hset(keys.guard_suspended(), room.eve.name, 0)
    guard.sweep(admin, prefix=PREFIX)
    admin.delete(keys.guard_log(), keys.guard_logins())
    admin.close()


FILL = (
    "local t = {} for i = 1, 5000 do t[i] = 'JOB-' .. i end "
    "for _ = 1, 400 do redis.call('RPUSH', KEYS[1], unpack(t)) end return redis.call('LLEN', KEYS[1])"
)


def test_a_big_key_trimmed_or_deleted_holds_no_one(room: Class) -> None:
    """Eve's wait list of 2,000,000 jobs (what 2,000 ticks of 1,000 leave; written here by the
    admin for speed): the instructor's page warns of it on her row; her browse of it, her LTRIM of
    all but one entry, and her DEL of it (freed in the background) keep bob's PING under 0.5 s."""
    k = keys.QueueKeys("q", room.eve.namespace)
    admin = room.server.admin()
    eve = emq_lab.connect(room.eve.url(room.server.admin_url), namespace=room.eve.namespace)
    hand = redis.Redis.from_url(room.eve.url(room.server.admin_url), socket_timeout=10)
    try:
        assert admin.eval(FILL, 1, k.wait) == 2_000_000
        rows = {row.namespace: row for row in classroom.overview(room.instructor.client, prefix=PREFIX).learners}
        assert rows[room.eve.namespace].problems[0].startswith("2,000,000 jobs waiting in q: reading them all")
        assert not rows[room.bob.namespace].problems  # the instructor is warned of eve's list only
        with Watch(room) as trimming:
            assert len(eve.jobs("q").browse(limit=10)) == 10
            hand.ltrim(k.wait, 0, 0)  # 1,999,999 entries dropped
            time.sleep(0.2)
        assert hand.llen(k.wait) == 1
        assert admin.eval(FILL, 1, k.wait) == 2_000_001
        with Watch(room) as deleting:
            hand.delete(k.wait)
            time.sleep(0.2)
        for watch in (trimming, deleting):
            watch.assert_held()
        assert admin.exists(k.wait) == 0
    finally:
        admin.delete(k.wait)
        admin.close()
        hand.close()
        eve.close()


def test_a_learner_whose_read_of_her_own_big_list_holds_the_server_is_suspended_after_her_first_hold(
    room: Class,
) -> None:
    """Eve reads all of her own 4,000,000-entry list (each read past the guard's limit of 0.1 s even on
    a fast machine) again and again, each time on a fresh connection (the output-buffer limit closes
    it), while the guard sweeps every 0.2 s: the SLOWLOG shows her
    hold, the next sweep suspends her, her later tries are refused at AUTH, so the server holds for
    her only a few times, not for as long as her loop runs; the guard's line names her, her command,
    key and its size; the overview works throughout. Bob doing the course (a fast-forward of 10,000 runs,
    register_many and a tick of 1,000) beside the guard is never suspended: the course's heaviest
    calls are far under the limit."""
    k = keys.QueueKeys("q", room.eve.namespace)
    admin, watcher = room.server.admin(), room.server.admin()  # the guard sweeps on a connection of its own
    bob = emq_lab.connect(
        room.bob.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=room.bob.namespace
    )
    stop = threading.Event()
    tries = {"closed": 0, "refused": 0}

    def loop() -> None:
        deadline = time.monotonic() + 10  # bounded whatever happens
        while not stop.is_set() and time.monotonic() < deadline:
            hand = redis.Redis(
                host="127.0.0.1", port=room.server.server.port, username=room.eve.name, password=room.eve.password,
                socket_timeout=10, retry=Retry(NoBackoff(), 0),
            )  # fmt: skip
            try:
                hand.lrange(k.wait, 0, -1)
            except redis.AuthenticationError:
                tries["refused"] += 1
                time.sleep(0.02)
            except redis.ConnectionError:
                tries["closed"] += 1  # the output-buffer limit (after the server's work) or the guard closed it
            finally:
                hand.close()

    attacker = threading.Thread(target=loop)
    sweeping = threading.Thread(target=guard.watch, args=(watcher, stop), kwargs={"every_s": 0.2, "prefix": PREFIX})
    try:
        assert admin.eval(FILL, 1, k.wait) == 2_000_000 and admin.eval(FILL, 1, k.wait) == 4_000_000
        first = max((int(entry["id"]) for entry in admin.slowlog_get(1)), default=-1)
        sweeping.start()
        cadence.fast_forward(bob, "ff", occurrences=10_000)
        bob.repeat("many").register_many([(f"n{i:04d}", MIN, "t") for i in range(1000)])
        bob.clock.advance(MIN)
        assert len(bob.pump("many", batch=1000).tick()) == 1000
        time.sleep(0.5)  # two sweeps or more read bob's calls
        assert room.bob.name not in guard.suspended(admin)
        attacker.start()
        overviews = 0
        for _ in range(200):  # the overview works throughout; bounded in turns, not in time
            view = classroom.overview(room.instructor.client, prefix=PREFIX)
            assert [row.namespace for row in view.learners] == [f"{PREFIX}0{i}" for i in (1, 2, 3)]
            overviews += 1
            if tries["refused"] >= 3:
                break
            time.sleep(0.05)
        stop.set()
        attacker.join()
        sweeping.join()
        guard.sweep(admin, prefix=PREFIX)  # a hold begun before she was turned off: read, not counted again
        holds = [
            entry
            for entry in admin.slowlog_get(128)
            if int(entry["id"]) > first and bytes(entry["command"]).startswith(f"LRANGE {k.wait}".encode())
        ]
        assert tries["refused"] >= 3, tries  # suspended: her AUTH refused while her loop ran
        # Her first hold, and a few more while the sweep that suspends her runs: each of its round trips
        # may wait behind one of her reads (1-4 seen). Her loop alone would go on for 10 s, 20 reads or more.
        assert 1 <= len(holds) <= 8, (len(holds), tries)
        assert min(int(entry["duration"]) for entry in holds) >= 100_000  # each held the server past the limit
        assert room.eve.name in guard.suspended(admin) and room.bob.name not in guard.suspended(admin)
        said = [line for line in guard.read_log(admin) if f"suspended {room.eve.name} for 30 s: its LRANGE" in line]
        named = rf"its LRANGE on {re.escape(k.wait)} \(3\d MiB\) held the server \d+\.\d\d s "
        named += r"\(the class's limit is 0\.1 s\)"
        assert len(said) == 1 and re.search(named, said[0]), said  # once: a hold seen again names her suspended
        assert not any(room.bob.name in line for line in guard.read_log(admin, lines=50))
        view = classroom.overview(room.instructor.client, prefix=PREFIX)
        rows = {row.namespace: row for row in view.learners}
        assert rows[room.eve.namespace].guard_mark.startswith("suspended until") and overviews >= 1
        assert not rows[room.bob.namespace].guard_mark
    finally:
        stop.set()
        if attacker.is_alive():
            attacker.join()
        if sweeping.is_alive():
            sweeping.join()
        admin.delete(k.wait)
        bob.reset("ff")
        bob.reset("many")
        bob.close()
        watcher.close()
        eve_back(room, admin)


BIG_TEMPLATE = "x" * 60_000  # the outside checker's: 60 KB templates, each registration due


def test_due_with_big_templates_holds_no_one_and_a_drain_still_fires_every_name(room: Class) -> None:
    """Eve stores 600 registrations with 60 KB templates, all due (written by plain ZADD/HSET in
    her namespace, as the outside checker did with 2,000), then ten sockets each send the stock
    due(limit=5000): each reply stops near 1 MiB (so each call holds the server a few ms, not
    0.2 s and more), bob's PING stays under 0.5 s, and her own drain still fires every name."""
    k = keys.QueueKeys("big", room.eve.namespace)
    admin = room.server.admin()
    url = room.eve.url(room.server.admin_url)
    hand = redis.Redis.from_url(url, socket_timeout=30)
    eve = emq_lab.connect(url, clock=emq_lab.SimClock(START), namespace=room.eve.namespace)
    names = [f"n{i}" for i in range(600)]
    try:
        for start in range(0, len(names), 100):
            pipe = hand.pipeline(transaction=False)
            for name in names[start : start + 100]:
                pipe.zadd(k.registry, {name: 1})
                pipe.hset(k.record(name), mapping={"every_ms": 3_600_000, "template": BIG_TEMPLATE})
            pipe.execute()
        sha = eve.scripts.due.sha
        one = hand.evalsha(sha, 1, k.registry, 10**15, 5000)
        rows = len(one) // 4
        assert 1 <= rows < 40, rows  # about 1 MiB of templates, not 600 x 60 KB
        socks = []
        with Watch(room) as calling:
            for _ in range(10):
                sock = socket.create_connection(("127.0.0.1", room.server.server.port), timeout=10)
                sock.sendall(b"AUTH %s %s\r\n" % (room.eve.name.encode(), room.eve.password.encode()))
                assert sock.recv(64).startswith(b"+OK")
                sock.sendall(b"EVALSHA %s 1 %s 1000000000000000 5000\r\n" % (sha.encode(), k.registry.encode()))
                socks.append(sock)
            time.sleep(0.5)
        for sock in socks:
            sock.close()
        calling.assert_held()
        fired = eve.pump("big", batch=1000).drain()  # each tick reads about 1 MiB; the drain reads again
        assert sorted(occurrence.name for occurrence in fired) == sorted(names)
    finally:
        for key in admin.scan_iter(match=f"emq:ns:{{{room.eve.namespace}:big}}*", count=1000):
            admin.unlink(key)
        admin.close()
        hand.close()
        eve.close()


def test_a_socket_trying_passwords_is_closed_by_the_guard_counting_failures_and_the_class_goes_on(
    room: Class,
) -> None:
    """A socket tries wrong passwords for bob, one after the other (bounded: at most 30,060 tries);
    one of cy's kernels fails three times with an old password. One sweep counts the failures
    in ACL LOG: it closes the guessing socket (60 failures, past the 20 allowed between sweeps)
    and the socket from its address that never logged in, leaves cy's connection (3 failures) and
    bob's logged-in one, and says so on the instructor's page. Then, with the guard sweeping, the
    guesser reconnecting after each close keeps being closed, while bob's PING stays under 0.5 s."""
    from class_server import resp

    port = room.server.server.port
    admin = room.server.admin()
    admin.ping()  # the guard's connection, open before the attack

    def tries(sock: socket.socket, count: int, user: str) -> int:
        """Wrong passwords for ``user`` on ``sock``, one at a time; how many were answered."""
        answered = 0
        for i in range(count):
            try:
                sock.sendall(resp(["AUTH", user, f"guess-{i}"]))
                if not sock.recv(256).startswith(b"-WRONGPASS"):
                    break
            except OSError:
                break
            answered += 1
        return answered

    bob = redis.Redis.from_url(room.bob.url(room.server.admin_url), socket_timeout=5)
    bob.ping()
    guesser = socket.create_connection(("127.0.0.1", port), timeout=5)
    second = socket.create_connection(("127.0.0.1", port), timeout=5)  # the guesser's too: one failure
    idle = socket.create_connection(("127.0.0.1", port), timeout=5)  # nothing sent yet (a handshake to come)
    kernel = socket.create_connection(("127.0.0.1", port), timeout=5)
    stop = threading.Event()
    sweeping = threading.Thread(target=guard.watch, args=(admin, stop), kwargs={"every_s": 0.2, "prefix": PREFIX})
    try:
        admin.execute_command("ACL", "LOG", "RESET")
        assert tries(guesser, 60, room.bob.name) == 60
        assert tries(kernel, 3, room.cy.name) == 3
        assert tries(second, 1, room.bob.name) == 1
        kernel.sendall(resp(["AUTH", room.cy.name, room.cy.password]))
        assert kernel.recv(64).startswith(b"+OK")  # cy's kernel with its new password
        swept = guard.sweep(admin, prefix=PREFIX)
        assert sorted(c.why for c in swept.closed) == ["password", "password"]
        assert swept.failed_logins == {room.bob.name: 61, room.cy.name: 3}
        assert closed_by_server(guesser, within_s=5) and closed_by_server(second, within_s=5)
        for sock, answer in ((kernel, b"+PONG"), (idle, b"-NOAUTH")):  # both still open
            sock.sendall(resp(["PING"]))
            assert sock.recv(64).startswith(answer)
        assert bob.ping()
        line = next(line for line in swept.lines() if "trying passwords" in line)
        assert "closed 2 connection(s) trying passwords (64 failed logins since the last sweep" in line
        assert line.endswith("from 127.0.0.1 (2)") and f"{room.bob.name} 61" in line
        assert any("trying passwords" in shown for shown in classroom.overview(admin, prefix=PREFIX).guard)
        # Counted, not timed: the same counts at the next sweep are no new failures.
        assert not guard.sweep(admin, prefix=PREFIX).closed

        closes, total = 0, 0
        with Watch(room) as watch:
            sweeping.start()
            while total < 30_000 and closes < 3:  # bounded in tries
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                left = 30_000 - total
                done = tries(sock, left, room.bob.name)
                total += done
                closes += done < left  # the server closed it before its tries ran out
                sock.close()
        watch.assert_held()
        assert closes >= 1, f"{total} tries and never closed"
        again = redis.Redis.from_url(room.bob.url(room.server.admin_url))
        assert again.ping()  # bob still logs in
        again.close()
    finally:
        stop.set()
        if sweeping.is_alive():
            sweeping.join()
        for sock in (guesser, second, idle, kernel):
            sock.close()
        bob.close()
        admin.delete(keys.guard_log(), keys.guard_logins())
        admin.close()


def test_passwords_tried_each_on_a_new_connection_are_said_though_there_is_nothing_to_close(room: Class) -> None:
    """30 wrong passwords for bob, each on a connection of its own closed at once (the outside
    check's 280,000 in 30 s went unseen): the sweep finds no connection to close, and still says
    how many logins failed and for whom; the next sweep, with no new failure, says nothing."""
    from class_server import resp

    admin = room.server.admin()
    try:
        guard.sweep(admin, prefix=PREFIX)  # the counts taken before
        for i in range(30):
            with socket.create_connection(("127.0.0.1", room.server.server.port), timeout=5) as sock:
                sock.sendall(resp(["AUTH", room.bob.name, f"guess-{i}"]))
                assert sock.recv(256).startswith(b"-WRONGPASS")
        swept = guard.sweep(admin, prefix=PREFIX)
        assert not swept.closed and swept.failed_logins == {room.bob.name: 30}
        line = f"30 failed logins since the last sweep: {room.bob.name} 30, each connection gone before the sweep"
        assert any(line in said for said in swept.lines()) and any(line in said for said in guard.read_log(admin))
        assert guard.sweep(admin, prefix=PREFIX).lines() == []
    finally:
        admin.delete(keys.guard_log(), keys.guard_logins())
        admin.close()


def test_a_template_stored_past_registers_size_is_never_sent_and_holds_no_one(room: Class) -> None:
    """Eve HSETs a 2 MiB template into her own record (her ACL allows it; register would refuse
    it): due and ticks answer her row refused at once, never carrying the template; bob's PING
    stays under 0.5 s while she calls them in a loop."""
    eve = room.eve
    lab = emq_lab.connect(eve.url(room.server.admin_url), clock=emq_lab.SimClock(START), namespace=eve.namespace)
    rep = lab.repeat("fat")
    rep.register("fat", MIN, "t")
    lab.client.hset(lab.keyspace("fat").record("fat"), "template", "x" * (2 * 2**20))
    try:
        with Watch(room) as watch:
            slowest = 0.0
            for _ in range(40):
                start = time.monotonic()
                (row,) = rep.rows()
                tick = lab.pump("fat").begin().run()
                slowest = max(slowest, time.monotonic() - start)
                assert row.template_bytes is not None and row.template is None
                assert not tick.fired and tick.advanced == [("fat", emq_lab.Outcome.ADVANCED)]
                lab.clock.advance(MIN)  # type: ignore[attr-defined]
        watch.assert_held()
        assert slowest < 0.5, f"a due and a tick took {slowest:.2f} s"
        assert lab.client.llen(lab.keyspace("fat").wait) == 0
    finally:
        lab.reset("fat")
        lab.close()


def test_a_suspended_learner_connecting_hears_what_to_do_not_a_raw_refusal(room: Class) -> None:
    """The guard suspends eve past her quota: her next emq_lab.connect raises BackendUnavailable
    (still an AuthenticationError, not transient) saying the guard may have turned her off for
    about its cooldown, to close extra notebooks and try again in a minute, or ask the instructor."""
    admin = room.server.admin()
    held: list[redis.Redis] = []
    try:
        for _ in range(guard.QUOTA + 1):
            client = redis.Redis.from_url(room.eve.url(room.server.admin_url))
            client.ping()
            held.append(client)
        swept = guard.sweep(admin, prefix=PREFIX)
        assert swept.suspended == (room.eve.name,)
        with pytest.raises(BackendUnavailable) as refused:
            emq_lab.connect(room.eve.url(room.server.admin_url), namespace=room.eve.namespace)
        said = str(refused.value)
        assert isinstance(refused.value, redis.AuthenticationError)
        assert not emq_lab.errors.is_transient(refused.value)
        assert f"about {guard.COOLDOWN_S} s after too many connections" in said
        assert "try again in a minute" in said and "instructor may have removed" in said
        assert room.eve.password not in said
    finally:
        for client in held:
            client.close()
        eve_back(room, admin)
    emq_lab.connect(room.eve.url(room.server.admin_url), namespace=room.eve.namespace).close()  # back in


def _raw_login(port: int, user: str, password: str) -> tuple[socket.socket, bytes]:
    """A raw socket that logs in as ``user``: the socket and the server's first answer."""
    from class_server import resp

    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(resp(["AUTH", user, password]))
    return sock, sock.recv(128)


def test_sockets_that_never_log_in_up_to_maxclients_are_closed_and_a_learner_mid_session_or_handshake_stays(
    room: Class,
) -> None:
    """Raw sockets that never log in fill maxclients but one, and a learner's client takes the last
    slot in its handshake (connected, AUTH not sent yet); cy, connecting now, is refused. One sweep,
    once the flood's sockets are past the grace, closes exactly those, says how many and that one
    connection was refused; bob's connection (logged in before) and the one in its handshake stay
    open and work, and cy then connects and PINGs in under 0.5 s."""
    from class_server import resp

    port = room.server.server.port
    admin = room.server.admin()
    admin.ping()  # the guard's connection, open before the flood (as the hub's is)
    guard.sweep(admin, prefix=PREFIX)  # the counts a sweep keeps, taken before the flood
    most = int(admin.config_get("maxclients")["maxclients"])
    bob, answer = _raw_login(port, room.bob.name, room.bob.password)
    assert answer.startswith(b"+OK")
    flood: list[socket.socket] = []
    handshake = None
    try:
        with Watch(room) as watch:
            free = most - 1 - int(admin.info("clients")["connected_clients"])
            for _ in range(free):  # all but one slot
                flood.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            for _ in range(100):  # until the server has accepted them all and they are past the grace (10 s at most)
                ids = _unlogged(admin)
                if len(ids) == len(flood) and min(ids.values()) > guard.GRACE_S:
                    break
                time.sleep(0.1)
            assert len(ids) == len(flood) > most // 2
            handshake = socket.create_connection(("127.0.0.1", port), timeout=5)  # a client mid-handshake
            with pytest.raises(BackendUnavailable, match="too many clients"):
                emq_lab.connect(room.cy.url(room.server.admin_url), namespace=room.cy.namespace)
            young = {i: age for i, age in _unlogged(admin).items() if i not in ids}
            assert len(young) == 1 and max(young.values()) <= guard.GRACE_S, young  # the handshake, in its grace
            swept = guard.sweep(admin, prefix=PREFIX)
            assert sorted(c.id for c in swept.closed if c.why == "login") == sorted(ids)
            assert {c.why for c in swept.closed} == {"login"}
            assert swept.refused >= 1
            for sock, user in ((handshake, room.cy), (bob, None)):  # both still open: they log in and PING
                if user is not None:
                    sock.sendall(resp(["AUTH", user.name, user.password]))
                    assert sock.recv(64).startswith(b"+OK")
                sock.sendall(resp(["PING"]))
                assert sock.recv(64).startswith(b"+PONG")
            start = time.monotonic()
            cy = redis.Redis.from_url(room.cy.url(room.server.admin_url), socket_timeout=5)
            assert cy.ping()
            took = time.monotonic() - start
            cy.close()
        watch.assert_held()
        assert took < 0.5, f"cy's connect and PING took {took:.2f} s"
        lines = swept.lines()
        closing = f"closed {len(flood)} connection(s) not logged in after 1 s, from 127.0.0.1 ({len(flood)})"
        assert any(line.endswith(closing) for line in lines)
        assert any(f"the server refused {swept.refused} new connection(s) at maxclients" in line for line in lines)
        shown = classroom.overview(admin, prefix=PREFIX).guard
        assert any("not logged in after 1 s" in line for line in shown)
        assert any("refused" in line and "at maxclients" in line for line in shown)
    finally:
        for sock in [*flood, bob, *([handshake] if handshake else [])]:
            sock.close()
        admin.delete(keys.guard_log(), keys.guard_logins())
        admin.close()


def _unlogged(admin: redis.Redis) -> dict[int, int]:
    """The connections not logged in (the default user is off): {id: age in the server's seconds}."""
    return {int(c["id"]): int(c["age"]) for c in admin.client_list() if c["user"] == "default"}


FLOODER = """
import errno, os, select, socket, sys, time
port, forks = int(sys.argv[1]), int(sys.argv[2])
children = []
for _ in range(forks):  # before any socket: each process floods with its own
    child = os.fork()
    if child == 0:
        children = None
        break
    children.append(child)
held, most, emfile, opened = {}, 0, 0, 0
poll = select.poll()
deadline = time.monotonic() + 60  # a backstop: the test stops it long before
if children is not None:
    print("ready", os.getpid(), *children, flush=True)
while time.monotonic() < deadline and not select.select([sys.stdin], [], [], 0)[0]:
    try:
        sock = socket.socket()
        try:
            sock.connect(("127.0.0.1", port))
        except OSError:
            sock.close()
            raise
        held[sock.fileno()] = sock
        poll.register(sock, select.POLLIN)
        opened += 1
        most = max(most, len(held))
        if opened % 50:
            continue
    except OSError as exc:
        if exc.errno != errno.EMFILE:
            raise
        emfile += 1
        time.sleep(0.001)
    for fd, _ in poll.poll(0):  # the ones the server closed (the guard, or maxclients): open them again
        poll.unregister(fd)
        held.pop(fd).close()
os.write(1, b"%d %d %d\\n" % (most, emfile, opened))  # one write: the four processes' lines never mix
for child in children or ():
    os.waitpid(child, 0)
"""


def flood_and_count(
    room: Class, *, limited: bool, newcomers: int = 60, forks: int = 0, kill_local: bool = False
) -> dict[str, Any]:
    """A learner's process (and ``forks`` children it forks, each flooding as well) opens sockets
    that never log in, as fast as it can, keeping them and opening again each one the server closes
    (``limited``: under the hub's open-files limit, as in a learner's server, run for the hub user
    ``01``: eve); the guard sweeps meanwhile (as the hub runs it, ``kill_local`` as the hub's does);
    cy connects and logs in ``newcomers`` times, 20 ms apart, and on until the guard has closed the
    flood's sockets at least once (bounded: 400 tries). With ``kill_local``, cy's tries start once
    the flood's processes are all gone and the server has freed their connections (bounded: 400
    and 200 looks). Returns how many were refused, the flooders' counts, and pids."""
    from emq_classroom import hub

    admin = room.server.admin()
    admin.ping()
    guard.sweep(admin, prefix=PREFIX)  # the counts taken before the flood
    flooder = subprocess.Popen(
        [sys.executable, "-c", FLOODER, str(room.server.server.port), str(forks)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=hub.limit_open_files() if limited else None, env={**os.environ, "JUPYTERHUB_USER": "01"},
    )  # fmt: skip
    # The guard's own connection, open before the flood (as the hub's is): the admin client is used
    # here meanwhile, and a client shared by two threads opens a second connection, which a full
    # maxclients refuses (the guard then never swept).
    watcher = room.server.admin()
    watcher.ping()
    stop = threading.Event()
    options = {"prefix": PREFIX, "kill_local": kill_local}
    sweeping = threading.Thread(target=guard.watch, args=(watcher, stop), kwargs=options)
    refused = tries = 0
    out = ""
    pids: list[int] = []
    try:
        assert flooder.stdout is not None
        ready, *words = flooder.stdout.readline().split()
        assert ready == "ready" and len(words) == 1 + forks
        pids = [int(word) for word in words]
        sweeping.start()
        time.sleep(0.5)  # the flood under way
        if kill_local:
            for _ in range(400):  # until the guard has killed them all
                flooder.poll()  # the parent reaped once killed (its children: by whoever adopts them)
                if not any(_running(pid) for pid in pids):
                    break
                time.sleep(0.02)
            for _ in range(200):  # until the server has seen their sockets close
                if int(admin.info("clients")["connected_clients"]) < 100:
                    break
                time.sleep(0.02)
        while tries < newcomers or (tries < 400 and not _guard_closed(admin)):
            tries += 1
            try:
                sock, answer = _raw_login(room.server.server.port, room.cy.name, room.cy.password)
                sock.close()
            except OSError:
                answer = b""
            if not answer.startswith(b"+OK"):
                assert answer == b"" or b"max number of clients" in answer, answer
                refused += 1
            time.sleep(0.02)
        running = [pid for pid in pids if _running(pid)]
        if flooder.poll() is None:
            out, _ = flooder.communicate("stop\n", timeout=60)
    finally:
        stop.set()
        for pid in [pid for pid in pids if _running(pid)]:
            os.kill(pid, signal.SIGKILL)  # a child left over (its parent killed): no process outlives the test
        if flooder.poll() is None:
            flooder.kill()
            flooder.wait()
        if sweeping.is_alive():
            sweeping.join()
        watcher.close()
    counts = [[int(word) for word in line.split()] for line in out.splitlines() if line.strip()]
    assert all(len(c) == 3 for c in counts), out
    closed = _guard_closed(admin)
    log = guard.read_log(admin, lines=guard.LOG_LINES)
    admin.delete(keys.guard_log(), keys.guard_logins())
    admin.close()
    return {"refused": refused, "newcomers": tries, "most_held": max((c[0] for c in counts), default=0),
            "emfile": sum(c[1] for c in counts), "opened": sum(c[2] for c in counts), "closed_by_guard": closed,
            "reported": len(counts), "pids": pids, "running": running,
            "log": log}  # fmt: skip


def _running(pid: int) -> bool:
    """Whether the process ``pid`` exists and is not a zombie (killed, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _guard_closed(admin: redis.Redis) -> int:
    """The connections not logged in that the guard's kept log says it closed."""
    log = guard.read_log(admin, lines=guard.LOG_LINES)
    closing = [line.split() for line in log if "not logged in after" in line and " killed process " not in line]
    return sum(int(words[2]) for words in closing if words[1] == "closed")


def test_a_sustained_flood_of_sockets_never_logged_in_refuses_newcomers_only_past_the_open_files_limit(
    room: Class,
) -> None:
    """A class of 30's maxclients (992). A learner's process flooding it with sockets that never log
    in, unlimited, holds maxclients full between the guard's sweeps and newcomers are refused
    (the outside check's finding). The same process under the hub's open-files limit (256, as each
    process of a learner's server has) holds at most 256 sockets whatever it does, its next socket
    fails with EMFILE, and no newcomer is refused."""
    from emq_classroom import hub

    admin = room.server.admin()
    before = admin.config_get("maxclients")["maxclients"]
    admin.config_set("maxclients", class_clients(30))
    try:
        unlimited = flood_and_count(room, limited=False)
        limited = flood_and_count(room, limited=True)
    finally:
        admin.config_set("maxclients", before)
        admin.close()
    print("flood, newcomers refused:", {"unlimited": unlimited, "limited": limited})
    assert unlimited["most_held"] > hub.OPEN_FILES and unlimited["refused"] > 0, unlimited
    assert unlimited["closed_by_guard"] > 0, unlimited
    assert limited["most_held"] <= hub.OPEN_FILES and limited["emfile"] > 0, limited
    assert limited["closed_by_guard"] > 0, limited  # the guard still closes them, as they come back
    assert limited["refused"] == 0, limited


LEGIT = """
import select, socket, sys
import redis
url, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
held = [redis.Redis.from_url(url, socket_timeout=10) for _ in range(20)]
for client in held:
    client.ping()
print("ready", flush=True)
handshakes = faults = 0
while not select.select([sys.stdin], [], [], 0.05)[0] and handshakes < 2000:  # bounded
    try:  # a client in its handshake: connected, its AUTH sent 50 ms later
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        select.select([sys.stdin], [], [], 0.05)
        sock.sendall(("AUTH %s %s\\r\\n" % (user, password)).encode())
        sock.recv(128)
        sock.close()
    except OSError:
        faults += 1
    handshakes += 1
print(sum(bool(client.ping()) for client in held), handshakes, flush=True)
"""


def test_a_learner_flooding_from_four_processes_is_killed_by_the_guard_on_this_machine_and_no_one_else(
    room: Class,
) -> None:
    """A class of 30's maxclients (992). Four processes of one learner (a parent that forks three),
    each under the hub's open-files limit, flood it with sockets that never log in: together they
    hold maxclients, and newcomers are refused even with the guard closing them. With ``kill_local``
    (the hub's guard, the server on this machine) the guard finds the four behind their loopback
    ports, kills them, names them in its log with their hub user, and suspends that learner's ACL
    user; then no newcomer is refused. A process of bob's holding 20 logged-in connections and
    opening more through their handshake, and the test's own process (the guard's, with the
    admin's connections), live on."""
    from emq_classroom import hub

    admin = room.server.admin()
    before = admin.config_get("maxclients")["maxclients"]
    admin.config_set("maxclients", class_clients(30))
    url = room.bob.url(room.server.admin_url)
    args = [url, str(room.server.server.port), room.bob.name, room.bob.password]
    bystander = subprocess.Popen(
        [sys.executable, "-c", LEGIT, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert bystander.stdout is not None and bystander.stdout.readline().strip() == "ready"
        kept = flood_and_count(room, limited=True, forks=3)
        killed = flood_and_count(room, limited=True, forks=3, kill_local=True)
        assert bystander.poll() is None, "the guard killed bob's process"
        out, _ = bystander.communicate("stop\n", timeout=60)
        pinged, handshakes = (int(word) for word in out.split())
        eve_suspended = room.eve.name in guard.suspended(admin)
    finally:
        if bystander.poll() is None:
            bystander.kill()
            bystander.wait()
        admin.config_set("maxclients", before)
        eve_back(room, admin)
    print("four processes flood, newcomers refused:", {"kept": kept, "killed": {**killed, "log": killed["log"][:6]}})
    assert kept["reported"] == 4 and kept["most_held"] <= hub.OPEN_FILES and kept["emfile"] > 0, kept
    assert kept["refused"] > 0 and kept["closed_by_guard"] > 0, kept  # the open-files limit alone: not enough
    assert kept["running"] == kept["pids"] and not [line for line in kept["log"] if "killed process" in line]
    assert killed["running"] == [], killed  # all four gone
    named = {
        int(line.split("killed process ")[1].split()[0]): line for line in killed["log"] if "killed process" in line
    }
    assert sorted(named) == sorted(killed["pids"]), killed["log"]
    for pid, line in named.items():
        assert f"killed process {pid} (python" in line and "of hub user 01, holding " in line, line
    # Each killed for what it held, or for what the hub user's processes held together (one may have
    # held fewer at that sweep): never for less than KILL_AT sockets in all.
    assert sum(int(line.split(", holding ")[1].split()[0]) for line in named.values()) >= sockets.KILL_AT
    assert os.getpid() not in named and bystander.pid not in named
    assert any(f"suspended {room.eve.name}" in line for line in killed["log"])
    assert eve_suspended
    assert killed["newcomers"] >= 60 and killed["refused"] == 0, killed
    assert pinged == 20 and handshakes > 0  # bob's process kept its connections and went on connecting


GUESSER = """
import socket, sys
port, user, tries = int(sys.argv[1]), sys.argv[2].encode(), 0
print("ready", flush=True)
while tries < 300_000:  # bounded: the guard kills it long before
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        while tries < 300_000:
            sock.sendall(b"AUTH %s guess-%d\\r\\n" % (user, tries))
            tries += 1
            if not sock.recv(256).startswith(b"-WRONGPASS"):
                break
    except OSError:
        pass
    sock.close()
"""

ONCE = """
import socket, sys
sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
sock.sendall(b"AUTH %s an-old-password\\r\\n" % sys.argv[2].encode())
print(sock.recv(256).decode().strip(), flush=True)
sys.stdin.readline()
"""


def test_a_learner_process_trying_passwords_from_this_machine_is_killed_and_one_failing_once_is_not(
    room: Class,
) -> None:
    """A process of eve's (hub user 01) tries bob's password over and over from this machine,
    opening a new socket each time the server closes one; a process of cy's failed one login with
    an old password and waits. The guard with ``kill_local`` kills the guesser (one socket is
    enough: it failed 20 logins or more since the last sweep), says so with its hub user, and
    suspends eve; cy's process, from the same address, lives on."""
    admin = room.server.admin()
    port = str(room.server.server.port)
    admin.execute_command("ACL", "LOG", "RESET")
    guard.sweep(admin, prefix=PREFIX)  # the counts taken before
    once = subprocess.Popen(
        [sys.executable, "-c", ONCE, port, room.cy.name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    guesser = subprocess.Popen(
        [sys.executable, "-c", GUESSER, port, room.bob.name],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "JUPYTERHUB_USER": "01"},
    )  # fmt: skip
    killed: list[sockets.Killed] = []
    lines: list[str] = []
    try:
        assert once.stdout is not None and once.stdout.readline().startswith("-WRONGPASS")
        assert guesser.stdout is not None and guesser.stdout.readline().strip() == "ready"
        for _ in range(400):  # bounded in sweeps
            swept = guard.sweep(admin, prefix=PREFIX, kill_local=True)
            killed, lines = list(swept.killed), swept.lines()
            if killed:
                break
            time.sleep(0.02)
        assert [(gone.pid, gone.why, gone.sockets) for gone in killed] == [(guesser.pid, "password", 1)], lines
        assert guesser.wait(timeout=10) == -signal.SIGKILL
        assert killed[0].hub_user == "01" and killed[0].suspended == room.eve.name
        assert any(f"killed process {guesser.pid} (python" in line and "of hub user 01, holding 1 socket(s) trying "
                   "passwords" in line for line in lines), lines  # fmt: skip
        assert room.eve.name in guard.suspended(admin)
        assert once.poll() is None, "the guard killed cy's process, which failed one login"
    finally:
        for process in (guesser, once):
            if process.poll() is None:
                process.kill()
                process.wait()
        eve_back(room, admin)


CHURNER = """
import collections, select, socket, sys, time
port, most, life = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
held = collections.deque()
print("ready", flush=True)
deadline = time.monotonic() + 60  # a backstop: the test stops it long before
while time.monotonic() < deadline and not select.select([sys.stdin], [], [], 0.002)[0]:
    while held and held[0][0] < time.monotonic() - life:  # each closed by itself, well inside its grace
        held.popleft()[1].close()
    if len(held) < most:
        try:
            held.append((time.monotonic(), socket.create_connection(("127.0.0.1", port), timeout=5)))
        except OSError:
            pass
"""


def _churner(room: Class, most: int = 40, hub_user: str = "01") -> subprocess.Popen[str]:
    """A process of ``hub_user`` (``01``: eve) opening sockets that never log in, each closed by
    itself 0.3 s later (before the guard would: its grace is 1 s), ``most`` open at any moment."""
    churner = subprocess.Popen(
        [sys.executable, "-c", CHURNER, str(room.server.server.port), str(most), "0.3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "JUPYTERHUB_USER": hub_user},
    )  # fmt: skip
    assert churner.stdout is not None and churner.stdout.readline().strip() == "ready"
    return churner


def test_a_process_closing_its_own_unlogged_sockets_inside_their_grace_is_killed_with_kill_local_only(
    room: Class,
) -> None:
    """A process of eve's keeps about 40 sockets open that never log in (below maxclients), closing
    each itself 0.3 s after it opened it: none is ever past its grace, so the guard closes none of
    them. Without ``kill_local`` it lives on. With it, a sweep counts the 16 or more sockets not
    logged in that one local process holds at once, whatever their age, kills it, names it with its
    hub user and suspends eve. A process of bob's holding 20 logged-in connections and opening more
    through their handshake (one at a time, not yet logged in) lives on, and so do four of bob's
    kernels (hub user ``02``) each holding 6 sockets not yet logged in at once (24 together: young
    ones are counted per process, never per hub user)."""
    admin = room.server.admin()
    guard.sweep(admin, prefix=PREFIX)  # the counts taken before
    url = room.bob.url(room.server.admin_url)
    args = [url, str(room.server.server.port), room.bob.name, room.bob.password]
    bystander = subprocess.Popen(
        [sys.executable, "-c", LEGIT, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    kernels = [_churner(room, most=6, hub_user=room.bob.name.removeprefix(PREFIX)) for _ in range(4)]
    churner = _churner(room)
    killed: list[sockets.Killed] = []
    lines: list[str] = []
    try:
        assert bystander.stdout is not None and bystander.stdout.readline().strip() == "ready"
        for _ in range(500):  # bounded: until the churn and the kernels hold their sockets
            if len(_unlogged(admin)) >= 40 + 4 * 6 - 8:
                break
            time.sleep(0.01)
        for _ in range(5):  # the guard without kill_local: nothing to close, no one killed
            swept = guard.sweep(admin, prefix=PREFIX)
            assert not swept.killed, swept
            time.sleep(0.2)
        assert churner.poll() is None, "killed without kill_local"
        for _ in range(20):  # bounded in sweeps: the hub's guard
            swept = guard.sweep(admin, prefix=PREFIX, kill_local=True)
            killed, lines = killed + list(swept.killed), lines + swept.lines()
            if killed:
                break
            time.sleep(0.2)
        assert [(gone.pid, gone.why) for gone in killed] == [(churner.pid, "login")], lines
        assert killed[0].sockets >= sockets.KILL_AT
        assert churner.wait(timeout=10) == -signal.SIGKILL
        assert killed[0].hub_user == "01" and killed[0].suspended == room.eve.name
        assert any(f"killed process {churner.pid} (python" in line and "of hub user 01, holding" in line
                   for line in lines), lines  # fmt: skip
        assert any(f"killed process {churner.pid} (" in line for line in guard.read_log(admin, lines=guard.LOG_LINES))
        assert room.eve.name in guard.suspended(admin) and room.bob.name not in guard.suspended(admin)
        assert [kernel.poll() for kernel in kernels] == [None] * 4, "the guard killed bob's kernels"
        assert bystander.poll() is None, "the guard killed bob's process"
        out, _ = bystander.communicate("stop\n", timeout=60)
        pinged, handshakes = (int(word) for word in out.split())
        assert pinged == 20 and handshakes > 0  # bob's process kept its connections and went on connecting
    finally:
        for process in (churner, bystander, *kernels):
            if process.poll() is None:
                process.kill()
                process.wait()
        eve_back(room, admin)
