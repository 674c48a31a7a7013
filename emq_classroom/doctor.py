"""``python -m emq_classroom doctor``: what a class server needs, checked, in one table.

Each row names a setting, what the server has, a verdict and the fix: ``FIX`` means a learner could
reach another's keys or starve the class, or the class could lose its work; ``warn`` that the class
is exposed more than it needs to be. A fix is a ``CONFIG SET`` and how to keep it after a restart."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from redis import RedisCluster
from redis.exceptions import NoPermissionError, RedisError

from .guard import MAX_REPLY, QUOTA
from .slow import MAX_HOLD_MS, SLOW_ENTRIES
from .users import DEFAULT_FIX, acl_users, all_powerful_users, default_user, on_every_node, open_users, user_fix

#: The Lua engine CVEs of October 2025 (remote code execution; a script running as another user), and the
#: first release of each line with the fix. A line not named and older than the newest is unfixed.
LUA_CVES = "CVE-2025-49844, CVE-2025-46817, CVE-2025-46818, CVE-2025-46819"
FIXED_IN: dict[str, dict[tuple[int, int], int]] = {
    "valkey": {(7, 2): 11, (8, 0): 6, (8, 1): 4},
    "redis": {(6, 2): 20, (7, 2): 11, (7, 4): 6, (8, 0): 4, (8, 2): 2},
}
ALL_FIXED_FROM = {"valkey": (9, 0), "redis": (8, 4)}  # every release from this line on has the fixes
BUSY_MS = 1000  # above this, a long script blocks every learner for longer than a click should wait
#: Connections beside the learners': the hub, its guard, the instructor's pages, an admin shell.
STAFF_CLIENTS = 32
#: What all clients' buffers may take together before the server evicts the largest client: a size, not
#: a share of maxmemory (none while maxmemory is 0). Sixteen of the 4 MiB output buffers below.
CLIENTS_MEMORY = "64mb"
#: A normal client's output buffer: closed past the hard limit, or past the soft one for the seconds.
#: Quick for the server to fill (0.07 to 0.16 s); far above any reply emq-lab asks for.
OUTPUT_HARD = 4 * 2**20
OUTPUT_LIMIT = f"normal {OUTPUT_HARD // 2**20}mb {OUTPUT_HARD // 2**22}mb 10"
AS_ADMIN = "run doctor as an admin"
#: ``slowlog-log-slower-than`` (µs) doctor advises and ``users`` sets when the guard could not see a hold:
#: the server's default, at most the guard's hold limit (the course's heaviest calls are rarely logged).
SLOWLOG_US = 10_000


@dataclass(frozen=True)
class Row:
    setting: str
    found: str
    verdict: str  # "ok", "warn" or "FIX"
    fix: str = ""


def class_clients(learners: int) -> int:
    """``maxclients`` for a class: each learner's quota of connections, and the staff's."""
    return learners * QUOTA + STAFF_CLIENTS


def keep(conf: str, name: str, value: str) -> str:
    """``CONFIG SET`` now, and how the setting survives a restart on this server."""
    shown = f'"{value}"' if " " in value else value
    now = f"CONFIG SET {name} {shown}"
    if conf:
        return f"{now} ; CONFIG REWRITE (keeps it in {conf})"
    return f"{now} ; at the next start: --{name} {value} (or the line '{name} {value}' in its config file)"


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


def _bytes(value: str) -> int:
    """A size as CONFIG GET shows it (bytes), or as written (``64mb``, ``2gb``)."""
    found = re.fullmatch(r"(\d+)\s*([kmg]?)b?", value.strip().lower())
    return int(found[1]) * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[found[2]] if found else 0


def learner_count(client: Any) -> int:
    """The server's ACL users that are neither the default nor an admin: the class (and its observer)."""
    return len(set(acl_users(client)) - set(all_powerful_users(client)) - {"default"})


