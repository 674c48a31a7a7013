"""The class guard's choices against sockets that never log in, without a server: the server's
``age`` counts whole seconds from the second of the accept, so the guard waits for an age past
its grace (a client in its handshake is never closed); a flood's refusals are said, and counted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import START

import emq_lab
from emq_classroom import guard, memory, slow, sockets
from emq_lab import keys


def _unlogged(ident: int, age: int, *, cmd: str = "NULL") -> dict[str, str]:
    return {"id": str(ident), "user": "default", "age": str(age), "cmd": cmd, "addr": f"127.0.0.1:{40000 + ident}"}


def test_a_socket_not_logged_in_is_closed_only_once_its_age_is_past_the_grace() -> None:
    entries = [
        _unlogged(10, 0),  # accepted this second: in its handshake
        _unlogged(11, 1),  # age 1 may be 7 ms old (accepted at a second's end)
        _unlogged(12, 2),  # at least a second old
        _unlogged(13, 40),
        {"id": "14", "user": "learner01", "age": "40", "cmd": "ping", "addr": "127.0.0.1:50000"},  # mid-session
    ]
    picked = guard.choose(entries, me=1, learner=lambda user: user.startswith("learner"), login_open=True)
    assert [(c.id, c.why) for c in picked] == [(12, "login"), (13, "login")]
    assert guard.GRACE_S == 1
    # With the default user on (no class set-up), "default" is a user like another: nothing closed.
    assert not guard.choose(entries, me=1, learner=lambda user: user.startswith("learner"), login_open=False)
    waited = guard.choose(entries, me=1, learner=bool, login_open=True, grace_s=5)
    assert [c.id for c in waited] == [13]


def test_a_sweep_that_met_a_flood_says_the_refusals_and_asks_for_the_next_sweep_soon() -> None:
    closed = tuple(guard.Closed(i, "default", f"127.0.0.1:{40000 + i}", "login") for i in range(3))
    at = emq_lab.SimClock(START).now_ms()
    flood = guard.Sweep(900, closed=closed, at_ms=at, refused=54, unlogged=880)
    assert flood.lines() == [
        "09:00:00 closed 3 connection(s) not logged in after 1 s, from 127.0.0.1 (3)",
        "09:00:00 the server refused 54 new connection(s) at maxclients since the last sweep "
        "(880 connection(s) not logged in now)",
    ]
    assert flood.flooded
    assert guard.Sweep(900, at_ms=at, refused=1).flooded  # refusals alone: a flood too
    quota = guard.Sweep(40, closed=(guard.Closed(5, "learner01", "127.0.0.1:1", "quota"),), at_ms=at)
    assert not quota.flooded and not guard.Sweep(40, at_ms=at).flooded


SLEEPER = "import sys; print('ready', flush=True); sys.stdin.read()"


def _sleeper(tmp_path: Path, name: str = "", hub_user: str | None = None) -> subprocess.Popen[str]:
    """A process that waits for its stdin to close (run as ``name``, a link to Python, if given)."""
    env = {key: value for key, value in os.environ.items() if key != "JUPYTERHUB_USER"}
    if hub_user is not None:
        env["JUPYTERHUB_USER"] = hub_user
    program = sys.executable
    if name:
        program = str(tmp_path / name)
        os.symlink(sys.executable, program)
    process = subprocess.Popen(
        [program, "-c", SLEEPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_kill_holders_kills_past_the_threshold_or_a_hub_users_total_and_spares_itself_its_parent_and_the_server(
    tmp_path: Path,
) -> None:
    """Counts as a sweep finds them ({pid: sockets not logged in past the grace}): a process at
    KILL_AT is killed; one under it is not, unless its hub user's processes hold KILL_AT together;
    this process, its parent and a process named valkey-server never are, whatever they hold."""
    lone = _sleeper(tmp_path)
    few = _sleeper(tmp_path)
    ada = [_sleeper(tmp_path, hub_user="ada") for _ in range(2)]
    server = _sleeper(tmp_path, "valkey-server")
    everyone = [lone, few, *ada, server]
    try:
        held = {
            lone.pid: sockets.KILL_AT,
            few.pid: sockets.KILL_AT - 1,
            server.pid: 500,
            os.getpid(): 500,
            os.getppid(): 500,
        }
        held |= {process.pid: sockets.KILL_AT // 2 for process in ada}
        killed = sockets.kill_holders(held)
        assert sorted(k.pid for k in killed) == sorted([lone.pid, *(p.pid for p in ada)])
        assert {k.pid: (k.sockets, k.hub_user) for k in killed}[ada[0].pid] == (sockets.KILL_AT // 2, "ada")
        assert all(k.command.startswith("python") for k in killed)
        for process in (lone, *ada):
            assert process.wait(timeout=30) == -signal.SIGKILL
        for process in (few, server):
            assert process.poll() is None
    finally:
        for process in everyone:
            if process.poll() is None:
                process.communicate("", timeout=30)


def test_a_sweep_that_killed_processes_names_each_with_its_command_sockets_and_hub_user() -> None:
    at = emq_lab.SimClock(START).now_ms()
    done = guard.Sweep(
        900, at_ms=at, suspended=("learner-ada",),
        killed=(sockets.Killed(4242, "python3", 250, "ada", "learner-ada"), sockets.Killed(4243, "", 16)),
    )  # fmt: skip
    assert done.lines() == [
        "09:00:00 suspended learner-ada for 30 s (its user off, all its connections closed)",
        "09:00:00 killed process 4242 (python3) of hub user ada, holding 250 socket(s) not logged in",
        "09:00:00 killed process 4243 (?), holding 16 socket(s) not logged in",
    ]


def test_the_hubs_guard_kills_only_for_a_server_on_this_machine_and_the_guard_command_when_asked() -> None:
    from emq_classroom import cli

    for url in ("redis://admin@127.0.0.1:6379/0", "redis://admin@localhost:6379/0", "redis://admin@[::1]:6379/0"):
        assert cli.on_this_machine(url), url
    for url in ("redis://admin@10.0.0.5:6379/0", "valkey+cluster://admin@valkey-0.valkey:6379", "unix:///tmp/v.sock"):
        assert not cli.on_this_machine(url), url
    parse = cli._parser().parse_args
    assert parse(["guard", "--url", "redis://admin@127.0.0.1:6379/0", "--kill-local"]).kill_local is True
    assert parse(["guard", "--url", "redis://admin@127.0.0.1:6379/0"]).kill_local is False
    with pytest.raises(ValueError, match="kill_at"):
        guard.sweep(object(), kill_at=0)


MIB = 2**20


def walked(sizes: dict[str, int], *, big: int = 0) -> memory.Walk:
    """What walk.lua answers for keys of these sizes: each namespace's bytes and keys, and by name the
    keys of ``big`` bytes or more and the progress hashes."""
    held: dict[str, int] = {}
    counts: dict[str, int] = {}
    for key, size in sizes.items():
        namespace = keys.namespace_of(key)
        if namespace is not None:
            held[namespace] = held.get(namespace, 0) + size
            counts[namespace] = counts.get(namespace, 0) + 1
    named = {k: n for k, n in sizes.items() if keys.namespace_of(k) and (n >= big or k.endswith(keys.PROGRESS_TAIL))}
    return memory.Walk(held, counts, named)


def test_memory_plan_frees_a_learner_past_its_share_biggest_first_its_progress_last_never_anyone_elses() -> None:
    eve, bob = keys.QueueKeys("q", "room01"), keys.QueueKeys("q", "room02")
    sizes = {
        eve.wait: 60 * MIB,
        eve.registry: 30 * MIB,
        eve.job("JOB-000001"): 8 * MIB,
        eve.counter: 1 * MIB,
        keys.progress("room01"): 70 * MIB,  # her own, freed last
        bob.wait: 20 * MIB,  # under the share: untouched
        keys.QueueKeys("q", "room09").wait: 500 * MIB,  # no such learner (revoked): not the guard's
        keys.QueueKeys("q").wait: 500 * MIB,  # no namespace
    }
    planned = memory.plan(walked(sizes), learners=["room01", "room02", "room03"], share=85 * MIB)
    assert [(over.learner, over.held, over.free, over.freeing, over.rest) for over in planned] == [
        ("room01", 169 * MIB, (eve.wait, eve.registry), 90 * MIB, 0)  # 169 - 90 = 79 MiB: under 85
    ]
    # Every other key freed and still past the share (junk in her progress hash): the progress goes too,
    # else the server would stay full for good.
    alone = memory.plan(walked(sizes), learners=["room01"], share=10 * MIB)
    assert alone[0].free == (eve.wait, eve.registry, eve.job("JOB-000001"), eve.counter, keys.progress("room01"))
    assert memory.plan(walked(sizes), learners=["room01"], share=80 * MIB)[0].free == (eve.wait, eve.registry)
    assert memory.plan(walked(sizes), learners=["room02"], share=20 * MIB) == []  # at its share is not past it
    assert memory.holdings(walked(sizes), ["room02", "room03"]) == {"room02": 20 * MIB, "room03": 0}
    with pytest.raises(ValueError, match="share"):
        memory.plan(walked(sizes), learners=["room01"], share=-1)


def test_memory_plan_frees_a_learners_small_keys_unnamed_once_its_big_ones_are_not_enough() -> None:
    """Keys under the walk's BIG come back only as a count and bytes: a learner still past its share
    once its big keys are freed loses every other key but its progress, and its progress last."""
    eve = keys.QueueKeys("q", "room01")
    small = {eve.job(f"JOB-{i:06d}"): MIB for i in range(40)}  # 40 MiB, none named
    sizes = {eve.wait: 50 * MIB, **small, keys.progress("room01"): 5 * MIB, keys.QueueKeys("q", "room02").wait: MIB}
    walk = walked(sizes, big=2 * MIB)
    assert set(walk.sized) == {eve.wait, keys.progress("room01")} and walk.keys == 43
    assert memory.plan(walk, learners=["room01", "room02"], share=50 * MIB) == [
        memory.Over("room01", 95 * MIB, 50 * MIB, (eve.wait,), 50 * MIB)  # 45 MiB left: its big key was enough
    ]
    assert memory.plan(walk, learners=["room01", "room02"], share=30 * MIB) == [
        memory.Over("room01", 95 * MIB, 30 * MIB, (eve.wait,), 90 * MIB, rest=40)  # its progress kept
    ]
    assert memory.plan(walk, learners=["room01"], share=4 * MIB) == [
        memory.Over("room01", 95 * MIB, 4 * MIB, (eve.wait, keys.progress("room01")), 95 * MIB, rest=40)
    ]


def test_memory_is_walked_only_under_pressure_and_a_quiet_walk_only_again_after_the_cooldown_or_growth() -> None:
    assert not memory.pressed({"used_memory": "900", "maxmemory": "0"})  # no maxmemory: never
    assert not memory.pressed({"used_memory": "799", "maxmemory": "1000"})
    assert memory.pressed({"used_memory": "800", "maxmemory": "1000"})
    info = {"used_memory": str(850 * MIB), "maxmemory": str(1000 * MIB)}
    assert memory.walk_again(info, None, now_ms=10_000, cooldown_s=30)  # never walked
    assert not memory.walk_again(info, f"{845 * MIB} 5000", now_ms=10_000, cooldown_s=30)
    assert memory.walk_again(info, f"{830 * MIB} 5000", now_ms=10_000, cooldown_s=30)  # grown 20 MiB (2%)
    assert memory.walk_again(info, f"{850 * MIB} 5000", now_ms=35_000, cooldown_s=30)


def test_a_sweep_under_memory_pressure_says_whom_it_freed_or_that_no_learner_is_past_its_share() -> None:
    at = emq_lab.SimClock(START).now_ms()
    over = memory.Over("room01", 210 * MIB, 85 * MIB, ("a", "b", "c"), 205 * MIB)
    freed = memory.Pressed("the server", 238 * MIB, 256 * MIB, 3, 85 * MIB, 1_204, freed=(over,))
    assert guard.Sweep(10, at_ms=at, memory=(freed,)).lines() == [
        "09:00:00 the server at 92% of maxmemory: suspended room01 for 30 s (it held 210 MiB of keys, "
        "its share 85 MiB) and freed 3 key(s) (205 MiB), biggest first"
    ]
    rest = memory.Over("room01", 210 * MIB, 85 * MIB, ("a",), 200 * MIB, rest=2_600_000)
    everything = memory.Over("room01", 210 * MIB, 1 * MIB, ("a", keys.progress("room01")), 210 * MIB, rest=9)
    assert guard.Sweep(10, at_ms=at, memory=(replace(freed, freed=(rest, everything)),)).lines() == [
        "09:00:00 the server at 92% of maxmemory: suspended room01 for 30 s (it held 210 MiB of keys, "
        "its share 85 MiB) and freed 2,600,001 key(s) (200 MiB), its 1 of 64 KiB or more biggest first, then every "
        "other key but its progress",
        "09:00:00 the server at 92% of maxmemory: suspended room01 for 30 s (it held 210 MiB of keys, "
        "its share 1.0 MiB) and freed 11 key(s) (210 MiB), its 1 of 64 KiB or more biggest first, then every "
        "other key, its progress last",
    ]
    quiet = memory.Pressed("the server", 230 * MIB, 256 * MIB, 3, 85 * MIB, 1_204, most=("room02", 3 * MIB))
    assert guard.Sweep(10, at_ms=at, memory=(quiet,)).lines() == [
        "09:00:00 the server at 89% of maxmemory: no learner holds more than its share of keys (85 MiB; the most, "
        "room02, 3.0 MiB; 1,204 key(s) walked); the guard walks them again in 30 s or once memory grows"
    ]


def _slowlog(ident: int, duration_us: int, args: list[str], addr: str, start: int = 1000) -> list[object]:
    """One raw SLOWLOG GET entry, as the server sends it (bytes, as a client without decoding reads it)."""
    return [ident, start, duration_us, [arg.encode() for arg in args], addr.encode(), b""]


def test_a_hold_is_the_learners_of_its_connection_else_of_the_key_it_names_and_never_the_staffs() -> None:
    """SLOWLOG names no user: a hold is the user's of the connection at its address (one open since
    the hold began), and when that connection is gone (the output-buffer limit closed it) the
    learner's whose namespaced key the command names (also one SLOWLOG cut at 128 bytes), if a
    learner may send that command. The admin's and the observer's holds are no one's; holds under
    the limit are none."""

    def learner(user: str) -> bool:
        return user.startswith("room")

    eve_key, bob_key = "emq:ns:{room01:q}:wait", "emq:ns:{room02:q}:registry"
    reply = [
        _slowlog(9, 610_000, ["LRANGE", eve_key, "0", "-1"], "127.0.0.1:5001"),  # gone: her key names her
        _slowlog(8, 140_000, ["EVALSHA", "ab" * 20, "1", bob_key, "0", "5000"], "127.0.0.1:5002"),  # bob's, open
        _slowlog(7, 900_000, ["EVAL", "FILL", "1", eve_key], "127.0.0.1:5003"),  # the admin's fill, since closed
        _slowlog(6, 300_000, ["CLIENT", "LIST"], "127.0.0.1:5004"),  # the guard's own, open
        _slowlog(5, 99_999, ["LRANGE", eve_key, "0", "-1"], "127.0.0.1:5005"),  # under the limit
        _slowlog(4, 200_000, ["LRANGE", bob_key, "0", "-1"], "127.0.0.1:5006"),  # the observer's, open
        _slowlog(3, 200_000, ["LRANGE", eve_key, "0", "-1"], "127.0.0.1:5007"),  # port now cy's, newer than it
        _slowlog(2, 150_000, ["LRANGE", "emq:ns:{room02:" + "q" * 120 + "... (900 more bytes)", "0", "-1"], "?:1"),
        ["malformed"],
    ]
    entries = slow.parse(reply)
    assert [entry.id for entry in entries] == [9, 8, 7, 6, 5, 4, 3, 2]
    assert entries[0] == slow.Entry(9, 1000, 610_000, ("LRANGE", eve_key, "0", "-1"), "127.0.0.1:5001")
    clients = [
        {"id": "2", "addr": "127.0.0.1:5002", "user": "room02", "age": "3"},
        {"id": "4", "addr": "127.0.0.1:5004", "user": "admin", "age": "40"},
        {"id": "6", "addr": "127.0.0.1:5006", "user": "observer", "age": "40"},
        {"id": "7", "addr": "127.0.0.1:5007", "user": "room03", "age": "0"},  # opened 5 s after the hold
    ]
    held = slow.attribute(entries, clients, learner=learner, now_s=1005)
    assert [(h.user, h.command, h.key, h.duration_us) for h in held] == [
        ("room01", "LRANGE", eve_key, 610_000),
        ("room02", "EVALSHA", bob_key, 140_000),
        ("room01", "LRANGE", eve_key, 99_999),
        ("room01", "LRANGE", eve_key, 200_000),
        ("room02", "LRANGE", "emq:ns:{room02:" + "q" * 120 + "... (900 more bytes)", 150_000),  # a long key, cut
    ]
    assert not slow.over(held[2:3], max_hold_ms=100)  # one under the limit alone
    assert not slow.over(held, max_hold_ms=1000)  # each learner's, summed, under this one


def test_a_sweep_that_suspended_a_learner_for_a_hold_says_what_held_the_server_how_long_and_the_limit() -> None:
    at = emq_lab.SimClock(START).now_ms()
    long_key = "emq:ns:{room01:" + "q" * 200 + "}:wait"
    held = (
        slow.Slow("room01", "LRANGE", "emq:ns:{room01:q}:wait", 610_000, size=19_707_512),
        slow.Slow("room01", "LRANGE", "emq:ns:{room01:q}:wait", 130_000),
        slow.Slow("room02", "LRANGE", long_key, 140_000),
    )
    done = guard.Sweep(12, at_ms=at, suspended=("room01", "room02", "room03"), held=held, max_hold_ms=100)
    lines = done.lines()
    assert lines == [
        "09:00:00 suspended room03 for 30 s (its user off, all its connections closed)",
        "09:00:00 suspended room01 for 30 s: its LRANGE on emq:ns:{room01:q}:wait (19 MiB) held the server 0.61 s "
        "(the class's limit is 0.1 s); 2 such commands, 0.74 s in all",
        f"09:00:00 suspended room02 for 30 s: its LRANGE on {long_key[:59]}… held the server 0.14 s "
        "(the class's limit is 0.1 s)",
    ]
    with pytest.raises(ValueError, match="max_hold_ms"):
        guard.sweep(object(), max_hold_ms=0)


def test_a_hold_counts_only_with_work_behind_it_a_big_key_of_the_learners_not_a_loaded_machines_stretch() -> None:
    """SLOWLOG's duration is wall-clock: on a machine loaded past its cores a course call of 2 ms took
    248 ms. So a hold counts when one of the keys it names is big (MEMORY USAGE past BIG_KEY), the
    biggest named in the line; or when SLOWLOG cut a key's name (it cannot be weighed)."""
    wait, registry = "emq:ns:{room01:q}:wait", "emq:ns:{room01:q}:repeat"
    cut_key = "emq:ns:{room02:" + "q" * 113 + "... (900 more bytes)"
    held = [
        slow.Slow("room01", "EVALSHA", registry, 400_000, keys=(registry, wait)),  # a big wait list among its keys
        slow.Slow("room03", "EVALSHA", "emq:ns:{room03:q}:repeat", 250_000, keys=("emq:ns:{room03:q}:repeat",)),
        slow.Slow("room04", "LRANGE", "emq:ns:{room04:q}:wait", 150_000, keys=("emq:ns:{room04:q}:wait",)),  # gone
        slow.Slow("room05", "COMMAND", "", 300_000),  # no key: a stretched call
        slow.Slow("room02", "LRANGE", cut_key, 150_000, keys=(cut_key,)),
    ]
    sizes = {registry: 92_200, wait: 19_707_512, "emq:ns:{room03:q}:repeat": 92_200, "emq:ns:{room04:q}:wait": None}
    weighed = slow.weigh(held, sizes)
    assert [(w.user, w.key, w.size) for w in weighed] == [("room01", wait, 19_707_512), ("room02", cut_key, -1)]
    assert slow.cut(cut_key) and not slow.cut(wait)
    assert slow.BIG_KEY == 2**20 and not slow.weigh(held[:1], {wait: 2**20 - 1})


