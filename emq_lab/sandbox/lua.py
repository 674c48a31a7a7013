"""A private fakeredis server whose scripts run through ``runner.lua``: in an environment of
their own (Valkey's globals and no more), under a line hook they cannot reach, in a Lua state
of bounded memory from which no Python object can be reached. The worker process serves one
(CPython); the browser runs one in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

#: Seconds a script may run before the hook stops it.
LIMIT_S = 1.0
#: Bytes of Lua memory a script may hold before the hook stops it; lupa's allocator refuses any
#: allocation past twice that (fengari has no such bound).
MEMORY_BYTES = 64 << 20
_CLEANUP = "collectgarbage()"  # the chunk fakeredis runs after each script: not a learner's


def _no_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    """lupa's attribute filter: Lua reads and writes no attribute of any Python object."""
    raise AttributeError("no Python attribute is reachable from Lua")


class _Limited:
    """The Lua module fakeredis uses, with every LuaRuntime made without ``python``, without
    access to any Python object's attributes, and with a memory bound."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def LuaRuntime(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - lupa's name
        kwargs.update(
            max_memory=2 * MEMORY_BYTES,
            register_eval=False,
            register_builtins=False,
            attribute_filter=_no_attributes,
        )
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


class _Json:
    """cjson.encode and cjson.decode for the runner: Lua values in, Lua values out, cjson.null as
    the runner's own null, errors worded as Valkey's cjson words them."""

    def __init__(self, module: Any, runtime: Any) -> None:
        self._module, self._runtime = module, runtime
        self.null: Any = None  # the runner's cjson.null, once the runner is loaded

    def encode(self, value: Any) -> bytes:
        try:
            return json.dumps(self._python(value), separators=(",", ":")).encode()
        except RecursionError:
            raise ValueError("Cannot serialise, excessive nesting (1001)") from None

    def _python(self, value: Any) -> Any:
        kind = self._module.lua_type(value)
        if value is self.null or kind == "userdata":
            return None
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        if kind in ("function", "thread"):
            raise ValueError(f"Cannot serialise {kind}: type not supported")
        if kind != "table":
            return value
        items = list(value.items())
        if all(isinstance(key, int) for key, _ in items) and sorted(k for k, _ in items) == list(
            range(1, len(items) + 1)
        ):
            return [self._python(item) for _, item in sorted(items, key=lambda pair: pair[0])]
        return {str(self._python(key)): self._python(item) for key, item in items}

    def decode(self, text: Any) -> Any:
        if not isinstance(text, bytes):
            raise ValueError("bad argument #1 to 'decode' (string expected)")
        try:
            return self._lua(json.loads(text))
        except json.JSONDecodeError as error:
            raise ValueError(f"{error.msg} at character {error.pos + 1}") from None
        except RecursionError:
            raise ValueError("Found too many nested data structures (1001)") from None

    def _lua(self, value: Any) -> Any:
        if value is None:
            return self.null
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, list):
            return self._runtime.table_from([self._lua(item) for item in value])
        if isinstance(value, dict):
            return self._runtime.table_from({self._lua(key): self._lua(item) for key, item in value.items()})
        return value


def server(tick: Callable[[int], float] | None = None, check_s: float | None = None) -> Any:
    """A new FakeServer whose scripts run sandboxed; ``tick(line)`` hears the line a script is on
    (at every line it runs) and answers the wall clock in seconds (None: Lua's os.clock). With
    ``check_s``, every script from now on stops ``check_s`` seconds from now (one check's time)."""
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
    codec = _Json(scripting_mixin.LUA_MODULE, runtime)
    limits = (LIMIT_S, MEMORY_BYTES // 1024, _describe, check_s)
    run, codec.null = runtime.execute(text, tick, *limits, codec.encode, codec.decode)
    fake._lua_runtime = _Sandboxed(runtime, run)  # type: ignore[attr-defined]
    return fake
