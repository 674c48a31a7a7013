"""Faults a learner meets at connect and on the first call: each gives a message that names the
URL (never its password) and the fix, within seconds (issue 15, items 4 to 8)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from enum import IntEnum
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot
from redis.retry import Retry
from servers import ValkeyServer, _cluster_node, free_port, required, server_binary
from test_health import Timers

import emq_lab
from conftest import START
from emq_lab import backend, health, validate
from emq_lab.health import UNAVAILABLE
from emq_lab.widgets import BootPanel

pytestmark = pytest.mark.xdist_group("connect-faults")  # under -n, one worker takes the module: its fixtures start once

SHORT_S = 0.5  # the timeout these tests pass: a stalled server fails them in half a second


def need_valkey() -> None:
    if server_binary() is None:
        if required():
            pytest.fail("VALKEY REQUIRED (EMQ_LAB_REQUIRE_VALKEY=1): no valkey-server on PATH")
        pytest.skip("VALKEY TESTS SKIPPED: no valkey-server on PATH")


@pytest.fixture
def own_server() -> Iterator[ValkeyServer]:
    need_valkey()
    server = ValkeyServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def locked_server() -> Iterator[ValkeyServer]:
    """A server with a password and an ACL user ``alice`` limited to her namespace's keys."""
    need_valkey()
    server = ValkeyServer(password="s3cret")
    admin = redis.Redis(host="127.0.0.1", port=server.port, password="s3cret")
    admin.execute_command(
        "ACL", "SETUSER", "alice", "on", ">pw", "~emq:ns:{alice:*", "+@all", "-info", "-zcard", "-ping"
    )
    admin.close()
    yield server
    server.close()


# -- URLs refused before any I/O (item 8) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (123, "url: expected a str such as 'redis://127.0.0.1:6379/0' (or None), got int 123"),
        (b"redis://127.0.0.1", "url: expected a str such as 'redis://127.0.0.1:6379/0' (or None), got bytes"),
        ("redis://", "url: redis:// names no host; write redis://127.0.0.1:6379/0"),
        ("valkey://:pw@/0", "url: valkey://:***@/0 names no host"),
        ("redis://127.0.0.1:6379/abc", "ends in /abc, which is not a database number"),
        ("redis://127.0.0.1:6379/0/x", "ends in /0/x, which is not a database number"),
        ("redis://127.0.0.1:port/0", "is not a valid URL"),
        ("valkey+cluster://127.0.0.1:7000/2", "a cluster has only database 0"),
        ("http://127.0.0.1:6379", "has scheme 'http'"),
        ("redis://127.0.0.1:6379/0?db=3", "names database /0 and ?db=3; keep one of them"),
        ("redis://127.0.0.1:6379/2?db=2&socket_timeout=600", "sets socket_timeout, which emq-lab does not take"),
        ("valkey+cluster://127.0.0.1:7000?db=1", "a cluster has only database 0"),
        (f"redis://{'h' * 300}:6379/0", "its host name is 300 characters long"),
        ("redis://u:pw/ss#x?y@127.0.0.1:6379/0", "redis://u:***@127.0.0.1:6379/0 is not a valid URL"),
        # B5: a query name the client would not take is a ValueError listing the ones it takes
        ("redis://127.0.0.1:6379/0?pasword=pw", "url: its query sets 'pasword', which is not an option emq-lab"),
        ("redis://127.0.0.1:6379/0?pasword=pw", "the options are db, username, password, client_name"),
        ("redis://127.0.0.1:6379/0?db=1&db=2", "sets an option twice"),
        ("redis://127.0.0.1:6379/99999999999", "names database 99999999999; a server numbers its databases from 0"),
        ("redis://127.0.0.1:6379?db=4294967296", "names database 4294967296"),
        ("redis://127.0.0.1:6379/0?ssl_keyfile=k.pem", "sets ssl_keyfile, which only a TLS URL takes; use rediss://"),
        ("valkey://127.0.0.1:6379/0?ssl_certfile=c&ssl_keyfile=k", "sets ssl_certfile, ssl_keyfile, which only a TLS"),
        # B5: a percent-encoded password= is redacted as the plain one is
        ("redis://127.0.0.1:6379/0?username=admin&%70assword=pw&db=x", "?username=admin&%70assword=***&db=x has ?db=x"),
        (
            "redis://127.0.0.1:6379/0?%70assword=pw&health_check_interval=3",
            "%70assword=***&health_check_interval=3 sets",
        ),
    ],
)
def test_a_malformed_url_is_a_value_error_naming_it(url: object, said: str) -> None:
    with pytest.raises(ValueError, match="url: ") as caught:
        emq_lab.connect(url)  # type: ignore[arg-type]
    assert said in str(caught.value)
    assert "pw" not in str(caught.value).replace("pw@", "")


