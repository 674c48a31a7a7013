"""Dive 2's exercise: the learner's start-to-start rule (a Python function) and the pump's own drive the real
pump on two queues, late ticks and random run lengths alike; the first release where they part is shown."""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from .. import validate
from ..clock import COURSE_START, INSTANTS, MAX_INSTANT_MS, MIN_INSTANT_MS, duration, moment, parse_instant, whole_ms
from ..dives.common import one_registration
from ..schedule import MINUTE_MS, Measure, first_tick_at_or_after
from .check import Check, checked, passed, queues, search, sim

if TYPE_CHECKING:
    from ..lab import Lab

CYCLES = 5
EXAMPLES = 15  # random settings: each drives two lanes of CYCLES ticks
NAME = "report"
#: What the learner's rule may spend in one check, over all its calls: CPU seconds (time.process_time), and a
#: wall-clock backstop for a rule that sleeps (no CPU), far above a right rule's (~100 calls of microseconds).
RULE_CPU_S = 5.0
RULE_WALL_S = 20.0
Releases = tuple[int, ...]  # one lane's release instants, in ms
NOT_A_TIME = "your rule's answer is not a time in whole milliseconds"


@dataclass(frozen=True)
class Setting:
    """One scenario: period, run length, the pump ticking every ``tick_ms`` (0: when due) from ``phase_ms``."""

    every_ms: int
    run_ms: int
    tick_ms: int = 0
    phase_ms: int = 0

    def text(self) -> str:
        tick = "exactly when due" if not self.tick_ms else f"every {duration(self.tick_ms)}"
        late = f"starts {duration(self.phase_ms)} late, then " if self.phase_ms else ""
        return f"every {duration(self.every_ms)}, runs of {duration(self.run_ms)}, the pump {late}ticks {tick}"


class RuleError(Exception):
    """The learner's function failed or answered something that is not a time."""


def _arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments without a default ``fn`` takes (2 when its signature cannot be read)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in parameters)


def releases(lab: Lab, queue: str, setting: Setting, rule: Any) -> Releases:
    """Drive the real pump with ``rule`` for CYCLES releases; the release instants."""
    sim_lab, clock = sim(lab)
    start = clock.now_ms()
    one_registration(sim_lab, queue, NAME, setting.every_ms, '{"job": "report"}')
    rep, pump = sim_lab.repeat(queue), sim_lab.pump(queue, rule=rule)
    out: list[int] = []
    last: int | None = None
    for _ in range(4 * CYCLES):
        if len(out) >= CYCLES:
            break
        ((_, score),) = rep.entries()
        earliest = score if last is None else max(score, last + 1)
        last = first_tick_at_or_after(earliest, start_ms=start + setting.phase_ms, tick_ms=setting.tick_ms)
        try:
            clock.set(max(clock.now_ms(), last))
        except ValueError:
            raise RuleError(f"your rule's next run ({score} ms) is not an instant the clock can reach") from None
        try:
            out += [o.fired_at_ms for o in pump.tick()]
        except ValueError as exc:  # the pump refused the rule's answer (a RuleError goes through)
            said = str(exc).removeprefix("rule: the next run: ")
            raise RuleError(f"{NOT_A_TIME}: {said}") from None
    return tuple(out)


@dataclass
class Budget:
    """The time the learner's rule has spent in this check."""

    cpu_s: float = 0.0
    wall_s: float = 0.0
    calls: int = 0

    def spent(self) -> str | None:
        """Why the rule may not be called again, or None."""
        if self.cpu_s > RULE_CPU_S:
            return f"{self.cpu_s:.1f} s of CPU time in {self.calls} calls (the check allows {RULE_CPU_S:g} s)"
        if self.wall_s > RULE_WALL_S:
            return (
                f"{self.wall_s:.1f} s in {self.calls} calls, mostly waiting (the check allows {RULE_WALL_S:g} s "
                "in all; a rule only computes a time, it never waits)"
            )
        return None


def _wrapped(fn: Callable[..., Any], setting: Setting, budget: Budget | None = None) -> Callable[[int, int], int]:
    arity, budget = _arity(fn), budget or Budget()

    def rule(release_ms: int, every_ms: int) -> int:
        args = (release_ms, every_ms) if arity == 2 else (release_ms, every_ms, release_ms + setting.run_ms)
        cpu, wall = time.process_time(), time.monotonic()
        try:
            answer = fn(*args)
        except (Exception, SystemExit, GeneratorExit) as exc:  # noqa: BLE001 - whatever the learner's function raises is explained
            raise RuleError(f"your rule raised {type(exc).__name__}: {_said(exc)} (called with {args})") from None
        finally:
            budget.cpu_s += time.process_time() - cpu
            budget.wall_s += time.monotonic() - wall
            budget.calls += 1
        spent = budget.spent()
        if spent is not None:
            raise RuleError(f"your rule took too long: {spent}")
        return instant(answer)

    return rule


def _said(exc: BaseException) -> str:
    try:
        return validate.shorten(str(exc), 300)
    except Exception:  # noqa: BLE001 - an exception whose str() fails
        return "(its message cannot be shown)"


