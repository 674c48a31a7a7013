"""Every notebook, run by nbval against its stored outputs, on both backends.

Each run is a separate pytest process so the kernel inherits ``EMQ_LAB_URL``: unset for the
embedded fakeredis, the throwaway Valkey's (or cluster's) URL otherwise. The stored outputs are the
same for every backend.

Plotly figures: their JSON (``application/vnd.plotly.v1+json``) is not compared (root conftest.py).
Pinning plotly exactly would have frozen a learner's environment to one release for the sake of a
template dict that changes with every plotly version; instead each figure cell prints the marks it
draws, and those printed marks are compared. A panel's ``text/plain`` is its readout, so widget
cells compare the verdict, not the ipywidgets repr.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_notebook_outputs_match(notebook: Path, backend_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EMQ_LAB_URL"}
    if backend_url != "embedded":
        env["EMQ_LAB_URL"] = backend_url
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "-q",
            str(notebook),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"nbval failed on {notebook.name}:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_stored_outputs_come_from_one_clean_run(notebook: Path) -> None:
    nb = json.loads(notebook.read_text())
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    assert [cell["execution_count"] for cell in code] == list(range(1, len(code) + 1))
    assert "widgets" not in nb["metadata"], "saved widget state: re-store with tools/run_notebook.sh"
    for cell in code:
        for output in cell["outputs"]:
            assert output["output_type"] != "error" and output.get("name") != "stderr", "".join(cell["source"])
    assert nb["cells"][0]["cell_type"] == "markdown" and nb["cells"][0]["source"][0].startswith("# ")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[nb.stem for nb in NOTEBOOKS])
def test_each_notebook_says_where_you_are_links_onward_and_keeps_cells_short(notebook: Path) -> None:
    nb = json.loads(notebook.read_text())
    markdown = ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown"]
    assert "**You are here:**" in markdown[0]
    links = {target for text in markdown for target in re.findall(r"\]\(([^)#]+\.ipynb)\)", text)}
    assert all((notebook.parent / target).is_file() for target in links), links
    following = NOTEBOOKS[(NOTEBOOKS.index(notebook) + 1) % len(NOTEBOOKS)]
    assert f"]({following.name})" in markdown[-1], f"the last cell should link to {following.name}"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert 1 <= len("".join(cell["source"]).splitlines()) <= 5, "".join(cell["source"])
