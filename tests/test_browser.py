"""Every notebook in a real browser, as a learner (JupyterLab: Run All, then the panels) and as
an instructor (Voila) meet it, at 1280x720 in Debian's Chromium driven by Playwright.

Strict: a console error, an uncaught exception, a new Log Console entry or a request that
leaves loopback fails the test. After each interaction, what the panel's text says, what its
figure plots (the trace data read from the page) and the package's state (read through a second
client on the page's own kernel) must agree. Panels are found by their class, not by cell
index, so cells may move. Each panel state is saved as a 1280x720 screenshot in test-artifacts/.

What each front end proves. The panels' code is the same in both (ipywidgets over one kernel);
what differs is how the page runs the notebook and draws the widgets: its CSS, its layout, its
errors, its focus handling. So each behaviour is walked once, where it says most:

- JupyterLab, the learner's page (one for every notebook, each opened in the app as a learner
  opens the next dive): Run All from the menu, then the click walk of every panel kind
  (WALKS: every button, menu, slider and form, the readout, figure and kernel state agreeing after
  each), no error output nor Log Console entry, axe-core in the light and the dark theme, and every
  readout's words whole at 1280x800 beside the file browser. Screenshots lab-*, lab800-*, dark.
- Voila, the presenter's page: the notebook as Voila renders it (no error output), every panel
  kind operated from the keyboard alone (KEYS; the cadence figure checked against the package as
  found, where Voila once drew a stale one, and the fast-forward keeping the focus while it runs),
  the layout at 1280x720 (no readout word broken or past its box, no sideways scroll, no button
  label or script line cut), axe-core on the whole page, and each dive's Next link with the left
  page's kernel shut down. Screenshots voila-*.
The click walk is not repeated in Voila (the same widget code again, at twice the cost), and the
page a dive's Next link opens is the next dive's test's page, so Voila runs each dive once.
The browser edition (tests/test_lite_browser.py) runs each notebook in the JupyterLite site.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser import (
    ROOT,
    Kernel,
    Server,
    Watch,
    axe_violations,
    close_notebooks,
    jupyter_process,
    launched_chromium,
    open_notebook,
    screenshot,
)

# Under -n one worker takes the JupyterLab walks and another the Voila walks: each starts its
# server (and a Chromium) once per module, not per test.
pytestmark = pytest.mark.browser  # make test-browser

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDTH, HEIGHT = 1280, 720
Page = Any  # playwright.sync_api.Page, imported lazily so a missing package can skip loudly
Locator = Any


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def lab_server(browser: Any) -> Iterator[Server]:
    with jupyter_process("lab") as server:
        yield server


@pytest.fixture(scope="module")
def voila_server(browser: Any) -> Iterator[Server]:
    # One server, a page per notebook; Voila 0.5.8 needs the folder as an absolute path.
    with jupyter_process("voila", str(ROOT / "notebooks")) as server:
        yield server


class Visit:
    """One notebook open in one front end: the page, what it logged, and its kernel."""

    def __init__(self, page: Page, watch: Watch, server: Server, where: str, stem: str) -> None:
        self.page, self.watch, self.server, self.where, self.stem = page, watch, server, where, stem
        self._kernel: Kernel | None = None

    @property
    def kernel(self) -> Kernel:
        if self._kernel is None:
            assert len(self.watch.kernels) == 1, f"expected one kernel socket, saw {self.watch.kernels}"
            self._kernel = Kernel(self.server.runtime, self.watch.kernels[0])
            self._kernel.value(PROBE_SETUP, "1")
        return self._kernel

    def state(self, expression: str) -> Any:
        return self.kernel.value("", expression)

    def snap(self, panel: Locator, state: str) -> None:
        """The panel scrolled to the top of the viewport, saved as <where>-<stem>-<state>.png."""
        top(panel)
        screenshot(self.page, f"{self.where}-{self.stem}-{state}")

    def log_entries(self) -> int:
        """New entries the JupyterLab Log Console counts (0 in Voila, which has none)."""
        if self.where != "lab":
            return 0
        item = self.page.locator(".jp-LogConsoleStatusItem")
        text = item.inner_text().strip() if item.count() else ""
        digits = re.findall(r"\d+", text)
        return int(digits[0]) if digits else 0

    def close(self) -> None:
        if self._kernel is not None:
            self._kernel.close()
        if self.where == "lab":  # the notebook closed unsaved, its kernel stopped (and by the API, if the close failed)
            close_notebooks(self.page)
            for kernel_id in self.watch.kernels:
                request = urllib.request.Request(f"{self.server.url}/api/kernels/{kernel_id}", method="DELETE")
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(request, timeout=10).close()


# Kernel-side helpers, run once per visit in the notebook's own kernel (a silent execute).
PROBE_SETUP = """
import gc as _emq_gc
import emq_lab as _emq
from emq_lab.dives import cadence as _emq_cadence, race as _emq_race
_emq_probe = _emq.connect()  # the embedded backend is one server per kernel: the notebook's data

def _emq_instances(kind):
    return [o for o in _emq_gc.get_objects() if type(o).__name__ == kind and type(o).__module__.startswith("emq_lab.")]

def _emq_registry(queue):
    rep = _emq_probe.repeat(queue)
    return {"size": rep.count(), "members": [name for name, _ in rep.entries()]}

def _emq_jobs(queue):
    return _emq_probe.jobs(queue).browse(limit=1000)

def _emq_lanes(controls):
    found = [e for e in _emq_instances("CadenceExplorer") if e.controls == controls]
    if not found:
        return None
    e = found[0]
    m = _emq_cadence.MINUTE_MS
    t = _emq_cadence.trace(e.lab, every_ms=controls["period_minutes"] * m, run_ms=controls["run_minutes"] * m,
        cycles=controls["cycles"], tick_ms=controls["tick_seconds"] * 1000, start_ms=e.start_ms, prefix="emq-probe")
    return {"readout": t.readout,
            "releases": {l.measure.value: [(r - t.start_ms) / m for r in l.releases] for l in t.lanes}}
