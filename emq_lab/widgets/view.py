"""The base of every panel: a view over the lab that hands display to an inner box."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets


class View:
    """A panel holds the lab, builds ``self.box`` privately and never calls ``display()``.

    Displayed, it shows the box; its ``text/plain`` is the readout, so a notebook's stored
    output carries the verdict rather than the ipywidgets repr (which changes by version).
    """

    box: widgets.Box

    @property
    def readout(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.box._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.readout
        return bundle
