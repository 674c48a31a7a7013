"""``make lite`` after a learner's session: notebooks/ then holds Jupyter's and hypothesis's hidden
folders and the learner's own files, and the site must carry none of them (nor fail on them)."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess

import pytest
from litesite import LITE, ROOT, site

# What a session leaves in notebooks/: Jupyter's checkpoints and virtual documents, hypothesis's
# example database (an exercise check), and files the learner made.
LEFT_BEHIND = {
    ".ipynb_checkpoints/01-upsert-checkpoint.ipynb": '{"cells": [], "nbformat": 4, "nbformat_minor": 5}',
    ".virtual_documents/01-upsert.ipynb": "import emq_lab\n",
    ".hypothesis/examples/5f1d/9a0c": "\x00\x01",
    ".DS_Store": "",
    "scratch.py": "print('mine')\n",
    "answers/register.lua": "return 1\n",
}


@pytest.mark.xdist_group("lite")
def test_make_lite_leaves_a_learners_files_out_of_the_site() -> None:
    site()  # skips (or fails) here when this machine cannot build the site at all
    notebooks = ROOT / "notebooks"
    course = sorted(p.name for p in notebooks.glob("*.ipynb"))
    tops = {notebooks / name.split("/")[0] for name in LEFT_BEHIND}
    assert not any(p.exists() for p in tops), "notebooks/ already holds one of this test's files"
    with open(LITE / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            for name, text in LEFT_BEHIND.items():
                (notebooks / name).parent.mkdir(parents=True, exist_ok=True)
                (notebooks / name).write_text(text, encoding="utf-8")
            run = subprocess.run(["make", "-B", "lite"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
        finally:
            for top in tops:
                shutil.rmtree(top) if top.is_dir() else top.unlink(missing_ok=True)
    assert run.returncode == 0, f"make lite failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"

    files = LITE / "_output" / "files"
    served = sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file())
    assert served == course, f"the site's files: {served}"
    listed = json.loads((LITE / "_output" / "api" / "contents" / "all.json").read_text(encoding="utf-8"))
    assert sorted(entry["name"] for entry in listed["content"]) == course
    assert not list((LITE / "_output" / "api" / "contents").rglob(".*"))