def test_the_password_never_shows() -> None:
    from emq_lab.errors import redact

    assert redact("redis://alice:hunter2@127.0.0.1:6379/0") == "redis://alice:***@127.0.0.1:6379/0"
    assert redact("redis://:hunter2@127.0.0.1/0") == "redis://:***@127.0.0.1/0"
    assert redact("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert (
        redact("redis://h:1/0?username=admin&password=hunter2&db=2") == "redis://h:1/0?username=admin&password=***&db=2"
    )
    # A password holding "/", "#", "?" or "@" breaks the parse; the text is redacted all the same.
    assert redact("redis://admin:a/b#c?d@e@127.0.0.1:6379/0") == "redis://admin:***@127.0.0.1:6379/0"
    assert redact("redis://h/0\n\x1b[2J") == "redis://h/0\\n\\x1b[2J"  # one line, no terminal escape
    # B5: a query's names are read percent-decoded, and only known harmless values are shown
    assert (
        redact("redis://h:1/0?%70assword=hunter2&PASS%57ORD=x&db=2")
        == "redis://h:1/0?%70assword=***&PASS%57ORD=***&db=2"
    )
    assert redact("redis://h:1/0?pasword=hunter2;username=ann") == "redis://h:1/0?pasword=***;username=ann"


def test_a_database_the_server_lacks_says_so(valkey_server: ValkeyServer) -> None:
    with pytest.raises(ValueError, match=r"names a database this server does not have .* write /0"):
        emq_lab.connect(valkey_server.url.replace("/0", "/16"))


def test_a_key_of_the_queue_with_another_type_is_named(lab: emq_lab.Lab, queue: str) -> None:
    # another program wrote the registry's key as a string: keys(), reset() and the verbs say which key
    k = lab.keyspace(queue)
    lab.client.set(k.registry, "not a sorted set")
    try:
        for call in (lambda: lab.keys(queue), lambda: lab.reset(queue), lambda: lab.pump(queue).tick()):
            with pytest.raises(redis.ResponseError) as caught:
                call()
            said = str(caught.value)
            assert f"a key of this queue ({k.registry}" in said and "holds another type than emq-lab keeps" in said
            assert "see it with TYPE <key>, delete it if it is not yours" in said
    finally:
        lab.client.delete(k.registry)


def test_describe_never_shows_a_password(locked_server: ValkeyServer) -> None:
    lab = emq_lab.connect(f"redis://:s3cret@127.0.0.1:{locked_server.port}/0?password=s3cret", namespace="ns1")
    assert "s3cret" not in lab.describe() and "s3cret" not in repr(lab)
    lab.close()


class Period(IntEnum):
    QUARTER = 15 * 60_000


def test_an_intenum_period_validates_as_its_plain_int() -> None:
    checked = validate.every_ms(Period.QUARTER)
    assert checked == 900_000 and type(checked) is int
    assert type(validate.first_in_ms(Period.QUARTER)) is int
    with pytest.raises(ValueError, match="every_ms"):
        validate.every_ms(True)


def test_an_intenum_period_registers_as_its_int(lab: emq_lab.Lab, queue: str) -> None:
    rep = lab.repeat(queue)
    assert rep.register("report", Period.QUARTER, "t", first_in_ms=Period.QUARTER) is emq_lab.Outcome.REGISTERED
    assert rep.register_many([("digest", Period.QUARTER, "t")]) == [emq_lab.Outcome.REGISTERED]
    assert rep.record("report")["every_ms"] == rep.record("digest")["every_ms"] == "900000"
    assert [due.every_ms for due in rep.due()] == [900_000]


# -- unreachable, stalled (items 4 and 7) ---------------------------------------------------------


def test_connect_to_nothing_fails_now_naming_the_url_without_its_password() -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    with pytest.raises(emq_lab.BackendUnavailable) as caught:
        emq_lab.connect(url, timeout_s=SHORT_S)
    text = str(caught.value)
    assert "hunter2" not in text
    assert f"backend unavailable at redis://:***@127.0.0.1:{url.rsplit(':', 1)[1]}" in text
    assert "connection refused" in text and "start the server" in text and "emq_lab.connect() with no URL" in text


