"""Every notebook in a real browser: JupyterLab (run all, then use the widgets as a learner
would) and Voila (the instructor's presentation mode). Debian's Chromium, driven by Playwright."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from browser import ARTIFACTS, CHROMIUM_ARGS, ROOT, chromium_path, jupyter_process, screenshot, skip_or_fail

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
Page = Any  # playwright.sync_api.Page, imported lazily so a missing package can skip loudly


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    if executable is None:
        skip_or_fail("no Chromium at /usr/bin/chromium (Debian: apt-get install --no-install-recommends chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("the Python package 'playwright' is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def lab_url(browser: Any) -> Iterator[str]:
    with jupyter_process("lab") as base:
        yield base


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def run_all_in_lab(page: Page, base: str, notebook: str) -> None:
    # ?reset: a fresh workspace, or the lab restores the previous test's notebook as a hidden tab
    # and `.first` locators can land in it.
    page.goto(f"{base}/lab/tree/notebooks/{notebook}?reset")
    # Running before the kernel is idle silently does nothing, so wait for it first.
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=90_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()
    page.locator(".jp-InputArea-prompt", has_text="[*]").first.wait_for(state="detached", timeout=120_000)
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for(timeout=120_000)


def assert_no_errors(page: Page) -> None:
    errors = page.locator(
        '[data-mime-type="application/vnd.jupyter.stderr"], .jp-RenderedText[data-mime-type*="error"]'
    )
    assert errors.count() == 0, errors.first.inner_text()
    assert page.get_by_text("Error displaying widget").count() == 0


def readout_of(page: Page, marker: str) -> str:
    """The text of the first rendered panel readout containing ``marker``."""
    readout = page.locator(".emq-readout", has_text=marker).first
    readout.wait_for()
    return str(readout.inner_text())


# Each notebook's learner walk-through: clicks, then assertions on what the page shows.
WALKS: dict[str, Callable[[Page], None]] = {}


def walk(stem: str) -> Callable[[Callable[[Page], None]], Callable[[Page], None]]:
    def register(fn: Callable[[Page], None]) -> Callable[[Page], None]:
        WALKS[stem] = fn
        return fn

    return register


def expect_text(locator: Any, *texts: str) -> None:
    """Wait (Playwright auto-waiting, no sleeps) until ``locator`` shows every one of ``texts``."""
    from playwright.sync_api import expect

    for text in texts:
        expect(locator).to_contain_text(text, use_inner_text=True)


def snap(page: Page, locator: Any, name: str) -> None:
    """A screenshot of one element mid-walk, as ``lab-<name>.png`` or ``voila-<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    where = "lab" if "/lab/" in page.url else "voila"
    locator.screenshot(path=str(ARTIFACTS / f"{where}-{name}.png"))


@walk("01-upsert")
def upsert_walk(page: Page) -> None:
    """The BootPanel: two boots under each strategy, Reset, and a past boot selected again."""
    from playwright.sync_api import expect

    state = page.locator(".emq-readout", has_text="emq:{reports}:repeat").first
    panel = state.locator("xpath=../..")  # the panel's box: strategy, controls, boots, views
    lit = state.locator("xpath=..").locator("div[style*='fde68a']")  # the script's lit lines

    def button(name: str) -> Any:
        return panel.get_by_role("button", name=name, exact=True)

    # strategy -> what boot #2 answers and the registry size after it
    second = {
        "EXISTS guard": ("{:ok, :exists}", "size 1"),
        "naive append": ("{:ok, :registered}", "size 2"),
        "ZSCORE upsert": ("{:ok, :updated}", "size 1"),
    }
    for strategy in ("naive append", "ZSCORE upsert", "EXISTS guard"):
        button(strategy).click()
        button("Reset").click()  # the strategy may already be the selected one
        expect_text(state, f"strategy {strategy}", "no boot yet", "size 0")
        button("Boot #1").click()
        expect_text(state, "boot #1", "{:ok, :registered}", "size 1")
        button("Boot #2").click()
        expect_text(state, "boot #2", *second[strategy])

    snap(page, panel, "01-upsert-boot2")
    # EXISTS guard, boot #2 selected: only the probe and the early return are lit.
    expect(lit).to_have_count(2)
    expect(lit).to_contain_text(["EXISTS", "return 0"])
    button("#1").click()
    expect_text(state, "boot #1", "{:ok, :registered}", "record absent, HSET + ZADD")
    expect(lit).to_have_count(4)
    expect(lit).to_contain_text(["EXISTS", "HSET", "ZADD", "return 1"])

    button("Reset").click()
    expect_text(state, "no boot yet", "size 0")  # the registry is empty again
    expect(button("#1")).to_be_hidden()  # no boots, no history row
    panel.scroll_into_view_if_needed()


