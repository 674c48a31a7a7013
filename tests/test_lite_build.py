"""``make lite`` after a learner's session: notebooks/ then holds Jupyter's and hypothesis's hidden
folders and the learner's own files, and the site must carry none of them (nor fail on them)."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from litesite import LITE, ROOT, site

# What a session leaves in notebooks/: Jupyter's checkpoints and virtual documents, hypothesis's
# example database (an exercise check), and files the learner made.
LEFT_BEHIND = {
    ".ipynb_checkpoints/emq-lite-test-checkpoint.ipynb": '{"cells": [], "nbformat": 4, "nbformat_minor": 5}',
    ".virtual_documents/emq-lite-test.ipynb": "import emq_lab\n",
    ".hypothesis/examples/emq-lite-test/9a0c": "\x00\x01",
    ".emq-lite-test.DS_Store": "",
    "emq-lite-test-scratch.py": "print('mine')\n",
    "emq-lite-test-answers/register.lua": "return 1\n",
}


@pytest.mark.xdist_group("lite")
def test_make_lite_leaves_a_learners_files_out_of_the_site() -> None:
    site()  # skips (or fails) here when this machine cannot build the site at all
    notebooks = ROOT / "notebooks"
    course = sorted(p.name for p in notebooks.iterdir() if p.is_file() and not p.name.startswith("."))  # + CLAIMS.md
    # A browser test's JupyterLab may have made .ipynb_checkpoints already: this test adds files of
    # its own names and removes only what it made.
    made: list[Path] = []
    with open(LITE / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            for name, text in LEFT_BEHIND.items():
                path = notebooks / name
                for folder in reversed([*path.relative_to(notebooks).parents][:-1]):
                    if not (notebooks / folder).exists():
                        (notebooks / folder).mkdir()
                        made.append(notebooks / folder)
                path.write_text(text, encoding="utf-8")
                made.append(path)
            run = subprocess.run(["make", "-B", "lite"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
        finally:
            for path in reversed(made):
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    assert run.returncode == 0, f"make lite failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"

    files = LITE / "_output" / "files"
    served = sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file())
    assert served == course, f"the site's files: {served}"
    listed = json.loads((LITE / "_output" / "api" / "contents" / "all.json").read_text(encoding="utf-8"))
    assert sorted(entry["name"] for entry in listed["content"]) == course
    assert not list((LITE / "_output" / "api" / "contents").rglob(".*"))