def retries(policy: Retry) -> int:
    return policy.get_retries() if hasattr(policy, "get_retries") else int(policy._retries)  # redis-py 5


def test_every_client_has_explicit_timeouts_and_a_retry_policy(lab: emq_lab.Lab) -> None:
    if lab.describe().startswith("embedded"):
        pytest.skip("in-process fakeredis: nothing to time out")
    client = lab.client
    if isinstance(client, redis.RedisCluster):
        # The cluster client retries (reopening the slot map); its node clients do not, on top.
        assert retries(client.retry) == backend.RETRIES
        pools = [node.redis_connection.connection_pool for node in client.get_nodes()]
    else:
        assert retries(client.connection_pool.connection_kwargs["retry"]) == backend.RETRIES
        pools = [client.connection_pool]
    for pool in pools:
        assert pool.connection_kwargs["socket_timeout"] == backend.TIMEOUT_S
        assert pool.connection_kwargs["socket_connect_timeout"] == backend.CONNECT_TIMEOUT_S


def test_a_stalled_server_fails_a_call_within_the_timeout_with_a_clear_message(own_server: ValkeyServer) -> None:
    lab = emq_lab.connect(own_server.url, clock=emq_lab.SimClock(START), timeout_s=SHORT_S)
    rep = lab.repeat("stalled")
    assert rep.count() == 0
    assert own_server.process is not None
    pid = own_server.process.pid
    os.kill(pid, signal.SIGSTOP)
    # Without a socket timeout the call below would wait for this watchdog, then succeed.
    watchdog = threading.Timer(30, os.kill, (pid, signal.SIGCONT))
    watchdog.start()
    try:
        with pytest.raises(emq_lab.BackendUnavailable, match=r"no answer within 0\.5 s \(the server is stalled"):
            rep.count()
        with pytest.raises(emq_lab.BackendUnavailable, match=r"no answer within 0\.5 s"):
            emq_lab.connect(own_server.url, timeout_s=SHORT_S)
        # The PING waits the socket timeout, and the message says so (it once said 2 s here).
        with pytest.raises(emq_lab.BackendUnavailable, match=r"no answer within 2\.5 s"):
            emq_lab.connect(own_server.url, timeout_s=2.5)
    finally:
        watchdog.cancel()
        os.kill(pid, signal.SIGCONT)
    assert rep.count() == 0  # and it carries on once the server does
    lab.close()


# -- passwords, ACLs, TLS (item 8) ----------------------------------------------------------------


def test_no_password_to_a_password_server(locked_server: ValkeyServer) -> None:
    with pytest.raises(redis.AuthenticationError, match="asks for a password and the URL gives none") as caught:
        emq_lab.connect(f"redis://127.0.0.1:{locked_server.port}/0")
    assert "redis://:PASSWORD@host:port/0" in str(caught.value)
    assert "HELLO" not in str(caught.value)


def test_a_wrong_password(locked_server: ValkeyServer) -> None:
    with pytest.raises(redis.AuthenticationError, match="refused user 'default' and the password") as caught:
        emq_lab.connect(f"redis://:nope@127.0.0.1:{locked_server.port}/0")
    assert "nope" not in str(caught.value)


def test_an_acl_refusal_names_the_keys_and_the_command(locked_server: ValkeyServer) -> None:
    url = f"redis://alice:pw@127.0.0.1:{locked_server.port}/0"
    lab = emq_lab.connect(url, clock=emq_lab.SimClock(START))  # alice may not PING or INFO: still connects
    with pytest.raises(redis.exceptions.NoPermissionError) as caught:
        lab.repeat("reports").register("r", 60_000, "{}")
    text = str(caught.value)
    assert "ACL does not let user 'alice' touch key(s) emq:{reports}:repeat" in text
    assert "(in EVALSHA)" in text and "namespace" in text
    with pytest.raises(redis.exceptions.NoPermissionError, match="does not let user 'alice' run ZCARD"):
        lab.repeat("reports").count()
    lab.close()
    own = emq_lab.connect(url, clock=emq_lab.SimClock(START), namespace="alice")  # the fix the message names
    assert own.repeat("reports").register("r", 60_000, "{}") is emq_lab.Outcome.REGISTERED
    own.reset("reports")
    own.close()


def test_tls_to_a_plain_server_fails_fast_saying_use_redis(valkey_server: ValkeyServer) -> None:
    url = f"rediss://127.0.0.1:{valkey_server.port}/0"
    with pytest.raises(ValueError, match="asks for TLS, but the server .* speaks plain text; use redis://"):
        emq_lab.connect(url, timeout_s=30)  # the probe answers at once, not after a timeout


