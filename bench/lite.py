"""The browser edition's timings: how long a learner waits, cold and warm, per notebook.

    make bench-lite                          # = .venv/bin/python bench/lite.py (make bench runs it too)
    .venv/bin/python bench/lite.py --runs 3 --notebooks 01-upsert

Serves the built site (``make lite``, lite/_output) on 127.0.0.1 from a thread of this process, as
a static host such as GitHub Pages does (``Cache-Control: max-age=600``, ``Last-Modified``, 304 on
revalidation; no compression), and drives headless Chromium (/usr/bin/chromium) at 1280x800 with
every request off loopback refused. The server counts what it sends, so bytes and responses
include the kernel's web worker and exclude whatever the browser took from its caches.

Per notebook and run, three visits:
  cold    a fresh browser profile: the notebook shown, the kernel Idle, the first code cell's
          output and the end of Run All (pressed as soon as the kernel is Idle);
  panel   (the dives) a fresh profile again: the cells up to the first panel run, then its primary
          button (Boot #1, ...) is clicked; the time from opening the link to the panel changing;
  warm    a second visit in the cold visit's profile (its HTTP and service-worker caches): Idle
          and Run All again.
Each run also times the floor under the kernel's targets: a blank page (no JupyterLab) whose worker
loads Pyodide and the kernel's start-up packages from the site and imports IPython, cold and warm.
Each visit also reports the CPU seconds Chromium's processes spent from the link to Idle (Linux),
which a loaded machine stretches far less than the wall times.

    .venv/bin/python bench/lite.py --trace 01-upsert

prints instead where one cold and one warm visit's time goes: a timeline of marks from the page,
from the kernel's worker (served with marks added; the site on disk is not changed) and from each
cell (the packages its imports name, then its run), and the main thread's long tasks.
Nothing here asserts a time; the targets of issue 28 are printed beside the figures.
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import json
import os
import platform
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "lite" / "_output"
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM_ARGS, chromium_path  # noqa: E402
from test_browser import WALKS  # noqa: E402

NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
DIVES = [name for name in NOTEBOOKS if name[:2].isdigit() and name[:2] != "00"]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MB = 1_000_000
TIMEOUT_MS = 300_000

# issue 28's targets (cold cache, loopback, this machine)
TARGET_IDLE_S = 5.0
TARGET_PANEL_S = 8.0
TARGET_RUN_ALL_S = 4.0
TARGET_BYTES_MB = 25.0
TARGET_WARM_IDLE_S = 3.0


# -- the static host ------------------------------------------------------------------------------


@dataclass
class Sent:
    at: float  # time.monotonic() when the body was written
    path: str
    status: int
    size: int


class Log:
    def __init__(self, site: Path) -> None:
        self.site = site
        self.sent: list[Sent] = []
        self.lock = threading.Lock()
        self.gzip_sizes: dict[str, int] = {}

    def gzipped(self, sent: list[Sent]) -> int:
        """What these responses would weigh from a host that gzips them (GitHub Pages does, for text)."""
        total = 0
        for s in sent:
            path = s.path.split("?")[0].lstrip("/") or "index.html"
            if path not in self.gzip_sizes:
                file = self.site / path
                file = file / "index.html" if file.is_dir() else file
                self.gzip_sizes[path] = len(gzip.compress(file.read_bytes(), 6)) if file.is_file() else 0
            total += self.gzip_sizes[path] if s.size else 0
        return total

    def mark(self) -> int:
        with self.lock:
            return len(self.sent)

    def since(self, mark: int, until: float = float("inf")) -> list[Sent]:
        with self.lock:
            return [s for s in self.sent[mark:] if s.at <= until]


def handler(
    log: Log, max_age: int | None, site: Path, trace: bool = False
) -> type[http.server.SimpleHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".wasm": "application/wasm",
            ".mjs": "text/javascript",
            ".whl": "application/octet-stream",
        }

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(site), **kwargs)

        def send_response(self, code: int, message: str | None = None) -> None:
            self._status, self._size = code, 0
            super().send_response(code, message)

        def send_header(self, keyword: str, value: str) -> None:
            if keyword.lower() == "content-length":
                self._size = int(value)
            super().send_header(keyword, value)

        def end_headers(self) -> None:
            if max_age is not None:
                self.send_header("Cache-Control", f"max-age={max_age}")
            super().end_headers()

        def do_GET(self) -> None:
            if trace and TRACED_WORKER.search(self.path.split("?")[0]):
                self._send_traced()
            elif self.path.split("?")[0] == FLOOR_PATH:
                self._send(FLOOR_PAGE.encode(), "text/html")
            else:
                super().do_GET()
            body = self._size if self._status == 200 else 0
            with log.lock:
                log.sent.append(Sent(time.monotonic(), self.path, self._status, body))

        def _send_traced(self) -> None:
            body = traced_worker((site / self.path.split("?")[0].lstrip("/")).read_text(encoding="utf-8")).encode()
            self._send(body, "text/javascript")

        def _send(self, body: bytes, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serve(log: Log, max_age: int | None, site: Path, trace: bool = False) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(log, max_age, site, trace))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# -- the floor: the kernel's own work, without JupyterLab -----------------------------------------

FLOOR_PATH = "/__floor__.html"  # served by the bench's host, not a file of the site
# A blank page whose worker does what the kernel's worker does before Idle, minus the kernel:
# Pyodide from the site with the site's lock and the kernel's start-up packages, then `import IPython`.
FLOOR_PAGE = """<!doctype html><meta charset="utf-8"><title>floor</title><script type="module">
const config = (await (await fetch("/jupyter-lite.json")).json())["jupyter-config-data"];
const options = config.litePluginSettings["@jupyterlite/pyodide-kernel-extension:kernel"].loadPyodideOptions;
const source = `
  const { loadPyodide } = await import("${location.origin}/static/pyodide/pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL: "${location.origin}/static/pyodide/",
    lockFileURL: "${location.origin}/static/pyodide-lock/pyodide-lock.json",
    packages: ${JSON.stringify(options.packages)} });
  pyodide.runPython("import IPython");
  postMessage("done");`;
