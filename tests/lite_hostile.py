"""Hostile answers to the exercises, timed: run under Pyodide by tests/lite_node.mjs (the browser
edition's Lua on fengari, where no worker process can be started) and under CPython.

Run as a script (or ``run_all()``), it prints one JSON object: form -> {"seconds", "passed", "text"},
and "reference after" for the reference solution checked after every form.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from emq_lab import _browser

_browser.install()  # noqa: E402 - before fakeredis: under Pyodide, lupa is the fengari module

from emq_lab import exercises  # noqa: E402

# The forms the browser's hook must stop (a C call that outruns any hook, such as a pattern that
# backtracks for hours, needs the worker process of CPython; see the README's exercises section).
FORMS = {
    "endless loop": "local x = 0\nwhile true do x = x + 1 end",
    "debug.sethook() then a loop": "pcall(function() debug.sethook() end)\nwhile true do end",
    "a pcall that swallows the stop": (
        "local x = 0\nwhile true do\n  pcall(function() while true do x = x + 1 end end)\nend"
    ),
    "a loop in a coroutine": "local co = coroutine.wrap(function()\n  while true do end\nend)\nco()",
    "string.rep in a loop": "local n = 0\nwhile true do local s = string.rep('x', 1e6) n = n + 1 end",
    "a table of strings growing": "local t = {}\nwhile true do t[#t + 1] = string.rep('x', 1e5) .. #t end",
    "a loop of redis.call": "while true do\n  redis.call('GET', KEYS[2])\nend",
    "a loop in loadstring": "return loadstring('while true do end')()",
    "a loop in a chunk named as the runner": "return loadstring('while true do end', '<python>')()",
    "python.eval": "return python.eval('1')",
    "io.open": "local f = io.open('written-by-lua', 'w')\nreturn 1",
}


def run_all() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for form, source in FORMS.items():
        start = time.monotonic()
        check = exercises.register(source)
        out[form] = {"seconds": time.monotonic() - start, "passed": check.passed, "text": str(check)}
    start = time.monotonic()
    check = exercises.register(exercises.solution("register"))  # type: ignore[arg-type]
    out["reference after"] = {"seconds": time.monotonic() - start, "passed": check.passed, "text": str(check)}
    return out


if __name__ == "__main__":
    json.dump(run_all(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
