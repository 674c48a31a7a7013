"""A lab that runs a learner's Lua: the exercises' way to try a script in place of the course's."""

from __future__ import annotations

from .. import sandbox
from ..lab import Lab
from ..scripts import Scripts


def with_scripts(lab: Lab, **sources: str) -> Lab:
    """``lab`` with some scripts replaced by Lua source, e.g. ``with_scripts(lab, advance=text)``:
    every verb and the pump of the lab returned run that text. A learner's Lua never runs on the
    lab's server: the lab returned lives in the sandbox (:func:`emq_lab.sandbox.shared`, a private
    fakeredis in a worker process, empty at first, shared by every such lab of this kernel), with
    ``lab``'s clock and namespace. A lab already in a sandbox stays in it."""
    for name, source in sources.items():
        if not isinstance(source, str):
            raise ValueError(f"{name}: expected the script's Lua source as text, got {type(source).__name__}")
        try:
            source.encode()
        except UnicodeEncodeError as error:
            raise ValueError(
                f"{name}: the script's text cannot be encoded as UTF-8 (a lone surrogate "
                f"{source[error.start]!r} at character {error.start})"
            ) from None
    client = lab.client if sandbox.owns(lab.client) else sandbox.shared().client
    base = lab.scripts if client is lab.client else Scripts.load(client)
    scripts = base.replacing(client, **sources)
    return Lab(client, lab.clock, "a sandbox (private fakeredis)", namespace=lab.namespace, scripts=scripts)