const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })), { type: "module" });
worker.onmessage = () => (window.floorDone = true);
worker.onerror = (e) => console.error(`floor: ${e.message}`);
</script>"""


def floor(playwright: Any, base: str, offsite: list[str]) -> tuple[float, float]:
    """Seconds from opening FLOOR_PAGE to `import IPython` done in its worker: a fresh profile, then
    the same profile again (its caches)."""
    found = []
    with tempfile.TemporaryDirectory(prefix="emq-lite-floor-") as home:
        for _ in ("cold", "warm"):
            with profile(playwright, Path(home), offsite) as context:
                page = context.new_page()
                start = time.monotonic()
                page.goto(f"{base}{FLOOR_PATH}", wait_until="commit")
                page.wait_for_function("window.floorDone === true", timeout=TIMEOUT_MS, polling=20)
                found.append(time.monotonic() - start)
    return found[0], found[1]


# -- one visit ------------------------------------------------------------------------------------


@dataclass
class Visit:
    shown: float = float("nan")
    idle: float = float("nan")
    first_output: float = float("nan")
    run_all: float = float("nan")
    answered: float = float("nan")  # the panel visit: opening the link -> the readout changed
    cpu_idle: float = float("nan")  # CPU seconds Chromium's processes spent from the link to Idle
    bytes_idle: int = 0
    gzip_idle: int = 0
    responses_idle: int = 0
    bytes_total: int = 0
    downloads: list[Sent] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def open_page(context: Any, visit: Visit) -> Any:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.on("console", lambda m: m.type == "error" and visit.errors.append(m.text))
    page.on("pageerror", lambda e: visit.errors.append(f"pageerror: {e}"))
    return page


def chromium_cpu(home: Path) -> float:
    """CPU seconds (user + system) of the Chromium running on profile ``home`` and its child
    processes so far (Linux /proc; NaN elsewhere). On a machine other jobs load, the wall times
    stretch with the load; this stays close to the work the visit asked for."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    roots = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if f"--user-data-dir={home}".encode() in (entry / "cmdline").read_bytes():
                roots.append(int(entry.name))
        except (OSError, IndexError):
            continue
        parents[int(entry.name)] = int(fields[1])
        ticks[int(entry.name)] = int(fields[11]) + int(fields[12])
    if not roots:
        return float("nan")
    found = set(roots)
    while True:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        if not more:
            break
        found |= more
    return sum(ticks[pid] for pid in found) / os.sysconf("SC_CLK_TCK")


