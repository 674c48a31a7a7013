"""The Lua in the browser: fakeredis on Pyodide, its scripts run by the fengari module of
emq_lab/_browser, answers and stores like fakeredis on CPython with the real lupa.

Both sides run tests/lite_scripts.py: every emq-lab script and contrast script (fresh, repeated,
malformed ARGV), error replies, cjson, number edges, and emq-lab's verbs through ``connect()``.
The Pyodide side runs in Node on the npm ``pyodide`` package the site is built from, with the very
fakeredis, redis and sortedcontainers wheels the site vendors.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lite_scripts import KNOWN_DIFFERENCES
from litesite import ROOT, site

pytestmark = pytest.mark.xdist_group("lite-lua")  # under -n, one worker takes the module: its fixtures start once

VENDORED = ("fakeredis", "redis", "sortedcontainers")


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    built = site()
    wheels = tmp_path_factory.mktemp("wheels")
    for name in VENDORED:
        found = sorted(built.wheels.glob(f"{name}-*.whl"))
        assert found, f"the site vendors no {name} wheel in {built.wheels}"
        shutil.copy(found[-1], wheels)
    node = subprocess.run(
        ["node", str(ROOT / "tests" / "lite_node.mjs"), str(built.pyodide), str(ROOT), str(wheels)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert node.returncode == 0, node.stderr[-4000:]
    cpython = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "lite_scripts.py")], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert cpython.returncode == 0, cpython.stderr[-4000:]
    return json.loads(cpython.stdout), json.loads(node.stdout)


def _cases() -> list[str]:
    sys.path.insert(0, str(Path(__file__).parent))
    from lite_scripts import cases

    return sorted(cases())


@pytest.mark.parametrize("case", _cases())
def test_pyodide_answers_like_cpython(both: tuple[dict[str, Any], dict[str, Any]], case: str) -> None:
    cpython, pyodide = both[0][case], both[1][case]
    assert pyodide["store"] == cpython["store"]
    if case in KNOWN_DIFFERENCES:
        # Still different (else the note is stale), and only in Lua's own text.
        assert pyodide["replies"] != cpython["replies"], f"{case}: no longer differs; drop it from KNOWN_DIFFERENCES"
        assert _before_lua_text(pyodide["replies"]) == _before_lua_text(cpython["replies"])
    else:
        assert pyodide["replies"] == cpython["replies"]


def _before_lua_text(replies: list[Any]) -> list[Any]:
    def cut(reply: Any) -> Any:
        if isinstance(reply, dict) and "message" in reply:
            return {**reply, "message": reply["message"].split("[string", 1)[0]}
        if isinstance(reply, str):
            return reply.split(" ")[0].split(".")[0]  # the number's digits, without fengari's ".0"
        return reply

    return [cut(reply) for reply in replies]
