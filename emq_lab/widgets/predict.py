"""PredictForm: a dive's Predict prompt as a form, checked and recorded by ``exercises.<dive>.predict`` as in code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as widgets

from .view import BAD, GOOD, View, html_part, whole

if TYPE_CHECKING:
    from ..exercises.check import Check
    from ..exercises.predict import Field
    from ..lab import Lab

NOT_CHECKED = "not checked yet: type your answers, then press Check (or Enter in a box)"
EMPTY = "nothing to check yet: type an answer in at least one box"

# The question above its box, wrapped, never cut off with an ellipsis; the box as wide as the form.
STYLE = """<style>
.emq-predict .widget-text { flex-wrap: wrap; width: 100%; max-width: 48em; }
.emq-predict .widget-text .widget-label {
  white-space: normal; width: 100% !important; max-width: 100%; text-align: left; line-height: 1.4;
  overflow: visible; height: auto; margin-bottom: 2px;
}
.emq-predict .widget-text input { min-width: 16em; }
.emq-predict .emq-verdict .widget-html-content { line-height: 1.4; white-space: normal; }
</style>"""


class Questions(Protocol):
    """What a form needs of a dive's questions (``emq_lab.exercises.upsert`` and its kin)."""

    dive: str

    def fields(self) -> tuple[Field, ...]: ...
    def predict(self, *args: Lab, lab: Lab | None = None, **answer: Any) -> Check: ...


class PredictForm(View):
    """A box per question named (all when none is), Check (or Enter in a box) and the verdict in a live
    region. Twins: ``answer(key=text, ...)``, ``check()``; ``readout``; ``last``, the last Check."""

    def __init__(self, lab: Lab, questions: Questions, *keys: str) -> None:
        fields = {field.key: field for field in questions.fields()}
        unknown = [key for key in keys if key not in fields]
        if unknown:
            known = ", ".join(fields)
            raise ValueError(f"keys: {unknown[0]} is not a question of {questions.dive}; ask one of {known}")
        super().__init__(lab)
        self._questions = questions
        self._fields = [fields[key] for key in keys or fields]
        self.last: Check | None = None
        self._entered: widgets.Text | None = None  # the box where Enter was pressed, its answer still on its way
        self._boxes: dict[str, widgets.Text] = {}
        for field in self._fields:
            box = widgets.Text(
                description=field.ask,
                placeholder=f"{field.unit}, e.g. {field.example}",
                continuous_update=False,  # the answer is sent on Enter (or on leaving the box), whole
                style={"description_width": "initial"},
                layout=widgets.Layout(width="auto"),
            )
            box.add_class("emq-predict-box")
            box.on_msg(self._on_submit)  # Enter in the box sends {"event": "submit"}
            box.observe(self._on_typed, names="value")
            self._boxes[field.key] = box
        self._button = widgets.Button(
            description="Check", button_style="primary", tooltip=f"check your answers ({questions.dive})"
        )
        self._button.on_click(lambda _: self._clicked(self._button))
        # emq-live: aria-live="polite", set on the page (view.NAME_SLIDERS)
        self._verdict = html_part("emq-verdict", "emq-live", "emq-readout", min_height="1.6em", margin="2px 0")
        style = widgets.HTML(STYLE, layout=widgets.Layout(height="0px", margin="0"))
        self._boxed("emq-predict", style, *self._boxes.values(), self._button, self._verdict)
        self._show_verdict(NOT_CHECKED)

    def answer(self, **typed: Any) -> None:
        """Type into the boxes (``key="09:15"``); the verdict goes back to not checked."""
        unknown = [key for key in typed if key not in self._boxes]
        if unknown:
            raise ValueError(f"{unknown[0]}: not a question of this form; its boxes are {', '.join(self._boxes)}")
        self._entered = None
        for key, text in typed.items():
            self._boxes[key].value = str(text)
        self._show_verdict(NOT_CHECKED)

    def check(self) -> Check | None:
        """The Check of the answers typed (empty boxes left out); None if none or one was refused."""
        given = {key: box.value.strip() for key, box in self._boxes.items() if box.value.strip()}
        if not given:
            self._show_verdict(EMPTY)
            return None
        try:
            check = self._questions.predict(lab=self.lab, **given)
        except ValueError as refusal:  # an answer the dive could not read: said, not raised
            self._show_verdict(str(refusal))
            return None
        lines = [line for line in str(check).splitlines() if not line.startswith("not answered:")]
        left = [key for key in self._boxes if key not in given]
        if left:
            lines.append(f"not answered: {', '.join(left)}")
        self._show_verdict("\n".join(lines), check)
        return check

    @property
    def answers(self) -> dict[str, str]:
        return {key: box.value for key, box in self._boxes.items()}

    @property
    def verdict(self) -> str:
        """The verdict as text: ``not checked yet ...`` until Check is pressed."""
        return self._said

    @property
    def readout(self) -> str:
        rows = [f"predict ({self._questions.dive}):"]
        for field in self._fields:
            typed = self._boxes[field.key].value.strip()
            rows.append(f"  {field.key}: {field.ask}" + (f"  -> yours: {typed}" if typed else ""))
        rows += [f"  {line}" if i else f"verdict: {line}" for i, line in enumerate(self._said.splitlines())]
        return "\n".join(rows)

    def _on_submit(self, box: widgets.Text, content: dict[str, Any], _buffers: Any) -> None:
        # Enter comes before the answer typed (sent on the box's "change"): check now, and again when it lands.
        if content.get("event") == "submit":
            self._entered = box
            self._clicked(None)  # the box keeps the focus: it is never disabled

    def _on_typed(self, change: dict[str, Any]) -> None:
        if self._entered is not None and change["owner"] is self._entered:
            self._entered = None
            self._clicked(None)

    def _clicked(self, origin: widgets.Button | None) -> None:
        self._button.disabled = True
        try:
            self.act(self.check)
        finally:
            self._button.disabled = False
            if origin is not None:
                origin.focus()  # a disabled button loses the focus; give it back

    def _show_verdict(self, said: str, last: Check | None = None) -> None:
        """Show ``said`` as the verdict (``last``: the Check it reads, if any), each line in its colour."""
        self._said, self.last = said, last
        refused = last is None and said not in (NOT_CHECKED, EMPTY)  # an answer the dive could not read
        rows = []
        for line in said.splitlines():
            if any(line.startswith(f"{key}: right") for key in self._boxes):
                colour = GOOD
            elif refused or any(line.startswith(f"{key}:") for key in self._boxes):
                colour = BAD
            else:
                colour = "var(--jp-content-font-color1,#24292f)"
            rows.append(f"<div style='color:{colour}'>{whole(line)}</div>")
        self._verdict.value = "".join(rows)
