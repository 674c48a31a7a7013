"""A busy machine does not fail a right answer: the sandbox's limits count its worker's CPU time,
so with the worker given a tenth of the wall clock every checker's reference solution passes,
and with a quarter an endless loop, a memory bomb and a C call are still
stopped by their CPU time.

The worker is starved by stopping it (SIGSTOP) for most of every 50 ms, as a machine ten times
oversubscribed would: a check of a reference then takes several times the sandbox's CPU limits
in wall-clock time (a limit that counted the wall clock would fail it), and the starving costs
the machine no CPU. Processes that spin beside the checks would slow them less (on a 2-core
machine three processes beside one check slow it about twice) and take the CPU of every other test."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from emq_lab import exercises, sandbox
from emq_lab.exercises.explain import MEMORY_LIMIT, TIME_LIMIT


def _workers() -> list[int]:
    """The PIDs of this process's sandbox workers (a spent one's successor too)."""
    return [box._process.pid for box in list(sandbox._boxes.values()) if box._process is not None]


class Starved:
    """While open, every sandbox worker of this process runs ``run_s`` of every ``run_s +
    stopped_s`` seconds: a thread stops it (SIGSTOP) for the rest. ``stops`` counts the rounds
    that stopped at least one worker."""

    def __init__(self, run_s: float, stopped_s: float) -> None:
        self.run_s, self.stopped_s = run_s, stopped_s
        self.stops = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="starve the sandbox", daemon=True)

    def _signal(self, pids: list[int], signum: int) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def _run(self) -> None:
        while not self._done.wait(self.run_s):
            pids = _workers()
            try:
                self._signal(pids, signal.SIGSTOP)
                self.stops += bool(pids)
                time.sleep(self.stopped_s)
            finally:
                self._signal(pids, signal.SIGCONT)

    def __enter__(self) -> Starved:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self._signal(_workers(), signal.SIGCONT)


@pytest.fixture
def busy_machine() -> Iterator[Starved]:
    """The workers get a tenth of the wall clock: 5 ms of every 50."""
    exercises.register(exercises.solution("register"))  # the worker started, outside the starving
    with Starved(0.005, 0.045) as starved:
        yield starved


@pytest.mark.parametrize("exercise", exercises.solutions.EXERCISES)
def test_every_reference_passes_on_a_busy_machine(busy_machine: Starved, exercise: str) -> None:
    checker = getattr(exercises, exercise)
    reference = exercises.solution(exercise)
    check = checker(reference)  # several times the sandbox's CPU limits in wall-clock time
    assert check.passed, str(check)
    assert busy_machine.stops > 0  # the worker was starved while the checks ran


HOSTILE = {
    "an endless loop": ("local n = 0\nwhile true do n = n + 1 end", f"line 2: {TIME_LIMIT}"),
    "a memory bomb": (
        "local t = {}\nwhile true do t[#t + 1] = string.rep('x', 1e7) .. #t end",
        f"line 2: {MEMORY_LIMIT}",
    ),
    "a C call longer than any hook": (
        "local s = string.rep('a', 30000)\nreturn string.find(s, '.-.-.-.-b')",
        f"line 2: {TIME_LIMIT}",
    ),
}


@pytest.mark.parametrize("form", list(HOSTILE))
def test_hostile_answers_are_still_stopped_on_a_busy_machine(form: str) -> None:
    # A quarter of the wall clock (10 ms of every 40): the C call's 2 s of CPU then stays well
    # inside the wall-clock backstop, so the CPU time is what stops it.
    source, expected = HOSTILE[form]
    exercises.register(exercises.solution("register"))  # the worker started, outside the starving
    start = time.monotonic()
    with Starved(0.010, 0.030) as starved:
        check = exercises.register(source)
    assert starved.stops > 0
    assert not check.passed and expected in str(check), str(check)
    assert time.monotonic() - start < sandbox.HARD_S + 30  # stopped by its CPU time, not the wall-clock backstop
    assert exercises.register(exercises.solution("register")).passed


def test_a_worker_that_gets_no_cpu_for_a_while_is_not_stopped() -> None:
    # The extreme of a busy machine: the worker is not scheduled at all (SIGSTOP) for 4 s in the
    # middle of a script that needs 0.3 s of CPU. Its limits count CPU time, so it is not stopped:
    # the call answers once it runs again, well after the 1 s a script may run and the 2 s a call may.
    box = sandbox.Sandbox()
    try:
        box.ready()
        assert box._process is not None
        pid = box._process.pid

        resumed: list[float] = []

        def pause() -> None:
            time.sleep(0.05)
            os.kill(pid, signal.SIGSTOP)
            time.sleep(4.0)
            resumed.append(time.monotonic())
            os.kill(pid, signal.SIGCONT)

        pauser = threading.Thread(target=pause)
        start = time.monotonic()
        pauser.start()
        reply = box.client.eval("local t = os.clock()\nwhile os.clock() - t < 0.5 do end\nreturn 1", 0)
        answered = time.monotonic()
        pauser.join()
        assert reply == 1
        assert answered > resumed[0]  # the call was in flight while the worker was stopped
        assert answered - start > sandbox.CALL_CPU_S + 1  # far past any limit, were it wall-clock
        assert box.spent is None and box.alive
    finally:
        box.kill()
