// Entry point of emq_lab/_browser/fengari.js: fengari (a Lua 5.3 VM in plain JS) plus the few
// helpers the Python side (emq_lab/_browser/lupa.py) needs. Each helper does in one call what would
// take Python several calls through pyodide.ffi, each of which costs far more than the work.
// Rebuild with lite/build-fengari.sh; the result is vendored so the wheel needs no npm.
import { lua, lauxlib, lualib, to_luastring, FENGARI_VERSION } from "fengari";

// A Python callback as a Lua C function. The callback returns how many results it pushed, or -1
// after pushing an error value: lua_error throws a JS exception, which must start here, in JS,
// and not pass through Python on its way to the Lua VM that catches it.
function pyfunction(callback) {
  return function (L) {
    const count = callback(L);
    if (count < 0) {
      return lua.lua_error(L);
    }
    return count;
  };
}

// Bytes travel as "binary" JS strings, one char per byte (Python: str.encode("latin-1")).
function binary(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  }
  return text;
}

function pushbinary(L, text) {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    bytes[i] = text.charCodeAt(i);
  }
  lua.lua_pushlstring(L, bytes, bytes.length);
}

const TYPE_NAMES = {
  [lua.LUA_TTABLE]: "table",
  [lua.LUA_TFUNCTION]: "function",
  [lua.LUA_TTHREAD]: "thread",
  [lua.LUA_TUSERDATA]: "userdata",
};

// One Lua value as a tagged string that Python reads with one call:
// "-" nil, "t"/"f" boolean, "i<n>" integer, "d<n>" float, "s<binary>" string, "l<id>" light
// userdata, "r<ref> <type>" anything else, which is kept in the registry under <ref>.
function describe(L, index) {
  const kind = lua.lua_type(L, index);
  switch (kind) {
    case lua.LUA_TNIL:
    case lua.LUA_TNONE:
      return "-";
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, index) ? "t" : "f";
    case lua.LUA_TNUMBER: {
      if (lua.lua_isinteger(L, index)) {
        return "i" + lua.lua_tointeger(L, index);
      }
      const x = lua.lua_tonumber(L, index);
      return "d" + (Object.is(x, -0) ? "-0" : String(x));
    }
    case lua.LUA_TSTRING:
      return "s" + binary(lua.lua_tolstring(L, index));
    case lua.LUA_TLIGHTUSERDATA:
      return "l" + lua.lua_touserdata(L, index);
    default:
      lua.lua_pushvalue(L, index);
      return "r" + lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX) + " " + (TYPE_NAMES[kind] || "userdata");
  }
}

// The values from `first` (an index, or negative: from the top) to the top of the stack,
// described; the stack is then cut to `keep` (settop's meaning).
function take(L, first, keep) {
  const found = [];
  const top = lua.lua_gettop(L);
  for (let i = first < 0 ? top + 1 + first : first; i <= top; i++) {
    found.push(describe(L, i));
  }
  lua.lua_settop(L, keep);
  return found;
}

// The table held under registry `ref`: its keys (and values, when asked), described, in next() order.
function entries(L, ref, values) {
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
  const table = lua.lua_gettop(L);
  const found = [];
  lua.lua_pushnil(L);
  while (lua.lua_next(L, table)) {
    found.push(describe(L, -2));
    if (values) {
      found.push(describe(L, -1));
    }
    lua.lua_settop(L, -2);
  }
  lua.lua_settop(L, table - 1);
  return found;
}

// t[key] for the table under registry `ref`, with the key already pushed; described.
function index(L, ref) {
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
  lua.lua_insert(L, -2);
  lua.lua_gettable(L, -2);
  const value = describe(L, -1);
  lua.lua_settop(L, -3);
  return value;
}

// A new table from values given as describe() strings (no "r"/"l"), as items 1..n; left on the stack.
function pusharray(L, items) {
  lua.lua_createtable(L, items.length, 0);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const tag = item[0];
    if (tag === "s") {
      pushbinary(L, item.slice(1));
    } else if (tag === "i") {
      lua.lua_pushinteger(L, Number(item.slice(1)));
    } else if (tag === "d") {
      lua.lua_pushnumber(L, Number(item.slice(1)));
    } else if (tag === "t" || tag === "f") {
      lua.lua_pushboolean(L, tag === "t");
    } else {
      lua.lua_pushnil(L);
    }
    lua.lua_rawseti(L, -2, i + 1);
  }
}

// The global table's key set changes by an assignment to an absent key (seen by __newindex
// below) or by a key set to nil (seen by the count): the two together stamp the key set, so
// Python can keep the keys it last read while the stamp holds. fakeredis reads them on every
// redis.call, and reading them through pyodide.ffi costs more than the call itself.
let added = 0;

function guardglobals(L) {
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, lua.LUA_RIDX_GLOBALS);
  lua.lua_createtable(L, 0, 1);
  lua.lua_pushjsfunction(L, function (L) {
    lua.lua_rawset(L, 1);
    added += 1;
    return 0;
  });
  lua.lua_setfield(L, -2, to_luastring("__newindex"));
  lua.lua_setmetatable(L, -2);
  lua.lua_settop(L, -2);
}

function globalsstamp(L) {
  lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, lua.LUA_RIDX_GLOBALS);
  const table = lua.lua_gettop(L);
  let count = 0;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, table)) {
    count += 1;
    lua.lua_settop(L, -2);
  }
  lua.lua_settop(L, table - 1);
  return added + ":" + count;
}

globalThis.emqFengari = {
  lua, lauxlib, lualib, to_luastring, pyfunction, pushbinary, describe, take, entries, index, pusharray,
  guardglobals, globalsstamp, version: FENGARI_VERSION,
};
