"""Real-browser support: Debian's Chromium driven by Playwright, against a JupyterLab or a
Voila server that the tests start on a loopback port and stop by process group."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from servers import free_port

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
REQUIRE_ENV = "EMQ_LAB_REQUIRE_BROWSER"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str | None:
    found = shutil.which("chromium")
    return found or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def skip_or_fail(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"BROWSER TESTS REQUIRED ({REQUIRE_ENV}=1): {reason}")
    pytest.skip(f"BROWSER TESTS SKIPPED: {reason}")


def _wait_http(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answered, which is all a readiness probe needs
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"server did not answer {url} in {timeout} s:\n{log.read_text()[-3000:]}")


@contextmanager
def jupyter_process(kind: str, *args: str) -> Iterator[str]:
    """Start ``jupyter lab`` or ``voila`` on a free loopback port; yield its base URL."""
    port = free_port()
    home = Path(tempfile.mkdtemp(prefix=f"emq-{kind}-"))
    env = {k: v for k, v in os.environ.items() if k != "EMQ_LAB_URL"}  # the embedded backend
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
    )
    # No "get notified about Jupyter news?" toast over the page (and no request for news).
    labconfig = home / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    bin_dir = Path(sys.executable).parent
    if kind == "lab":
        command = [
            str(bin_dir / "jupyter"), "lab", "--no-browser", "--allow-root", f"--port={port}",
            "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={ROOT}",
            "--LabApp.news_url=", "--LabServerApp.extra_labextensions_path=[]", *args,
        ]  # fmt: skip
        status = f"http://127.0.0.1:{port}/api/status"
    else:
        command = [
            str(bin_dir / "voila"), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
            "--ServerApp.allow_root=True", *args,
        ]  # fmt: skip
        status = f"http://127.0.0.1:{port}/emq-readiness-probe"  # a 404 is fine; / would run the notebook
    log = home / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_http(status, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


def screenshot(page: object, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
