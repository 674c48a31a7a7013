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
from typing import Any

import pytest
from servers import ValkeyServer

import emq_classroom as classroom
import emq_lab
from conftest import BACKENDS
from emq_lab.backend import open_client
from emq_lab.dives import QUEUES, setup

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DIVES = [nb for nb in NOTEBOOKS if nb.stem[:2].isdigit()]  # what a learner runs (not instructor)
# A lab in a namespace prints emq:ns:{<ns>:<q>}:... where the stored outputs say emq:{<q>}:...
SANITIZE = ROOT / "tests" / "nbval-namespace.cfg"
# One learner, an ACL user in a namespace, runs every dive: what a class adds to a learner's run
# (its commands and scripts only, on its own keys). Learners side by side on one server: the hub's
# test (tests/test_hub.py), two at once through Chromium.
LEARNERS = 1


def nbval(notebooks: list[Path], env: dict[str, str]) -> subprocess.Popen[str]:
    """``pytest --nbval`` on ``notebooks`` in a separate process whose kernel inherits ``env``."""
    return subprocess.Popen(
        [
            sys.executable, "-m", "pytest", "-p", "no:xdist", "--nbval", "--nbval-current-env",
            "--nbval-sanitize-with", str(SANITIZE), "-p", "no:cacheprovider", "-q", *map(str, notebooks),
        ],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


KERNEL_START_FAILED = "Kernel died before replying to kernel_info"


def finished(run: subprocess.Popen[str], notebooks: list[Path], env: dict[str, str], timeout: int) -> tuple[int, str]:
    """Wait for an nbval run -> (returncode, output). A kernel that died before its first reply
    (before any cell ran: with many kernels starting at once, another process can take a port
    between jupyter_client picking it and the kernel binding it) is started once more."""
    out, _ = run.communicate(timeout=timeout)
    if run.returncode != 0 and KERNEL_START_FAILED in out:
        run = nbval(notebooks, env)
        out, _ = run.communicate(timeout=timeout)
    return run.returncode, out


def clean_env(url: str | None = None, namespace: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EMQ_LAB_URL", "EMQ_LAB_NAMESPACE")}
    if url is not None:
        env["EMQ_LAB_URL"] = url
    if namespace is not None:
        env["EMQ_LAB_NAMESPACE"] = namespace
    return env


# Every notebook on every backend, but the dives on a plain Valkey: the learners' run below takes
# them through the same Valkey (ACL users, each in a namespace) and the embedded run takes the
# plain key names, so that run would add time and nothing else.
# The instructor's page shows demo learners only on the embedded backend; on a server it shows that
# server's class (tests/test_instructor.py runs it there and checks it writes nothing).
# One nbval run per backend, over its notebooks (each still on a kernel of its own): a run's start
# (pytest, nbval, nbformat's schema checker) costs about 2 s of CPU, paid once per backend.
RUNS = {
    b: [
        nb
        for nb in NOTEBOOKS
        if not (b == "valkey" and nb in DIVES) and not (b != "fakeredis" and nb.stem == "instructor")
    ]
    for b in BACKENDS
}
RUNS = {b: notebooks for b, notebooks in RUNS.items() if notebooks}  # none on a plain Valkey


@pytest.mark.parametrize("backend_url", list(RUNS), indirect=True)
def test_notebook_outputs_match(request: pytest.FixtureRequest, backend_url: str) -> None:
    notebooks = RUNS[request.node.callspec.params["backend_url"]]
    env = clean_env(None if backend_url == "embedded" else backend_url)
    try:
        returncode, out = finished(nbval(notebooks, env), notebooks, env, timeout=600 * len(notebooks))
    finally:
        if backend_url != "embedded":  # the dives' queues emptied: the worker's later tests share this server
            lab = emq_lab.connect(backend_url)
            for dive in QUEUES:
                setup(lab, dive)
            lab.close()
    assert returncode == 0, f"nbval failed on {[nb.name for nb in notebooks]}:\n{out[-8000:]}"
    assert f"{sum(cells(nb) for nb in notebooks)} passed" in out, out[-2000:]


def cells(notebook: Path) -> int:
    """The code cells nbval runs and compares in ``notebook`` (one test each)."""
    return sum(cell["cell_type"] == "code" for cell in json.loads(notebook.read_text())["cells"])


def test_a_learner_runs_the_dives_as_an_acl_user(valkey_server: ValkeyServer, figure: Any) -> None:
    """A class's learner, an ACL user limited to its namespace, runs every dive notebook against
    one Valkey; the run passes and the namespace keeps its own keys."""
    admin, _ = open_client(valkey_server.url)
    # The shared, open server (a class server has its default user off: see test_class_server).
    learners = classroom.create_users(admin, learners=LEARNERS, prefix="nbclass", check=False)
    classroom.load_scripts(admin)  # a learner may not load them
    try:
        envs = [clean_env(learner.url(valkey_server.url), learner.namespace) for learner in learners]
        runs = [nbval(DIVES, env) for env in envs]
        results = [finished(run, DIVES, env, timeout=1200) for run, env in zip(runs, envs, strict=True)]
        failed = [(learner.name, out[-4000:]) for learner, (code, out) in zip(learners, results, strict=True) if code]
        assert not failed, f"nbval failed for {[name for name, _ in failed]}:\n{failed[0][1]}"
        view = classroom.overview(admin, prefix="nbclass")
        assert [learner.namespace for learner in view.learners] == [learner.name for learner in learners]
        assert all(len(learner.dives) == len(classroom.DIVES) for learner in view.learners)  # 00-start has no queue
        figure("classroom: learners (ACL users) x dive notebooks, all passing", f"{LEARNERS} x {len(DIVES)}")
    finally:
        classroom.revoke_users(admin, prefix="nbclass")
        admin.close()


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


@pytest.mark.parametrize("notebook", DIVES, ids=[nb.stem for nb in DIVES])
def test_each_notebook_says_where_you_are_links_onward_and_keeps_cells_short(notebook: Path) -> None:
    nb = json.loads(notebook.read_text())
    markdown = ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown"]
    assert "**You are here:**" in markdown[0]
    links = {target for text in markdown for target in re.findall(r"\]\(([^)#]+\.ipynb)\)", text)}
    assert all((notebook.parent / target).is_file() for target in links), links
    following = DIVES[(DIVES.index(notebook) + 1) % len(DIVES)]
    assert f"]({following.name})" in markdown[-1], f"the last cell should link to {following.name}"
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    for index, cell in enumerate(code):
        # the setup cell may take one line more: it also imports the prediction form, so a form
        # works from the first cell on
        assert 1 <= len("".join(cell["source"]).splitlines()) <= (6 if index == 0 else 5), "".join(cell["source"])


@pytest.mark.parametrize("notebook", DIVES[1:], ids=[nb.stem for nb in DIVES[1:]])
def test_each_dive_opens_on_its_question_and_keeps_its_pace(notebook: Path) -> None:
    """The page's question and what the dive does come first, never the answer it reaches (that
    is the learner's to predict); then at most 45 cells besides the prediction forms, 1,700 words of
    prose, and no paragraph of 120 words or more. A course verdict is revealed after a prediction:
    every dive asks the learner to predict at least once per section with output."""
    nb = json.loads(notebook.read_text())
    markdown = ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown"]
    opening = " ".join(markdown[0].split())
    assert "**The page's question**" in opening and "**What this dive does:**" in opening
    assert "answer this dive reaches" not in opening
    forms = [cell for cell in nb["cells"] if "".join(cell["source"]).startswith("PredictForm(")]
    assert len(nb["cells"]) - len(forms) <= 45
    assert sum(len(text.split()) for text in markdown) <= 1_700
    paragraphs = [p for text in markdown for p in re.split(r"\n\s*\n", text) if not p.lstrip().startswith("|")]
    assert max(len(p.split()) for p in paragraphs) < 120
    assert sum("**Predict" in text for text in markdown) >= 4
    assert not any("Binder" in text or "In Voila the code cells" in text for text in markdown), "said once, in 00"


def test_each_script_is_shown_once_across_the_dives() -> None:
    shown: dict[str, str] = {}
    for dive in DIVES:
        cells = json.loads(dive.read_text())["cells"]
        for source in ("".join(c["source"]) for c in cells if c["cell_type"] == "code"):
            for name in re.findall(r"ScriptView\(\"([^\"]+)\"\)", source):
                assert name not in shown, f"{name}.lua shown in {shown.get(name)} and in {dive.stem}"
                shown[name] = dive.stem
