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
from typing import Any

from redis.exceptions import NoPermissionError

from . import keys, validate

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
    chosen = sanitise(f"{user}-{host}") or sanitise(user) or "learner"
    return chosen


def resolve_namespace(namespace: str | None) -> str | None:
    """The namespace a lab should use: the argument, else ``$EMQ_LAB_NAMESPACE`` (empty = none),
    ``"auto"`` resolved by :func:`auto`; the result is validated (``ValueError`` naming it)."""
    chosen = namespace if namespace is not None else os.environ.get(ENV_NAMESPACE, "").strip() or None
    if chosen is None:
        return None
    if chosen == AUTO:
        chosen = auto()
    return validate.namespace(chosen)


def explain_permission(error: Exception, *, namespace: str | None, user: str | None = None) -> str:
    """A learner-facing message for a NOPERM reply: what was refused, and what to do."""
    text = str(error)
    command = re.search(r"permissions to run the '([^']+)' command", text)
    if command:
        return (
            f"the server refused the command {command.group(1).upper()}: a classroom user may run only "
            "the commands emq-lab uses. Use emq-lab's verbs, or ask your instructor."
        )
    mine = f"namespace {namespace!r} (keys {keys.namespace_pattern(namespace)})" if namespace else "no namespace"
    hint = f"EMQ_LAB_NAMESPACE={user}" if user else "EMQ_LAB_NAMESPACE to the namespace your instructor gave you"
    return (
        f"the server refused a key of {mine}{f' to user {user!r}' if user else ''} ({text}). "
        f"Set {hint} (or pass namespace=... to emq_lab.connect) and connect again."
    )


def check_access(client: Any, namespace: str | None, *, user: str | None) -> None:
    """One EXISTS on a key of ``namespace``: a classroom user whose ACL does not cover it gets a
    PermissionError saying which namespace to use, at connect time instead of mid-dive."""
    try:
        client.exists(keys.QueueKeys("access-check", namespace).registry)
    except NoPermissionError as error:
        raise PermissionError(explain_permission(error, namespace=namespace, user=user)) from None


def acl_user(client: Any) -> str | None:
    """The user name a redis-py client logs in as (from its URL), None for the default user."""
    pool = getattr(client, "connection_pool", None)
    kwargs = pool.connection_kwargs if pool is not None else getattr(client, "nodes_manager", None)
    if kwargs is not None and not isinstance(kwargs, dict):
        kwargs = getattr(kwargs, "connection_kwargs", {})
    user = (kwargs or {}).get("username")
    return str(user) if user else None
