"""A lab's namespace: the argument, else ``$EMQ_LAB_NAMESPACE``, else none; ``"auto"``: the person at the keyboard."""

from __future__ import annotations

import getpass
import os
import re
import socket

from . import validate

ENV_NAMESPACE = "EMQ_LAB_NAMESPACE"
ENV_HUB_USER = "JUPYTERHUB_USER"
AUTO = "auto"


def sanitise(text: str) -> str:
    """``text`` as a valid namespace: each run of other characters than ``[A-Za-z0-9_.-]`` one ``-``, cut to 64."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[: validate.MAX_NAMESPACE].rstrip("-")


def auto() -> str:
    """``$JUPYTERHUB_USER``, else ``<user>-<host>`` (the host's first label), sanitised."""
    if hub := sanitise(os.environ.get(ENV_HUB_USER, "").strip()):
        return hub
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no $USER: a container with an odd uid
        user = f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"
    host = socket.gethostname().split(".")[0]
    return sanitise(f"{user}-{host}") or sanitise(user) or "learner"


def resolve_namespace(namespace: str | None) -> str | None:
    """The namespace a lab uses (``$EMQ_LAB_NAMESPACE`` if None, empty: none; ``"auto"``: :func:`auto`), validated."""
    chosen = namespace if namespace is not None else os.environ.get(ENV_NAMESPACE, "").strip() or None
    if chosen is None:
        return None
    return validate.namespace(auto() if chosen == AUTO else chosen)
