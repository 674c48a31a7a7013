"""Which namespace a lab uses: the argument, else ``$EMQ_LAB_NAMESPACE``, else none.

``"auto"`` stands for the person at the keyboard: ``$JUPYTERHUB_USER`` on a JupyterHub, else the
OS user and the host name, with every character outside ``[A-Za-z0-9_.-]`` replaced by ``-`` and
cut to 64 characters, so it always passes ``validate.namespace``.
"""

from __future__ import annotations

import getpass
import os
import re
import socket

from . import validate

ENV_NAMESPACE = "EMQ_LAB_NAMESPACE"
ENV_HUB_USER = "JUPYTERHUB_USER"
AUTO = "auto"

_OUTSIDE = re.compile(r"[^A-Za-z0-9_.-]+")


def sanitise(text: str) -> str:
    """``text`` with each run of characters a namespace may not hold turned into one ``-``,
    trimmed of leading and trailing ``-`` and cut to 64 characters ("" if nothing is left)."""
    return _OUTSIDE.sub("-", text).strip("-")[: validate.MAX_NAMESPACE].rstrip("-")


def auto() -> str:
    """``$JUPYTERHUB_USER``, else ``<user>-<host>`` (the host's first label), sanitised."""
    hub = sanitise(os.environ.get(ENV_HUB_USER, "").strip())
    if hub:
        return hub
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no $USER: a container with an odd uid
        user = f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"
    host = socket.gethostname().split(".")[0]
    return sanitise(f"{user}-{host}") or sanitise(user) or "learner"


def resolve_namespace(namespace: str | None) -> str | None:
    """The namespace a lab should use: the argument, else ``$EMQ_LAB_NAMESPACE`` (empty = none),
    ``"auto"`` resolved by :func:`auto`; the result is validated (``ValueError`` naming it)."""
    chosen = namespace if namespace is not None else os.environ.get(ENV_NAMESPACE, "").strip() or None
    if chosen is None:
        return None
    if chosen == AUTO:
        chosen = auto()
    return validate.namespace(chosen)
