"""The classroom: learners' ACL users cannot touch each other's keys nor run Lua of their own,
the CLI (doctor, users, scripts, revoke), the overview.

ACL tests run on the throwaway Valkey and on the cluster (users are set on every node); fakeredis
has no ACL to speak of. The attacks run on a class server set up as the README says (an admin
user, the default user off). The overview runs on all three backends.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import time
from collections.abc import Iterator
from importlib import resources

import pytest
import redis
from helpers import MIN, START, slot
from redis.exceptions import NoPermissionError, ResponseError
from servers import ValkeyCluster

import emq_classroom as classroom
import emq_lab
from emq_classroom import memory
from emq_classroom.panel import ClassroomPanel
from emq_lab import keys
from emq_lab.errors import BackendUnavailable

_classes = itertools.count(1)


@pytest.fixture(params=["valkey", "cluster"])
def acl_url(request: pytest.FixtureRequest) -> str:
    server = request.getfixturevalue("valkey_cluster" if request.param == "cluster" else "valkey_server")
    return str(server.url)


@pytest.fixture
def two_learners(acl_url: str) -> Iterator[tuple[str, list[classroom.Learner]]]:
    prefix = f"acl{next(_classes)}x"
    admin, _ = emq_lab.backend.open_client(acl_url)
    learners = classroom.create_users(admin, learners=2, prefix=prefix, check=False)  # the shared, open server
    classroom.load_scripts(admin)
    yield acl_url, learners
    assert classroom.revoke_users(admin, prefix=prefix) == [learner.name for learner in learners]
    for learner in learners:
        emq_lab.connect(acl_url, namespace=learner.namespace).reset("q")
    admin.close()


def _raw(url: str) -> redis.Redis:
    """A plain client as the learner: what someone typing commands by hand would have."""
    return redis.Redis.from_url(url.replace("valkey+cluster://", "redis://"), decode_responses=True)


def test_a_learner_cannot_touch_another_namespace(two_learners: tuple[str, list[classroom.Learner]]) -> None:
    url, (alice, bob) = two_learners
    a = emq_lab.connect(alice.url(url), clock=emq_lab.SimClock(START), namespace=alice.namespace)
    assert a.repeat("q").register("digest", MIN, "alice's") is emq_lab.Outcome.REGISTERED
    a.clock.advance(MIN)
    assert len(a.pump("q").tick()) == 1
    theirs = a.keys("q")
    assert len(theirs) == 5  # registry, record, counter, job, wait list
    registry, record = a.keyspace("q").registry, a.keyspace("q").record("digest")

    b = emq_lab.connect(bob.url(url), clock=emq_lab.SimClock(START), namespace=bob.namespace)
    assert b.repeat("q").register("digest", MIN, "bob's") is emq_lab.Outcome.REGISTERED
    mine = b.keyspace("q").registry
    # Bob connects to the same node as Alice's keys, so a refusal is the ACL, not a MOVED.
    node = _raw(bob.url(url))
    if "cluster" in url:
        port = b.client.get_node_from_key(registry).port
        node = redis.Redis(host="127.0.0.1", port=port, username=bob.name, password=bob.password)
    refused = [
        ("GET", registry), ("ZRANGE", registry, 0, -1), ("HGETALL", record), ("EXISTS", record),
        ("ZADD", registry, 0, "x"), ("HSET", record, "template", "bob was here"),
        ("DEL", record), ("UNLINK", registry), ("RENAME", record, mine),
        ("KEYS", "*"), ("SCAN", 0), ("FLUSHALL",), ("FLUSHDB",), ("SCRIPT", "FLUSH"),
        ("ACL", "SETUSER", bob.name, "~*"), ("CONFIG", "SET", "save", ""),
    ]  # fmt: skip
    for command in refused:
        with pytest.raises(NoPermissionError):
            node.execute_command(*command)
    # Hand-written scripts: the key in KEYS, the key built inside the script, and a script whose
    # declared key is Bob's own but whose body reaches for Alice's.
    scripts = [
        ("return redis.call('DEL', KEYS[1])", [record]),
        ("return redis.call('HGETALL', ARGV[1])", [], record),
    ]
    if "cluster" not in url:  # on a cluster Bob's key lives on another slot: the node answers MOVED first
        scripts.append(("redis.call('ZADD', KEYS[1], 0, 'x'); return redis.call('DEL', ARGV[1])", [mine], record))
    for source, script_keys, *args in scripts:
        with pytest.raises((NoPermissionError, ResponseError), match=r"(?i)permission|can't access|no permissions"):
            node.eval(source, len(script_keys), *script_keys, *args)
    # Bob's lab pointed at Alice's namespace (or at none) is refused at its first command, in
    # words that name the key and the fix (emq_lab.errors).
    for wrong in (alice.namespace, None):
        lab = emq_lab.connect(bob.url(url), clock=emq_lab.SimClock(START), namespace=wrong)
        with pytest.raises(NoPermissionError, match=f"does not let user '{bob.name}' touch key.*namespace"):
            lab.repeat("q").register("digest", MIN, "bob's")
        lab.close()

    assert a.keys("q") == theirs
    assert a.repeat("q").record("digest") == {"every_ms": str(MIN), "template": "alice's"}
    node.close()


def test_the_guards_walk_reads_each_keys_namespace_as_keys_namespace_of_and_frees_one_namespace_only(
    two_learners: tuple[str, list[classroom.Learner]],
) -> None:
    """The guard's walk (walk.lua, on every primary) finds each key's namespace as
    ``keys.namespace_of`` does, on keys meant to tell them apart, and names every progress hash;
    freeing the rest of Alice's keys (unlink.lua) leaves her progress and every key of any other
    namespace, on one node or spread over a cluster's slots."""
    url, (alice, bob) = two_learners
    admin, _ = emq_lab.backend.open_client(url)
    nodes = [admin.get_redis_connection(node) for node in admin.get_primaries()] if "cluster" in url else [admin]
    head, me = keys.namespace_head(), alice.namespace
    tricky = [
        *(keys.QueueKeys(queue, me).wait for queue in "qrst"), keys.progress(me), keys.progress(bob.namespace),
        keys.QueueKeys("q", bob.namespace).wait, f"{head}{me}", f"{head}{me}:", f"{head}{me}::q}}", f"{head}{me}}}",
        f"{head}{me}}}:x:y", f"{head}{me}%a:q}}:x", f"{head}{me}\\:q}}", f"{head}{me}é:q}}", f"{head}{me}\n:q}}:x",
        f"{head}{me}.-[*]:q}}", f"{head}{me}{{x}}:y", f"{head}{me[:-1]}:q}}",
    ]  # fmt: skip
    elsewhere = [keys.QueueKeys("q").wait, f"emq:ns:{{other{me}:q}}:wait", keys.progress("other")]  # not walked
    for key in tricky + elsewhere:
        admin.set(key, "x" * 10)
    try:

        def walked(big: int) -> tuple[dict[str, int], set[str]]:
            counts: dict[str, int] = {}
            named: set[str] = set()
            for node in nodes:
                walk = memory.walk(node, prefix=alice.name[:-2], big=big)  # the class's prefix: <prefix>01, 02
                for namespace, count in walk.counts.items():
                    counts[namespace] = counts.get(namespace, 0) + count
                named |= set(walk.sized)
            return counts, named

        counts, named = walked(0)  # every key by name
        spaced = [key for key in tricky if keys.namespace_of(key) is not None]
        assert counts == {
            space: sum(keys.namespace_of(key) == space for key in spaced) for space in map(keys.namespace_of, spaced)
        }
        assert named == set(spaced) and len(counts) > 5
        assert walked(memory.BIG)[1] == {keys.progress(me), keys.progress(bob.namespace)}
        assert sum(memory.free_rest(node, me) for node in nodes) == sum(keys.namespace_of(k) == me for k in spaced) - 1
        # The guard's scripts are in the server's cache now, and still no learner's: SCAN and MEMORY are none of hers.
        assert not {"scan", "memory", "memory|usage"} & set(classroom.users.ALLOWED_COMMANDS)
        for name in ("walk", "unlink"):
            sha = hashlib.sha1(resources.files("emq_classroom").joinpath(f"{name}.lua").read_bytes()).hexdigest()
            with pytest.raises((NoPermissionError, ResponseError), match=r"(?i)permission"):
                _raw(alice.url(url)).evalsha(sha, 0, "0", keys.namespaces_pattern(), 1000, 0, head, me)
        left = [key for key in tricky + elsewhere if admin.exists(key)]
        assert left == [key for key in tricky + elsewhere if keys.namespace_of(key) != me or key == keys.progress(me)]
    finally:
        admin.delete(*tricky, *elsewhere)
        admin.close()


