"""A reshard moves a queue's hash slot to another primary of the three-node cluster while the lab works
on it. A batch (``register_many``, a tick's enqueues and advances, a drain's, a panel's tick) and a
single call either complete or raise ``BackendUnavailable`` while the slot is on the move; once it
has moved, the next call follows it, and every later one goes straight to the new owner."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import MIN, START, slot
from servers import ValkeyCluster

import emq_classroom as classroom
import emq_lab
from emq_lab import BackendUnavailable, Outcome, SimClock
from emq_lab.scripts import cluster
from emq_lab.widgets import CrashPanel

NAMES = [f"n{i:02d}" for i in range(20)]


@pytest.fixture
def lab(valkey_cluster: ValkeyCluster) -> Iterator[emq_lab.Lab]:
    lab = emq_lab.connect(valkey_cluster.url, clock=SimClock(START))
    yield lab
    lab.close()


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "PAUSE_S", 0.02)  # a move that never ends gives up sooner


class Move:
    """The queue's hash slot, its owner and the primary it moves to (and back to, at the end)."""

    def __init__(self, cluster: ValkeyCluster, lab: emq_lab.Lab, queue: str) -> None:
        self.cluster = cluster
        self.lab = lab
        self.slot = slot(lab.keyspace(queue).registry)
        self.source = lab.client.nodes_manager.get_node_from_slot(self.slot).port
        self.target = next(node.port for node in cluster.nodes if node.port != self.source)

    def start(self, keys: int | None = None) -> None:
        assert self.cluster.move_slot(self.slot, self.target, finish=False, keys=keys) == self.source

    def finish(self) -> None:
        self.cluster.move_slot(self.slot, self.target, finish=True)

    def back(self) -> None:
        self.cluster.move_slot(self.slot, self.source, finish=True)

    def followed(self) -> bool:
        """The client's slot map names the new owner: later calls go there first (no MOVED)."""
        return bool(self.lab.client.nodes_manager.get_node_from_slot(self.slot).port == self.target)


@pytest.fixture
def move(valkey_cluster: ValkeyCluster, lab: emq_lab.Lab, queue: str) -> Iterator[Move]:
    lab.repeat(queue).register_many([(name, 15 * MIN, "t") for name in NAMES])  # all due now
    moving = Move(valkey_cluster, lab, queue)
    yield moving
    moving.finish()  # a test that failed mid-move
    lab.reset(queue)
    moving.back()  # the shared cluster as it was


def test_register_many_and_register_follow_a_reshard(lab: emq_lab.Lab, queue: str, move: Move) -> None:
    rep = lab.repeat(queue)
    move.start()
    # every key has left: a single call on them runs on the importing node (ASK, then ASKING);
    # a batch waits for the move to end, then raises BackendUnavailable, nothing written
    assert rep.register(NAMES[0], 15 * MIN, "t") is Outcome.EXISTS
    with pytest.raises(BackendUnavailable, match="moving this queue's keys"):
        rep.register_many([(name, 15 * MIN, "t") for name in NAMES])
    with pytest.raises(BackendUnavailable, match="moving this queue's keys"):
        rep.register_many([("new", 15 * MIN, "t"), (NAMES[1], 15 * MIN, "t")])
    with pytest.raises(BackendUnavailable, match="moving this queue's keys"):  # TRYAGAIN: a new record
        rep.register("new", 15 * MIN, "t")
    move.finish()
    assert rep.register_many([("new", 15 * MIN, "t"), ("newer", MIN, "t")]) == [Outcome.REGISTERED] * 2
    assert move.followed()
    assert rep.register_many([("new", 15 * MIN, "t"), ("last", MIN, "t")]) == [Outcome.EXISTS, Outcome.REGISTERED]
    assert rep.register("later", MIN, "t") is Outcome.REGISTERED
    assert rep.count() == len(NAMES) + 4


def test_a_batch_whose_keys_are_split_between_two_nodes_waits(lab: emq_lab.Lab, queue: str, move: Move) -> None:
    rep = lab.repeat(queue)
    move.start(keys=5)  # five of the slot's keys have left, the others not yet
    with pytest.raises(BackendUnavailable, match="moving this queue's keys"):
        rep.register_many([(name, 15 * MIN, "t") for name in NAMES])
    move.finish()
    outcomes = rep.register_many([(name, 15 * MIN, "t") for name in [*NAMES, "new"]])
    assert outcomes == [Outcome.EXISTS] * len(NAMES) + [Outcome.REGISTERED]
    assert move.followed()


@pytest.mark.parametrize("how", ["tick", "drain"])
def test_a_tick_and_a_drain_follow_a_reshard(lab: emq_lab.Lab, queue: str, move: Move, how: str) -> None:
    pump = lab.pump(queue, batch=8)
    fire = pump.tick if how == "tick" else pump.drain
    move.start()
    fired: list[emq_lab.Occurrence] = []
    try:
        fired = fire()
    except BackendUnavailable as exc:  # an enqueue's keys do not all exist on either node mid-move
        assert "moving this queue's keys" in str(exc)
        fired = list(exc.fired)  # type: ignore[attr-defined]
    move.finish()
    while more := pump.tick():
        fired += more
        assert move.followed()
    assert sorted(o.name for o in fired) == NAMES  # each name once, whenever it fired
    assert lab.jobs(queue).count() == len(NAMES)
    assert {ms for _, ms in lab.repeat(queue).entries()} == {lab.clock.now_ms() + 15 * MIN}
    move.back()
    lab.clock.advance(15 * MIN)  # type: ignore[attr-defined]
    assert len(fire()) == (8 if how == "tick" else len(NAMES))  # and back again: MOVED once, then followed


def test_a_panel_click_during_a_reshard_waits_and_runs_after_it(
    valkey_cluster: ValkeyCluster, lab: emq_lab.Lab, queue: str
) -> None:
    panel = CrashPanel(lab, queue)
    moving = Move(valkey_cluster, lab, queue)
    try:
        moving.start()
        panel.act(panel.tick)  # the Tick button: its enqueue and advance wait for the move to end
        assert panel.health.waiting and "moving this queue's keys" in panel.status
        moving.finish()
        assert panel.retry()
        assert "jobs per slot:\n  09:00 slot: JOB-000001 - 0 duplicate(s)" in panel.readout
        panel.act(panel.tick)
        assert not panel.health.waiting and moving.followed()
        assert "09:15 slot: JOB-000002 - 0 duplicate(s)" in panel.readout
    finally:
        panel.close()
        lab.reset(queue)
        moving.back()


def test_a_learner_may_send_a_batch_on_a_cluster(valkey_cluster: ValkeyCluster) -> None:
    """A class's ACL lets a learner's batch through: its MULTI and EXEC, and the EVALSHAs in them."""
    admin, _ = emq_lab.backend.open_client(valkey_cluster.url)
    (learner,) = classroom.create_users(admin, learners=1, prefix="reshardx", check=False)
    classroom.load_scripts(admin)
    lab = emq_lab.connect(learner.url(valkey_cluster.url), clock=SimClock(START), namespace=learner.namespace)
    try:
        assert lab.repeat("q").register_many([(name, MIN, "t") for name in NAMES]) == [Outcome.REGISTERED] * 20
        assert len(lab.pump("q").tick()) == len(NAMES)
    finally:
        lab.reset("q")
        lab.close()
        classroom.revoke_users(admin, prefix="reshardx")
        admin.close()
