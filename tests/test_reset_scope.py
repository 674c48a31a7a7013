"""reset(q) deletes only q's keys, on a server crowded with foreign keys and another queue."""

from __future__ import annotations

from collections.abc import Callable

from helpers import RoundTrips, scanned, slot

import emq_lab
from emq_lab.keys import QueueKeys

FOREIGN = 10_000


def test_reset_among_ten_thousand_foreign_keys(
    lab: emq_lab.Lab, queue: str, figure: Callable[[str, object], None]
) -> None:
    other = f"{queue}-other"
    prefix = f"foreign:{queue}:"
    client = lab.client
    # Near misses first: keys that share a prefix, a tag fragment or a glob-looking shape with q's.
    near = [
        f"emq:{{{queue}x}}:repeat",
        f"emq:{{x{queue}}}:repeat",
        f"emq:{queue}:repeat",
        f"emq:{{{queue}}}",
        f"emq:{{{queue}",
        f"emq{{{queue}}}:repeat",
        f"EMQ:{{{queue}}}:repeat",
        f"{{{queue}}}:emq:repeat",
    ]
    for start in range(0, FOREIGN, 1000):
        pipe = client.pipeline(transaction=False)
        for i in range(start, min(start + 1000, FOREIGN)):
            pipe.set(f"{prefix}{i}", i)
        pipe.execute()
    for key in near:
        client.set(key, "near miss")
    for q in (queue, other):
        rep = lab.repeat(q)
        for i in range(20):
            rep.register(f"n{i}", 1000, "t")
        lab.pump(q).tick()
    own = lab.keys(queue)
    assert len(own) == 20 + 1 + 20 + 1 + 1  # records, registry, jobs, counter, wait list
    before_other = lab.keys(other)

    assert lab.reset(queue) == len(own)

    assert lab.keys(queue) == [] and scanned(lab, queue) == []  # nothing of q left anywhere
    assert lab.keys(other) == before_other == scanned(lab, other)
    assert lab.repeat(other).count() == 20
    assert all(client.get(key) == "near miss" for key in near)
    survivors = 0
    for start in range(0, FOREIGN, 1000):
        pipe = client.pipeline(transaction=False)
        for i in range(start, min(start + 1000, FOREIGN)):
            pipe.get(f"{prefix}{i}")
        survivors += sum(value == str(i) for i, value in zip(range(start, FOREIGN), pipe.execute(), strict=False))
    assert survivors == FOREIGN
    assert all(slot(k) == slot(QueueKeys(other).registry) for k in before_other)
    figure("scoped reset: foreign keys kept / own keys deleted", f"{FOREIGN + len(near)} / {len(own)}")
    # Clean up what this test made: the other queue and the foreign keys (never FLUSHDB).
    lab.reset(other)
    for start in range(0, FOREIGN, 1000):
        client.unlink(*[f"{prefix}{i}" for i in range(start, min(start + 1000, FOREIGN))])
    client.unlink(*near)


def test_keys_reads_the_queues_own_structures_in_two_round_trips(round_trips: RoundTrips, queue: str) -> None:
    lab = round_trips.lab
    lab.repeat(queue).register_many([(f"n{i}", 1000, "t") for i in range(20)])
    round_trips.start()
    assert len(lab.keys(queue)) == 20 + 1  # records, registry
    assert round_trips.count == 2  # no scan of the server, however many keys it holds


def test_reset_all_deletes_each_queue_and_nothing_else(lab: emq_lab.Lab, queue: str) -> None:
    others = [f"{queue}-a", f"{queue}-b"]
    kept = f"{queue}-kept"
    for q in [*others, kept]:
        lab.repeat(q).register_many([("x", 60_000, "t"), ("y", 60_000, "t")])
        lab.pump(q).tick()
    before = lab.keys(kept)
    expected = sum(len(lab.keys(q)) for q in others)
    assert lab.reset_all(others) == expected
    assert all(lab.keys(q) == [] for q in others)
    assert lab.keys(kept) == before
    assert lab.reset_all([]) == 0
    lab.reset(kept)
