"""A lupa-compatible module over fengari, for fakeredis's scripting under Pyodide.

lupa (Lua in CPython) has no Pyodide wheel, and without it fakeredis answers ``EVAL`` with
``unknown command``. fengari is a Lua 5.3 VM written in plain JavaScript; this module drives it
through ``pyodide.ffi`` and offers exactly the part of lupa's API that fakeredis's scripting mixin
touches: ``LuaRuntime`` (``execute``, ``eval``, ``globals``, ``table_from``, ``require``),
``lua_type``, ``LuaError`` and ``allow_lua_module_loading``, and Lua tables and functions seen
from Python (``t[k]``, ``t[k] = v``, ``keys``/``values``/``items``, ``len``, calling).

Differences from lupa on Lua 5.1 that a script can see, and what is done about them:

- fengari's integers are 32 bits: a literal or ``tonumber`` result past 2^31 - 1 is a float, so
  ``'x' .. 315360000000`` reads ``x315360000000.0`` (lupa: ``x315360000000``). Numbers reach Python
  with their value intact either way; write such a limit into a message as a string.
- fengari's ``collectgarbage`` raises "lua_gc not implemented" (fakeredis calls it after every script):
  a no-op stands in; JavaScript's collector reclaims tables.
  Lua 5.1's ``unpack`` and ``loadstring`` are provided as aliases of ``table.unpack`` and ``load``.
- Key order: fengari walks a table in insertion order; here the integer keys ``1..n`` come first
  in order, as Lua's array part does, then the others. JSON objects from ``cjson.encode`` may list
  their keys in another order than lupa's hash order (Redis' cjson makes no promise either).
- A Python exception raised in a callback travels through Lua as an error value and comes out of
  ``execute`` as the same exception, as in lupa; a Lua error becomes ``LuaError`` with the message
  and a stack traceback.
- A runtime made with ``max_memory`` (lupa's bound, which the exercises' sandbox asks for) is a
  *bounded* one. fengari cannot count memory, so it counts work instead: the bundle's meter
  (lite/fengari-entry.js) takes fuel for every VM instruction, library call, string byte, table
  access and pattern step, wherever Lua runs (message handlers, coroutines, functions handed to
  ``load``, hooks), and Python takes some for what it does for a script (:func:`charge`). Each call
  from Python into a bounded runtime gets :data:`BACKSTOP_S` seconds of work; once it is spent, the
  script stops at once with ``user_script:<line>: emq-lab stop`` (the sandbox's own message), and
  so does every later instruction of the script's (a ``pcall`` that swallows the stop meets it
  again). Its ``os.clock`` is that work in seconds (:data:`WORK_RATE` units each), never the wall
  clock: the sandbox's per-script and per-check limits, which read ``os.clock`` in the browser,
  count work too, so a busy machine does not trip them.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import js
from pyodide.code import run_js
from pyodide.ffi import create_proxy, to_js

__all__ = ["LuaError", "LuaRuntime", "WorkLimit", "allow_lua_module_loading", "charge", "lua_type"]

# fengari's lua_Integer range; a Python int outside it goes to Lua as a float.
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_CHUNK_NAME = "<python>"  # the bundle's meter tells the runner's frames from a script's by it
#: Units of work (about one fengari VM instruction each) in one second of a bounded runtime's
#: ``os.clock``: about what fengari under Pyodide in Node ran in one CPU second (of the whole
#: process) of a loop under the sandbox's hook (tests/lite_hostile.py: 20M units took 6-9 s).
WORK_RATE = 3_000_000
#: Seconds of work one call from Python into a bounded runtime may take before the meter stops its
#: script: past the sandbox's own per-script limit (1 s), which its hook enforces where it can.
BACKSTOP_S = 2.0
_ENTRY_UNITS = 50  # a table entry read into Python (decoded through pyodide.ffi), in units
#: What the meter's stop says (the line is added by the runner, as for the sandbox's other stops).
STOP = "emq-lab stop"
_CHUNK_CACHE = 256  # compiled chunks kept, by source

# Installed once per JS realm (the kernel's worker or a Node process), then shared.
_bundle: Any = None


def _fengari() -> Any:
    global _bundle
    if _bundle is None:
        if not hasattr(js, "emqFengari"):
            source = resources.files(__package__).joinpath("fengari.js").read_text(encoding="utf-8")
            run_js(source)
        _bundle = js.emqFengari
    return _bundle


class LuaError(Exception):
    """A Lua error: compile errors and runtime errors, with Lua's message."""