def test_many_shorter_reads_of_a_big_key_sent_at_once_are_a_hold_for_their_sum() -> None:
    """Each read under the limit, 30 sent at once hold everyone for their sum (an outside check: 30 reads of
    65 ms held another learner's PING 1.9 s, again every 4 s): a learner's weighed commands in the window
    count together. The same reads on a small key, or one of them alone, are not a hold."""
    wait, small = "emq:ns:{room01:q}:wait", "emq:ns:{room02:q}:wait"
    reply = [_slowlog(40 - i, 65_000, ["LRANGE", wait, "0", "-1"], f"127.0.0.1:{5100 + i}") for i in range(30)]
    reply += [_slowlog(10 - i, 65_000, ["LRANGE", small, "0", "-1"], f"127.0.0.1:{5200 + i}") for i in range(5)]
    learner = lambda user: user.startswith("room")  # noqa: E731
    held = slow.attribute(slow.parse(reply), [], learner=learner, now_s=1005)
    weighed = slow.weigh(held, {wait: 8 * slow.BIG_KEY, small: 4_000})
    assert {w.user for w in weighed} == {"room01"}
    over = slow.over(weighed, max_hold_ms=100)
    assert len(over) == 30 and {w.user for w in over} == {"room01"}
    assert not slow.over(weighed[:1], max_hold_ms=100)  # one 65 ms read alone is allowed
    assert slow.lines("09:00:00", over, cooldown_s=30, max_hold_ms=100) == [
        "09:00:00 suspended room01 for 30 s: its LRANGE on emq:ns:{room01:q}:wait (8 MiB) held the server 0.07 s "
        "(the class's limit is 0.1 s); 30 such commands, 1.95 s in all"
    ]