def instant(answer: object) -> int:
    """The rule's answer as an instant in ms the clock and the scripts can take, or RuleError."""
    if answer is None:
        raise RuleError("your rule returned None: a missing return? it must return the next run in ms")
    if isinstance(answer, int) and not isinstance(answer, bool):
        answer = int.__int__(answer)  # an int subclass: its value, whatever its methods say
    elif isinstance(answer, float):
        answer = float.__float__(answer)
    if isinstance(answer, bool) or not isinstance(answer, int | float):
        got = f"{type(answer).__name__} {validate.shown(answer)}"
        raise RuleError(f"{NOT_A_TIME}: expected milliseconds as an int, got {got}")
    try:
        ms = whole_ms(answer, "the next run")
    except ValueError as exc:
        said = str(exc).removeprefix("the next run: ")
        raise RuleError(f"{NOT_A_TIME}: {said}") from None
    if not MIN_INSTANT_MS <= ms <= MAX_INSTANT_MS:
        raise RuleError(
            f"your rule's answer ({validate.shown(answer)}) is not an instant in ms the clock can reach ({INSTANTS})"
        )
    return ms


FIXED = (
    ("every 15 min, runs of 4 min", Setting(15 * MINUTE_MS, 4 * MINUTE_MS)),
    ("a pump that ticks every minute", Setting(15 * MINUTE_MS, 4 * MINUTE_MS, MINUTE_MS, 0)),
)
SETTINGS = st.builds(
    Setting,
    st.integers(1, 60).map(lambda m: m * MINUTE_MS),
    st.integers(0, 50).map(lambda m: m * MINUTE_MS),
    st.sampled_from((0, MINUTE_MS, 30_000, 5 * MINUTE_MS, 7_000)),
    st.integers(0, 4).map(lambda k: k * 7_000),
)


def check(fn: Callable[..., Any]) -> Check:
    """Whatever ``fn`` is or does, a Check of it as the pump's start-to-start rule."""
    return checked("next_run", _refusal(fn), lambda sandboxed, _: _check(fn, sandboxed))


def _refusal(fn: object) -> str | None:
    """Why ``fn`` is not a rule the check can call, or None."""
    if not callable(fn):
        said = f"got {type(fn).__name__} {validate.shown(fn)}"
        return f"must be a function (release_ms, every_ms[, finish_ms]) -> next_ms; {said}"
    if (arity := _arity(fn)) not in (2, 3):
        return (
            "must be a function of (release_ms, every_ms) or (release_ms, every_ms, finish_ms), "
            f"got one of {arity} argument(s)"
        )
    return None


def _check(fn: Callable[..., Any], base: Lab) -> Check:
    """The first setting where ``fn``'s releases part from start-to-start's, explained; else passed."""
    mine, theirs = queues("next-run")
    budget = Budget()  # the rule's time over the whole check

    def failure(name: str, setting: Setting) -> Check | None:
        ref = releases(base, theirs, setting, Measure.START_TO_START)
        try:
            yours = releases(base, mine, setting, _wrapped(fn, setting, budget))
            error = None
        except RuleError as exc:
            yours, error = (), str(exc)
        parted = next((i for i, (a, b) in enumerate(zip(yours, ref, strict=False)) if a != b), None)
        if parted is None and len(yours) != len(ref):
            parted = min(len(yours), len(ref))
        if parted is None and error is None:
            return None
        return _failed(name, setting, yours, ref, parted, error, fn)

    found, tried = search("next_run", FIXED, SETTINGS, failure, random="random settings", examples=EXAMPLES)
    if found is not None:
        return found
    return passed(
        "next_run",
        f"next_run: passed {len(FIXED)} settings and {tried} random ones (periods, run times, late ticks)",
        f"every run starts one period after the previous one started, {CYCLES} cycles each",
        "the run's length never moves the next start (no drift)",
        "a late tick moves only that run, measured from its release",
    )


def _failed(
    name: str, s: Setting, yours: Releases, ref: Releases, i: int | None, error: str | None, fn: Callable[..., Any]
) -> Check:
    """The failed Check of scenario ``name``: both timelines, and ``i``, the first release where they part."""
    day = parse_instant(COURSE_START)

    def when(ms: int) -> str:  # a run on another day shows its date
        return moment(ms, day_ms=day)

    out = [f'next_run: FAILED in scenario "{name}"', f"  {s.text()}, from {when(day)}"]
    if error:
        out.append(f"  {error}")
    out.append(f"  yours:     {' '.join(when(ms) for ms in yours) or '(no release)'}")
    out.append(f"  reference: {' '.join(when(ms) for ms in ref)}")
    if i is not None and not error:
        if i >= len(yours):
            out.append(f"  run #{i + 1}: yours never released it; the reference released it at {when(ref[i])}")
        else:
            previous, said = (yours[i - 1] if i else None), ""
            if previous is not None and previous == ref[i - 1]:
                with contextlib.suppress(RuleError):
                    given = when(_wrapped(fn, s)(previous, s.every_ms))
                    said = f"your rule gave next = {given} for the run released at {when(previous)}; "
            out.append(
                f"  run #{i + 1} is where they part: {said}yours released it at {when(yours[i])}, "
                f"start-to-start at {when(ref[i])} (release + every)"
            )
    return Check("next_run", False, "\n".join(out), scenario=name)
