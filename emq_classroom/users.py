"""The learners' ACL users: who they are, what they may run, and the instructor's script load.

A learner may run the commands emq-lab sends, only on its own namespace's keys, and no Lua of its
own (``EVALSHA`` of the scripts :func:`load_scripts` loaded only): it cannot plant code in the Lua
state every user shares (CVE-2025-46818), reach a bug of the Lua engine, block the class with a
runaway script, or ``SCRIPT KILL`` another's."""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from redis import RedisCluster

from emq_lab import keys, validate
from emq_lab.scripts import FILES, Scripts, source

MAX_LEARNERS = 500

# What emq-lab sends from Python, and nothing else. Connection: PING and HELLO, CLIENT SETINFO
# (redis-py names itself on connect). Scripts: EVALSHA only, of the scripts the instructor
# loaded (never EVAL, SCRIPT LOAD/KILL/FLUSH, FUNCTION or FCALL); SCRIPT EXISTS lets the client
# see they are loaded; MULTI and EXEC wrap a batch of them on a cluster (one node runs all or
# none while a hash slot moves). The reads of the verbs, keys() and the panels; DEL/UNLINK for reset and
# the cancel dive's crash, LTRIM for the fast-forward's clean-up (Jobs.trim); HSET for the exercise
# progress (emq_lab.progress). Cluster clients also ask for the slot map and the command table,
# and send ASKING (and READONLY, reading from replicas) while a hash slot migrates.
CLIENT_COMMANDS: tuple[str, ...] = (
    "ping", "hello", "client|setinfo",
    "evalsha", "script|exists", "multi", "exec",
    "zrange", "zrangebyscore", "zcard", "zscore", "hgetall", "hmget", "lrange", "llen", "exists", "type",
    "del", "unlink", "ltrim", "hset",
    "cluster|slots", "cluster|shards", "cluster|nodes", "command", "asking", "readonly",
)  # fmt: skip

#: What a learner may never run, even if a script of emq-lab called it: these run or load Lua.
NO_LUA: tuple[str, ...] = ("eval", "eval_ro", "script", "function", "fcall", "fcall_ro")

_CALL = re.compile(r"""redis\.p?call\(\s*['"]([A-Za-z]+)['"]""")


def script_commands() -> tuple[str, ...]:
    """Every command the Lua scripts call (the ACL checks each call again), read from the scripts themselves."""
    return tuple(sorted({m.lower() for name in FILES.values() for m in _CALL.findall(source(name))}))


ALLOWED_COMMANDS: tuple[str, ...] = tuple(
    command for command in dict.fromkeys((*CLIENT_COMMANDS, *script_commands())) if command not in NO_LUA
)

#: What the instructor's observer may run: reads only. It lists the ACL users (``ACL USERS``,
#: never ``ACL LIST``, which shows every user's password hash, the admin's too), SCANs for the
#: learners' keys and reads them (``%R~emq:*``: read access only, on emq-lab's keys only). No
#: command that writes, no script (``-@scripting``), nothing ``@dangerous`` (``KEYS``, ``DEBUG``),
#: ``INFO`` for the server's load and kind.
OBSERVER_RULES: tuple[str, ...] = (
    keys.observer_pattern(), "resetchannels", "-@all", "+@read", "-@dangerous", "-@scripting",
    "+ping", "+hello", "+client|setinfo", "+acl|users", "+acl|whoami", "+info",
    "+cluster|slots", "+cluster|shards", "+cluster|nodes", "+command", "+readonly", "+asking",
)  # fmt: skip

#: The two commands that close an open default user (in valkey.conf, ``user`` stands for ``ACL SETUSER``).
DEFAULT_FIX = ("ACL SETUSER admin on >CHOOSE-A-PASSWORD ~* &* +@all", "ACL SETUSER default off")


def load_scripts(client: Any) -> list[str]:
    """The shas of every stock script, loaded after SCRIPT FLUSH on every node (a learner may EVALSHA
    anything in the cache, so an admin's old EVAL would stay callable); run after every restart."""
    scripts = Scripts.load(client)  # registers locally: the texts a Lab's EVALSHA names
    texts = [getattr(scripts, field.name).script for field in fields(scripts)]
    on_every_node(client, "SCRIPT", "FLUSH")
    return [str(client.script_load(text)) for text in texts]


