"""A busy machine does not fail a right answer: the sandbox's limits count its worker's CPU time,
so with two CPU-bound processes beside it every checker's reference solution passes, ten times in
a row, and an endless loop and a memory bomb are still stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from emq_lab import exercises, sandbox
from emq_lab.exercises.explain import MEMORY_LIMIT, TIME_LIMIT

BUSY = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n"


@pytest.fixture
def busy_machine() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Two processes that spin on the CPU (for 10 minutes at most), killed at the end."""
    spinners = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    time.sleep(0.5)
    yield spinners
    for spinner in spinners:
        spinner.kill()
        spinner.wait()


@pytest.mark.parametrize("exercise", exercises.solutions.EXERCISES)
def test_every_reference_passes_ten_times_on_a_busy_machine(
    busy_machine: list[subprocess.Popen[bytes]], exercise: str
) -> None:
    checker = getattr(exercises, exercise)
    reference = exercises.solution(exercise)
    for attempt in range(10):
        check = checker(reference)
        assert check.passed, f"attempt {attempt + 1}: {check}"
    assert all(spinner.poll() is None for spinner in busy_machine)  # the machine was busy throughout


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
def test_hostile_answers_are_still_stopped_on_a_busy_machine(
    busy_machine: list[subprocess.Popen[bytes]], form: str
) -> None:
    source, expected = HOSTILE[form]
    start = time.monotonic()
    check = exercises.register(source)
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
