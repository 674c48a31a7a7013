"""The layers show in the imports: the core a learner reads imports nothing from the course above
it (the dives, exercises, sandbox, panels and figures) or the browser edition, no module of
``emq_lab`` imports the classroom (``emq_classroom``, a package of its own above it), and no module
outside ``emq_lab/_browser`` asks which platform it runs on."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "emq_lab"
CORE = [
    *(f"{name}.py" for name in ("keys", "clock", "schedule", "validate", "errors", "backend", "repeat", "jobs")),
    *(f"{name}.py" for name in ("pump", "fastforward", "lab", "outcome", "namespace", "urls", "local", "__init__")),
    "scripts",  # every module under it, its __init__.py included
]
ABOVE = ("dives", "exercises", "sandbox", "widgets", "plots", "_browser")
#: The one import against the layers: ``import emq_lab`` starts the browser edition (its wheels, and
#: fengari's Lua before fakeredis loads) under Pyodide, and nothing elsewhere.
ALLOWED = {"__init__.py": ["emq_lab._browser", "emq_lab._browser.platform"]}


def imported(text: str, package: list[str]) -> set[str]:
    """Every module ``text`` (a module of ``package``) imports, at its top or in a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def above(names: set[str]) -> list[str]:
    """The names of ``names`` in a layer above the core (the classroom included)."""
    return sorted(
        name
        for name in names
        if name.split(".")[0] == "emq_classroom" or name.split(".")[:2] in [["emq_lab", layer] for layer in ABOVE]
    )


def core_files() -> list[Path]:
    return [p for entry in CORE for p in ((PACKAGE / entry).rglob("*.py") if entry == "scripts" else [PACKAGE / entry])]


def test_the_core_imports_nothing_from_the_layers_above_it() -> None:
    files = core_files()
    assert {"__init__.py", "scripts/__init__.py", "scripts/cluster.py"} <= {
        str(path.relative_to(PACKAGE)) for path in files
    }
    wrong = {
        str(path.relative_to(PACKAGE)): above(
            imported(path.read_text(encoding="utf-8"), ["emq_lab", *path.relative_to(PACKAGE).parent.parts])
        )
        for path in files
    }
    assert {path: names for path, names in wrong.items() if names} == ALLOWED


def test_the_course_imports_nothing_from_the_classroom() -> None:
    modules = {path: ["emq_lab", *path.relative_to(PACKAGE).parent.parts] for path in PACKAGE.rglob("*.py")}
    assert len(modules) > 60
    wrong = {
        str(path.relative_to(PACKAGE)): [
            n for n in imported(path.read_text(encoding="utf-8"), package) if "classroom" in n
        ]
        for path, package in modules.items()
    }
    assert {path: names for path, names in wrong.items() if names} == {}


def test_the_walk_sees_an_import_against_the_layers() -> None:
    # the same walk on a core module that breaks the rule three ways, one of them in a function
    text = "from .sandbox import shared\n\ndef f():\n    from . import widgets\n    import emq_lab.plots.course\n"
    assert above(imported(text, ["emq_lab"])) == [
        "emq_lab.plots.course", "emq_lab.sandbox", "emq_lab.sandbox.shared", "emq_lab.widgets"
    ]  # fmt: skip
    assert above(imported("import emq_classroom.guard\n", ["emq_lab"])) == ["emq_classroom.guard"]
    assert above(imported("from ..dives import race\n", ["emq_lab", "scripts"])) == [
        "emq_lab.dives",
        "emq_lab.dives.race",
    ]


def test_only_the_browser_edition_asks_for_emscripten() -> None:
    asking = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "emscripten" in path.read_text(encoding="utf-8") and path.parent.name != "_browser"
    )
    assert asking == []
