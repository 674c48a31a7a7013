"""Each prediction a dive asks for can be checked: every "**Predict" prompt names a question of
its dive's ``exercises.<dive>.predict`` (in its text or in the form after it), every question is
asked somewhere in the dive, and no output above the upsert's prompt shows what the upsert does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from emq_lab import exercises
from emq_lab.plots.header import header

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
DIVES = {"01-upsert": exercises.upsert, "02-cadence": exercises.cadence, "03-cancel": exercises.cancel}


def cells(stem: str) -> list[dict]:
    return json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text())["cells"]


def prompts(stem: str) -> list[str]:
    """The paragraphs of the dive's prose that ask the learner to predict, each with the form that
    follows it (its boxes name the questions the prompt asks)."""
    dive, found = cells(stem), []
    for index, cell in enumerate(dive):
        if cell["cell_type"] != "markdown":
            continue
        form = "".join(
            "".join(c["source"]) for c in dive[index + 1 : index + 3] if "PredictForm(" in "".join(c["source"])
        )
        found += [f"{p}\n{form}" for p in re.split(r"\n\s*\n", "".join(cell["source"])) if "**Predict" in p]
    return found


def keys(dive: exercises.predict.Predictions) -> set[str]:
    return {field.key for field in dive.fields()}


@pytest.mark.parametrize("stem", DIVES)
def test_every_prediction_prompt_names_a_question_and_every_question_is_asked(stem: str) -> None:
    questions = keys(DIVES[stem])
    asked: set[str] = set()
    for prompt in prompts(stem):
        named = questions & set(re.findall(r"\w+", prompt))
        assert named, f"{stem}: this prompt names no question of exercises.{DIVES[stem].dive}:\n{prompt}"
        asked |= named
    assert asked == questions, f"{stem}: questions no prompt asks: {sorted(questions - asked)}"


def test_nothing_above_the_upserts_prompt_shows_what_the_upsert_does() -> None:
    dive = cells("01-upsert")
    at = next(i for i, c in enumerate(dive) if "upsert_registry_after_boot_2" in "".join(c["source"]))
    for cell in dive[:at]:
        shown = "".join(
            "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            for o in cell.get("outputs", [])
        )
        assert "ZSCORE upsert" not in shown and ":updated" not in shown, shown


def test_the_naive_scripts_header_says_what_it_writes_not_what_goes_wrong() -> None:
    naive = header("contrast/naive")
    said = " ".join((naive.purpose, *naive.returns)).lower()
    assert "bug" not in said and "even for a live name" not in said and "never look" not in said, said
    assert naive.returns and naive.returns[0].startswith("1")
