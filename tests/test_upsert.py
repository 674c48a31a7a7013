"""The upsert dive's strategies, each a real Lua script, on both backends."""

from __future__ import annotations

import pytest
from helpers import MIN, snapshot

import emq_lab
from emq_lab.dives.upsert import Schedule, Service, Strategy, code_line, lit_lines, tally
from emq_lab.keys import QueueKeys
from emq_lab.scripts import source

EXPECTED_SIZES = {
    Strategy.GUARD: [1, 1, 1, 1, 1],
    Strategy.NAIVE: [1, 2, 3, 4, 5],
    Strategy.UPSERT: [1, 1, 1, 1, 1],
}


def zcard(lab: emq_lab.Lab, queue: str) -> int:
    return int(lab.client.zcard(QueueKeys(queue).registry))


@pytest.mark.parametrize("strategy", list(Strategy))
def test_registry_size_after_boots_one_to_five(lab: emq_lab.Lab, queue: str, strategy: Strategy) -> None:
    service = Service(lab, queue, strategy=strategy)
    sizes = []
    for _ in range(5):
        boot = service.boot()
        sizes.append(zcard(lab, queue))
        assert boot.size == sizes[-1]
    assert sizes == EXPECTED_SIZES[strategy]


@pytest.mark.parametrize(
    ("strategy", "outcomes", "raws"),
    [
        (Strategy.GUARD, ["{:ok, :registered}"] + ["{:ok, :exists}"] * 4, [1, 0, 0, 0, 0]),
        (Strategy.NAIVE, ["{:ok, :registered}"] * 5, [1, 1, 1, 1, 1]),
        (Strategy.UPSERT, ["{:ok, :registered}"] + ["{:ok, :updated}"] * 4, [1, 0, 0, 0, 0]),
    ],
)
def test_outcomes_and_raw_replies(
    lab: emq_lab.Lab, queue: str, strategy: Strategy, outcomes: list[str], raws: list[int]
) -> None:
    service = Service(lab, queue, strategy=strategy)
    boots = [service.boot() for _ in range(5)]
    assert [b.tuple for b in boots] == outcomes
    assert [b.raw for b in boots] == raws
    assert [b.number for b in boots] == [1, 2, 3, 4, 5]


def test_guard_lights_probe_and_writes_then_probe_and_early_return(lab: emq_lab.Lab, queue: str) -> None:
    service = Service(lab, queue)
    first, second = service.boot(), service.boot()
    assert first.lit_text == (
        "if redis.call('EXISTS', record) == 1 then",
        "redis.call('HSET', record, 'every_ms', every_ms, 'template', template)",
        "redis.call('ZADD', registry, first_ms, name)",
        "return 1",
    )
    assert second.lit_text == ("if redis.call('EXISTS', record) == 1 then", "return 0")
    lines = source("register").splitlines()
    for boot in (first, second):
        assert tuple(lines[n - 1].strip() for n in boot.lit) == boot.lit_text
    assert second.lit[1] == second.lit[0] + 1  # the early return sits right under the probe


def test_guard_static_verdicts(lab: emq_lab.Lab, queue: str) -> None:
    service = Service(lab, queue)
    first, second = service.boot(), service.boot()
    assert first.before.record == () and second.before.record != ()
    assert first.verdict == "boot #1 → record absent, HSET + ZADD, {:ok, :registered}, registry size 1"
    assert second.verdict == "boot #2 → EXISTS = 1, script returns 0, {:ok, :exists}, registry size still 1"


def test_guard_second_boot_writes_nothing(lab: emq_lab.Lab, queue: str) -> None:
    service = Service(lab, queue)
    service.boot()
    before = snapshot(lab, queue)
    service.boot()
    assert snapshot(lab, queue) == before
    assert lab.client.exists(QueueKeys(queue).delayed) == 0


def test_naive_appends_a_row_and_an_occurrence_per_boot(lab: emq_lab.Lab, queue: str) -> None:
    service = Service(lab, queue, strategy="naive")
    first, second = service.boot(), service.boot()
    assert second.verdict == "boot #2 → no probe, HSET + ZADD appends a row, {:ok, :registered}, registry size 2"
    assert "EXISTS" not in " ".join(second.lit_text) and "ZSCORE" not in " ".join(second.lit_text)
    rows = lab.client.zrange(QueueKeys(queue).registry, 0, -1, withscores=True)
    runs = [first.at_ms + 15 * MIN, second.at_ms + 15 * MIN]
    assert [int(score) for _, score in rows] == runs
    pending = lab.client.zrange(QueueKeys(queue).delayed, 0, -1)
    assert pending == [f"repeat:digest:{ms}" for ms in runs]  # two future runs: the double fire


