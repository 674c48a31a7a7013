"""Real-browser support: Debian's Chromium driven by Playwright, against a JupyterLab or a
Voila server that the tests start on a loopback port and stop by process group."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


# For a page that stays open from one notebook to the next (JupyterLab's, the JupyterLite site's).
_APP_READY = "() => !!window.jupyterapp && !document.querySelector('.jp-Dialog')"
# JupyterLab opens a Launcher a frame or more after the main area empties. On a busy machine that
# can be after the next notebook opened: the Launcher is then the current tab, the status bar shows
# no kernel, and a wait for Idle times out (CI, once). So the close waits for the Launcher, and the
# open closes it and makes its notebook the current tab.
_OPEN_NOTEBOOK = """async (path) => {
  const shell = window.jupyterapp.shell;
  const widget = await window.jupyterapp.commands.execute("docmanager:open", {path});
  await widget.context.ready;
  await widget.sessionContext.ready;
  for (const other of Array.from(shell.widgets("main"))) if (other !== widget) other.close();
  shell.activateById(widget.id);
}"""
_CLOSE_NOTEBOOKS = """async () => {
  for (const widget of Array.from(window.jupyterapp.shell.widgets("main"))) {
    if (widget.sessionContext) await widget.sessionContext.shutdown();
    if (widget.context) widget.context.model.dirty = false;  // the run's outputs are not saved
    widget.close();
  }
  const {shell, commands} = window.jupyterapp;
  const launcher = () => Array.from(shell.widgets("main")).some((widget) => widget.id.startsWith("launcher-"));
  for (let i = 0; i < 100 && commands.hasCommand("launcher:create") && !launcher(); i++) {
    await new Promise((done) => setTimeout(done, 100));
  }
}"""


_SHELL_STATE = """() => ({
  tabs: Array.from(window.jupyterapp.shell.widgets("main")).map((widget) => widget.title.label),
  current: window.jupyterapp.shell.currentWidget?.title.label,
  dialogs: Array.from(document.querySelectorAll(".jp-Dialog")).map((dialog) => dialog.innerText),
  statusbar: document.querySelector("#jp-main-statusbar")?.innerText,
})"""


def open_notebook(page: Any, app: str, path: str, url: str, timeout_ms: float) -> None:
    """Open ``path`` in the app already on ``page`` (its URL under ``app``), as a learner opens the
    next dive from the file browser; else, or where a dialog is open (a failed test may leave one),
    load ``url``. Then wait until its kernel is Idle. A notebook opened in the app whose kernel
    shows no Idle in time is loaded anew by ``url``, with a warning that names what the app showed
    (CI met a kernel that never showed Idle there twice; this machine never has)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    idle = page.locator("#jp-main-statusbar").get_by_text("Idle")
    if page.url.startswith(app) and page.evaluate(_APP_READY):
        page.evaluate(_OPEN_NOTEBOOK, path)
        try:
            idle.wait_for(timeout=timeout_ms)
            return
        except PlaywrightTimeout:
            shown = page.evaluate(_SHELL_STATE)
            screenshot(page, f"no-idle-{Path(path).stem}")
            message = f"{path}, opened in the app, showed no Idle kernel: loaded anew. The app: {shown}"
            warnings.warn(message, stacklevel=2)
    page.goto(url)
    idle.wait_for(timeout=timeout_ms)


def close_notebooks(page: Any) -> None:
    """Close every notebook on ``page`` unsaved, its kernel shut down; a page that will not is
    left for about:blank, so the next notebook loads its app anew."""
    try:
        page.evaluate(_CLOSE_NOTEBOOKS)
    except Exception:
        with suppress(Exception):
            page.goto("about:blank")


