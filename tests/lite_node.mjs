// Run tests/lite_scripts.py (or another tests/ module with a run_all()) under Pyodide in Node and
// print its JSON result on stdout.
// usage: node tests/lite_node.mjs <pyodide dir (the npm package)> <repo root> <dir of pure wheels> [module]
// The wheels (fakeredis, redis, sortedcontainers) are unpacked into /site in Pyodide's memory; emq-lab is the
// checkout itself, mounted read-only in spirit: nothing here writes to it.
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pyodideDir, repo, wheels] = process.argv.slice(2, 5).map((p) => path.resolve(p));
const module = process.argv[5] || "lite_scripts";
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: (s) => console.error(s) });
for (const [from, to] of [[repo, "/repo"], [wheels, "/wheels"]]) {
  pyodide.FS.mkdirTree(to);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: from }, to);
}
const result = pyodide.runPython(`
import glob, json, sys, zipfile
sys.dont_write_bytecode = True
for wheel in sorted(glob.glob("/wheels/*.whl")):
    zipfile.ZipFile(wheel).extractall("/site")
sys.path[:0] = ["/site", "/repo", "/repo/tests"]
import importlib
json.dumps(importlib.import_module("${module}").run_all(), indent=1, sort_keys=True)
`);
process.stdout.write(result + "\n");
