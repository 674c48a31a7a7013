-- runner: runs a learner's script in an environment of its own, under a hook it cannot reach.
--
-- Loaded once into each sandboxed Lua state (emq_lab/sandbox/lua.py), before any script, with
-- the state's own globals still whole; it keeps what it needs in locals, so nothing a script
-- later does to a global reaches it. Not a server script: it has no KEYS, and it is never EVAL'd.
--
-- ...[1] tick       tick(line): hands the current line to the parent process, returns the wall
--                   clock in seconds (nil: os.clock, as in the browser, where there is no parent)
-- ...[2] limit_s    seconds a script may run before the hook stops it
-- ...[3] memory_kb  KB of Lua memory a script may hold before the hook stops it
-- ...[4] describe   describe(error): the text of an error raised by a Python function
-- ...[5] check_s    seconds every script of one check may take together, from now (nil: no limit)
-- ...[6] encode     cjson.encode, ...[7] decode: cjson.decode (Python functions, see lua.py)
--
-- Lua 5.1 (lupa) gives a chunk its globals with setfenv, Lua 5.3 (fengari, in the browser) with
-- load's env argument: compile() does either.
--
-- Returns run(source), which compiles `source` as user_script, runs it with KEYS and ARGV and
-- returns its reply (plain tables only); errors as Valkey words them (user_script:<line>:
-- <message>), and when a limit stops the script, user_script:<line>: emq-lab stop (its time),
-- emq-lab check (the check's time) or emq-lab memory. Returns cjson.null second.
--
-- No Python object reaches a script: every Python function it can call is wrapped in a Lua
-- function that hands back Lua values only, and a Python error as its text.

local tick, limit_s, memory_kb, describe, check_s, encode, decode = ...
local os = os
local G = _G
local sethook, getinfo, setmeta = debug.sethook, debug.getinfo, debug.setmetatable
local loadstring, load, setfenv, setmetatable, pcall, error = loadstring, load, setfenv, setmetatable, pcall, error
local tostring, type, unpack, select, rawset, rawget, next = tostring, type, unpack, select, rawset, rawget, next
local byte, find, concat = string.byte, string.find, table.concat
local create, resume = coroutine.create, coroutine.resume
local collect = collectgarbage
local clock, huge = os.clock, math.huge
tick = tick or function()
  return clock()
end

local OURS = debug.getinfo(1, 'S').source
local line, deadline, stopping = 0, huge, false
local check_deadline = check_s and tick(0) + check_s or huge
local current -- the environment of the script that runs

local function compile(source, chunkname, env)
  if setfenv then
    local fn, message = loadstring(source, chunkname)
    if fn then
      setfenv(fn, env)
    end
    return fn, message
  end
  return load(source, chunkname, 't', env)
end

local function copy(t)
  local out = {}
  for key, value in next, t do
    out[key] = value
  end
  return out
end

-- The hook, on every new line of Lua (a loop's jump back and a function's start are new
-- lines too) outside this file: note the line when it is the learner's chunk, hand it to the
-- parent, and look at the clock and the memory. Past a limit it errors on every line of learner
-- code (a pcall that swallows one error meets the next at the loop's jump back). Only a line
-- hook: a count hook's events are lost while a line hook's function runs.
local function hook(_, at)
  local source = getinfo(2, 'S').source
  if source == OURS then
    return
  end
  if source == '@user_script' then
    line = at
  end
  if not stopping then
    local now = tick(line)
    if now >= deadline then
      stopping = now >= check_deadline and 'emq-lab check' or 'emq-lab stop'
    elseif collect('count') > memory_kb then
      stopping = 'emq-lab memory'
    else
      return
    end
  end
  error('user_script:' .. line .. ': ' .. stopping, 0)
end

-- A Python function as a Lua function: Lua values in and out, a Python error as its text
-- (run() names the script's line when the error ends the script, as Valkey does).
local function from_python(fn)
  return function(...)
    local ok, result = pcall(fn, ...)
    if ok then
      return result
    end
    error(type(result) == 'string' and result or describe(result), 0)
  end
end

-- A coroutine gets the hook too (Lua 5.1 does not hand a Lua hook on to a new coroutine).
local function hooked(co)
  sethook(co, hook, 'l')
  return co
end

local sandboxed_coroutine = copy(coroutine)
sandboxed_coroutine.create = function(fn)
  return hooked(create(fn))
end
sandboxed_coroutine.wrap = function(fn)
  local co = hooked(create(fn))
  return function(...)
    local results = { resume(co, ...) }
    if not results[1] then
      error(results[2], 0)
    end
    return unpack(results, 2, select('#', unpack(results)))
  end
end

-- Text only, as Valkey: a binary chunk (it starts with ESC) is read as text, and fails as text.
local function text_only(source)
  if type(source) == 'string' and byte(source, 1) == 27 then
    return ' ' .. source
  end
  return source
end

-- A chunk the script loads gets the script's globals (Lua would give it the state's own).
local function named(chunkname, default)
  if chunkname == nil or chunkname == OURS then -- the hook passes over chunks named as this file
    return default
  end
  return chunkname
end

local function sandboxed_loadstring(source, chunkname)
  return compile(text_only(source), named(chunkname, source), current)
end

local function sandboxed_load(reader, chunkname)
  if type(reader) ~= 'function' then
    return sandboxed_loadstring(reader, chunkname)
  end
  local pieces = {}
  while true do
    local piece = reader()
    if piece == nil or piece == '' then
      break
    end
    pieces[#pieces + 1] = piece
  end
  return compile(text_only(concat(pieces)), named(chunkname, '=(load)'), current)
end

-- cjson.null: a userdata of its own that no script can index or change, as Valkey's.
local null = newproxy and newproxy(false) or G.cjson.null
local sandboxed_redis = {}
for name, value in next, G.redis do -- functions (Python's, and two of Lua's) and LOG_* numbers
  sandboxed_redis[name] = type(value) == 'number' and value or from_python(value)
end
local python_call = G.redis.call
sandboxed_redis.pcall = function(...) -- an error as {err = text}, as Valkey's (fakeredis's holds a Python str)
  local ok, result = pcall(python_call, ...)
  if ok then
    return result
  end
  return { err = type(result) == 'string' and result or describe(result) }
end
local sandboxed_cjson = { encode = from_python(encode), decode = from_python(decode), null = null }

-- What a script sees: Valkey's globals, no more (no debug, io, os beyond os.clock, package,
-- require, loadfile, dofile, getfenv/setfenv, newproxy, python). The libraries are copied for
-- each script, so that what one script changes in them ends with it.
local LIBRARIES = {
  string = copy(string),
  table = copy(table),
  math = copy(math),
  os = { clock = clock },
  coroutine = sandboxed_coroutine,
  cjson = sandboxed_cjson,
  redis = sandboxed_redis,
}
local FUNCTIONS = {
  loadstring = sandboxed_loadstring,
  load = sandboxed_load,
}
for _, name in ipairs({
  'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'rawequal', 'rawget', 'rawset', 'select',
  'tonumber', 'tostring', 'type', 'unpack', 'xpcall', 'getmetatable', 'setmetatable', 'gcinfo',
  'collectgarbage', '_VERSION',
}) do
  FUNCTIONS[name] = G[name]
end
-- Valkey has these libraries; fakeredis, which the sandbox runs on, has not.
local MISSING = { bit = true, struct = true, cmsgpack = true }
local server_alias = G.server ~= nil

local function environment()
  local libraries = {}
  for name, library in next, LIBRARIES do
    libraries[name] = copy(library)
  end
  if server_alias then
    libraries.server = libraries.redis
  end
  setmeta('', { __index = libraries.string }) -- the string metatable too: fresh for each script
  local env = { KEYS = G.KEYS, ARGV = G.ARGV }
  env._G = env
  return setmetatable(env, {
    __index = function(_, name)
      local value = libraries[name] or FUNCTIONS[name]
      if value == nil and MISSING[name] then
        error("the sandbox has no '" .. name .. "' library (Valkey has it; fakeredis, which runs the sandbox, has not)", 2)
      elseif value == nil then
        error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
      end
      return value
    end,
    __newindex = function()
      error('Attempt to modify a readonly table', 2)
    end,
    __metatable = false,
  })
end

-- The reply as plain tables, read raw (no metamethod of the script's runs here, outside the
-- hook's reach, nor later, when fakeredis reads the reply): the fields fakeredis reads (ok, err, double, map) and the array part, as
-- Valkey reads them; cjson.null, a function or a coroutine is a nil reply (false), and a number
-- that is not finite is -2^63, as on Valkey.
local DEPTH = 100
local FIELDS = { 'ok', 'err', 'double' }
local function plain(value, depth)
  local kind = type(value)
  if kind ~= 'table' then
    if kind == 'userdata' or kind == 'function' or kind == 'thread' then
      return false
    elseif kind == 'number' and (value ~= value or value == huge or value == -huge) then
      return -2 ^ 63
    end
    return value
  end
  if depth >= DEPTH then
    error('user_script:' .. line .. ': the reply nests tables more than ' .. DEPTH .. ' deep (a table that holds itself?)', 0)
  end
  local out = {}
  for _, field in ipairs(FIELDS) do
    out[field] = plain(rawget(value, field), depth + 1)
  end
  local map = rawget(value, 'map')
  if type(map) == 'table' then
    out.map = {}
    for key, item in next, map do
      out.map[plain(key, depth + 1)] = plain(item, depth + 1)
    end
  end
  local i = 1
  while rawget(value, i) ~= nil do
    out[i] = plain(rawget(value, i), depth + 1)
    i = i + 1
  end
  return out
end

local function run(source)
  local env = environment()
  local fn, message = compile(text_only(source), '@user_script', env)
  if not fn then
    error('Error compiling script (new function): ' .. message, 0)
  end
  current = env
  collect('restart') -- a script's collectgarbage('stop') ends with it
  line, stopping = 0, false
  local now = tick(0)
  deadline = now + limit_s < check_deadline and now + limit_s or check_deadline
  sethook(hook, 'l')
  local ok, result = pcall(fn)
  sethook()
  if ok then
    ok, result = pcall(plain, result, 0) -- raw reads only: nothing of the script's runs in it
  end
  if ok then
    return result
  end
  if result == 'not enough memory' then
    collect()
    error('user_script:' .. line .. ': emq-lab memory', 0)
  end
  if type(result) == 'string' and not find(result, '^user_script:') then
    if find(result, 'stack overflow', 1, true) then
      result = 'stack overflow' -- raised in the hook, and named by its line: the script's line instead
    end
    result = 'user_script:' .. line .. ': ' .. result -- an error without a line, named as Valkey names it
  end
  error(result, 0)
end

return run, null
