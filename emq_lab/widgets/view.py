"""The base of every panel: a view over the lab that hands display to an inner box."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..health import Health

RETRY_EVERY_S = 1.0
RETRY_ATTEMPTS = 60


class View:
    """A panel holds the lab, builds ``self.box`` privately and never calls ``display()``.

    Displayed, it shows a one-line backend status above the box; its ``text/plain`` is the
    readout, so a notebook's stored output carries the verdict rather than the ipywidgets repr
    (which changes by version). Button callbacks go through ``act`` so a dead backend shows
    "backend unavailable — retrying" instead of a traceback, and is retried in the background.
    """

    box: widgets.Box

    @property
    def readout(self) -> str:
        raise NotImplementedError

    @property
    def health(self) -> Health[Any]:
        if not hasattr(self, "_health"):
            self._health: Health[Any] = Health()
            self._status = widgets.HTML("")
            self._status.add_class("emq-status")
        return self._health

    def act(self, action: Callable[[], Any]) -> Any:
        """Run a control's action; on a backend outage show the status and retry it in the background."""
        result = self.health.run(action)
        self._show_status()
        if not self.health.ok:
            self._schedule_retry(RETRY_ATTEMPTS)
        return result

    def retry(self) -> bool:
        """Run the action that failed again (the twin of the background retry); True if it went through."""
        if not self.health.pending:
            return self.health.ok
        self.health.retry()
        self._show_status()
        return self.health.ok

    def _schedule_retry(self, attempts: int) -> None:
        def attempt() -> None:
            if not self.retry() and attempts > 1:
                self._schedule_retry(attempts - 1)

        timer = threading.Timer(RETRY_EVERY_S, attempt)
        timer.daemon = True
        timer.start()

    def _show_status(self) -> None:
        self.health  # noqa: B018 - creates the status widget on first use
        self._status.value = "" if self.health.ok else f"<b>⚠ {self.health.status}</b>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        self.health  # noqa: B018
        if not hasattr(self, "_outer"):
            self._outer = widgets.VBox([self._status, self.box])
        bundle = dict(self._outer._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.readout
        return bundle
