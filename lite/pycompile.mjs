// Add compiled bytecode to the site's wheels, so that the browser imports them without compiling.
// usage: node lite/pycompile.mjs <pyodide dir (the npm package the site serves)> <dir of wheels> <notebooks dir>
// Run by lite/slim.py. Compiling is most of what a first `import` costs in the browser (emq_lab
// and its dependencies: about 3 s of a cold Run All). It happens here in that same Pyodide, so the
// bytecode is the site's Python's. Only the modules a visit imports are compiled (found by
// importing what the kernel and the notebooks import), since bytecode is larger than the source:
// each such `m.py` gains `__pycache__/m.cpython-3XX.pyc`, hash-based and unchecked (PEP 552), which
// the import takes without reading the source; the source stays for tracebacks and readers.
// Prints one line per wheel: its name, then how many modules it compiled.
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pyodideDir, wheels, notebooks] = process.argv.slice(2).map((p) => path.resolve(p));
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: () => {}, stderr: () => {} });
for (const [from, to] of [[wheels, "/wheels"], [notebooks, "/notebooks"]]) {
  pyodide.FS.mkdirTree(to);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: from }, to);
}
const result = pyodide.runPython(`
import glob, importlib, importlib.util, os, sys, warnings, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

for wheel in sorted(glob.glob("/wheels/*.whl")):
    zipfile.ZipFile(wheel).extractall("/site")
sys.path.insert(0, "/site")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    # the kernel's (pyodide_kernel's imports), then the notebooks'
    import comm, traitlets.config, IPython, IPython.display, IPython.core.application, IPython.core.history
    import IPython.core.interactiveshell, IPython.core.shellapp, IPython.core.displayhook, IPython.utils.tokenutil
    import emq_lab, json, pkgutil
    for found in pkgutil.walk_packages(emq_lab.__path__, "emq_lab."):
        try:
            importlib.import_module(found.name)
        except Exception:
            pass  # a module for CPython only (lupa, a local server)
    import plotly.io, hypothesis.strategies
    # the notebooks' code cells, as far as they run outside a kernel (no display, no magics); not
    # the crash replay (its fault switch waits for the browser's event loop) nor the exercises'
    # checks (slow here, and hypothesis is imported above)
    for notebook in sorted(glob.glob("/notebooks/*.ipynb")):
        scope = {"display": lambda *args, **kwargs: None, "__name__": "__main__"}
        for cell in json.load(open(notebook, encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and "replay_crash" not in source and "exercises." not in source:
                try:
                    exec(source, scope)
                except BaseException:
                    pass
IMPORTED = {os.path.relpath(m.__file__, "/site") for m in list(sys.modules.values())
            if (getattr(m, "__file__", None) or "").startswith("/site/")}

def compiled(wheel):
    with zipfile.ZipFile(wheel) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    names = {info.filename for info, _ in members}
    extra = []
    for info, data in members:
        name = info.filename
        if name not in IMPORTED:
            continue
        pyc = importlib.util.cache_from_source(name)
        if pyc in names:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                code = compile(data, name, "exec", dont_inherit=True)
        except SyntaxError:
            continue  # a file meant for another Python; the import would fail on it anyway
        extra.append((pyc, bytes(_code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False))))
    if not extra:
        return 0
    with zipfile.ZipFile(wheel + ".tmp", "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in members:
            target.writestr(info, data)
        for name, data in extra:
            target.writestr(name, data)
    os.replace(wheel + ".tmp", wheel)
    return len(extra)

"\\n".join(f"{os.path.basename(w)} {compiled(w)}" for w in sorted(glob.glob("/wheels/*.whl")))
`);
process.stdout.write(result + "\n");
process.exit(0); // the notebooks' code may leave timers behind, which would keep Node running
