"""Trim the built site (lite/_output) to what a learner's visit uses; run by lite/build.sh.

bench/lite.py measured where a first visit waits (bench/README.md, "Browser edition"); this takes
out what the pages never use and lets the kernel load its packages in one parallel batch:

1. jedi (4.9 MB with its stubs, plus parso): IPython completes with its own completer instead,
   which knows names, attributes and keys; nothing else imports jedi. The kernel's hard-coded
   ``piplite.install('jedi')`` goes, and ``use_jedi`` is turned off where the kernel turns it on.
2. widgetsnbextension (2.2 MB): the classic Notebook's widget extension, which JupyterLab never
   loads (the site serves jupyterlab_widgets' labextension).
3. micropip and piplite join the packages Pyodide loads at start, in one parallel batch, instead
   of being loaded one after the other once the runtime is up.
4. The modules a visit imports get their bytecode in the wheels (lite/pycompile.mjs), so the
   browser does not compile them on every visit; the lock's hashes follow.

Each change is checked against the pinned versions (lite/pins.env): a pattern not found is an
error, so a version bump cannot silently undo it.

    python lite/slim.py lite/_output <pyodide npm package dir> <notebooks dir>
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

UNUSED = ("jedi", "parso", "widgetsnbextension")
KERNEL_START = ("micropip", "piplite")
# The kernel extension's start-up code (lite/pins.env JUPYTERLITE_PYODIDE_KERNEL), as minified.
JEDI_INSTALL = '"pyodide-kernel","jedi","ipython"]'
WITHOUT_JEDI = '"pyodide-kernel","ipython"]'
IMPORT_KERNEL = '"import pyodide_kernel"'
NO_JEDI = '"import pyodide_kernel; pyodide_kernel.ipython_shell.Completer.use_jedi = False"'


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
        script.write_text(text.replace(JEDI_INSTALL, WITHOUT_JEDI).replace(IMPORT_KERNEL, NO_JEDI), encoding="utf-8")
        patched.append(script.name)
    if not patched:
        raise SystemExit(f"lite/slim.py: no kernel start-up code found in {static}")
    return patched


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


def main(site: Path, pyodide: Path, notebooks: Path) -> None:
    removed = trim_lock(site)
    kernel_packages(site)
    patched = patch_kernel(site)
    modules = compile_wheels(site, pyodide, notebooks)
    # Chromium asks for /favicon.ico when a page names none (JupyterLite's pages name theirs later).
    shutil.copyfile(site / "lab" / "favicon.ico", site / "favicon.ico")
    print(f"lite/slim.py: removed {', '.join(removed)}; kernel start-up patched in {', '.join(patched)}; "
          f"{modules} modules compiled into the wheels")  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
