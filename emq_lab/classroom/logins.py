"""Failed logins, counted from the server's ``ACL LOG`` (the class guard closes a connection trying
passwords by how many times it failed since the last sweep, never by time), and :func:`number`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

#: Failed logins (ACL LOG ``auth`` entries) of one connection between two sweeps past which it is closed.
MAX_FAILED = 20
#: ACL LOG entries read each sweep (the server keeps 128 unless ``acllog-max-len`` says otherwise).
ACL_LOG_ENTRIES = 128


def number(entry: Mapping[str, Any], name: str) -> int:
    """``entry[name]`` (of ``CLIENT LIST``, ``ACL LOG`` or ``INFO``, parsed) as an int; 0 if missing or no number."""
    try:
        return int(entry.get(name, 0))
    except (TypeError, ValueError):
        return 0


def failed_logins(
    log: Iterable[dict[str, Any]], seen: dict[str, int], *, node: int = 0, max_failed: int = MAX_FAILED
) -> tuple[dict[int, int], dict[str, int], dict[str, int]]:
    """From ``ACL LOG`` (parsed) and the counts ``seen`` at the last sweep (``<node>:<entry id>``): the
    connections that failed ``max_failed`` logins or more since, the failures per user, the counts to keep."""
    guessing: Counter[int] = Counter()
    per_user: Counter[str] = Counter()
    now: dict[str, int] = {}
    for entry in log:
        if str(entry.get("reason", "")) != "auth":
            continue
        field_ = f"{node}:{entry.get('entry-id', '')}"
        count = number(entry, "count")
        now[field_] = count
        before = seen.get(field_, 0)
        since = count - before if count >= before else count  # a smaller count: the log was reset
        if since <= 0:
            continue
        user = str(entry.get("username", ""))
        per_user[user] += since
        info = entry.get("client-info")
        if not isinstance(info, dict):
            info = dict(part.partition("=")[::2] for part in str(info or "").split())
        if since >= max_failed:
            guessing[number(info, "id")] += since
    return guessing, per_user, now
