"""The learner's copies of the dives: the tracked notebooks without their outputs, in ``work/``.

Made the first time, never overwritten after (``notebooks/`` keeps the outputs nbval compares);
``make lab``, Binder's start and the browser edition open them.

    python -m emq_lab.copies make               # the missing copies (an existing one is left alone)
    python -m emq_lab.copies restore 01-upsert  # the course's version back; yours kept beside it
    python -m emq_lab.copies strip IN OUT       # one notebook without outputs (lite/stage.sh)

Standard library only, so ``python3 emq_lab/copies.py strip ...`` runs without the package's
dependencies (the browser edition's build)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

COURSE = "notebooks"  # the tracked notebooks, relative to the repository's root
COPIES = "work"  # the learner's copies (gitignored), relative to the same root
DIVES = "[0-9][0-9]-*.ipynb"  # what a learner runs: 00-start to 03-cancel (not the instructor's page)


def strip(notebook: dict[str, Any]) -> dict[str, Any]:
    """``notebook`` (nbformat 4 JSON) without outputs, execution counts, run timings or saved widget state."""
    cells = []
    for cell in notebook.get("cells", []):
        cell = dict(cell)
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k not in ("execution", "collapsed")}
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cells.append(cell)
    metadata = {k: v for k, v in notebook.get("metadata", {}).items() if k != "widgets"}
    return {**notebook, "metadata": metadata, "cells": cells}


def dumps(notebook: dict[str, Any]) -> str:
    """As nbformat writes a notebook (sorted keys, one-space indent, UTF-8 as is)."""
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def strip_file(source: Path, target: Path) -> None:
    """Write ``source`` without its outputs to ``target``."""
    notebook = json.loads(source.read_text(encoding="utf-8"))
    target.write_text(dumps(strip(notebook)), encoding="utf-8")


def make(root: Path, *, into: str = COPIES) -> list[Path]:
    """The copies made of the dives missing in ``root/into`` (an existing copy is never touched)."""
    course, copies = _course(root), root / into
    copies.mkdir(parents=True, exist_ok=True)
    made = [copies / source.name for source in sorted(course.glob(DIVES)) if not (copies / source.name).exists()]
    for target in made:
        strip_file(course / target.name, target)
    return made


def restore(root: Path, dive: str, *, into: str = COPIES, now: datetime | None = None) -> tuple[Path | None, Path]:
    """(where the learner's copy went as ``<dive>.mine-<YYYYMMDD-HHMMSS>.ipynb``, or None; the course's
    version of ``dive``, back in the copies)."""
    course = _course(root)
    name = dive if dive.endswith(".ipynb") else f"{dive}.ipynb"
    source = course / name
    if "/" in name or not source.is_file() or not source.match(DIVES):
        known = ", ".join(path.stem for path in sorted(course.glob(DIVES)))
        raise ValueError(f"dive: no dive {dive!r} in {course}; one of {known}")
    copies = root / into
    copies.mkdir(parents=True, exist_ok=True)
    target, kept = copies / name, None
    if target.exists():
        stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
        kept = copies / f"{source.stem}.mine-{stamp}.ipynb"
        serial = 1
        while kept.exists():  # two restores within a second keep both
            serial += 1
            kept = copies / f"{source.stem}.mine-{stamp}-{serial}.ipynb"
        target.rename(kept)
    strip_file(source, target)
    return kept, target


def _course(root: Path) -> Path:
    course = root / COURSE
    if not course.is_dir():
        raise ValueError(f"root: {root} has no {COURSE}/ folder; run this from the emq-lab checkout (or pass --root)")
    return course


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m emq_lab.copies", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the emq-lab checkout (default: here)")
    parser.add_argument("--into", default=COPIES, help=f"the copies' folder under the root (default: {COPIES})")
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("make", help="make the copies that are missing; never overwrite one")
    back = verbs.add_parser("restore", help="bring back the course's version of a dive, keeping yours")
    back.add_argument("dive", help="e.g. 01-upsert")
    one = verbs.add_parser("strip", help="write one notebook without its outputs")
    one.add_argument("source", type=Path)
    one.add_argument("target", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.verb == "make":
            made = make(args.root, into=args.into)
            names = ", ".join(path.name for path in made) or "none missing"
            print(
                f"your copies of the dives are in {args.into}/ "
                f"(made now: {names}; an existing copy is never overwritten)"
            )
        elif args.verb == "restore":
            kept, fresh = restore(args.root, args.dive, into=args.into)
            yours = f"yours is kept as {args.into}/{kept.name}" if kept else "you had no copy of it"
            print(f"{args.into}/{fresh.name}: the course's version again; {yours}")
        else:
            strip_file(args.source, args.target)
    except ValueError as exc:
        print(f"emq_lab.copies: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