class WorkLimit(LuaError):
    """Work done in Python for a bounded runtime's script (a callback) ran past the meter's fuel."""

    def __init__(self) -> None:
        super().__init__(STOP)


def charge(units: float) -> None:
    """Charge ``units`` of work done in Python for the script that runs now (nothing when no
    bounded runtime runs one); raises :class:`WorkLimit` once its fuel is spent."""
    if _bundle is not None and _bundle.meter.charge(units):
        raise WorkLimit()


class LuaSyntaxError(LuaError):
    """A chunk did not compile."""


@contextlib.contextmanager
def allow_lua_module_loading() -> Iterator[None]:
    """lupa's switch for importing ``lupa.lua5x`` modules; here there is one runtime and nothing to switch."""
    yield


def lua_type(obj: object) -> str | None:
    """``"table"``, ``"function"``, ... for a Lua object, ``None`` for anything else (as lupa)."""
    if isinstance(obj, _LuaObject):
        return obj._type_name
    return None


class _PyError:
    """A Python exception on its way through Lua, from a callback out to ``execute``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class LuaRuntime:
    """One Lua state in fengari, with lupa's constructor options that fakeredis passes."""

    def __init__(
        self,
        encoding: str | None = "UTF-8",
        unpack_returned_tuples: bool = False,
        max_memory: int | None = None,
        **_: Any,
    ) -> None:
        bundle = _fengari()
        self._bounded = max_memory is not None
        self._depth = 0  # calls from Python into this runtime under way
        self._f = bundle
        self._lua = lua = bundle.lua
        self._aux = bundle.lauxlib
        self.encoding = encoding
        self.unpack_returned_tuples = unpack_returned_tuples
        # Every call through pyodide.ffi costs more than the Lua work it asks for: the functions
        # used per value are looked up once, and the bundle's helpers batch what they can.
        self._gettop, self._settop, self._rawgeti = lua.lua_gettop, lua.lua_settop, lua.lua_rawgeti
        self._registry = lua.LUA_REGISTRYINDEX
        self._describe, self._take, self._entries, self._index = (
            bundle.describe,
            bundle.take,
            bundle.entries,
            bundle.index,
        )
        self._pushnil, self._pushboolean = lua.lua_pushnil, lua.lua_pushboolean
        self._pushinteger, self._pushnumber = lua.lua_pushinteger, lua.lua_pushnumber
        self._pushbinary, self._pushlight = bundle.pushbinary, lua.lua_pushlightuserdata
        self._unref = self._aux.luaL_unref
        # Python objects handed to Lua as light userdata: id -> object (identity kept both ways).
        self._objects: dict[int, object] = {}
        self._ids: dict[int, int] = {}
        self._next_id = itertools.count(1)
        self._proxies: list[Any] = []
        self._chunks: dict[bytes, _LuaObject] = {}
        L = self._aux.luaL_newstate()
        self._L = L
        bundle.lualib.luaL_openlibs(L)
        setup = (
            "collectgarbage = function() return 0 end\n"
            "unpack = unpack or table.unpack\n"
            "loadstring = loadstring or load\n"
            "local traceback, type = debug.traceback, type\n"
            "return function(message)\n"
            "  if type(message) == 'string' then return traceback(message, 2) end\n"
            "  return message\n"
            "end\n"
        )
        handler = self._run(setup.encode(), (), handler=False)
        assert isinstance(handler, _LuaFunction)
        self._handler = handler
        if self._bounded:  # os.clock reads the work done, not the wall clock
            lua.lua_getglobal(L, bundle.to_luastring("os"))
            lua.lua_pushjsfunction(L, bundle.meter.clock(WORK_RATE))
            lua.lua_setfield(L, -2, bundle.to_luastring("clock"))
            self._settop(L, -2)
        bundle.guardglobals(L)
        self._rawgeti(L, self._registry, lua.LUA_RIDX_GLOBALS)
        found = self._pop()
        assert isinstance(found, _LuaTable)
        found._is_globals = True
        self._globals = found
        self._globals_keys: tuple[str, list[Any]] | None = None  # (stamp, keys) of the last read

    # -- the part of lupa's LuaRuntime that fakeredis uses ---------------------------------------

    def execute(self, lua_code: str | bytes, *args: Any) -> Any:
        """Compile and run a chunk with ``args`` as ``...``; its results (a tuple for several)."""
        return self._run(self._encode(lua_code), args)

    def eval(self, lua_code: str | bytes, *args: Any) -> Any:
        """The value of a Lua expression."""
        return self._run(b"return " + self._encode(lua_code), args)

    def globals(self) -> _LuaTable:
        return self._globals

    def table_from(self, *args: Any, recursive: bool = False) -> _LuaTable:
        """A new Lua table from sequences (items 1..n) and mappings (their keys), in the order given."""
        state = self._L
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and not recursive:
            items = [_tag(item) for item in args[0]]
            if all(item is not None for item in items):  # plain values: one call builds the table
                self._f.pusharray(state, to_js(items))
                value = self._pop()
                assert isinstance(value, _LuaTable)
                return value
        self._lua.lua_createtable(state, 0, 0)
        rawset = self._lua.lua_rawset
        index = 1
        for source in args:
            if isinstance(source, dict):
                pairs = list(source.items())
            else:
                pairs = []
                for item in source:
                    pairs.append((index, item))
                    index += 1
            for key, value in pairs:
                self._push(key)
                if recursive and isinstance(value, (dict, list, tuple)):
                    self._push(self.table_from(value, recursive=True))
                else:
                    self._push(value)
                rawset(state, -3)
        value = self._pop()
        assert isinstance(value, _LuaTable)
        return value

    def require(self, modulename: str | bytes) -> Any:
        require = self.globals()[b"require"]
        if require is None:
            raise LuaError("require is not available")
        return require(modulename)

    # -- the Lua stack ---------------------------------------------------------------------------

    def _encode(self, text: str | bytes) -> bytes:
        return text if isinstance(text, bytes) else text.encode(self.encoding or "utf-8")

    def _run(self, code: bytes, args: tuple[Any, ...], *, handler: bool = True) -> Any:
        state = self._L
        base = self._gettop(state)
        if handler:
            self._push(self._handler)
        chunk = self._chunks.get(code)
        if chunk is not None:
            self._rawgeti(state, self._registry, chunk._ref)
            return self._call(base, args, handler)
        status = self._aux.luaL_loadbuffer(state, to_js(code), len(code), self._f.to_luastring(_CHUNK_NAME))
        if status != 0:
            message = self._error_text(self._decode(self._take(state, -1, base).to_py()[0]))
            raise LuaSyntaxError(f"error loading code: {message}")
        # fengari compiles in JS, slowly next to a script's run, and fakeredis compiles a script
        # on every EVAL: keep the compiled chunk (its only upvalue is _ENV, as a fresh one's).
        if len(self._chunks) >= _CHUNK_CACHE:
            del self._chunks[next(iter(self._chunks))]
        self._lua.lua_pushvalue(state, -1)
        self._chunks[code] = self._pop()
        return self._call(base, args, handler)

    def _call(self, base: int, args: tuple[Any, ...], handler: bool) -> Any:
        """Call the function on top of the stack (above the message handler, when there is one)."""
        lua, state = self._lua, self._L
        for arg in args:
            self._push(arg)
        meter = self._f.meter if self._bounded and self._depth == 0 else None
        if meter is not None:
            meter.arm(BACKSTOP_S * WORK_RATE)
        self._depth += 1
        try:
            status = lua.lua_pcall(state, len(args), lua.LUA_MULTRET, base + 1 if handler else 0)
        finally:
            self._depth -= 1
            if meter is not None:
                meter.disarm()
        if status != 0:
            error = self._decode(self._take(state, -1, base).to_py()[0])
            if isinstance(error, _PyError):
                raise error.error
            raise LuaError(self._error_text(error))
        results = [self._decode(item) for item in self._take(state, base + (2 if handler else 1), base).to_py()]
        if not results:
            return None
        if len(results) == 1:
            return results[0]
        return tuple(results)

    def _error_text(self, error: Any) -> str:
        if isinstance(error, bytes):
            return error.decode("utf-8", "replace")
        if isinstance(error, str):
            return error
        if isinstance(error, (int, float)):
            return str(error)
        return "error object is not a string"

    def _pop(self) -> Any:
        return self._decode(self._take(self._L, -1, -2).to_py()[0])

    def _push(self, value: Any, state: Any = None) -> None:
        state = self._L if state is None else state
        if value is None:
            self._pushnil(state)
        elif isinstance(value, bool):
            self._pushboolean(state, value)
        elif isinstance(value, int):
            if _INT_MIN <= value <= _INT_MAX:
                self._pushinteger(state, value)
            else:
                self._pushnumber(state, float(value))
        elif isinstance(value, float):
            self._pushnumber(state, value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            self._pushbinary(state, bytes(value).decode("latin-1"))
        elif isinstance(value, str):
            self._pushbinary(state, value.encode(self.encoding or "utf-8").decode("latin-1"))
        elif isinstance(value, _LuaObject):
            if value._runtime is not self:
                raise LuaError("a Lua object from another runtime cannot be passed here")
            self._rawgeti(state, self._registry, value._ref)
        elif callable(value):
            self._push_function(value, state)
        else:
            self._pushlight(state, self._object_id(value))

    def _object_id(self, obj: object) -> int:
        key = id(obj)
        found = self._ids.get(key)
        if found is None or self._objects.get(found) is not obj:
            found = next(self._next_id)
            self._ids[key] = found
            self._objects[found] = obj
        return found

    def _push_function(self, func: Callable[..., Any], into: Any) -> None:
        """Push a Python callable as a Lua function: Lua values in, Python's result (a tuple: several) out."""

        def call(state: Any) -> int:
            try:
                args = [self._decode(item) for item in self._take(state, 1, 0).to_py()]
                result = func(*args)
                if isinstance(result, tuple) and self.unpack_returned_tuples:
                    for item in result:
                        self._push(item, state)
                    return len(result)
                self._push(result, state)
                return 1
            except BaseException as error:  # noqa: BLE001 - every exception goes back to execute()
                self._pushlight(state, self._object_id(_PyError(error)))
                return -1

        proxy = create_proxy(call)
        self._proxies.append(proxy)
        self._lua.lua_pushjsfunction(into, self._f.pyfunction(proxy))

    def _decode(self, tagged: str) -> Any:
        """A value described by the bundle's describe() (see lite/fengari-entry.js), as Python sees it."""
        tag, rest = tagged[0], tagged[1:]
        if tag == "s":
            raw = rest.encode("latin-1")
            return raw if self.encoding is None else raw.decode(self.encoding)
        if tag == "i":
            return int(rest)
        if tag == "d":
            return float(rest)
        if tag == "-":
            return None
        if tag == "t" or tag == "f":
            return tag == "t"
        if tag == "l":
            key = int(rest)
            found = self._objects.get(key)
            if isinstance(found, _PyError):
                del self._objects[key]
            return found
        ref_text, kind = rest.split(" ", 1)
        ref = int(ref_text)
        if kind == "table":
            return _LuaTable(self, ref, kind)
        if kind == "function":
            return _LuaFunction(self, ref, kind)
        return _LuaObject(self, ref, kind)


class _LuaObject:
    """A Lua value held from Python by a registry reference (released when the object goes)."""

    def __init__(self, runtime: LuaRuntime, ref: int, type_name: str) -> None:
        self._runtime = runtime
        self._ref = ref
        self._type_name = type_name

    def __del__(self) -> None:
        runtime = self._runtime
        with contextlib.suppress(Exception):
            runtime._unref(runtime._L, runtime._registry, self._ref)

    def __repr__(self) -> str:
        return f"<Lua {self._type_name}>"

    def __call__(self, *args: Any) -> Any:
        runtime = self._runtime
        base = runtime._gettop(runtime._L)
        runtime._push(runtime._handler)
        runtime._push(self)
        return runtime._call(base, args, True)


class _LuaFunction(_LuaObject):
    pass


class _LuaTable(_LuaObject):
    _is_globals = False

    def __getitem__(self, key: Any) -> Any:
        runtime = self._runtime
        runtime._push(key)
        return runtime._decode(runtime._index(runtime._L, self._ref))

    def __setitem__(self, key: Any, value: Any) -> None:
        runtime = self._runtime
        state = runtime._L
        runtime._push(self)
        runtime._push(key)
        runtime._push(value)
        runtime._lua.lua_settable(state, -3)
        runtime._settop(state, -2)

    def __delitem__(self, key: Any) -> None:
        self[key] = None

    def __len__(self) -> int:
        runtime = self._runtime
        runtime._push(self)
        length = int(runtime._lua.lua_rawlen(runtime._L, -1))
        runtime._settop(runtime._L, -2)
        return length

    def _walk(self, values: bool) -> list[Any]:
        runtime = self._runtime
        found = [runtime._decode(item) for item in runtime._entries(runtime._L, self._ref, values).to_py()]
        if runtime._depth:  # read for a script (cjson.encode, a reply): a table's walk is its work
            charge(len(found) * _ENTRY_UNITS)
        return found

    def keys(self) -> list[Any]:
        runtime = self._runtime
        if self._is_globals:
            stamp = str(runtime._f.globalsstamp(runtime._L))
            cached = runtime._globals_keys
            if cached is not None and cached[0] == stamp:
                return list(cached[1])
        keys = [key for key, _ in _array_first([(key, None) for key in self._walk(False)])]
        if self._is_globals:
            runtime._globals_keys = (stamp, keys)
        return list(keys)

    def items(self) -> list[tuple[Any, Any]]:
        flat = self._walk(True)
        return _array_first(list(zip(flat[0::2], flat[1::2], strict=True)))

    def values(self) -> list[Any]:
        return [value for _, value in self.items()]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())


def _tag(value: Any) -> str | None:
    """A plain value as the bundle's describe() would write it, or None for anything else."""
    if isinstance(value, bytes):
        return "s" + value.decode("latin-1")
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int) and _INT_MIN <= value <= _INT_MAX:
        return f"i{value}"
    if isinstance(value, float) and math.isfinite(value):
        return f"d{value!r}"
    return None


def _array_first(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Lua's array part first, keys 1..n in order, then the other keys as fengari walked them."""
    position = {key: i for i, (key, _) in enumerate(pairs) if type(key) is int}
    border = 0
    while border + 1 in position:
        border += 1
    head = [pairs[position[i]] for i in range(1, border + 1)]
    return head + [pair for pair in pairs if not (type(pair[0]) is int and 1 <= pair[0] <= border)]
