"""The base of every panel: a view over the lab that hands display to an inner box."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
from IPython.display import Javascript

from ..errors import is_transient
from ..health import Health, probe

if TYPE_CHECKING:
    from ..lab import Lab

# Shown with every panel: links underlined (not told apart by colour alone); readouts in the code
# font and the theme's colours, wrapped at spaces, never inside a word or a time.
STYLE = """<style>
.jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited { text-decoration: underline; }
.emq-readout, .emq-readout pre, .emq-readout code {
  font-family: var(--jp-code-font-family, monospace);
  color: var(--jp-content-font-color1, inherit);
}
.emq-readout, .emq-readout pre, .jp-OutputArea-output pre {
  word-break: normal; overflow-wrap: normal;
}
.emq-readout pre { white-space: pre-wrap; overflow-x: auto; }
</style>"""


# Names each slider handle (role="slider") after its slider's description for screen readers, once
# per page (Voila's template does the same), and makes each ``emq-live`` element a polite live region.
NAME_SLIDERS = """(function () {
  if (window.__emqNamesSliders) { return; }
  window.__emqNamesSliders = true;
  function name(root) {
    root.querySelectorAll('.widget-slider [role="slider"]:not([aria-label])').forEach(function (handle) {
      var label = handle.closest('.widget-slider').querySelector('.widget-label');
      if (label && label.textContent.trim()) { handle.setAttribute('aria-label', label.textContent.trim()); }
    });
    root.querySelectorAll('.emq-live:not([aria-live])').forEach(function (region) {
      region.setAttribute('role', 'status');
      region.setAttribute('aria-live', 'polite');
    });
  }
  var queued = false;  // one pass per frame, however many nodes the page adds
  new MutationObserver(function () {
    if (!queued) { queued = true; requestAnimationFrame(function () { queued = false; name(document); }); }
  }).observe(document.body, { childList: true, subtree: true });
  name(document);
})();"""


# A reply tuple ({:ok, :exists}) and a registry row (report @ 09:45): a line wraps around, never inside.
_UNITS = re.compile(r"\{:ok, :\w+\}|[\w:.-]+ @ \d{2}:\d{2}")


def whole(text: str) -> str:
    """``text`` as HTML, each reply tuple and ``name @ HH:MM`` row kept on one line."""
    return _UNITS.sub(lambda m: f"<span style='white-space:nowrap'>{m[0]}</span>", html.escape(text))


# The theme's own colours (light, dark, Voila), defaults that pass on white; the words say the state too.
GOOD = "var(--jp-success-color0,#1b5e20)"
BAD = "var(--jp-error-color1,#d32f2f)"
NOTE_STYLES = {
    "info": "color:var(--jp-content-font-color1,#24292f)",
    "done": f"color:{GOOD}",
    "refused": f"color:{BAD};font-weight:bold",
    "busy": "color:var(--jp-content-font-color2,#57606a);font-style:italic",
}


def html_part(*css_classes: str, **layout: str) -> widgets.HTML:
    """An HTML part carrying ``css_classes`` (what ``View.html`` and a browser test find it by)."""
    part = widgets.HTML(layout=widgets.Layout(**layout))
    for css_class in css_classes:
        part.add_class(css_class)
    return part


class View:
    """A panel over ``self.lab`` under a backend status line, ``readout`` its text/plain; controls run through ``act``
    (while the backend is down, clicks wait in order: :class:`emq_lab.health.Health`). Tests and an instructor's
    notebook reach it by what the page shows: ``click(label)``, ``control(label)``, ``html(css_class)``, ``note``."""

    box: widgets.Box
    _quiet = False  # the panel is setting its own controls: their observers stay still

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self._note = html_part("emq-note", min_height="1.6em", margin="2px 0")
        self._noted = ""
        self._status = html_part("emq-status")
        self.health: Health[Any] = Health(on_change=self._show_status, probe=lambda: probe(self.lab.client))

    @property
    def readout(self) -> str:
        raise NotImplementedError

    @property
    def note(self) -> str:
        """The note line: what the last action did, or why nothing ran."""
        return self._noted

    def _say(self, text: str, kind: str = "info") -> None:
        """Show ``text`` on the note line: what the last click did, why it was refused, or that it still runs."""
        self._noted = text
        self._note.value = f"<span style='{NOTE_STYLES[kind]}'>{html.escape(text)}</span>" if text else ""

    def _attempt(self, action: Callable[[], Any]) -> Any:
        """``action()``; a ValueError it raises is said on the note line and swallowed (the value is then None)."""
        try:
            return action()
        except ValueError as refusal:
            self._say(str(refusal), "refused")
            return None

    def act(self, action: Callable[[], Any]) -> Any:
        """Run a control's action; on a backend outage show the status, keep the action and retry it."""
        result = self.health.run(action)
        self._show_status()
        return result

    def retry(self) -> bool:
        """Run the waiting actions now (the twin of the background retry); True if none is left."""
        self.health.retry()
        self._show_status()
        return not self.health.waiting

    def close(self) -> None:
        """Stop the retries and close the widgets (a panel that is no longer shown)."""
        self.health.close()
        if hasattr(self, "_outer"):
            self._outer.close()
        self.box.close()

    @property
    def status(self) -> str:
        """The status line as text: ``""`` while the backend answers."""
        return " — ".join(part for part in (self.health.status, self.health.note) if part)

    def _boxed(self, css_class: str, *parts: widgets.Widget) -> None:
        self.box = widgets.VBox(list(parts))
        self.box.add_class(css_class)

    def _action_button(self, label: str, action: Callable[[], Any], *, style: str = "") -> widgets.Button:
        """A button whose press runs ``action`` through ``_click`` and then has the focus back."""
        button = widgets.Button(description=label, button_style=style)
        button.on_click(lambda b: self._click(action, b))
        return button

    def _on(self, control: widgets.DOMWidget, react: Callable[[Any], Any]) -> None:
        """``react(value)`` when a learner moves ``control``; not while the panel sets it (``_quietly``)."""
        control.observe(lambda change: None if self._quiet else react(change["new"]), names="value")

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        """Set controls from the model without their observers taking it for a learner's move."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _parts(self) -> Iterator[widgets.DOMWidget]:
        """Every widget of the panel in page order: the status line, then the box's, depth first."""
        stack: list[widgets.DOMWidget] = [self.box, self._status]
        while stack:
            part = stack.pop()
            yield part
            stack.extend(reversed(getattr(part, "children", ())))

    def _controls(self) -> list[widgets.DOMWidget]:
        return [part for part in self._parts() if part.has_trait("disabled")]

    def control(self, label: str) -> widgets.DOMWidget:
        """The part whose label is ``label`` (a button, a toggle, a slider, a menu, a progress bar)."""
        labelled = [part for part in self._parts() if getattr(part, "description", "")]
        for part in labelled:
            if part.description == label:
                return part
        shown = ", ".join(repr(part.description) for part in labelled)
        raise ValueError(f"label: nothing labelled {label!r}; the panel shows {shown}")

    def click(self, label: str) -> None:
        """A learner's click on ``label``: a button, a toggle or an option; a control that is off refuses."""
        shown = []
        for part in self._controls():
            for option, value in _choices(part):
                shown.append(repr(option))
                if option != label:
                    continue
                if part.disabled:
                    raise ValueError(f"label: {label!r} is off now; the page does not let it be clicked")
                if isinstance(part, widgets.Button):
                    part.click()
                else:
                    part.value = value
                return
        raise ValueError(f"label: nothing to click called {label!r}; the panel shows {', '.join(shown)}")

    def html(self, css_class: str = "emq-readout") -> str:
        """What the parts carrying ``css_class`` show (the class a browser test finds them by), one a line."""
        return "\n".join(str(part.value) for part in self._parts() if css_class in part._dom_classes)

    def _click(self, action: Callable[[], Any], *focus: widgets.DOMWidget) -> None:
        """Run ``action`` with the controls off (a refusal on the note line), then the focus back (``focus`` first)."""
        controls = self._controls()
        for control in controls:
            control.disabled = True
        try:
            self.act(lambda: self._attempt(action))
        finally:
            self._enable(controls)
            on = [part for part in (*focus, *self._controls()) if not part.disabled]
            if focus and on:
                on[0].focus()  # disabling the control took the focus away

    def _enable(self, controls: list[widgets.DOMWidget]) -> None:
        for control in controls:
            control.disabled = False

    def _show_status(self) -> None:
        text = self.status
        self._status.value = f"<b>⚠ {html.escape(text)}</b>" if text else ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        if not hasattr(self, "_outer"):
            style = widgets.HTML(STYLE, layout=widgets.Layout(height="0px", margin="0"))
            names = widgets.Output(layout=widgets.Layout(height="0px", margin="0"))
            names.append_display_data(Javascript(NAME_SLIDERS))
            self._outer = widgets.VBox([style, names, self._status, self.box])
        bundle = dict(self._outer._repr_mimebundle_(**kwargs) or {})
        try:
            bundle["text/plain"] = self.readout
        except Exception as exc:
            if not is_transient(exc):
                raise
            bundle["text/plain"] = self.status or f"⚠ {exc}"
        return bundle


def _choices(control: widgets.DOMWidget) -> list[tuple[str, Any]]:
    """(label, value) of each pick a click on ``control`` can make (sliders and boxes: none)."""
    if isinstance(control, widgets.ToggleButtons | widgets.Dropdown):
        return [option if isinstance(option, tuple) else (str(option), option) for option in control.options]
    if isinstance(control, widgets.ToggleButton):
        return [(control.description, not control.value)]
    if isinstance(control, widgets.Button):
        return [(control.description, None)]
    return []
