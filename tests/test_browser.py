"""Every notebook in a real browser: JupyterLab (run all, then use the widgets as a learner
would) and Voila (the instructor's presentation mode). Debian's Chromium, driven by Playwright."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from browser import CHROMIUM_ARGS, ROOT, chromium_path, jupyter_process, screenshot, skip_or_fail

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
    page.goto(f"{base}/lab/tree/notebooks/{notebook}")
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


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_in_jupyterlab(page: Page, lab_url: str, notebook: Any) -> None:
    run_all_in_lab(page, lab_url, notebook.name)
    assert_no_errors(page)
    page.locator(".js-plotly-plot").first.wait_for()
    WALKS.get(notebook.stem, lambda page: None)(page)
    screenshot(page, f"lab-{notebook.stem}")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_in_voila(browser: Any, page: Page, notebook: Any) -> None:
    with jupyter_process("voila", f"notebooks/{notebook.name}") as base:
        page.goto(f"{base}/")
        page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
        assert_no_errors(page)
        WALKS.get(notebook.stem, lambda page: None)(page)
        screenshot(page, f"voila-{notebook.stem}")