def test_cli_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        classroom.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert all(command in out for command in ("doctor", "users", "scripts", "revoke", "overview", "hub"))


def test_learner_names_and_rules() -> None:
    assert classroom.learner_names("s", 3) == ["s01", "s02", "s03"]
    assert classroom.learner_names("s", 120)[-1] == "s120"
    with pytest.raises(ValueError, match="namespace"):
        classroom.learner_names("a:b", 2)
    rules = classroom.acl_rules("s01", "pw")
    assert rules[:3] == ["reset", "on", ">pw"] and "~emq:ns:{s01:*" in rules and "-@all" in rules
    assert not {"+keys", "+flushall", "+flushdb", "+scan", "+@all"} & set(rules)
    # No Lua of a learner's own: EVALSHA only (of the scripts the instructor loaded).
    assert "+evalsha" in rules
    lua = {"+eval", "+eval_ro", "+script|load", "+script|kill", "+script|flush", "+script", "+function", "+fcall"}
    assert not lua & set(rules)
    # The scripts' own calls are read from the .lua files: the writes only scripts make are there.
    assert {"zadd", "zrem", "hset", "incr", "lpush"} <= set(classroom.script_commands())


def test_overview_lists_each_learner(backend_url: str) -> None:
    run = next(_classes)
    prefix = f"ov{run}-"
    labs = {
        name: emq_lab.connect(backend_url, clock=emq_lab.SimClock(START), namespace=f"{prefix}{name}")
        for name in ("ann", "ben")
    }
    labs["ann"].repeat("reports").register_many([("a", MIN, "t"), ("b", MIN, "t")])
    labs["ben"].repeat("cadence-live").register("a", MIN, "t")
    labs["ben"].repeat("cancel").register("a", MIN, "t")
    labs["ben"].clock.advance(MIN)
    labs["ben"].pump("cancel").tick()
    admin = labs["ann"].client
    try:
        view = classroom.overview(admin, prefix=prefix, count=10)
        assert view.complete
        assert [(s.namespace, s.dives) for s in view.learners] == [
            (f"{prefix}ann", ("01 upsert",)),
            (f"{prefix}ben", ("02 cadence", "03 cancel")),
        ]
        ben = {q.queue: (q.registrations, q.waiting) for q in view.learners[1].queues}
        assert ben == {"cadence-live": (1, 0), "cancel": (1, 1)}
        lines = view.readout.splitlines()
        # The class first: each dive reached by how many, each check by state; then the learners.
        assert lines[0] == "class: 2 learner(s) · 2 started · 0 not started"
        assert lines[1] == "reached: 01 upsert 1/2 · 02 cadence 1/2 · 03 cancel 1/2"
        assert view.check_counts()[0] == ("upsert.predict", 0, 0, 2)
        assert lines.index("learners:") < next(i for i, line in enumerate(lines) if line.startswith(f"{prefix}ann"))
        assert any(line.startswith(f"{prefix}ann: 1 queue(s) · dives: 01 upsert · checks passed 0/6") for line in lines)
        # A search cut short still shows each named learner's dives: the course's queues are read by name.
        cut = classroom.overview(admin, prefix=prefix, learners=(f"{prefix}ann", f"{prefix}ben"), count=1, max_keys=1)
        assert not cut.complete and "incomplete" in cut.readout
        assert [(s.namespace, s.dives) for s in cut.learners] == [(s.namespace, s.dives) for s in view.learners]

        panel = ClassroomPanel(labs["ann"], prefix=prefix, every_s=None)
        assert panel.readout == view.readout
        labs["ann"].reset("reports")
        assert panel.readout == view.readout  # a view: unchanged until refreshed
        refreshed = panel.refresh()
        assert f"\n{prefix}ben: 2 queue(s) · dives: 02 cadence, 03 cancel" in refreshed
        assert f"{prefix}ann" not in refreshed and refreshed.startswith("class: 1 learner(s)")
        panel.click("Refresh")
        assert panel.readout == refreshed
    finally:
        for lab in labs.values():
            for q in ("reports", "cadence-live", "cancel"):
                lab.reset(q)
    assert classroom.overview(admin, prefix=prefix).readout == "no learner found yet"