def chromium_path() -> str | None:
    found = shutil.which("chromium")
    return found or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def skip_or_fail(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"BROWSER TESTS REQUIRED ({REQUIRE_ENV}=1): {reason}")
    pytest.skip(f"BROWSER TESTS SKIPPED: {reason}")


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright (never a browser Playwright downloads);
    skips, or fails under EMQ_LAB_REQUIRE_BROWSER, when either is missing."""
    executable = chromium_path()
    if executable is None:
        skip_or_fail("no Chromium at /usr/bin/chromium (Debian: apt-get install --no-install-recommends chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("the Python package 'playwright' is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


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


@dataclass(frozen=True)
class Server:
    url: str
    runtime: Path  # where the kernels' connection files are


@contextmanager
def jupyter_process(kind: str, *args: str, extra_env: dict[str, str] | None = None) -> Iterator[Server]:
    """Start ``jupyter lab`` or ``voila`` on a free loopback port; yield its URL and runtime dir.
    Its kernels run on the embedded backend unless ``extra_env`` sets ``EMQ_LAB_URL``."""
    port = free_port()
    home = Path(tempfile.mkdtemp(prefix=f"emq-{kind}-"))
    env = {k: v for k, v in os.environ.items() if k != "EMQ_LAB_URL"}  # the embedded backend
    env.update(extra_env or {})
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        JUPYTER_PATH=str(ROOT / "share" / "jupyter"),  # the Voila template as checked out, not as installed
    )
    # No "get notified about Jupyter news?" toast over the page (and no request for news).
    labconfig = home / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    (home / "runtime").mkdir()
    (labconfig / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    # No autosave: a walk longer than its two-minute interval (a busy machine) would write the run's
    # outputs into notebooks/, and so make the JupyterLite site's inputs newer than its build.
    docmanager = home / "config" / "lab" / "user-settings" / "@jupyterlab" / "docmanager-extension"
    docmanager.mkdir(parents=True)
    (docmanager / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    bin_dir = Path(sys.executable).parent
    if kind == "lab":
        command = [
            str(bin_dir / "jupyter"), "lab", "--no-browser", "--allow-root", f"--port={port}",
            "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={ROOT}",
            "--LabApp.news_url=", "--LabServerApp.extra_labextensions_path=[]",
            "--LabApp.expose_app_in_browser=True", *args,  # window.jupyterapp: the next notebook opens in the app
        ]  # fmt: skip
        status = f"http://127.0.0.1:{port}/api/status"
    else:
        command = [
            str(bin_dir / "voila"), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
            "--ServerApp.allow_root=True", f"--Voila.connection_dir_root={home / 'runtime'}", *args,
        ]  # fmt: skip
        status = f"http://127.0.0.1:{port}/emq-readiness-probe"  # a 404 is fine; / would run the notebook
    log = home / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_http(status, process, log)
        yield Server(f"http://127.0.0.1:{port}", home / "runtime")
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


AXE = ROOT / ".venv" / "node" / "node_modules" / "axe-core" / "axe.min.js"  # make axe (make test-browser does it)
AXE_FAILS = ("serious", "critical")


def axe_violations(page: Any, include: list[str]) -> list[str]:
    """axe-core's serious and critical WCAG 2 A/AA violations inside the ``include`` selectors
    of ``page``, one line each (rule, impact, how many nodes, the first node's selector)."""
    assert AXE.is_file(), f"axe-core is not installed at {AXE}: run make axe (make test-browser installs it)"
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async (include) => {
            const result = await axe.run({include: include.map((s) => [s])},
                {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}});
            return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map((n) => n.target.join(' '))}));
        }""",
        include,
    )
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])} node(s), e.g. {v['nodes'][0]}): {v['help']}"
        for v in found
        if v["impact"] in AXE_FAILS
    ]


def screenshot(page: object, name: str) -> Path:
    """The viewport (1280x720) as ``test-artifacts/<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))  # type: ignore[attr-defined]
    return path


# webpack's module federation, when a labextension was built against newer shared packages
# (@jupyterlab/*, @jupyter-widgets/*) than the page provides: it goes on with the older copy.
VERSION_MISMATCH = re.compile(
    r"^(Unsatisfied version .* of shared singleton module|No satisfying version .* of shared module)"
)


@dataclass
class Watch:
    """What a page did that a learner should never meet: console errors, shared-module version
    mismatch warnings, uncaught exceptions, requests that would leave the machine (each aborted),
    and the kernel it talks to."""

    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))
        page.on("websocket", self._socket)
        page.route(re.compile(r"^(?!(https?|wss?)://(127\.0\.0\.1|localhost)[:/]).*"), self._abort)

    def _console(self, message: Any) -> None:
        if message.type == "error" or (message.type == "warning" and VERSION_MISMATCH.match(message.text)):
            self.errors.append(f"console {message.type}: {message.text} at {message.location.get('url', '')}")

    def _socket(self, socket: Any) -> None:
        found = re.search(r"/api/kernels/([0-9a-f-]{36})/channels", socket.url)
        if found and found.group(1) not in self.kernels:
            self.kernels.append(found.group(1))

    def _abort(self, route: Any) -> None:
        self.external.append(route.request.url)
        route.abort()

    def clear(self) -> None:
        """Forget what the page did so far (a page kept for the next notebook starts clean)."""
        self.errors.clear()
        self.external.clear()
        self.kernels.clear()

    def assert_clean(self) -> None:
        assert not self.errors, "\n".join(self.errors)
        assert self.external == [], f"{len(self.external)} request(s) left loopback: {self.external}"


class Kernel:
    """A second client on the kernel a page runs (by its connection file), to read the package's
    state as the notebook's own objects see it."""

    def __init__(self, runtime: Path, kernel_id: str) -> None:
        from jupyter_client import BlockingKernelClient

        found = sorted(runtime.rglob(f"kernel-{kernel_id}.json"))  # Voila keeps them in a subfolder
        assert found, f"no connection file for kernel {kernel_id} under {runtime}"
        self.client = BlockingKernelClient(connection_file=str(found[0]))
        self.client.load_connection_file()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def value(self, code: str, expression: str) -> Any:
        """Run ``code`` quietly, then return ``expression`` (JSON-able) evaluated after it."""
        reply = self.client.execute(
            code, silent=True, store_history=False, user_expressions={"v": f"__import__('json').dumps({expression})"}
        )
        content = self.client.get_shell_msg(timeout=60)["content"]
        assert content["status"] == "ok", f"kernel probe failed: {content}"
        assert reply
        result = content["user_expressions"]["v"]
        assert result["status"] == "ok", f"kernel probe failed: {result.get('ename')}: {result.get('evalue')}"
        return json.loads(ast.literal_eval(result["data"]["text/plain"]))

    def close(self) -> None:
        self.client.stop_channels()
