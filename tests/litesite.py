"""The JupyterLite edition for the tests: built once per session (under a lock, for pytest-xdist's
workers) by ``make lite`` (a no-op when nothing changed), or skipped loudly when this machine lacks
what it needs (failed instead when ``EMQ_LAB_REQUIRE_LITE=1``, as in CI).

The build waits mostly on the network and the disk (about 45 s of CPU in 3 to 5 minutes), so a
run that includes the lite tests starts it in the background as the run begins (conftest.py,
``build_in_background``): the other tests use the CPU meanwhile, and the lite tests find the site
built instead of idling a worker or two for minutes in their first fixture."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import glob
import os
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "lite"
REQUIRE_ENV = "EMQ_LAB_REQUIRE_LITE"


@dataclass(frozen=True)
class Site:
    output: Path  # the static site
    pyodide: Path  # the npm package `pyodide` the site's core was copied from
    wheels: Path  # the wheels the site vendors (fakeredis, redis, emq-lab, ...)


def skip_or_fail(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"LITE TESTS REQUIRED ({REQUIRE_ENV}=1): {reason}")
    pytest.skip(f"LITE TESTS SKIPPED: {reason}")


def _missing() -> str | None:
    """What this machine lacks to build the site, or None."""
    for tool in ("node", "npm", "make"):
        if shutil.which(tool) is None:
            return f"no `{tool}` on PATH (the site's Pyodide comes from npm)"
    pythons = [shutil.which("python3.13"), shutil.which("python3.12"), os.environ.get("LITE_PYTHON")]
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    pythons += glob.glob(f"{pyenv}/versions/3.1[2-9]*/bin/python3")
    if not any(p and os.path.exists(p) for p in pythons) and not (LITE / ".venv-build" / "bin" / "jupyter").exists():
        return "no Python >= 3.12 for the build step (pyodide-lock needs it; set LITE_PYTHON)"
    return None


_BACKGROUND: list[subprocess.Popen[bytes]] = []  # the build started by build_in_background, if any


def build_in_background() -> None:
    """``make lite`` now, on a thread holding the build lock, when the site is missing or stale
    (``make -q``) and this machine can build it; the tests that need the site then wait on the
    lock (if at all) and find it built. Its output goes to lite/.build.log; a failure is met
    again, and reported, by the tests' own ``make lite``."""
    if _missing() is not None or subprocess.run(["make", "-q", "lite"], cwd=ROOT).returncode == 0:
        return
    locked = threading.Event()

    def build() -> None:
        with open(LITE / ".build.lock", "w") as lock, open(LITE / ".build.log", "wb") as log:
            fcntl.flock(lock, fcntl.LOCK_EX)
            process = subprocess.Popen(
                ["make", "lite"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            _BACKGROUND.append(process)
            locked.set()
            process.wait()

    threading.Thread(target=build, name="lite-build", daemon=True).start()
    locked.wait(timeout=60)  # the lock is taken before any test can ask for the site


def stop_background_build() -> None:
    """End a background build the run did not wait for (a run stopped early); ``make lite``
    starts over next time, as its stamp is written only at the end."""
    for process in _BACKGROUND:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


@functools.cache
def _build() -> Site | str:
    missing = _missing()
    if missing:
        return missing
    # Two pytest-xdist workers may both want the site: one builds, the other waits, then finds it built.
    with open(LITE / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = subprocess.run(["make", "lite"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        return f"BUILD FAILED\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return Site(
        output=LITE / "_output",
        pyodide=LITE / ".cache" / "npm" / "node_modules" / "pyodide",
        wheels=LITE / "_output" / "static" / "pyodide-lock",
    )


def site() -> Site:
    """The built site; skips (or fails) when it cannot be built here, fails when the build fails."""
    built = _build()
    if isinstance(built, str):
        if built.startswith("BUILD FAILED"):
            pytest.fail(f"make lite failed:\n{built}")
        skip_or_fail(built)
    assert isinstance(built, Site)
    return built
