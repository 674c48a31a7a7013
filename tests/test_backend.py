"""connect(): URL precedence, valkey:// URLs, the shared embedded server, scoped reset."""

from __future__ import annotations

import pytest
import redis
from servers import ValkeyServer

import emq_lab
from emq_lab import SimClock, SystemClock, scripts
from emq_lab.errors import redact


def test_embedded_is_the_default_and_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMQ_LAB_URL", raising=False)
    one, two = emq_lab.connect(), emq_lab.connect()
    assert "embedded" in one.describe()
    assert isinstance(one.clock, SystemClock)
    one.repeat("shared-q").register("n", 1000, "t")
    assert two.repeat("shared-q").count() == 1
    one.reset("shared-q")


def test_env_url_is_used_when_no_argument(monkeypatch: pytest.MonkeyPatch, valkey_server: ValkeyServer) -> None:
    monkeypatch.setenv("EMQ_LAB_URL", valkey_server.url.replace("redis://", "valkey://"))
    lab = emq_lab.connect(clock=SimClock())
    assert f"127.0.0.1:{valkey_server.port}" in lab.describe()
    assert lab.client.ping()
    lab.close()


def test_argument_beats_env(monkeypatch: pytest.MonkeyPatch, valkey_server: ValkeyServer) -> None:
    monkeypatch.setenv("EMQ_LAB_URL", valkey_server.url)
    assert "embedded" in emq_lab.connect("embedded").describe()


def test_unknown_scheme_names_the_url() -> None:
    with pytest.raises(ValueError, match="^url:"):
        emq_lab.connect("http://127.0.0.1:1/")


def test_script_survives_a_script_flush(valkey_server: ValkeyServer) -> None:
    lab = emq_lab.connect(valkey_server.url, clock=SimClock())
    lab.repeat("flushq").register("n", 1000, "t")
    lab.client.script_flush()  # the next EVALSHA gets NOSCRIPT; Script must reload
    assert lab.repeat("flushq").register("n", 1000, "t") == "exists"
    lab.reset("flushq")
    lab.close()


def test_reset_deletes_only_its_own_queue(lab: emq_lab.Lab, queue: str) -> None:
    other = f"{queue}-other"
    for q in (queue, other):
        lab.repeat(q).register("n", 1000, "t")
        lab.pump(q).tick()
    lab.client.set("foreign:key", "keep me")
    lab.client.set(f"emq:{{{queue}x}}:repeat", "a near miss")
    assert lab.reset(queue) == 5
    assert lab.keys(queue) == []
    assert lab.client.get("foreign:key") == "keep me"
    assert lab.client.get(f"emq:{{{queue}x}}:repeat") == "a near miss"
    assert lab.repeat(other).count() == 1
    lab.client.delete("foreign:key", f"emq:{{{queue}x}}:repeat")
    lab.reset(other)


def test_trim_keeps_the_newest_jobs_and_deletes_the_rest_with_their_hashes(lab: emq_lab.Lab, queue: str) -> None:
    clock = lab.clock
    assert isinstance(clock, SimClock)
    lab.repeat(queue).register("n", 1000, "t")
    fired = []
    for _ in range(5):
        clock.advance(1000)
        fired += lab.pump(queue).tick()
    jobs = lab.jobs(queue)
    assert jobs.trim(2) == 3
    assert jobs.count() == 2
    assert [bool(jobs.get(each.job_id)) for each in fired] == [False, False, False, True, True]
    assert jobs.trim(0) == 2
    assert jobs.count() == 0
    assert not any(jobs.get(each.job_id) for each in fired)


def test_a_server_error_reads_the_same_from_a_single_call_a_batch_and_a_pipeline(lab: emq_lab.Lab, queue: str) -> None:
    # One fault, WRONGTYPE (another program wrote the registry's key), by every path to the
    # server: a script call, a batch of them (on a cluster, its own MULTI batch) with the failing
    # call second, and a plain pipeline (lab.keys). Each names the keys of the command that failed.
    k = lab.keyspace(queue)
    lab.client.set(k.registry, "not a sorted set")
    due = scripts.due(k, 0, 10)  # reads the registry, writes nothing
    enqueue = scripts.enqueue(k, "n", 0, "t")
    try:
        with pytest.raises(redis.ResponseError) as single:
            scripts.send(lab.scripts, due, lab.client)
        with pytest.raises(redis.ResponseError) as batch:
            scripts.send_all(lab.client, lab.scripts, [enqueue, due])
        with pytest.raises(redis.ResponseError) as pipeline:
            lab.keys(queue)
    finally:
        lab.client.delete(k.registry)
    where = redact(lab.client.emq_url)  # type: ignore[union-attr]
    said = f"{where}: a key of this queue ({k.registry}) holds another type than emq-lab keeps there (did another"
    assert str(single.value) == str(batch.value)
    assert str(single.value).startswith(said) and str(pipeline.value).startswith(said)
    assert "[WRONGTYPE " in str(single.value) and "pipeline" not in str(batch.value) + str(pipeline.value)
    assert lab.jobs(queue).count() == 1  # the batch's first call ran (its reply came back)
