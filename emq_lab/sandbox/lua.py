"""A private fakeredis server whose scripts run through ``runner.lua``: in an environment of
their own (Valkey's globals and no more), under a line hook they cannot reach, in a Lua state
of bounded memory from which no Python object can be reached. The worker process serves one
(CPython); the browser runs one in-process."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import resources
from typing import Any

from . import libs

#: Seconds a script may run before the hook stops it (on the clock ``server``'s ``tick`` answers: CPU time).
LIMIT_S = 1.0
#: Bytes of Lua memory a script may hold before the hook stops it; lupa's allocator refuses any
#: allocation past twice that (fengari has no such bound).
MEMORY_BYTES = 64 << 20
_CLEANUP = "collectgarbage()"  # the chunk fakeredis runs after each script: not a learner's


def _no_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    """lupa's attribute filter: Lua reads and writes no attribute of any Python object."""
    raise AttributeError("no Python attribute is reachable from Lua")


class _Limited:
    """The Lua module fakeredis uses, its runtimes without ``python``, attributes, or unbounded memory."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def LuaRuntime(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - lupa's name
        kwargs.update(
            max_memory=2 * MEMORY_BYTES, register_eval=False, register_builtins=False, attribute_filter=_no_attributes
        )
        return self._module.LuaRuntime(*args, **kwargs)


class _Sandboxed:
    """A fakeredis server's Lua runtime whose ``execute`` of a script goes through the runner."""

    def __init__(self, runtime: Any, run: Any, error: type[Exception]) -> None:
        self._runtime = runtime
        self._run = run
        self._error = error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    def execute(self, code: Any, *args: Any) -> Any:
        if code in (_CLEANUP, _CLEANUP.encode()) or args:
            return self._runtime.execute(code, *args)
        try:
            return self._run(code)
        except self._error as error:  # Valkey 9's text, not fakeredis's "Error running script (call to f_...)"
            from fakeredis._helpers import SimpleError

            text = _describe(error).decode("utf-8", "replace").split("\nstack traceback:", 1)[0]
            raise SimpleError(text) from None


def _describe(error: Any) -> bytes:
    """The text of an error a Python function (a fakeredis command) raised into Lua."""
    inner = getattr(error, "error", error)  # fengari's shim hands over a wrapper
    return str(getattr(inner, "value", None) or inner).encode()


def _command_kind(name: bytes) -> bytes | None:
    """``b"write"`` or ``b"read"`` for a command (lower case) fakeredis knows, None for one it does not."""
    from fakeredis.model import get_command_info, is_write_command

    if not isinstance(name, bytes) or get_command_info(name) is None:
        return None
    return b"write" if is_write_command(name) else b"read"


@functools.cache
def _runner() -> str:
    """runner.lua's text, read once (before the worker is confined: then it may reach no file)."""
    return resources.files(__package__).joinpath("runner.lua").read_text(encoding="utf-8")


def server(tick: Callable[[int], float] | None = None, check_s: float | None = None) -> Any:
    """A new FakeServer whose scripts run sandboxed; ``tick(line)`` answers the limits' clock (None: os.clock)."""
    import fakeredis
    from fakeredis.commands_mixins import scripting_mixin

    if not isinstance(scripting_mixin.LUA_MODULE, _Limited):
        scripting_mixin.LUA_MODULE = _Limited(scripting_mixin.LUA_MODULE)  # type: ignore[assignment]
    fake = fakeredis.FakeServer()
    with fakeredis.FakeRedis(server=fake, protocol=2) as client:
        client.eval("return 1", 0)  # fakeredis makes the server's Lua state on its first script
    runtime = fake._lua_runtime  # type: ignore[attr-defined]
    module = scripting_mixin.LUA_MODULE
    codec = libs.Json(module, runtime)
    limits = (LIMIT_S, MEMORY_BYTES // 1024, _describe, check_s)
    bit = runtime.table_from({name.encode(): fn for name, fn in libs.bit_library().items()})
    valkey = (codec.encode, codec.decode, libs.sha1hex, bit, _command_kind)
    run, codec.null = runtime.execute(_runner(), tick, *limits, *valkey)
    fake._lua_runtime = _Sandboxed(runtime, run, module.LuaError)  # type: ignore[attr-defined]
    return fake


def client(fake: Any, **options: Any) -> Any:
    """A fakeredis client of the server ``fake`` that runs only the allowlist's commands (:mod:`.allow`)."""
    import fakeredis

    from .allow import connection_class

    return fakeredis.FakeRedis(server=fake, protocol=2, connection_class=connection_class(), **options)
