"""A browser walk of the instructor's page in Voila at 1280x720 on a throwaway class server with
three learners: one not started, one with a passed check, one with a failed one. The page shows
the class on that server, keeps it unwritten, and its Refresh picks up a learner's next step."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser import ROOT, Watch, jupyter_process, launched_chromium, screenshot
from class_server import ADMIN_PASSWORD, ClassServer, started_class_server
from helpers import MIN, START

import emq_classroom as classroom
import emq_lab
from emq_lab import progress

WIDTH, HEIGHT = 1280, 720
PREFIX = "pupil"
pytestmark = pytest.mark.browser  # make test-browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as chromium:
        yield chromium


def test_the_instructor_page_shows_three_learners_on_the_class_server(browser: Any) -> None:
    from playwright.sync_api import expect

    with started_class_server() as server:
        labs = _three_learners(server)
        admin = server.admin()
        before = int(admin.info("persistence")["rdb_changes_since_last_save"])
        extra = {"EMQ_LAB_URL": server.admin_url, "EMQ_LAB_CLASS_PREFIX": PREFIX}
        with jupyter_process("voila", str(ROOT / "notebooks"), extra_env=extra) as voila:
            context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
            page = context.new_page()
            page.set_default_timeout(60_000)
            watch = Watch()
            watch.attach(page)
            page.goto(f"{voila.url}/voila/render/instructor.ipynb", wait_until="commit", timeout=240_000)
            panel = page.locator(".emq-classroom-panel").first
            table = panel.locator(".emq-readout").first
            table.wait_for(timeout=240_000)
            # The class first, then one row per learner.
            expect(table).to_contain_text("The class: 3 learner(s): 2 started, 1 not started", use_inner_text=True)
            for text in ("pupil01", "01 upsert", "✓ register", "pupil02", "✗ upsert.predict", "pupil03", "not started"):
                expect(table).to_contain_text(text, use_inner_text=True)
            pupil03 = table.locator("tr", has_text="pupil03")
            expect(page.locator("body")).to_contain_text("The class on server at 127.0.0.1", use_inner_text=True)
            assert "demo-" not in page.inner_text("body") and ADMIN_PASSWORD not in page.content()
            page.locator(".emq-refreshed").first.wait_for()
            panel.evaluate("el => el.scrollIntoView({block: 'start'})")
            screenshot(page, "voila-instructor-class")
            # pupil03 starts; the next refresh (the button) shows it, and the page still wrote nothing.
            labs[2].repeat("cadence-live").register("report", 15 * MIN, "{}")
            after_learner = int(admin.info("persistence")["rdb_changes_since_last_save"])
            panel.locator("button", has_text="Refresh").click()
            expect(pupil03).to_contain_text("02 cadence", use_inner_text=True)
            expect(pupil03).not_to_contain_text("not started", use_inner_text=True)
            expect(table).to_contain_text("The class: 3 learner(s): 3 started, 0 not started", use_inner_text=True)
            screenshot(page, "voila-instructor-class-refreshed")
            assert int(admin.info("persistence")["rdb_changes_since_last_save"]) == after_learner
            assert after_learner > before  # the learner's write moved the counter; the page's reads never did
            watch.assert_clean()
            context.close()
        for lab in labs:
            lab.close()
        admin.close()


def _three_learners(server: ClassServer) -> list[emq_lab.Lab]:
    """pupil01 did the upsert dive and passed the register check, pupil02 got a prediction wrong,
    pupil03 has not started."""
    admin, _ = emq_lab.backend.open_client(server.admin_url)
    made = classroom.create_users(admin, learners=3, prefix=PREFIX)
    classroom.load_scripts(admin)
    admin.close()
    labs = [
        emq_lab.connect(m.url(server.admin_url), clock=emq_lab.SimClock(START), namespace=m.namespace) for m in made
    ]
    labs[0].repeat("reports").register("digest", 15 * MIN, "{}")
    progress.record(labs[0], "register", True)
    progress.record(labs[1], "upsert.predict", False)
    return labs
