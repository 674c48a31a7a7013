"""register_many on its batch script: the same answers and the same keyspace as register in a
loop, over several calls of one round trip; a learner's register script still answers; the raw
script refuses malformed calls and writes nothing. On every backend."""

from __future__ import annotations

import pytest
import redis
from helpers import MIN, RoundTrips

import emq_lab
from emq_lab import Outcome, scripts
from emq_lab.exercises import with_scripts


def keyspace(lab: emq_lab.Lab, queue: str) -> tuple[list[tuple[str, int]], dict[str, dict[str, str]]]:
    rep = lab.repeat(queue)
    return rep.entries(), {name: rep.record(name) for name, _ in rep.entries()}


def test_register_many_answers_as_register_in_a_loop(lab: emq_lab.Lab, queue: str) -> None:
    # More names than one script call takes, repeats inside a call and across calls, a change of
    # period, template or delay in the middle (a new call), and names registered before.
    names = [f"n{i:04d}" for i in range(scripts.MANY + 130)]
    items: list[tuple[str, int, str] | tuple[str, int, str, int]] = [(n, 15 * MIN, "t") for n in names]
    items[7] = (names[3], 15 * MIN, "t")  # twice in the first call
    items[scripts.MANY + 5] = (names[10], 15 * MIN, "t")  # again in the second call
    items[40] = (names[40], 5 * MIN, "other")  # its own call
    items[41] = (names[41], 15 * MIN, "t", 2 * MIN)
    twin = f"{queue}-loop"
    for target in (queue, twin):
        lab.repeat(target).register(names[100], MIN, "before")
    try:
        loop = lab.repeat(twin)
        expected = [loop.register(*item) for item in items]
        got = lab.repeat(queue).register_many(items)
        assert got == expected
        assert got.count(Outcome.EXISTS) == 3
        assert keyspace(lab, queue) == keyspace(lab, twin)
        assert lab.repeat(queue).register_many(items) == [Outcome.EXISTS] * len(items)  # boot #2
        assert keyspace(lab, queue) == keyspace(lab, twin)
    finally:
        lab.reset(twin)


def test_register_many_is_one_pipeline(round_trips: RoundTrips, queue: str) -> None:
    items = [(f"n{i:04d}", 15 * MIN, "t") for i in range(3 * scripts.MANY)]
    rep = round_trips.lab.repeat(queue)
    rep.register_many(items[:1])  # the first batch of a lab loads the scripts
    for expected in ([Outcome.REGISTERED] * len(items), [Outcome.EXISTS] * len(items)):
        round_trips.start()
        assert rep.register_many(items)[1:] == expected[1:]
        assert round_trips.count == 2  # SCRIPT EXISTS (redis-py's, before a pipeline), the pipeline


def test_a_replaced_register_script_answers_for_register_many(lab: emq_lab.Lab, queue: str) -> None:
    # A learner's script that never writes and always answers 0: register_many must run it.
    learner = "return 0"
    rep = with_scripts(lab, register=learner).repeat(queue)
    assert rep.register_many([("a", MIN, "t"), ("b", MIN, "t")]) == [Outcome.EXISTS, Outcome.EXISTS]
    assert lab.keys(queue) == []


def raw(lab: emq_lab.Lab, queue: str, names: list[str], args: list[object]) -> object:
    k = lab.keyspace(queue)
    keys = [k.registry, *(k.record(name) for name in names)]
    return lab.scripts.register_many(keys=keys, args=args)


@pytest.mark.parametrize(
    ("names", "args", "message"),
    [
        (["a", "b"], [MIN, "t", 0, "a", "c"], "must be the name whose record"),
        (["a"], [MIN, "t", 0], "one name per record"),
        ([], [MIN, "t", 0], "one name per record"),
        (["a"], [0, "t", 0, "a"], "every_ms must be an integer"),
        (["a"], [315360000001, "t", 0, "a"], "every_ms must be an integer"),
        (["a"], [MIN, "t", "soon", "a"], "first_ms must be an integer"),
    ],
)
def test_the_batch_script_refuses_a_malformed_call_and_writes_nothing(
    lab: emq_lab.Lab, queue: str, names: list[str], args: list[object], message: str
) -> None:
    with pytest.raises(redis.ResponseError, match=message):
        raw(lab, queue, names, args)
    assert lab.keys(queue) == []


def test_the_batch_script_answers_one_integer_per_name(lab: emq_lab.Lab, queue: str) -> None:
    assert raw(lab, queue, ["a", "b", "a"], [MIN, "t", 0, "a", "b", "a"]) == [1, 1, 0]
    assert raw(lab, queue, ["b", "c"], [MIN, "t", 0, "b", "c"]) == [0, 1]
