"""``make lite`` after a learner's session: notebooks/ then holds Jupyter's and hypothesis's hidden
folders and the learner's own files, and the site must carry none of them (nor fail on them).

The build stages the site's files with ``lite/stage.sh``; these tests run that step with a
learner's files present, and read the site ``make lite`` built."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from litesite import LITE, ROOT, site

from emq_lab import copies

NOTEBOOKS = ROOT / "notebooks"

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


def course() -> list[str]:
    """The course's files: the tracked ones in notebooks/ (CLAIMS.md too)."""
    listed = subprocess.run(["git", "ls-files", "--", "."], cwd=NOTEBOOKS, capture_output=True, text=True, check=True)
    return sorted(listed.stdout.split())


def test_staging_takes_the_course_and_leaves_a_learners_files_out(tmp_path: Path) -> None:
    # A browser test's JupyterLab may have made .ipynb_checkpoints already: this test adds files of
    # its own names and removes only what it made.
    made: list[Path] = []
    try:
        for name, text in LEFT_BEHIND.items():
            path = NOTEBOOKS / name
            for folder in reversed([*path.relative_to(NOTEBOOKS).parents][:-1]):
                if not (NOTEBOOKS / folder).exists():
                    (NOTEBOOKS / folder).mkdir()
                    made.append(NOTEBOOKS / folder)
            path.write_text(text, encoding="utf-8")
            made.append(path)
        staged = tmp_path / "contents"
        run = subprocess.run(["bash", str(LITE / "stage.sh"), str(staged)], capture_output=True, text=True, timeout=60)
    finally:
        for path in reversed(made):
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    assert run.returncode == 0, run.stderr
    files = sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file())
    assert files == course()
    assert files, "nothing staged"
    for name in files:
        committed = subprocess.run(
            ["git", "show", f"HEAD:./{name}"], cwd=NOTEBOOKS, capture_output=True, check=True
        ).stdout
        if re.fullmatch(r"\d\d-.*\.ipynb", name):  # a dive: the learner's copy, without outputs
            assert json.loads((staged / name).read_text(encoding="utf-8")) == copies.strip(json.loads(committed))
        else:
            assert (staged / name).read_bytes() == committed


@pytest.mark.xdist_group("lite")
def test_the_site_serves_the_course_files_and_nothing_else() -> None:
    site()  # skips (or fails) here when this machine cannot build the site at all
    files = LITE / "_output" / "files"
    served = sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file())
    assert served == course(), f"the site's files: {served}"
    listed = json.loads((LITE / "_output" / "api" / "contents" / "all.json").read_text(encoding="utf-8"))
    assert sorted(entry["name"] for entry in listed["content"]) == course()
    assert not list((LITE / "_output" / "api" / "contents").rglob(".*"))