def test_overview_refuses_bad_bounds() -> None:
    lab = emq_lab.connect("embedded")
    with pytest.raises(ValueError, match="max_keys"):
        classroom.overview(lab.client, max_keys=0)
    with pytest.raises(ValueError, match="namespace"):
        classroom.overview(lab.client, prefix="a*")
    assert keys.split_namespaced("emq:ns:{a:b:c}:repeat:x") == ("a", "b:c", "repeat:x")
    assert keys.split_namespaced("emq:{a}:repeat") is None


def test_panel_refreshes_itself_on_the_running_event_loop() -> None:
    """In a kernel the panel re-scans on the asyncio loop; stop() (the checkbox) ends it."""
    lab = emq_lab.connect("embedded", clock=emq_lab.SimClock(START), namespace=f"loop{next(_classes)}")
    prefix = lab.namespace or ""

    async def scenario() -> tuple[str, str, bool]:
        panel = ClassroomPanel(lab, prefix=prefix, every_s=0.01)
        before = panel.readout
        lab.repeat("reports").register("n", MIN, "t")
        for _ in range(1000):  # yield to the loop until the scheduled refresh has run
            if panel.readout != before:
                break
            await asyncio.sleep(0.01)
        after = panel.readout
        panel.stop()
        return before, after, panel._timer is None

    try:
        before, after, stopped = asyncio.run(scenario())
    finally:
        lab.reset("reports")
    assert before == "no learner found yet"
    assert f"\n{prefix}: 1 queue(s) · dives: 01 upsert" in after and stopped


