"""The JupyterLite edition in headless Chromium, with every request off loopback refused.

The built site (``make lite``) is served by ``python -m http.server`` on 127.0.0.1. Each notebook
is opened (a worker's first by its URL, each later one in the site already loaded, as a learner
goes on to the next dive), run top to bottom in the Pyodide kernel (the Lua on fengari, the embedded fakeredis),
and its outputs compared with the stored ones the way nbval does (``text/plain``, ``text/html``
and streams; plotly's figure JSON skipped, as in conftest.py). Then the learner's walk of
tests/test_browser.py clicks through its panels, and axe-core checks the page (serious or
critical violations fail, as in the JupyterLab and Voila walks). Screenshots (1280x720) go to
test-artifacts/lite/.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser import ARTIFACTS, VERSION_MISMATCH, axe_violations, close_notebooks, launched_chromium, open_notebook
from litesite import ROOT, site
from servers import free_port
from test_browser import WALKS, button, cadence_slider, expect_text, step_within, top

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SHOTS = ARTIFACTS / "lite"
pytestmark = pytest.mark.browser  # make test-browser
COMPARED = ("text/plain", "text/html")
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}
# Under -n the site's walks run on two workers, each with its own http.server and Chromium: the
# two longest notebooks on one, the rest (and test_lite_kernel.py, test_lite_build.py) on the other.
SECOND = ("02-cadence", "03-cancel")


def _grouped(notebook: Path) -> Any:
    group = "lite-2" if notebook.stem in SECOND else "lite"
    return pytest.param(notebook, id=notebook.stem, marks=pytest.mark.xdist_group(group))


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    output = site().output
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{base}/jupyter-lite.json", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if server.poll() is not None:
                    raise RuntimeError("http.server exited") from None
                time.sleep(0.1)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as chromium:
        yield chromium


class Guard:
    """Refuses every request that is not to loopback, and keeps the console's errors and its
    shared-module version warnings (as the JupyterLab and Voila walks do)."""

    def __init__(self) -> None:
        self.aborted: list[str] = []
        self.errors: list[str] = []

    def route(self, route: Any) -> None:
        host = urlsplit(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "blob:")) or host in LOOPBACK:
            route.continue_()
        else:
            self.aborted.append(route.request.url)
            route.abort()

    def console(self, message: Any) -> None:
        if message.type == "error" or (message.type == "warning" and VERSION_MISMATCH.match(message.text)):
            self.errors.append(message.text)


@pytest.fixture(scope="module")
def site_page(browser: Any) -> Iterator[tuple[Any, Guard]]:
    """One page of the site for the module's notebooks: the first opens by its URL (the site
    loads, its kernel starts early), each later one in the app already loaded, as a learner opens
    the next dive from the file browser (see ``page``)."""
    guard = Guard()
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.route("**/*", guard.route)
    page = context.new_page()
    page.on("console", guard.console)
    page.on("pageerror", lambda error: guard.errors.append(f"pageerror: {error}"))
    page.on("response", lambda r: r.status >= 400 and guard.errors.append(f"HTTP {r.status}: {r.url}"))
    page.set_default_timeout(60_000)
    yield page, guard
    context.close()


@pytest.fixture
def page(site_page: tuple[Any, Guard]) -> Iterator[tuple[Any, Guard]]:
    """The site's page for one notebook, its guard cleared; after, every notebook closed and its kernel shut down."""
    browser_page, guard = site_page
    guard.aborted.clear()
    guard.errors.clear()
    yield browser_page, guard
    close_notebooks(browser_page)
    assert guard.aborted == [], f"requests off loopback (refused): {guard.aborted}"


def stored_outputs(notebook: Path) -> list[list[tuple[str, str]]]:
    """Per code cell, what nbval compares of its stored outputs."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [_comparable(cell.get("outputs", [])) for cell in cells if cell["cell_type"] == "code"]


def _comparable(outputs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for output in outputs:
        if output["output_type"] == "stream":
            found.append((output["name"], _text(output["text"])))
        elif output["output_type"] in ("execute_result", "display_data"):
            found += [(mime, _text(output["data"][mime])) for mime in COMPARED if mime in output["data"]]
        elif output["output_type"] == "error":
            found.append(("error", f"{output['ename']}: {output['evalue']}"))
    # A stream may arrive in several chunks; nbval joins consecutive ones, and so does this.
    merged: list[tuple[str, str]] = []
    for kind, text in found:
        if merged and kind in ("stdout", "stderr") and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return merged


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


LIVE_OUTPUTS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
  const found = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === "code") found.push(cell.outputs.toJSON());
  }
  return found;
}"""


def opened(page: Any, base: str, notebook: str) -> float:
    """Open ``notebook`` (in the site already on the page if there is one, else by its URL) and
    wait for its kernel; the seconds to Idle."""
    start = time.monotonic()
    open_notebook(page, base, notebook, f"{base}/lab/index.html?path={notebook}", timeout_ms=180_000)
    return time.monotonic() - start


