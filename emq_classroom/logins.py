"""Failed logins, counted from the server's ``ACL LOG`` (the class guard closes a connection trying
passwords by how many times it failed since the last sweep, never by time), and :func:`number` and
:func:`text`, a field of a server's reply."""

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


def text(value: Any) -> str:
    """A field of a raw reply as str, bytes that are not UTF-8 as U+FFFD (a learner may send any bytes)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def since(count: int, before: int) -> int:
    """How much a server's counter grew since it read ``before``: all of it when smaller (reset, or restarted)."""
    return count - before if count >= before else count


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
        failures = since(count, seen.get(field_, 0))
        if failures <= 0:
            continue
        user = str(entry.get("username", ""))
        per_user[user] += failures
        info = entry.get("client-info")
        if not isinstance(info, dict):
            info = dict(part.partition("=")[::2] for part in str(info or "").split())
        if failures >= max_failed:
            guessing[number(info, "id")] += failures
    return guessing, per_user, now
