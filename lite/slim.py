"""Trim the built site (lite/_output) to what a learner's visit uses; run by lite/build.sh.

bench/lite.py measured where a first visit waits (bench/README.md, "Browser edition"); this takes
out what the pages never use and lets the kernel load its packages in one parallel batch:

1. jedi (4.9 MB with its stubs, plus parso): IPython completes with its own completer instead,
   which knows names, attributes and keys; nothing else imports jedi. The kernel's hard-coded
   ``piplite.install('jedi')`` goes, and ``use_jedi`` is turned off where the kernel turns it on.
2. widgetsnbextension (2.2 MB): the classic Notebook's widget extension, which JupyterLab never
   loads (the site serves jupyterlab_widgets' labextension). anywidget's labextension (0.5 MB that
   JupyterLab loads at start): emq_lab makes no anywidget (its figures go through plotly's mimetype).
3. micropip and piplite join the packages Pyodide loads at start, in one parallel batch, instead
   of being loaded one after the other once the runtime is up.
4. emq-lab's lock entry depends only on what ``import emq_lab`` and a lab need (redis, fakeredis):
   a notebook's first cell no longer unpacks plotly, hypothesis, ipywidgets and theirs. They stay
   in the lock, and emq_lab/_browser/wheels.py installs each when emq_lab first imports it.
5. plotly's wheel without the JavaScript the kernel never reads (plotly.js for standalone HTML,
   the FigureWidget bundle, two copies of the JupyterLab extension the site serves anyway):
   10.2 MB to about 4 MB, and some 19 MB less to unpack.
6. The modules a visit imports get their bytecode in the wheels (lite/pycompile.mjs), so the
   browser does not compile them on every visit; the lock's hashes follow.
7. lab/index.html also loads lite/early-kernel.js, which starts the linked notebook's kernel while
   JupyterLab is still building the page instead of once the notebook is shown.

Each change is checked against the pinned versions (lite/pins.env): a pattern not found is an
error, so a version bump cannot silently undo it.

    python lite/slim.py lite/_output <pyodide npm package dir> <notebooks dir>
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

UNUSED = ("jedi", "parso", "widgetsnbextension")
UNUSED_LABEXTENSIONS = ("anywidget",)
KERNEL_START = ("micropip", "piplite")
# What emq-lab's lock entry keeps: the first cell's `import emq_lab` and `emq_lab.connect()`.
EMQ_LAB_EAGER = ("redis", "fakeredis")
# Members of a vendored wheel that no visit reads (a name ending in "/" is a folder).
WHEEL_UNUSED = {
    "plotly": (
        "plotly/package_data/plotly.min.js",  # for HTML files with plotly.js inside
        "plotly/package_data/widgetbundle.js",  # FigureWidget's bundle; emq_lab never makes one
        "plotly/labextension/",  # the JupyterLab extension, which the site serves from extensions/
        ".data/",  # the same extension again, as the wheel's data files
    ),
}
# The kernel extension's start-up code (lite/pins.env JUPYTERLITE_PYODIDE_KERNEL), as minified.
JEDI_INSTALL = '"pyodide-kernel","jedi","ipython"]'
WITHOUT_JEDI = '"pyodide-kernel","ipython"]'
IMPORT_KERNEL = '"import pyodide_kernel"'
NO_JEDI = '"import pyodide_kernel; pyodide_kernel.ipython_shell.Completer.use_jedi = False"'
# The kernel's start-up imports piplite to give it the site's settings; piplite imports micropip and
# unittest.mock, 1-3 s before Idle (measured under load) for a `%pip` that few visits run. The
# settings are applied instead when piplite is first imported (by `%pip` or a cell).
PIPLITE_SETUP = re.compile(
    r"import piplite\.piplite\n(?P<indent>[ ]*)"
    r"piplite\.piplite\._PIPLITE_DISABLE_PYPI = (?P<pypi>\$\{\w+\?\"True\":\"False\"\})\n"
    r"[ ]*piplite\.piplite\._PIPLITE_URLS = (?P<urls>\$\{JSON\.stringify\(\w+\)\})"
)
PIPLITE_ON_IMPORT = """def _piplite_settings():
    import sys
    from importlib.machinery import PathFinder
    class PipliteSettings:
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name != "piplite.piplite":
                return None
            sys.meta_path.remove(cls)
            spec = PathFinder.find_spec(name, path)
            if spec is not None:
                run = spec.loader.exec_module
                def exec_module(module):
                    run(module)
                    module._PIPLITE_DISABLE_PYPI = {pypi}
                    module._PIPLITE_URLS = {urls}
                spec.loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, PipliteSettings)
