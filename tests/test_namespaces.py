"""Two labs with different namespaces on one server never see, reset or fire each other's data.

Both learners use the same queue name and the same registration names, which is what a class does.
The explicit test walks each verb once; the interleaving test runs random sequences of the model
test's operations on two namespaces and checks that each learner sees exactly what it would see
alone on the server (a replay of its own operations in a fresh namespace).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from helpers import MIN, START, slot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import emq_lab
from emq_lab import Outcome, SimClock, keys
from emq_lab.namespace import ENV_NAMESPACE

_runs = itertools.count(1)


@pytest.fixture
def pair(backend_url: str, queue: str) -> Iterator[tuple[emq_lab.Lab, emq_lab.Lab, emq_lab.Lab]]:
    """Alice's and Bob's labs and an un-namespaced one, on one server and one clock."""
    clock = SimClock(START)
    run = next(_runs)
    labs = (
        emq_lab.connect(backend_url, clock=clock, namespace=f"alice-{run}"),
        emq_lab.connect(backend_url, clock=clock, namespace=f"bob-{run}"),
        emq_lab.connect(backend_url, clock=clock),
    )
    yield labs
    for lab in labs:
        lab.reset(queue)
        lab.close()


def test_each_verb_stays_in_its_namespace(pair: tuple[emq_lab.Lab, ...], queue: str) -> None:
    alice, bob, plain = pair
    a, b = alice.repeat(queue), bob.repeat(queue)

    assert a.register("digest", MIN, "alice's") is Outcome.REGISTERED
    # Bob's register of the same name is a new registration, not "exists".
    assert b.register("digest", 5 * MIN, "bob's") is Outcome.REGISTERED
    assert a.record("digest") == {"every_ms": str(MIN), "template": "alice's"}
    assert b.record("digest") == {"every_ms": str(5 * MIN), "template": "bob's"}
    assert a.register("only-alice", MIN, "t") is Outcome.REGISTERED
    assert b.cancel("only-alice") is Outcome.ABSENT
    assert a.count() == 2 and b.count() == 1 and plain.repeat(queue).count() == 0

    alice.clock.advance(MIN)  # one clock: both are due now
    assert {d.name for d in b.due()} == {"digest"}
    fired = bob.pump(queue).tick()
    assert [(o.name, o.job_id) for o in fired] == [("digest", "JOB-000001")]
    assert bob.jobs(queue).browse() == ["JOB-000001"] and alice.jobs(queue).browse() == []
    assert {d.name for d in a.due()} == {"digest", "only-alice"}  # Bob's tick fired none of Alice's
    assert [o.job_id for o in alice.pump(queue).drain()] == ["JOB-000001", "JOB-000002"]

    a_keys, b_keys = alice.keys(queue), bob.keys(queue)
    assert a_keys and b_keys and not set(a_keys) & set(b_keys)
    assert all(k.startswith(keys.namespace_pattern(alice.namespace or "")[:-1]) for k in a_keys)
    assert all(slot(k) == slot(alice.keyspace(queue).registry) for k in a_keys)
    assert plain.keys(queue) == []

    assert bob.reset(queue) == len(b_keys)
    assert alice.keys(queue) == a_keys
    assert a.entries() and b.count() == 0
    assert plain.reset(queue) == 0 and alice.keys(queue) == a_keys


OPS = st.lists(
    st.tuples(
        st.sampled_from(("alice", "bob")),
        st.sampled_from(("register", "cancel", "due", "tick", "drain", "jump", "reset", "keys")),
        st.sampled_from(("n0", "n1", "a:b")),
        st.sampled_from((1000, MIN, 15 * MIN)),
    ),
    min_size=1,
    max_size=25,
)


def _apply(lab: emq_lab.Lab, queue: str, op: str, name: str, every: int) -> object:
    """One operation and what the learner observes of it (key names without the namespace)."""
    if op == "register":
        return lab.repeat(queue).register(name, every, f"{name}/{every}")
    if op == "cancel":
        return lab.repeat(queue).cancel(name)
    if op == "due":
        return lab.repeat(queue).due()
    if op == "tick":
        return lab.pump(queue).tick()
    if op == "drain":
        return lab.pump(queue).drain()
    if op == "reset":
        return lab.reset(queue)
    if op == "keys":
        tag = lab.keyspace(queue).tag
        return [k.removeprefix(tag) for k in lab.keys(queue)]
    raise AssertionError(op)


def _state(lab: emq_lab.Lab, queue: str) -> object:
    tag = lab.keyspace(queue).tag
    return (
        lab.repeat(queue).entries(),
        lab.jobs(queue).browse(limit=1000),
        [k.removeprefix(tag) for k in lab.keys(queue)],
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_interleaved_learners_see_what_they_would_see_alone(backend_url: str, queue: str, ops: list) -> None:
    run = next(_runs)
    together = SimClock(START)
    labs = {who: emq_lab.connect(backend_url, clock=together, namespace=f"{who}-{run}") for who in ("alice", "bob")}
    seen: dict[str, list[object]] = {"alice": [], "bob": []}
    try:
        for who, op, name, every in ops:
            if op == "jump":
                together.advance(every)
            else:
                seen[who].append(_apply(labs[who], queue, op, name, every))
        for who, lab in labs.items():
            alone_clock = SimClock(START)
            alone = emq_lab.connect(backend_url, clock=alone_clock, namespace=f"{who}-alone-{run}")
            try:
                replay = []
                for by, op, name, every in ops:
                    if op == "jump":
                        alone_clock.advance(every)
                    elif by == who:
                        replay.append(_apply(alone, queue, op, name, every))
                assert seen[who] == replay
                assert _state(lab, queue) == _state(alone, queue)
            finally:
                alone.reset(queue)
                alone.close()
    finally:
        for lab in labs.values():
            lab.reset(queue)
            lab.close()


def test_namespace_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_NAMESPACE, "carol")
    lab = emq_lab.connect("embedded", clock=SimClock(START))
    assert lab.namespace == "carol" and "namespace carol" in lab.describe()
    assert lab.keyspace("q").registry == "emq:ns:{carol:q}:repeat"
    # The argument wins over the environment; an empty variable means no namespace.
    assert emq_lab.connect("embedded", namespace="dave").namespace == "dave"
    monkeypatch.setenv(ENV_NAMESPACE, "  ")
    assert emq_lab.connect("embedded").namespace is None
    monkeypatch.setenv(ENV_NAMESPACE, "no:colons")
    with pytest.raises(ValueError, match="namespace"):
        emq_lab.connect("embedded")


def test_auto_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    from emq_lab import namespace

    monkeypatch.setenv(namespace.ENV_HUB_USER, "jane.doe@example.org")
    assert namespace.resolve_namespace("auto") == "jane.doe-example.org"
    monkeypatch.delenv(namespace.ENV_HUB_USER)
    monkeypatch.setattr(namespace.getpass, "getuser", lambda: "Zoë Smith")
    monkeypatch.setattr(namespace.socket, "gethostname", lambda: "lab-pc.example.org")
    assert namespace.resolve_namespace("auto") == "Zo-Smith-lab-pc"
    monkeypatch.setattr(namespace.getpass, "getuser", lambda: "x" * 80)
    assert namespace.resolve_namespace("auto") == "x" * 64
    monkeypatch.setenv(ENV_NAMESPACE, "auto")
    assert emq_lab.connect("embedded").namespace == "x" * 64


def test_the_search_globs_match_the_namespaces_they_name(lab: emq_lab.Lab, queue: str) -> None:
    """The instructor's search halves the class by the character after a namespace's head
    (emq_classroom/search.py): each glob keys.py gives it matches the namespaces it names, on the server."""
    head = f"{queue}x"  # namespaces no other test makes
    spaces = [head, f"{head}-", f"{head}0", f"{head}4", f"{head}a", f"{head}ab", f"{head}^", f"{head}]", f"{head}\\"]
    made = [keys.QueueKeys("q", ns).wait for ns in spaces]
    for key in made:
        lab.client.set(key, 1)  # SCAN matches names, whatever a key holds

    def matched(pattern: str) -> set[str]:
        return {keys.namespace_of(key) or "" for key in lab.client.scan_iter(match=pattern, count=1000)}

    try:
        assert matched(keys.namespaces_glob(head, ["-", "0"])) == {f"{head}-", f"{head}0"}  # "-" is no range
        assert matched(keys.namespaces_glob(head, [":", "a"])) == {head, f"{head}a", f"{head}ab"}  # ":": head itself
        assert matched(keys.namespaces_glob(head, ["^", "]", "\\"])) == {f"{head}^", f"{head}]", f"{head}\\"}
        unknown = matched(keys.namespaces_glob(head, [":", "-", "0", "a", "^", "]", "\\"], negate=True))
        assert unknown == {f"{head}4"}
        assert not {key for key in lab.client.scan_iter(match=keys.no_key_glob(), count=1000)}
    finally:
        for key in made:
            lab.client.delete(key)
