"""Hostile answers to the exercises, measured: run under Pyodide by tests/lite_node.mjs (the browser
edition's Lua on fengari, where no worker process can be started) and under CPython.

Run as a script (or ``run_all()``), it prints one JSON object: form -> {"seconds" (wall clock, for
the record), "cpu_s" (the process's CPU time, where Node tells it), "work_s" (the work the browser's
meter counted, in its seconds; null on CPython), "passed", "text"}, and "reference: <exercise>"
for each exercise's reference solution, checked after all the forms.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from emq_lab import _browser

_browser.install()  # noqa: E402 - before fakeredis: under Pyodide, lupa is the fengari module

from emq_lab import exercises  # noqa: E402

# Long keys for the KEYS globs below: a glob of stars and a's backtracks on them in fakeredis.
_LONG_KEYS = "for i = 1, {n} do redis.call('SET', string.rep('a', {size}) .. i, 1) end\n"
_GLOB = "string.rep('*a', 30) .. 'b'"

# The forms that must be stopped, each with the sandbox's stop ("the time limit"): in the browser
# by the meter of lite/fengari-entry.js, which counts work wherever Lua runs and whatever it calls.
STOPPED = {
    "xpcall's message handler loops": "xpcall(error, function() while true do end end)",
    "load with os.clock as its reader": "return load(os.clock)",
    "load with a reader that loops": "return load(function() while true do end end)",
    "load of a chunk that loops, read once": (
        "return load(coroutine.wrap(function() coroutine.yield('while true do end') end))()"
    ),
    "string.gsub with a replacement that loops": "return ('xyz'):gsub('.', function() while true do end end)",
    "table.sort with a comparator that loops": "table.sort({3, 1, 2}, function() while true do end end)",
    "an __index metamethod that loops": (
        "local t = setmetatable({}, {__index = function() while true do end end})\nreturn t.x"
    ),
    "coroutine.wrap around string.rep": "return coroutine.wrap(string.rep)('x', 2^30)",
    "pcall(string.rep, 'x', 2^30)": "pcall(string.rep, 'x', 2^30)\nreturn 1",
    "a string doubled by ..": "local s = 'x'\nwhile true do s = s .. s end",
    "a string doubled by string.format": "local s = 'x'\nwhile true do s = string.format('%s%s', s, s) end",
    "string.rep bombs in a pcall loop": "while true do pcall(string.rep, 'x', 2^26) end",
    "table.concat of a huge table": (
        "local t = {}\nfor i = 1, 2^18 do t[i] = 'xxxxxxxxxxxxxxxx' end\nwhile true do local s = table.concat(t) end"
    ),
    "table.concat over 2^31 items through __index": (
        "return table.concat(setmetatable({}, {__index = function() return 'x' end}), '', 1, 2^31 - 1)"
    ),
    "tostring in a loop": "while true do local s = tostring({}) end",
    "table.insert at the front, forever": "local t = {}\nwhile true do table.insert(t, 1, #t) end",
    "a backtracking Lua pattern": "return string.find(string.rep('a', 1e4), string.rep('a*', 30) .. 'b')",
    "cjson.encode of one table shared 10^4 times": (
        "local big, t = {}, {}\nfor i = 1, 1e4 do big[i] = i end\nfor i = 1, 1e4 do t[i] = big end\n"
        "return cjson.encode(t)"
    ),
    "a KEYS glob over keys too long for the budget": _LONG_KEYS.format(n=12, size="1e6")
    + f"return redis.call('KEYS', {_GLOB})",
    "a KEYS glob in a redis.pcall loop": _LONG_KEYS.format(n=3, size="1e5")
    + f"while true do redis.pcall('KEYS', {_GLOB}) end",
}

# Forms that end on their own, well within the limit: KEYS is refused from a script by the
# sandbox's allowlist, and where the glob runs (KEYS and SCAN from a client) it cannot backtrack
# (fakeredis's own glob backtracks on this for hours).
BOUNDED = {
    "a backtracking KEYS glob on a few long keys": _LONG_KEYS.format(n=3, size="1e4")
    + f"return redis.call('KEYS', {_GLOB})",
}

# Every form: the ones above, and the first ones, which the sandbox's own hook already stopped.
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


FORMS.update(STOPPED)
FORMS.update(BOUNDED)


def _cpu() -> float | None:
    """The process's CPU seconds, where Node tells them (Pyodide in Node); None elsewhere."""
    try:
        import js

        used = js.process.cpuUsage()
        return float(used.user + used.system) / 1e6
    except (ImportError, AttributeError):
        return None


def _work() -> float | None:
    """The browser meter's work so far, in its seconds; None on CPython (no meter)."""
    if sys.platform != "emscripten":
        return None
    from emq_lab._browser import lupa

    return float(lupa._fengari().meter.spent()) / lupa.WORK_RATE


def _measured(run: Any) -> dict[str, Any]:
    start, cpu, work = time.monotonic(), _cpu(), _work()
    check = run()
    cpu_after, work_after = _cpu(), _work()
    return {
        "seconds": time.monotonic() - start,
        "cpu_s": None if cpu is None or cpu_after is None else cpu_after - cpu,
        "work_s": None if work is None or work_after is None else work_after - work,
        "passed": check.passed,
        "text": str(check),
    }


def run_all() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for form, source in FORMS.items():
        out[form] = _measured(lambda source=source: exercises.register(source))
    for exercise in exercises.solutions.EXERCISES:
        checker = getattr(exercises, exercise)
        out[f"reference: {exercise}"] = _measured(lambda c=checker, e=exercise: c(exercises.solution(e)))
    return out


if __name__ == "__main__":
    json.dump(run_all(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
