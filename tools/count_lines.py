"""Python lines per layer of the package ``emq_lab``, and of the classroom's own package
``emq_classroom`` (what the README's Layout section gives): every line of every .py file, blank and
comment lines included, as ``wc -l`` counts them."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "emq_lab"
CLASSROOM = PACKAGE.parent / "emq_classroom"
LAYERS: dict[str, tuple[str, ...]] = {
    "core": (
        "scripts", "keys.py", "clock.py", "schedule.py", "validate.py", "errors.py", "backend.py", "outcome.py",
        "repeat.py", "jobs.py", "lab.py", "pump.py", "fastforward.py", "__init__.py",
    ),
    "connections": ("urls.py", "namespace.py", "local.py"),
    "dives": ("dives",),
    "exercises and sandbox": ("exercises", "sandbox", "progress.py"),
    "views": ("plots", "widgets", "health.py", "copies.py"),
    "browser edition": ("_browser",),
}  # fmt: skip


def lines(entry: str, package: Path = PACKAGE) -> int:
    path = package / entry
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def main() -> int:
    counts = {layer: sum(lines(entry) for entry in entries) for layer, entries in LAYERS.items()}
    entries = [p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__")]
    everything = sum(lines(entry) for entry in entries)
    if everything != sum(counts.values()):
        print(f"a file of the package is in no layer: {everything} lines in all, {sum(counts.values())} counted")
        return 1
    for layer, count in counts.items():
        print(f"{layer:<22} {count:>6,}")
    print(f"{'without the browser':<22} {everything - counts['browser edition']:>6,}")
    print(f"{'emq_classroom':<22} {lines('.', CLASSROOM):>6,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