def test_a_command_of_far_more_arguments_than_the_course_sends_is_a_hold_whatever_its_key_and_time() -> None:
    """SLOWLOG keeps 32 arguments, the last saying how many more, and times the running only, not the
    reading of the arguments: a learner's EXISTS of one tiny key 1,000,000 times held the server 0.7 s
    and SLOWLOG said 76 ms. Such a command (MAX_ARGS arguments or more) is its learner's hold; the
    course's biggest, a register_many of 1,000 names (2,007 arguments), stretched on a loaded
    machine, is not."""
    tiny, registry = "emq:ns:{room01:q}:id", "emq:ns:{room02:q}:repeat"
    shown = ["EXISTS", *[tiny] * 30, "... (999970 more arguments)"]
    course = ["EVALSHA", "ab" * 20, "1001", registry, *[registry + ":n"] * 27, "... (1976 more arguments)"]
    reply = [
        _slowlog(3, 76_000, shown, "127.0.0.1:5001"),
        _slowlog(2, 250_000, course, "127.0.0.1:5002"),
        _slowlog(1, 76_000, ["EXISTS", *[tiny] * 31], "127.0.0.1:5001"),  # 32 arguments, all shown: not cut
    ]
    entries = slow.parse(reply)
    assert [slow.argc(entry.args) for entry in entries] == [1_000_001, 2_007, 32]
    held = slow.attribute(entries, [], learner=lambda user: user.startswith("room"), now_s=1005)
    assert [(h.user, h.argc) for h in held] == [("room01", 1_000_001), ("room02", 2_007), ("room01", 32)]
    weighed = slow.weigh(held, {tiny: 56, registry: 92_200})
    assert [(w.user, w.command, w.key) for w in weighed] == [("room01", "EXISTS", tiny)]
    assert len(slow.weigh(held[:1], {tiny: 2 * slow.BIG_KEY})) == 1  # on a big key too: one hold, one line
    assert 2_007 * 10 < slow.MAX_ARGS <= 1_000_001
    assert slow.lines("09:00:00", weighed, cooldown_s=30, max_hold_ms=100) == [
        "09:00:00 suspended room01 for 30 s: its EXISTS on emq:ns:{room01:q}:id held the server 0.08 s and longer "
        "to read its 1,000,001 arguments (the class's limit is 0.1 s, or 100,000 arguments)"
    ]
