"""The comment block that opens each ``.lua`` script, parsed: its purpose, KEYS, ARGV and returns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import takewhile

from ..scripts import source


@dataclass(frozen=True)
class Slot:
    """One KEYS or ARGV entry of a script's header: ``KEYS[1]``, the name the header gives it, what it holds."""

    slot: str
    name: str
    meaning: str


@dataclass(frozen=True)
class Header:
    """What a script's opening comment block says: its purpose, KEYS, ARGV and returns."""

    script: str
    purpose: str
    keys: tuple[Slot, ...]
    argv: tuple[Slot, ...]
    returns: tuple[str, ...]


_RETURN_START = re.compile(r"^(-?\d|\{|error reply|a flat array)")
# ``KEYS[2]``, or a slot of a batch: ``KEYS[1 + i]`` (register_many.lua)
_SLOT = re.compile(r"^(KEYS|ARGV)\[([^\]]+)\]\s+(\S+)\s*(.*)$")


def header(name: str) -> Header:
    """The header of ``<name>.lua``; ValueError if it names no KEYS or has a slot line it cannot read."""
    lines = source(name).splitlines()
    comments = [line[2:].removeprefix(" ") for line in takewhile(lambda line: line.startswith("--"), lines)]
    purpose_lines = [line.strip() for line in takewhile(str.strip, comments)]
    slots: list[Slot] = []
    returns: list[str] = []
    section = ""
    for line in comments[len(purpose_lines) :]:
        found = _SLOT.match(line)
        if found:
            kind, number, local, meaning = found.groups()
            slots.append(Slot(f"{kind}[{number}]", local, _joined(meaning)))
            section = "slot"
        elif line.startswith(("KEYS[", "ARGV[")):
            raise ValueError(f"name: {name}.lua's header line {line!r} is not KEYS[i] or ARGV[i], a name, a meaning")
        elif line.startswith("Returns"):
            section = "returns"
            if line.removeprefix("Returns").strip():
                returns.append(line.removeprefix("Returns").strip())
        elif not line.strip():
            section = "" if section == "slot" else section
        elif section == "slot" and line.startswith(" ") and slots:
            last = slots[-1]
            slots[-1] = Slot(last.slot, last.name, f"{last.meaning} {' '.join(line.split())}")
        elif section == "returns":
            entry = line.strip()
            if returns and not _RETURN_START.match(entry):
                returns[-1] = f"{returns[-1]} {' '.join(entry.split())}"  # a continuation line
            else:
                returns.append(" ".join(entry.split()))
    purpose = " ".join(purpose_lines)
    keys = tuple(s for s in slots if s.slot.startswith("KEYS"))
    if not keys:
        raise ValueError(f"name: {name}.lua has no KEYS lines in its header")
    return Header(name, purpose, keys, tuple(s for s in slots if s.slot.startswith("ARGV")), tuple(returns))


def _joined(meaning: str) -> str:
    """A header's columns (separated by two or more spaces) as ``a · b``, spaces within kept."""
    return " · ".join(part for part in re.split(r"\s{2,}", meaning.strip()) if part)