_piplite_settings()
del _piplite_settings"""


def trim_lock(site: Path) -> list[str]:
    lock_path = site / "static" / "pyodide-lock" / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    packages = lock["packages"]
    removed = []
    for name in UNUSED:
        entry = packages.pop(name, None)
        if entry is None:
            raise SystemExit(f"lite/slim.py: {name} is not in {lock_path}; is it still worth removing?")
        wheel = (lock_path.parent / entry["file_name"]).resolve()
        if wheel.parent == lock_path.parent.resolve():  # only the wheels this site vendors
            removed.append(f"{wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB)")
            wheel.unlink()
    for entry in packages.values():
        entry["depends"] = [d for d in entry.get("depends", []) if d not in UNUSED]
    lock_path.write_text(json.dumps(lock, indent=1), encoding="utf-8")
    return removed


def lazy_dependencies(site: Path) -> list[str]:
    """emq-lab's lock entry depends on EMQ_LAB_EAGER only; the rest (still in the lock) load on import."""
    lock_path = site / "static" / "pyodide-lock" / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    entry = lock["packages"]["emq-lab"]
    if not set(EMQ_LAB_EAGER) <= set(entry["depends"]):
        raise SystemExit(f"lite/slim.py: emq-lab no longer depends on {EMQ_LAB_EAGER}: {entry['depends']}")
    lazy = sorted(set(entry["depends"]) - set(EMQ_LAB_EAGER))
    entry["depends"] = list(EMQ_LAB_EAGER)
    lock_path.write_text(json.dumps(lock, indent=1), encoding="utf-8")
    return lazy


def _unused(member: str, patterns: tuple[str, ...]) -> str | None:
    top = member.split("/", 1)[0]
    for pattern in patterns:
        if member == pattern or (pattern.endswith("/") and member.startswith(pattern)):
            return pattern
        if pattern == ".data/" and top.endswith(".data") and "/" in member:
            return pattern
    return None


def trim_wheels(site: Path) -> list[str]:
    """Rewrite each wheel of WHEEL_UNUSED without those members (the lock's sha256 follows later)."""
    lock_path = site / "static" / "pyodide-lock" / "pyodide-lock.json"
    packages = json.loads(lock_path.read_text(encoding="utf-8"))["packages"]
    trimmed = []
    for name, patterns in WHEEL_UNUSED.items():
        wheel = (lock_path.parent / packages[name]["file_name"]).resolve()
        before = wheel.stat().st_size
        with zipfile.ZipFile(wheel) as source:
            kept = [info for info in source.infolist() if _unused(info.filename, patterns) is None]
            matched = {_unused(info.filename, patterns) for info in source.infolist()} - {None}
            if matched != set(patterns):
                raise SystemExit(f"lite/slim.py: {wheel.name} has nothing under {sorted(set(patterns) - matched)}")
            with zipfile.ZipFile(f"{wheel}.tmp", "w", zipfile.ZIP_DEFLATED) as target:
                for info in kept:
                    target.writestr(info, source.read(info))
        os.replace(f"{wheel}.tmp", wheel)
        trimmed.append(f"{wheel.name} {before / 1e6:.1f} -> {wheel.stat().st_size / 1e6:.1f} MB")
    return trimmed


