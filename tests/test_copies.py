"""The learner's copies: made from the tracked dives without outputs, never overwritten, restorable;
the browser edition stages what is committed; a learner's session leaves every tracked file as it was."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from emq_lab import copies

ROOT = Path(__file__).resolve().parent.parent
DIVES = sorted((ROOT / "notebooks").glob(copies.DIVES))


def course_root(tmp_path: Path) -> Path:
    """A root holding a copy of the course's notebooks/ (the repository's own is never written)."""
    root = tmp_path / "lab"
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".*"))
    return root


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def sources(notebook: dict[str, Any]) -> list[tuple[str, str]]:
    return [(cell["cell_type"], "".join(cell["source"])) for cell in notebook["cells"]]


def test_each_dive_has_a_copy_without_outputs_and_the_same_cells(tmp_path: Path) -> None:
    root = course_root(tmp_path)
    made = copies.make(root)
    assert [path.name for path in made] == [path.name for path in DIVES]
    assert any(cell.get("outputs") for cell in read(DIVES[1])["cells"]), "the tracked dives keep their outputs"
    for copy, tracked in zip(made, DIVES, strict=True):
        notebook = read(copy)
        code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
        assert code and all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code), copy.name
        assert all("execution" not in cell["metadata"] for cell in notebook["cells"])
        assert sources(notebook) == sources(read(tracked))
        assert notebook["metadata"]["kernelspec"] == read(tracked)["metadata"]["kernelspec"]


def test_the_links_between_dives_resolve_among_the_copies(tmp_path: Path) -> None:
    root = course_root(tmp_path)
    copies.make(root)
    folder = root / copies.COPIES
    for copy in folder.glob("*.ipynb"):
        for kind, text in sources(read(copy)):
            if kind != "markdown":
                continue
            for target in re.findall(r"\]\(([^)#\s]+\.ipynb)", text):
                assert (folder / target).is_file(), f"{copy.name} links to {target}, which is not in {folder}"


def test_a_second_make_leaves_a_learners_edited_copy_alone(tmp_path: Path) -> None:
    root = course_root(tmp_path)
    copies.make(root)
    mine = root / copies.COPIES / "01-upsert.ipynb"
    notebook = read(mine)
    notebook["cells"].append({"cell_type": "code", "source": "print('my own cell')", "metadata": {},
                              "outputs": [], "execution_count": None})  # fmt: skip
    edited = copies.dumps(notebook)
    mine.write_text(edited, encoding="utf-8")
    (root / copies.COPIES / "03-cancel.ipynb").unlink()  # a copy the learner deleted comes back
    assert [path.name for path in copies.make(root)] == ["03-cancel.ipynb"]
    assert mine.read_text(encoding="utf-8") == edited


def test_restore_brings_back_the_course_version_and_keeps_the_learners(tmp_path: Path) -> None:
    root = course_root(tmp_path)
    copies.make(root)
    mine = root / copies.COPIES / "02-cadence.ipynb"
    pristine = mine.read_text(encoding="utf-8")
    mine.write_text(pristine.replace("Predict", "My guess"), encoding="utf-8")
    edited = mine.read_text(encoding="utf-8")
    assert edited != pristine
    at = datetime(2026, 1, 5, 9, 30, 0)
    kept, fresh = copies.restore(root, "02-cadence", now=at)
    assert kept == root / copies.COPIES / "02-cadence.mine-20260105-093000.ipynb"
    assert kept.read_text(encoding="utf-8") == edited
    assert fresh == mine and mine.read_text(encoding="utf-8") == pristine
    kept_again, _ = copies.restore(root, "02-cadence.ipynb", now=at)  # twice in one second: both kept
    assert kept_again is not None and kept_again != kept and kept.exists()
    with pytest.raises(ValueError, match="dive: no dive '09-nowhere'.*01-upsert"):
        copies.restore(root, "09-nowhere")
    with pytest.raises(ValueError, match="dive"):
        copies.restore(root, "instructor")  # not a dive: it has no learner's copy


def test_the_command_line_makes_and_restores(tmp_path: Path) -> None:
    root = course_root(tmp_path)
    run = [sys.executable, "-m", "emq_lab.copies", "--root", str(root)]
    made = subprocess.run([*run, "make"], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "00-start.ipynb" in made.stdout and (root / "work" / "00-start.ipynb").is_file()
    back = subprocess.run([*run, "restore", "01-upsert"], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "yours is kept as work/01-upsert.mine-" in back.stdout
    wrong = subprocess.run([*run, "restore", "nope"], capture_output=True, text=True, cwd=ROOT)
    assert wrong.returncode == 2 and "no dive 'nope'" in wrong.stderr


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def test_the_browser_edition_stages_the_committed_dives_without_outputs(tmp_path: Path) -> None:
    """A checkout whose working tree has a learner's edits in notebooks/: the site gets HEAD's."""
    repo = tmp_path / "repo"
    (repo / "lite").mkdir(parents=True)
    (repo / "emq_lab").mkdir()
    shutil.copy(ROOT / "lite" / "stage.sh", repo / "lite" / "stage.sh")
    shutil.copy(ROOT / "emq_lab" / "copies.py", repo / "emq_lab" / "copies.py")
    shutil.copytree(ROOT / "notebooks", repo / "notebooks", ignore=shutil.ignore_patterns(".*"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the course")
    committed = (repo / "notebooks" / "01-upsert.ipynb").read_text(encoding="utf-8")
    edited = read(repo / "notebooks" / "01-upsert.ipynb")
    edited["cells"].append({"cell_type": "code", "source": "1/0", "metadata": {}, "execution_count": 9,
                            "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "",
                                         "traceback": []}]})  # fmt: skip
    (repo / "notebooks" / "01-upsert.ipynb").write_text(copies.dumps(edited), encoding="utf-8")
    (repo / "notebooks" / "scratch.py").write_text("print('mine')\n", encoding="utf-8")
    staged = tmp_path / "contents"
    run = subprocess.run(["bash", str(repo / "lite" / "stage.sh"), str(staged)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    files = sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file())
    assert files == sorted(git(repo / "notebooks", "ls-files", "--", ".").split())
    assert read(staged / "01-upsert.ipynb") == copies.strip(json.loads(committed))
    for name in files:
        if re.fullmatch(r"\d\d-.*\.ipynb", name):
            assert all(not cell.get("outputs") for cell in read(staged / name)["cells"]), name
        else:  # CLAIMS.md, the instructor's page: as committed
            assert (staged / name).read_bytes() == (repo / "notebooks" / name).read_bytes()


def test_a_scripted_learner_session_leaves_every_tracked_file_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies made in the repository itself (in a folder of its own under work/), a dive's copy run
    top to bottom by a kernel started there, and git sees no change."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    for name in ("EMQ_LAB_URL", "EMQ_LAB_NAMESPACE"):  # the embedded backend, as a first session
        monkeypatch.delenv(name, raising=False)
    before = git(ROOT, "status", "--porcelain", "--untracked-files=all")
    into = f"{copies.COPIES}/.session-{uuid.uuid4().hex[:8]}"
    try:
        made = copies.make(ROOT, into=into)
        session = ROOT / into
        for dive in ("00-start", "01-upsert"):
            copy = session / f"{dive}.ipynb"
            notebook = nbformat.read(copy, as_version=4)
            client = nbclient.NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(session)}})
            client.execute()
            nbformat.write(notebook, copy)  # the learner's autosave
            assert any(cell.get("outputs") for cell in read(copy)["cells"]), f"{dive}: the session ran nothing"
        assert len(made) == len(DIVES)
        after = git(ROOT, "status", "--porcelain", "--untracked-files=all")
        assert after == before, f"the session changed tracked or visible files:\n{after}"
    finally:
        shutil.rmtree(ROOT / into, ignore_errors=True)
