"""The boot storm of notebook 01's "what 'writes nothing' is worth": boot #2 of many names
writes nothing, the write counts it prints are what the server counts, and its text is the same
on every backend."""

from __future__ import annotations

from typing import Any

import pytest
from redis.cluster import RedisCluster

import emq_lab
from emq_lab.dives.storm import WRITES_PER_REGISTRATION, boot_storm

NAMES = 600


def server_changes(client: Any) -> int | None:
    """INFO's rdb_changes_since_last_save, summed over a cluster's primaries; None on fakeredis."""
    if isinstance(client, RedisCluster):
        found = client.info("persistence", target_nodes=RedisCluster.PRIMARIES)
        return sum(int(info["rdb_changes_since_last_save"]) for info in found.values())
    try:
        return int(client.info("persistence")["rdb_changes_since_last_save"])
    except Exception:  # fakeredis has no INFO
        return None


def test_boot_two_of_a_storm_answers_exists_for_every_name_and_writes_nothing(lab: emq_lab.Lab, queue: str) -> None:
    first, second = boot_storm(lab, queue, names=NAMES).boots
    assert (first.registered, first.exists, first.writes) == (NAMES, 0, NAMES * WRITES_PER_REGISTRATION)
    assert (second.registered, second.exists, second.writes) == (0, NAMES, 0)
    assert lab.repeat(queue).count() == NAMES
    assert len(lab.keys(queue)) == NAMES + 1  # the registry and one record per name


def test_the_storm_counts_writes_as_the_server_does(lab: emq_lab.Lab, queue: str) -> None:
    before = server_changes(lab.client)
    if before is None:
        pytest.skip("the embedded fakeredis keeps no change counter (no INFO)")
    result = boot_storm(lab, queue, names=NAMES)
    after_two_boots = server_changes(lab.client)
    assert after_two_boots is not None
    assert after_two_boots - before == sum(boot.writes for boot in result.boots)
    rep = lab.repeat(queue)
    third = rep.register_many([(name, 15 * 60_000, "t") for name, _ in rep.entries()])  # boot #3, by hand
    assert set(third) == {emq_lab.Outcome.EXISTS}
    assert server_changes(lab.client) == after_two_boots


def test_the_storm_reads_the_same_on_every_backend(lab: emq_lab.Lab, queue: str) -> None:
    text = str(boot_storm(lab, queue, names=1_000))
    assert text.splitlines() == [
        "boot storm: 1,000 names, each boot one register_many call",
        "  boot #1:   1,000 registered       0 exists  ->   3,000 server writes",
        "  boot #2:       0 registered   1,000 exists  ->       0 server writes",
    ]


@pytest.mark.parametrize("names", [0, -1, 100_001, True, 2.0, "10"])
def test_a_storm_of_a_bad_size_is_refused_before_any_write(queue: str, names: object) -> None:
    lab = emq_lab.connect("embedded", clock=emq_lab.SimClock("2026-01-05T09:00:00Z"))
    with pytest.raises(ValueError, match="names: expected an int from 1 to 100,000"):
        boot_storm(lab, queue, names=names)  # type: ignore[arg-type]
    assert lab.keys(queue) == []
