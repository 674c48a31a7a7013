"""The instructor's notebook with EMQ_LAB_URL set shows the actual class on that server (three
learners: one not started, one with a passed check) and writes nothing to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from class_server import ADMIN_PASSWORD, ClassServer, started_class_server
from helpers import MIN, START
from nbclient import NotebookClient

import emq_classroom as classroom
import emq_lab
from emq_lab import progress

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "instructor.ipynb"
PREFIX = "room"


@pytest.fixture(scope="module")
def class_of_three() -> Iterator[ClassServer]:
    """learner room01 did the upsert dive and passed the register check, room02 got a prediction
    wrong, room03 has not started."""
    with started_class_server() as server:
        admin, _ = emq_lab.backend.open_client(server.admin_url)
        made = classroom.create_users(admin, learners=3, prefix=PREFIX)
        classroom.load_scripts(admin)
        labs = [
            emq_lab.connect(m.url(server.admin_url), clock=emq_lab.SimClock(START), namespace=m.namespace) for m in made
        ]
        labs[0].repeat("reports").register("digest", 15 * MIN, "{}")
        progress.record(labs[0], "register", True)
        progress.record(labs[1], "upsert.predict", False)
        for lab in labs:
            lab.close()
        admin.close()
        yield server


def writes(server: ClassServer) -> tuple[int, int]:
    """(keys, changes since the last save): a write of any kind moves the second."""
    admin = server.admin()
    try:
        return int(admin.dbsize()), int(admin.info("persistence")["rdb_changes_since_last_save"])
    finally:
        admin.close()


def test_the_notebook_shows_the_class_on_the_server_and_writes_nothing(
    class_of_three: ClassServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMQ_LAB_URL", class_of_three.admin_url)
    monkeypatch.setenv("EMQ_LAB_CLASS_PREFIX", PREFIX)
    monkeypatch.delenv("EMQ_LAB_NAMESPACE", raising=False)
    before = writes(class_of_three)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    assert writes(class_of_three) == before
    printed = "".join(
        output.get("text", "") or output.get("data", {}).get("text/plain", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "The class on server at 127.0.0.1" in printed
    assert "only reads (its class guard stops what one learner holds" in printed
    assert "demo-" not in printed and ADMIN_PASSWORD not in printed and "S3cret" not in printed
    assert "room01: 1 queue(s) · dives: 01 upsert · checks passed 1/6" in printed
    assert "room02: 0 queue(s) · dives: no dive yet · checks passed 0/6" in printed
    assert "upsert.predict failed" in printed
    assert "room03: not started" in printed
    assert "class: 3 learner(s) · 2 started · 1 not started" in printed  # the summary comes first
    # One truth: the live panel alone shows the class; no printed copy beside it can go stale.
    streams = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "room01" not in streams and "room03" not in streams