def open_notebook(page: Any, url: str, visit: Visit, log: Log, home: Path | None = None) -> tuple[float, int]:
    """Open the link; the notebook shown and the kernel Idle, in seconds from the click."""
    mark = log.mark()
    cpu = chromium_cpu(home) if home else float("nan")
    start = time.monotonic()
    page.goto(url, wait_until="commit")
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(state="visible")
    visit.shown = time.monotonic() - start
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for()
    visit.idle = time.monotonic() - start
    visit.cpu_idle = chromium_cpu(home) - cpu if home else float("nan")
    before = log.since(mark, start + visit.idle)
    visit.bytes_idle = sum(s.size for s in before)
    visit.gzip_idle = log.gzipped(before)
    visit.responses_idle = len(before)
    return start, mark


CELLS = "window.jupyterapp.shell.currentWidget.content.model.cells"
FIRST_RAN = f"""() => {{
  const cells = {CELLS};
  for (let i = 0; i < cells.length; i++) {{
    const cell = cells.get(i);
    if (cell.type === "code") return cell.outputs.length > 0 || cell.executionCount !== null;
  }}
  return true;
}}"""
ALL_RAN = f"""() => {{
  const cells = {CELLS};
  for (let i = 0; i < cells.length; i++) {{
    const cell = cells.get(i);
    if (cell.type !== "code") continue;
    if (cell.outputs.toJSON().some((o) => o.output_type === "error")) return true;
    if (cell.executionCount === null) return false;
  }}
  return true;
}}"""


def run_all(page: Any, visit: Visit, start: float) -> None:
    pressed = time.monotonic()
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")  # not awaited
    page.wait_for_function(FIRST_RAN, polling=50)
    visit.first_output = time.monotonic() - start
    page.wait_for_function(ALL_RAN, polling=50)
    page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for()
    visit.run_all = time.monotonic() - pressed


def first_panel_cell(notebook: str) -> int | None:
    cells = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            if "application/vnd.jupyter.widget-view+json" in output.get("data", {}):
                return index
    return None


def click_first_panel(page: Any, visit: Visit, start: float, cell: int) -> None:
    page.evaluate(
        f"""async () => {{
          const app = window.jupyterapp;
          app.shell.currentWidget.content.activeCellIndex = {cell};
          await app.commands.execute('notebook:run-all-above');
          await app.commands.execute('notebook:run-cell');
        }}"""
    )
    panel = page.locator(", ".join(WALKS)).first
    readout = panel.locator(".emq-readout").first
    page.wait_for_function("el => el.innerText.trim().length > 0", arg=readout.element_handle())
    before = panel.inner_text()
    primary = panel.locator("button.mod-primary:not([disabled])")  # Boot #1, Tick, ...: the panel's action
    (primary if primary.count() else panel.locator("button:not([disabled]):not(.mod-active)")).first.click()
    page.wait_for_function(
        "([el, text]) => el.innerText !== text", arg=[panel.element_handle(), before], polling=50, timeout=60_000
    )
    visit.answered = time.monotonic() - start


def downloads(log: Log, mark: int) -> list[Sent]:
    return sorted(log.since(mark), key=lambda s: -s.size)


@contextmanager
def profile(playwright: Any, directory: Path, offsite: list[str]) -> Iterator[Any]:
    """Chromium on the profile in ``directory`` (a real one, with its disk cache: a fresh
    directory is a first visit, the same one again a second visit). Requests off loopback fail in
    name resolution and are listed; Playwright's routing is not used, since it turns the HTTP cache off."""
    context = playwright.chromium.launch_persistent_context(
        str(directory), executable_path=chromium_path(), headless=True, viewport={"width": 1280, "height": 800},
        args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"],
    )  # fmt: skip
    context.on("request", lambda r: (urlsplit(r.url).hostname or "") in LOOPBACK or r.url.startswith(("data:", "blob:"))
               or offsite.append(r.url))  # fmt: skip
    try:
        yield context
    finally:
        context.close()