"""


@pytest.fixture(scope="module")
def handed_on() -> Iterator[dict[str, Visit]]:
    """Voila pages a dive's Next link opened, by notebook name, for that notebook's test to take
    (then Voila runs the dive once, not once more for the link); closed at the end if none did."""
    waiting: dict[str, Visit] = {}
    yield waiting
    for visit in waiting.values():
        visit.close()
        visit.page.context.close()


@pytest.fixture(scope="module")
def lab_page(browser: Any) -> Iterator[tuple[Page, Watch]]:
    """One JupyterLab page for the module's notebooks: JupyterLab loads once, and each notebook
    opens in it as a learner opens the next dive (run_all_in_lab), the one before closed and its
    kernel stopped. Its watch is cleared for each notebook."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.set_default_timeout(60_000)
    watch = Watch()
    watch.attach(page)
    yield page, watch
    context.close()


@pytest.fixture
def visit_factory(
    browser: Any, handed_on: dict[str, Visit], request: pytest.FixtureRequest
) -> Iterator[Callable[[Server, str, str], Visit]]:
    opened: list[Visit] = []

    def open_visit(server: Server, where: str, stem: str, viewport: tuple[int, int] = (WIDTH, HEIGHT)) -> Visit:
        """The page a Next link handed on to ``stem`` if there is one, JupyterLab's page (lab_page)
        for "lab" at 1280x720, else a new page (at about:blank)."""
        visit = handed_on.pop(f"{stem}.ipynb", None) if where == "voila" else None
        if visit is None and where == "lab" and viewport == (WIDTH, HEIGHT):
            page, watch = request.getfixturevalue("lab_page")
            watch.clear()
            visit = Visit(page, watch, server, where, stem)
        if visit is None:
            context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
            page = context.new_page()
            page.set_default_timeout(60_000)
            watch = Watch()
            watch.attach(page)
            visit = Visit(page, watch, server, where, stem)
        opened.append(visit)
        return visit

    yield open_visit
    for visit in opened:
        visit.close()
        if visit.where == "lab":
            continue  # lab_page closes it
        if all(later.page is not visit.page for later in handed_on.values()):  # else it goes on as the next dive's
            visit.page.context.close()


# -- reading the page ------------------------------------------------------------------------------


def expect_text(locator: Locator, *texts: str) -> None:
    """Wait (Playwright auto-waiting, no sleeps) until ``locator`` shows every one of ``texts``."""
    from playwright.sync_api import expect

    for text in texts:
        expect(locator).to_contain_text(text, use_inner_text=True)


def top(locator: Locator) -> None:
    """Scroll ``locator`` to the top of the view. JupyterLab lays out an off-screen cell only at
    its estimated size (content-visibility), where an element inside it cannot be scrolled to:
    the cell comes on screen first, then the element."""
    locator.evaluate("el => (el.closest('.jp-Cell') || el).scrollIntoView({block: 'start'})")
    locator.page.wait_for_timeout(300)
    locator.evaluate("el => el.scrollIntoView({block: 'start'})")


def plotted(figure: Locator) -> list[dict[str, Any]]:
    """The traces plotly drew in this plot div (name, x, base), read from the page."""
    return list(
        figure.evaluate(
            "el => (el.data || []).map(t => ({name: t.name, x: Array.from(t.x || []), base: Array.from(t.base || [])}))"
        )
    )


def eventually(check: Callable[[], None], attempts: int = 40) -> None:
    """``check()`` until it passes; a page catching up with the kernel gets a few seconds, a
    page that disagrees for good fails with the last AssertionError."""
    for _ in range(attempts - 1):
        try:
            check()
            return
        except AssertionError:
            time.sleep(0.25)
    check()


def assert_equal(got: Any, expected: Any) -> None:
    assert got == expected, f"{got!r} != {expected!r}"


