// Entry point of emq_lab/_browser/fengari.js: fengari (a Lua 5.3 VM in plain JS) plus the few
// helpers the Python side (emq_lab/_browser/lupa.py) needs. Each helper does in one call what would
// take Python several calls through pyodide.ffi, each of which costs far more than the work.
// Rebuild with lite/build-fengari.sh; the result is vendored so the wheel needs no npm.
import { lua, lauxlib, lualib, to_luastring, FENGARI_VERSION } from "fengari";
import emqmeter from "fengari/src/emqmeter.js";
import { luaD_throw } from "fengari/src/ldo.js";
import { luaO_pushfstring } from "fengari/src/lobject.js";
import { CIST_LUA, CIST_TAIL } from "fengari/src/lstate.js";

// The work meter. lite/build-fengari.sh patches fengari to take one unit of fuel per VM
// instruction, per table access of the table library (lua_geti/lua_seti) and per step of the
// pattern matcher, and one unit per BYTES_PER_UNIT bytes of every string or buffer it makes
// (charged before a buffer or a concatenation is allocated). It runs in every thread, in a
// message handler, in a hook, in a function handed to load: wherever Lua runs, whatever hook a
// script set or cleared, because it is not a hook. Python arms it around each call into a bounded
// runtime (emq_lab/_browser/lupa.py); once the fuel is out, every instruction stops with
// "user_script:<line>: emq-lab stop" while a frame of the script's own is on the stack (the
// sandbox's runner adds the line when no frame names it). The
// runner's own frames (chunk "<python>") are not the script's: its code after the script ends
// runs on, to report the stop. The error skips every message handler (it is thrown, not raised).
// One unit is about one VM instruction's time; the other costs are in units, measured against it.
const BYTES_PER_UNIT = 16;
emqmeter.CALL = 16; // a call of a JS function (a library function), beyond its instructions
emqmeter.FORMAT = 64; // a number or a value formatted as text (tostring, string.format, ..)
emqmeter.NEWKEY = 8; // a key new to its table (the table grows)
emqmeter.ACCESS = 4; // t[i] read or written by the table library
emqmeter.COPY = 1 / 8; // one copy of string.rep's string (its bytes are charged as bytes)
const PYTHON_CALL = 400; // a call of a Python function (redis.call, ...): tens of µs
const UNLIMITED = 2 ** 52;
const RUNNER = to_luastring("<python>");
let filled = UNLIMITED; // the fuel at the last fill
let before = 0; // the units spent before the last fill
emqmeter.fuel = UNLIMITED;

function spent() {
  return before + filled - emqmeter.fuel;
}

function fill(units) {
  before = spent();
  filled = emqmeter.fuel = units;
}

function ours(proto) {
  const source = proto.source ? proto.source.getstr() : null;
  if (!source || source.length !== RUNNER.length) {
    return false;
  }
  for (let i = 0; i < RUNNER.length; i++) {
    if (source[i] !== RUNNER[i]) {
      return false;
    }
  }
  return true;
}

// The line of the innermost frame of the chunk "@user_script" in thread L (-1: none), and whether
// L runs any frame of the script's own: a Lua function not compiled by Python, or one that was
// tail called (`return load(reader)` leaves no frame of the script's under the runner's load).
function scan(L) {
  let line = -1;
  let script = false;
  for (let ci = L.ci; ci; ci = ci.previous) {
    if (ci.callstatus & CIST_LUA) {
      const proto = ci.func.value.p;
      if (!ours(proto) || ci.callstatus & CIST_TAIL) {
        script = true;
        const source = proto.source ? proto.source.getstr() : null;
        if (line < 0 && source && source.length === 12 && String.fromCharCode.apply(null, source) === "@user_script") {
          line = proto.lineinfo.length ? proto.lineinfo[ci.l_savedpc - 1] : 0;
        }
      }
    }
  }
  return { line, script };
}

emqmeter.out = function (L) {
  const here = scan(L);
  const main = L === L.l_G.mainthread ? here : scan(L.l_G.mainthread);
  if (!here.script && !main.script) {
    return; // the runner (or Python) itself: it carries on
  }
  // Without a frame of "@user_script" (a tail call replaced it), the runner names the line.
  const line = here.line >= 0 ? here.line : main.line;
  const text = line >= 0 ? `user_script:${line}: emq-lab stop` : "emq-lab stop";
  luaO_pushfstring(L, to_luastring("%s"), to_luastring(text));
  luaD_throw(L, lua.LUA_ERRRUN);
};

// Work charged before it is done (stop: true) and refused for want of fuel is not spent: the fuel
// is only marked out.
emqmeter.bytes = function (L, count, stop) {
  emqmeter.steps(L, count / BYTES_PER_UNIT, stop);
};

emqmeter.steps = function (L, count, stop = true) {
  if (stop && emqmeter.fuel < count) {
    emqmeter.fuel = Math.min(emqmeter.fuel, 0) - 1;
    emqmeter.out(L);
  }
  emqmeter.fuel -= count;
};

// For Python (lupa.py): the meter's state in one call each.
const meter = {
  // Allow `units` more from now; returns what was allowed before, for disarm.
  arm(units) {
    const left = emqmeter.fuel;
    fill(units);
    return left;
  },
  // Back to no limit, or to what an outer arm() allowed, less what was spent since.
  disarm(outer) {
    fill(outer === undefined ? UNLIMITED : outer - (filled - emqmeter.fuel));
  },
  // Units spent since this realm started (every Lua state's), and the fuel left now.
  spent,
  left() {
    return emqmeter.fuel;
  },
  // Charge work done outside the VM (by Python); true when the fuel is out.
  charge(units) {
    emqmeter.fuel -= units;
    return emqmeter.fuel < 0;
  },
  // os.clock for a bounded state: the work spent, in seconds of `rate` units each.
  clock(rate) {
    return function (L) {
      lua.lua_pushnumber(L, spent() / rate);
      return 1;
    };
  },
};

// A Python callback as a Lua C function. The callback returns how many results it pushed, or -1
// after pushing an error value: lua_error throws a JS exception, which must start here, in JS,
// and not pass through Python on its way to the Lua VM that catches it.
function pyfunction(callback) {
  return function (L) {
    emqmeter.steps(L, PYTHON_CALL);
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
  guardglobals, globalsstamp, meter, version: FENGARI_VERSION,
};
