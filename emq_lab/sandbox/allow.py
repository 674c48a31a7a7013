"""The commands the sandbox runs: an allowlist, enforced in fakeredis's ``_name_to_func``, where
both a client's command and a script's ``redis.call`` / ``redis.pcall`` pass.

A script may run :data:`SCRIPT_COMMANDS` (strings, hashes, lists, sets, sorted sets, a key's
existence, type and TTL, the clock); the sandbox's clients also :data:`CLIENT_COMMANDS` (scripts,
transactions, listing keys). Anything else answers :func:`refusal`, naming the command: RESTORE and
DUMP (fakeredis's emulation pickles), the modules fakeredis emulates (JSON.*, BF.*, ...), the
server's administration, blocking commands, the random picks (a negative count of millions builds
a reply of millions). A name fakeredis does not know answers its "unknown command", as Valkey would.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["AUDITED", "CLIENT_COMMANDS", "SCRIPT_COMMANDS", "connection_class", "refusal"]

#: The fakeredis minor release this module was audited against (pyproject pins it; a test checks
#: the internals below are still the ones read then).
AUDITED = "2.41"

#: What a script may call, by family (fakeredis's names: lower case, a subcommand after a space).
SCRIPT_FAMILIES: dict[str, tuple[str, ...]] = {
    "strings": (
        "get", "set", "setnx", "setex", "psetex", "getset", "getdel", "getex", "mget", "mset", "msetnx",
        "append", "strlen", "getrange", "setrange", "substr",
    ),
    "counters": ("incr", "incrby", "incrbyfloat", "decr", "decrby"),
    "hashes": (
        "hget", "hset", "hsetnx", "hmget", "hmset", "hdel", "hexists", "hgetall", "hkeys", "hvals", "hlen",
        "hincrby", "hincrbyfloat", "hstrlen", "hscan",
    ),
    "lists": (
        "lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen", "lrange", "lindex", "lset", "lrem",
        "ltrim", "linsert", "lpos", "lmove", "rpoplpush", "lmpop",
    ),
    "sets": (
        "sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop", "smove",
        "sinter", "sintercard", "sinterstore", "sunion", "sunionstore", "sdiff", "sdiffstore", "sscan",
    ),
    "sorted sets": (
        "zadd", "zrem", "zscore", "zmscore", "zincrby", "zcard", "zcount", "zlexcount", "zrank", "zrevrank",
        "zrange", "zrangestore", "zrangebyscore", "zrevrangebyscore", "zrangebylex", "zrevrangebylex",
        "zrevrange", "zremrangebyscore", "zremrangebyrank", "zremrangebylex", "zpopmin", "zpopmax", "zmpop",
        "zunion", "zunionstore", "zinter", "zinterstore", "zintercard", "zdiff", "zdiffstore",
        "zscan",
    ),
    "keys": (
        "exists", "del", "unlink", "type", "rename", "renamenx", "copy", "expire", "pexpire", "expireat",
        "pexpireat", "expiretime", "pexpiretime", "ttl", "pttl", "persist",
    ),
    "the server": ("time", "ping", "echo"),
}  # fmt: skip
SCRIPT_COMMANDS: frozenset[str] = frozenset(name for names in SCRIPT_FAMILIES.values() for name in names)

#: What the sandbox's clients may send besides (fakeredis refuses the first ones inside a script,
#: as Valkey does; the others are the checkers' and ``with_scripts``' own).
CLIENT_COMMANDS: frozenset[str] = frozenset(
    {
        "eval", "evalsha", "script load", "script exists",  # run the learner's scripts and the course's
        "multi", "exec", "discard", "watch", "unwatch",  # redis-py's pipelines
        "client setinfo",  # redis-py's handshake
        "keys", "scan",  # a checker lists what a script left under its queue's hash tag
    }
)  # fmt: skip


def refusal(name: str) -> str:
    """The error a command off the allowlist answers."""
    shown = name.upper().replace("\r", " ").replace("\n", " ")[:64]
    return (
        f"ERR '{shown}' is not available in the course's sandbox: it runs only the commands a "
        "scheduler's script needs (the README lists them)"
    )


def allowed(name: str, *, in_script: bool) -> bool:
    """True when the sandbox runs ``name`` (fakeredis's spelling) from a script or a client."""
    return name in SCRIPT_COMMANDS or (not in_script and name in CLIENT_COMMANDS)


def _known(name: str) -> bool:
    """True when fakeredis or Valkey knows ``name``, or a module does (``JSON.SET``): refused, not unknown."""
    from fakeredis._commands import COMMANDS_WITH_SUB, SUPPORTED_COMMANDS

    head, known = name.split(" ", 1)[0], (SUPPORTED_COMMANDS, COMMANDS_WITH_SUB, _VALKEY_ONLY)
    return name in SUPPORTED_COMMANDS or "." in head or any(head in names for names in known)


#: Commands of Valkey that fakeredis does not emulate, named rather than called unknown.
_VALKEY_ONLY = frozenset(
    {"migrate", "debug", "object", "module", "config", "shutdown", "slaveof", "replicaof", "monitor", "sync",
     "psync", "failover", "cluster", "info", "memory", "latency", "slowlog", "bgrewriteaof", "lolwut", "wait",
     "waitaof", "touch", "readonly", "readwrite", "asking", "vadd", "vsim", "vrem", "vcard"}
)  # fmt: skip


def _not_from_scripts(name: str, in_script: bool) -> bool:
    """True for a client's command (EVAL, MULTI) a script calls: fakeredis refuses it in Valkey's words."""
    from fakeredis import _msgs
    from fakeredis._commands import SUPPORTED_COMMANDS

    sig = SUPPORTED_COMMANDS.get(name)
    return in_script and name in CLIENT_COMMANDS and sig is not None and _msgs.FLAG_NO_SCRIPT in sig.flags


@functools.cache
def connection_class() -> type:
    """fakeredis's connection class whose socket runs only the allowlist's commands."""
    from fakeredis._clients._sync import FakeRedisConnection
    from fakeredis._helpers import SimpleError
    from fakeredis._socket import FakeSocket

    class AllowlistSocket(FakeSocket):
        """fakeredis's socket; a name off the allowlist never reaches the method that would run it."""

        def _name_to_func(self, cmd_name: str) -> Any:
            in_script = getattr(self, "_script_resp", None) is not None  # set while EVAL runs a script
            if allowed(cmd_name, in_script=in_script) or not _known(cmd_name) or _not_from_scripts(cmd_name, in_script):
                return super()._name_to_func(cmd_name)  # an unknown name: fakeredis's "unknown command"
            raise SimpleError(refusal(cmd_name))

    class AllowlistConnection(FakeRedisConnection):
        def _connect(self) -> Any:
            sock = super()._connect()
            sock.__class__ = AllowlistSocket
            return sock

    return AllowlistConnection
