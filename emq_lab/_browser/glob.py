"""Glob patterns (KEYS, SCAN MATCH, PSUBSCRIBE) for fakeredis in the browser, matched in bounded work.

fakeredis turns a glob into a regular expression in which every ``*`` is a ``.*``: a pattern such as
``*a*a*a ... *b`` against a long key of ``a``s backtracks through every way of placing the stars,
hours of work inside one ``redis.call``, where no hook can reach (the browser has no worker process
to kill). Here the same glob becomes an expression that cannot backtrack across a star: the text
between two stars is found at its leftmost place and kept (an atomic group, as ``fnmatch`` does),
which is the match whenever there is one, since that text has a fixed length. Matching one key
then costs at most about len(key) x len(pattern) steps, and in the browser each match charges that
to the script that runs now (:func:`emq_lab._browser.lupa.charge`) before it runs: a pattern that
would outrun the script's work stops it with the sandbox's message instead of hanging.

The glob's meaning is fakeredis's (Redis's): ``?``, ``*``, ``[abc]``, ``[^a-z]``, ``\\`` escapes.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Glob", "compile_pattern", "install"]

#: Steps of the regular expression engine per unit of the meter (one fengari VM instruction).
STEPS_PER_UNIT = 8


def _free(units: float) -> None:
    """No meter (CPython): the match's work is bounded, and charged to nobody."""


_charge: Callable[[float], None] = _free


def _atoms(pattern: str) -> list[str | None]:
    """The glob as regex atoms, one per character it matches, and None for each ``*``."""
    atoms: list[str | None] = []
    i, end = 0, len(pattern)
    while i < end:
        c = pattern[i]
        i += 1
        if c == "*":
            atoms.append(None)
        elif c == "?":
            atoms.append(".")
        elif c == "\\":
            if i == end:
                i -= 1
            atoms.append(re.escape(pattern[i]))
            i += 1
        elif c == "[":
            negate = i < end and pattern[i] == "^"
            i += negate
            members: list[str] = []
            while i < end:
                if pattern[i] == "\\" and i + 1 < end:
                    i += 1
                    members.append(re.escape(pattern[i]))
                elif pattern[i] == "]":
                    i += 1
                    break
                elif i + 2 < end and pattern[i + 1] == "-":
                    low, high = sorted((pattern[i], pattern[i + 2]))
                    members.append(re.escape(low) + "-" + re.escape(high))
                    i += 2
                else:
                    members.append(re.escape(pattern[i]))
                i += 1
            if members:
                atoms.append(("[^" if negate else "[") + "".join(members) + "]")
            else:
                atoms.append("." if negate else "(?!)")  # [^] matches any character, [] none
        else:
            atoms.append(re.escape(c))
    return atoms


@functools.lru_cache(maxsize=1024)
def _regex(pattern: bytes) -> tuple[re.Pattern[bytes], int]:
    """The glob as a regex that cannot backtrack across a star, and its length in atoms."""
    atoms = _atoms(pattern.decode("latin-1"))
    segments: list[list[str]] = [[]]
    for atom in atoms:
        if atom is None:
            segments.append([])
        else:
            segments[-1].append(atom)
    parts = ["".join(segment) for segment in segments]
    if len(parts) == 1:
        text = parts[0]
    else:
        middle = "".join(f"(?>.*?{part})" for part in parts[1:-1] if part)
        text = parts[0] + middle + ".*" + parts[-1]
    return re.compile((r"\A(?s:" + text + r")\Z").encode("latin-1")), len(atoms)


class Glob:
    """A compiled glob: ``match(key)`` as a regex's, each match charged to the running script."""

    def __init__(self, pattern: bytes) -> None:
        self.pattern = pattern
        self._regex, self._length = _regex(pattern)

    def match(self, key: Any) -> re.Match[bytes] | None:
        if isinstance(key, str):
            key = key.encode("utf-8")
        _charge((len(key) + 1) * (self._length + 1) / STEPS_PER_UNIT)
        return self._regex.match(key)


def compile_pattern(pattern_bytes: bytes) -> Glob:
    """fakeredis's ``compile_pattern``, in bounded work."""
    return Glob(bytes(pattern_bytes))


def install(charge: Callable[[float], None]) -> None:
    """Put :func:`compile_pattern` in place of fakeredis's, in every fakeredis module that took it,
    each match charging its work with ``charge(units)``. Imports fakeredis."""
    global _charge
    _charge = charge
    import fakeredis._helpers  # noqa: F401 - loads every module that imports compile_pattern

    for name, module in list(sys.modules.items()):
        if name.startswith("fakeredis") and module is not None:
            found = getattr(module, "compile_pattern", None)
            if found is not None and found is not compile_pattern:
                module.compile_pattern = compile_pattern  # type: ignore[attr-defined]
