"""A panel's note line: what the last click did, why it was refused, or that it is still running.

Panels run every control through :meth:`Note.attempt`: a refused action (a ``ValueError`` from
the package) becomes a sentence on this line instead of an exception in the Log Console."""

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
    """The line itself (``widget``, an HTML with class ``emq-note``), its ``text`` and ``kind``."""

    def __init__(self, text: str = "") -> None:
        self.widget = widgets.HTML(layout=widgets.Layout(min_height="1.6em", margin="2px 0"))
        self.widget.add_class("emq-note")
        self.text = ""
        self.kind = "info"
        self.say(text)

    def say(self, text: str, kind: str = "info") -> None:
        if kind not in STYLES:
            raise ValueError(f"kind: one of {', '.join(STYLES)}, got {kind!r}")
        self.text, self.kind = text, kind
        self.widget.value = f"<span style='{STYLES[kind]}'>{html.escape(text)}</span>" if text else ""

    def attempt(self, action: Callable[[], Any], *, done: str | None = None) -> Any:
        """Run ``action``; a ValueError it raises is said here (kind ``refused``) and swallowed,
        else ``done`` is said (None: the line stays as the action left it). The action's value,
        or None when it was refused."""
        try:
            value = action()
        except ValueError as refusal:
            self.say(str(refusal), "refused")
            return None
        if done is not None:
            self.say(done, "done")
        return value


def set_disabled(controls: list[widgets.DOMWidget], disabled: bool) -> None:
    for control in controls:
        control.disabled = disabled


def click(
    act: Callable[[Callable[[], Any]], Any],
    note: Note,
    controls: list[widgets.DOMWidget],
    action: Callable[[], Any],
    origin: widgets.DOMWidget | None = None,
) -> None:
    """What a panel's control does: every control off while ``action`` runs through the panel's
    ``act`` (the backend's status and retries), a refusal said on the ``note`` line. ``origin``,
    the control that was used, gets the keyboard focus back (disabling it took the focus away)."""
    set_disabled(controls, True)
    try:
        act(lambda: note.attempt(action))
    finally:
        set_disabled(controls, False)
        refocus(origin)


def refocus(*candidates: widgets.DOMWidget | None) -> None:
    """Give the keyboard focus to the first of ``candidates`` that is on (a control disabled while
    it ran lost the focus; without this a keyboard user starts again from the top of the page)."""
    for control in candidates:
        if control is not None and not getattr(control, "disabled", False):
            control.focus()
            return
