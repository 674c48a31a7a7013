"""Valkey Cluster: three primaries on loopback. Queues spread over the primaries, every key of a
queue stays on one hash slot (no CROSSSLOT anywhere), and reset/keys scan every primary."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis
from helpers import MIN, scanned, slot
from servers import ValkeyCluster, kill

import emq_lab
from emq_lab import Outcome, SimClock
from emq_lab.keys import QueueKeys

QUEUES = [f"cq{i}" for i in range(24)]


@pytest.fixture
def cluster_lab(valkey_cluster: ValkeyCluster) -> emq_lab.Lab:
    lab = emq_lab.connect(valkey_cluster.url, clock=SimClock("2026-01-05T09:00:00Z"))
    assert isinstance(lab.client, redis.RedisCluster)
    return lab


def test_queues_spread_over_the_primaries(
    cluster_lab: emq_lab.Lab, valkey_cluster: ValkeyCluster, figure: Callable[[str, object], None]
) -> None:
    lab = cluster_lab
    try:
        for q in QUEUES:
            rep = lab.repeat(q)
            assert rep.register("daily", 15 * MIN, "t") is Outcome.REGISTERED
            assert rep.register("daily", 15 * MIN, "t") is Outcome.EXISTS
            rep.register("other:name", MIN, "t")
            assert len(lab.pump(q, slot_keyed=q.endswith("1")).tick()) == 2
            assert rep.cancel("other:name") is Outcome.CANCELLED
        ports = {lab.client.get_node_from_key(QueueKeys(q).registry).port for q in QUEUES}
        assert ports == {node.port for node in valkey_cluster.nodes}  # all three primaries hold queues
        for q in QUEUES:
            found = scanned(lab, q)
            # record, registry, two jobs, wait list (+ the id counter unless slot-keyed)
            assert len(found) == (5 if q.endswith("1") else 6)
            node = lab.client.get_node_from_key(QueueKeys(q).registry)
            assert {int(lab.client.cluster_keyslot(k)) for k in found} == {slot(QueueKeys(q).registry)}
            assert {lab.client.get_node_from_key(k).port for k in found} == {node.port}
        figure("cluster", f"{len(QUEUES)} queues over {len(ports)} primaries, 0 CROSSSLOT")
    finally:
        for q in QUEUES:
            lab.reset(q)
        lab.close()


def test_keys_and_reset_scan_every_primary(cluster_lab: emq_lab.Lab, valkey_cluster: ValkeyCluster) -> None:
    lab = cluster_lab
    try:
        for q in QUEUES:
            lab.repeat(q).register("n", MIN, "t")
        lab.client.set("foreign:{cq0}", "keep")  # same slot as cq0, not its key
        per_node: dict[int, set[str]] = {}
        for node in valkey_cluster.nodes:
            direct = redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True)
            # this test's queues only: other tests on the shared cluster leave keys of their own
            per_node[node.port] = set(direct.scan_iter(match="emq:{cq[0-9]*"))
            direct.close()
        assert sum(1 for found in per_node.values() if found) == len(valkey_cluster.nodes)
        union = set().union(*per_node.values())
        assert union == {k for q in QUEUES for k in scanned(lab, q)}
        assert sum(lab.reset(q) for q in QUEUES) == len(union) == 2 * len(QUEUES)
        assert lab.client.get("foreign:{cq0}") == "keep"
    finally:
        lab.client.delete("foreign:{cq0}")
        for q in QUEUES:
            lab.reset(q)
        lab.close()


def test_a_cross_slot_call_would_be_refused(cluster_lab: emq_lab.Lab) -> None:
    """The guard is real: keys of two queues in one script call are refused, so our calls, which
    never fail this way, really do keep each call on one hash slot."""
    lab = cluster_lab
    try:
        crossed = [QueueKeys("cq0").registry, QueueKeys("cq1").record("n")]
        assert slot(crossed[0]) != slot(crossed[1])
        with pytest.raises(redis.RedisClusterException, match="slot"):
            lab.scripts.register(keys=crossed, args=["n", 1000, "t", 0])
        assert scanned(lab, "cq0") == scanned(lab, "cq1") == []
    finally:
        lab.close()


def test_a_dead_primary_that_does_not_own_the_queue_leaves_reset_working(valkey_cluster: ValkeyCluster) -> None:
    """reset(q) and keys(q) read only q's own slot: a primary that died, owning other slots,
    does not stand in their way (a whole-server SCAN would visit it and fail). A cluster of its
    own (the session's, ``valkey_cluster``, is asked for only so a missing binary skips loudly)."""
    cluster = ValkeyCluster()
    try:
        lab = emq_lab.connect(cluster.url, clock=SimClock("2026-01-05T09:00:00Z"))
        rep = lab.repeat("survivor")
        rep.register("report", 15 * MIN, "t")
        lab.pump("survivor").tick()
        owner = lab.client.get_node_from_key(QueueKeys("survivor").registry).port
        victim = next(node for node in cluster.nodes if node.port != owner)
        kill(victim)
        assert len(lab.keys("survivor")) == 5  # the record, the registry, a job, the counter, the wait list
        assert lab.reset("survivor") == 5
        assert lab.keys("survivor") == []
        lab.close()
    finally:
        cluster.close()