def measure(playwright: Any, base: str, log: Log, notebook: str, offsite: list[str]) -> tuple[Visit, Visit, Visit]:
    url = f"{base}/lab/index.html?path={notebook}.ipynb"
    cold, panel, warm = Visit(), Visit(), Visit()
    with tempfile.TemporaryDirectory(prefix="emq-lite-bench-") as home:
        for visit in (cold, warm):  # the warm visit reuses the cold one's profile and its cache
            with profile(playwright, Path(home), offsite) as context:
                page = open_page(context, visit)
                start, mark = open_notebook(page, url, visit, log, Path(home))
                run_all(page, visit, start)
                visit.bytes_total = sum(s.size for s in log.since(mark))
                visit.downloads = downloads(log, mark)

    cell = first_panel_cell(notebook) if notebook in DIVES else None
    if cell is not None:
        with (
            tempfile.TemporaryDirectory(prefix="emq-lite-bench-") as home,
            profile(playwright, Path(home), offsite) as context,
        ):
            page = open_page(context, panel)
            start, _ = open_notebook(page, url, panel, log)
            click_first_panel(page, panel, start, cell)
    return cold, panel, warm


# -- where the wait goes (--trace) ---------------------------------------------------------------

# The kernel's web workers (served with marks when tracing; the site on disk is not changed).
TRACED_WORKER = re.compile(r"/(?:comlink|coincident)\.worker\.[0-9a-f]+\.js$")
MARK = "emq-trace "
START_UP = re.compile(
    r"await this\.initRuntime\((\w)\),await this\.initFilesystem\(\1\),await this\.initPackageManager\(\1\),"
    r"await this\.initKernel\(\1\),await this\.initGlobals\(\1\)"
)
PYODIDE_IMPORTED = re.compile(r"(\{loadPyodide:\w+\}=await \w+\(\w+\);)")
# loadPyodide's own package loading, split out so that its time shows apart from the runtime's.
PYODIDE_OPTIONS = re.compile(r"\.\.\.(\w)\.loadPyodideOptions\}\),")
KERNEL_IMPORT = '"import pyodide_kernel; pyodide_kernel.ipython_shell.Completer.use_jedi = False"'
# Python run by the kernel's start-up: a mark before IPython's import, and after the kernel is up,
# marks around each cell's package loading (loadPackagesFromImports) and around each cell's run.
BEFORE_KERNEL = """import js
js.__emqT("kernel start-up: import IPython")
import IPython
js.__emqT("kernel start-up: import pyodide_kernel (the shell's set-up)")
"""
AFTER_KERNEL = """
import pyodide_kernel.kernel as _emq_k
_emq_load, _emq_run = _emq_k._load_packages_from_imports, _emq_k.PyodideKernel.run
async def _emq_timed_load(code):
    js.__emqT("cell: load the packages its imports name")
    await _emq_load(code)
    js.__emqT("cell: run " + repr(code[:60]))
async def _emq_timed_run(self, code):
    try:
        return await _emq_run(self, code)
    finally:
        js.__emqT("cell: done")
_emq_k._load_packages_from_imports = _emq_timed_load
_emq_k.PyodideKernel.run = _emq_timed_run
"""


def traced_worker(text: str) -> str:
    """The worker's code with marks (console.log of a name and Date.now()) between its start-up steps."""
    steps = START_UP.search(text)
    if steps is None or text.count(KERNEL_IMPORT) != 1:
        raise SystemExit("bench/lite.py --trace: the kernel's worker does not start as expected (lite/pins.env?)")
    e = steps.group(1)
    traced = (
        f'__emqT("worker: loadPyodide (wasm, stdlib, interpreter, kernel packages)"),await this.initRuntime({e}),'
        f'__emqT("worker: file system"),await this.initFilesystem({e}),'
        f'__emqT("worker: package manager (piplite)"),await this.initPackageManager({e}),'
        f'__emqT("worker: kernel"),await this.initKernel({e}),'
        f'__emqT("worker: kernel globals"),await this.initGlobals({e}),__emqT("worker: ready")'
    )
    text = text[: steps.start()] + traced + text[steps.end() :]
    text = PYODIDE_IMPORTED.sub(r'\1__emqT("worker: pyodide.mjs imported");', text, count=1)
    text = PYODIDE_OPTIONS.sub(
        r'...\1.loadPyodideOptions,packages:[]}),__emqT("worker: the kernel\'s packages (fetch, unpack)"),'
        r"await this._pyodide.loadPackage(\1.loadPyodideOptions.packages),",
        text,
        count=1,
    )
    text = text.replace(KERNEL_IMPORT, json.dumps(BEFORE_KERNEL + json.loads(KERNEL_IMPORT) + AFTER_KERNEL))
    prelude = f'self.__emqT=(n)=>console.log("{MARK}"+Date.now()+" "+n);__emqT("worker: script evaluated");'
    return prelude + text


