-- runner: runs a learner's script in an environment of its own, under a hook it cannot reach.
--
-- Loaded once into each sandboxed Lua state (emq_lab/sandbox/lua.py), before any script, with
-- the state's own globals still whole; it keeps what it needs in locals, so nothing a script
-- later does to a global reaches it. Not a server script: it has no KEYS, and it is never EVAL'd.
--
-- ...[1] tick       tick(line): hands the current line to the parent process, returns the clock
--                   the limits count, in seconds: the worker's CPU time (nil: os.clock, as in the
--                   browser, where there is no parent)
-- ...[2] limit_s    seconds of that clock a script may run before the hook stops it
-- ...[3] memory_kb  KB of Lua memory a script may hold before the hook stops it
-- ...[4] describe   describe(error): the text of an error raised by a Python function
-- ...[5] check_s    seconds every script of one check may take together, from now (nil: no limit)
-- ...[6] encode     cjson.encode, ...[7] decode: cjson.decode (Python functions, see libs.py)
-- ...[8] sha1hex    redis.sha1hex, ...[9] bit_functions: a table of LuaBitOp's functions (libs.py)
-- ...[10] command_kind  command_kind(name): 'write' or 'read' for a command (lower case) fakeredis
--                   knows, nil for one it does not (no-writes scripts, redis.acl_check_cmd)
--
-- Lua 5.1 (lupa) gives a chunk its globals with setfenv, Lua 5.3 (fengari, in the browser) with
-- load's env argument: compile() does either.
--
-- Returns run(source), which compiles `source` as user_script, runs it with KEYS and ARGV and
-- returns its reply (plain tables only); errors as Valkey 9 words them (<message> script: on
-- @user_script:<line>.; a message raised at a line starts user_script:<line>:), and when a limit
-- stops the script, its message is user_script:<line>: emq-lab stop (its time),
-- emq-lab check (the check's time) or emq-lab memory. Returns cjson.null second.
--
-- No Python object reaches a script: every Python function it can call is wrapped in a Lua
-- function that hands back Lua values only, and a Python error as its text.

local tick, limit_s, memory_kb, describe, check_s, encode, decode, sha1hex, bit_functions, command_kind = ...
local os = os
local G = _G
local sethook, getinfo, setmeta = debug.sethook, debug.getinfo, debug.setmetatable
local loadstring, load, setfenv, setmetatable, pcall, error = loadstring, load, setfenv, setmetatable, pcall, error
local tostring, type, unpack, select, rawset, rawget, next = tostring, type, unpack or table.unpack, select, rawset, rawget, next
local byte, find, concat = string.byte, string.find, table.concat
local gsub, gmatch, match, sub, lower = string.gsub, string.gmatch, string.match, string.sub, string.lower
local ipairs, pairs, getmetatable, tonumber, rawequal = ipairs, pairs, getmetatable, tonumber, rawequal
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

local function sandboxed_load(...)
  local reader, chunkname = ...
  if type(reader) ~= 'function' then -- Lua 5.1's load, as Valkey's: a reader function only
    local got = select('#', ...) == 0 and 'no value' or type(reader)
    error("bad argument #1 to 'load' (function expected, got " .. got .. ')', 2)
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

-- Valkey 9's read-only globals: the script's _G, every library table and the strings' metatable
-- are proxies (empty tables over the real ones) that refuse every write with Valkey's text, at
-- the script's line for an assignment (t.x = 1), without a line for rawset, setmetatable and
-- table.insert/remove/sort (C functions on Valkey). next, pairs, rawget and getmetatable see
-- through a proxy as Valkey's see a read-only table. The real tables are never handed out.
-- Weak keys and values: Lua 5.1 keeps an entry whose value refers to its key (a script's _G)
-- forever when only the keys are weak. A proxy holds its table through its metatable, so an
-- entry goes only with its proxy.
local READONLY = setmetatable({}, { __mode = 'kv' }) -- proxy -> the table it shows
local SHOWN_META = {} -- proxy of a library -> what getmetatable answers for it (fixed for the state)
local shown_env_meta -- what getmetatable(_G) answers in the running script
local READONLY_TEXT = 'Attempt to modify a readonly table'

local function refuse()
  error(READONLY_TEXT, 2)
end

local function readonly(real, index)
  local proxy = setmetatable({}, {
    __index = index or real,
    __newindex = refuse,
    __metatable = false,
    __len = function()
      return #real
    end,
    __pairs = function() -- Lua 5.3 (fengari)
      return next, real, nil
    end,
  })
  READONLY[proxy] = real
  return proxy
end

local function seen(t)
  return READONLY[t] or t
end

-- An error raised at the line of the function that called the caller of this one (a wrapper's
-- caller), as luaL_error raises it: when the wrapper was tail-called (`return cjson.encode(f)`),
-- Lua has no line for that caller, and a C function called there would name the script's line.
local function raise_at_caller(message)
  if type(message) == 'string' then
    local caller = getinfo(3, 'S')
    if caller and caller.what == 'tail' then
      error('user_script:' .. line .. ': ' .. message, 0)
    end
  end
  error(message, 3)
end

-- A library function called on behalf of the script: its error names the script's line and the
-- function's own name, as when the script calls the C function directly on Valkey.
local pack = function(...)
  return { n = select('#', ...), ... }
end
local function as_library(name, fn, guard, first)
  return function(...)
    if guard then
      guard(...)
    end
    local results
    if first and select('#', ...) > 0 then
      results = pack(pcall(fn, first((...)), select(2, ...)))
    else
      results = pack(pcall(fn, ...))
    end
    if results[1] then
      return unpack(results, 2, results.n)
    end
    local message = results[2]
    if type(message) == 'string' then
      message = gsub(message, "to '%?'", "to '" .. name .. "'", 1)
    end
    raise_at_caller(message)
  end
end

local function not_readonly(t)
  if READONLY[t] ~= nil then
    error(READONLY_TEXT, 0)
  end
end

local guarded_next = as_library('next', next, nil, seen)
local guarded_rawget = as_library('rawget', rawget, nil, seen)
local guarded_rawset = as_library('rawset', rawset, not_readonly)
local guarded_setmetatable = as_library('setmetatable', setmetatable, not_readonly)
local raw_getmetatable = getmetatable
local raw_guarded_getmetatable = as_library('getmetatable', raw_getmetatable)
local function guarded_getmetatable(...)
  local value = ...
  if select('#', ...) > 0 and rawequal(value, current) then
    return shown_env_meta
  end
  if select('#', ...) > 0 and READONLY[value] ~= nil then
    return SHOWN_META[value]
  end
  if type(value) == 'string' then
    return SHOWN_META['']
  end
  return raw_guarded_getmetatable(...)
end
local function guarded_pairs(...)
  local t = ...
  if READONLY[t] ~= nil then
    return guarded_next, t, nil
  end
  return as_library('pairs', pairs)(...)
end

-- cjson.null: a userdata of its own that no script can index or change, as Valkey's.
local null = newproxy and newproxy(false) or G.cjson.null

-- A Python function as a Lua function: Lua values in and out, a Python error as its text (run()
-- names the script's line when the error ends the script, as Valkey does); with at_caller, raised
-- at the caller's line, as Valkey's C library raises its errors with luaL_error.
local function from_python(fn, at_caller)
  return function(...)
    local ok, result = pcall(fn, ...)
    if ok then
      return result
    end
    result = type(result) == 'string' and result or describe(result)
    if at_caller then
      raise_at_caller(result)
    end
    error(result, 0)
  end
end

-- redis (and its alias server): Valkey 9's API. Commands go to fakeredis; an error from a
-- command is raised as a table {err = text}, as Valkey raises it.
local python_call, python_setresp = G.redis.call, G.redis.setresp
local no_writes = false -- a '#!lua flags=no-writes' script's
local WRITE_REFUSED = 'ERR Write commands are not allowed from read-only scripts.'

-- An error's text as Valkey keeps it for a script: '<CODE> <message>' ('-' dropped, ERR when
-- the text has no code), the message trimmed of CR and LF.
local function with_code(text)
  if sub(text, 1, 1) == '-' then
    text = sub(text, 2)
  end
  local space = find(text, ' ', 1, true)
  if not space then
    return 'ERR ' .. gsub(text, '^[\r\n]*(.-)[\r\n]*$', '%1')
  end
  return sub(text, 1, space) .. gsub(sub(text, space + 1), '^[\r\n]*(.-)[\r\n]*$', '%1')
end

-- fakeredis's words for two errors, and Valkey's.
local VALKEY_WORDS = {
  { '^ERR unknown command ', 'ERR Unknown command called from script' },
  { '^ERR Wrong number of args calling Redis command from script$', 'ERR Wrong number of args calling command from script' },
  { '^ERR Lua redis lib command arguments must be strings or integers$', 'ERR Command arguments must be strings or integers' },
}

local function command(...)
  if select('#', ...) == 0 then
    return false, 'ERR Please specify at least one argument for this call'
  end
  local name = ...
  for i = 1, select('#', ...) do -- Valkey checks every argument before it looks the command up
    local kind = type((select(i, ...)))
    if kind ~= 'string' and kind ~= 'number' then
      return false, 'ERR Command arguments must be strings or integers'
    end
  end
  if type(name) ~= 'string' then -- a number: no command has one for a name
    return false, 'ERR Unknown command called from script'
  end
  if no_writes and type(name) == 'string' and command_kind(lower(name)) == 'write' then
    return false, WRITE_REFUSED
  end
  local ok, result = pcall(python_call, ...)
  if ok then
    return true, result
  end
  result = with_code(type(result) == 'string' and result or describe(result))
  for _, words in ipairs(VALKEY_WORDS) do
    if find(result, words[1]) then
      return false, words[2]
    end
  end
  return false, result
end

local REPL = { REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3 }
local function reply_of(kind)
  return function(...)
    local text = ...
    if select('#', ...) ~= 1 or type(text) ~= 'string' then
      return { err = 'wrong number or type of arguments' }
    end
    return { [kind] = kind == 'err' and with_code(text) or text }
  end
end

local redis_api = {
  call = function(...)
    local ok, result = command(...)
    if ok then
      return result
    end
    error(result, 0)
  end,
  pcall = function(...)
    local ok, result = command(...)
    if ok then
      return result
    end
    return { err = result }
  end,
  log = function(...)
    if select('#', ...) < 2 then
      error('server.log() requires two arguments or more.', 0)
    end
    local level = tonumber((...))
    if not level or level < 0 or level > 3 then
      error('Invalid log level.', 0)
    end -- the sandbox keeps no log
  end,
  setresp = function(...)
    if select('#', ...) ~= 1 then
      error('server.setresp() requires one argument.', 0)
    end
    return from_python(python_setresp)(...)
  end,
  acl_check_cmd = function(...)
    if select('#', ...) == 0 then
      error('ERR Please specify at least one argument for this call', 0)
    end
    local name = ...
    if type(name) ~= 'string' or not command_kind(lower(name)) then
      error('ERR Invalid command passed to server.acl_check_cmd()', 0)
    end
    return true -- the sandbox has no ACL users: its user may run every command it has
  end,
  sha1hex = from_python(sha1hex),
  error_reply = reply_of('err'),
  status_reply = reply_of('ok'),
  replicate_commands = function()
    return true
  end,
  set_repl = function(...)
    if select('#', ...) ~= 1 then
      error('server.set_repl() requires one argument.', 0)
    end
    local flags = tonumber((...)) or 0
    if flags < 0 or flags > 3 then
      error('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.', 0)
    end
  end,
  debug = function() end,
  breakpoint = function()
    return false
  end,
  -- The version Valkey 9 reports (REDIS_VERSION is its fixed Redis-compatibility answer): the
  -- version tests/test_conformance.py compares against.
  REDIS_VERSION = '7.2.4',
  REDIS_VERSION_NUM = 459268,
  SERVER_NAME = 'valkey',
  VALKEY_VERSION = '9.1.2',
  VALKEY_VERSION_NUM = 590082,
}
for name, value in next, G.redis do -- LOG_* numbers
  if type(value) == 'number' then
    redis_api[name] = value
  end
end
for name, value in next, REPL do
  redis_api[name] = value
end

local bit_api = {}
for name, fn in next, bit_functions do
  bit_api[name] = from_python(fn, true)
end

local cjson_api = {
  encode = from_python(encode, true),
  decode = from_python(decode, true),
  null = null,
  _NAME = 'cjson',
  _VERSION = '2.1.0',
}

local table_api = copy(table)
table_api.insert = as_library('insert', table.insert, not_readonly) -- remove and sort write nothing to a library: it has no array part

-- What a script sees: Valkey's globals, no more (no debug, io, os beyond os.clock, package,
-- require, loadfile, dofile, getfenv/setfenv, newproxy, python), all of them read-only.
local redis_proxy = readonly(redis_api)
local LIBRARIES = {
  string = readonly(copy(string)),
  table = readonly(table_api),
  math = readonly(copy(math)),
  os = readonly({ clock = clock }),
  coroutine = readonly(sandboxed_coroutine),
  cjson = readonly(cjson_api),
  bit = readonly(bit_api),
  redis = redis_proxy,
  server = redis_proxy,
}
local FUNCTIONS = {
  loadstring = sandboxed_loadstring,
  load = sandboxed_load,
  next = guarded_next,
  pairs = guarded_pairs,
  rawget = guarded_rawget,
  rawset = guarded_rawset,
  setmetatable = guarded_setmetatable,
  getmetatable = guarded_getmetatable,
}
for _, name in ipairs({
  'assert', 'error', 'ipairs', 'pcall', 'rawequal', 'select', 'tonumber', 'tostring', 'type',
  'unpack', 'xpcall', 'gcinfo', 'collectgarbage', '_VERSION',
}) do
  FUNCTIONS[name] = G[name]
end
-- The strings' metatable: its __index is the script's string library; getmetatable('') shows a
-- read-only view of it.
local string_meta = { __index = LIBRARIES.string }
SHOWN_META[''] = readonly(string_meta)
-- Valkey has these libraries; fakeredis, which the sandbox runs on, has not.
local MISSING = { struct = true, cmsgpack = true }

local function environment()
  local globals = { KEYS = G.KEYS, ARGV = G.ARGV }
  for name, value in next, LIBRARIES do
    globals[name] = value
  end
  for name, value in next, FUNCTIONS do
    globals[name] = value
  end
  local function index(_, name)
    local value = globals[name]
    if value == nil and MISSING[name] then
      error("the sandbox has no '" .. name .. "' library (Valkey has it; fakeredis, which runs the sandbox, has not)", 2)
    elseif value == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
    end
    return value
  end
  local env = readonly(globals, index)
  globals._G = env
  shown_env_meta = readonly({ __index = index })
  setmeta('', string_meta)
  return env
end

-- The reply as plain tables, read raw (no metamethod of the script's runs here, outside the
-- hook's reach, nor later, when fakeredis reads the reply): the fields fakeredis reads (ok and
-- err when they are strings, double, map) and the array part, as Valkey reads them; cjson.null,
-- a function or a coroutine is a nil reply (false), and a number that is not finite, or outside
-- a signed 64-bit integer, is -2^63, as on Valkey.
local DEPTH = 100
local LOWEST, BEYOND = -2 ^ 63, 2 ^ 63
local function plain(value, depth)
  local kind = type(value)
  if kind ~= 'table' then
    if kind == 'userdata' or kind == 'function' or kind == 'thread' then
      return false
    elseif kind == 'number' and not (value >= LOWEST and value < BEYOND) then
      return LOWEST
    end
    return value
  end
  if depth >= DEPTH then
    error('user_script:' .. line .. ': the reply nests tables more than ' .. DEPTH .. ' deep (a table that holds itself?)', 0)
  end
  local out = {}
  for _, field in ipairs({ 'err', 'ok' }) do -- an error first, as Valkey reads them
    local text = rawget(value, field)
    if type(text) == 'string' then
      out[field] = text
      break
    end
  end
  local double = rawget(value, 'double')
  if type(double) == 'number' then
    out.double = double
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

-- A script's first line '#!lua [flags=a,b]', read as Valkey 9 reads it; returns the flags or
-- raises Valkey's error. The line stays (as a comment), so line numbers match.
local FLAGS = { ['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true, ['no-cluster'] = true, ['allow-cross-slot-keys'] = true }
local function shebang(source)
  local first = find(source, '\n', 1, true)
  if not first then
    error('Invalid script shebang', 0)
  end
  local words = {}
  for word in gmatch(sub(source, 1, first - 1), '%S+') do
    words[#words + 1] = word
  end
  local engine = sub(words[1], 3)
  if engine ~= 'lua' and engine ~= '' then
    error("Could not find scripting engine '" .. engine .. "'", 0)
  end
  local flags = {}
  for i = 2, #words do
    local listed = match(words[i], '^flags=(.*)$')
    if not listed then
      error('Unknown lua shebang option: ' .. words[i], 0)
    end
    for flag in gmatch(listed, '[^,]+') do
      if not FLAGS[flag] then
        error('Unexpected flag in script shebang: ' .. flag, 0)
      end
      flags[flag] = true
    end
  end
  return flags, '--' .. source
end

-- An error as Valkey 9's reply words it: the message (an error table's err; 'unknown error' for
-- a table without one), then ' script: on @user_script:<line>.'.
local function worded(result)
  local kind = type(result)
  if kind == 'table' then
    local text = rawget(result, 'err')
    result = type(text) == 'string' and text or 'unknown error'
  end
  return tostring(result) .. ' script: on @user_script:' .. line .. '.'
end

local function run(source)
  local flags = {}
  if sub(source, 1, 2) == '#!' then
    flags, source = shebang(source)
  end
  local env = environment()
  local fn, message = compile(text_only(source), '@user_script', env)
  if not fn then
    error('Error compiling script (new function): ' .. message, 0)
  end
  current, no_writes = env, flags['no-writes'] == true
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
    error('user_script:' .. line .. ': emq-lab memory script: on @user_script:' .. line .. '.', 0)
  end
  if type(result) == 'string' and find(result, 'stack overflow', 1, true) and not find(result, '^user_script:') then
    result = 'user_script:' .. line .. ': stack overflow' -- raised in the hook, and named by its line: the script's line instead
  end
  error(worded(result), 0)
end

return run, null
