"""A private fakeredis server whose scripts run through ``runner.lua``: in an environment of
their own (Valkey's globals and no more), under a line hook they cannot reach, in a Lua state
of bounded memory. The worker process serves one (CPython); the browser runs one in-process."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

#: Seconds a script may run before the hook stops it.
LIMIT_S = 1.0
#: Bytes of Lua memory a script may hold before the hook stops it; lupa's allocator refuses any
#: allocation past twice that (fengari has no such bound).
MEMORY_BYTES = 64 << 20
_CLEANUP = "collectgarbage()"  # the chunk fakeredis runs after each script: not a learner's


class _Limited:
    """The Lua module fakeredis uses, with every LuaRuntime made without ``python`` and with a
    memory bound."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def LuaRuntime(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - lupa's name
        kwargs.update(max_memory=2 * MEMORY_BYTES, register_eval=False, register_builtins=False)
        return self._module.LuaRuntime(*args, **kwargs)


class _Sandboxed:
    """A fakeredis server's Lua runtime whose ``execute`` of a script goes through the runner."""

    def __init__(self, runtime: Any, run: Any) -> None:
        self._runtime = runtime
        self._run = run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    def execute(self, code: Any, *args: Any) -> Any:
        if code in (_CLEANUP, _CLEANUP.encode()) or args:
            return self._runtime.execute(code, *args)
        return self._run(code)


def _describe(error: Any) -> bytes:
    """The text of an error a Python function (a fakeredis command) raised into Lua."""
    inner = getattr(error, "error", error)  # fengari's shim hands over a wrapper
    return str(getattr(inner, "value", None) or inner).encode()


def server(tick: Callable[[int], float] | None = None) -> Any:
    """A new FakeServer whose scripts run sandboxed; ``tick(line)`` hears the line a script is on
    (at every line it runs) and answers the wall clock in seconds (None: Lua's os.clock)."""
    import fakeredis
    from fakeredis.commands_mixins import scripting_mixin

    if not isinstance(scripting_mixin.LUA_MODULE, _Limited):
        scripting_mixin.LUA_MODULE = _Limited(scripting_mixin.LUA_MODULE)  # type: ignore[assignment]
    fake = fakeredis.FakeServer()
    client = fakeredis.FakeRedis(server=fake, protocol=2)
    try:
        client.eval("return 1", 0)  # fakeredis makes the server's Lua state on its first script
    finally:
        client.close()
    runtime = fake._lua_runtime  # type: ignore[attr-defined]
    text = resources.files(__package__).joinpath("runner.lua").read_text(encoding="utf-8")
    run = runtime.execute(text, tick, LIMIT_S, MEMORY_BYTES // 1024, _describe)
    fake._lua_runtime = _Sandboxed(runtime, run)  # type: ignore[attr-defined]
    return fake