def _move_slot(cluster: ValkeyCluster, slot: int, source: int, target: int, *, finish: bool) -> None:
    """Migrate ``slot``'s keys from node port ``source`` to ``target``; with ``finish`` every node
    then assigns the slot to ``target`` (else it stays mid-migration: the source answers ASK)."""
    nodes = {node.port: redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True) for node in cluster.nodes}
    try:
        ids = {port: client.execute_command("CLUSTER", "MYID") for port, client in nodes.items()}
        nodes[target].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
        nodes[source].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])
        moving = nodes[source].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
        if moving:
            nodes[source].execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *moving)
        if finish:
            for client in nodes.values():
                client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
    finally:
        for client in nodes.values():
            client.close()


def test_a_learner_follows_a_slot_migration_ask_then_moved(valkey_cluster: ValkeyCluster) -> None:
    """A reshard mid-class: the learner's ACL lets its client send ASKING, and MOVED is followed."""
    prefix = f"mig{next(_classes)}x"
    admin, _ = emq_lab.backend.open_client(valkey_cluster.url)
    (learner,) = classroom.create_users(admin, learners=1, prefix=prefix, check=False)  # the shared, open cluster
    classroom.load_scripts(admin)
    lab = emq_lab.connect(learner.url(valkey_cluster.url), clock=emq_lab.SimClock(START), namespace=learner.namespace)
    rep = lab.repeat("q")
    assert rep.register("a", MIN, "t") is emq_lab.Outcome.REGISTERED
    q_slot = slot(lab.keyspace("q").registry)
    source = admin.get_node_from_key(lab.keyspace("q").registry).port
    target = next(node.port for node in valkey_cluster.nodes if node.port != source)
    try:
        _move_slot(valkey_cluster, q_slot, source, target, finish=False)
        assert rep.record("a") == {"every_ms": str(MIN), "template": "t"}  # ASK, then ASKING + HGETALL
        assert rep.register("a", MIN, "t") is emq_lab.Outcome.EXISTS  # ASK for a script's keys
        # A new key cannot be written mid-move (the server answers TRYAGAIN): a transient fault.
        with pytest.raises(BackendUnavailable, match="moving this queue's keys to another node"):
            rep.register("b", MIN, "t")
        _move_slot(valkey_cluster, q_slot, source, target, finish=True)
        assert rep.register("b", MIN, "t") is emq_lab.Outcome.REGISTERED  # MOVED: the client follows
        assert rep.count() == 2
    finally:
        lab.reset("q")
        _move_slot(valkey_cluster, q_slot, target, source, finish=True)  # leave the shared cluster as found
        lab.close()
        classroom.revoke_users(admin, prefix=prefix)
        admin.close()


