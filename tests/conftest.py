from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from helpers import START, CountingConnection, RoundTrips
from litesite import build_in_background, stop_background_build
from servers import MISSING, ValkeyCluster, ValkeyServer, required, server_binary

import emq_lab

BACKENDS = ["fakeredis", "valkey", "cluster"]
_queues = itertools.count(1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--deep",
        action="store_true",
        default=False,
        help="reliability tests at full depth: thousands of model examples, more rounds (minutes, not seconds)",
    )


# The -m of make test and make test-browser, as the Makefile writes them (a target's -m not here
# builds the site in the foreground): each runs JupyterLite tests (test_lite_lua.py and
# test_lite_build.py in the one, the site in Chromium in the other).
TIERS = ("not browser", "browser")


def pytest_configure(config: pytest.Config) -> None:
    """A run that includes the JupyterLite tests (all of tests/, or a test_lite_* file) and picks
    no subset by -k, nor by -m other than make's two tiers, starts building the site now, in the
    background, in the one process that runs the session (pytest-xdist's controller, not each
    worker): see tests/litesite.py."""
    if hasattr(config, "workerinput") or config.option.keyword or config.option.markexpr not in ("", *TIERS):
        return
    paths = [Path(arg.split("::")[0]).resolve() for arg in config.args]
    lite_tests = sorted(Path(__file__).parent.glob("test_lite_*.py"))
    if any(path == test or path in test.parents for path in paths for test in lite_tests):
        build_in_background()


def pytest_unconfigure(config: pytest.Config) -> None:
    stop_background_build()


@pytest.fixture(scope="session")
def deep(request: pytest.FixtureRequest) -> bool:
    """True under ``pytest --deep``: the reliability tests run many more examples and rounds."""
    return bool(request.config.getoption("--deep"))


FIGURES: list[tuple[str, str]] = []
TALLIES: dict[str, Counter[str]] = {}  # counts summed over tests (e.g. hostile inputs by kind)


@pytest.fixture
def figure(request: pytest.FixtureRequest) -> Callable[[str, object], None]:
    """Record a figure (examples run, duplicates seen, ...) for the end-of-run summary. It rides
    on the test's report, so it reaches the summary from a pytest-xdist worker too."""

    def record(label: str, value: object) -> None:
        request.node.user_properties.append(("figure", (label, str(value))))

    return record


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the figures as each test's report arrives (in the one process that prints the summary)."""
    if report.when == "teardown":
        for key, value in report.user_properties:
            if key == "figure":
                FIGURES.append(value)
            elif key == "tally":
                label, counts = value
                TALLIES.setdefault(label, Counter()).update(counts)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = [*FIGURES, *((label, str(dict(sorted(counts.items())))) for label, counts in TALLIES.items())]
    if lines:
        terminalreporter.section("reliability figures")
        for label, value in lines:
            terminalreporter.write_line(f"{label}: {value}")


def _missing() -> None:
    message = MISSING
    if required():
        pytest.fail(message.replace("SKIPPED", "REQUIRED (EMQ_LAB_REQUIRE_VALKEY=1)"))
    pytest.skip(message)


@pytest.fixture(scope="session")
def valkey_cluster() -> Iterator[ValkeyCluster]:
    """Three primaries on loopback ports (``--cluster-enabled yes``), stopped by PID at the end."""
    if server_binary() is None:
        _missing()
    cluster = ValkeyCluster()
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def valkey_server() -> Iterator[ValkeyServer]:
    if server_binary() is None:
        _missing()
    server = ValkeyServer()
    yield server
    server.close()


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest) -> str | None:
    """The embedded fakeredis ("embedded"), or a loopback URL: the throwaway Valkey or the 3-primary cluster."""
    if request.param == "cluster":
        cluster: ValkeyCluster = request.getfixturevalue("valkey_cluster")
        return cluster.url
    if request.param == "valkey":
        server: ValkeyServer = request.getfixturevalue("valkey_server")
        return server.url
    return "embedded"


@pytest.fixture
def queue() -> str:
    """A queue name no other test uses."""
    return f"t{next(_queues)}"


@pytest.fixture
def lab(backend_url: str, queue: str) -> Iterator[emq_lab.Lab]:
    lab = emq_lab.connect(backend_url, clock=emq_lab.SimClock(START))
    yield lab
    lab.reset(queue)
    lab.close()


@pytest.fixture
def round_trips(backend_url: str, lab: emq_lab.Lab) -> Iterator[RoundTrips]:
    """Round trips a user is promised (a click, a batch), counted on a single Valkey server by a
    connection class of our own, so nothing of redis-py is patched."""
    if backend_url in ("embedded", None) or "cluster" in backend_url:
        pytest.skip("round trips are counted on a single Valkey server")
    pool = redis.ConnectionPool.from_url(
        backend_url, connection_class=CountingConnection, decode_responses=True, max_connections=1
    )
    client = redis.Redis(connection_pool=pool)
    client.ping()  # the handshake, once
    counted = emq_lab.Lab(client, lab.clock, "counted", namespace=lab.namespace)
    for field in dataclasses.fields(counted.scripts):  # a server that holds the course's scripts, as in class
        client.script_load(getattr(counted.scripts, field.name).script)
    yield RoundTrips(counted)
    client.close()


# The longest tests and groups, longest first (from a run's --durations). Under -n the workers take
# them in the collection's order (make passes --no-loadscope-reorder), so they start first and
# the short tests fill in around them: no long one is left to run alone at the end of the run.
# make test-browser's (the browser marker) lead the list; make test's follow.
FIRST = (
    "tests/test_hub.py::test_a_class_on_jupyterhub",
    "tests/test_browser.py::test_notebook_in_jupyterlab",  # the browser-lab group (the click walks)
    "tests/test_browser.py::test_notebook_in_voila",  # browser-voila
    "tests/test_lite_browser.py::test_notebook_runs_in_the_lite_site[03-cancel]",  # lite-2
    "tests/test_lite_browser.py",  # lite, with test_lite_kernel.py
    "tests/test_instructor_browser.py",
    "tests/test_notebooks.py::test_a_learner_runs_the_dives_as_an_acl_user",
    "tests/test_notebooks.py::test_notebook_outputs_match",
    "tests/test_model.py",
    "tests/test_hostile_answers.py",
    "tests/test_sandbox_load.py",
    "tests/test_concurrency.py",
    "tests/test_copies.py::test_a_scripted_learner_session",
    "tests/test_sandbox.py::test_a_check_has_one_deadline",
    "tests/test_sandbox_confine.py",
    "tests/test_two_pumps.py",
)
# make test's tests that need the JupyterLite site come last, so that a fresh clone's build of the
# site (3 to 5 minutes, mostly waiting on the network: tests/litesite.py) runs beside the rest of
# the suite instead of keeping a worker waiting.
LAST = ("tests/test_lite_lua.py", "tests/test_lite_build.py")


def _rank(item: pytest.Item) -> int:
    if item.nodeid.startswith(LAST):
        return len(FIRST) + 1
    return next((rank for rank, prefix in enumerate(FIRST) if item.nodeid.startswith(prefix)), len(FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``embedded_only`` run once, on the embedded backend: their logic does not
    depend on the server (validation before any write, the panels' twins over the package), and
    the backend tests already run every script on Valkey and the cluster. The longest (FIRST)
    come first, in that order; the others keep theirs."""
    items.sort(key=_rank)  # stable
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend_url") if callspec is not None else None
        if item.get_closest_marker("embedded_only") and backend not in (None, "fakeredis"):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