PAGE_PROBE = f"""(() => {{
  window.__emqLong = [];
  new PerformanceObserver((list) => {{
    for (const e of list.getEntries()) window.__emqLong.push([e.startTime, e.duration]);
  }}).observe({{type: "longtask", buffered: true}});
  let app;
  Object.defineProperty(window, "jupyterapp", {{configurable: true, get() {{ return app; }},
    set(value) {{
      app = value;
      console.log("{MARK}" + Date.now() + " page: JupyterLab started (window.jupyterapp)");
    }}}});
}})();"""
RESOURCES = """() => performance.getEntriesByType("resource").map((e) =>
  [e.name, performance.timeOrigin + e.startTime, performance.timeOrigin + e.responseEnd, e.encodedBodySize])"""


def collect(marks: list[tuple[float, str]]) -> Any:
    """A console listener that adds the trace's marks (and Pyodide's package messages) to ``marks``."""

    def console(message: Any) -> None:
        text = message.text
        if text.startswith(MARK):
            at, name = text[len(MARK) :].split(" ", 1)
            marks.append((float(at), name))
        elif text.startswith(("Loading ", "Loaded ")):
            marks.append((time.time() * 1000, f"worker: {text[:90]}"))

    return console


def trace(playwright: Any, base: str, notebook: str, offsite: list[str]) -> None:
    """One cold and one warm visit of ``notebook`` with Run All, printed as a timeline of marks
    (milliseconds since the link was opened): the page's, the kernel worker's, and each cell's."""
    url = f"{base}/lab/index.html?path={notebook}.ipynb"
    with tempfile.TemporaryDirectory(prefix="emq-lite-trace-") as home:
        for kind in ("cold", "warm"):
            marks: list[tuple[float, str]] = []
            visit = Visit()
            with profile(playwright, Path(home), offsite) as context:
                context.add_init_script(PAGE_PROBE)
                page = open_page(context, visit)
                page.on("console", collect(marks))
                opened = time.time() * 1000
                page.goto(url, wait_until="commit")
                page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(state="visible")
                marks.append((time.time() * 1000, "page: notebook shown"))
                page.locator("#jp-main-statusbar").get_by_text("Idle").wait_for()
                idle = time.time() * 1000
                marks.append((idle, "page: kernel Idle; Run All pressed"))
                run_all(page, visit, time.monotonic())
                marks.append((time.time() * 1000, "page: Run All done"))
                fetched = page.evaluate(RESOURCES) + [r for w in page.workers for r in w.evaluate(RESOURCES)]
                origin = page.evaluate("performance.timeOrigin")
                busy = [duration for _, duration in page.evaluate("window.__emqLong")]
                marks += [(origin + start, f"page: main thread busy {duration:.0f} ms")
                          for start, duration in page.evaluate("window.__emqLong") if duration >= 250]  # fmt: skip
                marks += [(end, f"fetched {urlsplit(name).path.rsplit('/', 1)[-1]} ({size / MB:.1f} MB)")
                          for name, _, end, size in fetched if size > MB]  # fmt: skip
            print(f"\n{notebook}, {kind} visit: ms since the link was opened (each line: the step that starts there)")
            marks.sort()
            for (at, name), after in zip(marks, [*marks[1:], (marks[-1][0], "")], strict=True):
                print(f"  {at - opened:8.0f}  +{after[0] - at:6.0f}  {name}")
            print(f"  main thread: {len(busy)} long tasks, {sum(busy) / 1000:.1f} s busy in all")