@dataclass(frozen=True)
class Learner:
    """One ACL user and its password: a learner's (its name is also its namespace) or the observer's."""

    name: str
    password: str

    @property
    def namespace(self) -> str:
        return self.name

    def url(self, server_url: str) -> str:
        """``server_url``'s scheme, host, port and database with this user and password, nothing else of it."""
        parts = urlsplit(server_url)
        host = parts.hostname or "127.0.0.1"
        where = f"[{host}]" if ":" in host else host
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{quote(self.name, safe='')}:{quote(self.password, safe='')}@{where}{port}"
        db = parts.path.strip("/") or dict(parse_qsl(parts.query)).get("db", "")
        path = "" if parts.scheme.lower().endswith("+cluster") else f"/{db or 0}"
        return urlunsplit((parts.scheme, netloc, path, "", ""))

    def env(self, server_url: str) -> str:
        """One shell line that sets this learner's two variables."""
        return f"export EMQ_LAB_URL={shlex.quote(self.url(server_url))} EMQ_LAB_NAMESPACE={shlex.quote(self.namespace)}"


def learner_names(prefix: str, learners: int) -> list[str]:
    """``prefix01`` ... (zero-padded to the width of ``learners``, at least two digits)."""
    validate.integer(learners, "learners", 1, MAX_LEARNERS)
    width = max(2, len(str(learners)))
    names = [f"{prefix}{i:0{width}d}" for i in range(1, learners + 1)]
    for name in names:
        validate.namespace(name)  # the prefix must leave names a namespace may have
    return names


def acl_rules(namespace: str, password: str) -> list[str]:
    """A learner's ``ACL SETUSER`` rules: one password, its namespace's keys, no channels, :data:`ALLOWED_COMMANDS`."""
    pattern = keys.namespace_pattern(validate.namespace(namespace))
    commands = [f"+{command}" for command in ALLOWED_COMMANDS]
    return ["reset", "on", f">{password}", f"~{pattern}", "resetchannels", "-@all", *commands]


def on_every_node(client: Any, *args: Any) -> Any:
    """The reply of a command run on every node of a cluster (users are per node), else on the server."""
    if isinstance(client, RedisCluster):
        return client.execute_command(*args, target_nodes=RedisCluster.ALL_NODES)
    return client.execute_command(*args)