# -- clusters (items 5 and 6) ---------------------------------------------------------------------


def test_a_plain_url_to_a_cluster_node_says_use_the_cluster_url(valkey_cluster: object) -> None:
    port = valkey_cluster.port  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=rf"is a node of a cluster; use valkey\+cluster://127\.0\.0\.1:{port}"):
        emq_lab.connect(f"valkey://127.0.0.1:{port}/0")


def test_a_cluster_url_to_a_plain_server_says_use_the_plain_url(valkey_server: ValkeyServer) -> None:
    with pytest.raises(ValueError, match=rf"not in cluster mode; use valkey://127\.0\.0\.1:{valkey_server.port}/0"):
        emq_lab.connect(f"valkey+cluster://127.0.0.1:{valkey_server.port}")


def wait_cluster_ok(node: ValkeyServer) -> None:
    client = redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True)
    deadline = time.monotonic() + 30
    while "cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
        assert time.monotonic() < deadline, "one-node cluster did not reach cluster_state:ok"
        time.sleep(0.05)
    client.close()


@pytest.fixture
def one_node_cluster() -> Iterator[ValkeyServer]:
    """A cluster of one primary holding every slot (valkey-cli wants three to create one)."""
    need_valkey()
    node = _cluster_node()
    client = redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True)
    client.execute_command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    client.close()
    wait_cluster_ok(node)
    yield node
    node.close()


def test_a_cluster_with_every_node_down_is_transient(
    one_node_cluster: ValkeyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    timers = Timers()
    monkeypatch.setattr(health, "call_later", timers)
    url = f"valkey+cluster://127.0.0.1:{one_node_cluster.port}"
    lab = emq_lab.connect(url, clock=emq_lab.SimClock(START), timeout_s=SHORT_S)
    panel = BootPanel(lab, "all-down")
    one_node_cluster.stop()
    with pytest.raises(emq_lab.BackendUnavailable, match="no node of the cluster answers"):
        lab.repeat("all-down").count()
    panel.click("Boot #1")
    assert panel.status.startswith(UNAVAILABLE) and "no node of the cluster answers" in panel.status
    one_node_cluster.start()
    wait_cluster_ok(one_node_cluster)  # it reloads its slots from nodes.conf
    for _ in range(3):  # redis-py 5's cluster client needs a round to read the slot map again
        timers.fire()
        if not panel.health.status:
            break
    assert not panel.health.status
    assert [boot.tuple for boot in panel.history] == ["{:ok, :registered}"]
    lab.reset("all-down")
    lab.close()


def test_tls_to_a_tls_server_still_connects(tmp_path: Path) -> None:
    """The plain-text probe before a TLS handshake leaves a real TLS server alone."""
    need_valkey()
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    tls_port = free_port()
    server = ValkeyServer(
        "--tls-port", str(tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
        "--tls-auth-clients", "no",
    )  # fmt: skip
    try:
        lab = emq_lab.connect(f"rediss://127.0.0.1:{tls_port}/0?ssl_cert_reqs=none", timeout_s=SHORT_S)
        assert lab.repeat("tls").count() == 0
        lab.close()
    finally:
        server.close()


def test_without_cluster_slots_the_first_moved_says_use_the_cluster_url(valkey_cluster: object) -> None:
    """A user who may not run CLUSTER SLOTS passes the connect check; the first key on another node's
    slot answers MOVED, which says the same as the check."""
    nodes = valkey_cluster.nodes  # type: ignore[attr-defined]
    admins = [redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True) for node in nodes]
    for admin in admins:
        admin.execute_command("ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "+@all", "-cluster|slots")
    try:
        port = nodes[0].port
        lab = emq_lab.connect(f"valkey://noinfo:pw@127.0.0.1:{port}/0", clock=emq_lab.SimClock(START))
        served = {
            slot
            for low, high, *owners in admins[0].execute_command("CLUSTER", "SLOTS")
            if int(owners[0][1]) == port
            for slot in range(int(low), int(high) + 1)
        }
        elsewhere = next(f"moved{i}" for i in range(1000) if key_slot(f"moved{i}".encode()) not in served)
        with pytest.raises(ValueError, match=rf"is a node of a cluster; use valkey\+cluster://127\.0\.0\.1:{port}"):
            lab.repeat(elsewhere).count()
        lab.close()
    finally:
        for admin in admins:
            admin.execute_command("ACL", "DELUSER", "noinfo")
            admin.close()