# -- the report -----------------------------------------------------------------------------------


def span(values: list[float], unit: str = " s", digits: int = 1) -> str:
    found = [v for v in values if v == v]  # not NaN
    if not found:
        return "—"
    low, high = min(found), max(found)
    if len(found) == 1 or round(low, digits) == round(high, digits):
        return f"{low:.{digits}f}{unit}"
    return f"{low:.{digits}f}–{high:.{digits}f}{unit}"


def table(results: dict[str, list[tuple[Visit, Visit, Visit]]]) -> list[str]:
    lines = [
        "| notebook | shown | Idle | 1st output | Run All | panel answers | MB / responses before Idle "
        "| warm: Idle | warm: Run All | warm: MB before Idle | CPU s to Idle, cold / warm |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for notebook, runs in results.items():
        cold = [r[0] for r in runs]
        panel = [r[1] for r in runs]
        warm = [r[2] for r in runs]
        lines.append(
            f"| {notebook} | {span([v.shown for v in cold])} | {span([v.idle for v in cold])} "
            f"| {span([v.first_output for v in cold])} | {span([v.run_all for v in cold])} "
            f"| {span([v.answered for v in panel])} "
            f"| {span([v.bytes_idle / MB for v in cold], ' MB')} "
            f"({span([v.gzip_idle / MB for v in cold], ' MB')} gzipped) "
            f"/ {span([v.responses_idle for v in cold], '', 0)} "
            f"| {span([v.idle for v in warm])} | {span([v.run_all for v in warm])} "
            f"| {span([v.bytes_idle / MB for v in warm], ' MB', 2)} "
            f"| {span([v.cpu_idle for v in cold])} / {span([v.cpu_idle for v in warm])} |"
        )
    return lines


def largest(visit: Visit, count: int) -> list[str]:
    idle_bytes = visit.bytes_idle
    lines = [f"The largest downloads of one cold visit ({visit.bytes_total / MB:.1f} MB in all, "
             f"{idle_bytes / MB:.1f} MB of it before Idle):", ""]  # fmt: skip
    lines += [f"- {s.size / MB:5.2f} MB  {s.path.split('?')[0]}" for s in visit.downloads[:count]]
    return lines


def targets(results: dict[str, list[tuple[Visit, Visit, Visit]]], floors: list[tuple[float, float]]) -> list[str]:
    def best(values: list[float]) -> float:
        found = [v for v in values if v == v]
        return min(found) if found else float("nan")

    def worst(values: list[float]) -> float:
        found = [v for v in values if v == v]
        return max(found) if found else float("nan")

    cold = [r[0] for runs in results.values() for r in runs]
    warm = [r[2] for runs in results.values() for r in runs]
    dives = [r for name, runs in results.items() if name in DIVES for r in runs]
    first = results.get(DIVES[0], []) if DIVES else []
    checks = [
        ("kernel Idle, cold", [v.idle for v in cold], TARGET_IDLE_S, " s"),
        (f"first dive ({DIVES[0] if DIVES else '-'}): its first panel answers a click",
         [r[1].answered for r in first], TARGET_PANEL_S, " s"),
        ("Run All, each dive, cold", [r[0].run_all for r in dives], TARGET_RUN_ALL_S, " s"),
        ("bytes before Idle, cold", [v.bytes_idle / MB for v in cold], TARGET_BYTES_MB, " MB"),
        ("the same, from a host that gzips", [v.gzip_idle / MB for v in cold], TARGET_BYTES_MB, " MB"),
        ("kernel Idle, warm", [v.idle for v in warm], TARGET_WARM_IDLE_S, " s"),
        ("floor: a blank page's worker, no JupyterLab (Pyodide, the kernel's packages, `import IPython`), cold",
         [cold for cold, _ in floors], TARGET_IDLE_S, " s"),
        ("the same floor, warm", [warm for _, warm in floors], TARGET_WARM_IDLE_S, " s"),
    ]  # fmt: skip
    lines = ["| target | limit | fastest | slowest | met |", "|---|---|---|---|---|"]
    for name, values, limit, unit in checks:
        low, high = best(values), worst(values)
        met = "yes" if high <= limit else ("in the fastest run" if low <= limit else "no")
        lines.append(f"| {name} | ≤ {limit:g}{unit} | {low:.1f}{unit} | {high:.1f}{unit} | {met} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="visits of each kind per notebook (default 3)")
    parser.add_argument("--notebooks", nargs="*", default=NOTEBOOKS, help="stems, e.g. 01-upsert")
    parser.add_argument("--max-age", type=int, default=600, help="Cache-Control max-age; -1 sends none")
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (default lite/_output)")
    parser.add_argument("--json", type=Path, help="also write every visit's figures here")
    parser.add_argument("--trace", metavar="NOTEBOOK", help="only print where one cold and one warm visit's time goes")
    args = parser.parse_args()
    if not (args.site / "jupyter-lite.json").exists():
        print("bench/lite.py: no site in lite/_output; run `make lite` first", file=sys.stderr)
        return 2
    executable = chromium_path()
    if executable is None:
        print("bench/lite.py: no Chromium (/usr/bin/chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    log = Log(args.site)
    if args.trace:
        refused: list[str] = []
        with serve(log, args.max_age, args.site, trace=True) as base, sync_playwright() as playwright:
            trace(playwright, base, args.trace, refused)
        if refused:
            print("\nrequests off loopback (failed): " + ", ".join(sorted(set(refused))))
        return 0
    results: dict[str, list[tuple[Visit, Visit, Visit]]] = {name: [] for name in args.notebooks}
    floors: list[tuple[float, float]] = []
    errors: list[str] = []
    offsite: list[str] = []
    with serve(log, None if args.max_age < 0 else args.max_age, args.site) as base, sync_playwright() as playwright:
        for run in range(args.runs):
            for notebook in args.notebooks:
                visits = measure(playwright, base, log, notebook, offsite)
                results[notebook].append(visits)
                cold, panel, warm = visits
                errors += [f"{notebook}: {e}" for v in visits for e in v.errors]
                print(
                    f"run {run + 1} {notebook}: shown {cold.shown:.1f} s, Idle {cold.idle:.1f} s "
                    f"({cold.bytes_idle / MB:.1f} MB, {cold.responses_idle} responses, {cold.cpu_idle:.1f} CPU s), "
                    f"1st output {cold.first_output:.1f} s, Run All {cold.run_all:.1f} s, "
                    f"panel {panel.answered:.1f} s; warm Idle {warm.idle:.1f} s ({warm.cpu_idle:.1f} CPU s), "
                    f"Run All {warm.run_all:.1f} s "
                    f"({warm.bytes_total / MB:.2f} MB in all)",
                    flush=True,
                )
            floors.append(floor(playwright, base, offsite))
            print(f"run {run + 1} floor (no JupyterLab): import IPython {floors[-1][0]:.1f} s cold, "
                  f"{floors[-1][1]:.1f} s warm", flush=True)  # fmt: skip

    site_mb = sum(f.stat().st_size for f in args.site.rglob("*") if f.is_file()) / MB
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print()
    print(f"bench/lite.py, {when}, {args.runs} run(s), {platform.machine()} with {os.cpu_count()} cores, "
          f"Chromium headless 1280x800, site {site_mb:.0f} MB, Cache-Control max-age={args.max_age}")  # fmt: skip
    print()
    print("\n".join(table(results)))
    print()
    print("\n".join(targets(results, floors)))
    print()
    first = next(iter(results.values()))[0][0]
    print("\n".join(largest(first, 12)))
    missing = sorted({s.path for s in log.sent if s.status == 404})
    if missing:
        print("\nnot found (404): " + ", ".join(missing))
    if offsite:
        print("\nrequests off loopback (failed): " + ", ".join(sorted(set(offsite))))
    if errors:
        print("\nconsole errors:\n" + "\n".join(sorted(set(errors))))
    if args.json:
        args.json.write_text(
            json.dumps(
                {name: [[{k: v for k, v in vars(x).items() if k != "downloads"} for x in r] for r in runs]
                 for name, runs in results.items()},
                indent=1,
            )
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