def _users(client: Any) -> list[Row]:
    """The default user (off), users without a password (none) and admins (the one running doctor)."""
    try:
        flags = default_user(client)
        open_ = [user for user in open_users(client) if user != "default"]
        powerful = [user for user in all_powerful_users(client) if user not in ("default", *open_)]
        me = str(client.execute_command("ACL", "WHOAMI"))
    except RedisError as exc:
        unread = f"not readable ({type(exc).__name__})"
        return [Row("default user", unread, "warn", AS_ADMIN), Row("other users", unread, "warn", AS_ADMIN)]
    if "on" not in flags:
        rows = [Row("default user", "off", "ok")]
    elif "nopass" in flags:
        rows = [Row("default user", "on, no password", "FIX", " ; ".join(DEFAULT_FIX))]
    else:
        rows = [Row("default user", "on, with a password", "warn", DEFAULT_FIX[1] + " (after making an admin)")]
    fix = " ; ".join(user_fix(u) for u in open_)
    rows.append(Row("users, no password", ", ".join(open_) + ": on, no password", "FIX", fix) if open_ else
                Row("users, no password", "none", "ok"))  # fmt: skip
    more = [user for user in powerful if user != me]
    fix = " ; ".join(f"ACL DELUSER {u}" for u in more) + " (if not needed)"
    rows.append(Row("admins", f"{me} and {', '.join(more)}: every key and command", "warn", fix) if more else
                Row("admins", f"{me} only", "ok"))  # fmt: skip
    return rows


