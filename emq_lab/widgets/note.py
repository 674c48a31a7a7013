"""A panel's note line: what the last click did, why it was refused (a ``ValueError`` said, not
raised into the Log Console), or that it is still running."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

# The theme's own colours (light, dark, Voila), defaults that pass on white; the words say the state too.
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