def test_the_guard_picks_a_learners_newest_connections_past_the_quota_and_any_huge_reply() -> None:
    entries = [
        {"id": "1", "user": "admin", "omem": "0", "tot-mem": "2000", "age": "90"},
        {"id": "2", "user": "learner01", "omem": "0", "tot-mem": "2000", "age": "60"},
        {"id": "3", "user": "learner01", "omem": "0", "tot-mem": "2000", "age": "50"},
        {"id": "4", "user": "learner01", "omem": "0", "tot-mem": "2000", "age": "1"},
        {"id": "5", "user": "learner02", "omem": str(64 * 2**20), "tot-mem": str(65 * 2**20), "age": "5"},
        {"id": "6", "user": "default", "omem": "0", "tot-mem": "2000", "age": "9", "addr": "10.1.2.3:50114"},
        {"id": "7", "user": "default", "omem": "0", "tot-mem": "2000", "age": "0"},
        {"id": "8", "user": "admin", "omem": str(99 * 2**20), "tot-mem": str(99 * 2**20), "age": "0"},
    ]
    picked = classroom.guard.choose(
        entries, me=8, learner=lambda user: user.startswith("learner"), quota=2, login_open=True, grace_s=5
    )
    assert [(c.id, c.user, c.why) for c in picked] == [
        (4, "learner01", "quota"),  # the newest past two; the two oldest stay
        (5, "learner02", "reply"),
        (6, "default", "login"),  # not logged in after 9 s; the one just opened may still log in
    ]
    done = classroom.guard.Sweep(
        8, closed=tuple(picked), at_ms=emq_lab.SimClock(START).now_ms(), quota=2, grace_s=5, suspended=("learner01",)
    )
    assert done.lines() == [
        "09:00:00 closed 1 connection(s) of learner01 (past its quota of 2)",
        "09:00:00 closed 1 connection(s) of learner02 (holding more than 32 MiB of replies it did not read)",
        "09:00:00 suspended learner01 for 30 s (its user off, all its connections closed)",
        "09:00:00 closed 1 connection(s) not logged in after 5 s, from 10.1.2.3 (1)",  # no user to name: the address
    ]
    with pytest.raises(ValueError, match="quota"):
        classroom.guard.choose(entries, me=0, learner=bool, quota=0)


