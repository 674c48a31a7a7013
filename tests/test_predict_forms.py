"""Predict where you are asked: each dive's prompts are forms on the page, usable from the dive's
first cell, checked and recorded through the dive's own ``predict``; no markdown above a form
states the answer it asks for."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import emq_lab
from emq_lab import exercises, progress
from emq_lab.clock import SimClock
from emq_lab.exercises import questions
from emq_lab.exercises.check import session
from emq_lab.keys import progress as progress_key
from emq_lab.widgets import PredictForm
from emq_lab.widgets.predict import EMPTY, NOT_CHECKED

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = {"upsert": questions.UPSERT, "cadence": questions.CADENCE, "cancel": questions.CANCEL}
NOTEBOOK = {"upsert": "01-upsert", "cadence": "02-cadence", "cancel": "03-cancel"}
FORM = re.compile(r"PredictForm\(\s*lab,\s*exercises\.(\w+),\s*(.*?)\)\s*$", re.S)


def cells(dive: str) -> list[dict[str, Any]]:
    path = ROOT / "notebooks" / f"{NOTEBOOK[dive]}.ipynb"
    return list(json.loads(path.read_text(encoding="utf-8"))["cells"])


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def forms(dive: str) -> list[tuple[int, list[str]]]:
    """(cell index, question keys) of each form at a prompt (the Exercises' form of every question left out)."""
    found = []
    for index, cell in enumerate(cells(dive)):
        match = FORM.search(source(cell)) if cell["cell_type"] == "code" else None
        if match:
            assert match[1] == dive, f"{NOTEBOOK[dive]} cell {index} asks {match[1]}'s questions"
            found.append((index, re.findall(r'"(\w+)"', match[2])))
    return found


def lab() -> emq_lab.Lab:
    return emq_lab.connect(clock=SimClock("2026-01-05T09:00:00Z"), namespace="predict-forms")  # embedded


# -- the form ----------------------------------------------------------------------------------


def test_a_form_has_a_labelled_box_per_question_with_its_kind_of_answer_and_starts_unchecked() -> None:
    form = PredictForm(lab(), exercises.upsert, "size_after_boot_2", "boot_2_answers")
    boxes = [child for child in form.box.children if child.__class__.__name__ == "Text"]
    fields = {field.key: field for field in exercises.upsert.fields()}
    asked = [fields["size_after_boot_2"], fields["boot_2_answers"]]
    assert [box.description for box in boxes] == [field.ask for field in asked]
    assert boxes[0].placeholder == 'a count, e.g. 7, or "7 rows"'
    assert boxes[1].placeholder == 'an outcome, e.g. "registered", "{:ok, :registered}" or 1'
    assert form.verdict == NOT_CHECKED and form.last is None
    bundle = form._repr_mimebundle_()
    assert bundle["text/plain"] == form.readout and "not checked yet" in form.readout
    assert form.readout == PredictForm(lab(), exercises.upsert, "size_after_boot_2", "boot_2_answers").readout


def test_a_right_and_a_wrong_answer_are_said_below_and_recorded() -> None:
    here = lab()
    here.client.delete(progress_key(here.namespace))
    form = PredictForm(here, exercises.upsert, "size_after_boot_2", "boot_2_answers", "registry_after_boot_2")
    form.answer(size_after_boot_2="1", boot_2_answers="registered")
    check = form.check()
    assert check is not None and not check.passed
    assert "size_after_boot_2: right" in form.verdict
    assert "boot_2_answers: not quite" in form.verdict
    assert form.verdict.splitlines()[-1] == "not answered: registry_after_boot_2"  # this form's boxes only
    assert "naive_rows_after_3_boots" not in form.verdict
    assert form.verdict.splitlines()[1] in form.readout and "-> yours: registered" in form.readout
    assert progress.parse(here.client.hgetall(progress_key(here.namespace)))[0]["upsert.predict"].passed is False
    form.answer(boot_2_answers="{:ok, :exists}", registry_after_boot_2="digest @ 09:15")
    assert form.verdict == NOT_CHECKED  # typing again clears the old verdict
    right = form.check()
    assert right is not None and right.passed, form.verdict
    assert progress.parse(here.client.hgetall(progress_key(here.namespace)))[0]["upsert.predict"].passed is True


def test_the_check_button_and_enter_in_a_box_check_as_the_twin_does() -> None:
    form = PredictForm(lab(), exercises.cancel, "occurrences_if_cancel_after_read")
    form.answer(occurrences_if_cancel_after_read="1")
    form.click("Check")
    assert form.last is not None and form.last.passed
    assert not form.control("Check").disabled  # on again after the click
    form.answer(occurrences_if_cancel_after_read="0")
    (field,) = [f for f in exercises.cancel.fields() if f.key == "occurrences_if_cancel_after_read"]
    box = form.control(field.ask)
    box._handle_custom_msg({"event": "submit"}, [])  # what the page sends on Enter
    assert form.last is not None and not form.last.passed
    assert "you said 0, it is 1" in form.verdict
    # the page sends Enter before the answer typed (it goes on the box's change event): the verdict
    # is for the answer that lands, not for the one the kernel held when Enter came
    box._handle_custom_msg({"event": "submit"}, [])
    box.value = "1"
    assert form.last is not None and form.last.passed and "occurrences_if_cancel_after_read: right" in form.verdict
    box.value = "2"  # typed later, left the box: no Enter, no check
    assert form.last.passed and "you said 2" not in form.verdict


def test_nothing_typed_or_an_unknown_question_is_said_not_raised() -> None:
    form = PredictForm(lab(), exercises.cadence, "next_runs")
    assert form.check() is None and form.verdict == EMPTY
    with pytest.raises(ValueError, match="keys: nope is not a question of cadence"):
        PredictForm(lab(), exercises.cadence, "nope")
    every = PredictForm(lab(), exercises.cadence)  # no key: every question of the dive, in its order
    assert list(every.answers) == [field.key for field in exercises.cadence.fields()]
    with pytest.raises(ValueError, match="rows_after_4_ticks: not a question of this form"):
        form.answer(rows_after_4_ticks="1")


# -- the dives -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dive", QUESTIONS)
def test_every_question_has_a_form_beside_its_prompt(dive: str) -> None:
    asked = [key for _, keys in forms(dive) for key in keys]
    assert sorted(asked) == sorted(q.key for q in QUESTIONS[dive]), "each question asked once, where the dive asks it"
    notebook = cells(dive)
    for index, _ in forms(dive):
        before = [source(c) for c in notebook[max(0, index - 2) : index] if c["cell_type"] == "markdown"]
        assert any("Predict" in text for text in before), f"{NOTEBOOK[dive]} cell {index}: no Predict prompt above"
    prompts = [i for i, c in enumerate(notebook) if c["cell_type"] == "markdown" and "**Predict" in source(c)]
    for index in prompts:
        after = [FORM.search(source(c)) for c in notebook[index + 1 : index + 3] if c["cell_type"] == "code"]
        assert any(after), f"{NOTEBOOK[dive]} cell {index}: a Predict prompt with no form after it"


@pytest.mark.parametrize("dive", QUESTIONS)
def test_the_forms_work_from_the_dives_first_cell(dive: str) -> None:
    """The setup cell alone, then every form cell: no NameError, each a form of the dive's questions."""
    notebook = cells(dive)
    setup = next(source(c) for c in notebook if c["cell_type"] == "code")
    namespace: dict[str, Any] = {}
    exec(setup, namespace)  # noqa: S102 - the dive's own first cell
    for index, keys in forms(dive):
        shown = eval(source(notebook[index]), namespace)  # noqa: S307 - the dive's own form cell
        assert isinstance(shown, PredictForm), f"{NOTEBOOK[dive]} cell {index}"
        assert list(shown.answers) == keys


# -- no answer before its question ---------------------------------------------------------------

WORDS = ["no|zero|none", "one|a single", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
UNITS = {
    "row": r"(?:registry\s+)?(?:rows?|entry|entries|members?)",
    "job": r"jobs?|occurrences?",
    "occurrence": r"occurrences?|jobs?",
    "write": r"(?:server\s+)?writes?",
    "order": r"orders?",
}


def truths(dive: str) -> dict[str, Any]:
    """Each question's answer, read off the package exactly as ``predict`` reads it."""
    found = {}
    with session("predict") as (base, _):
        for question in QUESTIONS[dive]:
            sim = base.with_clock(SimClock(f"{questions.DAY}T{question.clock}:00Z"))
            found[question.key] = question.kind.read(question.truth(sim))
            base.reset(questions.QUEUE)
    return found


def _time(hhmm: str) -> str:
    """``09:15`` as prose may write it: ``09:15`` or ``9:15``."""
    hour, minute = hhmm.split(":")
    return rf"0?{int(hour)}:{minute}"


def statements(key: str, ask: str, truth: Any) -> list[str]:
    """Patterns of prose that states ``truth`` as the answer to the question ``key`` (``ask``)."""
    if isinstance(truth, int):
        number = "|".join(filter(None, [str(truth), WORDS[truth] if truth < len(WORDS) else ""]))
        if key.endswith("_min"):  # minutes behind a mark, or a period kept: said with what it measures
            return [rf"(?:behind|late|drift\w*|keeps?)\W+(?:\w+\W+){{0,3}}\+?(?:{number})\s*min"]
        unit = next((pattern for word, pattern in UNITS.items() if word in ask), None)
        assert unit is not None, f"{key}: no unit word in {ask!r}"
        nothing = [rf"(?:{unit})\W+nothing|nothing\W+(?:written|{unit})"] if truth == 0 else []  # "writes nothing"
        return [rf"\b(?:{number})\s+(?:\w+\s+)?(?:{unit})\b", *nothing]
    if isinstance(truth, tuple):  # releases: the first three in a row, as HH:MM or as :MM
        first = truth[:3]
        return [r"\W+".join(_time(t) for t in first), r"\W+".join(f":{t[3:]}" for t in first)]
    if " @ " in truth:  # registry rows
        rule = r"\bown now\s*\+\s*\d+\s*min"  # the rule that puts the row there, said as a sum
        return [rule] + [rf"{re.escape(name)}\W+(?:@|at|next|scored at)\W+{_time(at)}" for name, at in
                         (row.split(" @ ") for row in truth.split(", "))]  # fmt: skip
    if truth in ("start-to-start", "start-to-finish", "fixed grid"):
        lane = re.escape(truth.removeprefix("fixed "))
        return [rf"{lane}[^.]*\b(?:never more than|keeps up|least behind)"]
    if key.startswith("advance"):  # the advance's reply (not a cancel's), or the page's word for it: "swept"
        sweep = [r"\bswe(?:ep|pt)s?\b"] if truth == "absent" else []
        said = r"(?<![:\w])advance\w*\W[^.]*"
        return [rf"{said}\{{:ok, :{truth}\}}", rf"{said}answers?\W+`?:?{truth}\b", *sweep]
    return [rf"answers?\W+`?\{{:ok, :{truth}\}}", rf"answers?\W+`?:?{truth}\b"]  # a reply


def stated(markdown: list[str], key: str, ask: str, truth: Any) -> list[str]:
    found = []
    for text in markdown:
        flat = " ".join(text.split())
        for pattern in statements(key, ask, truth):
            found += [m[0] for m in re.finditer(pattern, flat, re.IGNORECASE)]
    return found


# Answers an earlier question's reveal shows on purpose (the same value in another scenario): the
# question whose reveal shows it. Markdown before that question's form must still not state it.
SHOWN_ABOVE = {
    # the read-then-cancel round, revealed above, ends with the advance answering absent; the
    # question asks whether the third order (cancel between enqueue and advance) differs
    "advance_answers": "occurrences_if_cancel_after_read",
    # the same round shows an advance finding no record answering absent; the dangling member asks
    # whether a record deleted behind the scripts' back is the same case (it is: the page's sweep)
    "advance_on_dangling_member": "occurrences_if_cancel_after_read",
}


@pytest.fixture(scope="module")
def answers() -> dict[str, dict[str, Any]]:
    return {dive: truths(dive) for dive in QUESTIONS}


@pytest.mark.parametrize("dive", QUESTIONS)
def test_no_markdown_above_a_form_states_its_answer(dive: str, answers: dict[str, dict[str, Any]]) -> None:
    notebook, asks = cells(dive), {q.key: q.ask for q in QUESTIONS[dive]}
    opening = [source(c) for c in json.loads((ROOT / "notebooks" / "00-start.ipynb").read_text())["cells"]]
    told, at = [], {key: index for index, keys in forms(dive) for key in keys}
    for index, keys in forms(dive):
        for key in keys:
            until = min(index, at.get(SHOWN_ABOVE.get(key, ""), index))  # an earlier reveal may show it
            above = opening + [source(c) for c in notebook[:until] if c["cell_type"] == "markdown"]
            found = stated(above, key, asks[key], answers[dive][key])
            told += [f"{key} ({answers[dive][key]}): {found}"] if found else []
    assert not told, f"{NOTEBOOK[dive]}: markdown above a form states its answer:\n" + "\n".join(told)


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("size_after_boot_2", "how does the registry keep one entry per name instead of two jobs a cycle?"),
        ("lane_that_keeps_up", "The grid counts from its slots, so it is never more than one tick late."),
        ("registry_after_boot_2", "boot #2 writes nothing, so the row keeps digest @ 9:15"),
        ("next_runs", "Start-to-start keeps 09:00, 09:15, 09:30"),
        ("boot_2_answers", "the script answers `{:ok, :exists}`"),
        ("drift_after_4_cycles_min", "start-to-finish drifts: it is 12 min behind by run 4"),
        ("advance_answers", "two things are the page's: the sweep of a dangling member, and `{:ok, :absent}`."),
        ("advance_on_dangling_member", "R4.02.3's `@advance` answers `{:ok, :absent}` for a name cancelled"),
        ("writes_on_boot_2_of_1000", '## What "writes nothing" is worth'),
        ("upsert_registry_after_boot_2", "this lab's upsert scores the next run at the boot's own now + 15 min"),
    ],
)
def test_the_check_finds_an_answer_given_away(key: str, text: str, answers: dict[str, dict[str, Any]]) -> None:
    """The sentences the issue found above their prompts (and kin): each is caught."""
    dive = next(d for d, qs in QUESTIONS.items() if key in {q.key for q in qs})
    ask = next(q.ask for q in QUESTIONS[dive] if q.key == key)
    assert stated([text], key, ask, answers[dive][key]), f"{key}: {text!r} not caught"
    assert not stated(["Boot #1 is at 09:00; the service restarts at 09:05."], key, ask, answers[dive][key])
