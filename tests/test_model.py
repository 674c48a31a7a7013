"""Model-based test: random interleavings of boots, re-registrations, cancels, out-of-band DELs,
pump ticks, clock jumps and pump crashes, checked after every step against a plain-Python model.

The model is a dict of live registrations, a dict of dangling registry members (record deleted
behind the package's back), the set of job ids on the wait list and how many times each slot
``(name, slot_ms)`` was produced. ``pytest --deep`` runs thousands of examples instead of hundreds.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from helpers import MIN, START
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

import emq_lab
from emq_lab import Occurrence, Outcome, SimClock
from emq_lab.dives.crash import PumpCrash, crash_after_enqueue
from emq_lab.keys import QueueKeys

NAMES = ("daily-report", "a:b", "x y", "ü-name", "new\nline", "n0", "n1", "z")
PERIODS = (1, 7, 1000, MIN, 15 * MIN)
JUMPS = st.one_of(st.just(0), st.sampled_from(PERIODS), st.integers(1, 4 * 15 * MIN))
_queues = itertools.count(1)


def template_of(name: str, every_ms: int) -> str:
    return f'{{"name": {name!r}, "every_ms": {every_ms}}}'


@dataclass
class Reg:
    every_ms: int
    template: str
    next_ms: int


@dataclass
class Model:
    live: dict[str, Reg] = field(default_factory=dict)
    dangling: dict[str, int] = field(default_factory=dict)  # member -> score, record gone
    job_ids: set[str] = field(default_factory=set)
    counter: int = 0  # the queue's id counter (fresh ids)
    slots: Counter[tuple[str, int]] = field(default_factory=Counter)

    def scores(self) -> dict[str, int]:
        return {**self.dangling, **{name: reg.next_ms for name, reg in self.live.items()}}


@dataclass
class Tally:
    """Figures across every example of one run (for the summary and the README)."""

    examples: int = 0
    steps: int = 0
    ticks: int = 0
    crashes: int = 0
    occurrences: int = 0
    slots: int = 0
    lost: int = 0
    moved: int = 0
    duplicated_slot_keyed: int = 0
    duplicated_fresh: int = 0


class RegistryMachine(RuleBasedStateMachine):
    lab: emq_lab.Lab
    tally: Tally

    def __init__(self) -> None:
        super().__init__()
        self.queue = f"model{next(_queues)}"
        self.lab.clock = self.clock = SimClock(START)
        self.rep = self.lab.repeat(self.queue)
        self.model = Model()
        self.slot_keyed = False
        self.tally.examples += 1

    @initialize(slot_keyed=st.booleans())
    def choose_mode(self, slot_keyed: bool) -> None:
        self.slot_keyed = slot_keyed

    # --- rules ------------------------------------------------------------------------------

    def _register(self, name: str, every_ms: int, first_in_ms: int) -> None:
        template = template_of(name, every_ms)
        outcome = self.rep.register(name, every_ms, template, first_in_ms=first_in_ms)
        if name in self.model.live:
            assert outcome is Outcome.EXISTS
        else:
            assert outcome is Outcome.REGISTERED
            self.model.dangling.pop(name, None)
            self.model.live[name] = Reg(every_ms, template, self.clock.now_ms() + first_in_ms)

    @rule(
        names=st.lists(st.sampled_from(NAMES), min_size=1, max_size=len(NAMES), unique=True),
        every_ms=st.sampled_from(PERIODS),
        first_in_ms=st.sampled_from((0, 0, 1, 1000, MIN)),
    )
    def boot(self, names: list[str], every_ms: int, first_in_ms: int) -> None:
        for name in names:
            self._register(name, every_ms, first_in_ms)

    @rule(name=st.sampled_from(NAMES), change=st.integers(1, 15 * MIN))
    def register_with_changed_period(self, name: str, change: int) -> None:
        old = self.model.live.get(name)
        self._register(name, (old.every_ms if old else 1000) + change, 0)

    @rule(name=st.sampled_from(NAMES))
    def cancel(self, name: str) -> None:
        known = name in self.model.live or name in self.model.dangling
        assert self.rep.cancel(name) is (Outcome.CANCELLED if known else Outcome.ABSENT)
        self.model.live.pop(name, None)
        self.model.dangling.pop(name, None)

    @rule(name=st.sampled_from(NAMES))
    def delete_record_out_of_band(self, name: str) -> None:
        self.lab.client.delete(QueueKeys(self.queue).record(name))
        reg = self.model.live.pop(name, None)
        if reg is not None:
            self.model.dangling[name] = reg.next_ms

    @rule(ms=JUMPS)
    def jump_clock(self, ms: int) -> None:
        self.clock.advance(ms)

    @rule()
    def tick(self) -> None:
        pump = self.lab.pump(self.queue, slot_keyed=self.slot_keyed)
        due_slots, expected, advanced = self._expect_tick(crash=False)
        result = pump.begin().run()
        assert result.fired == expected
        assert sorted(result.advanced) == sorted(advanced)
        # No loss: every slot that was due at this tick has been produced at least once.
        lost = [slot for slot in due_slots if self.model.slots[slot] == 0]
        self.tally.lost += len(lost)
        assert not lost
        self.tally.ticks += 1

    @rule()
    def crash_between_enqueue_and_advance(self) -> None:
        pump = self.lab.pump(self.queue, slot_keyed=self.slot_keyed)
        _, expected, _ = self._expect_tick(crash=True)
        if self.model_crashed:
            with pytest.raises(PumpCrash) as crash:
                pump.begin().run(after_enqueue=crash_after_enqueue)
            assert crash.value.occurrences == expected
            self.tally.crashes += 1
        else:
            assert pump.begin().run(after_enqueue=crash_after_enqueue).fired == expected  # nothing live: no crash

    @rule(name=st.sampled_from(NAMES), every_ms=st.sampled_from(PERIODS), first_in_ms=st.sampled_from((0, 1, 30 * MIN)))
    def cancel_and_register_between_read_and_advance(self, name: str, every_ms: int, first_in_ms: int) -> None:
        """The stale-advance race: a tick reads, ``name`` is cancelled and registered anew, then
        the tick enqueues and advances. The new registration's first run must survive."""
        if name in self.model.dangling:
            return  # a member without a record is the sweep's story (the cancel dive), not this one
        tick = self.lab.pump(self.queue, slot_keyed=self.slot_keyed).begin()
        read = {row.name: (row.slot_ms, row.every_ms) for row in tick.read()}
        due_slots, expected, advanced = self._expect_tick(crash=False)
        self.cancel(name)
        self._register(name, every_ms, first_in_ms)
        fresh = self.model.live[name].next_ms
        same = name in read and read[name] == (fresh, every_ms)
        if name in read:
            # The advance compares the row with what the read saw: a new score or period -> MOVED,
            # untouched. The same score and period is the same registration to the advance.
            outcome = Outcome.ADVANCED if same else Outcome.MOVED
            advanced = [(n, outcome if n == name else o) for n, o in advanced]
            if outcome is Outcome.ADVANCED:
                self.model.live[name].next_ms = tick.now_ms + every_ms
        assert tick.enqueue() == expected
        assert sorted(tick.advance()) == sorted(advanced)
        if name in read and not same:
            assert dict(self.rep.entries())[name] == fresh  # the new registration's run survived
            self.tally.moved += 1
        assert not [slot for slot in due_slots if self.model.slots[slot] == 0]

    # --- the model of one tick --------------------------------------------------------------

    model_crashed = False

    def _expect_tick(self, *, crash: bool) -> tuple[list[tuple[str, int]], list[Occurrence], list[tuple[str, Outcome]]]:
        """Apply one tick to the model; return the due live slots, the occurrences and the advances."""
        now = self.clock.now_ms()
        model = self.model
        due = sorted((score, name.encode(), name) for name, score in model.scores().items() if score <= now)
        due_slots = [(name, score) for score, _, name in due if name in model.live]
        fired: list[Occurrence] = []
        advanced: list[tuple[str, Outcome]] = []
        self.model_crashed = False
        crash = crash and any(name in model.live for _, _, name in due)  # the hook dies only then
        for _, _, name in due:
            if name in model.dangling:
                if not crash:  # a crashed tick never reaches its advances
                    del model.dangling[name]  # swept by advance's guard
                    advanced.append((name, Outcome.ABSENT))
                continue
            reg = model.live[name]
            if self.slot_keyed:
                job_id = f"{name}:{reg.next_ms}"
            else:
                model.counter += 1
                job_id = f"JOB-{model.counter:06d}"
            if job_id not in model.job_ids:
                model.job_ids.add(job_id)
                model.slots[(name, reg.next_ms)] += 1
                fired.append(Occurrence(job_id, name, now, reg.next_ms))
                self.tally.occurrences += 1
            if crash:
                self.model_crashed = True  # every enqueue of the tick happens, then the crash
                continue
            reg.next_ms = now + reg.every_ms
            advanced.append((name, Outcome.ADVANCED))
        return due_slots, fired, advanced

    # --- checked after every step -----------------------------------------------------------

    @invariant()
    def agrees_with_the_model(self) -> None:
        self.tally.steps += 1
        model = self.model
        # One registry row per live name (plus dangling members until their next advance), at the
        # model's next run.
        entries = self.rep.entries()
        assert len(entries) == len({name for name, _ in entries})
        assert dict(entries) == model.scores()
        # Every live row has its record, stored exactly; no record without a live row.
        pipe = self.lab.client.pipeline(transaction=False)
        for name in NAMES:
            pipe.hgetall(QueueKeys(self.queue).record(name))
        for name, record in zip(NAMES, pipe.execute(), strict=True):
            reg = model.live.get(name)
            assert record == ({"every_ms": str(reg.every_ms), "template": reg.template} if reg else {})
        # Occurrence ids unique; the wait list is exactly what the model produced.
        wait = self.lab.jobs(self.queue).browse(limit=1_000_000)
        assert len(wait) == len(set(wait))
        assert set(wait) == model.job_ids
        if self.slot_keyed:
            assert all(count == 1 for count in model.slots.values())

    def teardown(self) -> None:
        slots = self.model.slots
        self.tally.slots += len(slots)
        extra = sum(count - 1 for count in slots.values())
        if self.slot_keyed:
            self.tally.duplicated_slot_keyed += extra
        else:
            self.tally.duplicated_fresh += extra
        self.lab.reset(self.queue)


def run_machine(lab: emq_lab.Lab, *, examples: int, steps: int) -> Tally:
    tally = Tally()

    class Machine(RegistryMachine):
        pass

    Machine.lab = lab
    Machine.tally = tally
    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        ),
    )
    return tally


def test_registry_agrees_with_the_model(
    lab: emq_lab.Lab, deep: bool, backend_url: str, figure: Callable[[str, object], None]
) -> None:
    examples, steps = (3000, 60) if deep else (200, 25)
    tally = run_machine(lab, examples=examples, steps=steps)
    kind = "fakeredis" if backend_url == "embedded" else "cluster" if "+cluster" in backend_url else "valkey"
    figure(f"model [{kind}]", tally)
    assert tally.lost == tally.duplicated_slot_keyed == 0