def check(client: Any, *, learners: int | None = None) -> list[Row]:
    """The table for one server (a plain client, an admin); ``learners``: the class's size (default: the ACL users)."""
    try:
        client.config_get("maxmemory")
    except NoPermissionError:  # a learner's or the observer's URL
        kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {}) or {}
        user = kwargs.get("username") or "default"
        return [
            Row("admin", f"user {user} may not read the server's settings (CONFIG GET)", "FIX",
                "doctor needs the server's admin: run it with the admin's URL (the user that made the learners), "
                "not a learner's or the observer's")
        ]  # fmt: skip
    except RedisError:
        pass
    rows = _users(client)
    info = client.info("server")
    conf = str(info.get("config_file") or "")

    def want(setting: str, found: str, ok: bool, name: str, value: str, verdict: str = "warn", why: str = "") -> None:
        """An ``ok`` row, or ``verdict`` and the fix: ``name`` set to ``value``."""
        rows.append(Row(setting, found, "ok") if ok else Row(setting, found, verdict, keep(conf, name, value) + why))

    server = "valkey" if "valkey_version" in info else "redis"
    version = str(info.get("valkey_version") or info.get("redis_version", "?"))
    if lua_fixed(server, version):
        rows.append(Row("version, Lua CVEs", f"{server} {version}: fixed", "ok"))
    else:
        lines = ", ".join(f"{a}.{b}.{p}" for (a, b), p in FIXED_IN[server].items())
        fix = f"upgrade to {lines} or later ({LUA_CVES}); learners cannot send Lua, which keeps them out of reach"
        rows.append(Row("version, Lua CVEs", f"{server} {version}: Lua CVEs open", "warn", fix))
    no_conf = Row("config file", "none: settings last until a restart", "warn", "keep each fix below with its flag")
    rows.append(Row("config file", conf, "ok") if conf else no_conf)

    maxmemory = _config(client, "maxmemory")
    if maxmemory is None:
        rows.append(Row("maxmemory", "not readable", "warn", f"{AS_ADMIN} (CONFIG GET)"))
    else:
        found = f"{int(maxmemory) // 2**20} MiB" if int(maxmemory) else "no limit"
        want("maxmemory", found, int(maxmemory) > 0, "maxmemory", "512mb", "FIX", " (what the machine can spare)")
    policy = _config(client, "maxmemory-policy")
    if policy is not None:
        why = " (any other policy deletes learners' keys)"
        want("maxmemory-policy", policy, policy == "noeviction", "maxmemory-policy", "noeviction", "FIX", why)

    share = _config(client, "maxmemory-clients")
    if share is not None:
        limited = share.strip() not in ("0", "0%")
        found = share if share.endswith("%") else f"{_bytes(share) // 2**20} MiB"
        if not limited:
            found = "no limit: replies a learner never reads can fill maxmemory"
        found += ": the largest clients are evicted past it" if limited else ""
        want("maxmemory-clients", found, limited, "maxmemory-clients", CLIENTS_MEMORY, "FIX")
    limits = _config(client, "client-output-buffer-limit")
    if limits is not None:
        words = limits.split()
        normal = words[words.index("normal") + 1 : words.index("normal") + 3] if "normal" in words else []
        hard, soft = (_bytes(normal[0]) if normal else 0), (_bytes(normal[1]) if len(normal) > 1 else 0)
        if not hard and not soft:
            found, verdict = "normal clients: no limit", "FIX"
        elif hard > MAX_REPLY or not hard:
            found, verdict = f"normal clients: hard {hard // 2**20} MiB, soft {soft // 2**20} MiB", "warn"
        else:
            found, verdict = f"normal clients: closed past {hard // 2**20} MiB", "ok"
        want("output buffers", found, verdict == "ok", "client-output-buffer-limit", OUTPUT_LIMIT, verdict)
    most = _config(client, "maxclients")
    if most is not None:
        count = learner_count(client) if learners is None else learners
        need, have = class_clients(count), int(most)
        sized = f"{count} learner(s) x {QUOTA} + {STAFF_CLIENTS} = {need}"
        if count == 0:
            fix = "run `python -m emq_classroom users --learners N` first (it sets maxclients for N), "
            fix += "or run doctor with --learners N"
            rows.append(Row("maxclients", f"{have}: no learner yet, so no size for the class", "warn", fix))
        elif have < need:
            want("maxclients", f"{have}: fewer than the class needs ({sized})", False, "maxclients", str(need), "FIX")
        elif have > 4 * need:
            found = f"{have}: one learner can open them all (the class needs {sized})"
            want("maxclients", found, False, "maxclients", str(need), why=" ; and run the class guard")
        else:
            rows.append(Row("maxclients", f"{have} (the class needs {sized})", "ok"))
    lazy = _config(client, "lazyfree-lazy-user-del")
    if lazy is not None:
        found = "DEL frees in the background" if lazy == "yes" else "DEL of a learner's big key holds every learner"
        want("lazy deletes", found, lazy == "yes", "lazyfree-lazy-user-del", "yes")

    for row in slowlog_rows(client):  # the guard's eye on holds
        name, value = row.fix.split() if row.fix else ("", "")
        want(row.setting, row.found, row.verdict == "ok", name, value, row.verdict)
    busy = _config(client, "busy-reply-threshold")
    name = "busy-reply-threshold" if busy is not None else "lua-time-limit"
    threshold = busy if busy is not None else _config(client, name)
    if threshold is not None:
        want("busy threshold", f"{threshold} ms", 0 < int(threshold) <= BUSY_MS, name, str(BUSY_MS))
    appendonly, save = _config(client, "appendonly"), _config(client, "save")
    if appendonly is not None:
        found = f"snapshots only (save {save})" if save else "none: a restart loses every key"
        found = "append-only file" if appendonly == "yes" else found
        want("persistence", found, appendonly == "yes", "appendonly", "yes", "warn" if save else "FIX")
    aclfile = _config(client, "aclfile")
    if aclfile:
        rows.append(Row("ACL users kept", f"aclfile {aclfile}", "ok"))
    elif aclfile is not None and conf:
        fix = f"after users: CONFIG REWRITE (writes them into {conf})"
        rows.append(Row("ACL users kept", "no aclfile", "warn", fix))
    elif aclfile is not None:
        fix = "at the next start: --aclfile /path/users.acl (an existing file, empty is fine), then users again "
        found = "no aclfile, no config file: a restart loses the learners' users"
        rows.append(Row("ACL users kept", found, "warn", fix + "(or ACL SAVE after it)"))
    protected = _config(client, "protected-mode")
    if protected is not None:
        want("protected mode", protected, protected == "yes", "protected-mode", "yes")
    return rows


