"""The commands the sandbox runs: an allowlist, enforced where fakeredis turns a command's name
into the method that runs it (``_name_to_func``), the one place both a client's command and a
script's ``redis.call`` / ``redis.pcall`` pass through.

A script may run :data:`SCRIPT_COMMANDS`: what a scheduler's script of this course could use on
Valkey (strings, hashes, lists, sets, sorted sets, a key's existence, type and TTL, the server's
clock). The clients of the sandbox (the checkers, ``exercises.with_scripts``) may also run
:data:`CLIENT_COMMANDS` (running and loading scripts, transactions, listing a queue's keys).
Anything else, RESTORE and DUMP (fakeredis's emulation unpickles and pickles), the module
commands fakeredis emulates (JSON.*, BF.*, TS.*, ...), the server's administration, blocking
commands, the random picks (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER: a negative count of millions
builds a reply of millions, and a scheduler picks nothing at random), answers :func:`refusal`: an
error naming the command. A name fakeredis does not know
at all answers fakeredis's own "unknown command", as Valkey would.
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
    """True when ``name`` is a command fakeredis or Valkey knows, or a module's (``JSON.SET``): it
    answers :func:`refusal`; any other name answers fakeredis's "unknown command"."""
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
    """True for a client's command that a script calls and Valkey refuses in a script (EVAL, MULTI):
    fakeredis answers it in Valkey's words, before it runs anything."""
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