@walk("02-cadence")
def cadence_walk(page: Page) -> None:
    """The CadenceExplorer: type the course's numbers, then drag the run-duration slider."""
    from playwright.sync_api import expect

    readout = page.locator(".emq-readout", has_text="start-to-finish").first
    explorer = readout.locator("xpath=..")

    def slider(label: str) -> Any:
        return explorer.locator(".widget-slider", has_text=label).first

    def type_value(label: str, value: int) -> None:
        box = slider(label).locator(".widget-readout")
        box.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(str(value))
        page.keyboard.press("Enter")

    def lane(name: str) -> str:
        line = next(line for line in readout.inner_text().splitlines() if line.startswith(name))
        return line.split("|")[0].removeprefix(name).strip()

    for label, value in (("period (min)", 15), ("run (min)", 4), ("cycles", 4), ("pump tick (s)", 0)):
        type_value(label, value)
    expect_text(readout, "every 15 min, runs of 4 min, 4 cycles, the pump ticks exactly when due")
    assert lane("start-to-start") == "09:00 09:15 09:30 09:45"
    assert lane("start-to-finish") == "09:00 09:19 09:38 09:57"

    # Drag the run-duration handle to the right, as a learner would.
    handle = slider("run (min)").locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 60, y, steps=8)
    page.mouse.up()
    expect(readout).not_to_contain_text("runs of 4 min")
    expect_text(readout, "drift after 4 cycles")
    assert lane("start-to-start") == "09:00 09:15 09:30 09:45"  # holds the period
    finish = lane("start-to-finish").split()
    assert finish[0] == "09:00" and finish[1] > "09:19" and finish[3] > "09:57"  # drifts further
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    snap(page, explorer, "02-cadence-dragged")


@walk("03-cancel")
def cancel_walk(page: Page) -> None:
    """The CancelPanel: the race stepped by hand, a refused step, and two presets played."""
    from playwright.sync_api import expect

    log = page.locator(".emq-readout").first  # the first view of the panel: steps taken
    panel = log.locator("xpath=..")
    keyspace = panel.locator(".emq-readout").nth(1)  # the keyspace after the last step

    def button(name: str) -> Any:
        return panel.get_by_role("button", name=name, exact=True)

    button("reset").click()
    expect_text(log, "advance outcome: -")
    expect_text(keyspace, "registry (ZSET) report @", "records (HASH) report", "jobs (wait list) none")
    expect(button("pump enqueues")).to_be_disabled()  # the pump enqueues only what it read
    expect(button("pump advances")).to_be_disabled()
    expect(button("pump reads due")).to_be_enabled()
    expect(button("cancel lands")).to_be_enabled()

    button("pump reads due").click()
    expect_text(log, "the pump now holds it")
    button("cancel lands").click()
    expect_text(log, "{:ok, :cancelled}")
    expect_text(keyspace, "registry (ZSET) empty", "records (HASH) none")
    button("pump enqueues").click()
    expect_text(log, "JOB-000001 enqueued")
    button("pump advances").click()
    expect_text(log, "advance outcome: {:ok, :absent}")
    expect_text(keyspace, "registry (ZSET) empty", "records (HASH) none", "jobs (wait list) JOB-000001")
    expect_text(keyspace, "invariant: every registry member has a record - holds")
    for step in ("pump reads due", "cancel lands", "pump enqueues", "pump advances"):
        expect(button(step)).to_be_disabled()  # each step once per round

    presets = panel.locator("select").first
    presets.select_option(label="cancel before the read")
    button("play preset").click()
    expect_text(log, "nothing due: the pump holds nothing this tick", "advance outcome: -")
    expect_text(keyspace, "registry (ZSET) empty", "jobs (wait list) none", "holds")

    presets.select_option(label="cancel after the advance")
    button("play preset").click()
    expect_text(log, "JOB-000001 enqueued", "{:ok, :advanced}: next run of report", "advance outcome: {:ok, :advanced}")
    expect_text(keyspace, "registry (ZSET) empty", "jobs (wait list) JOB-000001", "holds")
    figure = page.locator(".js-plotly-plot").first  # the presets, one row each
    expect(figure).to_contain_text("cancel between enqueue and advance")
    snap(page, figure, "03-cancel-figure")
    panel.scroll_into_view_if_needed()

    # The CrashPanel: the fault on, one tick and its restart, with fresh then slot-keyed ids.
    bench = page.locator(".emq-readout", has_text="next click:").first
    crash = bench.locator("xpath=..")
    for ids, duplicates in (("fresh JOB- ids", "duplicates: 1"), ("slot-keyed <name>:<slot_ms>", "duplicates: 0")):
        crash.get_by_role("button", name=ids, exact=True).click()
        crash.get_by_role("button", name="Reset", exact=True).click()
        expect_text(bench, "no ticks yet", "duplicates: 0")
        fault = crash.get_by_role("button", name="fault: crash after enqueue")
        if "mod-active" not in (fault.get_attribute("class") or ""):
            fault.click()
        expect(fault).to_have_class(re.compile("mod-active"))  # the fault switch is on
        crash.get_by_role("button", name="Tick (and restart)", exact=True).click()
        expect_text(bench, "then crashed before advance")
        crash.get_by_role("button", name="Tick (and restart)", exact=True).click()
        expect_text(bench, "restart:", duplicates)
    snap(page, crash, "03-cancel-crash")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_in_jupyterlab(page: Page, lab_url: str, notebook: Any) -> None:
    run_all_in_lab(page, lab_url, notebook.name)
    assert_no_errors(page)
    if "plotly" in notebook.read_text():  # 00-start has no figure
        page.locator(".js-plotly-plot").first.wait_for()
    WALKS.get(notebook.stem, lambda page: None)(page)
    screenshot(page, f"lab-{notebook.stem}")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_in_voila(browser: Any, page: Page, notebook: Any) -> None:
    with jupyter_process("voila", f"notebooks/{notebook.name}") as base:
        page.goto(f"{base}/")
        loaded = ".js-plotly-plot" if "plotly" in notebook.read_text() else "text=You are here"
        page.locator(loaded).first.wait_for(timeout=120_000)
        assert_no_errors(page)
        WALKS.get(notebook.stem, lambda page: None)(page)
        screenshot(page, f"voila-{notebook.stem}")