def slowlog_rows(client: Any) -> list[Row]:
    """The rows of the two settings the guard reads holds with (:mod:`.slow`); a wrong row's fix: name and value."""
    rows = []
    slower = _config(client, "slowlog-log-slower-than")
    if slower is not None:
        limit, found = MAX_HOLD_MS * 1000, f"{int(slower):,} µs"
        if int(slower) < 0 or int(slower) > limit:
            why = "logs nothing" if int(slower) < 0 else f"misses holds under it (the guard's limit is {limit:,} µs)"
            rows.append(Row("slowlog threshold", f"{found}: {why}", "FIX", f"slowlog-log-slower-than {SLOWLOG_US}"))
        elif int(slower) == 0:
            found += ": every command logged, a hold may drop out before the guard reads it"
            rows.append(Row("slowlog threshold", found, "warn", f"slowlog-log-slower-than {SLOWLOG_US}"))
        else:
            seen = f"the guard sees holds of {limit:,} µs, and sums commands of {int(slower):,} µs or more"
            rows.append(Row("slowlog threshold", f"{found}: {seen}", "ok"))
    most = _config(client, "slowlog-max-len")
    if most is not None and int(most) < SLOW_ENTRIES:
        found = f"{most} entries: the guard may miss holds"
        rows.append(Row("slowlog length", found, "FIX", f"slowlog-max-len {SLOW_ENTRIES}"))
    elif most is not None:
        rows.append(Row("slowlog length", f"{most} entries", "ok"))
    return rows


def doctor(client: Any, *, learners: int | None = None) -> list[tuple[str, list[Row]]]:
    """The table of each server: one, or each primary of a cluster (settings are per node)."""
    if isinstance(client, RedisCluster):
        return [
            (f"node {node.host}:{node.port}", check(client.get_redis_connection(node), learners=learners))
            for node in client.get_primaries()
        ]
    return [("", check(client, learners=learners))]


def apply_limits(client: Any, *, learners: int) -> list[str]:
    """The lines saying what limits it set on every node, so no learner starves the class, and how to keep them."""
    first = client.get_redis_connection(client.get_primaries()[0]) if isinstance(client, RedisCluster) else client
    conf = str(first.info("server").get("config_file") or "")
    wanted = {
        "maxmemory-clients": CLIENTS_MEMORY,
        "client-output-buffer-limit": OUTPUT_LIMIT,
        "maxclients": str(class_clients(learners)),
    }
    wanted |= dict(row.fix.split() for row in slowlog_rows(first) if row.verdict != "ok")  # only when wrong
    for name, value in wanted.items():
        on_every_node(client, "CONFIG", "SET", name, value)
    lines = [f"# server limits for {learners} learner(s), set now: " + ", ".join(f"{n} {v}" for n, v in wanted.items())]
    if conf:
        return [*lines, f"# to keep them after a restart: CONFIG REWRITE (writes them into {conf})"]
    flags = " ".join(f"--{name} {value}" for name, value in wanted.items())
    return [*lines, f"# no config file: start the server next time with {flags}"]


def table(rows: list[Row]) -> list[str]:
    """The rows as aligned text: setting, found, verdict, fix."""
    head = Row("setting", "found", "verdict", "fix")
    width = [max(len(getattr(r, f)) for r in (head, *rows)) for f in ("setting", "found", "verdict")]
    return [
        f"{r.setting:<{width[0]}}  {r.found:<{width[1]}}  {r.verdict:<{width[2]}}  {r.fix}".rstrip()
        for r in (head, *rows)
    ]
