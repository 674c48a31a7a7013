"""A check in the browser edition (Pyodide: no processes, one busy tab). A learner's Lua runs in
:func:`emq_lab.sandbox.in_process`, whose hook is the only limit there; while a check runs the
tab's kernel is busy, so the cell says so, and when the script and the check will be stopped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def checking(exercise: str, *, limit_s: float, check_s: float) -> Iterator[None]:
    """While a check of a learner's Lua runs, a line in the cell saying so; taken back after, so the
    cell then shows what it shows on CPython."""
    ipython = sys.modules.get("IPython")  # in a kernel it is imported; elsewhere there is no cell to show
    if ipython is None or ipython.get_ipython() is None:
        yield
        return
    from IPython.display import display

    text = (
        f"checking {exercise} in the sandbox: a script still running after {limit_s:g} s is stopped there, "
        f"and the whole check after {check_s:g} s"
    )
    handle = display({"text/plain": text}, raw=True, display_id=True)
    try:
        yield
    finally:
        if handle is not None:
            handle.update({}, raw=True)
