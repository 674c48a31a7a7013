"""A panel's note line: what the last click did, why it was refused, or that it is still running.
A refused action (a ``ValueError`` from the package) becomes a sentence here, not an exception in
the Log Console."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

# Text colours with contrast in JupyterLab's light and dark themes and in Voila: the theme's own
# colours, whose defaults (for a page without them) pass on white. The words say the state too.
GOOD = "var(--jp-success-color0,#1b5e20)"
BAD = "var(--jp-error-color1,#d32f2f)"
STYLES = {
    "info": "color:var(--jp-content-font-color1,#24292f)",
    "done": f"color:{GOOD}",
    "refused": f"color:{BAD};font-weight:bold",
    "busy": "color:var(--jp-content-font-color2,#57606a);font-style:italic",
}
ALREADY_RAN = "that step already ran — press Reset or pick the next step"
BUSY = "still working on the last click — wait for it to finish"


class Note:
    """The line itself (``widget``, an HTML with class ``emq-note``) and its ``text``."""

    def __init__(self) -> None:
        self.widget = widgets.HTML(layout=widgets.Layout(min_height="1.6em", margin="2px 0"))
        self.widget.add_class("emq-note")
        self.text = ""

    def say(self, text: str, kind: str = "info") -> None:
        self.text = text
        self.widget.value = f"<span style='{STYLES[kind]}'>{html.escape(text)}</span>" if text else ""

    def attempt(self, action: Callable[[], Any]) -> Any:
        """``action()``; a ValueError it raises is said here and swallowed (the value is then None)."""
        try:
            return action()
        except ValueError as refusal:
            self.say(str(refusal), "refused")
            return None


def refocus(*candidates: widgets.DOMWidget | None) -> None:
    """Give the keyboard focus to the first of ``candidates`` that is on (a control disabled while
    it ran lost the focus; without this a keyboard user starts again from the top of the page)."""
    for control in candidates:
        if control is not None and not getattr(control, "disabled", False):
            control.focus()
            return