def test_the_guard_counts_failed_logins_since_its_last_sweep_not_time() -> None:
    """ACL LOG groups failed logins per user tried: the guard counts each entry's growth since the
    last sweep (a log reset starts the count again), names the connection of the last try once it
    failed 20 times or more, and closes it with the other failed logins from its address."""
    info = "id=41 addr=10.0.0.9:5000 user=default cmd=auth"
    log = [
        {"reason": "auth", "entry-id": 3, "count": 70, "username": "learner02", "client-info": info},
        {"reason": "auth", "entry-id": 2, "count": 4, "username": "learner05", "client-info": {"id": 12}},
        {"reason": "command", "entry-id": 1, "count": 900, "username": "learner01", "client-info": {"id": 9}},
    ]
    guessing, per_user, now = classroom.logins.failed_logins(log, {"0:3": 40, "0:2": 1})
    assert guessing == {41: 30} and per_user == {"learner02": 30, "learner05": 3}
    assert now == {"0:3": 70, "0:2": 4}
    assert classroom.logins.failed_logins(log, now)[:2] == ({}, {})  # nothing new: nothing closed
    assert classroom.logins.failed_logins(log, {"0:3": 500})[0] == {41: 70}  # a reset log counts afresh
    entries = [
        {"id": "41", "user": "default", "cmd": "auth", "addr": "10.0.0.9:5000", "age": "0"},
        {"id": "42", "user": "default", "cmd": "auth", "addr": "10.0.0.9:5001", "age": "0"},  # its login failed
        {"id": "43", "user": "default", "cmd": "NULL", "addr": "10.0.0.9:5002", "age": "0"},  # handshake to come
        {"id": "44", "user": "default", "cmd": "auth", "addr": "10.0.0.7:6000", "age": "0"},  # another address
        {"id": "45", "user": "learner05", "cmd": "ping", "addr": "10.0.0.9:5003", "age": "0"},
    ]
    picked = classroom.guard.choose(
        entries, me=1, learner=lambda u: u.startswith("learner"), login_open=True, guessing=guessing
    )
    assert [(c.id, c.why) for c in picked] == [(41, "password"), (42, "password")]


def test_an_overloaded_server_is_backend_unavailable_saying_what_happened() -> None:
    url = "redis://learner01:secret@127.0.0.1:6379/0"
    faults = {
        redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."): "out of memory",
        redis.exceptions.ResponseError(
            "OOM command not allowed when used memory > 'maxmemory'. script: x"
        ): "out of memory",
        redis.exceptions.ConnectionError("max number of clients reached"): "too many clients",
        redis.exceptions.ConnectionError("Connection closed by server."): "guard closes",
    }
    for fault, words in faults.items():
        better = emq_lab.errors.translate(fault, url, ("EVALSHA", "abc", 1, "k"))
        assert isinstance(better, BackendUnavailable) and words in str(better), better
        assert "secret" not in str(better) and "(or wait for it)" not in str(better)


def test_the_demo_page_clock_moves_while_what_the_learners_did_stays() -> None:
    setting = classroom.prepare(emq_lab.connect("embedded"))
    panel = ClassroomPanel(setting.lab, prefix=setting.prefix, learners=setting.learners, every_s=None)
    first, readout = setting.lab.clock.now_ms(), panel.readout
    assert panel.when == "last refreshed 09:15:00 UTC"
    time.sleep(1.05)
    assert panel.refresh() == readout  # the same class, every time
    assert setting.lab.clock.now_ms() >= first + 1000 and panel.when.startswith("last refreshed 09:15:")
    assert panel.when != "last refreshed 09:15:00 UTC"
    assert readout.splitlines()[0] == "class: 3 learner(s) · 2 started · 1 not started"
    assert "demo-cy: not started" in readout


def test_doctor_keeps_each_fix_for_the_next_start_as_the_server_was_started() -> None:
    from emq_classroom.doctor import keep

    assert keep("/etc/valkey/valkey.conf", "maxclients", "68") == (
        "CONFIG SET maxclients 68 ; CONFIG REWRITE (keeps it in /etc/valkey/valkey.conf)"
    )
    flag = keep("", "client-output-buffer-limit", "normal 8mb 2mb 10")
    assert flag.startswith('CONFIG SET client-output-buffer-limit "normal 8mb 2mb 10" ; at the next start: ')
    assert "--client-output-buffer-limit normal 8mb 2mb 10" in flag and "REWRITE" not in flag


def test_the_package_says_what_each_subcommand_does() -> None:
    """``python -m emq_classroom``'s subcommands, each named in the package's docstring."""
    import argparse

    import emq_classroom as classroom
    from emq_classroom import cli

    (commands,) = [a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(commands.choices) >= {"doctor", "users", "guard", "hub"}
    missing = [name for name in commands.choices if f"``{name}``" not in (classroom.__doc__ or "")]
    assert not missing, f"emq_classroom/__init__.py's docstring does not name: {missing}"
