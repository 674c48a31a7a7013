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
-- ...[4] describe   describe(error): the text of an error raised by a Python function (nil: tostring)
--
-- Lua 5.1 (lupa) gives a chunk its globals with setfenv, Lua 5.3 (fengari, in the browser) with
-- load's env argument: compile() does either.
--
-- Returns run(source): compiles `source` as user_script, runs it with KEYS and ARGV, returns its
-- reply; errors as Valkey words them (user_script:<line>: <message>), and when a limit stops the
-- script, user_script:<line>: emq-lab stop / emq-lab memory.

local tick, limit_s, memory_kb, describe = ...
local os = os
local G = _G
local sethook, getinfo = debug.sethook, debug.getinfo
local loadstring, load, setfenv, setmetatable, pcall, error = loadstring, load, setfenv, setmetatable, pcall, error
local tostring, type, unpack, select, rawset = tostring, type, unpack, select, rawset
local byte, concat = string.byte, table.concat
local create, resume = coroutine.create, coroutine.resume
local collect = collectgarbage
local clock = os.clock
tick = tick or function()
  return clock()
end
describe = describe or tostring

local OURS = debug.getinfo(1, 'S').source
local line, deadline, stopping = 0, math.huge, false
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
    if tick(line) >= deadline then
      stopping = 'emq-lab stop'
    elseif collect('count') > memory_kb then
      stopping = 'emq-lab memory'
    else
      return
    end
  end
  error('user_script:' .. line .. ': ' .. stopping, 0)
end

-- A coroutine gets the hook too (Lua 5.1 does not hand a Lua hook on to a new coroutine).
local function hooked(co)
  sethook(co, hook, 'l')
  return co
end

local sandboxed_coroutine = {}
for name, fn in pairs(coroutine) do
  sandboxed_coroutine[name] = fn
end
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

-- redis.call names the learner's line in its error, as Valkey does.
local real_call = G.redis.call
local sandboxed_redis = {}
for name, value in pairs(G.redis) do
  sandboxed_redis[name] = value
end
sandboxed_redis.call = function(...)
  local ok, result = pcall(real_call, ...)
  if ok then
    return result
  end
  error('user_script:' .. line .. ': ' .. (type(result) == 'string' and result or describe(result)), 0)
end

-- What a script sees: Valkey 9's globals, no more (no debug, io, os beyond os.clock, package,
-- require, loadfile, dofile, getfenv/setfenv, newproxy, python).
local SAFE = {
  'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'rawequal', 'rawget', 'rawset', 'select',
  'tonumber', 'tostring', 'type', 'unpack', 'xpcall', 'getmetatable', 'setmetatable', 'gcinfo',
  'collectgarbage', '_VERSION', 'string', 'table', 'math', 'cjson', 'bit', 'struct', 'cmsgpack',
}
local safe = {}
for _, name in ipairs(SAFE) do
  safe[name] = G[name]
end
safe.os = { clock = os.clock }
safe.coroutine = sandboxed_coroutine
safe.loadstring = sandboxed_loadstring
safe.load = sandboxed_load
safe.redis = sandboxed_redis
if G.server ~= nil then
  safe.server = sandboxed_redis
end

local globals = {
  __index = function(_, name)
    local value = safe[name]
    if value == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
    end
    return value
  end,
  __newindex = function()
    error('Attempt to modify a readonly table', 2)
  end,
  __metatable = false,
}

return function(source)
  local env = setmetatable({ KEYS = G.KEYS, ARGV = G.ARGV }, globals)
  rawset(env, '_G', env)
  local fn, message = compile(text_only(source), '@user_script', env)
  if not fn then
    error('Error compiling script (new function): ' .. message, 0)
  end
  current = env
  line, stopping, deadline = 0, false, tick(0) + limit_s
  sethook(hook, 'l')
  local ok, result = pcall(fn)
  sethook()
  if ok then
    return result
  end
  if result == 'not enough memory' then
    collect()
    error('user_script:' .. line .. ': emq-lab memory', 0)
  end
  error(result, 0)
end
