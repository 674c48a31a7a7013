"""Pure parts: the key builders, the simulated clock and how a time is written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from helpers import slot

from emq_lab import SimClock, keys
from emq_lab.clock import duration, hhmm, hhmmss, moment, utc
from emq_lab.keys import QueueKeys


def test_every_key_builder_carries_the_tag() -> None:
    k = QueueKeys("q")
    built = [k.registry, k.record("n"), k.counter, k.job("J"), k.wait]
    assert all(k.startswith("emq:{q}:") for k in built)
    assert len(set(built)) == len(built)


def test_a_namespace_goes_inside_the_tag_and_never_meets_another() -> None:
    plain, alice, bob = keys.QueueKeys("reports"), keys.QueueKeys("reports", "alice"), keys.QueueKeys("reports", "bob")
    assert plain.registry == "emq:{reports}:repeat"  # no namespace: the keys of the public contract
    assert alice.registry == "emq:ns:{alice:reports}:repeat"
    for k in (alice, bob):
        built = [k.registry, k.record("n"), k.counter, k.job("J"), k.wait, k.delayed]
        assert {slot(key) for key in built} == {slot(k.tag)}
        assert all(key.startswith(keys.namespace_pattern(k.namespace or "")[:-1]) for key in built)
    assert slot(alice.registry) != slot(bob.registry)  # a class spreads over slots
    # A queue named like a namespaced one, outside any namespace, still has keys of its own.
    assert not keys.QueueKeys("alice:reports").registry.startswith(keys.namespace_pattern("alice")[:-1])


def test_simclock_moves_only_forward() -> None:
    clock = SimClock("2026-01-05T09:00:00Z")
    assert hhmm(clock.now_ms()) == "09:00"
    clock.advance(minutes=15)
    clock.advance(seconds=30)
    clock.advance(250)
    assert clock.now_ms() - clock.start_ms == 15 * 60_000 + 30_000 + 250
    with pytest.raises(ValueError, match="ms"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="instant"):
        clock.set("2026-01-05T08:00:00Z")


def test_simclock_rejects_a_bad_start_and_a_bad_instant_naming_each() -> None:
    with pytest.raises(ValueError, match='^start: "nine o\'clock" is not an ISO-8601 instant'):
        SimClock("nine o'clock")
    with pytest.raises(ValueError, match="^instant: 'ten' is not an ISO-8601 instant"):
        SimClock().set("ten")


def test_simclock_refuses_an_instant_past_the_year_9999_or_a_huge_int_naming_its_size() -> None:
    with pytest.raises(ValueError, match=r"^start: -1 is outside the instants a SimClock keeps \(1970-01-01 to 9999"):
        SimClock(-1)
    with pytest.raises(ValueError, match="^instant: an int of 14001 bits is outside"):
        SimClock().set(2**14000)  # str() of it would be refused: more than 4,300 digits
    clock = SimClock("9999-12-31T23:59:00Z")
    with pytest.raises(ValueError, match="^ms: .* is outside the instants a SimClock keeps"):
        clock.advance(minutes=1)
    assert hhmm(clock.now_ms()) == "23:59"


NINE = SimClock("2026-01-05T09:00:00Z").start_ms


@pytest.mark.parametrize(
    ("ms", "short", "seconds", "exact"),
    [
        (NINE, "09:00", "09:00:00", "09:00"),
        (NINE + 15 * 60_000 + 30_000, "09:15", "09:15:30", "09:15:30"),
        (NINE + 15 * 60_000 + 1, "09:15", "09:15:00", "09:15:00.001"),  # an off-by-one shows
        (NINE + 24 * 3_600_000, "09:00", "09:00:00", "2026-01-06 09:00"),  # a day later reads as one
    ],
)
def test_an_instant_is_written_one_way_per_precision(ms: int, short: str, seconds: str, exact: str) -> None:
    assert (hhmm(ms), hhmmss(ms), moment(ms, day_ms=NINE)) == (short, seconds, exact)
    assert moment(ms) == exact.split(" ")[-1]  # no day to compare with: the time alone
    assert utc(ms) == datetime(2026, 1, 5, 9, tzinfo=UTC) + timedelta(milliseconds=ms - NINE)


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0 s"),
        (15 * 60_000, "15 min"),
        (90 * 60_000, "90 min"),  # the course counts periods and drift in minutes, never hours
        (90_000, "1 min 30 s"),
        (50_000, "50 s"),
        (1_500, "1.500 s"),
        (1, "0.001 s"),
        (-5 * 60_000, "-5 min"),
    ],
)
def test_a_span_of_time_is_written_in_minutes_and_seconds(ms: int, text: str) -> None:
    assert duration(ms) == text