def test_upsert_removes_the_stale_occurrence_and_keeps_one_row(lab: emq_lab.Lab, queue: str) -> None:
    service = Service(lab, queue, strategy="upsert")
    first = service.boot()
    stale = lab.client.zrange(QueueKeys(queue).delayed, 0, -1)
    second = service.boot()
    rows = lab.client.zrange(QueueKeys(queue).registry, 0, -1, withscores=True)
    assert [(m, int(s)) for m, s in rows] == [("digest", second.at_ms + 15 * MIN)]
    pending = lab.client.zrange(QueueKeys(queue).delayed, 0, -1)
    assert pending == [f"repeat:digest:{second.at_ms + 15 * MIN}"]
    assert stale == [f"repeat:digest:{first.at_ms + 15 * MIN}"] and stale[0] not in pending
    texts = " ".join(second.lit_text)
    assert "ZSCORE" in texts and "ZREM" in texts and second.lit_text[-1] == "return 0"
    assert "ZREM" not in " ".join(first.lit_text) and first.lit_text[-1] == "return 1"


def test_deploy_day_guard_keeps_the_old_period_upsert_applies_the_new(lab: emq_lab.Lab, queue: str) -> None:
    record = QueueKeys(queue).record("digest")
    guard = Service(lab, queue)
    guard.boot()
    old_rows = lab.client.zrange(QueueKeys(queue).registry, 0, -1, withscores=True)
    assert guard.boot(every_ms=30 * MIN).tuple == "{:ok, :exists}"
    assert lab.client.hget(record, "every_ms") == str(15 * MIN)
    assert lab.client.zrange(QueueKeys(queue).registry, 0, -1, withscores=True) == old_rows

    guard.use("upsert")
    guard.boot()
    second = guard.boot(every_ms=30 * MIN)
    assert second.tuple == "{:ok, :updated}"
    assert lab.client.hget(record, "every_ms") == str(30 * MIN)
    assert int(lab.client.zscore(QueueKeys(queue).registry, "digest")) == second.at_ms + 30 * MIN


def test_boots_are_a_restart_apart_and_leave_the_lab_clock_alone(lab: emq_lab.Lab, queue: str) -> None:
    start = lab.clock.now_ms()
    service = Service(lab, queue)
    assert service.boot_until(3).at_ms == start + 10 * MIN
    assert [b.at_ms for b in service.history] == [start, start + 5 * MIN, start + 10 * MIN]
    assert service.boot_until(2) is service.history[1]  # an earlier boot is not re-run
    assert len(service.history) == 3
    assert lab.clock.now_ms() == start


def test_use_and_reset_start_over_on_an_empty_queue(lab: emq_lab.Lab, queue: str) -> None:
    service = Service(lab, queue, strategy="naive")
    service.boot_until(3)
    service.use("guard")
    assert lab.keys(queue) == [] and service.history == []
    assert service.boot().tuple == "{:ok, :registered}"


def test_tally_compares_strategies_and_empties_its_queue(lab: emq_lab.Lab, queue: str) -> None:
    start = lab.clock.now_ms()
    counts = tally(lab, queue, 7)
    assert {s: c.size for s, c in counts.items()} == {Strategy.GUARD: 1, Strategy.NAIVE: 7, Strategy.UPSERT: 1}
    assert {s: len(c.pending) for s, c in counts.items()} == {Strategy.GUARD: 0, Strategy.NAIVE: 7, Strategy.UPSERT: 1}
    assert lab.keys(queue) == []
    assert lab.clock.now_ms() == start


def test_lit_lines_follow_the_source_not_fixed_numbers() -> None:
    text = source("contrast/upsert")
    assert code_line(text, "redis.call('ZSCORE'") in lit_lines("upsert", 0)
    assert code_line(text, "redis.call('ZREM'") not in lit_lines("upsert", 1)
    with pytest.raises(ValueError, match="never returns"):
        lit_lines("naive", 0)
    with pytest.raises(ValueError, match="exactly one"):
        code_line(text, "redis.call('ZADD'")  # two ZADDs: ambiguous
    with pytest.raises(ValueError, match="exactly one"):
        code_line(text, "KEYS[1]  registry")  # only in the header comment


def test_inputs_are_checked_before_any_write(lab: emq_lab.Lab, queue: str) -> None:
    with pytest.raises(ValueError, match="name"):
        Schedule(name="bad{name}")
    with pytest.raises(ValueError, match="every_ms"):
        Schedule(every_ms=0)
    with pytest.raises(ValueError, match="queue"):
        Service(lab, "a*b")
    service = Service(lab, queue)
    with pytest.raises(ValueError, match="every_ms"):
        service.boot_until(1, every_ms=-5)
    with pytest.raises(ValueError, match="boot"):
        service.boot_until(0)
    assert lab.keys(queue) == []