def primaries(client: Any) -> list[Any]:
    """A plain client per primary of a cluster (connections and settings are per node), else the client."""
    if isinstance(client, RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


def has_user(node: Any, user: str) -> bool:
    """Whether ``node`` has the ACL user ``user``."""
    return node.execute_command("ACL", "GETUSER", user) is not None


def _replies(client: Any, *args: Any) -> list[Any]:
    """The reply of each node (one, off a cluster) to a command run on every node."""
    replies = on_every_node(client, *args)
    return list(replies.values()) if isinstance(client, RedisCluster) and isinstance(replies, dict) else [replies]


def default_user(client: Any) -> list[str]:
    """The default user's flags on each node (``on``, ``nopass``, ``allkeys``, ...), merged."""
    flags: set[str] = set()
    for reply in _replies(client, "ACL", "GETUSER", "default"):
        if isinstance(reply, list):  # RESP2: a flat list of field, value
            reply = dict(zip(reply[::2], reply[1::2], strict=False))
        flags.update(str(flag) for flag in (reply or {}).get("flags", []))
    return sorted(flags)


def acl_list(client: Any) -> list[list[str]]:
    """``ACL LIST`` of every node, each user's rule as its words: ``user <name> on nopass ~* ...``."""
    return [str(line).split() for lines in _replies(client, "ACL", "LIST") for line in lines]


def _users_with(client: Any, rules: set[str]) -> list[str]:
    """Every user whose ``ACL LIST`` rule holds all of ``rules``."""
    return sorted({w[1] for w in acl_list(client) if len(w) > 2 and w[0] == "user" and rules <= set(w[2:])})


def open_users(client: Any) -> list[str]:
    """Every user that is on and needs no password: anyone who connects may be it (``AUTH <user> x``)."""
    return _users_with(client, {"on", "nopass"})


def all_powerful_users(client: Any) -> list[str]:
    """Every admin: on, with every key and every command (``~*`` and ``+@all``)."""
    return _users_with(client, {"on", "~*", "+@all"})


def acl_users(client: Any) -> list[str]:
    """Every ACL user of the server (of every node, on a cluster)."""
    users = client.execute_command("ACL", "USERS")
    if isinstance(users, dict):  # a cluster client answers per node
        users = sorted({user for per_node in users.values() for user in per_node})
    return [str(user) for user in users]


def learner_test(prefix: str) -> Callable[[str], bool]:
    """Whether an ACL user is a learner's: named ``prefix...`` (none when ``prefix`` is empty)."""
    return lambda user: bool(prefix) and user.startswith(prefix)


def user_fix(user: str) -> str:
    """The command that closes an open user other than the default."""
    return (
        f"ACL SETUSER {user} off (or ACL DELUSER {user}, or give it a password: ACL SETUSER {user} resetpass >PASSWORD)"
    )


def refuse_open_default(client: Any) -> None:
    """Raise ValueError, with the fix, when the default or any other user lets anyone in without a password."""
    others = [user for user in open_users(client) if user != "default"]
    if others:
        fixes = "\n".join(f"  {user_fix(user)}" for user in others)
        raise ValueError(
            f"server: the user(s) {', '.join(others)} are on with no password: anyone who connects may "
            f"log in as them, so the learners' ACL users would protect nothing. Run, as an admin:\n{fixes}\n"
            "then run users again"
        )
    flags = default_user(client)
    if "on" in flags and "nopass" in flags:
        conf = [line.replace("ACL SETUSER", "user") for line in DEFAULT_FIX]
        raise ValueError(
            "server: its default user is on with no password: anyone who connects (or sends AUTH default "
            "<anything>) has its permissions, so the learners' ACL users would protect nothing. Run, as an admin:\n"
            f"  {DEFAULT_FIX[0]}\n  {DEFAULT_FIX[1]}\n(in valkey.conf: '{conf[0]}' and '{conf[1]}'), then run users "
            "again with --url redis://admin:PASSWORD@host:port/0"
        )


def _made(client: Any, name: str, rules: Callable[[str], list[str]], check: bool) -> Learner:
    """The ACL user ``name``, made or rotated with a fresh random password (``check``: refused on an open server)."""
    validate.namespace(name)  # a learner's, or the same safe characters
    if check:
        refuse_open_default(client)
    account = Learner(name, secrets.token_urlsafe(18))
    on_every_node(client, "ACL", "SETUSER", name, *rules(account.password))
    return account


def make_learner(client: Any, name: str, *, check: bool = True) -> Learner:
    """One learner's ACL user ``name`` (also its namespace), made or rotated: what a hub does at each spawn."""
    return _made(client, name, lambda password: acl_rules(name, password), check)


def make_observer(client: Any, name: str = "observer", *, check: bool = True) -> Learner:
    """The instructor's read-only observer ``name`` (:data:`OBSERVER_RULES`)."""
    return _made(client, name, lambda password: ["reset", "on", f">{password}", *OBSERVER_RULES], check)


def create_users(client: Any, *, learners: int, prefix: str = "learner", check: bool = True) -> list[Learner]:
    """One ACL user per learner, ``<prefix>01`` ..., each with a fresh random password (again: rotated)."""
    names = learner_names(prefix, learners)
    if check:
        refuse_open_default(client)
    return [make_learner(client, name, check=False) for name in names]


def existing_users(client: Any, *, prefix: str = "learner") -> list[str]:
    """The server's ACL users named ``<prefix><digits>`` (what :func:`create_users` made)."""
    named = re.compile(re.escape(validate.namespace(prefix)) + r"\d+")
    return sorted(user for user in acl_users(client) if named.fullmatch(user))


def revoke_users(client: Any, *, prefix: str = "learner") -> list[str]:
    """The learners' ACL users, deleted (their connections closed, their keys kept)."""
    users = existing_users(client, prefix=prefix)
    if users:
        on_every_node(client, "ACL", "DELUSER", *users)
    return users


def revoke_learner(client: Any, name: str) -> bool:
    """Whether one learner's ACL user existed; deleted (its connections closed, its keys kept)."""
    if validate.namespace(name) not in acl_users(client):
        return False
    on_every_node(client, "ACL", "DELUSER", name)
    return True
