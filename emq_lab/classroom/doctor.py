"""``python -m emq_lab.classroom doctor``: what a class server needs, checked, in one table.

Each row names a setting, what the server has, a verdict (``ok``, ``warn``, ``FIX``) and the
command that fixes it. ``FIX`` means a learner could reach another's keys or the class could
lose its work; ``warn`` that the class is exposed more than it needs to be."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from redis import RedisCluster
from redis.exceptions import RedisError

from .users import DEFAULT_FIX, all_powerful_users, default_user, open_users, user_fix

#: The Lua engine CVEs of October 2025 (CVE-2025-49844 use-after-free in the parser and
#: CVE-2025-46817 unpack overflow: remote code execution; CVE-2025-46818: a script runs as
#: another user through the shared string metatable; CVE-2025-46819: out-of-bounds read), and
#: the first release of each line with the fix. A line not named and older than the newest is unfixed.
LUA_CVES = "CVE-2025-49844, CVE-2025-46817, CVE-2025-46818, CVE-2025-46819"
FIXED_IN: dict[str, dict[tuple[int, int], int]] = {
    "valkey": {(7, 2): 11, (8, 0): 6, (8, 1): 4},
    "redis": {(6, 2): 20, (7, 2): 11, (7, 4): 6, (8, 0): 4, (8, 2): 2},
}
ALL_FIXED_FROM = {"valkey": (9, 0), "redis": (8, 4)}  # every release from this line on has the fixes
BUSY_MS = 1000  # above this, a long script blocks every learner for longer than a click should wait


@dataclass(frozen=True)
class Row:
    setting: str
    found: str
    verdict: str  # "ok", "warn" or "FIX"
    fix: str = ""


def lua_fixed(server: str, version: str) -> bool | None:
    """True when ``server`` (``valkey`` or ``redis``) at ``version`` has the Lua fixes; None unknown."""
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if server not in FIXED_IN or not found:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    if (major, minor) >= ALL_FIXED_FROM[server]:
        return True
    first = FIXED_IN[server].get((major, minor))
    return first is not None and patch >= first


def _config(client: Any, name: str) -> str | None:
    try:
        reply = client.config_get(name)
    except RedisError:
        return None
    return None if name not in reply else str(reply[name])


def _other_users(client: Any) -> list[Row]:
    """The users beside the default: none on without a password; one admin (with every key and
    command) is needed, each more is flagged."""
    try:
        open_ = [user for user in open_users(client) if user != "default"]
        powerful = [user for user in all_powerful_users(client) if user not in ("default", *open_)]
        me = str(client.execute_command("ACL", "WHOAMI"))
    except RedisError as exc:
        return [Row("other users", f"not readable ({type(exc).__name__})", "warn", "run doctor as an admin")]
    rows = []
    if open_:
        rows.append(
            Row(
                "users, no password",
                ", ".join(open_) + ": on, no password",
                "FIX",
                " ; ".join(user_fix(u) for u in open_),
            )
        )
    else:
        rows.append(Row("users, no password", "none", "ok"))
    more = [user for user in powerful if user != me]
    if more:
        rows.append(
            Row(
                "admins",
                f"{me} and {', '.join(more)}: every key and command",
                "warn",
                " ; ".join(f"ACL DELUSER {u}" for u in more) + " (if not needed)",
            )
        )
    else:
        rows.append(Row("admins", f"{me} only", "ok"))
    return rows


def check(client: Any) -> list[Row]:
    """The table for one server (a plain client on it, logged in as an admin)."""
    rows = []
    try:
        flags = default_user(client)
        if "on" not in flags:
            rows.append(Row("default user", "off", "ok"))
        elif "nopass" in flags:
            rows.append(Row("default user", "on, no password", "FIX", f"{DEFAULT_FIX[0]} ; {DEFAULT_FIX[1]}"))
        else:
            rows.append(Row("default user", "on, with a password", "warn", DEFAULT_FIX[1] + " (after making an admin)"))
    except RedisError as exc:
        rows.append(Row("default user", f"not readable ({type(exc).__name__})", "warn", "run doctor as an admin"))
    rows += _other_users(client)

    info = client.info("server")
    server = "valkey" if "valkey_version" in info else "redis"
    version = str(info.get("valkey_version") or info.get("redis_version", "?"))
    fixed = lua_fixed(server, version)
    if fixed:
        rows.append(Row("version, Lua CVEs", f"{server} {version}: fixed", "ok"))
    else:
        lines = ", ".join(f"{a}.{b}.{p}" for (a, b), p in FIXED_IN[server].items())
        rows.append(
            Row(
                "version, Lua CVEs",
                f"{server} {version}: Lua CVEs open",
                "warn",
                f"upgrade to {lines} or later ({LUA_CVES}); learners cannot send Lua, which keeps them out of reach",
            )
        )

    maxmemory = _config(client, "maxmemory")
    if maxmemory is None:
        rows.append(Row("maxmemory", "not readable", "warn", "run doctor as an admin (CONFIG GET)"))
    elif int(maxmemory) == 0:
        rows.append(Row("maxmemory", "no limit", "FIX", "CONFIG SET maxmemory 512mb (what the machine can spare)"))
    else:
        rows.append(Row("maxmemory", f"{int(maxmemory) // 2**20} MiB", "ok"))
    policy = _config(client, "maxmemory-policy")
    if policy is not None:
        ok = policy == "noeviction"
        rows.append(
            Row(
                "maxmemory-policy",
                policy,
                "ok" if ok else "FIX",
                "" if ok else "CONFIG SET maxmemory-policy noeviction (any other policy deletes learners' keys)",
            )
        )

    threshold = _config(client, "busy-reply-threshold") or _config(client, "lua-time-limit")
    if threshold is not None:
        ok = 0 < int(threshold) <= BUSY_MS
        name = "busy-reply-threshold" if _config(client, "busy-reply-threshold") is not None else "lua-time-limit"
        fix = "" if ok else f"CONFIG SET {name} {BUSY_MS}"
        rows.append(Row("busy threshold", f"{threshold} ms", "ok" if ok else "warn", fix))

    appendonly, save = _config(client, "appendonly"), _config(client, "save")
    if appendonly is not None:
        if appendonly == "yes":
            rows.append(Row("persistence", "append-only file", "ok"))
        elif save:
            rows.append(Row("persistence", f"snapshots only (save {save})", "warn", "CONFIG SET appendonly yes"))
        else:
            rows.append(Row("persistence", "none: a restart loses every key", "FIX", "CONFIG SET appendonly yes"))
    aclfile = _config(client, "aclfile")
    if aclfile is not None:
        rows.append(
            Row("ACL users kept", f"aclfile {aclfile}", "ok")
            if aclfile
            else Row(
                "ACL users kept",
                "no aclfile",
                "warn",
                "after users: CONFIG REWRITE (writes them into valkey.conf), or start with an aclfile and ACL SAVE",
            )
        )
    protected = _config(client, "protected-mode")
    if protected is not None:
        ok = protected == "yes"
        rows.append(
            Row("protected mode", protected, "ok" if ok else "warn", "" if ok else "CONFIG SET protected-mode yes")
        )
    return rows


def doctor(client: Any) -> list[tuple[str, list[Row]]]:
    """The table of each server: one, or each primary of a cluster (settings are per node)."""
    if isinstance(client, RedisCluster):
        nodes = client.get_primaries()
        return [(f"node {node.host}:{node.port}", check(client.get_redis_connection(node))) for node in nodes]
    return [("", check(client))]


def table(rows: list[Row]) -> list[str]:
    """The rows as aligned text: setting, found, verdict, fix."""
    head = Row("setting", "found", "verdict", "fix")
    width = [max(len(getattr(r, f)) for r in (head, *rows)) for f in ("setting", "found", "verdict")]
    return [
        f"{r.setting:<{width[0]}}  {r.found:<{width[1]}}  {r.verdict:<{width[2]}}  {r.fix}".rstrip()
        for r in (head, *rows)
    ]
