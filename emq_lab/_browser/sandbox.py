"""The sandbox and the checks in the browser edition (Pyodide: no processes, one busy tab).

A learner's Lua runs in a second fakeredis in this process, with the allowlist, the Lua environment
and the hook of the CPython worker's (:mod:`emq_lab.sandbox`); the hook is the only limit here.
While a check of a learner's Lua runs, the tab's kernel is busy: the cell says so, and when the
script and the check will be stopped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def client(check_s: float | None = None) -> Any:
    """A client of a new in-process sandbox server whose scripts stop ``check_s`` seconds from now
    (None: no limit but each script's own)."""
    from . import install

    install()
    import fakeredis

    from ..sandbox import lua
    from ..sandbox.allow import connection_class

    server, connection = lua.server(None, check_s), connection_class()
    return fakeredis.FakeRedis(server=server, decode_responses=True, protocol=2, connection_class=connection)


@contextmanager
def checking(exercise: str) -> Iterator[None]:
    """While a check of a learner's Lua runs, a line in the cell saying so; taken back after, so the
    cell then shows what it shows on CPython."""
    ipython = sys.modules.get("IPython")  # in a kernel it is imported; elsewhere there is no cell to show
    if ipython is None or ipython.get_ipython() is None:
        yield
        return
    from IPython.display import display

    from ..sandbox import CHECK_S, LIMIT_S

    text = (
        f"checking {exercise} in the sandbox: a script still running after {LIMIT_S:g} s is stopped there, "
        f"and the whole check after {CHECK_S:g} s"
    )
    handle = display({"text/plain": text}, raw=True, display_id=True)
    try:
        yield
    finally:
        if handle is not None:
            handle.update({}, raw=True)