def in_viewport(locator: Locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT


def no_errors_in_outputs(page: Page) -> None:
    errors = page.locator('[data-mime-type="application/vnd.jupyter.stderr"], [data-mime-type*="error"]')
    assert errors.count() == 0, errors.first.inner_text()
    assert page.get_by_text("Error displaying widget").count() == 0


def button(panel: Locator, name: str) -> Locator:
    return panel.get_by_role("button", name=name, exact=True)


# -- one walk per panel kind, by the panel's class ---------------------------------------------------


def walk_boot(visit: Visit, panel: Locator) -> None:
    """BootPanel: fresh, Boot #2 before #1, Boot #2 again, each strategy, the period, Reset."""
    from playwright.sync_api import expect

    state = panel.locator(".emq-readout").first
    note = panel.locator(".emq-note")
    lit = panel.locator("div[style*='fde68a']")
    expect_text(state, ":repeat")
    queue = re.search(r"emq:\{([^}]+)\}:repeat", state.inner_text())
    assert queue, state.inner_text()

    def agree(size: int) -> None:
        expect_text(state, f"size {size}")
        assert visit.state(f"_emq_registry({queue.group(1)!r})")["size"] == size

    button(panel, "EXISTS guard").click()
    button(panel, "Reset").click()
    expect_text(note, f"queue {queue.group(1)} emptied, no boot yet")
    agree(0)
    visit.snap(panel, "boot-fresh")

    top(panel)
    button(panel, "Boot #2").click()  # before Boot #1: both run, and the note says so
    expect_text(note, "Boot #1 had not run, so it ran first; then Boot #2: {:ok, :exists}, registry size 1")
    expect_text(state, "boot #2", "{:ok, :exists}")
    agree(1)
    outcome = state.locator("code", has_text="{:ok, :exists}").first
    size = state.locator("b", has_text=re.compile(r"^\d+$")).first
    for what, shown in (
        ("outcome", outcome),
        ("registry size", size),
        ("a lit line", lit.first),
        ("Boot #2", button(panel, "Boot #2")),
    ):
        assert in_viewport(shown), f"{what} is outside the 1280x720 viewport after Boot #2"
    expect(lit).to_contain_text(["EXISTS", "return 0"])
    screenshot(visit.page, f"{visit.where}-{visit.stem}-boot-2-before-1")

    button(panel, "Boot #2").click()  # once it has run
    expect_text(note, "Boot #2 already ran — shown again, nothing new ran")
    agree(1)
    visit.snap(panel, "boot-2-again")

    second = {"naive append": ("{:ok, :registered}", 2), "ZSCORE upsert": ("{:ok, :updated}", 1)}
    for strategy, (tuple_, rows) in second.items():
        button(panel, strategy).click()
        expect_text(note, f"{strategy}: queue {queue.group(1)} emptied")
        agree(0)
        button(panel, "Boot #1").click()
        expect_text(state, "boot #1", "{:ok, :registered}")
        agree(1)
        button(panel, "Boot #2").click()
        expect_text(state, "boot #2", tuple_)
        agree(rows)
        visit.snap(panel, f"boot-{strategy.split()[0].lower()}")
        script = panel.locator(".emq-script")
        cut = script.evaluate(
            "el => [el, ...el.querySelectorAll('div')].filter(d => d.scrollWidth > d.clientWidth + 1).length"
        )
        assert cut == 0, f"{strategy}: {cut} element(s) of the script are wider than the view (a line is cut)"
        for what, shown in (("outcome", state.locator("code", has_text=tuple_).first), ("a lit line", lit.last)):
            assert in_viewport(shown), f"{strategy}: {what} is outside the 1280x720 viewport after Boot #2"

    panel.locator("select").first.select_option(label="30 min")
    expect_text(note, "next boot registers every 30 min; boots already run keep their period")
    button(panel, "#1").click()
    expect_text(state, "boot #1", "{:ok, :registered}")
    expect_text(note, "Boot #1 selected")
    visit.snap(panel, "boot-history")
    button(panel, "Reset").click()
    expect_text(state, "no boot yet", "size 0")
    expect(button(panel, "#1")).to_be_hidden()
    agree(0)


def walk_counter(visit: Visit, panel: Locator) -> None:
    """BootCounter: the table agrees with a fresh count per strategy (the queue is left empty)."""
    table = panel.locator(".emq-readout").first
    expect_text(table, "EXISTS guard", "naive append", "ZSCORE upsert")
    boots = int(re.search(r"after (\d+) boots?", table.inner_text()).group(1))  # type: ignore[union-attr]
    naive = table.locator("tr", has_text="naive append").inner_text().split("\t")
    assert naive[1].strip() == str(boots)  # one row per boot
    visit.snap(panel, "counter")


def cadence_slider(panel: Locator, label: str) -> Locator:
    return panel.locator(".widget-slider", has_text=label).first


CADENCE_CONTROLS = {
    "period_minutes": "period (min)",
    "run_minutes": "run (min)",
    "cycles": "cycles",
    "tick_seconds": "pump tick (s)",
}


def cadence_agrees(visit: Visit, panel: Locator) -> None:
    """The explorer's sliders -> the package's lanes; they must equal the readout and the plotted markers."""
    from playwright.sync_api import expect

    readout, figure = panel.locator(".emq-readout").first, panel.locator(".js-plotly-plot").first
    expect(panel.locator(".emq-note")).to_have_text("")  # not mid-redraw
    controls = {
        key: int(cadence_slider(panel, label).locator(".widget-readout").inner_text())
        for key, label in CADENCE_CONTROLS.items()
    }
    lanes = visit.state(f"_emq_lanes({controls!r})")
    assert lanes is not None, f"no explorer in the kernel holds the sliders' values {controls}"
    assert readout.inner_text().strip() == lanes["readout"].strip()
    shown = {t["name"]: t["x"] for t in plotted(figure)}
    for lane, releases in lanes["releases"].items():
        assert shown[lane] == pytest.approx(releases), (
            f"{lane}: the figure plots {shown[lane]}, the lanes say {releases}"
        )


def walk_cadence(visit: Visit, panel: Locator) -> None:
    """CadenceExplorer: as found (the state the cells left), typed values, a drag, 24 cycles."""
    from playwright.sync_api import expect

    readout = panel.locator(".emq-readout").first
    figure = panel.locator(".js-plotly-plot").first

    def slider(label: str) -> Locator:
        return cadence_slider(panel, label)

    def agree() -> None:
        cadence_agrees(visit, panel)

    def type_value(label: str, value: int) -> None:
        box = slider(label).locator(".widget-readout")
        box.click()
        visit.page.keyboard.press("Control+A")
        visit.page.keyboard.type(str(value))
        visit.page.keyboard.press("Enter")
        expect(box).to_have_text(str(value))

    agree()  # as the notebook's cells left it: Voila drew a stale first figure here
    visit.snap(panel, "cadence-as-found")
    for label, value in (("period (min)", 15), ("run (min)", 4), ("cycles", 4), ("pump tick (s)", 0)):
        type_value(label, value)
    expect_text(readout, "every 15 min, runs of 4 min, 4 cycles, the pump ticks exactly when due")
    agree()
    visit.snap(panel, "cadence-course")

    handle = slider("run (min)").locator(".noUi-handle")
    top(panel)
    box = handle.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    visit.page.mouse.move(x, y)
    visit.page.mouse.down()
    visit.page.mouse.move(x + 60, y, steps=8)
    visit.page.mouse.up()
    expect(readout).not_to_contain_text("runs of 4 min")
    agree()
    visit.snap(panel, "cadence-dragged")

    type_value("period (min)", 1)
    type_value("cycles", 24)
    expect_text(readout, "24 cycles")
    agree()
    marks = [x for x in next(t for t in plotted(figure) if t["name"] == "period marks")["x"] if x is not None]
    assert len(marks) // 2 <= 13, "the period marks would merge into a hatch"
    wrap = readout.locator("pre").evaluate("el => [getComputedStyle(el).whiteSpace, getComputedStyle(el).wordBreak]")
    assert wrap == ["pre-wrap", "normal"], f"the readout may wrap inside a time: {wrap}"
    figure.hover()
    modebar, title = figure.locator(".modebar").first, figure.locator(".gtitle").first
    expect(modebar).to_be_visible()
    a, b = modebar.bounding_box(), title.bounding_box()
    assert a and b and (a["x"] >= b["x"] + b["width"] or a["y"] >= b["y"] + b["height"]), "the toolbar covers the title"
    visit.snap(panel, "cadence-24-cycles")


def walk_fast_forward(visit: Visit, panel: Locator) -> None:
    """FastForwardPanel: the label whole; three quick clicks start one run, the button is off meanwhile."""
    from playwright.sync_api import expect

    go = panel.locator("button").first
    label = panel.locator(".emq-readout").first
    # Web-first: CI once read this label as "" just after the scroll; wait until it is drawn.
    expect(go).to_have_text(re.compile(r"\s*Fast-forward [\d,]+\s*"), use_inner_text=True)
    text = go.inner_text().strip()
    assert go.evaluate("el => el.scrollWidth <= el.clientWidth"), f"the label {text!r} is cut"
    starts = "sum(p.starts for p in _emq_instances('FastForwardPanel'))"
    before = visit.state(starts)
    top(panel)
    box = go.bounding_box()
    assert box is not None
    for _ in range(3):  # as fast as a learner's triple click, no waiting in between
        visit.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect_text(label, "running")
    expect(go).to_have_text(text)  # the label stays whole while it runs
    eventually(lambda: assert_equal(visit.state(starts), before + 1))
    visit.state("1")  # the clicks the page sent have been handled: still one run begun
    assert visit.state(starts) == before + 1, "three quick clicks began more than one run"
    # The run itself (as long as the cell's) is not waited for: the page and kernel close after.
    visit.snap(panel, "fast-forward-running")


def walk_cancel(visit: Visit, panel: Locator) -> None:
    """CancelPanel: steps by hand, a double click, a preset; the keyspace shown is the queue's."""
    from playwright.sync_api import expect

    log, keyspace = panel.locator(".emq-readout").nth(0), panel.locator(".emq-readout").nth(1)
    note = panel.locator(".emq-note")
    queue = keyspace.locator("tr", has_text="queue").locator("td").inner_text().strip()

    def agree(within_s: float = 5.0) -> None:
        """The keyspace shown is the queue's. The log and the keyspace are two widgets, updated
        one message apart: the page gets ``within_s`` to show the second before the check fails."""
        deadline = time.monotonic() + within_s
        while True:
            registry = visit.state(f"_emq_registry({queue!r})")
            jobs = visit.state(f"_emq_jobs({queue!r})")
            shown = keyspace.inner_text()
            members = re.search(r"registry \(ZSET\)\s+(.*)", shown).group(1)  # type: ignore[union-attr]
            listed = re.search(r"jobs \(wait list\)\s+(.*)", shown).group(1)  # type: ignore[union-attr]
            pair = (
                [m.split(" @ ")[0] for m in members.split(", ") if m != "empty"],
                sorted(j for j in listed.split(", ") if j != "none"),
            )
            if pair == (registry["members"], sorted(jobs)) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert pair[0] == registry["members"]
        assert pair[1] == sorted(jobs)

    button(panel, "reset").click()
    expect_text(note, f"reset: queue {queue} emptied")
    expect_text(log, "advance outcome: -")
    agree()
    # Reset shows the round the notebook printed beside the panel, though later cells (the crash
    # replays) have moved the lab's clock on since.
    printed = printed_registry(visit.stem, queue)
    shown = re.search(r"registry \(ZSET\)\s+(.*)", keyspace.inner_text()).group(1)  # type: ignore[union-attr]
    assert shown.strip() == printed, f"after Reset the panel shows registry {shown!r}; the notebook printed {printed!r}"
    expect(button(panel, "pump enqueues")).to_be_disabled()
    visit.snap(panel, "cancel-fresh")

    button(panel, "pump reads due").dblclick()  # a double click: the second is refused in words, if it lands
    expect_text(note, "pump reads due")
    expect(button(panel, "pump reads due")).to_be_disabled()
    visit.state("1")  # both clicks have been handled by now
    said = note.inner_text().strip()  # read once: a refusal landing late replaces the read's note
    refused = "pump reads due: that step already ran — press Reset or pick the next step (cancel lands, pump enqueues)"
    read = said.startswith(f"pump reads due: due: {printed}") and said.endswith("; the pump now holds it")
    assert said == refused or read, f"after a double click the note says {said!r}"
    taken = visit.state("[[s.step for s in p.race.taken] for p in _emq_instances('CancelPanel')]")
    assert ["read"] in taken, f"the double click took the read more than once: {taken}"
    agree()
    visit.snap(panel, "cancel-read")
    button(panel, "cancel lands").click()
    expect_text(log, "{:ok, :cancelled}")
    agree()
    button(panel, "pump enqueues").click()
    expect_text(log, "JOB-000001 enqueued")
    agree()
    button(panel, "pump advances").click()
    expect_text(log, "advance outcome: {:ok, :absent}")
    expect_text(keyspace, "invariant: every registry member has a record - holds")
    agree()
    visit.snap(panel, "cancel-advanced")

    presets = panel.locator("select").first
    chosen = presets.evaluate("el => el.options[el.selectedIndex].text").replace("\xa0", " ")  # ipywidgets' nbsp
    preset, outcome = next(
        (label, outcome)
        for label, outcome in (("cancel after the advance", "{:ok, :advanced}"), ("cancel before the read", "-"))
        if label != chosen  # a change, so the menu has something to say
    )
    presets.select_option(label=preset)
    expect_text(note, "press play preset")
    button(panel, "play preset").click()
    expect_text(note, f"played '{preset}'")
    expect_text(log, f"advance outcome: {outcome}")
    agree()
    visit.snap(panel, "cancel-preset")


def printed_registry(stem: str, queue: str) -> str:
    """The registry line the stored notebook printed for the CancelPanel on ``queue``."""
    for cell in json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/plain", ""))
            if re.match(rf"race on .*, queue {re.escape(queue)}( |$)", text.split("\n")[0]):
                return re.search(r"^registry: (.*)$", text, re.M).group(1)  # type: ignore[union-attr]
    raise AssertionError(f"{stem}.ipynb prints no CancelPanel on queue {queue}")


def walk_crash(visit: Visit, panel: Locator) -> None:
    """CrashPanel: the fault switch looks different on and off; fresh ids duplicate, slot-keyed do not."""
    from playwright.sync_api import expect

    bench = panel.locator(".emq-readout").first
    queue = bench.locator("code").first.inner_text().strip()
    fault = panel.get_by_role("button", name=re.compile(r"fault (ON|off)"))

    def agree(duplicates: str) -> None:
        expect_text(bench, duplicates)
        jobs = visit.state(f"_emq_jobs({queue!r})")
        shown = re.findall(r"(JOB-\d+|report:\d+)", bench.inner_text().split("jobs per slot")[-1])
        assert sorted(set(shown)) == sorted(jobs)

    note = panel.locator(".emq-note").first
    for ids, duplicates in (("fresh JOB- ids", "duplicates: 1"), ("slot-keyed <name>:<slot_ms>", "duplicates: 0")):
        choice = button(panel, ids)
        changes = "mod-active" not in (choice.get_attribute("class") or "")
        choice.click()
        if changes:
            # Every control is off while a click's action runs: a Reset pressed before the new
            # id mode's round has begun could land on a disabled button (as a person's would).
            expect_text(note, "a new round on an emptied queue")
        button(panel, "Reset").click()
        # The readout reads "no ticks yet" before the Reset too: its note says when it has run.
        expect_text(note, "reset: queue")
        expect_text(bench, "no ticks yet", "duplicates: 0")
        agree("duplicates: 0")
        if "ON" in fault.inner_text():
            fault.click()
        expect(fault).to_have_text(re.compile("fault off"))
        off = fault.evaluate("el => getComputedStyle(el).backgroundColor")
        fault.click()
        expect(fault).to_have_text(re.compile("fault ON"))
        expect(fault).to_have_class(re.compile("mod-danger"))
        assert fault.evaluate("el => getComputedStyle(el).backgroundColor") != off, (
            "the switch looks the same on and off"
        )
        button(panel, "Tick (and restart)").click()
        expect_text(bench, "then crashed before advance")
        button(panel, "Tick (and restart)").click()
        expect_text(bench, "restart:")
        agree(duplicates)
        visit.snap(panel, f"crash-{ids.split()[0].replace('-', '')}")


def walk_classroom(visit: Visit, panel: Locator) -> None:
    """The instructor's overview: both demo learners listed, and a Refresh that keeps them."""
    table = panel.locator(".emq-readout").first
    expect_text(table, "demo-ada", "01 upsert", "demo-bo", "02 cadence, 03 cancel", "cadence-live")
    panel.locator("button", has_text="Refresh").click()
    expect_text(table, "demo-ada", "reports", "demo-bo", "cancel")
    # every check in view at 1280x720: the table wraps between checks instead of running past the edge
    wide = table.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert wide[0] <= wide[1] + 1, f"the class table is {wide[0]} px wide in a panel of {wide[1]} px"
    visit.snap(panel, "instructor-panel")


def walk_predict(visit: Visit, panel: Locator) -> None:
    """The dive's first prediction form, as a learner (JupyterLab) or a presenter typing the room's
    answer (Voila) uses it: a wrong answer typed and Enter pressed, then the right one (read off the
    wrong verdict) and Check clicked. Each verdict is said right below in a polite live region, the
    box is labelled with its question, the focus stays where the learner was, and the result is in
    the learner's progress."""
    page, verdict = visit.page, panel.locator(".emq-verdict")
    box, check = panel.locator("input[type=text]").first, button(panel, "Check")
    expect_text(verdict, "not checked yet")
    eventually(lambda: assert_equal(verdict.get_attribute("aria-live"), "polite"))
    question = box.evaluate("el => el.labels.length ? el.labels[0].textContent : ''")
    assert "?" in question, f"the box is not labelled with its question: {question!r}"
    box.fill("999")
    box.press("Enter")
    expect_text(verdict, "not quite - you said 999, it is ")
    assert focused(box), "Enter in the box moved the focus"
    found = re.search(r"(\w+): not quite - you said 999, it is (\d+)\b", verdict.inner_text())
    assert found, verdict.inner_text()
    key, right = found.groups()
    visit.snap(panel, "predict-wrong")
    box.fill(right)
    check.click()
    expect_text(verdict, f"{key}: right - ")
    eventually(lambda: assert_equal(focused(check), True))  # the button, disabled while it ran, has it back
    visit.snap(panel, "predict-right")
    dive = re.search(r"\((\w+)\)", check.get_attribute("title") or "").group(1)  # type: ignore[union-attr]
    recorded = visit.state(f"_emq_probe.client.hget(_emq.keys.progress(_emq_probe.namespace), '{dive}.predict')")
    assert str(recorded).startswith("passed "), recorded
    assert page.get_by_text("Traceback").count() == 0


WALKS: dict[str, Callable[[Visit, Locator], None]] = {
    ".emq-predict": walk_predict,
    ".emq-boot-panel": walk_boot,
    ".emq-boot-counter": walk_counter,
    ".emq-cadence-explorer": walk_cadence,
    ".emq-fast-forward": walk_fast_forward,
    ".emq-cancel-panel": walk_cancel,
    ".emq-crash-panel": walk_crash,
    ".emq-classroom-panel": walk_classroom,
}


def walk_panels(visit: Visit) -> list[str]:
    """Walk the first panel of each kind the page shows; the kinds walked."""
    from playwright.sync_api import expect

    before = visit.log_entries()
    walked = []
    for selector, walk in WALKS.items():
        found = visit.page.locator(selector)
        if found.count():
            top(found.first)  # JupyterLab renders cells lazily: bring the panel on screen first
            readout = found.first.locator(".emq-readout").first
            readout.wait_for(state="visible")
            expect(readout).to_have_text(re.compile(r"\S"), use_inner_text=True)  # drawn, not only placed
            walk(visit, found.first)
            walked.append(selector)
    visit.state("1")  # every click the page sent has been handled by now
    assert visit.log_entries() == before, "the walk added entries to the Log Console"
    return walked


def run_all_in_lab(page: Page, base: str, notebook: str) -> None:
    """Open ``notebook`` (in the JupyterLab already on the page if there is one), Run All, wait until it ran."""
    # ?reset: a fresh workspace, not the one a run before left
    # Running before the kernel is idle silently does nothing, so open_notebook waits for it first.
    url = f"{base}/lab/tree/notebooks/{notebook}?reset"
    open_notebook(page, f"{base}/lab", f"notebooks/{notebook}", url, timeout_ms=90_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()
    page.locator(".jp-InputArea-prompt", has_text="[*]").first.wait_for(state="detached", timeout=240_000)
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=120_000)


@pytest.mark.xdist_group("browser-lab")
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_in_jupyterlab(visit_factory: Callable[..., Visit], lab_server: Server, notebook: Any) -> None:
    visit = visit_factory(lab_server, "lab", notebook.stem)
    run_all_in_lab(visit.page, lab_server.url, notebook.name)
    no_errors_in_outputs(visit.page)
    if has_panels(notebook):  # 00-start has none
        assert walk_panels(visit), "no panel found on the page"
    # the notebook's own content: its prose and outputs, not JupyterLab's editors and toolbars
    found = axe_violations(visit.page, [".jp-MarkdownOutput", ".jp-OutputArea"])
    assert not found, "axe-core, serious or critical:\n" + "\n".join(found)
    if has_panels(notebook):
        if notebook in DIVES:  # the instructor's table is checked by its walk (it fits the panel)
            words_whole_at_1280x800_beside_the_file_browser(visit)
        panels_read_in_the_dark_theme(visit)
    visit.watch.assert_clean()


def panels_read_in_the_dark_theme(visit: Visit) -> None:
    """In JupyterLab's dark theme (the learner switches it from the Settings menu, as here) every
    panel's text keeps its contrast (axe-core's colour-contrast rule among the rest): nothing dark
    on dark, nothing light on a light highlight. The theme is switched back after."""
    page = visit.page
    switch_theme(page, "JupyterLab Dark")
    try:
        for readout in page.locator(".emq-readout").all()[:3]:
            top(readout)
        found = axe_violations(page, [".jp-MarkdownOutput", ".jp-OutputArea"])
        assert not found, "axe-core in the dark theme, serious or critical:\n" + "\n".join(found)
        visit.snap(page.locator(".emq-readout").first, "dark")
    finally:
        switch_theme(page, "JupyterLab Light")


def switch_theme(page: Page, theme: str) -> None:
    """Settings > Theme > ``theme``, then wait until the page wears it."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click()
    page.locator(".lm-Menu .lm-Menu-itemLabel").get_by_text("Theme", exact=True).click()
    page.locator(".lm-Menu .lm-Menu-itemLabel").get_by_text(theme, exact=True).click()
    light = "false" if "Dark" in theme else "true"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    page.wait_for_timeout(500)  # the theme's stylesheet swaps in after the attribute


@pytest.mark.xdist_group("browser-voila")
def test_a_request_that_would_leave_the_machine_fails_and_is_kept(browser: Any, voila_server: Server) -> None:
    """The guard every walk's page has: a request off loopback is refused and its Watch keeps it,
    while a request to loopback answers and is not kept."""
    context = browser.new_context()
    try:
        page = context.new_page()
        watch = Watch()
        watch.attach(page)
        fetch = "url => fetch(url, {mode: 'no-cors'}).then(() => 'answered', e => 'failed: ' + e)"
        assert page.evaluate(fetch, f"{voila_server.url}/api/status") == "answered"
        # a name Chromium itself resolves to loopback, but not one the page may use
        probe = f"http://emq-lab-probe.localhost:{urlsplit(voila_server.url).port}/api/status"
        outcome = page.evaluate(fetch, probe)
        assert outcome.startswith("failed"), outcome
        assert watch.external == [probe]
    finally:
        context.close()


@pytest.mark.xdist_group("browser-voila")
def test_the_folder_page_lists_every_notebook_and_asks_nothing_off_the_machine(
    browser: Any, voila_server: Server
) -> None:
    """The page ``make present`` serves at its root (an offline class may open it to pick a dive):
    every notebook listed, linked to its Voila page, no request off loopback (Voila's own page
    links a stylesheet on a CDN), no console error (Voila's JupyterLab-style listing logs some),
    no serious axe-core finding. Screenshot voila-folder."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page = context.new_page()
        watch = Watch()
        watch.attach(page)
        page.goto(f"{voila_server.url}/", wait_until="load")
        links = page.locator("a[href*='/voila/render/']")
        links.first.wait_for()
        hrefs = links.evaluate_all("els => els.map(e => e.href)")
        assert sorted(urlsplit(href).path.rsplit("/", 1)[-1] for href in hrefs) == [nb.name for nb in NOTEBOOKS]
        screenshot(page, "voila-folder")
        found = axe_violations(page, ["body"])
        assert not found, "axe-core, serious or critical:\n" + "\n".join(found)
        watch.assert_clean()
    finally:
        context.close()


@pytest.mark.xdist_group("browser-voila")
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_in_voila(
    visit_factory: Callable[..., Visit], voila_server: Server, handed_on: dict[str, Visit], notebook: Any
) -> None:
    visit = visit_factory(voila_server, "voila", notebook.stem)
    if visit.page.url == "about:blank":  # no earlier dive's Next link opened this one
        visit.page.goto(f"{voila_server.url}/voila/render/{notebook.name}", wait_until="commit", timeout=240_000)
    loaded = ".emq-readout" if has_panels(notebook) else "text=You are here"
    visit.page.locator(loaded).first.wait_for(timeout=240_000)
    no_errors_in_outputs(visit.page)
    if has_panels(notebook):
        walked = walk_keys(visit)
        assert walked, "no panel answered the keyboard"
        kinds = {selector for selector in WALKS if visit.page.locator(selector).count()}
        assert set(walked) == kinds, f"panels the keyboard walk does not operate: {kinds - set(walked)}"
        layout_at_1280x720(visit)
    found = axe_violations(visit.page, ["body"])
    assert not found, "axe-core, serious or critical:\n" + "\n".join(found)
    visit.watch.assert_clean()
    if notebook in DIVES:
        following = next_dive(notebook)
        handed_on[following.name] = links_lead_on_and_the_page_left_ends_its_kernel(visit, voila_server, following)


DIVES = [nb for nb in NOTEBOOKS if nb.stem[:2].isdigit()]


def next_dive(notebook: Any) -> Any:
    return DIVES[(DIVES.index(notebook) + 1) % len(DIVES)]


def links_lead_on_and_the_page_left_ends_its_kernel(visit: Visit, voila_server: Server, following: Any) -> Visit:
    """The **Next:** link (or Back to 00) opens the next dive as a Voila page, not a 403; the page
    left behind shuts its kernel down (its beacon carries the _xsrf token the server checks). The
    page opened, with its own watch from the click on, is returned for the next dive's test."""
    page = visit.page
    deadline = time.monotonic() + 120
    while not visit.watch.kernels and time.monotonic() < deadline:  # the page connects to its kernel
        page.wait_for_timeout(250)
    assert visit.watch.kernels, "the page opened no kernel"
    left = visit.watch.kernels[0]
    alive = lambda: bool(list(voila_server.runtime.rglob(f"kernel-{left}.json")))  # noqa: E731
    assert alive()
    link = page.locator(f'a[href$="{following.name}"]').last
    assert link.evaluate("a => getComputedStyle(a).textDecorationLine") == "underline"  # not by colour alone
    watch = Watch()  # the next page's: its errors and its kernel (the first watch keeps this page's)
    watch.attach(page)
    link.click()
    # Voila answers once the notebook has run (the page's load event comes after): under load
    # that is minutes, so the URL is awaited at commit and the page's content by its own wait.
    page.wait_for_url(f"**/voila/render/{following.name}", wait_until="commit", timeout=240_000)
    page.locator("text=You are here").first.wait_for(timeout=240_000)
    assert "403" not in page.title()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and alive():
        time.sleep(0.25)
    assert not alive(), "the page left behind kept its kernel running"
    return Visit(page, watch, voila_server, "voila", following.stem)


def has_panels(notebook: Any) -> bool:
    """True when the stored notebook displays a widget (every dive does; the start page does not)."""
    return "application/vnd.jupyter.widget-view+json" in notebook.read_text()


# -- the keyboard alone ------------------------------------------------------------------------------


def focused(target: Locator) -> bool:
    return bool(target.evaluate("el => el === document.activeElement || el.contains(document.activeElement)"))


def tab_to(page: Page, target: Locator, limit: int = 400) -> int:
    """Press Tab (Shift+Tab when ``target`` comes before the focus) until ``target`` has the
    focus; how many presses it took. Fails when the tab order never reaches it."""
    before = target.evaluate(
        "el => { const f = document.activeElement; return !!f && f !== document.body && "
        "!!(el.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING); }"
    )
    key = "Shift+Tab" if before else "Tab"
    for presses in range(1, limit + 1):
        page.keyboard.press(key)
        if focused(target):
            return presses
    raise AssertionError(f"{limit} presses of {key} never gave the focus to {target}")


def press(page: Page, target: Locator, key: str) -> None:
    """Tab to ``target`` and press ``key`` there (Enter, Space, an arrow)."""
    tab_to(page, target)
    page.keyboard.press(key)


def keys_boot(visit: Visit, panel: Locator) -> None:
    page, state, note = visit.page, panel.locator(".emq-readout").first, panel.locator(".emq-note")
    queue = re.search(r"emq:\{([^}]+)\}:repeat", state.inner_text()).group(1)  # type: ignore[union-attr]
    press(page, button(panel, "EXISTS guard"), "Enter")  # whichever strategy the page showed
    press(page, button(panel, "Reset"), "Enter")
    expect_text(state, "no boot yet", "size 0")
    press(page, button(panel, "Boot #1"), "Space")
    expect_text(state, "boot #1", "{:ok, :registered}")
    press(page, button(panel, "Boot #2"), "Enter")
    expect_text(state, "boot #2", "{:ok, :exists}")
    assert visit.state(f"_emq_registry({queue!r})")["size"] == 1
    period = panel.locator("select").first
    options = period.evaluate("el => [...el.options].map(o => o.text.replace(/\\s+/g, ' '))")
    at = int(period.evaluate("el => el.selectedIndex"))
    step, key = (1, "ArrowDown") if at + 1 < len(options) else (-1, "ArrowUp")
    press(page, period, key)  # the next period in the menu (the one before, at the end of it)
    expect_text(note, f"next boot registers every {options[at + step]}")
    press(page, button(panel, "naive append"), "Enter")  # a strategy: a new round on an emptied queue
    expect_text(note, f"naive append: queue {queue} emptied")
    assert visit.state(f"_emq_registry({queue!r})")["size"] == 0


def step_within(slider: Locator, value: float) -> int:
    """One arrow key's step on ``slider`` at ``value`` that stays on it: up, or down at its top."""
    return -1 if value >= float(slider.get_attribute("aria-valuemax") or 0) else 1


def keys_counter(visit: Visit, panel: Locator) -> None:
    table = panel.locator(".emq-readout").first
    boots = int(re.search(r"after (\d+) boots?", table.inner_text()).group(1))  # type: ignore[union-attr]
    slider = panel.locator('[role="slider"]').first
    step = step_within(slider, boots)
    press(visit.page, slider, "ArrowRight" if step > 0 else "ArrowLeft")
    expect_text(table, f"after {boots + step} boot")
    naive = table.locator("tr", has_text="naive append").inner_text().split("\t")
    assert naive[1].strip() == str(boots + step)


def keys_cadence(visit: Visit, panel: Locator) -> None:
    """The figure as the cells left it (Voila once drew a stale first one), then the run slider
    moved by an arrow key: the readout and the figure follow."""
    readout = panel.locator(".emq-readout").first
    cadence_agrees(visit, panel)
    run = cadence_slider(panel, "run (min)")
    minutes = int(run.locator(".widget-readout").inner_text())
    slider = run.locator('[role="slider"]')
    step = step_within(slider, minutes)
    press(visit.page, slider, "ArrowRight" if step > 0 else "ArrowLeft")
    expect_text(readout, f"runs of {minutes + step} min")
    cadence_agrees(visit, panel)


def keys_fast_forward(visit: Visit, panel: Locator) -> None:
    from playwright.sync_api import expect

    """Enter starts a run and the focus stays on the button; the panels walked next are walked
    while it runs, and the run's end takes no focus from them."""
    go, label = panel.locator("button").first, panel.locator(".emq-readout").first  # "Fast-forward 10,000"
    expect(label).not_to_contain_text("running", timeout=120_000)  # no run going before the press
    press(visit.page, go, "Enter")
    expect_text(label, "running")
    assert focused(go)


def keys_cancel(visit: Visit, panel: Locator) -> None:
    page, log, note = visit.page, panel.locator(".emq-readout").first, panel.locator(".emq-note")
    press(page, button(panel, "reset"), "Enter")
    expect_text(note, "reset: queue")
    expect_text(log, "advance outcome: -")
    press(page, button(panel, "pump reads due"), "Space")
    expect_text(log, "pump reads due")
    presets = panel.locator("select").first
    chosen = presets.input_value()
    press(page, presets, "ArrowDown")
    expect_text(note, "press play preset")
    assert presets.input_value() != chosen
    label = presets.evaluate("el => el.options[el.selectedIndex].text").replace("\xa0", " ")  # ipywidgets' nbsp
    press(page, button(panel, "play preset"), "Enter")
    expect_text(note, f"played '{label}'")
    expect_text(log, "cancel lands", "advance outcome:")


def keys_crash(visit: Visit, panel: Locator) -> None:
    from playwright.sync_api import expect

    bench = panel.locator(".emq-readout").first
    fault = panel.get_by_role("button", name=re.compile(r"fault (ON|off)"))
    if "ON" in fault.inner_text():
        press(visit.page, fault, "Space")
    expect(fault).to_have_text(re.compile("fault off"))
    press(visit.page, fault, "Space")
    expect(fault).to_have_text(re.compile("fault ON"))
    press(visit.page, button(panel, "Tick (and restart)"), "Enter")
    expect_text(bench, "then crashed before advance")


def keys_predict(visit: Visit, panel: Locator) -> None:
    """Tab to the form's first box, type, Enter: the verdict comes and the focus stays in the box."""
    page, verdict, box = visit.page, panel.locator(".emq-verdict"), panel.locator("input[type=text]").first
    tab_to(page, box)
    page.keyboard.press("Control+A")
    page.keyboard.type("998")
    page.keyboard.press("Enter")
    expect_text(verdict, "you said 998")
    assert focused(box)


def keys_classroom(visit: Visit, panel: Locator) -> None:
    """Refresh by Enter keeps both demo learners; Space switches the automatic refresh."""
    from playwright.sync_api import expect

    table = panel.locator(".emq-readout").first
    press(visit.page, panel.locator("button", has_text="Refresh"), "Enter")  # found as walk_classroom finds it
    expect_text(table, "demo-ada", "reports", "demo-bo", "cancel")
    auto = panel.locator("input[type=checkbox]").first
    was = auto.is_checked()
    press(visit.page, auto, "Space")
    expect(auto).to_be_checked(checked=not was)


KEYS: dict[str, Callable[[Visit, Locator], None]] = {
    ".emq-boot-panel": keys_boot,
    ".emq-boot-counter": keys_counter,
    ".emq-cadence-explorer": keys_cadence,
    ".emq-fast-forward": keys_fast_forward,
    ".emq-cancel-panel": keys_cancel,
    ".emq-crash-panel": keys_crash,
    ".emq-predict": keys_predict,
    ".emq-classroom-panel": keys_classroom,
}


def walk_keys(visit: Visit) -> list[str]:
    """One panel of each kind, operated with Tab, Enter, Space and the arrow keys only (no
    click): a button pressed from the keyboard, a slider moved by its arrows and a preset picked
    in its menu change the readout as a click does. The kinds walked."""
    from playwright.sync_api import expect

    walked = []
    for selector, walk in KEYS.items():
        found = visit.page.locator(selector)
        if found.count():
            top(found.first)
            expect(found.first.locator(".emq-readout").first).to_have_text(re.compile(r"\S"), use_inner_text=True)
            walk(visit, found.first)
            walked.append(selector)
    return walked


# -- 1280x800 with the file browser open ---------------------------------------------------------

# Per readout: each word (a run of non-space characters in one text node), reply tuple
# ({:ok, :exists}) and registry row (report @ 09:45) must sit on one line and inside the
# readout's box; the readout itself must not need a sideways scroll.
BROKEN_WORDS = """el => {
  const found = [];
  const box = el.getBoundingClientRect();
  if (el.scrollWidth > el.clientWidth + 1) {
    found.push(`the readout scrolls sideways (${el.scrollWidth} > ${el.clientWidth} px)`);
  }
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.textContent.matchAll(/\\{:ok, :\\w+\\}|[\\w:.-]+ @ \\d{2}:\\d{2}|\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      if (new Set(rects.map((r) => Math.round(r.top))).size > 1) found.push(`"${m[0]}" breaks across lines`);
      else if (rects.some((r) => r.right > box.right + 1)) found.push(`"${m[0]}" runs past the readout's edge`);
    }
  }
  return found;
}"""


def words_whole_at_1280x800_beside_the_file_browser(visit: Visit) -> None:
    """A laptop's 1280x800 with JupyterLab's file browser open beside the notebook: no readout
    line of any panel breaks inside a word or a time (``next run 0⏎9:15``) or runs off its box.
    The first panel of each kind is saved as test-artifacts/lab800-<dive>-<kind>.png (the rest
    look alike, as in Voila's); the viewport and the file browser are put back after."""
    from playwright.sync_api import expect

    page = visit.page
    page.set_viewport_size({"width": 1280, "height": 800})
    browser_panel = page.locator("#filebrowser")
    was_open = browser_panel.is_visible()
    try:
        if not was_open:
            page.locator('.jp-SideBar [data-id="filebrowser"]').first.click()
        expect(browser_panel).to_be_visible()
        assert browser_panel.bounding_box()["width"] >= 200  # type: ignore[index]
        broken, shown = [], 0
        for selector in WALKS:
            for index, panel in enumerate(page.locator(selector).all()):
                top(panel)
                shown += 1
                for readout in panel.locator(".emq-readout").all():
                    broken += [f"{selector} #{shown}: {line}" for line in readout.evaluate(BROKEN_WORDS)]
                if index == 0:
                    screenshot(page, f"lab800-{visit.stem}-{selector.removeprefix('.emq-')}")
        assert shown, "no panel found on the page"
        assert not broken, "\n".join(broken)
    finally:
        page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
        if not was_open:  # closed again, as the next notebook on this page expects it
            page.locator('.jp-SideBar [data-id="filebrowser"]').first.click()


# -- Voila at 1280x720 ---------------------------------------------------------------------------

CUT_LABELS = """el => [...el.querySelectorAll('button')]
  .filter((b) => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map((b) => b.innerText.trim())"""
CUT_SCRIPT = "el => [el, ...el.querySelectorAll('div')].filter(d => d.scrollWidth > d.clientWidth + 1).length"


def layout_at_1280x720(visit: Visit) -> None:
    """Voila's own layout at 1280x720, panel by panel: no readout word broken across lines or past
    its box, no readout scrolling sideways (the class table included), no button label cut, no
    line of a shown script cut. The first panel of each kind is saved as
    test-artifacts/voila-<dive>-<kind>.png (a 1280x720 capture each: the rest look alike)."""
    page, broken, shown = visit.page, [], 0
    for selector in WALKS:
        for index, panel in enumerate(page.locator(selector).all()):
            top(panel)
            shown += 1
            where = f"{selector} #{shown}"
            for readout in panel.locator(".emq-readout").all():
                broken += [f"{where}: {line}" for line in readout.evaluate(BROKEN_WORDS)]
            broken += [f"{where}: the button label {label!r} is cut" for label in panel.evaluate(CUT_LABELS)]
            for script in panel.locator(".emq-script").all():
                if cut := script.evaluate(CUT_SCRIPT):
                    broken.append(f"{where}: {cut} element(s) of the script are wider than the view (a line is cut)")
            if index == 0:
                screenshot(page, f"voila-{visit.stem}-{selector.removeprefix('.emq-')}")
    assert shown, "no panel found on the page"
    assert not broken, "\n".join(broken)