def run_all(page: Any) -> float:
    """Run All on the open notebook; the seconds to its last output."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    started = time.monotonic()
    page.get_by_text("Run All Cells", exact=True).click()
    page.wait_for_function(
        """() => {
          const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
          for (let i = 0; i < cells.length; i++) {
            const cell = cells.get(i);
            if (cell.type !== "code") continue;
            const outputs = cell.outputs.toJSON();
            if (outputs.some((output) => output.output_type === "error")) return true;  // Run All stops there
            if (cell.executionCount === null) return false;
          }
          return true;
        }""",
        timeout=600_000,
        polling=500,
    )
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=600_000)
    return time.monotonic() - started


def _arrow(panel: Any, label: str = "") -> None:
    """One step, from the keyboard, of the panel's slider labelled ``label`` (else its first):
    up, or down where it is at its top."""
    slider = (cadence_slider(panel, label) if label else panel).locator('[role="slider"]').first
    step = step_within(slider, float(slider.get_attribute("aria-valuenow") or 0))
    slider.press("ArrowRight" if step > 0 else "ArrowLeft")


# What the walk does to each panel kind (with the panel's own controls, never a figure's modebar),
# and whether its readout must then change (the class table refreshed shows the same class).
LITE_ACTIONS: dict[str, tuple[Callable[[Any], None], bool]] = {
    ".emq-predict": (lambda panel: button(panel, "Check").click(), True),
    ".emq-boot-panel": (lambda panel: button(panel, "Boot #1").click(), True),
    ".emq-boot-counter": (lambda panel: _arrow(panel), True),
    ".emq-cadence-explorer": (lambda panel: _arrow(panel, "run (min)"), True),
    ".emq-fast-forward": (lambda panel: panel.get_by_role("button", name="Fast-forward").click(), True),
    ".emq-cancel-panel": (lambda panel: button(panel, "reset").click(), True),
    ".emq-crash-panel": (lambda panel: button(panel, "Tick (and restart)").click(), True),
    ".emq-classroom-panel": (lambda panel: panel.locator("button", has_text="Refresh").click(), False),
}


def walk_lite(page: Any) -> list[str]:
    """Work one control of each panel kind on the page (as the JupyterLab walks find them, by
    class) and wait for its readout to answer: changed, and no note of a fault. The in-browser
    kernel has no Jupyter server to probe, so the state checks are the JupyterLab and Voila walks';
    this proves the panels answer with the Lua running on fengari."""
    assert set(LITE_ACTIONS) == set(WALKS), "a panel kind without a lite action"
    walked = []
    for selector in WALKS:
        panels = page.locator(selector)
        if not panels.count():
            continue
        panel = panels.first
        top(panel)
        readout = panel.locator(".emq-readout").first
        expect_text(readout, "")
        before = readout.inner_text()
        act, changes = LITE_ACTIONS[selector]
        act(panel)
        if changes:
            page.wait_for_function("([el, before]) => el.innerText !== before", arg=[readout.element_handle(), before])
        else:
            page.wait_for_function("el => el.innerText.trim().length > 0", arg=readout.element_handle())
        for note in panel.locator(".emq-note").all_inner_texts():
            assert "unavailable" not in note and "Traceback" not in note, f"{selector}: {note}"
        walked.append(selector)
    return walked


# 00-start is opened by tests/test_lite_kernel.py, which checks its kernel and then this.
@pytest.mark.parametrize("notebook", [_grouped(nb) for nb in NOTEBOOKS if nb.stem != "00-start"])
def test_notebook_runs_in_the_lite_site(page: tuple[Any, Guard], served: str, notebook: Path) -> None:
    browser_page, guard = page
    idle = opened(browser_page, served, notebook.name)
    runs_as_stored(browser_page, guard, notebook, idle)


def runs_as_stored(browser_page: Any, guard: Guard, notebook: Path, idle: float) -> None:
    """Run All on the open ``notebook``: its outputs as stored, its panels answering a click, no
    console error, no serious axe-core finding. Screenshots <notebook>-run and -walked."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    ran = run_all(browser_page)
    print(f"{notebook.stem}: kernel idle after {idle:.1f} s, Run All took {ran:.1f} s")
    browser_page.screenshot(path=str(SHOTS / f"{notebook.stem}-run.png"))

    live = [_comparable(outputs) for outputs in browser_page.evaluate(LIVE_OUTPUTS)]
    stored = stored_outputs(notebook)
    assert len(live) == len(stored)
    differing = [i + 1 for i, (want, got) in enumerate(zip(stored, live, strict=True)) if got != want]

    # The walk runs whatever the comparison found, so one report says both.
    walked = walk_lite(browser_page)
    has_panels = "application/vnd.jupyter.widget-view+json" in notebook.read_text()
    assert bool(walked) == has_panels, f"panels walked: {walked}; the stored notebook has panels: {has_panels}"
    browser_page.screenshot(path=str(SHOTS / f"{notebook.stem}-walked.png"))
    # axe-core on the notebook's own content, as the JupyterLab walk checks it
    found = axe_violations(browser_page, [".jp-MarkdownOutput", ".jp-OutputArea"])
    assert guard.errors == [], f"console errors: {guard.errors}"
    assert not found, "axe-core in the browser edition, serious or critical:\n" + "\n".join(found)
    for index in differing:
        assert live[index - 1] == stored[index - 1], (
            f"{notebook.stem}, code cells {differing} differ from the stored outputs"
        )
