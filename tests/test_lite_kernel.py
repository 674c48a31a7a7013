"""The JupyterLite edition's kernel as the site starts it (lite/slim.py): started by
lite/early-kernel.js before the notebook is shown, once; what it has imported at Idle, and what
installs later, on first import (emq_lab/_browser/wheels.py).

One visit of 00-start in headless Chromium (requests off loopback refused, console errors fail the
test, as in test_lite_browser.py); the kernel answers a cell sent to it directly. Then the page
runs as test_lite_browser.py runs every notebook (Run All, the stored outputs, axe-core): one
kernel start of the site's slowest part, not two.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from litesite import ROOT, site
from test_lite_browser import Guard, browser, opened, page, runs_as_stored, served, site_page  # noqa: F401 - the fixtures

pytestmark = [pytest.mark.xdist_group("lite"), pytest.mark.browser]  # make test-browser

RUN = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const found = [];
  const future = kernel.requestExecute({code});
  future.onIOPub = (msg) => {
    if (msg.content.text) found.push(msg.content.text);
    if (msg.content.ename) found.push(`${msg.content.ename}: ${msg.content.evalue}`);
  };
  await future.done;
  return found.join("");
}"""

STATE = """
import json, sys
WATCHED = ("piplite", "micropip", "plotly", "hypothesis", "ipywidgets", "emq_lab")
def imported():
    return sorted(m for m in WATCHED if m in sys.modules)
"""


KERNELS = """async () => {
  const services = window.jupyterapp.serviceManager;
  await services.sessions.refreshRunning();
  await services.kernels.refreshRunning();
  return {
    sessions: [...services.sessions.running()].map((s) => [s.path, s.kernel.id]),
    kernels: [...services.kernels.running()].map((k) => k.id),
    notebook: window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id,
  };
}"""


def run(tab: Any, code: str) -> Any:
    out = tab.evaluate(RUN, code)
    assert "Error" not in out, out
    return json.loads(out.strip().splitlines()[-1])


def test_the_kernel_starts_early_and_once_and_defers_piplite_and_the_dives_packages(
    page: tuple[Any, Guard],  # noqa: F811 - the fixture imported above
    served: str,  # noqa: F811
) -> None:
    browser_page, guard = page
    config = json.loads((site().output / "jupyter-lite.json").read_text(encoding="utf-8"))
    kernel = config["jupyter-config-data"]["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert browser_page.url == "about:blank"  # the site opens here: its kernel starts early, as a learner's first does
    idle = opened(browser_page, served, "00-start.ipynb")

    # lite/early-kernel.js asked for the kernel while the page was being built; the notebook then
    # found that session and connected to it: one session, one kernel, and it is the notebook's
    assert browser_page.evaluate("window.emqEarlyKernel") == "started"
    found = browser_page.evaluate(KERNELS)
    assert found["sessions"] == [["00-start.ipynb", found["notebook"]]]
    assert found["kernels"] == [found["notebook"]]

    assert run(browser_page, STATE + "print(json.dumps(imported()))") == []

    # emq_lab itself brings none of the dives' heavy packages; each comes with its first import
    assert run(browser_page, "import emq_lab\nprint(json.dumps(imported()))") == ["emq_lab"]
    assert run(browser_page, "from emq_lab.widgets import BootPanel\nprint(json.dumps(imported()))") == [
        "emq_lab",
        "ipywidgets",
    ]
    assert run(browser_page, "from emq_lab.widgets import CadenceExplorer\nprint(json.dumps(imported()))") == [
        "emq_lab",
        "ipywidgets",
        "plotly",
    ]

    # a %pip (or a cell's `import piplite`) still finds piplite set up with the site's index
    settings = "import piplite.piplite as p\nprint(json.dumps([p._PIPLITE_DISABLE_PYPI, p._PIPLITE_URLS]))"
    disable_pypi, urls = run(browser_page, settings)
    assert disable_pypi is bool(kernel.get("disablePyPIFallback", False))
    assert [url.rsplit("/", 1)[-1].split("?")[0] for url in urls][:1] == ["all.json"]
    assert guard.errors == [], f"console errors: {guard.errors}"

    runs_as_stored(browser_page, guard, ROOT / "notebooks" / "00-start.ipynb", idle)