def drop_labextensions(site: Path) -> None:
    config_path = site / "jupyter-lite.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    extensions = config["jupyter-config-data"]["federated_extensions"]
    for name in UNUSED_LABEXTENSIONS:
        if not any(extension["name"] == name for extension in extensions):
            raise SystemExit(f"lite/slim.py: the site has no {name} labextension; is it still worth removing?")
        extensions[:] = [extension for extension in extensions if extension["name"] != name]
        shutil.rmtree(site / "extensions" / name)
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def kernel_packages(site: Path) -> None:
    config_path = site / "jupyter-lite.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    settings = config["jupyter-config-data"]["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    packages = settings["loadPyodideOptions"]["packages"]
    packages += [name for name in KERNEL_START if name not in packages]
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def patch_kernel(site: Path) -> list[str]:
    """The start-up code is in the extension's chunk and in each of its two workers."""
    patched = []
    static = site / "extensions" / "@jupyterlite" / "pyodide-kernel-extension" / "static"
    for script in sorted(static.glob("*.js")):
        text = script.read_text(encoding="utf-8")
        if JEDI_INSTALL not in text:
            continue
        if text.count(JEDI_INSTALL) != 1 or text.count(IMPORT_KERNEL) != 1:
            raise SystemExit(f"lite/slim.py: {script.name} does not start the kernel as expected")
        if len(PIPLITE_SETUP.findall(text)) != 1:
            raise SystemExit(f"lite/slim.py: {script.name} does not set piplite up as expected")
        text = text.replace(JEDI_INSTALL, WITHOUT_JEDI).replace(IMPORT_KERNEL, NO_JEDI)
        text = PIPLITE_SETUP.sub(_piplite_on_import, text)
        script.write_text(text, encoding="utf-8")
        patched.append(script.name)
    if not patched:
        raise SystemExit(f"lite/slim.py: no kernel start-up code found in {static}")
    return patched


def _piplite_on_import(found: re.Match[str]) -> str:
    code = PIPLITE_ON_IMPORT.replace("{pypi}", found["pypi"]).replace("{urls}", found["urls"])
    return code.replace("\n", "\n" + found["indent"])


def compile_wheels(site: Path, pyodide: Path, notebooks: Path) -> int:
    """Bytecode into the vendored wheels, then each wheel's new sha256 into the lock (Pyodide checks it)."""
    wheels = site / "static" / "pyodide-lock"
    script = Path(__file__).with_name("pycompile.mjs")
    run = subprocess.run(
        ["node", str(script), str(pyodide), str(wheels), str(notebooks)], capture_output=True, text=True
    )
    if run.returncode != 0:
        raise SystemExit(f"lite/pycompile.mjs failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}")
    lock_path = wheels / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    for entry in lock["packages"].values():
        wheel = (wheels / entry["file_name"]).resolve()
        if wheel.parent == wheels.resolve():
            entry["sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
    lock_path.write_text(json.dumps(lock, indent=1), encoding="utf-8")
    return sum(int(line.rsplit(" ", 1)[1]) for line in run.stdout.splitlines() if " " in line)


EARLY_KERNEL = Path(__file__).with_name("early-kernel.js")
LAB_HEAD = "</head>"


def early_kernel(site: Path) -> None:
    """lite/early-kernel.js into the site, loaded by the lab's page (the link's page) before the app."""
    shutil.copyfile(EARLY_KERNEL, site / EARLY_KERNEL.name)
    page = site / "lab" / "index.html"
    text = page.read_text(encoding="utf-8")
    if text.count(LAB_HEAD) != 1:
        raise SystemExit(f"lite/slim.py: {page} has no single {LAB_HEAD}")
    tag = f'    <script src="../{EARLY_KERNEL.name}"></script>\n'
    page.write_text(text.replace(LAB_HEAD, tag + LAB_HEAD), encoding="utf-8")


def main(site: Path, pyodide: Path, notebooks: Path) -> None:
    removed = trim_lock(site)
    lazy = lazy_dependencies(site)
    trimmed = trim_wheels(site)
    drop_labextensions(site)
    kernel_packages(site)
    patched = patch_kernel(site)
    early_kernel(site)
    modules = compile_wheels(site, pyodide, notebooks)
    # Chromium asks for /favicon.ico when a page names none (JupyterLite's pages name theirs later).
    shutil.copyfile(site / "lab" / "favicon.ico", site / "favicon.ico")
    print(f"lite/slim.py: removed {', '.join(removed)}; emq-lab's {', '.join(lazy)} load on import; "
          f"trimmed {', '.join(trimmed)}; kernel start-up patched in {', '.join(patched)}; "
          f"{modules} modules compiled into the wheels")  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
